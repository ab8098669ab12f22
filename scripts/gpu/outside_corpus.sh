#!/usr/bin/env bash
# Records the outside validation corpus on a GPU machine, in one call (tests/fixtures/README.md,
# "The outside corpus"): builds gpulab and the corpus's programs (tests/outside), then for each
# program records the gpulab report and, on the same program, ncu's own analysis of every kernel:
#   tests/fixtures/outside/NAME.json         gpulab profile --diagnose --launch-count all
#   tests/fixtures/outside/NAME.profile.txt  what that printed
#   tests/fixtures/outside/NAME.ncu.txt      ncu --set full, details with the rule messages
#   tests/fixtures/outside/NAME.ncu.csv      the same ncu run's counters (raw page, base units)
# and packs them into OUT_DIR/outside_corpus.tgz (unpack it at the repository root). ncu profiles
# each program once into an .ncu-rep (OUT_DIR/outside_ncu_reports.tgz) and both printouts are
# made from it, so the text and the counters describe the same launches. From the repository root:
#   [GPULAB_GIT_SHA=<sha>] bash scripts/gpu/outside_corpus.sh [PROGRAM,PROGRAM...] [OUT_DIR]
# PROGRAM: the tuning set's torch_ops, cublas_routines, cub_algorithms, thrust_algorithms (the
# default: all four), or the held-out set's torch_heldout, fft_transforms, random_generators,
# sparse_products (named; GPULAB_OUTSIDE_SET=held-out names all four).
# A program left out for lack of time is said so in the summary: record it in a second call,
# naming it (a warm machine keeps the build). Prints no diagnosis: the labels are decided from
# ncu's output before gpulab's is read. GPULAB_OUTSIDE_NCU=0 records gpulab's side alone and
# keeps the committed ncu files, which the labels' evidence quotes.
set -uo pipefail
only=${1:-}
out=${2:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
corpus=tests/fixtures/outside
# The device runs one command for at most 10 minutes: everything, the build included, ends
# within this many seconds of the start. A program is started only with time for both its runs
# left, and each run gets at most what is left, less a margin for packing the results.
deadline_s=${GPULAB_OUTSIDE_DEADLINE_S:-540}
started=$(ms)
left_s() { echo $(( deadline_s - 20 - ($(ms) - started) / 1000 )); }
upto() { local left; left=$(left_s); echo $(( $1 < left ? $1 : (left > 1 ? left : 1) )); }

# The most PyTorch-heavy first: it holds most of the corpus's kernels.
programs="torch_ops cublas_routines cub_algorithms thrust_algorithms"
[ "${GPULAB_OUTSIDE_SET:-}" = held-out ] &&
  programs="torch_heldout fft_transforms random_generators sparse_products"
[ -n "$only" ] && programs=${only//,/ }
declare -A command=(
  [torch_ops]="python3 tests/outside/torch_ops.py"
  [cublas_routines]="$build/tests/outside/cublas_routines"
  [cub_algorithms]="$build/tests/outside/cub_algorithms"
  [thrust_algorithms]="$build/tests/outside/thrust_algorithms"
  [torch_heldout]="python3 tests/outside/torch_heldout.py"
  [fft_transforms]="$build/tests/outside/fft_transforms"
  [random_generators]="$build/tests/outside/random_generators"
  [sparse_products]="$build/tests/outside/sparse_products"
)
# Programs that bracket their steps with cudaProfilerStart/Stop: both tools profile those launches
# alone (torch_heldout: its set-up and Triton's autotuning launch kernels by the hundred).
declare -A steps_bracketed=([torch_heldout]=1)

build_gpulab
note_device
note "ncu: $(ncu --version 2>&1 | tail -1)"
# Every section's body, and the metrics each rule read beside its message, where this ncu has
# the options (an unknown option would make ncu print nothing else).
print_details=()
ncu --help 2>&1 | grep -q -- '--print-details' && print_details+=(--print-details all)
ncu --help 2>&1 | grep -q -- '--print-rule-details' && print_details+=(--print-rule-details)

# The functions of a report and their launches, without the diagnosis.
cat >"$logs/functions.py" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    t = v.get("totals") or {}
    print("  %3d launches (%d profiled), %5.1f%% of GPU time: %s" % (
        t.get("launches", 0), t.get("profiled_launches", 0),
        100 * t.get("share_of_gpu_time", 0), v["name"][:100]))
PY
functions() { python3 "$logs/functions.py" "$1" 2>/dev/null; }
# Whether the program's own checks passed in a run whose output is in $1.
checks() { grep -q '^all steps passed' "$1" && echo "checks passed" || echo "CHECKS FAILED"; }

recorded=()  # the files this call wrote, to be packed

for name in $programs; do
  cmd=${command[$name]:-}
  if [ -z "$cmd" ]; then
    note "$name: no such program (the programs: ${!command[*]})"
    continue
  fi
  if (( $(left_s) < 120 )); then
    note "$name: not run ($(left_s) s left; run it in a call of its own)"
    continue
  fi
  if [[ $name == torch_* ]] && ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    note "$name: not run (python3 has no PyTorch with CUDA)"
    continue
  fi

  step "$name: gpulab profile --diagnose --launch-count all"
  t0=$(ms)
  # shellcheck disable=SC2086  # $cmd is the program and its arguments
  timeout "$(upto 200)" $bin profile --diagnose --launch-count all \
      ${steps_bracketed[$name]:+--capture-range cudaProfilerApi} --json "$corpus/$name.json" -- $cmd \
      >"$corpus/$name.profile.txt" 2>&1
  rc=$?
  t1=$(ms)
  grep -E "^step |wrong result|all steps passed" "$corpus/$name.profile.txt" | tail -3
  functions "$corpus/$name.json" | tee "$logs/functions_$name.txt"
  note "$name: gpulab exit $rc in $(( (t1 - t0) / 1000 )) s, $(checks "$corpus/$name.profile.txt"), $(grep -c launches "$logs/functions_$name.txt") functions"
  recorded+=("$corpus/$name.profile.txt")
  [ -s "$corpus/$name.json" ] && recorded+=("$corpus/$name.json")

  [ "${GPULAB_OUTSIDE_NCU:-1}" = 0 ] && continue
  step "$name: ncu --set full"
  metrics=$(report_metric_names "$corpus/$name.json")
  # --cache-control none: gpulab's kernel replay cannot flush L2 between passes
  # (docs/profile.md), and the label must describe the launch under the conditions gpulab saw.
  # gpulab's own metrics are added to the full set, so the CSV holds both.
  # shellcheck disable=SC2086
  timeout "$(upto 300)" ncu --clock-control none --cache-control none --set full \
      ${steps_bracketed[$name]:+--profile-from-start off} \
      ${metrics:+--metrics "$metrics"} -f -o "$reports/$name" $cmd >"$logs/ncu_$name.log" 2>&1
  rc=$?
  t2=$(ms)
  grep -E "==ERROR==|==WARNING==|LibraryNotLoaded|ERR_NVGPUCTRPERM" "$logs/ncu_$name.log" | sort | uniq -c | head -5
  if [ -s "$reports/$name.ncu-rep" ]; then
    ncu --import "$reports/$name.ncu-rep" "${print_details[@]}" >"$corpus/$name.ncu.txt" 2>&1
    ncu --import "$reports/$name.ncu-rep" --csv --print-units base --print-kernel-base mangled \
        --page raw >"$corpus/$name.ncu.csv" 2>&1
    recorded+=("$corpus/$name.ncu.txt" "$corpus/$name.ncu.csv")
  fi
  note "$name: ncu exit $rc in $(( (t2 - t1) / 1000 )) s, $(checks "$logs/ncu_$name.log"), $(grep -c '^==PROF== Profiling' "$logs/ncu_$name.log") launches profiled, $(grep -c '^  *\(OPT\|WRN\|INF\) ' "$corpus/$name.ncu.txt" 2>/dev/null) rule messages"
done

step "packing"
(( ${#recorded[@]} > 0 )) && tar -czf "$out/outside_corpus.tgz" "${recorded[@]}"
tar -czf "$out/outside_ncu_reports.tgz" -C "$reports" . 2>/dev/null
tar -czf "$out/outside_logs.tgz" -C "$logs" . 2>/dev/null
ls -l "$out"
echo
echo "== summary ($(( ($(ms) - started) / 1000 )) s)"
printf '%s\n' "${summary[@]}"
