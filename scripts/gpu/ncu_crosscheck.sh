#!/usr/bin/env bash
# The ncu cross-check of every lab on a GPU machine: builds gpulab, then per lab records a
# gpulab report with the full metric set and an ncu CSV of the same metrics on the same
# kernels, and compares them (scripts/ncu_crosscheck.py). Prints the comparison table and a
# short summary last. From the repository root:
#   [GPULAB_GIT_SHA=<sha>] [GPULAB_NCU_PROCESSES=N] [GPULAB_NCU_SPLIT=K] \
#       bash scripts/gpu/ncu_crosscheck.sh [LAB,LAB...] [OUT_DIR]
# OUT_DIR (default $OUT, else /tmp/gpulab-out) receives crosscheck.txt, crosscheck.json and
# crosscheck.tgz (the reports and CSVs, to record fixtures from).
set -uo pipefail
only=${1:-}
out=${2:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
ncu_dir=$(mktemp -d)
kernel_replay=$(mktemp -d)
budget_s=${GPULAB_NCU_BUDGET_S:-470}  # stop starting labs after this many seconds
# ncu processes per lab: from two or more, ncu's spread is also its spread between processes.
processes=${GPULAB_NCU_PROCESSES:-1}
# Further ncu processes that each collect every SPLIT-th metric of the list: ncu groups a list
# into replay passes by itself, and a metric's value can depend on its companions (achieved
# occupancy of atomics/block-reduce: 81.5% with the whole list, 88-89.5% with any third of it;
# docs/measurement.md). With them ncu's spread is also its spread across metric lists.
split=${GPULAB_NCU_SPLIT:-0}
started=$(ms)

# ncu profiles every launch once per replay pass: the cuda-graphs lab's 200 steps x 2 launches x
# 2 variants would take minutes of ncu time for one kernel function; 16 steps run the same kernel.
declare -A extra=([cuda-graphs]="--param steps=16")

# Packs the reports and CSVs recorded so far into OUT_DIR/crosscheck.tgz (written atomically).
pack() {
  rm -rf "$logs/pack"
  mkdir -p "$logs/pack"
  cp -r "$reports" "$logs/pack/reports"
  cp -r "$ncu_dir" "$logs/pack/ncu"
  cp -r "$kernel_replay" "$logs/pack/kernel_replay"
  cp "$logs"/*.txt "$logs"/*.err "$logs/pack/" 2>/dev/null
  tar czf "$out/crosscheck.tgz.part" -C "$logs/pack" . && mv "$out/crosscheck.tgz.part" "$out/crosscheck.tgz"
}

build_gpulab
labs=$($bin list --format json | python3 -c 'import json,sys; print(" ".join(l["name"] for l in json.load(sys.stdin)))')
[ -n "$only" ] && labs=${only//,/ }

for lab in $labs; do
  if (( ($(ms) - started) / 1000 > budget_s )); then
    note "$lab: not run (time budget spent)"
    continue
  fi
  step "$lab"
  t0=$(ms)
  timeout 150 $bin run "$lab" ${extra[$lab]:-} --metrics full --json "$reports/$lab.json" \
      >"$logs/run_$lab.txt" 2>&1
  rc=$?
  t1=$(ms)
  if [ $rc -ne 0 ] || [ ! -s "$reports/$lab.json" ]; then
    tail -5 "$logs/run_$lab.txt"
    note "$lab: gpulab exit $rc"
    continue
  fi
  grep -E "^warning" "$logs/run_$lab.txt" | head -5
  metrics=$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(",".join(sorted({m for v in r["variants"] for k in v["kernels"] for m in k["metrics"]})))' \
      "$reports/$lab.json")
  for (( run = 1; run <= processes + split; ++run )); do
    csv=$ncu_dir/$lab.csv
    (( run > 1 )) && csv=$ncu_dir/$lab.$run.csv
    list=$metrics
    if (( run > processes )); then  # every split-th metric, from the (run - processes)-th
      list=$(tr , '\n' <<<"$metrics" | awk -v k="$split" -v j=$(( run - processes - 1 )) \
                 '(NR - 1) % k == j' | paste -sd,)
    fi
    timeout 240 ncu --clock-control none --csv --print-units base --print-kernel-base mangled \
        --metrics "$list" $bin run "$lab" ${extra[$lab]:-} --metrics none --repeat 1 \
        --warmup 0 >"$csv" 2>"$logs/ncu_$lab.$run.err"
    rc=$?
    (( rc == 0 )) || break
  done
  t2=$(ms)
  verdict=$(python3 scripts/ncu_crosscheck.py "$reports" "$ncu_dir" --labs "$lab" | tail -1)
  note "$lab: gpulab $(( (t1 - t0) / 1000 )) s, ncu $(( (t2 - t1) / 1000 )) s for $processes + $split process(es) (exit $rc); ${verdict#ncu cross-check: }"
  pack  # what a call cut short by its time limit still brings back
done

# Kernel replay on the labs whose variants launch several kernels: what the old default did.
for lab in reduction atomics; do
  [ -s "$reports/$lab.json" ] || continue
  timeout 60 $bin run "$lab" --metrics full --replay-mode kernel --json "$kernel_replay/$lab.json" \
      >"$logs/kernel_replay_$lab.txt" 2>&1
done

step "gpulab against ncu, kernel replay (reduction, atomics)"
python3 scripts/ncu_crosscheck.py "$kernel_replay" "$ncu_dir" >"$logs/crosscheck_kernel_replay.txt"
grep -E "dram__bytes|duration|FAIL .*dram|cross-check" "$logs/crosscheck_kernel_replay.txt" | head -20

step "kernel names in the reports"
python3 - "$reports" <<'EOF' | tee "$logs/names.txt"
import json, os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    r = json.load(open(os.path.join(d, f)))
    for v in r["variants"]:
        for k in v["kernels"]:
            print(f"{r['lab']['name']}/{v['name']}: {k['name']} = {k.get('function', '?')[:90]}")
EOF

step "gpulab against ncu (variant replay, the default)"
python3 scripts/ncu_crosscheck.py "$reports" "$ncu_dir" --json "$out/crosscheck.json" \
    | tee "$out/crosscheck.txt"
note "$(tail -1 "$out/crosscheck.txt")"

pack
echo
echo "== summary ($(( ($(ms) - started) / 1000 )) s)"
printf '%s\n' "${summary[@]}"
