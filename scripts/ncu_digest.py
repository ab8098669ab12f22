#!/usr/bin/env python3
"""ncu's evidence for each profiled launch, a few lines each: what an outside-corpus label is
decided from, before gpulab's answer on the kernel is read (tests/fixtures/README.md, "How an
entry is justified").

usage: ncu_digest.py NAME.ncu.txt [--function TEXT] [--all-rules] [--whole]

NAME.ncu.txt is ncu's details page (`ncu -i R --page details --print-details all`), as
scripts/gpu/outside_corpus.sh records it. Per launch, in the order profiled:
  #N function (grid)x(block), launch K of that function
  time, Speed Of Light (memory, DRAM, L1/TEX, L2, compute), waves per SM, occupancy
  ncu's rule messages: OPT and WRN (INF too with --all-rules), each on one line: its section, its
  estimated speedup, its first sentence (the whole message with --whole)
--function keeps the launches whose name holds TEXT. Exits 2 on a file that holds no launch."""
import argparse
import re
import sys

LAUNCH = re.compile(r"^  (\S.*?) \((\d+, \d+, \d+)\)x\((\d+, \d+, \d+)\), Context \d+, Stream \d+")
SECTION = re.compile(r"^    Section: (.+?)\s*$")
RULE = re.compile(r"^    (OPT|WRN|INF|ERR)\s+(.*?)\s*$")
CONTINUED = re.compile(r"^          (\S.*?)\s*$")
METRIC = re.compile(r"^    (\S.*?)\s{2,}(\S+)?\s+([\d.,]+|n/a)\s*$")

# The table rows shown, by the name ncu gives them, with the label used here.
ESTIMATE = re.compile(r"^(Est\. (?:Local )?Speedup: [\d.]+%)\s*(.*)$")
SENTENCE_END = re.compile(r"(?<=[a-z0-9)%][.!?])\s+(?=[A-Z])")
MAX_SHOWN = 220  # characters of a message's first sentence

SHOWN = [
    ("Duration", "time"),
    ("Memory Throughput", "memory"),
    ("DRAM Throughput", "DRAM"),
    ("L1/TEX Cache Throughput", "L1/TEX"),
    ("L2 Cache Throughput", "L2"),
    ("Compute (SM) Throughput", "compute"),
    ("Waves Per SM", "waves/SM"),
    ("Theoretical Occupancy", "occupancy theoretical"),
    ("Achieved Occupancy", "achieved"),
]


class Launch:
    def __init__(self, name, grid, block):
        self.name, self.grid, self.block = name, grid, block
        self.values = {}  # table row name -> (unit, value)
        self.rules = []  # (severity, section, text)


def parse(lines):
    """The launches of ncu's details page, in the order profiled."""
    launches, section, rule = [], "", None

    def close_rule():
        nonlocal rule
        if rule:
            launches[-1].rules.append((rule[0], rule[1], " ".join(rule[2])))
        rule = None

    for line in lines:
        line = line.rstrip("\n")
        m = LAUNCH.match(line)
        if m:
            close_rule()
            launches.append(Launch(m.group(1), m.group(2), m.group(3)))
            section = ""
            continue
        if not launches:
            continue
        m = SECTION.match(line)
        if m:
            close_rule()
            section = m.group(1)
            continue
        m = RULE.match(line)
        if m:
            close_rule()
            rule = (m.group(1), section, [m.group(2)])
            continue
        m = CONTINUED.match(line)
        if m and rule:
            rule[2].append(m.group(1))
            continue
        close_rule()
        m = METRIC.match(line)
        if m and m.group(1) not in launches[-1].values:
            launches[-1].values[m.group(1)] = (m.group(2) or "", m.group(3))
    close_rule()
    return launches


def message(text, whole=False):
    """A rule's message on one line: its estimated speedup, then its first sentence."""
    estimate, rest = "", text
    m = ESTIMATE.match(text)
    if m:
        estimate, rest = m.group(1) + ": ", m.group(2)
    if not whole:
        rest = SENTENCE_END.split(rest, maxsplit=1)[0]
        if len(rest) > MAX_SHOWN:
            rest = rest[:MAX_SHOWN - 1] + "…"
    return estimate + rest


def digest(launches, function="", all_rules=False, whole=False):
    """The lines printed for `launches`."""
    out, seen = [], {}
    for number, launch in enumerate(launches):
        k = seen.get(launch.name, 0)
        seen[launch.name] = k + 1
        if function and function not in launch.name:
            continue
        out.append(f"#{number} {launch.name} ({launch.grid})x({launch.block}), "
                   f"launch {k} of this function")
        figures = []
        for row, label in SHOWN:
            if row in launch.values:
                unit, value = launch.values[row]
                figures.append(f"{label} {value}{'' if unit in ('', '%') else ' '}{unit}")
        out.append("  " + ", ".join(figures))
        for severity, section, text in launch.rules:
            if severity == "INF" and not all_rules:
                continue
            out.append(f"  {severity} [{section}] {message(text, whole)}")
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("details")
    parser.add_argument("--function", default="")
    parser.add_argument("--all-rules", action="store_true")
    parser.add_argument("--whole", action="store_true")
    args = parser.parse_args(argv)
    try:
        with open(args.details, encoding="utf-8", errors="replace") as f:
            launches = parse(f)
    except OSError as e:
        print(f"ncu_digest: {e.strerror}: {args.details}", file=sys.stderr)
        return 2
    if not launches:
        print(f"ncu_digest: {args.details} holds no profiled launch (ncu's details page?)",
              file=sys.stderr)
        return 2
    print("\n".join(digest(launches, args.function, args.all_rules, args.whole)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
