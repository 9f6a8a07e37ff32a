#!/usr/bin/env bash
# Installs what building and testing need and this machine lacks (Debian
# packages; the CUDA toolkit is expected at /usr/local/cuda). Sourced by
# run.sh and test.sh.
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v bats >/dev/null || missing+=(bats)
dpkg -s libopenblas-dev >/dev/null 2>&1 || missing+=(libopenblas-dev)
command -v readelf >/dev/null || missing+=(binutils)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# the plot tools (bench/plot.py, gemmshim plot) and their test
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "installing matplotlib (pip)"
  python3 -m pip install -q matplotlib >/dev/null 2>&1 || echo "ensure-deps: pip install matplotlib failed"
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
