#!/usr/bin/env python3
"""What the traced labs' `--source` reports hold: per lab, whether it has a timeline per variant,
per-instruction data and stall samples per kernel, and its warnings. A summary for scripts/gpu/source_lines.sh.

usage: traced_source_summary.py SOURCE.tgz LAB..."""
import json
import sys
import tarfile


def main(argv):
    archive, labs = argv[1], argv[2:]
    with tarfile.open(archive) as t:
        for lab in labs:
            try:
                report = json.load(t.extractfile(f"source/{lab}.json"))
            except (KeyError, ValueError) as e:
                print(f"{lab}: no report ({e})")
                continue
            variants = report.get("variants", [])
            traced = sum(1 for v in variants if v.get("timeline"))
            kernels = [k for v in variants for k in v.get("kernels", [])]
            with_source = sum(1 for k in kernels if k.get("source"))
            sampled = sum(1 for k in kernels
                          if (k.get("source") or {}).get("sampling", {}).get("samples", 0) > 0)
            print(f"{lab}: {traced} of {len(variants)} variants with a timeline, {with_source} of "
                  f"{len(kernels)} kernels with per-instruction data, {sampled} with stall "
                  f"samples")
            for w in report.get("warnings", [])[:4]:
                print(f"  warning: {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
