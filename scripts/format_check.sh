#!/usr/bin/env bash
# Checks that the C++ and CUDA lines a change touches are formatted as .clang-format says; prints
# the reformatting wanted and fails when there is any. Only touched lines: code that a change does
# not touch is left as it is, so a change never drags unrelated reformatting with it.
#   bash scripts/format_check.sh [BASE]
# The change is the working tree against BASE; by default the merge base with main (or
# origin/main), else (a fresh clone with neither, or on main itself) the last commit's parent.
set -euo pipefail
cd "$(dirname "$0")/.."

base=${1:-}
if [ -z "$base" ]; then
  for branch in main origin/main; do
    if mb=$(git merge-base HEAD "$branch" 2>/dev/null) && [ "$mb" != "$(git rev-parse HEAD)" ]; then
      base=$mb
      break
    fi
  done
fi
if [ -z "$base" ]; then
  base=$(git rev-parse --verify -q HEAD~1) || { echo "format check: no parent commit to compare with"; exit 0; }
fi

# git clang-format prints a diff of the reformatting it would do to the changed lines, or one of
# its "no modified files" / "did not modify any files" lines when there is none.
diff=$(git clang-format --diff --style=file --extensions c,cc,cpp,h,hpp,cu,cuh "$base" -- 2>&1) || true
if [ -z "$diff" ] || grep -qE '^(no modified files to format|clang-format did not modify any files)$' <<<"$diff"; then
  echo "format check: lines changed since $(git rev-parse --short "$base") are formatted"
  exit 0
fi
echo "$diff"
echo "format check: the lines above want reformatting (git clang-format --extensions c,cc,cpp,h,hpp,cu,cuh $(git rev-parse --short "$base") fixes them)" >&2
exit 1
