#!/usr/bin/env python3
"""Cross-check the counters of `gpulab profile` against ncu's on the same program.

usage: profile_vs_ncu.py REPORT.json NCU_A.csv [NCU_B.csv ...] [--json OUT.json]

REPORT.json is `gpulab profile --metrics LIST --launch-count all --json REPORT.json -- APP`;
each NCU csv is, with the same metric names, from its own run of the program:
  ncu --clock-control none --cache-control none --csv --print-units base \
      --print-kernel-base mangled --metrics LIST APP
(--cache-control none: CUPTI's kernel replay in `gpulab profile` cannot flush L2 between
passes, docs/profile.md). The k-th launch of a function in the report is matched with the k-th
record of that mangled name in each ncu run; two ncu runs give ncu's own spread. Every value is
judged by the rules of ncu_crosscheck.py. Prints the worst difference per metric and one
PASS/FAIL line; exits 1 on FAIL.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_crosscheck as cc  # noqa: E402
from report_kernels import kernels_of  # noqa: E402


def match_program(report, runs):
    by_name = []
    for records in runs:
        index = {}
        for rec in records:
            index.setdefault(rec.mangled, []).append(rec)
        by_name.append(index)
    program = os.path.basename(report["program"]["argv"][0])
    matches, problems = [], []
    for v in report["variants"]:
        for k in kernels_of(v):
            found = []
            for index in by_name:
                launches = index.get(k.get("mangled_name", ""), [])
                if k["launch_index"] < len(launches):
                    found.append(launches[k["launch_index"]])
            if not found:
                problems.append(f"{program}/{v['name']} launch {k['launch_index']}: no ncu record")
                continue
            matches.append(cc.KernelMatch(program, v["name"], k["launch_index"], k["name"],
                                          k.get("function", ""), k["mangled_name"],
                                          k.get("metrics", {}), found))
    return matches, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report")
    ap.add_argument("ncu", nargs="+")
    ap.add_argument("--json")
    args = ap.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    runs = [cc.read_ncu_csv(path) for path in args.ncu]
    matches, problems = match_program(report, runs)
    judgements = [j for m in matches for j in cc.judge(m)]
    text, verdict = cc.render(judgements, problems, len(matches))
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"launches": len(matches), "judged": len(judgements),
                       "failed": sum(1 for j in judgements if not j.ok), "problems": problems,
                       "verdict": verdict}, f, indent=1)
    return 0 if verdict == "PASS" and matches else 1


if __name__ == "__main__":
    sys.exit(main())
