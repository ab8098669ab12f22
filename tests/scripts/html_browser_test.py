#!/usr/bin/env python3
"""The HTML report in a real browser: `gpulab report` renders every lab fixture recorded on the
H200 (and a hostile report) to one page each, headless Chromium loads each page from disk, and
the test checks the DOM Chromium built (the sections, one roofline point per variant with FLOPs,
a Gantt chart per traced variant, no element injected by report strings) and that a screenshot
of the page is not blank. And the source view of a kernel with per-instruction data (the
hand-made fixture of tests/fixtures/source): its hot line, the one labs/transpose.cu marks, and
the finding that names it. And each sweep of tests/fixtures/sweeps: its plots, a point per
variant and value. And, given the tests' stand-in program, the page of a job's report:
10,000 profiled launches (`gpulab profile` of the stand-in repeating the PyTorch operators'
counters), which must stay under 1 MB and load within a second of a lab's page.

usage: html_browser_test.py GPULAB_BINARY FIXTURES_DIR [STAND_IN]
Exits 77 (ctest's skip code) only when no Chromium is installed.
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(exe, *args):
    cmd = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--hide-scrollbars", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"chromium failed ({done.returncode}): {done.stderr[-500:]}")
    return done.stdout


def png_is_blank(path):
    """True when the decoded scanlines of a PNG hold almost a single byte value."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    values = {}
    for b in raw[::7]:
        values[b] = values.get(b, 0) + 1
    common = max(values.values())
    return len(values) < 16 or common > 0.995 * sum(values.values())


def expected(report):
    points = traced = 0
    for v in report["variants"]:
        work = v.get("work") or report.get("work", {})
        if (v.get("status") == "ok" and v.get("check", {}).get("status") != "failed"
                and work.get("flops", 0) > 0 and v.get("timing", {}).get("median", 0) > 0):
            points += 1
        traced += 1 if v.get("timeline") and v["timeline"].get("activities") else 0
    return points, traced


def hostile_report(path, template):
    with open(template) as f:
        r = json.load(f)
    r["lab"]["name"] = "<script>document.title='pwned'</script>"
    r["variants"][0]["name"] = "<img src=x onerror=alert(1)>"
    for k in r["variants"][0]["kernels"]:
        k["name"] = "\"><svg onload=alert(1)>"
    with open(path, "w") as f:
        json.dump(r, f)


def marked_line(source):
    """The line after the first `// PROBLEM:` comment of `source`."""
    with open(source) as f:
        for n, text in enumerate(f, start=1):
            if "// PROBLEM:" in text:
                return n + 1
    raise AssertionError("no marker in " + source)


def source_view_problems(gpulab, exe, fixtures, tmp):
    report = os.path.join(fixtures, "source", "transpose_naive.hand-made.json")
    page = os.path.join(tmp, "source.html")
    subprocess.run([gpulab, "report", report, "-o", page], check=True, capture_output=True)
    dom = chromium(exe, "--dump-dom", "file://" + page)
    where = f"labs/transpose.cu:{marked_line('labs/transpose.cu')}"
    problems = []
    if dom.count('<figure class="source">') != 1:
        problems.append("no source view")
    hot = [part.split("</span>")[0] for part in dom.split('<span class="hot">')[1:]]
    if not hot or where not in hot[0]:
        problems.append(f"the first hot line is not {where}: {hot[:1]}")
    if not any("if (row &lt; rows) out[" in line for line in hot):
        problems.append("the marked line's code is not marked hot")
    if f"at <code>{where}</code>: 100.0% of the global sectors beyond 4 per request" not in dom:
        problems.append("the finding does not name its line")
    shot = os.path.join(tmp, "source.png")
    chromium(exe, "--window-size=1200,1600", "--screenshot=" + shot, "file://" + page)
    if png_is_blank(shot):
        problems.append("blank screenshot")
    print(f"source view: {len(hot)} hot lines: {'ok' if not problems else 'FAIL ' + '; '.join(problems)}")
    return problems


def sweep_page_problems(gpulab, exe, fixtures, tmp):
    """Every sweep fixture's plots: a point per variant and axis value on each chart (time, and
    bandwidth where the lab models bytes), the copy roof, and a picture that is not blank."""
    problems = []
    for path in sorted(glob.glob(os.path.join(fixtures, "sweeps", "*.json"))):
        name = os.path.basename(path)[:-5]
        page = os.path.join(tmp, name + ".html")
        subprocess.run([gpulab, "report", path, "-o", page], check=True, capture_output=True)
        dom = chromium(exe, "--dump-dom", "file://" + page)
        with open(path) as f:
            sweep = json.load(f)
        variants = len(sweep["points"][0]["report"]["variants"])
        charts = 1 + any(v["effective_bandwidth"] > 0 for p in sweep["points"]
                         for v in p["report"]["variants"])
        expected_points = len(sweep["points"]) * variants * charts * (len(sweep["axes"]) if not sweep["zip"] else 1)
        got = dom.count('data-kind="sweep-point"')
        if got != expected_points:
            problems.append(f"{name}: {got} plotted points, expected {expected_points}")
        if charts > 1 and "copy roof" not in dom:
            problems.append(f"{name}: no copy roof")
        if "<script" in dom:
            problems.append(f"{name}: a report string became markup")
        shot = os.path.join(tmp, name + ".png")
        chromium(exe, "--window-size=1000,1400", "--screenshot=" + shot, "file://" + page)
        if png_is_blank(shot):
            problems.append(f"{name}: blank screenshot")
        print(f"sweep {name}: {got} plotted points: {'ok' if not problems else 'FAIL'}")
    return problems


def job_page_problems(gpulab, stand_in, exe, fixtures, tmp):
    """The page of a profiled job of 10,000 launches: small, quick to load, one table of the
    longest launches per function instead of a block per launch."""
    report, page = os.path.join(tmp, "job.json"), os.path.join(tmp, "job.html")
    subprocess.run([gpulab, "profile", "--metrics", "basic", "--launch-count", "10000",
                    "--diagnose", "--json", report, "--", stand_in, "--launches", "10000",
                    "--counters-from", os.path.join(fixtures, "outside", "torch_ops.json")],
                   check=True, capture_output=True, env={**os.environ, "TMPDIR": tmp})
    subprocess.run([gpulab, "report", report, "-o", page], check=True, capture_output=True)
    small = os.path.join(tmp, "transpose.html")

    def load_seconds(path):
        begin = time.monotonic()
        dom = chromium(exe, "--dump-dom", "file://" + path)
        return time.monotonic() - begin, dom

    small_seconds, _ = load_seconds(small)
    seconds, dom = load_seconds(page)
    problems = []
    size = os.path.getsize(page)
    if size > 1_000_000:
        problems.append(f"{size} bytes")
    if seconds > small_seconds + 1:
        problems.append(f"{seconds:.2f} s to load, {small_seconds:.2f} s for a lab's page")
    with open(report) as f:
        functions = sum(1 for v in json.load(f)["variants"]
                        if v.get("launches", {}).get("count", 0) > 8)
    tables = dom.count('<table class="launches">')
    if tables != functions:
        problems.append(f"{tables} tables of the longest launches, expected {functions}")
    print(f"job of 10,000 launches: {size // 1024} KB page, loaded in {seconds:.2f} s "
          f"({small_seconds:.2f} s for transpose's), {tables} tables of the longest launches: "
          f"{'ok' if not problems else 'FAIL ' + '; '.join(problems)}")
    return problems


def main():
    gpulab, fixtures = sys.argv[1], sys.argv[2]
    stand_in = sys.argv[3] if len(sys.argv) > 3 else None
    exe = browser()
    if not exe:
        print("SKIPPED: no chromium installed (apt-get install chromium)")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        reports = sorted(glob.glob(os.path.join(fixtures, "labs", "*.json")))
        hostile = os.path.join(tmp, "hostile.json")
        hostile_report(hostile, os.path.join(fixtures, "labs", "transpose.json"))
        for path in reports + [hostile]:
            name = os.path.basename(path)[:-5]
            page = os.path.join(tmp, name + ".html")
            subprocess.run([gpulab, "report", path, "-o", page], check=True,
                           capture_output=True)
            dom = chromium(exe, "--dump-dom", "file://" + page)
            with open(path) as f:
                report = json.load(f)
            points, traced = expected(report)
            problems = []
            got_points = dom.count('data-kind="roofline-point"')
            got_gantts = dom.count('<figure class="gantt">')
            if dom.count('<section class="lab"') != 1:
                problems.append("no lab section")
            if got_points != points:
                problems.append(f"{got_points} roofline points, expected {points}")
            if got_gantts != traced:
                problems.append(f"{got_gantts} Gantt charts, expected {traced}")
            if "<script" in dom or "<img" in dom or "<svg onload" in dom:
                problems.append("a report string became markup")
            shot = os.path.join(tmp, name + ".png")
            chromium(exe, "--window-size=1200,1600", "--screenshot=" + shot, "file://" + page)
            if png_is_blank(shot):
                problems.append("blank screenshot")
            status = "ok" if not problems else "FAIL " + "; ".join(problems)
            print(f"{name}: {points} roofline points, {traced} Gantt charts, "
                  f"{os.path.getsize(page) // 1024} KB page, {os.path.getsize(shot) // 1024} KB "
                  f"screenshot: {status}")
            if problems:
                failures.append(name)
        if source_view_problems(gpulab, exe, fixtures, tmp):
            failures.append("source view")
        if sweep_page_problems(gpulab, exe, fixtures, tmp):
            failures.append("sweeps")
        if stand_in and job_page_problems(gpulab, stand_in, exe, fixtures, tmp):
            failures.append("job")
        all_page = os.path.join(tmp, "all.html")
        subprocess.run([gpulab, "report", *reports, "-o", all_page], check=True,
                       capture_output=True)
        dom = chromium(exe, "--dump-dom", "file://" + all_page)
        sections = dom.count('<section class="lab"')
        print(f"all labs on one page: {sections} sections")
        if sections != len(reports):
            failures.append("all")
    print(f"browser check: {'PASS' if not failures else 'FAIL ' + ', '.join(failures)} "
          f"({len(reports) + 1} pages)")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
