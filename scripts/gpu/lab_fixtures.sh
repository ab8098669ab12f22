#!/usr/bin/env bash
# Records the lab fixtures of the GPU machine's card (tests/fixtures/labs-CARD/, as
# tests/fixtures/labs/ was recorded on the H200) and runs the self-test there; prints a short
# summary last. From the repository root:
#   [GPULAB_STEPS=record,selftest] bash scripts/gpu/lab_fixtures.sh [OUT_DIR]
# OUT_DIR defaults to $OUT, else /tmp/gpulab-out; it receives reports.tgz (one report per lab of
# `gpulab run --all --diagnose --json-dir`: full counters, timelines for the traced labs),
# logs.tgz (what each step printed) and summary.txt.
set -uo pipefail
out=${1:-${OUT:-/tmp/gpulab-out}}
steps=${GPULAB_STEPS:-record,selftest}
source "$(dirname "$0")/common.sh"
started=$(ms)
trap pack_and_summarize EXIT

step build
build_gpulab
note "card: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

if [[ ",$steps," == *,record,* ]]; then
  step "gpulab run --all --diagnose --json-dir"
  start=$(ms)
  timeout 420 $bin run --all --diagnose --json-dir "$reports" >"$logs/run_all.txt" 2>&1
  note "run --all --diagnose: exit $? in $(( ($(ms) - start) / 1000 )) s, $(ls "$reports" | wc -l) reports"
  sed -n '/^summary:/,$p' "$logs/run_all.txt"
fi

if [[ ",$steps," == *,selftest,* ]]; then
  step "gpulab selftest"
  start=$(ms)
  timeout 300 $bin selftest >"$logs/selftest.txt" 2>&1
  rc=$?
  grep -E "FAIL|card|^selftest" "$logs/selftest.txt"
  note "selftest: exit $rc in $(( ($(ms) - start) / 1000 )) s: $(tail -1 "$logs/selftest.txt")"
fi
