#!/bin/sh
# CUDA compiler launcher for the labs: ptxas_log.sh <compile command...>
#
# Runs the compile command (the compiler, or another launcher such as ccache followed by it) and
# keeps what `ptxas -v` says about each kernel in <object>.ptxas, beside the object, where
# cmake/ptxas_table.cmake reads it. Those lines would otherwise bury the build log. Everything
# else the compiler writes (warnings, errors) passes through, and the exit status is the
# compiler's.

obj=
prev=
for arg in "$@"; do
  case $prev in -o | --output-file) obj=$arg ;; esac
  prev=$arg
done
# Not a compile to an object: nothing to keep.
[ -n "$obj" ] || exec "$@"

err="$obj.ptxas.stderr"
"$@" 2>"$err"
status=$?
# ptxas -v: "ptxas info    : ..." lines and the "N bytes stack frame, ..." lines indented under
# them. Its warnings and errors are not "info" and pass through.
pattern='^ptxas info|^ +[0-9]+ bytes stack frame'
grep -E "$pattern" "$err" >"$obj.ptxas"
grep -v -E "$pattern" "$err" >&2
rm -f "$err"
exit "$status"
