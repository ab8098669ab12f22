#!/usr/bin/env bash
# Where the time of a profiled launch goes: tests/apps/many_kernels (200 launches of one small
# kernel) profiled on every launch, on the first alone, with one metric (one pass) and without
# counters, then ncu with the same metrics the same ways. Prints each run's wall time: the
# differences give each tool's cost per launch and per replay pass (docs/profile.md). From the
# repository root, after a build (verify.sh builds): bash scripts/gpu/replay_cost.sh [OUT]
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
[[ -x $bin ]] || build_gpulab
app=$build/tests/apps/many_kernels

# time_it LABEL -- COMMAND...: runs COMMAND, notes its wall time.
time_it() {
  local label=$1 t0 t1 rc
  shift 2
  t0=$(ms)
  timeout 120 "$@" >"$logs/$label.txt" 2>&1
  rc=$?
  t1=$(ms)
  note "$label: $(( t1 - t0 )) ms (exit $rc)"
}
passes() {
  python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(sorted({v["counters"]["passes"] for v in r["variants"] if "passes" in v.get("counters", {})}))' \
      "$1" 2>&1 | tail -1
}

one=gpu__time_duration.sum
time_it gpulab-basic -- $bin profile --launch-count all --metrics basic \
    --json "$reports/basic.json" -- "$app"
note "basic passes: $(passes "$reports/basic.json")"
names=$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(",".join(sorted({m for v in r["variants"] for k in v["kernels"] for m in k["metrics"]})))' \
    "$reports/basic.json" 2>/dev/null)
time_it gpulab-basic-first -- $bin profile --launch-count 1 --metrics basic -- "$app"
time_it gpulab-one -- $bin profile --launch-count all --metrics $one \
    --json "$reports/one.json" -- "$app"
note "one-metric passes: $(passes "$reports/one.json")"
time_it gpulab-none -- $bin profile --replay none -- "$app"
time_it app-alone -- "$app"
time_it ncu-basic -- ncu --clock-control none --cache-control none \
    --metrics "$names" "$app"
grep -m3 -E "passes" "$logs/ncu-basic.txt" | head -3
time_it ncu-one -- ncu --clock-control none --cache-control none --metrics $one \
    "$app"
time_it ncu-basic-first -- ncu --clock-control none --cache-control none \
    --metrics "$names" --launch-count 1 "$app"
tar czf "$out/replay_cost_logs.tgz" -C "$logs" . 2>/dev/null
echo "== replay cost"
printf '%s\n' "${summary[@]}"
