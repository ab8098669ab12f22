#!/usr/bin/env python3
"""Compares two `gpulab profile` reports of the same program made under two replay modes
(--replay kernel and --replay batch), launch by launch: the counts that do not depend on the
cache state (warp instructions, global load/store requests and sectors, shared-memory
instructions) must be equal. Prints one line per function that differs and a summary last.
Exit status 1 when any count differs or a launch is missing.

  python3 scripts/replay_agreement.py KERNEL_REPORT.json BATCH_REPORT.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_kernels import kernels_of  # noqa: E402

EXACT = [
    "smsp__inst_executed.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
]


def launches(path):
    report = json.load(open(path))
    out = {}
    for v in report["variants"]:
        for k in kernels_of(v):
            out[(v["name"], k.get("launch_index", 0))] = k.get("metrics", {})
    return report, out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a_report, a = launches(sys.argv[1])
    b_report, b = launches(sys.argv[2])
    differing, compared, values = 0, 0, 0
    for key in sorted(a):
        if key not in b:
            print(f"{key[0]} launch {key[1]}: missing from {sys.argv[2]}")
            differing += 1
            continue
        compared += 1
        for name in EXACT:
            if name not in a[key] or name not in b[key]:
                continue
            values += 1
            if a[key][name] != b[key][name]:
                differing += 1
                print(f"{key[0][:60]} launch {key[1]}: {name} {a[key][name]:,.0f} vs {b[key][name]:,.0f}")
    replays = (a_report.get("program", {}).get("replay"), b_report.get("program", {}).get("replay"))
    print(f"replay agreement ({replays[0]} vs {replays[1]}): {compared} launches, {values} counts "
          f"compared, {differing} differing{'' if differing else ': PASS'}")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
