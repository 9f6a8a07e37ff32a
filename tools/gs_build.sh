#!/usr/bin/env bash
# What run.sh and test.sh share, sourced by both (". tools/gs_build.sh"):
#   gs_phase NAME      starts a phase: prints "== [m:ss] NAME" (time since
#                      the script started) and ends the phase before it
#   gs_phases_done     ends the last phase and prints every phase's time
#   gs_configure DIR [CMAKE ARGS...]
#                      configures DIR as a Release build, the same way in
#                      both scripts (so test.sh reuses what run.sh built),
#                      with ccache as the compilers' launcher where it is
#                      installed (tools/ensure-deps.sh installs it); output
#                      to DIR/configure.log, its tail shown on failure
# GEMMSHIM_CCACHE=0 builds without ccache.

gs_phase_names=()
gs_phase_secs=()
gs_phase_start=$SECONDS
gs_script_start=$SECONDS

gs_clock() {
  local s=$(($1))
  printf '%d:%02d' $((s / 60)) $((s % 60))
}

gs_phase_end() {
  [ ${#gs_phase_names[@]} -gt 0 ] || return 0
  local i=$((${#gs_phase_names[@]} - 1))
  [ -z "${gs_phase_secs[$i]:-}" ] || return 0
  gs_phase_secs[$i]=$((SECONDS - gs_phase_start))
}

gs_phase() {
  gs_phase_end
  gs_phase_names+=("$1")
  gs_phase_start=$SECONDS
  echo "== [$(gs_clock $((SECONDS - gs_script_start)))] $1"
}

gs_phases_done() {
  gs_phase_end
  echo "== phases (m:ss)"
  local i
  for i in "${!gs_phase_names[@]}"; do
    printf '   %6s  %s\n' "$(gs_clock "${gs_phase_secs[$i]}")" "${gs_phase_names[$i]}"
  done
  printf '   %6s  in all\n' "$(gs_clock $((SECONDS - gs_script_start)))"
}

gs_configure() {
  local dir=$1
  shift
  # with ccache, paths under the source tree are hashed relative to the
  # build directory: another clone or worktree's build of the same sources
  # hits the cache; without, a directory configured with ccache before keeps
  # no stale launcher
  local lang launcher=() set="-U" via=""
  if [ "${GEMMSHIM_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
    set="-D" via="=/usr/bin/env;CCACHE_BASEDIR=$PWD;$(command -v ccache)"
  fi
  for lang in C CXX CUDA; do launcher+=("${set}CMAKE_${lang}_COMPILER_LAUNCHER$via"); done
  mkdir -p "$dir"
  if ! cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >"$dir/configure.log" 2>&1; then
    tail -20 "$dir/configure.log" >&2
    return 1
  fi
}

# The Release build both scripts make (and that the sanitizer builds take
# the kernel objects of): nothing left of a sanitizer or imported-kernel
# configuration in a reused directory.
gs_configure_release() {
  gs_configure "$1" -DGEMMSHIM_SANITIZE= -DGEMMSHIM_KERNELS_FROM=
}
