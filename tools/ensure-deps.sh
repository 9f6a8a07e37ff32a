#!/usr/bin/env bash
# Installs what building and testing need and this machine lacks (Debian
# packages via apt-get, as root or through sudo; the CUDA toolkit is expected
# at /usr/local/cuda), saying what and why. Sourced by run.sh and test.sh
# (". tools/ensure-deps.sh": returns non-zero, with one line naming the
# packages, where it cannot install what is missing); can be run on its own.
# Nothing is pip-installed: matplotlib (plots only) comes from Debian's
# python3-matplotlib where python3 is Debian's, else plots are skipped.

gs_ensure_deps() {
  local need=() why=() optional=() why_optional=()
  # package needed-for
  gs_need() { need+=("$1"); why+=("$2"); }
  # package wanted-for: installed where possible, never a failure
  gs_want() { optional+=("$1"); why_optional+=("$2"); }

  command -v cmake >/dev/null || gs_need cmake "configuring and building (CMake)"
  command -v bats >/dev/null || gs_need bats "the shell-level test suites (tests/bats)"
  dpkg -s libopenblas-dev >/dev/null 2>&1 ||
    gs_need libopenblas-dev "the fp64 host reference of the GPU tests and sample_app (static OpenBLAS)"
  command -v readelf >/dev/null || gs_need binutils "readelf, used by the BATS suites"
  command -v pkg-config >/dev/null || gs_need pkg-config "the installed-package test (gemmshim.pc)"
  command -v ccache >/dev/null ||
    gs_want ccache "the compiler cache: a rebuild after a change or a clean compiles only what changed"
  command -v python3 >/dev/null ||
    gs_need python3 "bench/table_from_csv.py (routing tables, gemmshim tune) and its tests"
  # the libFuzzer harness: clang and its fuzzer runtime (Debian: libclang-rt-N-dev)
  if ! command -v clang >/dev/null; then
    gs_need clang "the libFuzzer harness (clang -fsanitize=fuzzer)"
    gs_need libclang-rt-dev "the libFuzzer runtime (libclang_rt.fuzzer) for clang"
  elif [ ! -f "$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ]; then
    gs_need "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev" \
      "the libFuzzer runtime (libclang_rt.fuzzer) for $(command -v clang)"
  fi
  # matplotlib: optional (gemmshim plot, bench/plot.py and their test)
  local py_is_debian=0
  if command -v python3 >/dev/null &&
     [ "$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null)" = /usr ]; then
    py_is_debian=1
  fi
  if ! command -v python3 >/dev/null || ! python3 -c 'import matplotlib' 2>/dev/null; then
    if [ $py_is_debian = 1 ] || ! command -v python3 >/dev/null; then
      gs_want python3-matplotlib "gemmshim plot, bench/plot.py and their test"
    else
      echo "ensure-deps: matplotlib not found for $(command -v python3): plots are skipped" \
           "(pip install matplotlib, or apt-get install python3-matplotlib for Debian's python3)"
    fi
  fi

  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  command -v nvcc >/dev/null ||
    echo "ensure-deps: nvcc not found (on PATH or /usr/local/cuda/bin): CMake will look for the CUDA toolkit itself"

  [ ${#need[@]} -gt 0 ] || [ ${#optional[@]} -gt 0 ] || return 0

  local sudo="" can=1
  if ! command -v apt-get >/dev/null; then
    can=0; local reason="no apt-get on this machine"
  elif [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
      sudo=sudo
    else
      can=0; local reason="not root and no usable sudo"
    fi
  fi
  if [ $can = 0 ]; then
    local j
    for j in "${!optional[@]}"; do
      echo "ensure-deps: ${optional[$j]} not installed (${reason}): without it, no ${why_optional[$j]}"
    done
    [ ${#need[@]} -gt 0 ] || return 0
    echo "ensure-deps: cannot install (${reason}): install ${need[*]} and run again" >&2
    return 1
  fi

  local i
  for i in "${!need[@]}"; do
    echo "ensure-deps: installing ${need[$i]} -> needed for ${why[$i]}"
  done
  for i in "${!optional[@]}"; do
    echo "ensure-deps: installing ${optional[$i]} -> for ${why_optional[$i]} (optional)"
  done
  local log; log=$(mktemp "${TMPDIR:-/tmp}/gemmshim-apt.XXXXXX") || return 1
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get update -qq >"$log" 2>&1 ||
     ! $sudo apt-get install -y -qq "${need[@]}" "${optional[@]}" >>"$log" 2>&1; then
    tail -5 "$log" | sed 's/^/  apt-get: /' >&2
    if [ ${#need[@]} -gt 0 ]; then
      echo "ensure-deps: apt-get install failed (full log: $log): install ${need[*]} and run again" >&2
      return 1
    fi
    echo "ensure-deps: ${optional[*]} could not be installed (log: $log): going on without"
    return 0
  fi
  rm -f "$log"
  if [[ " ${optional[*]} " == *" python3-matplotlib "* ]] && ! python3 -c 'import matplotlib' 2>/dev/null; then
    echo "ensure-deps: matplotlib still not found for $(command -v python3): plots are skipped (pip install matplotlib)"
  fi
  return 0
}

# sourced: return the status; run: exit with it
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  gs_ensure_deps || return 1
else
  gs_ensure_deps || exit 1
fi
