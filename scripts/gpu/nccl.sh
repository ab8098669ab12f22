#!/usr/bin/env bash
# The nccl lab in one device call, on whatever GPUs the machine has: the GPU topology and NCCL's
# version, the lab's GPU tests, `gpulab run nccl --diagnose` at the default size (the fixture:
# with one GPU every variant is skipped with the reason), the same step on one GPU when asked
# (`--param gpus=1`), the lab's self-test, and compute-sanitizer (memcheck, initcheck) on its
# kernels at a small size, on one GPU and, where there are two or more, on all of them. NVLink
# multicast stays off (NCCL_NVLS_ENABLE=0). Prints a short summary last. From the repository root:
#   [GPULAB_GIT_SHA=<sha>] bash scripts/gpu/nccl.sh [OUT_DIR]
# OUT_DIR receives summary.txt, reports.tgz (nccl.json, nccl_one_gpu.json) and logs.tgz.
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/compute_sanitizer.sh"  # sanitize_run
export NCCL_NVLS_ENABLE=0
started=$(ms)
trap pack_and_summarize EXIT

build_gpulab
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
note "device: $gpus x $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
step "topology"
nvidia-smi topo -m 2>&1 | head -12
note "NCCL: $(ls /usr/lib/x86_64-linux-gnu/libnccl.so.* 2>/dev/null | tr '\n' ' ')"

step "GPU tests of the nccl lab"
gpu_tests "NcclGpu tests" nccl_tests "NcclGpu.*" 300

# Runs `gpulab run nccl ARGS` into $reports/NAME.json and prints what it printed.
run_nccl() {
  local name=$1 start rc
  shift
  step "gpulab run nccl $*"
  start=$(ms)
  timeout 180 $bin run nccl "$@" --json "$reports/$name.json" >"$logs/$name.txt" 2>&1
  rc=$?
  cat "$logs/$name.txt"
  note "run nccl $*: exit $rc in $(( ($(ms) - start) / 1000 )) s"
}
run_nccl nccl --diagnose
run_nccl nccl_one_gpu --param gpus=1 --diagnose

step "gpulab selftest --labs nccl"
timeout 180 $bin selftest --labs nccl >"$logs/selftest.txt" 2>&1
rc=$?
cat "$logs/selftest.txt"
note "selftest --labs nccl: exit $rc: $(tail -1 "$logs/selftest.txt")"

# Small enough for the sanitizer (64 Ki + 2 elements: no multiple of a block, still even, so that
# two GPUs' shards are whole; 9 buckets: the last one takes a remainder), every variant checked.
step "compute-sanitizer on the nccl lab at a small size"
sanitizer_runs=0
sanitizer_errors_total=0
# On the H200, ncclCommInitAll's own cudaFuncGetAttributes calls on kernels built for other
# architectures fail (no kernel image) and NCCL handles it: four API errors per run that memcheck
# reports by default. The API errors go unreported; the lab's own CUDA calls are each checked,
# and a failing one fails the run, which counts as an error.
sanitizer_options=(--report-api-errors no)
small=(--param elements=65538 --param buckets=9 --param rounds=16)
for tool in memcheck initcheck; do
  sanitize_run "$tool" nccl "${small[@]}" --param gpus=1
  if [ "$gpus" -ge 2 ]; then sanitize_run "$tool" nccl "${small[@]}"; fi
done
note "compute-sanitizer on the nccl lab: $sanitizer_runs runs, $sanitizer_errors_total errors"
