# zig-x86_64-macos.cmake: CMake toolchain file, C cross-compiled for x86_64-macos with zig cc
# (tests/cross/run; docs/platforms.md).
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(ZIG_TARGET x86_64-macos)
include(${CMAKE_CURRENT_LIST_DIR}/zig-common.cmake)
