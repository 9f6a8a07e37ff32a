#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what is missing (Debian
# packages: cmake, bats, libopenblas-dev), builds, and runs CTest (C unit
# tests, the recording-fake forwarding tests, the BATS suites and the GPU
# tests, which report "skipped" with the reason where no GPU exists;
# GEMMSHIM_REQUIRE_GPU=1 makes a missing GPU a failure).
set -euo pipefail
cd "$(dirname "$0")"
build=${GEMMSHIM_BUILD_DIR:-build}

. tools/ensure-deps.sh

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure
# CTest lists skipped tests without their output: say why they skipped.
if grep -q '^SKIP' Testing/Temporary/LastTest.log 2>/dev/null; then
  echo "Skipped tests said:"
  grep -h '^SKIP' Testing/Temporary/LastTest.log | sort -u | sed 's/^/  /'
fi
