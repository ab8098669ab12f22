"""scripts/ncu_source_compare.py on recorded pairs from one H100: gpulab's report of the
coalescing lab with --source (tests/fixtures/source/coalescing.h100.json) and ncu's source page of
the same kernels (tests/fixtures/ncu/coalescing-source.csv), and the same for the atomics lab's
block-reduce kernel, whose code comes from two files (tests/fixtures/source/atomics.h100.json,
tests/fixtures/ncu/atomics-source.csv). The pairs agree; the same report with one instruction's
count, one line's samples or one instruction's line changed does not."""
import copy
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import ncu_source_compare as nsc  # noqa: E402

FIXTURES = os.path.join(HERE, "..", "fixtures")
NCU_PAGE = os.path.join(FIXTURES, "ncu", "coalescing-source.csv")
REPORT = os.path.join(FIXTURES, "source", "coalescing.h100.json")
ATOMICS_PAGE = os.path.join(FIXTURES, "ncu", "atomics-source.csv")
ATOMICS_REPORT = os.path.join(FIXTURES, "source", "atomics.h100.json")
STRIDED = ("void gpulab::labs::<unnamed>::gather_copy<gpulab::labs::<unnamed>::StridedIndex>"
           "(const float *, float *, unsigned long, int)")


def load_report():
    with open(REPORT) as f:
        return json.load(f)


def strided_source(report):
    variant = next(v for v in report["variants"] if v["name"] == "strided")
    return variant["kernels"][0]["source"]


def run(report, page=NCU_PAGE, page_text=None):
    """The comparison of `report` with ncu's `page`, or with `page_text` written to a file."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "r.json")
        with open(path, "w") as f:
            json.dump(report, f)
        if page_text is not None:
            page = os.path.join(folder, "page.csv")
            with open(page, "w") as f:
                f.write(page_text)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = nsc.main([path, page])
        return code, out.getvalue(), err.getvalue()


def failed_lines(out):
    return [line for line in out.splitlines() if line.startswith("FAIL ")]


class NcuSourceCompare(unittest.TestCase):
    def test_both_demanglers_spellings_give_one_key(self):
        ours = ("void gpulab::labs::(anonymous namespace)::gather_copy<gpulab::labs::(anonymous "
                "namespace)::StridedIndex>(float const*, float*, unsigned long, int)")
        self.assertEqual(nsc.name_key(ours), nsc.name_key(STRIDED))
        self.assertEqual(nsc.short_name(STRIDED), "gather_copy<StridedIndex>")

    def test_reads_ncus_instructions_and_every_line_it_lists_them_under(self):
        strided = nsc.read_ncu(NCU_PAGE)[nsc.name_key(STRIDED)]
        self.assertEqual(len(strided.instructions), 80)
        executed = sum(i["Instructions Executed"] for i in strided.instructions.values())
        self.assertEqual(executed, 35651584)
        # ncu lists an inlined instruction under its own line and its caller's.
        self.assertTrue(any(len(lines) > 1 for lines in strided.lines.values()))

    def test_the_recorded_pair_agrees(self):
        code, out, _ = run(load_report())
        self.assertEqual(code, 0, out)
        self.assertIn("ncu source comparison: PASS (3 kernels, 157 instructions", out)
        self.assertIn("PASS gather_copy<StridedIndex>", out)

    def test_a_count_off_by_more_than_two_percent_fails_on_its_line(self):
        report = load_report()
        source = strided_source(report)
        store = max(source["instructions"], key=lambda i: i["counters"].get("global_sectors", 0))
        line_sectors = sum(i["counters"].get("global_sectors", 0) for i in source["instructions"]
                           if i.get("line") == store["line"])
        store["counters"]["global_sectors"] += 0.03 * line_sectors
        code, out, _ = run(report)
        self.assertEqual(code, 1)
        failed = failed_lines(out)
        self.assertEqual(len(failed), 2, out)  # the line, and its kernel
        where = source["lines"][store["line"]]
        self.assertIn(f"coalescing.cu:{where['line']}", failed[0])
        self.assertIn("global_sectors", failed[0])
        self.assertIn("FAIL gather_copy<StridedIndex>: 1 out of bounds", out)

    def test_a_share_off_by_more_than_five_points_fails(self):
        report = load_report()
        instructions = strided_source(report)["instructions"]
        total = sum(i["counters"].get("samples", 0) for i in instructions)
        hot = max(instructions, key=lambda i: i["counters"].get("samples", 0))
        hot["counters"]["samples"] += 0.5 * total
        code, out, _ = run(report)
        self.assertEqual(code, 1)
        self.assertTrue(any("sample share" in line for line in failed_lines(out)), out)

    def test_an_instruction_on_a_line_ncu_does_not_list_it_under_fails(self):
        report = load_report()
        source = strided_source(report)
        moved = source["instructions"][0]
        other = next(i for i, where in enumerate(source["lines"])
                     if where["line"] != source["lines"][moved["line"]]["line"])
        moved["line"] = other
        code, out, _ = run(report)
        self.assertEqual(code, 1)
        self.assertTrue(any(f"line of +0x{moved['offset']:x}" in line
                            for line in failed_lines(out)), out)

    def test_a_launch_whose_code_comes_from_two_files_is_read_whole(self):
        # ncu gives count_block_reduce's launch two blocks, one after the other: the atomic's
        # line in CUDA's header, then the kernel's own lines. Both are the first launch.
        kernel = next(iter(nsc.read_ncu(ATOMICS_PAGE).values()))
        self.assertEqual(kernel.files, {"device_atomic_functions.hpp", "atomics.cu"})
        files = {where[0] for lines in kernel.lines.values() for where in lines}
        self.assertEqual(files, kernel.files)
        with open(ATOMICS_REPORT) as f:
            code, out, _ = run(json.load(f), ATOMICS_PAGE)
        self.assertEqual(code, 0, out)
        self.assertIn("ncu source comparison: PASS (1 kernels, 112 instructions", out)

    def test_a_second_launch_is_not_read_into_the_first(self):
        with open(ATOMICS_PAGE) as f:
            once = f.read()
        with tempfile.TemporaryDirectory() as folder:
            page = os.path.join(folder, "page.csv")
            with open(page, "w") as f:
                f.write(once + once.replace('"0x', '"0x1'))  # the same launch again, elsewhere
            twice = next(iter(nsc.read_ncu(page).values()))
        first = next(iter(nsc.read_ncu(ATOMICS_PAGE).values()))
        self.assertEqual(twice.instructions, first.instructions)
        self.assertEqual(twice.lines, first.lines)

    def test_lines_ncu_files_under_another_file_match_by_number(self):
        # ncu files a CUB kernel's own lines under the agent's header and gives the kernel's
        # file no block: the same page with the strided kernel's file renamed.
        with open(NCU_PAGE) as f:
            page = f.read().replace('"File Path","labs/coalescing.cu"',
                                    '"File Path","include/agent.cuh"')
        code, out, _ = run(load_report(), page_text=page)
        self.assertEqual(code, 0, out)
        # Matched by number only where the file is missing: a moved instruction still fails.
        report = load_report()
        source = strided_source(report)
        moved = source["instructions"][0]
        moved["line"] = next(i for i, where in enumerate(source["lines"])
                             if where["line"] != source["lines"][moved["line"]]["line"])
        code, out, _ = run(report, page_text=page)
        self.assertEqual(code, 1, out)

    def test_a_few_samples_are_not_judged_on_their_share(self):
        self.assertEqual(nsc.share_bound(0.6, 0.5, 100000, 50000), nsc.SHARE_POINTS)
        self.assertGreater(nsc.share_bound(0.66, 0.5, 30, 20), 0.3)  # 3 standard errors

        def kernel(samples_by_offset, column):
            k = nsc.Kernel("k()")
            for offset, samples in samples_by_offset.items():
                k.instructions[offset] = {column: samples}
                k.lines[offset] = [("k.cu", 10 + offset)]
            return k

        # All of gpulab's 19 samples on one line, all of ncu's 10 on another: too few to judge.
        mine = kernel({0: 19, 16: 0}, "samples")
        theirs = kernel({0: 0, 16: 10}, nsc.NCU_SAMPLES)
        self.assertFalse([r for r in nsc.compare_kernel("k", mine, theirs)
                          if r[2] == "sample share"])
        # With 20 on a line, its share is judged, and so far apart it fails.
        mine = kernel({0: 20, 16: 0}, "samples")
        shares = [r for r in nsc.compare_kernel("k", mine, theirs) if r[2] == "sample share"]
        self.assertTrue(shares and not all(r[5] for r in shares), shares)

    def test_input_that_is_not_ncus_page_is_refused(self):
        with tempfile.TemporaryDirectory() as folder:
            bogus = os.path.join(folder, "bogus.csv")
            with open(bogus, "w") as f:
                f.write("a,b\n1,2\n")
            with redirect_stderr(io.StringIO()) as err:
                self.assertEqual(nsc.main([bogus, bogus]), 2)
            self.assertIn("ncu_source_compare", err.getvalue())

    def test_a_report_of_other_kernels_is_refused(self):
        report = copy.deepcopy(load_report())
        for variant in report["variants"]:
            for kernel in variant["kernels"]:
                kernel["function"] = "other_kernel(int)"
        code, _, err = run(report)
        self.assertEqual(code, 2)
        self.assertIn("no kernel of the report is on ncu's page", err)


if __name__ == "__main__":
    unittest.main()
