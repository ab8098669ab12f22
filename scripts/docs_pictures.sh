#!/usr/bin/env bash
# Regenerates the README's pictures of the HTML report from the committed fixtures, with the
# build's gpulab and headless Chromium (installed by `bash scripts/deps.sh checks`): the top of the
# report of every lab (docs/report-all.png), the matmul lab's report (docs/report-matmul.png) and
# a profiled cuBLAS program's, whose long kernel names must stay apart (docs/report-cublas.png),
# and the plots of the vectorize lab's sweep recorded on the H100 (docs/sweep-vectorize.png).
# From the repository root, after a build: bash scripts/docs_pictures.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
pages=$build/pictures
mkdir -p "$pages"
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "docs_pictures.sh: no Chromium (bash scripts/deps.sh checks)" >&2; exit 1; }

# picture NAME HEIGHT REPORT...: renders the reports as one page and takes its top HEIGHT pixels.
picture() {
  local name=$1 height=$2
  shift 2
  "$build/gpulab" report "$@" -o "$pages/$name.html" >/dev/null
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
      --window-size=1280,"$height" --screenshot="docs/$name.png" "file://$PWD/$pages/$name.html" \
      >/dev/null 2>&1
  echo "docs/$name.png"
}

picture report-all 1100 tests/fixtures/labs/*.json
picture report-matmul 1100 tests/fixtures/labs/matmul.json
picture report-cublas 1000 tests/fixtures/outside/cublas_routines.json
picture sweep-vectorize 920 tests/fixtures/sweeps/vectorize-h100.json
