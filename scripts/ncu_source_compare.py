#!/usr/bin/env python3
"""Compare gpulab's per-line counters with ncu's source page, kernel by kernel, line by line.

usage: ncu_source_compare.py REPORT.json NCU_SOURCE.csv [--kernels a,b]

REPORT.json is `gpulab run LAB --source --json REPORT.json`; NCU_SOURCE.csv is
  ncu --clock-control none --set full --import-source yes -o R gpulab run LAB ...
  ncu -i R --page source --csv --print-source sass,cuda
on the same lab. ncu's page holds, per profiled launch, a block: "File Path", "Function Name"
(demangled, as the report's `function`), a header, then one row per source line ("Line No"
set) followed by the rows of its SASS instructions. The first block of each function is used;
the report's kernels are matched to it by demangled name.

Per line, both tools' counts are compared (COUNTERS below): warp and thread instructions executed
and global sectors, each within 2% of ncu's (or ABSOLUTE_FLOOR); and the line's share of the
kernel's warp-stall samples, within 5 points, on lines that hold at least 5% of either tool's
samples (sampling is statistical: smaller lines are shown, not judged). Prints one row per judged
line and one PASS/FAIL line per kernel and overall; exits 1 on FAIL, 2 on unusable input.
"""
import argparse
import csv
import json
import os
import sys
from dataclasses import dataclass, field

RELATIVE = 0.02         # counts: allowed |gpulab - ncu| / ncu
ABSOLUTE_FLOOR = 64     # counts: a difference this small passes (a warp's worth of a few lines)
SHARE_POINTS = 0.05     # stall-sample shares: allowed difference, as a fraction of the kernel
MIN_SHARE = 0.05        # lines holding less of the samples are not judged on their share

# gpulab's counter name (report source_counter) -> ncu's source-page column.
COUNTERS = {
    "inst_executed": "Instructions Executed",
    "thread_inst_executed": "Thread Instructions Executed",
    "global_sectors": "L2 Theoretical Sectors Global",
}
NCU_SAMPLES = "Warp Stall Sampling (All Samples)"


@dataclass
class Kernel:
    function: str
    lines: dict = field(default_factory=dict)  # (file basename, line) -> {column: value}


def number(text):
    text = text.replace(",", "").strip()
    if text in ("", "-"):
        return 0.0
    return float(text)


def read_ncu(path):
    """The first block of each function on ncu's source page: {function: Kernel}."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    out, current, header, skip, file = {}, None, None, False, ""
    for row in rows:
        if not row:
            continue
        if row[0] == "File Path" and len(row) >= 2:
            file = os.path.basename(row[1])
            continue
        if row[0] == "Function Name" and len(row) >= 2:
            skip = row[1] in out
            current = None if skip else out.setdefault(row[1], Kernel(row[1]))
            header = None
            continue
        if row[0] == "Line No":
            header = row
            continue
        if skip or current is None or header is None or not row[0].strip():
            continue  # a SASS row, or a repeated launch's block
        values = dict(zip(header, row))
        key = (file, int(row[0]))
        line = current.lines.setdefault(key, {})
        for column in list(COUNTERS.values()) + [NCU_SAMPLES]:
            line[column] = line.get(column, 0.0) + number(values.get(column, ""))
    if not out:
        raise ValueError(f"{path}: no 'Function Name' block: not ncu's --page source --csv")
    return out


def read_gpulab(path):
    """The report's kernels with a source section: {function: Kernel}, counters per line."""
    with open(path) as f:
        report = json.load(f)
    out = {}
    for variant in report.get("variants", []):
        for kernel in variant.get("kernels", []):
            source = kernel.get("source")
            if not source or kernel.get("function", "") in out:
                continue
            table = source.get("lines", [])
            k = out.setdefault(kernel.get("function", ""), Kernel(kernel.get("function", "")))
            for instruction in source.get("instructions", []):
                if "line" not in instruction:
                    continue
                where = table[instruction["line"]]
                key = (os.path.basename(where["file"]), where["line"])
                line = k.lines.setdefault(key, {})
                for name, value in instruction.get("counters", {}).items():
                    line[name] = line.get(name, 0.0) + value
    return out


def judge_count(gpulab, ncu):
    allowed = max(RELATIVE * abs(ncu), ABSOLUTE_FLOOR)
    return abs(gpulab - ncu) <= allowed


def compare(ours, theirs):
    """Rows (kernel, line, what, gpulab, ncu, ok) and the kernels compared."""
    rows, compared = [], []
    for function, kernel in sorted(ours.items()):
        if function not in theirs:
            continue
        other = theirs[function]
        compared.append(function)
        our_samples = sum(l.get("samples", 0.0) for l in kernel.lines.values())
        their_samples = sum(l.get(NCU_SAMPLES, 0.0) for l in other.lines.values())
        for key in sorted(set(kernel.lines) | set(other.lines)):
            mine, ncu = kernel.lines.get(key, {}), other.lines.get(key, {})
            for name, column in COUNTERS.items():
                if name not in mine and not ncu.get(column):
                    continue
                a, b = mine.get(name, 0.0), ncu.get(column, 0.0)
                rows.append((function, key, name, a, b, judge_count(a, b)))
            if our_samples > 0 and their_samples > 0:
                a = mine.get("samples", 0.0) / our_samples
                b = ncu.get(NCU_SAMPLES, 0.0) / their_samples
                if max(a, b) >= MIN_SHARE:
                    rows.append((function, key, "sample share", a, b, abs(a - b) <= SHARE_POINTS))
    return rows, compared


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("ncu_csv")
    args = parser.parse_args(argv)
    try:
        ours = read_gpulab(args.report)
        theirs = read_ncu(args.ncu_csv)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"ncu_source_compare: {e}", file=sys.stderr)
        return 2
    rows, compared = compare(ours, theirs)
    if not compared:
        print("ncu_source_compare: no kernel of the report is on ncu's page", file=sys.stderr)
        return 2
    failed = 0
    for function, (file, line), what, a, b, ok in rows:
        share = what == "sample share"
        shown = (f"{100 * a:.1f}%", f"{100 * b:.1f}%") if share else (f"{a:,.0f}", f"{b:,.0f}")
        print(f"{'ok  ' if ok else 'FAIL'} {function[:60]:<60} {file}:{line:<5} {what:<22}"
              f" gpulab {shown[0]:>14} ncu {shown[1]:>14}")
        failed += not ok
    verdict = "PASS" if failed == 0 else "FAIL"
    print(f"ncu source comparison: {verdict} ({len(compared)} kernels, {len(rows)} values, "
          f"{failed} out of bounds)")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
