#!/usr/bin/env bash
# Source lines on the GPU: what the chip offers (scripts/gpu/source_probe.cu: its SASS metrics,
# stall reasons, a captured cubin's lines), `gpulab run LAB --source` on the labs (their reports
# with per-instruction counters and stall samples, to record fixtures from), `gpulab source` on
# transpose/naive, ncu's source page of the line-shaped labs compared line by line with gpulab's
# (scripts/ncu_source_compare.py) and each tool's time, and the GPU tests of source lines.
# Everything ends within a deadline (GPULAB_SOURCE_DEADLINE_S, default 570 s); an ncu lab left out
# for lack of time is said so. GPULAB_SOURCE_PROBE=0 leaves the probe out. Prints a short summary
# last. From the repository root:
#   [GPULAB_NCU_SOURCE_LABS="lab lab..."] [GPULAB_NCU_SAMPLING_INTERVAL=N] \
#     bash scripts/gpu/source_lines.sh [LAB,LAB...] [OUT_DIR]
# GPULAB_NCU_SAMPLING_INTERVAL is ncu's --warp-sampling-interval for the compared page: a sample
# every 2^(5+N) cycles (5: gpulab's 2^10; unset: ncu chooses per kernel).
set -uo pipefail
only=${1:-}
out=${2:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
started=$(ms)
deadline_s=${GPULAB_SOURCE_DEADLINE_S:-570}
left_s() { echo $(( deadline_s - 15 - ($(ms) - started) / 1000 )); }
trap pack_and_summarize EXIT

if [[ ${GPULAB_SOURCE_PROBE:-1} != 0 ]]; then
  step "probe"
  mkdir -p "$out/probe"
  if nvcc -std=c++17 -lineinfo -arch=sm_90 -o "$logs/source_probe" scripts/gpu/source_probe.cu \
         -lcupti -lcuda >"$logs/probe_build.log" 2>&1; then
    for mode in early late; do
      timeout 120 "$logs/source_probe" "$out/probe" $mode >"$out/probe/probe-$mode.txt" 2>&1
      note "probe $mode: exit $? ($(grep -c '^sass metric' "$out/probe/probe-$mode.txt") SASS metrics, $(grep -c '^stall ' "$out/probe/probe-$mode.txt") stall reasons, $(grep -c '^FAIL' "$out/probe/probe-$mode.txt") failed calls)"
      grep -v '^sass metric\|^  pc\|^rec\|^stall \|^total' "$out/probe/probe-$mode.txt" | head -40
    done
  else
    tail -20 "$logs/probe_build.log"
    note "probe: build failed"
  fi

  tar czf "$out/probe.tgz" -C "$out" probe && rm -rf "$out/probe"
fi

build_gpulab
labs=$($bin list --format json | python3 -c 'import json,sys; print(" ".join(l["name"] for l in json.load(sys.stdin)))')
[ -n "$only" ] && labs=${only//,/ }
mkdir -p "$out/source"
for lab in $labs; do
  step "$lab"
  t0=$(ms)
  timeout 120 $bin run "$lab" --source --metrics none --repeat 3 --warmup 1 \
      --json "$out/source/$lab.json" >"$logs/run_$lab.txt" 2>&1
  rc=$?
  tail -4 "$logs/run_$lab.txt"
  note "$lab --source: exit $rc in $(( ($(ms) - t0) / 1000 )) s"
done

tar czf "$out/source.tgz" -C "$out" source && rm -rf "$out/source"
# Per lab: timelines (the traced labs), per-instruction data and stall samples in one run.
for lab in $labs; do
  note "$(python3 scripts/gpu/traced_source_summary.py "$out/source.tgz" "$lab" | head -3 | tr '\n' ' ')"
done
# A --source run times its variants with PC sampling disabled (enabled, it serializes launches):
# the medians with and without it, per variant, say whether timing moved.
step "timing with and without --source"
for lab in streams transpose cuda-graphs; do
  tar tzf "$out/source.tgz" "source/$lab.json" >/dev/null 2>&1 || continue  # not run with --source
  timeout 120 $bin run "$lab" --metrics none --json "$reports/plain_$lab.json" >/dev/null 2>&1
  python3 - "$reports/plain_$lab.json" "$out/source.tgz" "$lab" <<'PY' | tee -a "$out/timing.txt"
import json, sys, tarfile
plain = json.load(open(sys.argv[1]))
with tarfile.open(sys.argv[2]) as t:
    src = json.load(t.extractfile(f"source/{sys.argv[3]}.json"))
for a, b in zip(plain["variants"], src["variants"]):
    ma, mb = a["timing"].get("median", 0), b["timing"].get("median", 0)
    print(f"{sys.argv[3]}/{a['name']}: median {ma*1e6:.1f} us plain, {mb*1e6:.1f} us with --source ({(mb/ma-1)*100 if ma else 0:+.1f}%)")
PY
done

step "gpulab source transpose --variant naive"
tar xzf "$out/source.tgz" -C "$reports" source/transpose.json
$bin source --report "$reports/source/transpose.json" --variant naive 2>&1 | head -40 | tee "$out/transpose-naive.txt"

# Counters and per-instruction data in one run: the range profiler reads counters with warp-stall
# sampling paused.
step "gpulab run transpose --source with counters"
timeout 120 $bin run transpose --source --variant naive,padded --json "$reports/with_counters.json" \
    >"$logs/with_counters.txt" 2>&1
rc=$?
grep -i "warn\|error\|no per-instruction\|not collected\|not taken" "$logs/with_counters.txt" | head
note "run transpose --source (basic counters): exit $rc"

step "GPU tests of source lines"
gpu_tests "source-lines tests" source_lines "SourceLinesGpu.*" 300

# ncu's source page of the same launches (`--set full`, as the comparison wants every column),
# and the per-line comparison (scripts/ncu_source_compare.py); the wall time of each tool for the
# same lab, both with one timed launch and only the source-level data: the cost of --source
# against ncu's SourceCounters and WarpStateStats sections.
for lab in ${GPULAB_NCU_SOURCE_LABS:-transpose coalescing aos-soa reduction matmul divergence atomics spill}; do
  (( $(left_s) >= 60 )) || { note "$lab against ncu: not run ($(left_s) s left)"; continue; }
  step "ncu source page, $lab"
  t0=$(ms)
  timeout 150 $bin run "$lab" --source --metrics none --repeat 1 --warmup 0 \
      --json "$reports/cost_$lab.json" >"$logs/cost_$lab.txt" 2>&1
  t1=$(ms)
  timeout 240 ncu --clock-control none --section SourceCounters --section WarpStateStats \
      --import-source yes -o "$logs/sections_$lab" $bin run "$lab" --metrics none --repeat 1 \
      --warmup 0 >"$logs/ncu_sections_$lab.txt" 2>&1
  rc=$?
  t2=$(ms)
  rm -f "$logs/sections_$lab.ncu-rep"
  timeout "$(( $(left_s) > 30 ? $(left_s) : 30 ))" ncu --clock-control none --set full --import-source yes \
      ${GPULAB_NCU_SAMPLING_INTERVAL:+--warp-sampling-interval $GPULAB_NCU_SAMPLING_INTERVAL} -o "$logs/$lab" \
      $bin run "$lab" --metrics none --repeat 1 --warmup 0 >"$logs/ncu_$lab.txt" 2>&1
  ncu -i "$logs/$lab.ncu-rep" --page source --csv --print-source sass,cuda \
      >"$logs/ncu-source-$lab.csv" 2>>"$logs/ncu_source.err"
  rm -f "$logs/$lab.ncu-rep"
  python3 scripts/ncu_source_compare.py "$reports/cost_$lab.json" "$logs/ncu-source-$lab.csv" \
      >"$logs/compare_$lab.txt" 2>&1
  grep '^PASS\|^FAIL' "$logs/compare_$lab.txt" | head -12
  note "$lab: gpulab --source $(( (t1 - t0) / 1000 )) s, ncu SourceCounters+WarpStateStats $(( (t2 - t1) / 1000 )) s (exit $rc); $(tail -1 "$logs/compare_$lab.txt")"
done
cat "$logs"/compare_*.txt > "$out/ncu-source-compare.txt" 2>/dev/null
