# zig-x86_64-windows.cmake: CMake toolchain file, C cross-compiled for x86_64-windows-gnu with zig cc
# (tests/cross/run; docs/platforms.md).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(ZIG_TARGET x86_64-windows-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/zig-common.cmake)
