# bash completion for gpulab: asks gpulab itself (`gpulab complete -- WORDS...`), so commands,
# options, labs and variants are always those of the installed binary. Where a file name
# belongs, gpulab answers with the one line :files (:folders for a folder); anywhere else
# nothing offered means nothing matches, so no file names stand in for a name or a number.
_gpulab() {
  # bash splits "--variant=p" at '=' (COMP_WORDBREAKS) into --variant, =, p; gpulab takes an
  # option and its value as one word, and readline replaces only the text after the last '='.
  local words=() i w
  for ((i = 1; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [[ ${#words[@]} -gt 0 && ( $w == "=" || ${COMP_WORDS[i - 1]} == "=" ) ]]; then
      words[${#words[@]} - 1]+=$w
    else
      words+=("$w")
    fi
  done
  local cur=${words[${#words[@]} - 1]}
  local candidates
  candidates=$("${COMP_WORDS[0]}" complete -- "${words[@]}" 2>/dev/null)
  case "$candidates" in
    :files) COMPREPLY=($(compgen -f -- "${cur##*=}")) ;;
    :folders) COMPREPLY=($(compgen -d -- "${cur##*=}")) ;;
    *)
      COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
      [[ $cur == *=* ]] && COMPREPLY=("${COMPREPLY[@]#"${cur%=*}="}")
      ;;
  esac
}
complete -o filenames -F _gpulab gpulab
