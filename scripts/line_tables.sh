#!/usr/bin/env bash
# Writes tests/fixtures/sass/<lab>.sass: the line-annotated SASS (nvdisasm -gi -c) of every
# function of the lab whose line table holds a line its source marks with a `// PROBLEM:` comment
# (the marked line is the one after the comment), with the repository's paths made relative.
# The CPU tests read these to check that the line table puts each marked line's instructions on
# it (tests/unit/line_table_test.cpp).
#   bash scripts/line_tables.sh [BUILD_DIR]     default: build (built with -lineinfo, as CMake does)
# Needs cuobjdump and nvdisasm: the toolkit's, or those of the PyPI packages
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (their nvidia/cu13/bin), on PATH.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
binary="$root/$build/gpulab"
for tool in cuobjdump nvdisasm python3; do
  command -v "$tool" >/dev/null || { echo "line_tables.sh: $tool is not on PATH" >&2; exit 1; }
done
[ -x "$binary" ] || { echo "line_tables.sh: no $binary: build gpulab first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && cuobjdump -xelf all "$binary" >/dev/null)
for cubin in "$work"/*.cubin; do nvdisasm -gi -c "$cubin" > "${cubin%.cubin}.sass"; done
python3 - "$root" "$work" <<'PY'
import glob, os, re, sys
root, work = sys.argv[1], sys.argv[2]
listings = [open(f).read() for f in sorted(glob.glob(os.path.join(work, "*.sass")))]
banner = re.compile(r"^//-+ \.text\.\S+ -+\s*$", re.M)
for source in sorted(glob.glob(os.path.join(root, "labs", "*.cu"))):
    lines = open(source).read().split("\n")
    marked = [n + 2 for n, text in enumerate(lines) if "// PROBLEM:" in text]
    if not marked:
        continue
    kept = []
    for listing in listings:
        starts = [m.start() for m in banner.finditer(listing)] + [len(listing)]
        for a, b in zip(starts, starts[1:]):
            function = listing[a:b]
            if any(f'File "{source}", line {n}' in function for n in marked):
                kept.append(function.replace(root + "/", ""))
    if not kept:
        sys.exit(f"line_tables.sh: no function of {source} has a marked line: built with -lineinfo?")
    lab = os.path.splitext(os.path.basename(source))[0]
    with open(os.path.join(root, "tests", "fixtures", "sass", lab + ".sass"), "w") as out:
        out.write("".join(kept))
    print(f"{lab}: {len(kept)} functions, lines {marked}")
PY
