# What the GPU-machine scripts share: sourced by the h200_*.sh scripts after they set `out`.
# Sets logs, reports, build and bin; note() collects summary lines, step() heads a section, ms()
# reads a millisecond clock, build_gpulab() configures and builds (or exits; GPULAB_BIN skips it),
# lab_test_filter() and gpu_tests() select and run GPU tests.
mkdir -p "$out"
logs=$(mktemp -d)
reports=$(mktemp -d)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
build=build-gpu
bin=$build/gpulab
summary=()
note() { summary+=("$1"); echo "== $1"; }
step() { echo; echo "== $*"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }

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
