#!/usr/bin/env bash
# How gpulab's commands fare with the reports of whole jobs, on the CPU alone: for each scale,
# `gpulab profile --diagnose` of the tests' stand-in program (tests/stand_in), whose launches
# repeat the kernels of a report recorded on a GPU (the PyTorch operators of the outside corpus)
# with their measured counters, then `diagnose --report`, `compare` of the report with itself and
# `report -o` of it. Prints one row per scale and command: the report's size, the wall time and
# the peak memory (GNU time), and the exit status. The table goes in docs/report-schema.md.
#   bash scripts/report_scale.sh [BUILD_DIR] [SCALES]
# SCALES: launches:profiled pairs (default "1000:100 10000:1000 100000:10000"). The profiled
# launches have the `basic` metric set; BUILD_DIR defaults to build/.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scales=${2:-1000:100 10000:1000 100000:10000}
gpulab=$PWD/$build/gpulab
stand_in=$PWD/$build/tests/gpulab_stand_in
counters=$PWD/tests/fixtures/outside/torch_ops.json
for tool in "$gpulab" "$stand_in" /usr/bin/time; do
  [[ -x $tool ]] || { echo "report_scale: $tool is missing (build gpulab and gpulab_stand_in)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work  # the record folders of `gpulab profile`

# Runs a command under GNU time and prints "| seconds | MB | exit |".
measure() {
  /usr/bin/time -o "$work/time" -f '%e %M' "$@" >"$work/out" 2>&1
  local rc=$?
  read -r seconds kib < <(tail -1 "$work/time")  # after "Command exited with non-zero status"
  printf '| %s s | %d MB | %d |\n' "$seconds" $((kib / 1024)) "$rc"
  ((rc == 0)) || sed -n '1,3p' "$work/out" >&2
}

echo "| launches | profiled | report | command | wall | peak memory | exit |"
echo "|---|---|---|---|---|---|---|"
for scale in $scales; do
  launches=${scale%%:*} profiled=${scale##*:}
  report=$work/r$launches.json
  row="| $launches | $profiled"
  timing=$(measure "$gpulab" profile --metrics basic --launch-count "$profiled" --diagnose \
      --json "$report" -- "$stand_in" --launches "$launches" --counters-from "$counters")
  size=$(awk -v b="$(stat -c %s "$report" 2>/dev/null || echo 0)" 'BEGIN { printf "%.1f", b / 1e6 }')
  echo "$row | $size MB | profile --diagnose --json $timing"
  echo "$row | $size MB | diagnose --report $(measure "$gpulab" diagnose --report "$report")"
  echo "$row | $size MB | compare A A $(measure "$gpulab" compare "$report" "$report")"
  echo "$row | $size MB | report -o $(measure "$gpulab" report "$report" -o "$work/r.html")"
done
