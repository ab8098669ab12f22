# bash completion for gpulab: asks gpulab itself (`gpulab complete -- WORDS...`), so commands,
# options, labs and variants are always those of the installed binary.
_gpulab() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local candidates
  candidates=$("${COMP_WORDS[0]}" complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  if [[ -z "$candidates" ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))  # option values: file names
  else
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
  fi
}
complete -o filenames -F _gpulab gpulab
