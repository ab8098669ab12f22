#!/usr/bin/env bash
# Builds gpulab on a GPU machine and measures a few labs: their GPU tests, `run --diagnose`
# with a JSON report each, and the self-test of those labs; prints a short summary last.
# From the repository root:
#   [GPULAB_GIT_SHA=<sha>] bash scripts/gpu/labs.sh LAB[,LAB...] [OUT_DIR]
# OUT_DIR defaults to $OUT, else /tmp/gpulab-out. It receives reports.tgz (one report per lab,
# as the fixtures in tests/fixtures/labs are recorded) and logs.tgz.
set -uo pipefail
labs=${1:?usage: labs.sh LAB[,LAB...] [OUT_DIR]}
out=${2:-${OUT:-/tmp/gpulab-out}}
source "$(dirname "$0")/common.sh"

build_gpulab

filter=$(lab_test_filter "$labs")
step "GPU tests: $filter"
gpu_tests "GPU tests" gpu_tests "$filter" 400

for lab in ${labs//,/ }; do
  step "gpulab run $lab --diagnose"
  start=$(ms)
  timeout 300 $bin run "$lab" --diagnose --json "$reports/$lab.json" 2>&1 | tee "$logs/run_$lab.txt"
  note "run $lab: exit ${PIPESTATUS[0]} in $(( ($(ms) - start) / 1000 )) s"
done

step "gpulab selftest --labs $labs"
timeout 300 $bin selftest --labs "$labs" 2>&1 | tee "$logs/selftest.txt"
note "selftest: $(tail -1 "$logs/selftest.txt")"

tar czf "$out/logs.tgz" -C "$logs" .
tar czf "$out/reports.tgz" -C "$reports" .
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
