#!/usr/bin/env bash
# The whole test suite, from a fresh clone. tools/ensure-deps.sh installs the
# Debian packages that are missing (cmake, bats, libopenblas-dev, binutils,
# pkg-config, python3, clang with its libFuzzer runtime, ccache; python3-
# matplotlib where python3 is Debian's) and says what and why. Then, each in
# its own build directory:
#   1. the Release build (the one run.sh makes, configured the same way, so
#      what run.sh built is reused) and every CTest test: C unit tests, the
#      recording-fake forwarding tests, the BATS suites, the fuzzers (bounded
#      time, GEMMSHIM_FUZZ_SECONDS each), the SASS reference check and the
#      GPU tests, which report "skipped" with the reason where no GPU exists
#      (GEMMSHIM_REQUIRE_GPU=1 makes a missing GPU a failure);
#   2. the host code under AddressSanitizer + UndefinedBehaviorSanitizer:
#      every CPU test;
#   3. the same CPU tests under ThreadSanitizer (the threaded ones are
#      tests/bats/25-threads.bats and the C API test).
# The sanitizer builds link the Release build's kernel objects
# (GEMMSHIM_KERNELS_FROM): the sanitizers instrument host code only, so the
# kernels are compiled once. Each phase is printed with its time, and all of
# them at the end. GEMMSHIM_SANITIZERS=0 skips 2 and 3. Exit status: non-zero
# if any failed.
set -uo pipefail
cd "$(dirname "$0")"
build=${GEMMSHIM_BUILD_DIR:-build}

. tools/gs_build.sh
gs_phase "dependencies (tools/ensure-deps.sh)"
. tools/ensure-deps.sh || exit 1

# The plot test needs matplotlib: where python3 lacks it, a private venv in
# the build directory gets it (the user's Python environment is not touched).
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  venv=$PWD/$build/venv
  if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
    gs_phase "matplotlib for the plot tests (private venv)"
    echo "test.sh: python3 has no matplotlib: installing it into the private venv $venv (for the plot tests)"
    mkdir -p "$build"
    { python3 -m venv "$venv" && "$venv/bin/python3" -m pip install -q matplotlib; } >/dev/null 2>&1 ||
      echo "test.sh: the venv could not be made: the plot tests skip, saying why"
  fi
  [ -x "$venv/bin/python3" ] && export PATH="$venv/bin:$PATH"
fi

failed=()
# suite NAME DIR CTEST ARGS...: configures DIR (the Release build, or with
# the CMake arguments in the array suite_cmake), builds it, runs CTest
suite_cmake=()
suite() {
  local name=$1 dir=$2
  shift 2
  gs_phase "$name: configuring and building ($dir)"
  local rc=0
  if [ ${#suite_cmake[@]} -eq 0 ]; then
    gs_configure_release "$dir" || rc=$?
  else
    gs_configure "$dir" "${suite_cmake[@]}" || rc=$?
  fi
  if [ $rc != 0 ]; then
    failed+=("$name (configure)")
    return
  fi
  if ! cmake --build "$dir" -j"$(nproc)"; then
    failed+=("$name (build)")
    return
  fi
  gs_phase "$name: tests"
  (cd "$dir" && ctest --output-on-failure "$@") || failed+=("$name")
  # CTest lists skipped tests without their output: say why they skipped.
  if grep -q '^SKIP' "$dir/Testing/Temporary/LastTest.log" 2>/dev/null; then
    echo "Skipped tests said:"
    grep -h '^SKIP' "$dir/Testing/Temporary/LastTest.log" | sort -u | sed 's/^/  /'
  fi
  if grep -q ' # skip' "$dir/Testing/Temporary/LastTest.log" 2>/dev/null; then
    echo "Skipped BATS cases said:"
    grep -h ' # skip' "$dir/Testing/Temporary/LastTest.log" | sort -u | sed 's/^/  /'
  fi
}

suite "Release build, every test" "$build"
if [ "${GEMMSHIM_SANITIZERS:-1}" != 0 ]; then
  # the CPU tests: not the GPU tests (label gpu), the fuzzers (built with
  # their own sanitizers) or the SASS check (a Release-build property);
  # the kernels are the Release build's
  kernels=$(cd "$build" && pwd)
  suite_cmake=(-DGEMMSHIM_SANITIZE=address,undefined -DGEMMSHIM_BUILD_BENCH=ON "-DGEMMSHIM_KERNELS_FROM=$kernels")
  suite "AddressSanitizer + UndefinedBehaviorSanitizer, CPU tests" "$build-asan" -LE gpu -E '^(fuzz_|sass_)'
  suite_cmake=(-DGEMMSHIM_SANITIZE=thread -DGEMMSHIM_BUILD_BENCH=ON "-DGEMMSHIM_KERNELS_FROM=$kernels")
  suite "ThreadSanitizer, CPU tests" "$build-tsan" -LE gpu -E '^(fuzz_|sass_)'
fi
gs_phases_done

if [ ${#failed[@]} -gt 0 ]; then
  printf 'test.sh: FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "test.sh: every suite passed"
