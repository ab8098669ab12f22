#!/usr/bin/env python3
"""Installs a build into a temporary prefix and checks what lands there.

    python3 scripts/check_install.py BUILD_DIR DOCDIR MANDIR

DOCDIR and MANDIR are the install directories relative to the prefix (CMake's
CMAKE_INSTALL_DOCDIR and CMAKE_INSTALL_MANDIR). Checks: the binary; the bash and zsh completions;
the man page in MANDIR/man1, gzip-compressed as Debian has them, the installed binary's own
`gpulab man` and, where groff is installed, roff that groff reads without a warning; README.md
beside docs/ in DOCDIR, every relative link between them resolving (scripts/check_doc_links.py).
Exits 1 on the first problem with one line saying what it is, 0 when all is well.
"""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_doc_links  # noqa: E402


def fail(message):
    print(f"check_install: {message}", file=sys.stderr)
    sys.exit(1)


def main(build, docdir, mandir):
    prefix = tempfile.mkdtemp(prefix="gpulab-install-")
    try:
        done = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                              capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"cmake --install failed: {done.stderr.strip() or done.stdout.strip()}")
        binary = os.path.join(prefix, "bin", "gpulab")
        man_page = os.path.join(prefix, mandir, "man1", "gpulab.1.gz")
        docs = os.path.join(prefix, docdir)
        expected = [binary, man_page, os.path.join(docs, "README.md"),
                    os.path.join(prefix, "share", "bash-completion", "completions", "gpulab"),
                    os.path.join(prefix, "share", "zsh", "site-functions", "_gpulab"),
                    os.path.join(prefix, "lib", "gpulab", "libgpulab_inject.so")]
        source_docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")
        expected += [os.path.join(docs, "docs", name) for name in sorted(os.listdir(source_docs))]
        for path in expected:
            if not os.path.isfile(path):
                fail(f"{os.path.relpath(path, prefix)} was not installed")

        # The installed binary finds its injection library (../lib/gpulab) by itself.
        profiled = subprocess.run([binary, "profile", "--", "true"], capture_output=True, text=True,
                                  env={k: v for k, v in os.environ.items()
                                       if k != "GPULAB_INJECTION_LIBRARY"})
        if profiled.returncode != 0:
            fail(f"the installed gpulab profile failed: {profiled.stderr.strip()}")

        with gzip.open(man_page, "rt", encoding="utf-8") as f:
            installed = f.read()
        printed = subprocess.run([binary, "man"], capture_output=True, text=True)
        if printed.returncode != 0 or printed.stdout != installed:
            fail(f"{os.path.relpath(man_page, prefix)} is not what the installed `gpulab man` "
                 "prints: the build's man page is stale")
        if shutil.which("groff"):
            lint = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=installed,
                                  capture_output=True, text=True)
            if lint.returncode != 0 or lint.stderr.strip():
                fail(f"groff warns about gpulab.1: {lint.stderr.strip().splitlines()[0]}")

        broken = [f"{os.path.relpath(path, prefix)}:{number}: {target} ({why})"
                  for path in check_doc_links.markdown_files([docs])
                  for number, target, why in check_doc_links.broken_links(path)]
        if broken:
            fail(f"{len(broken)} broken link(s) in the installed docs, first {broken[0]}")
        print(f"check_install: {len(expected)} files installed, man page current, links resolve")
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
