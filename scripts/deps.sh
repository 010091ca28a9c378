#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages parplan needs to build and test, when they are
# missing.  As root it runs apt-get itself; otherwise it prints the exact
# command to run and fails.  With --test it also installs what only the
# tests need (python3 for the export checks, python3-onnx to check the
# ONNX reader against the onnx library, python3-pip and python3-setuptools
# to install the Python package, chromium for the report, python3-torch and
# python3-torchvision for the profiler's tests).
set -eu
PKGS="gcc make libc6-dev cmake pkg-config libjansson-dev libcmocka-dev
coinor-libcbc-dev libscotch-dev libprotobuf-c-dev protobuf-c-compiler
libonnx-dev libcairo2-dev libexpat1-dev"
if [ "${1:-}" = --test ]; then
  PKGS="$PKGS python3 python3-onnx python3-pip python3-setuptools chromium
fonts-dejavu-core python3-torch python3-torchvision"
fi
# --fuzz: clang and its libFuzzer runtime (libclang-rt-N-dev, only
# recommended by clang, for the N Debian's clang is), for scripts/fuzz.sh
if [ "${1:-}" = --fuzz ]; then
  PKGS="clang"
  if command -v clang >/dev/null 2>&1; then
    v=$(clang --version | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p')
    PKGS="$PKGS libclang-rt-$v-dev"
  fi
fi
missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "parplan: installing Debian packages:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >&2
else
  echo "parplan: missing Debian packages:$missing" >&2
  echo "run:  sudo apt-get install -y$missing" >&2
  exit 1
fi
