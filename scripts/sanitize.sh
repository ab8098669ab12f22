#!/usr/bin/env bash
# Builds gpulab with AddressSanitizer and UndefinedBehaviorSanitizer (the `sanitize` preset of
# CMakePresets.json: clang, build-sanitize/, the fuzz targets too) and runs every CPU test in it.
# A sanitizer report ends the process that made it, so it fails the test.
#   bash scripts/sanitize.sh [extra cmake arguments, e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
cmake --preset sanitize "$@" >/dev/null
cmake --build build-sanitize
# halt_on_error is the default without -fsanitize-recover, said here for the record. The labs
# register themselves from static initializers: check their order too. intercept_tls_get_addr=0:
# the leak checker's record of dynamic TLS blocks goes stale for the dlopen'ed libcupti, and
# scanning it at exit crashed the checker itself ("Tracer caught signal 11" after a DTLS block at
# a bogus address, depending on the process's memory layout: under ctest, not from a shell).
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:intercept_tls_get_addr=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir build-sanitize -L cpu --output-on-failure
