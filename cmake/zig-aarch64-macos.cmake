# zig-aarch64-macos.cmake: CMake toolchain file, C cross-compiled for aarch64-macos with zig cc
# (tests/cross/run; docs/platforms.md).
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(ZIG_TARGET aarch64-macos)
include(${CMAKE_CURRENT_LIST_DIR}/zig-common.cmake)
