#!/usr/bin/env bash
# Builds gpulab on a GPU machine, runs the GPU tests and the transpose measurements, and prints
# a short summary last. Run from the repository root:
#   bash scripts/h200_check.sh [OUT_DIR]       (OUT_DIR defaults to $OUT, else /tmp/gpulab-out)
# Leaves in OUT_DIR: transpose_h200.json (the report), ncu.csv, and logs.
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
build=build-gpu
bin=$build/gpulab
summary=()
note() { summary+=("$1"); echo "== $1"; }

echo "== build"
start=$(date +%s)
if ! { cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C $build; } \
    >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "BUILD FAILED"
  exit 1
fi
note "build: ok in $(( $(date +%s) - start )) s"
cuobjdump --list-elf $bin | sed 's/^/   /'
cuobjdump --list-ptx $bin | sed 's/^/   /'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv

echo "== gpulab info"
$bin info

echo "== gpulab run transpose (default size, basic counters)"
start_ms=$(( $(date +%s%N) / 1000000 ))
$bin run transpose --json "$out/transpose_h200.json" | tee "$out/run.txt"
rc=${PIPESTATUS[0]}
note "run transpose: exit $rc, $(( $(date +%s%N) / 1000000 - start_ms )) ms wall for the whole process"

echo "== gpulab run transpose at 1000 x 777"
$bin run transpose --size 1000 --param cols=777 --metrics none --repeat 5 | tee "$out/run_odd.txt"
note "run transpose 1000x777: exit ${PIPESTATUS[0]}"

echo "== GPU tests"
(cd $build && ctest -L gpu --output-on-failure) >"$out/ctest_gpu.log" 2>&1
note "ctest -L gpu: exit $? ($(grep -E 'tests passed' "$out/ctest_gpu.log"))"
grep -E "Failure|Expected|Which is|actual|FAILED" "$out/ctest_gpu.log" | head -30
(cd $build && ctest -L cpu) >"$out/ctest_cpu.log" 2>&1
note "ctest -L cpu: $(grep -E 'tests passed' "$out/ctest_cpu.log")"

echo "== ncu cross-check"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
if ncu --clock-control none --csv --print-units base --metrics $metrics \
    $bin run transpose --metrics none --repeat 1 --warmup 0 >"$out/ncu.csv" 2>"$out/ncu.err"; then
  python3 scripts/compare_ncu.py "$out/transpose_h200.json" "$out/ncu.csv" | tee "$out/ncu_compare.txt"
  note "$(tail -1 "$out/ncu_compare.txt")"
else
  tail -5 "$out/ncu.err"
  note "ncu: failed (see ncu.err)"
fi

echo "== compute-sanitizer"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $bin run transpose --size 1000 \
      --param cols=777 --metrics none --repeat 1 --warmup 0 >"$out/sanitizer_$tool.log" 2>&1
  note "compute-sanitizer $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer_$tool.log" | tail -1))"
done

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
