# zig-common.cmake: the part every zig cross toolchain file shares (cmake/zig-<target>.cmake
# sets ZIG_TARGET, CMAKE_SYSTEM_NAME and CMAKE_SYSTEM_PROCESSOR, then includes this).
# The compiler is `zig cc --target=ZIG_TARGET` through the tests/cross/zig-* wrappers, which
# find zig in $WARDEN_ZIG or build/cross/zig/ (tests/cross/run unpacks it there; docs/platforms.md).
get_filename_component(_wd_cross_dir "${CMAKE_CURRENT_LIST_DIR}/../tests/cross" ABSOLUTE)
set(CMAKE_C_COMPILER "${_wd_cross_dir}/zig-cc")
set(CMAKE_C_COMPILER_TARGET "${ZIG_TARGET}")
set(CMAKE_AR "${_wd_cross_dir}/zig-ar" CACHE FILEPATH "zig ar")
set(CMAKE_RANLIB "${_wd_cross_dir}/zig-ranlib" CACHE FILEPATH "zig ranlib")
# Look for the target's libraries and headers only under the prefixes given, never the host's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
