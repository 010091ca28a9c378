#!/bin/sh
# SPDX-License-Identifier: MIT
# Record the outputs of the command lines in tests/golden/commands.txt:
# for each, its stdout, stderr, exit status and every file it wrote.
#   tests/golden.sh TOOL OUTDIR            record into OUTDIR
#   tests/golden.sh TOOL OUTDIR EXPECTED   record, then compare with EXPECTED
# Used to show that a refactoring changes no behaviour.  The examples'
# absolute path is written as <EX> (outputs name their input files), and
# command folders that stay empty are removed (git keeps no empty folder),
# so a recording compares equal from any checkout.
set -eu
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
here=$(cd "$(dirname "$0")" && pwd)
EX=$(cd "$here/../examples" && pwd)
P=$tool
export EX P
# Under LeakSanitizer (./test.sh's sanitizer run) the tool would append
# the statistics of the suppressions it used to stderr.
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}print_suppressions=0"
export LSAN_OPTIONS
rm -rf "$out"
mkdir -p "$out"
n=0
grep -v '^#' "$here/golden/commands.txt" | while IFS= read -r line; do
  n=$((n + 1))
  d=$(printf '%s/%02d' "$out" "$n")
  mkdir -p "$d/files"
  printf '%s\n' "$line" >"$d/cmd"
  rc=0
  (cd "$d/files" && eval "\"\$P\" $line") >"$d/stdout" 2>"$d/stderr" </dev/null || rc=$?
  echo "$rc" >"$d/rc"
done
find "$out" -type d -empty -delete
# Wall-clock seconds differ from run to run: mask them; and the checkout.
exre=$(printf '%s' "$EX" | sed 's/[][\\.*^$|+?(){}]/\\&/g')
find "$out" -type f ! -name cmd | while IFS= read -r f; do
  sed -E -i \
    -e "s|$exre|<EX>|g" \
    -e 's/[0-9][0-9.e+-]* s($|[^A-Za-z])/<T> s\1/g' \
    -e 's/"seconds": [0-9.e+-]+/"seconds": <T>/g' \
    -e 's/^([a-z]+ +[0-9].* (yes|no) +[0-9.]+x +[0-9]+ +)[0-9.]+$/\1<T>/' \
    "$f"
done
if [ $# -ge 3 ]; then
  diff -r "$3" "$out"
fi
