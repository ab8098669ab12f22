#!/usr/bin/env bash
# One device call for `gpulab sweep`: the vectorize lab from 1 Mi to 1 Gi elements (every variant,
# timed adaptively: the L2 cliff), the coalescing lab's stride from 1 to 32, diagnosed at each
# point (where the principal finding changes), matmul's K against its size (diagnosed: where the
# kernels cross the ridge point), occupancy's block size (diagnosed), the sweep GPU tests
# (adaptive timing, a sweep stopped by SIGTERM), and labs timed both adaptively and with the fixed
# 20 launches (do the medians agree within their noise?). Prints a short summary last. From the
# repository root:
#   [GPULAB_SWEEPS=vectorize,coalescing,matmul,occupancy,tests,adaptive] \
#     [GPULAB_ADAPTIVE_LABS=a,b] bash scripts/gpu/sweeps.sh [OUT_DIR]
# GPULAB_SWEEPS picks the steps (default: vectorize,coalescing,tests, within one device call;
# then matmul,occupancy,adaptive in a second); GPULAB_ADAPTIVE_LABS the labs of the last
# (default: transpose,reduction; "all": every lab but nccl), each noted with how many of its
# variants' adaptive medians fall within the fixed run's noise (its relative standard deviation).
# OUT_DIR receives summary.txt, reports.tgz (the sweeps' JSON, CSV and text, the paired run
# reports) and logs.tgz.
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
started=$(ms)
trap pack_and_summarize EXIT

build_gpulab
note_device

# sweep NAME TIMEOUT ARGS...: one sweep, its JSON, CSV (from the JSON's run, not a second run)
# and text kept.
sweep() {
  local name=$1 limit=$2 start rc
  shift 2
  step "gpulab sweep $*"
  start=$(ms)
  # SIGTERM at the limit: the sweep writes the points it measured (SIGKILL 20 s later).
  timeout -k 20 "$limit" $bin sweep "$@" --json "$reports/sweep-$name.json" >"$reports/sweep-$name.txt" \
      2>"$logs/sweep-$name.err"
  rc=$?
  cat "$reports/sweep-$name.txt"
  tail -5 "$logs/sweep-$name.err"
  note "sweep $name: exit $rc in $(( ($(ms) - start) / 1000 )) s; $(tail -1 "$reports/sweep-$name.txt" | cut -c1-160)"
}

adaptive_labs=${GPULAB_ADAPTIVE_LABS:-transpose,reduction}
# all: every lab that runs on one GPU (nccl needs two).
[[ $adaptive_labs == all ]] && adaptive_labs=$($bin list --format json | python3 -c 'import json,sys
print(",".join(l["name"] for l in json.load(sys.stdin) if l["name"] != "nccl"))')
steps=",${GPULAB_SWEEPS:-vectorize,coalescing,tests},"
wants() { [[ $steps == *",$1,"* ]]; }
# --timeout 3: a microsecond point whose noise neither falls nor settles costs 3 s, not 15.
wants vectorize && sweep vectorize 150 vectorize --axis size=1Mi:1Gi:*4 --variant all --timeout 3
wants coalescing && sweep coalescing 120 coalescing --axis stride=1:32:*2 --size 16777216 --diagnose --timeout 3
wants matmul && sweep matmul 150 matmul --axis k=16:4096:*4 --axis size=1Ki,4Ki \
    --variant naive,register-tiled,cublas --diagnose --timeout 3
wants occupancy && sweep occupancy 120 occupancy --axis block=32:1024:*2 \
    --variant smem-limited,one-extra-block,balanced --diagnose --timeout 3
wants tests && gpu_tests "sweep GPU tests" sweep_tests 'AdaptiveTimingGpu.*:SweepGpu.*' 80

# Adaptive against fixed: each lab run twice, medians side by side with the fixed run's noise.
wants adaptive && for lab in ${adaptive_labs//,/ }; do
  step "run $lab: --repeat 20, then --max-noise 0.5"
  timeout 60 $bin run "$lab" --metrics none --json "$reports/fixed-$lab.json" >/dev/null 2>"$logs/fixed-$lab.err"
  timeout 120 $bin run "$lab" --metrics none --max-noise 0.5 --timeout 5 --json "$reports/adaptive-$lab.json" \
      >/dev/null 2>"$logs/adaptive-$lab.err"
  note "$lab fixed vs adaptive: $(python3 - "$reports/fixed-$lab.json" "$reports/adaptive-$lab.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
parts, agreed = [], 0
for va, vb in zip(a["variants"], b["variants"]):
    ta, tb = va["timing"], vb["timing"]
    if not ta["median"] or not tb["median"]:
        continue
    d = tb["median"] / ta["median"] - 1
    noise = ta["stddev"] / ta["mean"] if ta["mean"] else 0
    within = abs(d) <= noise
    agreed += within
    parts.append(f'{va["name"]} {d:+.2%} (fixed noise {noise:.2%}; {tb["repeat"]} samples, {tb.get("stopped", "count")}){"" if within else " OUTSIDE"}')
print(f"{agreed} of {len(parts)} within the fixed run's noise: " + "; ".join(parts))
PY
)"
done
