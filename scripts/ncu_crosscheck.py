#!/usr/bin/env python3
"""Cross-check gpulab's counters against ncu's, kernel by kernel, over every lab.

usage: ncu_crosscheck.py REPORTS_DIR NCU_DIR [--labs a,b] [--json OUT.json]

REPORTS_DIR/LAB.json is `gpulab run LAB --metrics full --json LAB.json`.
NCU_DIR/LAB.csv is, with the same metric names,
  ncu --clock-control none --csv --print-units base --print-kernel-base mangled \
      --metrics NAMES gpulab run LAB --metrics none --repeat 1 --warmup 0
In that process gpulab launches each variant twice, in the report's order (the correctness
launch, then one timed launch), so ncu records every kernel twice: the two give ncu's own
launch-to-launch spread. NCU_DIR/LAB.2.csv, LAB.3.csv... are further ncu processes of the same
command: their records join the first's, so that the spread is also ncu's from process to
process. A process may collect part of the metric list (scripts/gpu/ncu_crosscheck.sh's GPULAB_NCU_SPLIT:
ncu's grouping of a list into passes can move a value); a metric's spread is then over the
processes that collected it. Records are matched to the report's kernels by mangled function
name and launch order, variant after variant; two variants often share a function, so a record
is never looked up by name alone.

Each metric value is judged by the rule of its class (RULES below; docs/measurement.md says where
each bound comes from): allowed = max(relative bound x |ncu|, twice ncu's own spread, absolute
floor). Twice: gpulab's value is one draw of the same noise that ncu's two launches show, and two
launches underrate a noisy counter's range. On kernels that keep data in local memory, the
metrics that depend on how much of it L1 holds get the wider bound of LOCAL_RESIDENCY.
Durations, throughputs and stall ratios are judged only on kernels of at least MIN_GATED_NS (CUPTI
and ncu both read short kernels noisily; they are still listed). Prints the worst difference per
metric and one PASS/FAIL line; exits 1 on FAIL.
"""
import argparse
import csv
import json
import os
import re
import sys
from dataclasses import dataclass, field

MIN_GATED_NS = 20_000  # kernels shorter than 20 us: durations, throughputs and ratios not gated


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str          # regular expression on the metric name
    relative: float       # allowed |gpulab - ncu| / |ncu|
    floor: float = 0.0    # absolute allowance, in the metric's base unit
    long_only: bool = False  # judged only on kernels >= MIN_GATED_NS
    # Depends on what L2 holds when the kernel starts. ncu flushes L2 before every kernel;
    # gpulab before each pass of a variant, so a variant's later kernels see what its earlier
    # work left (the streams lab's copies): judged on a variant's first kernel only.
    cache_state: bool = False
    gated: bool = True


# First match wins.
RULES = [
    Rule("duration", r"^gpu__time_duration\.sum$", 0.05, long_only=True),
    # L2 write-back timing: the bytes a kernel is charged depend on when L2 evicts dirty lines,
    # its own and those left by what ran before (see docs/measurement.md for the data).
    Rule("dram-write", r"^dram__bytes_write\.sum$", 0.02, floor=4e6, cache_state=True),
    Rule("dram-read", r"^dram__bytes_read\.sum$", 0.02, floor=1e6, cache_state=True),
    # ncu's measurement of a one-thread kernel carries ~100 KB of L2 traffic more than gpulab's.
    Rule("l2-bytes", r"^lts__t_bytes\.sum$", 0.02, floor=256e3),
    # The hardware's bank-conflict counter depends on timing where shared memory is also written
    # by atomics or the copy engines: ncu's own two launches differ by up to 3.8% there.
    Rule("bank-conflicts", r"^l1tex__data_bank_conflicts_", 0.08, floor=64),
    # Tens of events are noise in counters of one-block kernels (ncu's own launches differ so).
    Rule("count", r"\.sum$", 0.02, floor=64),
    Rule("dram-throughput", r"^dram__throughput", 0.05, floor=1.0, long_only=True,
         cache_state=True),
    Rule("throughput", r"\.pct_of_peak_sustained_(elapsed|active)$", 0.05, floor=1.0,
         long_only=True),
    Rule("hit-rate", r"_hit_rate\.pct$", 0.05, floor=2.0, long_only=True, cache_state=True),
    Rule("threads-per-inst", r"^smsp__thread_inst_executed_per_inst_executed\.ratio$", 0.02),
    # Stall ratios are shown, not gated: see docs/measurement.md for where they agree.
    Rule("stall", r"^smsp__average_warp", 0.10, floor=0.5, long_only=True, gated=False),
    Rule("other", r".", 0.05, long_only=True),
]


# How far the L1-residency metrics of a local-memory kernel move in ncu's own measurement when
# only the per-thread stack reservation changes (cudaLimitStackSize 1024 -> 1040/2048/4096
# bytes, above the 280-byte frame the kernels use): spill/capped's L1 hit rate 77.5-86.9%,
# DRAM reads 176-227 MB, writes 3.84-4.58 GB (docs/measurement.md has the table).
LOCAL_RESIDENCY = {"relative": 0.25, "hit_rate_points": 10.0}
LOCAL_RESIDENCY_RULES = {"dram-write", "dram-read", "dram-throughput", "l2-bytes", "hit-rate"}
LOCAL_TRAFFIC_METRICS = ("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
                         "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum")


# Kernels whose ncu numbers describe another execution than the program's, with the evidence.
NOT_COMPARABLE = {
    ("unified-memory", "on-demand"):
        "ncu's kernel replay saves the kernel's memory before the first pass, which migrates the "
        "managed pages to the GPU: ncu times a kernel that does not fault (its duration is the "
        "prefetch variant's), while gpulab's replay puts the pages back on the host before "
        "every pass, as the program does",
}


def rule_for(metric):
    for rule in RULES:
        if re.search(rule.pattern, metric):
            return rule
    raise ValueError(metric)


@dataclass
class NcuRecord:
    id: int
    mangled: str
    metrics: dict = field(default_factory=dict)


def parse_number(text):
    text = text.strip().replace(",", "")
    if text in ("", "n/a", "N/A"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def read_ncu_csv(path):
    """ncu's --csv page: one row per (kernel launch, metric); returns records in launch order."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # drops gpulab's own output
    records = {}
    for row in csv.DictReader(lines):
        try:
            rid = int(row["ID"])
        except (KeyError, ValueError):
            continue
        rec = records.setdefault(rid, NcuRecord(rid, row.get("Kernel Name", "")))
        value = parse_number(row.get("Metric Value", ""))
        if value is not None:
            rec.metrics[row["Metric Name"]] = value
    return [records[k] for k in sorted(records)]


@dataclass
class KernelMatch:
    lab: str
    variant: str
    index: int
    label: str
    function: str
    mangled: str
    ours: dict
    ncu: list  # the ncu records of this kernel, one per launch ncu saw (two per ncu process)

    @property
    def uses_local_memory(self):
        return any(self.ours.get(m, 0) > 0 for m in LOCAL_TRAFFIC_METRICS)


def match_report(lab, report, records, launches_per_variant=2):
    """Pairs each report kernel with its ncu records. Returns (matches, problems, uncounted):
    uncounted lists the variants gpulab collected no counters for, with its reason."""
    known = {k.get("mangled_name", "") for v in report["variants"] for k in v.get("kernels", [])}
    known.discard("")
    matches, problems, uncounted = [], [], []
    cursor = 0
    for v in report["variants"]:
        if v.get("status") == "skipped" or not v.get("kernels"):
            continue
        kernels = v["kernels"]
        if any(not k.get("mangled_name") for k in kernels):
            problems.append(f"{lab}/{v['name']}: a kernel without a mangled name cannot be matched")
            continue
        found = [[] for _ in kernels]
        for _ in range(launches_per_variant):
            start = cursor
            taken = []
            for k in kernels:
                # Skip records of functions no variant launches (gpulab's own helpers); stop at
                # a known function that is not the one expected: it belongs to another variant.
                j = cursor
                while j < len(records) and records[j].mangled not in known:
                    j += 1
                if j < len(records) and records[j].mangled == k["mangled_name"]:
                    taken.append(records[j])
                    cursor = j + 1
                else:
                    taken = None
                    break
            if taken is None:
                cursor = start
                break
            for i, rec in enumerate(taken):
                found[i].append(rec)
        counters = v.get("counters", {})
        if not counters.get("collected", True) and not NOT_COMPARABLE.get((lab, v["name"])):
            uncounted.append(f"{lab}/{v['name']}: {counters.get('note') or 'no counters'}")
        excluded = NOT_COMPARABLE.get((lab, v["name"])) or not counters.get("collected", True)
        for i, k in enumerate(kernels):
            if excluded:
                continue
            if not found[i]:
                problems.append(f"{lab}/{v['name']}/{k['name']}: no ncu record")
                continue
            matches.append(KernelMatch(lab, v["name"], i, k["name"], k.get("function", ""),
                                       k["mangled_name"], k.get("metrics", {}), found[i]))
    return matches, problems, uncounted


def exclusions(labs):
    return [f"{lab}/{variant}: {why}" for (lab, variant), why in sorted(NOT_COMPARABLE.items())
            if lab in labs]


@dataclass
class Judgement:
    match: KernelMatch
    metric: str
    rule: Rule
    ours: float
    theirs: float   # mean of ncu's launches
    spread: float   # max - min over ncu's launches (0 with one launch)
    allowed: float
    gated: bool

    @property
    def diff(self):
        return abs(self.ours - self.theirs)

    @property
    def relative(self):
        return self.diff / abs(self.theirs) if self.theirs else (0.0 if not self.diff else float("inf"))

    @property
    def ok(self):
        return not self.gated or self.diff <= self.allowed

    @property
    def score(self):  # how close to failing: > 1 fails
        return self.diff / self.allowed if self.allowed > 0 else (0.0 if not self.diff else float("inf"))


def judge(match):
    out = []
    ncu_duration = [r.metrics.get("gpu__time_duration.sum") for r in match.ncu]
    ncu_duration = [d for d in ncu_duration if d is not None]
    long_kernel = bool(ncu_duration) and min(ncu_duration) >= MIN_GATED_NS
    for metric, ours in sorted(match.ours.items()):
        values = [r.metrics[metric] for r in match.ncu if metric in r.metrics]
        if not values:
            continue
        rule = rule_for(metric)
        theirs = sum(values) / len(values)
        spread = max(values) - min(values)
        allowed = max(rule.relative * abs(theirs), 2 * spread, rule.floor)
        if match.uses_local_memory and rule.name in LOCAL_RESIDENCY_RULES:
            wide = (LOCAL_RESIDENCY["hit_rate_points"] if rule.name == "hit-rate"
                    else LOCAL_RESIDENCY["relative"] * abs(theirs))
            allowed = max(allowed, wide)
        gated = (rule.gated and (long_kernel or not rule.long_only)
                 and (match.index == 0 or not rule.cache_state))
        out.append(Judgement(match, metric, rule, ours, theirs, spread, allowed, gated))
    return out


def fmt_value(x):
    if x == 0:
        return "0"
    if abs(x) >= 1e6 or abs(x) < 1e-2:
        return f"{x:.4g}"
    return f"{x:,.2f}" if abs(x) < 1e3 else f"{x:,.0f}"


def worst_by_metric(judgements):
    worst = {}
    for j in judgements:
        key = j.metric
        best = worst.get(key)
        # Gated values first: the worst of those decides; ungated ones only when none is gated.
        rank = (j.gated, j.score if j.gated else j.relative)
        if best is None or rank > (best.gated, best.score if best.gated else best.relative):
            worst[key] = j
    return worst


def kernel_label(m):
    shown = m.function or m.mangled
    shown = re.sub(r"\(anonymous namespace\)::|gpulab::labs::", "", shown)
    shown = re.sub(r"^void ", "", shown)
    shown = re.sub(r"\(.*\)$", "", shown)
    return f"{m.lab}/{m.variant} {shown}"


def render(judgements, problems, kernels, excluded=()):
    rows = []
    for metric, j in sorted(worst_by_metric(judgements).items()):
        rows.append((metric, j.rule.name, kernel_label(j.match), fmt_value(j.ours),
                     fmt_value(j.theirs), fmt_value(j.spread), f"{j.relative:.2%}",
                     fmt_value(j.allowed), "ok" if j.ok else ("FAIL" if j.gated else "not gated")))
    head = ("metric", "rule", "worst kernel", "gpulab", "ncu", "ncu spread", "diff", "allowed", "")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(head, widths))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    failed = [j for j in judgements if not j.ok]
    for j in sorted(failed, key=lambda j: -j.score)[:40]:
        lines.append(f"FAIL {kernel_label(j.match)} {j.metric}: gpulab {fmt_value(j.ours)} ncu "
                     f"{fmt_value(j.theirs)} (spread {fmt_value(j.spread)}, allowed "
                     f"{fmt_value(j.allowed)})")
    for p in problems:
        lines.append(f"unmatched: {p}")
    for e in excluded:
        lines.append(f"not compared: {e}")
    gated = sum(1 for j in judgements if j.gated)
    verdict = "PASS" if not failed and not problems else "FAIL"
    lines.append(f"ncu cross-check: {verdict} ({kernels} kernels, {gated} values gated, "
                 f"{len(judgements) - gated} shown only, {len(failed)} out of bounds, "
                 f"{len(problems)} unmatched)")
    return "\n".join(lines), verdict


def ncu_runs(ncu_dir, lab):
    """The CSVs of a lab's ncu processes: LAB.csv, then LAB.2.csv, LAB.3.csv... in order."""
    first = os.path.join(ncu_dir, lab + ".csv")
    more = sorted((f for f in os.listdir(ncu_dir) if re.fullmatch(re.escape(lab) + r"\.\d+\.csv", f)),
                  key=lambda f: int(f.split(".")[-2]))
    return ([first] if os.path.exists(first) else []) + [os.path.join(ncu_dir, f) for f in more]


def merge_runs(per_run):
    """One match per kernel from the matches of several ncu processes: every process's records
    of it, so that ncu's spread is its spread across processes as well as across launches."""
    merged = {}
    for matches in per_run:
        for m in matches:
            key = (m.variant, m.index)
            if key in merged:
                merged[key].ncu.extend(m.ncu)
            else:
                merged[key] = KernelMatch(m.lab, m.variant, m.index, m.label, m.function,
                                          m.mangled, m.ours, list(m.ncu))
    return list(merged.values())


def crosscheck(reports_dir, ncu_dir, labs=None):
    judgements, problems, kernels, excluded = [], [], 0, []
    names = labs or sorted(f[:-5] for f in os.listdir(reports_dir) if f.endswith(".json"))
    for lab in names:
        report_path = os.path.join(reports_dir, lab + ".json")
        runs = ncu_runs(ncu_dir, lab)
        if not os.path.exists(report_path) or not runs:
            problems.append(f"{lab}: missing {'report' if not os.path.exists(report_path) else 'ncu csv'}")
            continue
        with open(report_path) as f:
            report = json.load(f)
        per_run = []
        for i, path in enumerate(runs):
            matches, run_problems, uncounted = match_report(lab, report, read_ncu_csv(path))
            suffix = f" (ncu run {i + 1})" if len(runs) > 1 else ""
            problems += [p + suffix for p in run_problems]
            if i == 0:
                excluded += uncounted
            per_run.append(matches)
        matches = merge_runs(per_run)
        kernels += len(matches)
        for m in matches:
            judgements += judge(m)
    return judgements, problems, kernels, exclusions(names) + excluded


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reports_dir")
    ap.add_argument("ncu_dir")
    ap.add_argument("--labs", help="comma-separated labs (default: every report in REPORTS_DIR)")
    ap.add_argument("--json", help="also write every judgement to this file")
    args = ap.parse_args()
    labs = args.labs.split(",") if args.labs else None
    judgements, problems, kernels, excluded = crosscheck(args.reports_dir, args.ncu_dir, labs)
    text, verdict = render(judgements, problems, kernels, excluded)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"lab": j.match.lab, "variant": j.match.variant, "kernel": j.match.label,
                        "function": j.match.function, "metric": j.metric, "rule": j.rule.name,
                        "gpulab": j.ours, "ncu": j.theirs, "ncu_spread": j.spread,
                        "allowed": j.allowed, "gated": j.gated, "ok": j.ok}
                       for j in judgements], f, indent=1)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
