# What the GPU-machine scripts share: sourced by h200_check.sh and h200_labs.sh after they set
# `out`. Sets logs, reports, build and bin; note() collects summary lines, step() heads a
# section, ms() reads a millisecond clock, build_gpulab() configures and builds (or exits).
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

build_gpulab() {
  local start
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
