# Writes OUT (a C header defining GS_BUILD_ID) with a hash of the sources
# that make the library (the C, C++ and CUDA files and templates under
# SRC_DIR's shim/, dispatch/, kernels/, compat/, include/): the tune cache's
# validator names the build by it, so a cache
# tuned by another build is stale even when the commit is the same (local
# edits, an incremental rebuild). CONFIG (the build's settings that change
# the code: build type, options, compilers and flags) and CMakeLists.txt are
# hashed too. Run at every build; OUT is rewritten only when the hash
# changes, so an unchanged tree recompiles nothing.
#   cmake -DSRC_DIR=... -DOUT=... [-DCONFIG=...] -P gs_build_id.cmake
set(patterns "")
foreach(dir shim dispatch kernels compat include)
  foreach(ext c h cu cuh cpp in)
    list(APPEND patterns "${SRC_DIR}/${dir}/*.${ext}")
  endforeach()
endforeach()
file(GLOB_RECURSE files RELATIVE "${SRC_DIR}" ${patterns})
list(APPEND files CMakeLists.txt)
list(SORT files)
set(all "config ${CONFIG}\n")
foreach(f IN LISTS files)
  # an editor's lock link (often dangling) or any other link is not a source
  if(IS_SYMLINK "${SRC_DIR}/${f}" OR NOT EXISTS "${SRC_DIR}/${f}")
    continue()
  endif()
  file(SHA256 "${SRC_DIR}/${f}" h)
  string(APPEND all "${f} ${h}\n")
endforeach()
string(SHA256 id "${all}")
string(SUBSTRING "${id}" 0 12 id)
set(text "#define GS_BUILD_ID \"${id}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
