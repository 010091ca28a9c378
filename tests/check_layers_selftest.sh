#!/bin/sh
# SPDX-License-Identifier: MIT
# Proves that tests/check_layers.py catches what it exists to catch: on a
# copy of the library's object tree it must pass untouched, and fail
# (exit 1, naming each) once a base file calls up into the search layer,
# two files call each other, or a header includes a higher layer's.
#   check_layers_selftest.sh PYTHON CHECKER SRC_DIR OBJ_DIR CC
# SRC_DIR holds src/LAYERS; OBJ_DIR is CMake's CMakeFiles/libparplan.dir/src.
set -eu
py=$1
checker=$2
src=$3
obj=$4
cc=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_layers_selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() {
  echo "check_layers_selftest: $*" >&2
  echo "--- checker output:" >&2
  cat "$tmp/out" >&2
  exit 1
}
expect() { # expect STATUS: run the checker on the copies
  rc=0
  "$py" "$checker" "$tmp/src" "$tmp/obj" >"$tmp/out" 2>&1 || rc=$?
  [ "$rc" = "$1" ] || fail "exit status $rc, expected $1"
}
says() { # says TEXT: the last run printed TEXT
  grep -F -q -- "$1" "$tmp/out" || fail "no line naming: $1"
}
compile() { # compile OBJECT: C from stdin
  mkdir -p "$(dirname "$tmp/obj/$1")"
  cat >"$tmp/probe.c"
  "$cc" -c -o "$tmp/obj/$1" "$tmp/probe.c"
}

[ -d "$obj/base" ] && [ -d "$obj/search" ] ||
  { echo "check_layers_selftest: no object tree at $obj" >&2; exit 2; }
cp -R "$obj" "$tmp/obj"
cp -R "$src" "$tmp/src"

# 1. The library as built keeps the rule.
expect 0
says "files keep the layer rule"

# 2. A base file calling the planner: a call up four layers.
compile base/upward_call.c.o <<'EOF'
int pp_plan_search(void);
int ppi_selftest_upward(void);
int ppi_selftest_upward(void) { return pp_plan_search(); }
EOF
expect 1
says "base/upward_call.c calls pp_plan_search of search/plan_search.c: layer 'base' may not call 'search'"

# 3. Two cluster files that call each other: no layer is crossed, but
# neither can be understood alone.
compile cluster/cycle_a.c.o <<'EOF'
int ppi_selftest_b(int);
int ppi_selftest_a(int);
int ppi_selftest_a(int n) { return n ? ppi_selftest_b(n - 1) : 0; }
EOF
compile cluster/cycle_b.c.o <<'EOF'
int ppi_selftest_a(int);
int ppi_selftest_b(int);
int ppi_selftest_b(int n) { return n ? ppi_selftest_a(n - 1) : 1; }
EOF
expect 1
says "layer 'base' may not call 'search'"
says "cycle of calls between cluster/cycle_a.c, cluster/cycle_b.c"

# 4. The cycle alone fails the check too.
rm "$tmp/obj/base/upward_call.c.o"
expect 1
says "cycle of calls between cluster/cycle_a.c, cluster/cycle_b.c"
if grep -F -q "may not call" "$tmp/out"; then
  fail "a layer violation reported where there is none"
fi

# 5. A cost file including the partitioners' header: it would see a
# higher layer's types, though no call crosses yet.
rm "$tmp/obj/cluster/cycle_a.c.o" "$tmp/obj/cluster/cycle_b.c.o"
printf '#include "part/part.h"\n' >"$tmp/src/cost/upward_include.h"
expect 1
says "cost/upward_include.h:1 includes part/part.h: layer 'cost' may not see 'part'"
rm "$tmp/src/cost/upward_include.h"
expect 0
echo "check_layers_selftest: the checker passes the library and catches an" \
  "upward call, a cycle and an upward include"
