#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz; the `sanitize` preset: clang, ASan, UBSan, in
# build-sanitize/), makes their seed corpora from the reports in tests/fixtures, and runs each
# target for SECONDS (default 60), or for N executions with --runs N (the offline runs of a
# million). Stops at the first crash, with the input that caused it in
# build-sanitize/fuzz/crashes/ (rerun one: build-sanitize/tests/fuzz/gpulab_fuzz_TARGET FILE).
# What a run adds to the corpora stays in build-sanitize/fuzz/corpus/ for the next run.
# The targets write each input to a file under TMPDIR (commands read reports from files) and
# report_loader saves each report it loads (fsync, rename): on a disk, milliseconds an execution,
# more than the rest of report_loader's. They run with TMPDIR=/dev/shm where it is writable.
# With --runs, allocations record no stack (ASAN_OPTIONS=malloc_context_size=0, up to a third
# of an execution's time): a crash or leak report then says where it happened but not where
# the memory was allocated or freed; rerunning the input prints that.
#   bash scripts/fuzz.sh [SECONDS | --runs N] [TARGET...]
# TARGET: report_loader, diagnose_report, compare, cli_params, renderers (default: all five, in
# turn). Each runs with a memory limit (-rss_limit_mb=1024): a renderer or chart that grows without
# bound is a crash, as an input that takes longer than -timeout is.
# Extra cmake arguments go in GPULAB_CMAKE_ARGS (e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
limit=(-max_total_time="${1:-60}")
what="${1:-60} s"
if [ "${1:-}" = --runs ]; then
  limit=(-runs="$2")
  what="at most $2 executions"
  export ASAN_OPTIONS="malloc_context_size=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"  # the caller's own come after it, and win
  shift 2
else
  shift || true
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(report_loader diagnose_report compare cli_params renderers)

build=build-sanitize
work=$build/fuzz
# shellcheck disable=SC2086  # GPULAB_CMAKE_ARGS is a list of words
cmake --preset sanitize ${GPULAB_CMAKE_ARGS:-} >/dev/null
cmake --build $build --target "${targets[@]/#/gpulab_fuzz_}"

fixtures=(tests/fixtures/*.json tests/fixtures/labs/*.json tests/fixtures/ncu/*.json)
nul() { printf '\0'; }

# Seeds, made afresh from the fixtures: each report cut down to its first and last variants,
# and to each of its variants alone; in each variant its first two kernels and the first 16
# activities of its timeline. Every field and every variant's shape is in the corpus, and the
# inputs stay small: an execution's cost grows with the report (JSON read, diagnosed and printed
# under the sanitizers), and a whole fixture (up to 400 kB: 200 kernel launches) takes many
# times as long as one variant while it only repeats the same structure.
small='.variants |= map(.kernels |= .[:2] | if .timeline then .timeline.activities |= .[:16] else . end)'
make_seeds() {
  local s=$work/seeds f name n i line
  rm -rf "$s"
  mkdir -p "$s"/{reports,report_loader,diagnose_report,compare,cli_params,renderers}
  for f in "${fixtures[@]}"; do
    name=$(basename "$(dirname "$f")")-$(basename "$f" .json)
    jq -c "$small"' | .variants |= (if length > 1 then [first, last] else . end)' "$f" \
        >"$s/reports/$name.json"
    i=0
    jq -c "$small"' | . as $r | range(.variants | length) as $i | $r | .variants |= [.[$i]]' "$f" |
        while IFS= read -r line; do
          printf '%s\n' "$line" >"$s/reports/$name.v$i.json"
          i=$((i + 1))
        done
  done
  cp "$s"/reports/*.json "$s/report_loader/"
  cp "$s"/reports/*.json "$s/renderers/"

  # diagnose --report: a one-variant report, its variant and first kernel, and a threshold of
  # those the fixtures' diagnoses name.
  local r
  for r in "$s"/reports/*.v*.json; do
    { cat "$r"; nul; jq -r '"v " + .variants[0].name,
        "k " + (.variants[0].kernels[0].name // "timeline"),
        "t " + ([.. | objects | .threshold? | strings | select(. != "")] | first // "") + "=0.5"' "$r"
    } >"$s/diagnose_report/$(basename "$r")"
  done

  # compare: a lab's first variant against each other one as two reports, its first and last
  # variants as two variants of one report, and the transpose fixtures of two sizes.
  local names base
  for f in "${fixtures[@]}"; do
    name=$(basename "$(dirname "$f")")-$(basename "$f" .json)
    mapfile -t names < <(jq -r '.variants[].name' "$f")
    n=${#names[@]}
    for ((i = 1; i < n; i++)); do
      { cat "$s/reports/$name.v0.json"; nul; cat "$s/reports/$name.v$i.json"; nul
        printf 'r 5\nm dram_bytes,sectors_per_request\n'; } >"$s/compare/$name.v0-v$i"
    done
    if [ "$n" -gt 1 ]; then
      { cat "$s/reports/$name.json"; nul; nul; printf 'V %s,%s\n' "${names[0]}" "${names[n - 1]}"
      } >"$s/compare/$name.variants"
    fi
  done
  base=$s/reports/fixtures-transpose
  { cat "$base"_h200.json; nul; cat "$base"_4096_h200.json; nul; printf 'r 1\n'; } \
      >"$s/compare/transpose-sizes"

  # run: each lab's name, every variant, and its recorded parameters.
  for f in tests/fixtures/labs/*.json; do
    jq -r '.lab.name, ("v " + ([.variants[].name] | join(","))),
           (.params | to_entries[] | "p \(.key)=\(.value)"), "t shared_banks.excess_per_inst=0.2",
           "r 3", "w 1", "m basic"' "$f" >"$s/cli_params/$(basename "$f" .json)"
  done
}

# Dictionaries: the words the inputs are made of (report keys; lab, variant, parameter and
# threshold names), for the fuzzer to splice in.
make_dictionaries() {
  local d=$work/dict
  mkdir -p "$d"
  jq -r '[paths | .[] | strings] | .[]' "${fixtures[@]}" | sort -u |
      jq -R '"\"" + . + "\""' >"$d/report.dict"
  { jq -r '.lab.name, .variants[].name, (.params | keys[])' tests/fixtures/labs/*.json
    jq -r '.. | objects | .threshold? | strings | select(. != "")' tests/fixtures/labs/*.json
  } | sort -u | jq -R . >"$d/cli_params.dict"
}

make_seeds
make_dictionaries
mkdir -p "$work/crashes"
tmp=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
summary=()
status=0
for t in "${targets[@]}"; do
  dict=$work/dict/report.dict
  [ "$t" = cli_params ] && dict=$work/dict/cli_params.dict
  mkdir -p "$work/corpus/$t"
  log=$work/$t.log
  echo "== fuzz $t: $what"
  start=$SECONDS
  # -timeout: an input that takes this long (seconds) is reported as a hang.
  if TMPDIR=$tmp "$build/tests/fuzz/gpulab_fuzz_$t" "${limit[@]}" -timeout=30 -rss_limit_mb=1024 \
      -dict="$dict" -artifact_prefix="$work/crashes/$t-" -print_final_stats=1 \
      "$work/corpus/$t" "$work/seeds/$t" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log)"
    status=1
    tail -40 "$log"
  fi
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  rate=$(grep -oE 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  summary+=("fuzz $t: $result, $runs executions in $((SECONDS - start)) s ($rate/s)")
done
printf '%s\n' "${summary[@]}"
exit $status
