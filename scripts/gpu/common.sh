# What the GPU-machine scripts share: sourced by the scripts of scripts/gpu/ after they set `out`.
# Sets logs, reports, build and bin; note() collects summary lines (note_device() the card's),
# step() heads a section, ms() reads a millisecond clock, pack_and_summarize() ends a call,
# build_gpulab() configures and builds (or exits; GPULAB_BIN skips it), lab_test_filter() and
# gpu_tests() select and run GPU tests, report_metric_names() lists a report's metrics,
# crosscheck_programs() compares `gpulab profile` with ncu on test programs.
mkdir -p "$out"
logs=$(mktemp -d)
reports=$(mktemp -d)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
build=build-gpu
bin=$build/gpulab
summary=()
note() { summary+=("$1"); echo "== $1"; }
# The card and driver the call ran on, as the summary's second line.
note_device() {
  note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
}
step() { echo; echo "== $*"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# On exit (`trap pack_and_summarize EXIT`, with `started=$(ms)` set): packs the logs and reports
# into OUT_DIR (logs.tgz, reports.tgz) and prints the summary last, also into summary.txt.
pack_and_summarize() {
  tar czf "$out/logs.tgz" -C "$logs" . 2>/dev/null
  tar czf "$out/reports.tgz" -C "$reports" . 2>/dev/null
  { echo "== summary ($(( ($(ms) - started) / 1000 )) s)"; printf '%s\n' "${summary[@]}"; } \
      | tee "$out/summary.txt"
}

# The gtest filter of the named labs' GPU tests: suite names are the lab names in CamelCase
# (streams -> StreamsGpu.*). lab_test_filter LAB[,LAB...]
lab_test_filter() {
  local lab suite filter=""
  for lab in ${1//,/ }; do
    suite=$(echo "$lab" | sed -E 's/(^|-)([a-z])/\U\2/g')
    filter+="${filter:+:}${suite}Gpu.*"
  done
  echo "$filter"
}

# Runs the GPU tests of FILTER for at most LIMIT seconds into $logs/NAME.log, prints what failed
# (and what the tests printed), and notes the outcome as LABEL. gpu_tests LABEL NAME FILTER LIMIT
gpu_tests() {
  local label=$1 log="$logs/$2.log" filter=$3 limit=$4 start rc
  start=$(ms)
  timeout "$limit" $build/tests/gpulab_gpu_tests --gtest_brief=1 --gtest_filter="$filter" \
      >"$log" 2>&1
  rc=$?
  grep -vE "^(Running main|Note: Google Test filter|\[==========\]|\[----------\])" "$log" | head -60
  note "$label: exit $rc in $(( ($(ms) - start) / 1000 )) s; $(grep -E '^\[  PASSED' "$log" | tail -1)$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | tail -1)"
}

# GPULAB_BIN=PATH uses a gpulab built elsewhere (carried to the machine) instead of building one.
build_gpulab() {
  local start
  if [ -n "${GPULAB_BIN:-}" ]; then
    bin=$GPULAB_BIN
    note "build: none, using $bin ($($bin --version 2>&1 | head -1))"
    return
  fi
  start=$(ms)
  if ! { cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
           ${GPULAB_GIT_SHA:+-DGPULAB_GIT_SHA=$GPULAB_GIT_SHA} && ninja -C $build; } \
      >"$logs/build.log" 2>&1; then
    tail -40 "$logs/build.log"
    echo "BUILD FAILED"
    exit 1
  fi
  note "build: ok in $(( ($(ms) - start) / 1000 )) s"
}

# The metric names a report's kernels hold, comma-separated (empty when it holds none); a
# program's launches in either form (scripts/report_kernels.py).
report_metric_names() {
  python3 -c 'import json,sys
sys.path.insert(0, sys.argv[2])
from report_kernels import kernels_of
r = json.load(open(sys.argv[1]))
print(",".join(sorted({m for v in r["variants"] for k in kernels_of(v) for m in k["metrics"]})))' \
      "$1" "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" 2>/dev/null
}

# The counters of `gpulab profile` against two ncu runs (ncu's own spread) on each named test
# program, every launch, the basic set; each program's verdict is noted, its details go to
# $logs/ncu_APP.txt. Each tool run gets at most LIMIT seconds.
#   crosscheck_programs REPLAY LIMIT APP...
crosscheck_programs() {
  local replay=$1 limit=$2 app names run
  shift 2
  for app in "$@"; do
    timeout "$limit" $bin profile --replay "$replay" --launch-count all --metrics basic \
        --json "$reports/$app.json" -- "$build/tests/apps/$app" >"$logs/profile_$app.txt" 2>&1
    names=$(report_metric_names "$reports/$app.json")
    [ -n "$names" ] || { note "$app: no counters in the report"; continue; }
    for run in a b; do
      timeout "$limit" ncu --clock-control none --cache-control none --csv --print-units base \
          --print-kernel-base mangled --metrics "$names" "$build/tests/apps/$app" \
          >"$reports/$app.$run.csv" 2>/dev/null
    done
    python3 scripts/profile_vs_ncu.py "$reports/$app.json" "$reports/$app.a.csv" \
        "$reports/$app.b.csv" >"$logs/ncu_$app.txt" 2>&1
    note "$app vs ncu ($replay replay): $(tail -1 "$logs/ncu_$app.txt")"
  done
}
