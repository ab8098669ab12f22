# bash completion for gpulab: asks gpulab itself (`gpulab complete -- WORDS...`), so commands,
# options, labs and variants are always those of the installed binary. Where a file name
# belongs, gpulab answers with the one line :files (:folders for a folder); anywhere else
# nothing offered means nothing matches, so no file names stand in for a name or a number.
_gpulab() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local candidates
  candidates=$("${COMP_WORDS[0]}" complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  case "$candidates" in
    :files) COMPREPLY=($(compgen -f -- "$cur")) ;;
    :folders) COMPREPLY=($(compgen -d -- "$cur")) ;;
    *) COMPREPLY=($(compgen -W "$candidates" -- "$cur")) ;;
  esac
}
complete -o filenames -F _gpulab gpulab
