#!/usr/bin/env python3
"""Compare gpulab's counters with ncu's on the same kernels.

usage: compare_ncu.py REPORT.json NCU.csv [--tolerance 0.03]

REPORT.json is a `gpulab run transpose --json` report; NCU.csv is
`ncu --csv --print-units base --metrics <names> gpulab run transpose --metrics none ...`.
For each kernel the last ncu record is used. Prints one row per (variant, metric) with the
relative difference and exits 1 if any compared metric differs by more than the tolerance.
"""
import argparse
import csv
import json
import sys

# Kernel-name fragments as ncu prints them -> gpulab variant names.
KERNELS = {
    "transpose_naive": "naive",
    "RowMajorTile": "tiled",
    "PaddedTile": "padded",
    "SwizzledTile": "swizzled",
}
# Metrics compared strictly; DRAM writes vary ~10% run to run (L2 write-back) and are shown only.
STRICT = [
    "dram__bytes_read.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
]
LOOSE = ["dram__bytes_write.sum", "gpu__time_duration.sum"]


def ncu_values(path):
    values = {}
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    for row in csv.DictReader(lines):
        name = row.get("Kernel Name", "")
        variant = next((v for k, v in KERNELS.items() if k in name), None)
        if variant is None:
            continue
        try:
            value = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        values.setdefault(variant, {})[row["Metric Name"]] = value
    return values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("ncu_csv")
    ap.add_argument("--tolerance", type=float, default=0.03)
    args = ap.parse_args()

    report = json.load(open(args.report))
    ncu = ncu_values(args.ncu_csv)
    failed = False
    print(f"{'variant':10} {'metric':55} {'gpulab':>16} {'ncu':>16} {'diff':>8}")
    for variant in report["variants"]:
        name = variant["name"]
        ours = variant["kernels"][0]["metrics"]
        theirs = ncu.get(name, {})
        for metric in STRICT + LOOSE:
            if metric not in ours or metric not in theirs:
                print(f"{name:10} {metric:55} {'missing':>16}")
                failed = failed or metric in STRICT
                continue
            a, b = ours[metric], theirs[metric]
            diff = abs(a - b) / max(abs(b), 1e-30) if (a or b) else 0.0
            bad = metric in STRICT and diff > args.tolerance
            failed = failed or bad
            mark = "FAIL" if bad else ("" if metric in STRICT else "(loose)")
            print(f"{name:10} {metric:55} {a:16.6g} {b:16.6g} {diff:7.2%} {mark}")
    print("ncu agreement:", "FAIL" if failed else f"PASS (strict metrics within {args.tolerance:.0%})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
