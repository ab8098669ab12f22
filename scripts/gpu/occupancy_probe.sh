#!/usr/bin/env bash
# Achieved occupancy (sm__warps_active.avg.pct_of_peak_sustained_active) of one lab's kernels,
# gpulab against ncu, each with and without its cache flush and with the metric alone or in the
# full set: which of these moves the value. From the repository root:
#   bash scripts/gpu/occupancy_probe.sh LAB KERNEL_SUBSTRING
set -uo pipefail
lab=$1
kernel=$2
out=${OUT:-/tmp/gpulab-out}
source "$(dirname "$0")/common.sh"
metric=sm__warps_active.avg.pct_of_peak_sustained_active
build_gpulab
gpulab_value() {  # prints the metric and the duration of every kernel whose label holds $kernel
  python3 - "$1" "$kernel" "$metric" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    for k in v["kernels"]:
        if sys.argv[2] in k["name"]:
            m = k["metrics"]
            print(f"  {v['name']}/{k['name']}: {m.get(sys.argv[3], float('nan')):.2f}  "
                  f"{m.get('gpu__time_duration.sum', float('nan')) / 1000:.1f} us")
PY
}
for args in "--metrics full" "--metrics full --cache-control none" \
            "--metrics $metric,gpu__time_duration.sum"; do
  $bin run "$lab" $args --json "$reports/p.json" >"$logs/p.txt" 2>&1 || { tail -3 "$logs/p.txt"; continue; }
  echo "gpulab $args:"
  gpulab_value "$reports/p.json"
done
for args in "" "--cache-control none" "--set full"; do
  echo "ncu ${args:-(metric alone)}:"
  m="--metrics $metric,gpu__time_duration.sum"
  [ "$args" = "--set full" ] && m=""
  ncu --clock-control none $args $m --csv --print-units base -k "regex:$kernel" \
      $bin run "$lab" --metrics none --repeat 1 --warmup 0 2>/dev/null |
    python3 -c '
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if len(r) > 10]
h = rows[0]; k, n, v = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
for r in rows[1:]:
    if r[n] in (sys.argv[1], "gpu__time_duration.sum"): print("  ", r[0], r[k][:40], r[n][:30], r[v])
' "$metric"
done
