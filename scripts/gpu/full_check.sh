#!/usr/bin/env bash
# Builds gpulab on a GPU machine, runs the GPU tests, the self-test, every lab, the ncu
# cross-check of every lab, compute-sanitizer on every lab and a scripted shell session, and
# prints a short summary last. From the repository root:
#   [GPULAB_GIT_SHA=<sha>] [GPULAB_SKIP_NCU=1] bash scripts/gpu/full_check.sh [OUT_DIR]
# OUT_DIR defaults to $OUT, else /tmp/gpulab-out. GPULAB_GIT_SHA names the revision when the
# tree was copied without its .git folder. Leaves in OUT_DIR few files (a device tool may bring
# back only eight): full.txt is not written here (tee the output yourself), transpose_h200.json,
# reports.tgz (every lab's report, diagnosed) and logs.tgz (everything else).
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/compute_sanitizer.sh"

step build
build_gpulab
cuobjdump --list-elf $bin | sed 's/^/   /'
cuobjdump --list-ptx $bin | sed 's/^/   /'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv

step gpulab info --check-metrics full
$bin info --check-metrics full

step "gpulab run transpose (default size, basic counters)"
start=$(ms)
$bin run transpose --json "$out/transpose_h200.json"
note "run transpose: exit $?, $(( $(ms) - start )) ms wall for the whole process"

step GPU tests, one process
gpu_tests "GPU tests" gpu_tests '*' 420

step gpulab selftest
start=$(ms)
timeout 300 $bin selftest
note "selftest: exit $? in $(( ($(ms) - start) / 1000 )) s"

step gpulab diagnose transpose --variant all
$bin diagnose transpose --variant all | tee "$logs/diagnose_transpose.txt"

step "gpulab run --all --diagnose (reports for the fixtures: full counters; traced labs: timelines)"
start=$(ms)
timeout 360 $bin run --all --diagnose --json-dir "$reports" >"$logs/run_all.txt" 2>&1
rc=$?
sed -n '/^summary:/,$p' "$logs/run_all.txt"
note "run --all: exit $rc in $(( ($(ms) - start) / 1000 )) s"

# The ncu cross-check of every lab takes ~7 minutes of its own: GPULAB_SKIP_NCU=1 leaves it to
# a separate `bash scripts/gpu/ncu_crosscheck.sh` call where one call has a time limit.
if [ "${GPULAB_SKIP_NCU:-0}" != 1 ]; then
  step "ncu cross-check, every lab (scripts/gpu/ncu_crosscheck.sh)"
  bash scripts/gpu/ncu_crosscheck.sh "" "$out" >"$logs/ncu_crosscheck.txt" 2>&1
  note "$(grep 'ncu cross-check:' "$out/crosscheck.txt" 2>/dev/null | tail -1)"
fi

step "compute-sanitizer, every lab at a small size (scripts/gpu/compute_sanitizer.sh)"
sanitize_labs

step "shell session (one process, under a pseudo-terminal when script(1) is there)"
printf '%s\n' 'run transpose' 'diagnose transpose --variant tiled' 'set size 4096' \
    'run transpose --variant padded' 'quit' >"$logs/shell_input.txt"
if command -v script >/dev/null; then
  script -qec "$bin shell" /dev/null <"$logs/shell_input.txt" >"$logs/shell_transcript.txt" 2>&1
else
  $bin shell <"$logs/shell_input.txt" >"$logs/shell_transcript.txt" 2>&1
fi
note "shell: exit $?"
tail -30 "$logs/shell_transcript.txt"

tar czf "$out/logs.tgz" -C "$logs" .
tar czf "$out/reports.tgz" -C "$reports" .
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
