#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what is missing (Debian
# packages: cmake, bats, libopenblas-dev), builds, and runs CTest (C unit
# tests, the recording-fake forwarding tests, the BATS suites and the GPU
# tests, which report "skipped" with the reason where no GPU exists;
# GEMMSHIM_REQUIRE_GPU=1 makes a missing GPU a failure).
set -euo pipefail
cd "$(dirname "$0")"
build=${GEMMSHIM_BUILD_DIR:-build}

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v bats >/dev/null || missing+=(bats)
dpkg -s libopenblas-dev >/dev/null 2>&1 || missing+=(libopenblas-dev)
command -v readelf >/dev/null || missing+=(binutils)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure
