#!/bin/sh
# SPDX-License-Identifier: MIT
# Record the outputs of the command lines in tests/golden/commands.txt:
# for each, its stdout, stderr, exit status and every file it wrote.
#   tests/golden.sh TOOL OUTDIR            record into OUTDIR
#   tests/golden.sh TOOL OUTDIR EXPECTED   record, then compare with EXPECTED
# Used to show that a refactoring changes no behaviour.
set -eu
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
here=$(cd "$(dirname "$0")" && pwd)
EX=$(cd "$here/../examples" && pwd)
P=$tool
export EX P
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
# Wall-clock seconds differ from run to run, and the examples' folder
# from clone to clone: mask them.  git keeps no empty folder: drop them.
find "$out" -type f ! -name cmd | while IFS= read -r f; do
  sed -E -i -e "s|$EX|\$EX|g" \
    -e 's/[0-9][0-9.e+-]* s($|[^A-Za-z])/<T> s\1/g' \
    -e 's/"seconds": [0-9.e+-]+/"seconds": <T>/g' \
    -e 's/^([a-z]+ +[0-9].* (yes|no) +[0-9.]+x +[0-9]+ +)[0-9.]+$/\1<T>/' \
    "$f"
done
find "$out" -type d -empty -delete
if [ $# -ge 3 ]; then
  diff -r "$3" "$out"
fi
