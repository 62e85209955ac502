# mingw-x86_64.cmake: CMake toolchain file, C cross-compiled for x86_64-w64-mingw32 (64-bit
# Windows, PE32+) with Debian's mingw-w64 gcc (tests/cross/run-windows; docs/platforms.md).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_AR x86_64-w64-mingw32-ar CACHE FILEPATH "mingw-w64 ar")
set(CMAKE_RANLIB x86_64-w64-mingw32-ranlib CACHE FILEPATH "mingw-w64 ranlib")
# the target's libraries and headers only under mingw-w64's root and the prefixes given
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
