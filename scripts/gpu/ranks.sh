#!/usr/bin/env bash
# A job of two ranks on the one GPU: torchrun starts gpulab as each rank, which profiles
# scripts/torch_nvtx.py (no collectives) and writes the rank's report under a name its template
# gives it (--json 'step.%q{RANK}.json'); then `gpulab report` of both reports, as text and as
# an HTML page; a second run of the job and `gpulab compare` of the two runs, rank by rank; the
# same job traced (--trace as each rank) and `gpulab report --trace` of both ranks' reports: one
# Perfetto trace, a process per rank. Then, where GPULAB_RANKS_TIMING is not
# 0, the medians of the labs of GPULAB_RANKS_TIMING_LABS (default: streams cuda-graphs
# transpose) with and without --source. Prints a short summary last. From the repository root:
#   bash scripts/gpu/ranks.sh [OUT_DIR]
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
started=$(ms)
trap pack_and_summarize EXIT
build_gpulab
note_device

step "torchrun --nproc-per-node 2 --no-python gpulab profile --json 'step.%q{RANK}.json'"
job=$reports/job
mkdir -p "$job"
t0=$(ms)
( cd "$job" && timeout 300 python3 -m torch.distributed.run --standalone --nproc-per-node 2 --no-python \
    "$OLDPWD/$bin" profile --json 'step.%q{RANK}.json' -- python3 "$OLDPWD/scripts/torch_nvtx.py" \
    >"$logs/ranks.txt" 2>&1 )
rc=$?
grep -E '^rank |exited with|error' "$logs/ranks.txt" | head -10
note "torchrun, 2 ranks: exit $rc in $(( ($(ms) - t0) / 1000 )) s; reports: $(cd "$job" && ls step.*.json 2>/dev/null | tr '\n' ' ')"
for f in "$job"/step.*.json; do
  [ -e "$f" ] || continue
  note "$(basename "$f"): $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["program"]; print(p.get("rank"), p["launches"], "launches")' "$f")"
done

step "gpulab report step.0.json step.1.json"
$bin report "$job/step.0.json" "$job/step.1.json" 2>&1 | tee "$out/ranks-table.txt" | head -20
note "report of both ranks: exit ${PIPESTATUS[0]}; $(head -1 "$out/ranks-table.txt")"
$bin report "$job/step.0.json" "$job/step.1.json" -o "$job/job.html" >/dev/null 2>&1
note "HTML page: exit $?; $(grep -c 'class="ranks"' "$job/job.html" 2>/dev/null) ranks section"

step "a second run of the job, then gpulab compare of the two runs, rank by rank"
( cd "$job" && timeout 300 python3 -m torch.distributed.run --standalone --nproc-per-node 2 --no-python \
    "$OLDPWD/$bin" profile --json 'again.%q{RANK}.json' -- python3 "$OLDPWD/scripts/torch_nvtx.py" \
    >"$logs/ranks_again.txt" 2>&1 )
$bin compare "$job/step.0.json" "$job/step.1.json" "$job/again.0.json" "$job/again.1.json" 2>&1 \
    | tee "$out/ranks-compare.txt" | head -12
note "compare of two runs: exit ${PIPESTATUS[0]}; $(sed -n 3p "$out/ranks-compare.txt")"

step "the same job traced: gpulab profile --trace as each rank, then gpulab report --trace of both"
trace=$reports/trace
mkdir -p "$trace"
( cd "$trace" && timeout 300 python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
    --no-python "$OLDPWD/$bin" profile --trace --json 'trace.%q{RANK}.json' \
    -- python3 "$OLDPWD/scripts/torch_nvtx.py" >"$logs/ranks_trace.txt" 2>&1 )
note "torchrun, 2 traced ranks: exit $?; reports: $(cd "$trace" && ls trace.*.json 2>/dev/null | tr '\n' ' ')"
$bin report "$trace/trace.0.json" "$trace/trace.1.json" --trace "$trace/job-trace.json" \
    >"$logs/report_trace.txt" 2>&1
note "report --trace of both: exit $?; $(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
names = [e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "process_name"]
first = {}
for e in t["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == "kernel":
        first[e["pid"]] = min(first.get(e["pid"], e["ts"]), e["ts"])
print(names, "first kernel (us):", {p: round(v, 1) for p, v in sorted(first.items())}, "clock:", t["otherData"]["clock"])
' "$trace/job-trace.json" 2>&1 | head -3)"

if [[ ${GPULAB_RANKS_TIMING:-1} != 0 ]]; then
  for lab in ${GPULAB_RANKS_TIMING_LABS:-streams cuda-graphs transpose}; do
    step "$lab: medians with and without --source"
    timeout 120 $bin run "$lab" --metrics none --json "$reports/plain_$lab.json" >/dev/null 2>&1
    timeout 120 $bin run "$lab" --metrics none --source --json "$reports/source_$lab.json" \
        >"$logs/source_$lab.txt" 2>&1
    note "$lab --source: exit $?"
    python3 - "$reports/plain_$lab.json" "$reports/source_$lab.json" <<'PY' | tee -a "$out/timing.txt"
import json, sys
plain, src = (json.load(open(p)) for p in sys.argv[1:3])
sampled = sum(1 for v in src["variants"] for k in v.get("kernels", [])
              if (k.get("source") or {}).get("sampling", {}).get("samples", 0) > 0)
kernels = sum(len(v.get("kernels", [])) for v in src["variants"])
for a, b in zip(plain["variants"], src["variants"]):
    ma, mb = a["timing"]["median"], b["timing"]["median"]
    print(f"{src['lab']['name']}/{a['name']}: median {ma*1e6:.1f} us plain, {mb*1e6:.1f} us with --source ({(mb/ma-1)*100 if ma else 0:+.1f}%)")
print(f"{src['lab']['name']}: {sampled} of {kernels} kernels with stall samples")
PY
  done
  while read -r line; do note "$line"; done < <(grep -E 'kernels with stall samples|%\)' "$out/timing.txt")
fi
