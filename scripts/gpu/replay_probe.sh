#!/usr/bin/env bash
# Probes what the cost of a kernel-replay pass depends on: a program of 100 small launches that
# picks the CPU's wait mode (auto, spin, yield, blocking) and holds an extra untouched
# allocation, profiled with the basic set on every launch; then stacks of a profiled run
# sampled with cuda-gdb. With `dram`: the DRAM bytes gpulab and ncu charge a kernel that writes
# nothing. From the repository root, after a build: bash scripts/gpu/replay_probe.sh [OUT] [dram]
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
[[ -x $bin ]] || build_gpulab
src=$logs/probe.cu
cat >"$src" <<'CU'
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
__global__ void increment(int* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1;
}
// Reads v and writes nothing (the values are never negative): any DRAM write charged to it
// is not its own.
__global__ void read_only(const int* v, int n, int* never) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && v[i] < 0) *never = v[i];
}
int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "auto";
  const size_t extra_mb = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  const int launches = argc > 3 ? std::atoi(argv[3]) : 100;
  const bool reads = argc > 4 && !std::strcmp(argv[4], "read");
  unsigned flags = cudaDeviceScheduleAuto;
  if (!std::strcmp(mode, "spin")) flags = cudaDeviceScheduleSpin;
  if (!std::strcmp(mode, "yield")) flags = cudaDeviceScheduleYield;
  if (!std::strcmp(mode, "blocking")) flags = cudaDeviceScheduleBlockingSync;
  if (cudaSetDeviceFlags(flags) != cudaSuccess) return 2;
  const int n = 1 << 16;
  int *d = nullptr, *big = nullptr;
  if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) return 3;
  if (extra_mb && cudaMalloc(&big, extra_mb << 20) != cudaSuccess) return 4;
  if (big) cudaMemset(big, 1, extra_mb << 20);
  cudaMemset(d, 0, n * sizeof(int));
  for (int k = 0; k < launches; ++k) {
    if (reads) read_only<<<n / 256, 256>>>(d, n, d);
    else increment<<<n / 256, 256>>>(d, n);
  }
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 5;
}
CU
nvcc -O2 -arch=sm_90 -o "$logs/probe" "$src" || exit 1
if [[ ${2:-} == dram ]]; then
  # DRAM bytes of a kernel that writes nothing, beside allocations of 0, 1 and 8 GB that the
  # program filled: gpulab (kernel replay) against ncu without and with its L2 flush.
  m=dram__bytes_write.sum,dram__bytes_read.sum,gpu__time_duration.sum
  for mb in 0 1024 8192; do
    $bin profile --launch-count all --metrics $m --json "$logs/dram_$mb.json" -- \
        "$logs/probe" auto $mb 3 read >/dev/null 2>&1
    python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    for k in v["kernels"]:
        print("gpulab", sys.argv[2], "MB launch", k["launch_index"], {n.split("__")[1]: round(x) for n, x in k["metrics"].items()})' \
        "$logs/dram_$mb.json" $mb
    for cc in none all; do
      ncu --clock-control none --cache-control $cc --csv --print-units base --metrics $m \
          "$logs/probe" auto $mb 3 read 2>/dev/null | grep '^"' |
          awk -F'","' -v mb=$mb -v cc=$cc 'NR > 1 { gsub(/"/, "", $NF); print "ncu(cache " cc ")", mb, "MB id", $1, $(NF-2), $NF }'
    done
  done
  exit 0
fi
probe() {
  local label=$1 t0 t1
  shift
  t0=$(ms)
  timeout 120 $bin profile --launch-count all --metrics basic -- "$logs/probe" "$@" \
      >"$logs/$label.txt" 2>&1
  t1=$(ms)
  note "$label: $(( t1 - t0 )) ms for 100 launches (exit $?)"
}
probe auto auto 0
probe spin spin 0
probe yield yield 0
probe blocking blocking 0
probe auto-extra-4GB auto 4096
probe auto-10-launches auto 0 10

# Stacks of a profiled run: five samples, 3 s apart.
$bin profile --launch-count all --metrics basic -- "$logs/probe" auto 0 400 >/dev/null 2>&1 &
sleep 4
for i in 1 2 3 4 5; do
  pid=$(pgrep -f "$logs/probe auto 0 400" | grep -v "^$!$" | tail -1)
  [[ -n $pid ]] || break
  timeout 40 cuda-gdb -q -p "$pid" -batch -ex "info threads" -ex "thread apply all bt 12" \
      >"$logs/stack$i.txt" 2>&1
  grep -E "^#[0-9]+ " "$logs/stack$i.txt" | sed -E 's/0x[0-9a-f]+ in //' | head -40
  echo "-- sample $i"
  sleep 2
done
wait
tar czf "$out/replay_probe_logs.tgz" -C "$logs" . 2>/dev/null
echo "== replay probe"
printf '%s\n' "${summary[@]}"
