#!/usr/bin/env bash
# Installs libnetcode, the C library of the netcode-c crate, for C and C++
# programs:
#
#   bash netcode-c/install.sh PREFIX
#
# builds it (cargo build --release -p netcode-c; NETCODE_C_PROFILE=debug
# installs the debug build instead) and copies into PREFIX:
#
#   include/netcode.h
#   lib/libnetcode.a
#   lib/libnetcode.so.VERSION, with the links libnetcode.so.1 and libnetcode.so
#     (lib/libnetcode.dylib on macOS)
#   lib/pkgconfig/netcode.pc          pkg-config --cflags --libs netcode         (shared)
#   lib/pkgconfig/netcode-static.pc   pkg-config --cflags --libs netcode-static  (static)
#   lib/cmake/netcode/netcodeConfig.cmake, netcodeConfigVersion.cmake
#                                      find_package(netcode), netcode::netcode (static)
#                                      and netcode::netcode_shared
#
# VERSION is the API version of netcode.h (NETCODE_VERSION_FULL). The
# installation is relocatable: the pkg-config and CMake files find the
# prefix from where they lie. NETCODE_C_NATIVE_LIBS overrides the system
# libraries a static link needs (default: what rustc prints for this
# platform with --print native-static-libs).
set -euo pipefail

if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -eq 1 ] && exit 0
  exit 2
fi

crate=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$crate")
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
profile=${NETCODE_C_PROFILE:-release}
target_dir=${CARGO_TARGET_DIR:-$repo/target}
case "$target_dir" in /*) ;; *) target_dir="$repo/$target_dir" ;; esac

if [ "$profile" = release ]; then
  (cd "$repo" && cargo build --locked --release -p netcode-c)
else
  (cd "$repo" && cargo build --locked -p netcode-c)
fi
built="$target_dir/$profile"

version=$(sed -n 's/^#define NETCODE_VERSION_FULL *"\(.*\)"/\1/p' "$crate/include/netcode.h")
version_major=${version%%.*}
crate_version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -n 1)
[ -n "$version" ] && [ -n "$crate_version" ] || { echo "install.sh: no version found" >&2; exit 1; }

case "$(uname -s)" in
  Darwin)
    shared_built=libnetcode.dylib
    shared=libnetcode.dylib
    native_libs=${NETCODE_C_NATIVE_LIBS:--lSystem -lc -lm}
    sizeof_void_p=8
    ;;
  *)
    shared_built=libnetcode.so
    shared=libnetcode.so.$version
    native_libs=${NETCODE_C_NATIVE_LIBS:--lgcc_s -lutil -lrt -lpthread -lm -ldl -lc}
    sizeof_void_p=$(getconf LONG_BIT 2>/dev/null || echo 64)
    sizeof_void_p=$((sizeof_void_p / 8))
    ;;
esac
native_libs_cmake=$(printf '%s\n' $native_libs | sed 's/^-l//' | paste -sd ';' -)

for file in libnetcode.a "$shared_built"; do
  [ -f "$built/$file" ] || { echo "install.sh: $built/$file was not built" >&2; exit 1; }
done

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/netcode"
install -m 644 "$crate/include/netcode.h" "$prefix/include/netcode.h"
install -m 644 "$built/libnetcode.a" "$prefix/lib/libnetcode.a"
install -m 755 "$built/$shared_built" "$prefix/lib/$shared"
soname=""
if [ "$shared" != "$shared_built" ]; then
  ln -sf "$shared" "$prefix/lib/libnetcode.so.$version_major"
  ln -sf "$shared" "$prefix/lib/libnetcode.so"
  if command -v objdump >/dev/null 2>&1; then
    soname=$(objdump -p "$built/$shared_built" | awk '$1 == "SONAME" { print $2 }')
  fi
fi

fill() {
  sed -e "s|@VERSION@|$version|g" \
      -e "s|@VERSION_MAJOR@|$version_major|g" \
      -e "s|@CRATE_VERSION@|$crate_version|g" \
      -e "s|@NATIVE_LIBS@|$native_libs|g" \
      -e "s|@NATIVE_LIBS_CMAKE@|$native_libs_cmake|g" \
      -e "s|@STATIC_LIBRARY@|libnetcode.a|g" \
      -e "s|@SHARED_LIBRARY@|$shared|g" \
      -e "s|@SONAME@|$soname|g" \
      -e "s|@SIZEOF_VOID_P@|$sizeof_void_p|g" \
      "$1" > "$2"
  chmod 644 "$2"
}
fill "$crate/netcode.pc.in" "$prefix/lib/pkgconfig/netcode.pc"
fill "$crate/netcode-static.pc.in" "$prefix/lib/pkgconfig/netcode-static.pc"
fill "$crate/cmake/netcodeConfig.cmake.in" "$prefix/lib/cmake/netcode/netcodeConfig.cmake"
fill "$crate/cmake/netcodeConfigVersion.cmake.in" "$prefix/lib/cmake/netcode/netcodeConfigVersion.cmake"

echo "installed libnetcode $version (netcode-c $crate_version, $profile build) into $prefix:"
(cd "$prefix" && find include/netcode.h lib/libnetcode* lib/pkgconfig/netcode*.pc lib/cmake/netcode -maxdepth 1 \( -type f -o -type l \) | sort | sed 's/^/  /')
