#!/usr/bin/env bash
# compute-sanitizer on every lab at a small size: memcheck and initcheck on every lab, racecheck
# and synccheck on the labs whose kernels use shared memory (as their reports say). Every
# variant runs, correctness check included, without counters. Ends with one summary line,
# "compute-sanitizer: N runs, E errors". full_check.sh runs it as one of its steps; alone, from
# the repository root (builds first, as full_check.sh does):
#   [GPULAB_GIT_SHA=<sha>] bash scripts/gpu/compute_sanitizer.sh [OUT_DIR]
# Leaves sanitizer_logs.tgz in OUT_DIR (default $OUT, else /tmp/gpulab-out) when run alone.

# The parameters of lab $1 at a small size, as "--param NAME=VALUE" words: a parameter of 1024 or
# more is a size and shrinks 64-fold (a 2-D problem 4096-fold), plus one so that it is no
# multiple of a block or a tile and the kernels' bounds checks get their turn; never below the
# parameter's minimum. That still leaves several tiles per dimension (transpose 129 x 129,
# async-copy 49 rows of 2049). Smaller parameters (strides, counts of streams or chunks) keep
# their defaults.
small_params() {
  jq -r --arg lab "$1" '.[] | select(.name == $lab) | .params[] |
      "--param", "\(.name)=\(if .default >= 1024 then [.min, (.default / 64 | floor) + 1] | max
                            else .default end)"' <<<"$lab_list"
}

# Errors that the log $1 of one run reports: the ERROR SUMMARY count (memcheck, initcheck,
# synccheck) or the errors of the RACECHECK SUMMARY. No summary (the run crashed or timed out)
# counts as one.
sanitizer_errors() {
  local n
  n=$(grep -oE 'ERROR SUMMARY: [0-9]+ error|RACECHECK SUMMARY: .*\([0-9]+ error' "$1" | tail -1 |
      grep -oE '[0-9]+ error$' | grep -oE '[0-9]+')
  echo "${n:-1}"
}

# One run: tool $1 on lab $2 with the rest as gpulab's extra options. Adds to sanitizer_runs and
# sanitizer_errors_total; a run with no sanitizer error whose gpulab still failed (a check that
# did not pass, a crash) counts as one error too. The array sanitizer_options, where set, holds
# more options for compute-sanitizer.
sanitize_run() {
  local tool=$1 lab=$2
  shift 2
  local log="$logs/sanitizer_${tool}_$lab.log" start rc n
  start=$(ms)
  timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 99 ${sanitizer_options[@]+"${sanitizer_options[@]}"} \
      $bin run "$lab" --metrics none --repeat 1 --warmup 0 "$@" >"$log" 2>&1
  rc=$?
  n=$(sanitizer_errors "$log")
  if [ "$n" -eq 0 ] && [ "$rc" -ne 0 ]; then n=1; fi
  sanitizer_runs=$(( sanitizer_runs + 1 ))
  sanitizer_errors_total=$(( sanitizer_errors_total + n ))
  printf '   %-9s %-16s exit %-3s %s error(s), %s s\n' "$tool" "$lab" "$rc" "$n" \
      "$(( ($(ms) - start) / 1000 ))"
  if [ "$n" -ne 0 ]; then
    note "compute-sanitizer $tool $lab: exit $rc, $n error(s); see $(basename "$log")"
    grep -m 20 -E '^========= (Invalid|Uninitialized|Race|Barrier|Error|ERROR|  at|Program hit)' \
        "$log" | sed 's/^/      /'
  fi
}

sanitize_labs() {
  local start lab params report shared
  start=$(ms)
  sanitizer_runs=0
  sanitizer_errors_total=0
  lab_list=$($bin list --json)
  for lab in $(jq -r '.[].name' <<<"$lab_list"); do
    mapfile -t params < <(small_params "$lab")
    report="$logs/sanitizer_$lab.json"
    sanitize_run memcheck "$lab" "${params[@]}" --json "$report"
    # A lab that cannot run here (the nccl lab on one GPU) ran no kernel: say so, rather than
    # let its clean logs pass for a sanitized lab.
    if [ "$(jq '[.variants[].status] | all(. == "skipped")' "$report" 2>/dev/null)" = true ]; then
      note "compute-sanitizer $lab: not sanitized, every variant skipped: $(jq -r '.variants[0].skip_reason' "$report")"
      continue
    fi
    sanitize_run initcheck "$lab" "${params[@]}"
    # Races and barrier misuse need shared memory (or a barrier over it) to happen in.
    shared=$(jq '[.variants[].kernels[]?.attributes |
                  (.static_shared_bytes // 0) + (.dynamic_shared_bytes // 0)] | any(. > 0)' \
                "$report" 2>/dev/null)
    if [ "$shared" = true ]; then
      sanitize_run racecheck "$lab" "${params[@]}"
      sanitize_run synccheck "$lab" "${params[@]}"
    fi
  done
  note "compute-sanitizer: $sanitizer_runs runs, $sanitizer_errors_total errors ($(( ($(ms) - start) / 1000 )) s)"
}

# Run alone: build, sanitize, summary.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  out=${1:-${OUT:-/tmp/gpulab-out}}
  source "$(dirname "$0")/common.sh"
  step build
  build_gpulab
  step "compute-sanitizer, every lab at a small size"
  sanitize_labs
  tar czf "$out/sanitizer_logs.tgz" -C "$logs" .
  echo
  echo "== summary"
  printf '%s\n' "${summary[@]}"
  [ "$sanitizer_errors_total" -eq 0 ]
fi
