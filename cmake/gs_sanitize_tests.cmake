# Sanitizer builds (GEMMSHIM_SANITIZE): CTest runs every test with the
# sanitizers' options set, so that a report fails the test (exit 86).
# Programs the tests run that are not instrumented (bash, printenv, Python)
# still get the shim preloaded, with the sanitizer runtime loaded after libc:
# verify_asan_link_order=0 lets ASan run there (it still checks the shim's
# stack and globals). protect_shadow_gap=0 is what the CUDA driver needs
# under ASan on a GPU machine. An existing *SAN_OPTIONS value is kept.
set(GS_SAN_ENV_FILE ${CMAKE_BINARY_DIR}/gs_sanitize_env.cmake)
file(WRITE ${GS_SAN_ENV_FILE} [=[
foreach(pair
    "ASAN_OPTIONS=verify_asan_link_order=0:protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:exitcode=86"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86"
    "TSAN_OPTIONS=halt_on_error=1:exitcode=86:second_deadlock_stack=1"
    "LSAN_OPTIONS=exitcode=86")
  string(REGEX MATCH "^[A-Z]+_OPTIONS" var "${pair}")
  string(REGEX REPLACE "^[A-Z]+_OPTIONS=" "" value "${pair}")
  if(NOT DEFINED ENV{${var}})
    set(ENV{${var}} "${value}")
  endif()
endforeach()
]=])
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY TEST_INCLUDE_FILES ${GS_SAN_ENV_FILE})
