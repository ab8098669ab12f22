#!/usr/bin/env bash
# `gpulab profile` on a GPU machine, in one call: builds gpulab and the test programs, runs the
# profile GPU tests, profiles a PyTorch script with the diagnosis, cross-checks the test
# programs' counters against ncu (two ncu runs each, for ncu's own spread), and measures the
# overhead against ncu for the same metrics and kernels. Prints a short summary last.
#   [GPULAB_PROFILE_REPLAY=batch|kernel] [GPULAB_PROFILE_STEPS=tests,torch,ncu,overhead] \
#     [GPULAB_PROFILE_APPS="runtime_launches ..."] bash scripts/gpu/profile_vs_ncu.sh [OUT_DIR]
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
replay=${GPULAB_PROFILE_REPLAY:-batch}  # gpulab's replay mode for the ncu cross-check and overhead
steps=",${GPULAB_PROFILE_STEPS:-tests,torch,ncu,overhead},"
wants() { [[ $steps == *",$1,"* ]]; }
cross_checked=${GPULAB_PROFILE_APPS:-runtime_launches driver_launch many_kernels streams_copies memory_kinds}
source "$(dirname "$0")/common.sh"
apps=$build/tests/apps

build_gpulab

if wants tests; then
  step "GPU tests of gpulab profile"
  gpu_tests "ProfileGpu tests" profile_tests 'ProfileGpu.*' 300
fi

if wants torch; then
  step "PyTorch: a transposed copy, a strided slice copy, a sum and a matmul"
  timeout 300 $bin profile --replay "$replay" --diagnose --json "$out/torch_profile.json" \
      -- python3 scripts/torch_demo.py >"$out/torch_profile.txt" 2>&1
  note "pytorch profile --diagnose: exit $?"
  tail -60 "$out/torch_profile.txt"
fi

if wants ncu; then
  step "counters against ncu ($replay replay)"
  crosscheck_programs "$replay" 200 $cross_checked
fi

if wants overhead; then
step "overhead against ncu (same metrics, every launch of many_kernels)"
[ -f "$reports/many_kernels.json" ] || $bin profile --replay "$replay" --launch-count all \
    --metrics basic --json "$reports/many_kernels.json" -- "$apps/many_kernels" >/dev/null 2>&1
names=$(report_metric_names "$reports/many_kernels.json")
t0=$(ms)
$bin profile --replay "$replay" --launch-count all --metrics basic -- "$apps/many_kernels" \
    >/dev/null 2>&1
t1=$(ms)
ncu --clock-control none --cache-control none --metrics "$names" "$apps/many_kernels" >/dev/null 2>&1
t2=$(ms)
note "overhead ($replay replay): gpulab $(( t1 - t0 )) ms, ncu $(( t2 - t1 )) ms, ratio $(python3 -c "print(round($(( t1 - t0 )) / max(1, $(( t2 - t1 ))), 3))")"
fi

tar -czf "$out/profile_reports.tgz" -C "$reports" . 2>/dev/null
tar -czf "$out/profile_logs.tgz" -C "$logs" . 2>/dev/null  # ncu_APP.txt: each program's comparison
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
