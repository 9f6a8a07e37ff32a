#!/usr/bin/env bash
# The main job: build libgemmshim.so and run the demo application under it
# (LD_PRELOAD), printing what the shim routed and why (GEMMSHIM_LOG=stderr).
#   With a GPU: tests/apps/sample_app, a plain cuBLAS program, whose calls are
#   compared with the real cuBLAS one by one.
#   Without one: the same kinds of calls against the recording fake cuBLAS,
#   with GEMMSHIM_TEST_DEVICE pretending an H100, so the routing decisions
#   (and the fallback when a kernel cannot launch) are shown.
set -euo pipefail
cd "$(dirname "$0")"
build=${GEMMSHIM_BUILD_DIR:-build}
. tools/gs_build.sh
gs_phase "dependencies (tools/ensure-deps.sh)"
. tools/ensure-deps.sh
gs_phase "configuring ($build)"
gs_configure_release "$build" || { echo "run.sh: configuring failed (log: $build/configure.log)" >&2; exit 1; }
# the CUDA kernels take most of a first build (about 4 minutes on 2 cores):
# show CMake's progress lines rather than nothing
if [ -f "$build/libgemmshim.so" ]; then
  gs_phase "building (up to date or incremental)"
else
  gs_phase "building (a first build takes about 4 minutes on 2 cores; progress below)"
fi
# (compiler errors and warnings are on stderr, unfiltered)
if ! cmake --build "$build" -j"$(nproc)" --target gemmshim sample_app sample_calls |
     { grep --line-buffered -E '^\[ *[0-9]+%\] (Building|Linking|Built target)' || true; }; then
  echo "run.sh: the build failed (see above; rerun: cmake --build $build)" >&2
  exit 1
fi
lib=$PWD/$build/libgemmshim.so
if nvidia-smi -L >/dev/null 2>&1; then
  gs_phase "sample_app under gemmshim (GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
  GEMMSHIM_LOG=stderr LD_PRELOAD=$lib "$build/bin/sample_app"
else
  gs_phase "no GPU here: the shim's decisions against the recording fake cuBLAS"
  echo "   (GEMMSHIM_TEST_DEVICE=sm_90:132 pretends an H100; its kernels cannot launch,"
  echo "    so routed calls fall back to the fake, logged)"
  echo "   Expected here, not errors: the lines '... on KERNEL failed (GEMMSHIM_TEST_DEVICE:"
  echo "   simulated device, not launched)' and '-> forward (fallback: KERNEL failed to"
  echo "   launch)' name the kernel the shim chose for the call, which a GPU would run."
  FAKE_CUBLAS_RECORD=/dev/null GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible \
    GEMMSHIM_LOG=stderr LD_LIBRARY_PATH=$PWD/$build/fake LD_PRELOAD=$lib \
    "$build/tests/fake/sample_calls"
fi
gs_phases_done
