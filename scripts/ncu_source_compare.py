#!/usr/bin/env python3
"""Compare gpulab's per-instruction counters with ncu's source page, kernel by kernel, line by line.

usage: ncu_source_compare.py REPORT.json NCU_SOURCE.csv

REPORT.json is `gpulab run LAB --source --json REPORT.json`; NCU_SOURCE.csv is
  ncu --clock-control none --set full --import-source yes -o R gpulab run LAB ...
  ncu -i R --page source --csv --print-source sass,cuda
on the same lab. ncu's page holds, per profiled launch, a block: "File Path", "Function Name"
(demangled in ncu's own style), a header, then one row per source line ("Line No" set) followed
by the rows of its SASS instructions ("Address" set); a launch whose code comes from several files
(functions inlined from CUDA's headers) has one block per file, one after another. The first
launch's blocks of each function are used;
the report's kernels are matched to it by name_key: both demanglers' spellings of one function
give one key.

The two tools do not group instructions into lines alike: ncu lists an inlined instruction under
its own line and under the line that calls it, gpulab under its own line only. So the comparison
is made per instruction (offset from the function's first address) and summed over gpulab's
lines:
  - each instruction's line in gpulab is one of the lines ncu lists it under (by number alone
    where ncu gives no block of gpulab's file: see `listed`);
  - per line, warp and thread instructions executed, global sectors, shared wavefronts and
    divergent branches (the columns ncu printed) within 2% of ncu's (or ABSOLUTE_FLOOR);
  - per line, its share of the kernel's warp-stall samples within 5 points (or three standard
    errors, for kernels with few samples), on lines that hold at least 5% and 20 of either tool's
    samples (sampling is statistical: smaller lines are shown, not judged).
An instruction ncu counts and gpulab has no record of counts on ncu's first line for it, against
gpulab's zero. Prints one row per judged value, one PASS/FAIL line per kernel and one overall; exits 1
on FAIL, 2 on unusable input.
"""
import argparse
import csv
import json
import os
import re
import sys
from dataclasses import dataclass, field

RELATIVE = 0.02         # counts: allowed |gpulab - ncu| / ncu
ABSOLUTE_FLOOR = 64     # counts: a difference this small passes (a warp's worth of a few lines)
SHARE_POINTS = 0.05     # stall-sample shares: allowed difference, as a fraction of the kernel
MIN_SHARE = 0.05        # lines holding less of the samples are not judged on their share
MIN_LINE_SAMPLES = 20   # nor lines with fewer samples in both tools (gpulab's kMinLineSamples)


def share_bound(a, b, n_a, n_b):
    """The allowed difference between two sample shares: SHARE_POINTS, or three standard errors
    of the difference of two binomial proportions where the kernels have few samples."""
    p = (a * n_a + b * n_b) / (n_a + n_b)
    return max(SHARE_POINTS, 3 * (p * (1 - p) * (1 / n_a + 1 / n_b)) ** 0.5)

# gpulab's counter name (report source_counter) -> ncu's source-page column.
COUNTERS = {
    "inst_executed": "Instructions Executed",
    "thread_inst_executed": "Thread Instructions Executed",
    "global_sectors": "L2 Theoretical Sectors Global",
    "shared_wavefronts": "L1 Wavefronts Shared",
    "divergent_branches": "Divergent Branches",
}
NCU_SAMPLES = "Warp Stall Sampling (All Samples)"


@dataclass
class Kernel:
    """One function's instructions: their counters by offset, and the source lines of each
    ((file basename, line): one for gpulab, every line ncu lists it under for ncu)."""
    function: str
    instructions: dict = field(default_factory=dict)  # offset -> {counter or column: value}
    lines: dict = field(default_factory=dict)         # offset -> [(file, line), ...]
    files: set = field(default_factory=set)           # ncu: the files it gives a block of


def name_key(function):
    """A demangled name without its return type, parameter list and spaces, the anonymous
    namespace spelled one way: gpulab's `function` (c++filt's style) and ncu's "Function Name"
    ("<unnamed>", "const float *") of one kernel give the same key. Overloads that differ only in
    their parameters share it: the labs have none."""
    name = function.replace("<unnamed>", "(anonymous namespace)").strip()
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    if name.startswith("void "):
        name = name[len("void "):]
    return "".join(name.split())


def short_name(function):
    """The function without namespaces, return type and parameters, for the printout:
    "gather_copy<StridedIndex>"."""
    name = name_key(function).replace("(anonymousnamespace)", "")
    return re.sub(r"\w*::", "", name)


def listed(where, lines, files):
    """Whether gpulab's (file, line) is one of ncu's lines for an instruction. Where ncu gives
    the function no block of gpulab's file at all, it has filed that file's lines under another
    of the function's files (seen with CUB's kernels: the kernel's own lines, its declaration
    and closing brace, under the agent's header, whose lines there are a comment, a blank or a
    brace): then the line's number is what can be compared."""
    if where in lines:
        return True
    return where[0] not in files and any(line == where[1] for _, line in lines)


def number(text):
    text = text.replace(",", "").strip()
    if text in ("", "-"):
        return 0.0
    return float(text)


def read_ncu(path):
    """The first block of each function on ncu's source page: {name_key: Kernel}, offsets from
    the lowest address ncu lists for the function."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    out, addresses = {}, {}
    current, header, file, line = None, None, "", None
    launch_key, launch_files = None, set()
    for row in rows:
        if not row:
            continue
        if row[0] == "File Path" and len(row) >= 2:
            file = os.path.basename(row[1])
            continue
        if row[0] == "Function Name" and len(row) >= 2:
            key = name_key(row[1])
            # One launch's code can come from several files (functions inlined from CUDA's
            # headers): ncu gives a block per file, one after another. The same function again
            # after another one's block, or the same file again, is a later launch.
            same_launch = key == launch_key and file not in launch_files
            if key != launch_key or not same_launch:
                launch_key, launch_files = key, set()
            launch_files.add(file)
            if not same_launch:
                current = None if key in out else out.setdefault(key, Kernel(row[1]))
            if current is not None:
                current.files.add(file)
            addresses[key] = addresses.get(key, {})
            header = None
            continue
        if row[0] == "Line No":
            header = row
            continue
        if current is None or header is None:
            continue  # a repeated launch's block
        if row[0].strip():
            line = (file, int(row[0]))
            continue
        values = dict(zip(header[2:], row[2:]))  # "Address" is the third column
        address = values.get("Address", "").strip()
        if not address.startswith("0x") or line is None:
            continue  # "..." stands for instructions listed under another line
        entry = addresses[name_key(current.function)].setdefault(int(address, 16), ({}, []))
        if not entry[0]:
            for column in list(COUNTERS.values()) + [NCU_SAMPLES]:
                if column in values:
                    entry[0][column] = number(values[column])
        if line not in entry[1]:
            entry[1].append(line)
    if not out:
        raise ValueError(f"{path}: no 'Function Name' block: not ncu's --page source --csv")
    for key, kernel in out.items():
        by_address = addresses[key]
        if not by_address:
            continue
        base = min(by_address)
        for address, (values, lines) in by_address.items():
            kernel.instructions[address - base] = values
            kernel.lines[address - base] = lines
    return out


def read_gpulab(path):
    """The report's kernels with a source section: {name_key: Kernel}, one line per
    instruction."""
    with open(path) as f:
        report = json.load(f)
    out = {}
    for variant in report.get("variants", []):
        for kernel in variant.get("kernels", []):
            source = kernel.get("source")
            function = kernel.get("function", "")
            if not source or name_key(function) in out:
                continue
            table = source.get("lines", [])
            k = out.setdefault(name_key(function), Kernel(function))
            for instruction in source.get("instructions", []):
                offset = instruction["offset"]
                k.instructions[offset] = dict(instruction.get("counters", {}))
                if "line" in instruction:
                    where = table[instruction["line"]]
                    k.lines[offset] = [(os.path.basename(where["file"]), where["line"])]
    return out


def judge_count(gpulab, ncu):
    allowed = max(RELATIVE * abs(ncu), ABSOLUTE_FLOOR)
    return abs(gpulab - ncu) <= allowed


def compare_kernel(function, mine, theirs):
    """Rows (kernel, line, what, gpulab, ncu, ok) of one kernel."""
    rows = []
    by_line = {}  # (file, line) -> offsets, by gpulab's line (ncu's first where gpulab has none)
    for offset in sorted(set(mine.instructions) | set(theirs.instructions)):
        ours, ncu_lines = mine.lines.get(offset), theirs.lines.get(offset, [])
        if ours and ncu_lines and not listed(ours[0], ncu_lines, theirs.files):
            rows.append((function, ours[0], f"line of +0x{offset:x}", 0, 0, False))
        where = (ours or ncu_lines or [None])[0]
        if where is not None:
            by_line.setdefault(where, []).append(offset)
    our_samples = sum(i.get("samples", 0.0) for i in mine.instructions.values())
    their_samples = sum(i.get(NCU_SAMPLES, 0.0) for i in theirs.instructions.values())
    for where, offsets in sorted(by_line.items()):
        ours = [mine.instructions.get(o, {}) for o in offsets]
        ncu = [theirs.instructions.get(o, {}) for o in offsets]
        for name, column in COUNTERS.items():
            a = sum(i.get(name, 0.0) for i in ours)
            b = sum(i.get(column, 0.0) for i in ncu)
            if not any(name in i for i in ours) and (b == 0 or not any(column in i for i in ncu)):
                continue
            if not any(column in i for i in theirs.instructions.values()):
                continue  # ncu printed no such column: nothing to compare with
            rows.append((function, where, name, a, b, judge_count(a, b)))
        if our_samples > 0 and their_samples > 0:
            a_count = sum(i.get("samples", 0.0) for i in ours)
            b_count = sum(i.get(NCU_SAMPLES, 0.0) for i in ncu)
            a, b = a_count / our_samples, b_count / their_samples
            if max(a, b) >= MIN_SHARE and max(a_count, b_count) >= MIN_LINE_SAMPLES:
                rows.append((function, where, "sample share", a, b,
                             abs(a - b) <= share_bound(a, b, our_samples, their_samples)))
    return rows


def compare(ours, theirs):
    """Rows (kernel, line, what, gpulab, ncu, ok) and the kernels compared."""
    rows, compared = [], []
    for key, kernel in sorted(ours.items()):
        if key not in theirs:
            continue
        compared.append(kernel.function)
        rows += compare_kernel(kernel.function, kernel, theirs[key])
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
    failed, per_kernel = 0, {}
    for function, (file, line), what, a, b, ok in rows:
        share = what == "sample share"
        shown = (f"{100 * a:.1f}%", f"{100 * b:.1f}%") if share else (f"{a:,.0f}", f"{b:,.0f}")
        if what.startswith("line of"):
            shown = ("this line", "other lines")
        name = short_name(function)
        print(f"{'ok  ' if ok else 'FAIL'} {name[:40]:<40} {file}:{line:<5} {what:<22}"
              f" gpulab {shown[0]:>14} ncu {shown[1]:>14}")
        failed += not ok
        per_kernel[name] = per_kernel.get(name, 0) + (not ok)
    for name, bad in per_kernel.items():
        print(f"{'PASS' if bad == 0 else 'FAIL'} {name}: {bad} out of bounds")
    instructions = sum(len(ours[name_key(f)].instructions) for f in compared)
    verdict = "PASS" if failed == 0 else "FAIL"
    print(f"ncu source comparison: {verdict} ({len(compared)} kernels, {instructions} "
          f"instructions, {len(rows)} values, {failed} out of bounds)")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
