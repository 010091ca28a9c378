#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the libFuzzer harnesses (tests/fuzz/fuzz_reader.c, one per
# reader, and tests/fuzz/fuzz_options.c, the command line) with clang,
# AddressSanitizer and UBSan, and run each on its seed corpus
# (a folder per reader under tests/fuzz/corpus/) with the formats' dictionary: RUNS executions
# (default 100000) or SECS seconds (default 300), whichever comes first,
# seed 1, 10 s per input at most, 2 GiB at most.  Prints one line per
# harness: executions, executions per second, coverage (libFuzzer's cov:
# edges) and corpus growth; exits 1 on any finding (crash, sanitizer
# report, leak, timeout, out of memory), whose log and input stay in
# build-fuzz/findings/.  New inputs go to a scratch folder, not the
# repository's corpus.
#   scripts/fuzz.sh [RUNS] [SECS]
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-100000}
SECS=${2:-300}
READERS="model_json pipedream cluster_json nvsmi nccl_xml rocm_smi nccl_tests
plan_json calibration log stage_graph onnx runs spec options"
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz.sh: needs clang (Debian: apt-get install clang)" >&2
  exit 2
fi
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DPARPLAN_TESTS=OFF -DPARPLAN_BENCH=OFF -DPARPLAN_FUZZ=ON >/dev/null
targets=""
for r in $READERS; do targets="$targets fuzz_$r"; done
# shellcheck disable=SC2086
cmake --build build-fuzz -j"$(nproc)" --target $targets >/dev/null
mkdir -p build-fuzz/findings
status=0
printf '%-14s %10s %8s %6s %8s\n' harness runs exec/s cov new
for r in $READERS; do
  case $r in
    model_json|cluster_json|plan_json|calibration|stage_graph|runs)
      dict=tests/fuzz/json.dict ;;
    onnx) dict=tests/fuzz/onnx.dict ;;
    spec) dict=tests/fuzz/spec.dict ;;
    options) dict=tests/fuzz/options.dict ;;
    *) dict=tests/fuzz/text.dict ;;
  esac
  # the option parser prints help and usage: dropped (libFuzzer keeps
  # its own reports)
  quiet=""
  [ "$r" = options ] && quiet="-close_fd_mask=3"
  work=$(mktemp -d)
  log=build-fuzz/findings/$r.log
  if (cd build-fuzz/findings &&
      # shellcheck disable=SC2086
      "../fuzz_$r" $quiet -seed=1 -runs="$RUNS" -max_total_time="$SECS" \
        -timeout=10 -rss_limit_mb=2048 -dict="../../$dict" \
        -print_final_stats=1 -artifact_prefix="$r-" \
        "$work" "../../tests/fuzz/corpus/$r") >"$log" 2>&1; then
    :
  else
    status=1
    echo "fuzz.sh: $r: a finding, see $log" >&2
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | sed 's/cov: //')
  new=$(sed -n 's/^stat::new_units_added: *//p' "$log")
  printf '%-14s %10s %8s %6s %8s\n' "$r" "${runs:-?}" "${eps:-?}" \
    "${cov:-?}" "${new:-?}"
  rm -rf "$work"
done
exit $status
