"""scripts/ncu_digest.py on ncu's details page of the cuBLAS program, recorded on an H200 for the
outside corpus (tests/fixtures/outside/cublas_routines.ncu.txt): every launch found, its figures
read from the right tables, its rule messages on one line each, and a file without launches
refused."""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import ncu_digest  # noqa: E402

PAGE = os.path.join(HERE, "..", "fixtures", "outside", "cublas_routines.ncu.txt")


def launches():
    with open(PAGE, encoding="utf-8") as f:
        return ncu_digest.parse(f)


class Digest(unittest.TestCase):
    def test_every_launch_with_its_shape(self):
        found = launches()
        with open(PAGE, encoding="utf-8") as f:
            expected = sum(1 for line in f if ncu_digest.LAUNCH.match(line))
        self.assertEqual(len(found), expected)
        self.assertGreaterEqual(len(found), 10)
        tf32 = found[1]
        self.assertIn("tf32", tf32.name)
        self.assertEqual((tf32.grid, tf32.block), ("66, 2, 1", "384, 1, 1"))

    def test_figures_come_from_their_tables(self):
        lines = ncu_digest.digest(launches(), function="tf32")
        self.assertTrue(lines[0].startswith("#1 sm90_xmma_gemm_f32f32_tf32f32"), lines[0])
        self.assertTrue(lines[0].endswith("launch 0 of this function"), lines[0])
        self.assertEqual(lines[1], "  time 340.93 us, memory 67.84%, DRAM 22.59%, L1/TEX 70.86%, "
                                   "L2 59.19%, compute 88.37%, waves/SM 1, occupancy theoretical "
                                   "18.75%, achieved 18.27%")

    def test_rules_one_line_each_estimate_first(self):
        lines = ncu_digest.digest(launches(), function="tf32")
        self.assertIn("  OPT [Occupancy] Est. Speedup: 11.63%: The 3.00 theoretical warps per "
                      "scheduler this kernel can issue according to its occupancy are below the "
                      "hardware maximum of 16.", lines)
        self.assertFalse(any(" INF " in line for line in lines), "INF only with --all-rules")
        every = ncu_digest.digest(launches(), function="tf32", all_rules=True)
        self.assertTrue(any(line.startswith("  INF [GPU Speed Of Light Throughput]")
                            for line in every))
        whole = ncu_digest.digest(launches(), function="tf32", whole=True)
        self.assertTrue(any("limited by the number of required registers, and the required "
                            "amount of shared memory" in line for line in whole))

    def test_a_page_without_launches_is_refused(self):
        with tempfile.TemporaryDirectory() as folder:
            empty = os.path.join(folder, "empty.ncu.txt")
            with open(empty, "w") as f:
                f.write("==PROF== Disconnected\n")
            err = io.StringIO()
            with redirect_stderr(err), redirect_stdout(io.StringIO()):
                self.assertEqual(ncu_digest.main([empty]), 2)
            self.assertIn("holds no profiled launch", err.getvalue())
            with redirect_stderr(io.StringIO()), redirect_stdout(io.StringIO()):
                self.assertEqual(ncu_digest.main([os.path.join(folder, "missing.ncu.txt")]), 2)


if __name__ == "__main__":
    unittest.main()
