#!/usr/bin/env bash
# Builds gpulab on a GPU machine, runs the GPU tests and the transpose measurements, and prints
# a short summary last. Run from the repository root:
#   [GPULAB_GIT_SHA=<sha>] bash scripts/h200_check.sh [OUT_DIR]
# OUT_DIR defaults to $OUT, else /tmp/gpulab-out. GPULAB_GIT_SHA names the revision when the
# tree was copied without its .git folder.
# Leaves in OUT_DIR: transpose_h200.json (the report), run.txt, ncu_compare.txt and logs.tgz
# (everything else), few files because the device tool brings back at most eight.
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
mkdir -p "$out"
logs=$(mktemp -d)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
build=build-gpu
bin=$build/gpulab
summary=()
note() { summary+=("$1"); echo "== $1"; }

echo "== build"
start=$(date +%s)
if ! { cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
         ${GPULAB_GIT_SHA:+-DGPULAB_GIT_SHA=$GPULAB_GIT_SHA} && ninja -C $build; } \
    >"$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log"
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
$bin run transpose --size 1000 --param cols=777 --metrics none --repeat 5 | tee "$logs/run_odd.txt"
note "run transpose 1000x777: exit ${PIPESTATUS[0]}"

echo "== transpose at 2048 x 2048 (16 MB per matrix: fits in L2)"
$bin run transpose --size 2048 | tee "$logs/run_2048.txt"
echo "== transpose, cold L2 timing"
$bin run transpose --cold --metrics none | tee "$logs/run_cold.txt"

echo "== GPU tests"
(cd $build && ctest -L gpu --output-on-failure) >"$logs/ctest_gpu.log" 2>&1
note "ctest -L gpu: exit $? ($(grep -E 'tests passed|Errors' "$logs/ctest_gpu.log" | head -1))"
grep -E "Failure|Expected|Which is|actual|FAILED" "$logs/ctest_gpu.log" | head -30
(cd $build && ctest -L cpu) >"$logs/ctest_cpu.log" 2>&1
note "ctest -L cpu: $(grep -E 'tests passed' "$logs/ctest_cpu.log")"

echo "== ncu cross-check"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
if ncu --clock-control none --csv --print-units base --metrics $metrics \
    $bin run transpose --metrics none --repeat 1 --warmup 0 >"$logs/ncu.csv" 2>"$logs/ncu.err"; then
  python3 scripts/compare_ncu.py "$out/transpose_h200.json" "$logs/ncu.csv" | tee "$out/ncu_compare.txt"
  note "$(tail -1 "$out/ncu_compare.txt")"
else
  tail -5 "$logs/ncu.err"
  note "ncu: failed (see ncu.err)"
fi

echo "== compute-sanitizer"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $bin run transpose --size 1000 \
      --param cols=777 --metrics none --repeat 1 --warmup 0 >"$logs/sanitizer_$tool.log" 2>&1
  note "compute-sanitizer $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer_$tool.log" | tail -1))"
done

tar czf "$out/logs.tgz" -C "$logs" .
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
