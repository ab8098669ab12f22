"""scripts/ncu_source_compare.py on ncu's source page of the naive transpose (recorded on an
H100, tests/fixtures/ncu/transpose_naive-source.csv): its lines read as ncu printed them, and a
report made from ncu's own rows agreeing with it while one off by more than the bounds does not.
The reports here are built by the test from ncu's numbers; they are not measurements."""
import copy
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import ncu_source_compare as nsc  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "ncu",
                       "transpose_naive-source.csv")
FUNCTION = "gpulab::labs::<unnamed>::transpose_naive(const float *, float *, int, int)"


def report_from(kernel):
    """A report whose naive kernel has one instruction per line carrying ncu's counts."""
    table, instructions = [], []
    for (file, line), values in sorted(kernel.lines.items()):
        table.append({"file": "labs/" + file, "line": line})
        counters = {name: values[column] for name, column in nsc.COUNTERS.items()}
        counters["samples"] = values[nsc.NCU_SAMPLES]
        instructions.append({"offset": 16 * len(instructions), "sass": "", "line": len(table) - 1,
                             "counters": counters})
    source = {"function": "_Z15transpose_naivePKfPfii", "origin": "cupti", "lines": table,
              "instructions": instructions}
    return {"variants": [{"name": "naive", "kernels": [{"function": FUNCTION, "source": source}]}]}


def run(report):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "r.json")
        with open(path, "w") as f:
            json.dump(report, f)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = nsc.main([path, FIXTURE])
        return code, out.getvalue(), err.getvalue()


class NcuSourceCompare(unittest.TestCase):
    def setUp(self):
        self.ncu = nsc.read_ncu(FIXTURE)

    def test_reads_the_lines_as_ncu_printed_them(self):
        naive = self.ncu[FUNCTION]
        store = naive.lines[("transpose.cu", 45)]
        self.assertEqual(store["Instructions Executed"], 30932992)
        self.assertEqual(store["L2 Theoretical Sectors Global"], 75497472)
        self.assertEqual(sum(l["Instructions Executed"] for l in naive.lines.values()), 38273024)

    def test_a_report_with_ncus_numbers_agrees(self):
        code, out, _ = run(report_from(self.ncu[FUNCTION]))
        self.assertEqual(code, 0, out)
        self.assertIn("ncu source comparison: PASS (1 kernels", out)
        self.assertIn("transpose.cu:45", out)

    def test_a_count_off_by_more_than_two_percent_fails_on_its_line(self):
        report = report_from(self.ncu[FUNCTION])
        store = next(i for i in report["variants"][0]["kernels"][0]["source"]["instructions"]
                     if i["counters"]["global_sectors"] > 0)
        store["counters"]["global_sectors"] *= 1.03
        code, out, _ = run(report)
        self.assertEqual(code, 1)
        failed = [l for l in out.splitlines() if l.startswith("FAIL")]
        self.assertEqual(len(failed), 1, out)
        self.assertIn("transpose.cu:45", failed[0])
        self.assertIn("global_sectors", failed[0])

    def test_a_share_off_by_more_than_five_points_fails(self):
        report = report_from(self.ncu[FUNCTION])
        instructions = report["variants"][0]["kernels"][0]["source"]["instructions"]
        total = sum(i["counters"]["samples"] for i in instructions)
        hot = max(instructions, key=lambda i: i["counters"]["samples"])
        hot["counters"]["samples"] += 0.5 * total  # 70% of the samples become 80%
        code, out, _ = run(report)
        self.assertEqual(code, 1)
        self.assertTrue(any(l.startswith("FAIL") and "sample share" in l
                            for l in out.splitlines()), out)

    def test_input_that_is_not_ncus_page_is_refused(self):
        with tempfile.TemporaryDirectory() as folder:
            bogus = os.path.join(folder, "bogus.csv")
            with open(bogus, "w") as f:
                f.write("a,b\n1,2\n")
            with redirect_stderr(io.StringIO()) as err:
                self.assertEqual(nsc.main([bogus, bogus]), 2)
            self.assertIn("ncu_source_compare", err.getvalue())


if __name__ == "__main__":
    unittest.main()
