#!/bin/sh
# SPDX-License-Identifier: MIT
# Build parplan (installing missing Debian packages) and run the main job on
# the built-in default.  Arguments are passed to the tool:
#   ./build.sh                      the default
#   ./build.sh topo hier:4x8        any other command
set -eu
cd "$(dirname "$0")"
sh scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPARPLAN_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec ./build/parplan "$@"
