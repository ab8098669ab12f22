#!/usr/bin/env bash
# One device call that checks what changed without rerunning everything: the GPU tests of the
# named labs with a `run --diagnose` report each (the fixtures), the self-test of every lab (with
# the estimated gains' live calibration), then
# `gpulab profile`: its GPU tests, a PyTorch script profiled with the diagnosis, and the overhead
# against ncu for the same metrics. Everything ends within a deadline; a step left out for lack
# of time is said so. Prints a short summary last. From the repository root:
#   [GPULAB_GIT_SHA=<sha>] [GPULAB_VERIFY_DEADLINE_S=570] [GPULAB_VERIFY_STEPS=...] \
#     [GPULAB_VERIFY_REPLAYS=kernel,batch] bash scripts/gpu/verify.sh LAB[,LAB...]|none [OUT_DIR]
# GPULAB_VERIFY_STEPS picks the steps after the labs', comma-separated (default: registry,
# selftest, profile-tests, torch, overhead):
#   registry (every lab of the registry at small odd sizes, tests/gpu/lab_registry_test.cpp),
#   selftest, profile-tests (`gpulab profile`'s and the range profiler's GPU tests), torch,
#   overhead, ncu-apps (the test programs' counters against ncu's, for each replay mode), run-all
#   (`run --all --verbose` with the basic counters: its wall time and where each lab's went; then
#   `run --all --diagnose --verbose` reports of every lab, for the HTML report), torch-nvtx
#   (scripts/torch_nvtx.py profiled with --nvtx-include: the ranges of its profiled launches),
#   profile-source (`gpulab profile --source` on a test program, its time against ncu's source
#   sections, and on scripts/torch_demo.py).
# GPULAB_VERIFY_APPS: the test programs of the ncu-apps step (default: the five that launch
# kernels of their own without waiting on each other).
# GPULAB_VERIFY_TESTS: the gtest filter of the profile-tests step (default: every test of gpulab
# profile and of the range profiler).
# GPULAB_VERIFY_REPLAYS: the replay modes of `gpulab profile` that the torch and overhead steps
# run, each against the same ncu run (default: kernel,batch).
# OUT_DIR receives summary.txt, reports.tgz (the labs' reports, the PyTorch profile) and
# logs.tgz (every step's output): three files, within what a device call brings back.
set -uo pipefail
labs=${1:?usage: verify.sh LAB[,LAB...]|none [OUT_DIR]}
[[ $labs == none ]] && labs=""
steps=",${GPULAB_VERIFY_STEPS:-registry,selftest,profile-tests,torch,overhead},"
replays=${GPULAB_VERIFY_REPLAYS:-kernel,batch}
wants() { [[ $steps == *",$1,"* ]]; }
out=${2:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"
apps=$build/tests/apps
deadline_s=${GPULAB_VERIFY_DEADLINE_S:-570}
started=$(ms)
left_s() { echo $(( deadline_s - 15 - ($(ms) - started) / 1000 )); }
upto() { local left; left=$(left_s); echo $(( $1 < left ? $1 : (left > 1 ? left : 1) )); }
# Runs a step only with at least $1 seconds left: `enough 60 "name" || skip`.
enough() { (( $(left_s) >= $1 )) || { note "$2: not run ($(left_s) s left)"; return 1; }; }
trap pack_and_summarize EXIT

build_gpulab
note_device

filter=$(lab_test_filter "$labs")
if [[ -n $filter ]] && enough 60 "GPU tests $filter"; then
  step "GPU tests: $filter"
  gpu_tests "lab GPU tests" lab_tests "$filter" "$(upto 200)"
fi

for lab in ${labs//,/ }; do
  enough 40 "run $lab" || continue
  step "gpulab run $lab --diagnose"
  start=$(ms)
  timeout "$(upto 120)" $bin run "$lab" --diagnose --json "$reports/$lab.json" >"$logs/run_$lab.txt" 2>&1
  rc=$?
  sed -n '1,40p' "$logs/run_$lab.txt"
  note "run $lab: exit $rc in $(( ($(ms) - start) / 1000 )) s"
done

if wants registry && enough 60 "registry tests"; then
  step "GPU tests: every lab of the registry at small odd sizes"
  gpu_tests "registry tests" registry_tests "Registry/*" "$(upto 150)"
fi

if wants selftest && enough 90 "selftest"; then
  # With --estimates: the estimated gains' calibration on this card's own run (the live table of
  # docs/estimates.md), after the self-test's table.
  step "gpulab selftest --estimates (every lab)"
  start=$(ms)
  timeout "$(upto 240)" $bin selftest --estimates >"$logs/selftest.txt" 2>&1
  rc=$?
  tail -40 "$logs/selftest.txt"
  note "selftest: exit $rc in $(( ($(ms) - start) / 1000 )) s: $(grep -m1 '^selftest:' "$logs/selftest.txt")"
  note "estimates, live: $(grep -m1 '^estimates findings give' "$logs/selftest.txt")"
fi

if wants profile-tests && enough 60 "ProfileGpu tests"; then
  step "GPU tests of gpulab profile and of the range profiler"
  gpu_tests "ProfileGpu tests" profile_tests "${GPULAB_VERIFY_TESTS:-RangeProfilerGpu.*:ProfileGpu.*}" \
      "$(upto 200)"
fi

if wants ncu-apps; then
  step "counters of the test programs against ncu"
  for app in ${GPULAB_VERIFY_APPS:-runtime_launches driver_launch many_kernels streams_copies memory_kinds}; do
    for replay in ${replays//,/ }; do
      enough 60 "$app against ncu, $replay replay" && crosscheck_programs "$replay" "$(upto 100)" "$app"
    done
  done
fi

for replay in ${replays//,/ }; do
  wants torch && enough 40 "PyTorch profile, $replay replay" || continue
  step "PyTorch: a transposed copy, a strided slice copy, a sum and a matmul ($replay replay)"
  start=$(ms)
  timeout "$(upto 120)" $bin profile --replay "$replay" --diagnose \
      --json "$reports/torch_profile_$replay.json" -- python3 scripts/torch_demo.py \
      >"$logs/torch_profile_$replay.txt" 2>&1
  note "pytorch profile --diagnose --replay $replay: exit $? in $(( ($(ms) - start) / 1000 )) s"
  grep -E "verdict|principal|launches|theoretical_occupancy" "$logs/torch_profile_$replay.txt" \
      | head -30
done

if wants torch-nvtx && enough 60 "PyTorch NVTX profile"; then
  # Only the launches inside step/*/forward are profiled; every launch keeps its range path.
  step "PyTorch: --nvtx-include 'step/forward' on a loop of NVTX-marked steps"
  start=$(ms)
  timeout "$(upto 120)" $bin profile --replay kernel --launch-count all \
      --nvtx-include 'step/forward' --json "$reports/torch_nvtx.json" \
      -- python3 scripts/torch_nvtx.py >"$logs/torch_nvtx.txt" 2>&1
  note "pytorch --nvtx-include step/forward: exit $? in $(( ($(ms) - start) / 1000 )) s"
  sed -n '1,60p' "$logs/torch_nvtx.txt"
  while IFS= read -r line; do note "$line"; done < <(python3 - "$reports/torch_nvtx.json" <<'PY'
import json, sys
sys.path.insert(0, "scripts")
from report_kernels import kernels_of
report = json.load(open(sys.argv[1]))
paths = sorted({k.get("nvtx_path", "") for v in report["variants"] for k in kernels_of(v)})
print("torch-nvtx: profiled launches", report["program"]["profiled_launches"], "of",
      report["program"]["launches"], "· their range paths", paths)
for r in report["program"].get("ranges", []):
    print("torch-nvtx: range", r["path"], r["launches"], "launches", f'{r["seconds"] * 1e6:.1f} us')
PY
  )
fi

if wants overhead && enough 60 "overhead"; then
  # Both tools on every launch and on the first alone: the difference over the other 199
  # launches is each tool's cost per profiled launch, the rest its cost per program.
  step "overhead against ncu (same metrics, every launch of many_kernels, then the first alone)"
  declare -A all first
  for replay in ${replays//,/ }; do
    enough 60 "overhead, $replay replay" || continue
    t0=$(ms)
    timeout "$(upto 90)" $bin profile --replay "$replay" --launch-count all --metrics basic \
        --json "$reports/many_kernels_$replay.json" -- "$apps/many_kernels" \
        >"$logs/overhead_$replay.txt" 2>&1
    t1=$(ms)
    timeout "$(upto 30)" $bin profile --replay "$replay" --launch-count 1 --metrics basic \
        -- "$apps/many_kernels" >/dev/null 2>&1
    t2=$(ms)
    all[$replay]=$(( t1 - t0 )) first[$replay]=$(( t2 - t1 ))
    names=$(report_metric_names "$reports/many_kernels_$replay.json")
  done
  if [[ -n ${names:-} ]] && enough 60 "overhead, ncu"; then
    t0=$(ms)
    timeout "$(upto 120)" ncu --clock-control none --cache-control none --metrics "$names" \
        "$apps/many_kernels" >/dev/null 2>&1
    t1=$(ms)
    timeout "$(upto 30)" ncu --clock-control none --cache-control none --metrics "$names" \
        --launch-count 1 "$apps/many_kernels" >/dev/null 2>&1
    t2=$(ms)
    ncu_all=$(( t1 - t0 )) ncu_first=$(( t2 - t1 ))
    for replay in "${!all[@]}"; do
      note "overhead, $replay replay (200 launches): gpulab ${all[$replay]} ms, ncu $ncu_all ms, ratio $(python3 -c "print(round(${all[$replay]} / max(1, $ncu_all), 3))")"
      note "overhead, $replay replay (first launch only): gpulab ${first[$replay]} ms, ncu $ncu_first ms; per further launch: gpulab $(( (all[$replay] - first[$replay]) / 199 )) ms, ncu $(( (ncu_all - ncu_first) / 199 )) ms"
    done
  fi
fi

if wants profile-source && enough 90 "profile --source"; then
  # Per-instruction data of a program's functions: a test program built with -lineinfo (lines),
  # its cost against ncu's per-instruction sections on the same program, then PyTorch's library
  # kernels (no line tables: SASS offsets).
  step "gpulab profile --source: tests/apps/runtime_launches, against ncu, then PyTorch"
  t0=$(ms)
  timeout "$(upto 120)" $bin profile --source --diagnose --launch-count all \
      --json "$reports/source_app.json" -- "$apps/runtime_launches" >"$logs/source_app.txt" 2>&1
  rc=$?
  t1=$(ms)
  note "profile --source runtime_launches: exit $rc in $(( t1 - t0 )) ms"
  $bin source --report "$reports/source_app.json" --kernel saxpy 2>&1 | head -20 | tee "$logs/source_app_lines.txt"
  note "saxpy's hot lines: $(grep -m2 '^>>' "$logs/source_app_lines.txt" | tr '\n' ';')"
  # The same program with its modules loaded lazily (a variable the program's environment sets
  # wins over gpulab's EAGER): CUPTI attributes samples only to modules that load while sampling
  # is enabled, and which loading meets that inside a program is what the two runs show.
  CUDA_MODULE_LOADING=LAZY timeout "$(upto 60)" $bin profile --source --launch-count all \
      --json "$reports/source_app_lazy.json" -- "$apps/runtime_launches" \
      >"$logs/source_app_lazy.txt" 2>&1
  samples_of() {
    python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(", ".join("%s %s" % (v["name"][:24], sum(s.get("sampling", {}).get("samples", 0)
      for s in v.get("launches", {}).get("sources", []))) for v in r["variants"]))' "$1" 2>&1
  }
  note "warp-stall samples per function, modules loaded eagerly: $(samples_of "$reports/source_app.json"); lazily: $(samples_of "$reports/source_app_lazy.json")"
  if enough 60 "ncu source sections"; then
    t2=$(ms)
    timeout "$(upto 120)" ncu --clock-control none --cache-control none --section SourceCounters \
        --section WarpStateStats "$apps/runtime_launches" >"$logs/source_app_ncu.txt" 2>&1
    note "ncu --section SourceCounters --section WarpStateStats runtime_launches: exit $? in $(( $(ms) - t2 )) ms (gpulab: $(( t1 - t0 )) ms)"
  fi
  if enough 60 "PyTorch --source"; then
    timeout "$(upto 150)" $bin profile --source --launch-count 20 --json "$reports/source_torch.json" \
        -- python3 scripts/torch_demo.py >"$logs/source_torch.txt" 2>&1
    note "profile --source torch_demo.py: exit $?; $(grep -m1 'per-instruction' "$logs/source_torch.txt")"
    $bin source --report "$reports/source_torch.json" 2>&1 | head -30 | tee "$logs/source_torch_lines.txt"
    note "torch, first kernel shown: $(grep -m3 -E '^(>>|  )' "$logs/source_torch_lines.txt" | tr '\n' ';')"
  fi
fi

if wants run-all && enough 120 "run --all"; then
  # First as a learner runs it (the basic counters), the time `run --all` is held to; then
  # diagnosed, for every lab's report.
  step "gpulab run --all --verbose"
  start=$(ms)
  timeout "$(upto 150)" $bin run --all --verbose >"$logs/run_all_plain.txt" 2>&1
  rc=$?
  sed -n '/^where the time went/,$p' "$logs/run_all_plain.txt"
  note "run --all (basic counters): exit $rc in $(( ($(ms) - start) / 1000 )) s"
  step "gpulab run --all --diagnose (every lab's report)"
  start=$(ms)
  mkdir -p "$reports/all"
  timeout "$(upto 300)" $bin run --all --diagnose --verbose --json-dir "$reports/all" \
      >"$logs/run_all.txt" 2>&1
  rc=$?
  tail -45 "$logs/run_all.txt"
  note "run --all: exit $rc in $(( ($(ms) - start) / 1000 )) s, $(ls "$reports/all" | wc -l) reports"
fi
