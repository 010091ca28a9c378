#!/bin/sh
# SPDX-License-Identifier: MIT
# Run every test (installing missing Debian packages): the Release build
# and a Debug build with warnings as errors, the tests, then the same
# tests under AddressSanitizer and UndefinedBehaviorSanitizer, then every
# reader's libFuzzer harness for 100,000 executions (scripts/fuzz.sh).
#   ./test.sh            all three
#   ./test.sh --fast     the Debug run only
#   ./test.sh --sanitize the sanitizer run only
#   ./test.sh --fuzz     the fuzzing only
set -eu
cd "$(dirname "$0")"
root=$(pwd)
sh scripts/deps.sh --test
jobs=$(nproc)
mode=${1:-all}
if [ "$mode" = all ] || [ "$mode" = --fast ]; then
  # the optimized build of ./build.sh, whose warnings differ at -O2
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DPARPLAN_TESTS=OFF \
    >/dev/null
  cmake --build build-release -j"$jobs" >/dev/null
  cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build build-test -j"$jobs" >/dev/null
  (cd build-test && ctest -j"$jobs" --output-on-failure)
fi
if [ "$mode" = all ] || [ "$mode" = --sanitize ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPARPLAN_SANITIZE=ON \
    -DPARPLAN_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$jobs" >/dev/null
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 \
    LSAN_OPTIONS=suppressions="$root/tests/lsan.supp" \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest -j"$jobs" --output-on-failure)
fi
if [ "$mode" = all ] || [ "$mode" = --fuzz ]; then
  sh scripts/deps.sh --fuzz # clang
  sh scripts/deps.sh --fuzz # its libFuzzer runtime, for that clang
  sh scripts/fuzz.sh 100000 300
fi
