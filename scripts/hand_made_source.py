#!/usr/bin/env python3
"""Writes tests/fixtures/source/transpose_naive.hand-made.json: the H200 transpose report
(tests/fixtures/labs/transpose.json) cut to its naive variant, whose kernel gets a `source`
section built from the naive kernel's line table (tests/fixtures/sass/transpose.sass) with
per-instruction counters made up by hand, not measured: enough to show `gpulab source` a kernel
whose marked line (the strided store) is hot. The report's warnings and the section's origin say
so. Run from the repository root after scripts/line_tables.sh changes the line table."""
import json
import re

SASS = "tests/fixtures/sass/transpose.sass"
REPORT = "tests/fixtures/labs/transpose.json"
OUT = "tests/fixtures/source/transpose_naive.hand-made.json"

banner = re.compile(r"^//-+ \.text\.(\S+) -+\s*$")
annotation = re.compile(r'^\s*//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?')
instruction = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;?\s*$")

function, lines, instructions = None, [], []
current, in_annotations = None, False
for text in open(SASS).read().split("\n"):
    m = banner.match(text)
    if m:
        if function and "transpose_naive" in function:
            break
        function, lines, instructions, current = m.group(1), [], [], None
        continue
    m = annotation.match(text)
    if m:
        if not in_annotations:
            current = {"file": m.group(1), "line": int(m.group(2))}
            if m.group(3):
                current["inlined_file"], current["inlined_line"] = m.group(3), int(m.group(4))
        in_annotations = True
        continue
    in_annotations = False
    m = instruction.match(text)
    if m and function:
        entry = {"offset": int(m.group(1), 16), "sass": m.group(2)}
        if current is not None:
            if current not in lines:
                lines.append(current)
            entry["line"] = lines.index(current)
        instructions.append(entry)
assert function and "transpose_naive" in function, "no naive kernel in " + SASS

# Hand-made counters: every instruction runs 262,144 warp-instructions with 32 threads, except the
# NOP padding; the global load moves 4 sectors per request and the column-strided store 32; the
# warps' stall samples sit mostly on the store, which waits on the load and on the store queue.
WARPS = 262144
for entry in instructions:
    if entry["sass"].startswith("NOP"):
        continue
    c = {"inst_executed": WARPS, "thread_inst_executed": 32 * WARPS, "samples": 4,
         "samples.selected": 2, "samples.dispatch_stall": 2}
    op = entry["sass"].split()[0].split(".")[0]
    if op == "LDG":
        c.update({"global_requests": WARPS, "global_sectors": 4 * WARPS, "samples": 40,
                  "samples.selected": 8, "samples.lg_throttle": 32})
        del c["samples.dispatch_stall"]
    if op == "STG":
        c.update({"global_requests": WARPS, "global_sectors": 32 * WARPS, "samples": 900,
                  "samples.long_scoreboard": 610, "samples.lg_throttle": 284, "samples.selected": 6})
        del c["samples.dispatch_stall"]
    entry["counters"] = c

report = json.load(open(REPORT))
report["schema"] = "gpulab.report/3"
report["variants"] = [v for v in report["variants"] if v["name"] == "naive"]
kernel = report["variants"][0]["kernels"][0]
kernel.pop("diagnosis", None)
kernel["source"] = {"function": function, "origin": "hand-made", "lines": lines,
                    "instructions": instructions}
report["warnings"] = report.get("warnings", []) + [
    "the naive kernel's per-instruction counters are made by hand from its line table, not "
    "measured: a fixture for `gpulab source`"]
with open(OUT, "w") as out:
    json.dump(report, out, indent=1)
    out.write("\n")
print(f"{OUT}: {len(instructions)} instructions, {len(lines)} lines")
