#!/usr/bin/env bash
# The C side of netcode-c's tests: builds libnetcode (cargo build -p
# netcode-c, debug profile), compiles the header as C89/C99/C11 and
# C++98/11/17, builds every C test
# twice (plain, and with AddressSanitizer and UndefinedBehaviorSanitizer)
# against target/debug/libnetcode.a and runs each with a time limit, runs
# C programs on this library against this repository's Rust server and
# client (and the C reference's programs when named), and installs the
# library into a temporary prefix to build a program with pkg-config and
# with CMake's find_package.
#
# The header's check against the libraries (symbols both ways, constants,
# struct layouts, the SONAME) is not here: it is a Rust test, module
# `header` of tests/it, run by `cargo test -p netcode-c` (and CI's test
# suite) on the libnetcode.a and libnetcode.so that cargo test builds with
# the crate's rlib.
#
#   bash netcode-c/tests/c/run.sh
#
# Optional, each reported as SKIPPED with the reason when unset or missing:
#   NETCODE_C_SERVER=path  the C reference's `server` program: our C client against it
#   NETCODE_C_CLIENT=path  the C reference's `client` program: it against our C server
#   NETCODE_C_SOURCE=dir   a checkout of the C reference: its example programs
#                          (client.c, server.c, client_server.c, soak.c, profile.c)
#                          compiled unchanged against our header and library, and
#                          client_server and a soak run
#   pkg-config, cmake      the packaging checks
# CC and CXX name the compilers (cc, c++); SOAK_SECONDS the soak's length
# (10); NETCODE_C_NATIVE_LIBS the system libraries the static library needs;
# NETCODE_EXAMPLES_BIN_DIR a directory holding the examples' netcode-server
# and netcode-client programs already built (CI's test suite builds them),
# which are otherwise built here (cargo build -p netcode-examples, whose
# features alone rebuild much of the dependency graph).
#
# Every check runs; the script ends with a summary and exits 1 if any
# failed. The logs are kept in the directory it prints when something fails.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
crate=$(cd "$here/../.." && pwd)
repo=$(dirname "$crate")
cd "$repo" || exit 1

CC=${CC:-cc}
CXX=${CXX:-c++}
soak_seconds=${SOAK_SECONDS:-10}
target_dir=${CARGO_TARGET_DIR:-$repo/target}
case "$target_dir" in /*) ;; *) target_dir="$repo/$target_dir" ;; esac
lib="$target_dir/debug/libnetcode.a"
# What `cargo rustc -p netcode-c --crate-type staticlib -- --print
# native-static-libs` prints on Linux.
read -r -a native_libs <<<"${NETCODE_C_NATIVE_LIBS:--lgcc_s -lutil -lrt -lpthread -lm -ldl -lc}"
sanitize=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
cflags=(-g -O1 -Wall -Wextra -Werror -Wno-unused-function -I"$crate/include")

out=$(mktemp -d "${TMPDIR:-/tmp}/netcode-c-tests.XXXXXX")
background=()
cleanup() {
  for pid in "${background[@]}"; do
    kill "$pid" 2>/dev/null
  done
  if [ "${#failed[@]}" -eq 0 ]; then
    rm -rf "$out"
  fi
}
passed=()
failed=()
skipped=()
trap cleanup EXIT

section() { printf '\n--- %s   (%d s so far)\n' "$*" "$SECONDS"; }
pass() { passed+=("$1"); echo "    PASSED $1"; }
fail() { failed+=("$1"); echo "!!! FAILED: $1 !!!" >&2; }
skip() { skipped+=("$1: $2"); echo "    SKIPPED $1: $2"; }

# run NAME LOG SECONDS COMMAND...: runs COMMAND with a time limit, its
# output into LOG; shows the test's own lines, and the log's end on failure.
run() {
  local name=$1 log=$2 limit=$3
  shift 3
  local started=$SECONDS status
  timeout --kill-after=5 "$limit" "$@" >"$log" 2>&1
  status=$?
  grep -E '^\[|^    \[garbage\] NO|SKIPPED|CHECK FAILED|REQUIRE FAILED|ERROR: |runtime error|SUMMARY' "$log" | sed 's/^/    /' | tail -n 40
  if [ "$status" -eq 0 ]; then
    pass "$name ($((SECONDS - started)) s)"
  else
    [ "$status" -eq 124 ] && echo "    (timed out after $limit s)"
    echo "    --- end of $log:"
    tail -n 60 "$log" | sed 's/^/    | /'
    fail "$name (exit status $status)"
  fi
  return "$status"
}

section "libnetcode: cargo build -p netcode-c"
if ! cargo build --locked -p netcode-c; then
  echo "!!! FAILED: cargo build -p netcode-c !!!" >&2
  exit 1
fi
[ -f "$lib" ] || { echo "!!! FAILED: $lib was not built !!!" >&2; exit 1; }

section "the header compiles as C89, C99, C11 (-pedantic -Werror) and as C++98, C++11, C++17"
for std in c89 gnu89 c99 c11; do
  if "$CC" -std="$std" -pedantic -Werror -Wall -Wextra -Wstrict-prototypes -I"$crate/include" \
    -fsyntax-only "$here/c89.c"; then
    pass "header as $std (c89.c: every signature as the C library's header gives it)"
  else
    fail "header as $std"
  fi
done
for std in c++98 c++11 c++17; do
  if "$CXX" -std="$std" -pedantic -Werror -Wall -Wextra -I"$crate/include" -fsyntax-only "$here/test_cpp.cpp"; then
    pass "header as $std (test_cpp.cpp)"
  else
    fail "header as $std"
  fi
done

section "build the C tests, plain and with -fsanitize=address,undefined"
tests=(api client_server loopback overrides allocator garbage reentry soak old_header)
programs=("${tests[@]}" interop_client interop_server free_port)
mkdir -p "$out/plain" "$out/sanitized" "$out/build"
# build NAME COMMAND...: one compile in the background, as many at a time
# as there are processors; its output in build/NAME.log.
jobs_max=$(nproc 2>/dev/null || echo 2)
build_names=()
build() {
  local name=$1
  shift
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
    wait -n
  done
  build_names+=("$name")
  ("$@" >"$out/build/$name.log" 2>&1 || echo "$name" >>"$out/build/failed") &
}
for variant in plain sanitized; do
  extra=()
  [ "$variant" = sanitized ] && extra=("${sanitize[@]}")
  for program in "${programs[@]}"; do
    build "$program-$variant" "$CC" "${cflags[@]}" "${extra[@]}" "$here/$program.c" "$lib" "${native_libs[@]}" \
      -o "$out/$variant/$program"
  done
  build "test_cpp-$variant" "$CXX" -std=c++17 "${cflags[@]}" "${extra[@]}" "$here/test_cpp.cpp" "$lib" \
    "${native_libs[@]}" -o "$out/$variant/test_cpp"
done
build "test_cpp98-plain" "$CXX" -std=c++98 "${cflags[@]}" "$here/test_cpp.cpp" "$lib" "${native_libs[@]}" \
  -o "$out/plain/test_cpp98"
# The bench's C programs (bench/c/), written against netcode.h and built by
# hand against the C reference, build against this library too.
for program in netcode_c_bench netcode_c_server; do
  build "$program-plain" "$CC" "${cflags[@]}" "$repo/bench/c/$program.c" "$lib" "${native_libs[@]}" \
    -o "$out/plain/$program"
done
wait
if [ -f "$out/build/failed" ]; then
  while read -r name; do
    sed 's/^/    | /' "$out/build/$name.log"
    fail "build $name"
  done <"$out/build/failed"
fi
echo "    ${#build_names[@]} programs built in $out"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# LeakSanitizer cannot run where the process may not trace itself (some
# containers): it must at least find a leak made on purpose, or the leak
# checks are reported as skipped rather than passed.
printf '#include <stdlib.h>\nint main(void) { void * volatile p = malloc(42); p = 0; return p != 0; }\n' >"$out/leak.c"
if "$CC" "${sanitize[@]}" -g "$out/leak.c" -o "$out/leak" 2>"$out/leak-build.log"; then
  "$out/leak" >"$out/leak.log" 2>&1
  if grep -q "detected memory leaks" "$out/leak.log"; then
    echo "    LeakSanitizer works here (a deliberate leak of 42 bytes was reported)"
  else
    skip "LeakSanitizer in the sanitized runs" "it does not work on this machine: $(grep -m1 -i 'leak\|error' "$out/leak.log" || echo 'no report')"
    export ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}"
  fi
else
  sed 's/^/    | /' "$out/leak-build.log"
  fail "build a program with ${sanitize[*]}"
fi
# run_variant VARIANT: runs every C test of that build, one after another.
run_variant() {
  local variant=$1 t limit
  for t in "${tests[@]}" test_cpp; do
    limit=60
    [ "$t" = soak ] && limit=$((soak_seconds * 3 + 30))
    [ -x "$out/$variant/$t" ] || continue
    run "$t ($variant)" "$out/$variant/$t.log" "$limit" env SOAK_SECONDS="$soak_seconds" "$out/$variant/$t"
  done
  if [ "$variant" = plain ] && [ -x "$out/plain/test_cpp98" ]; then
    run "test_cpp as C++98" "$out/plain/test_cpp98.log" 60 "$out/plain/test_cpp98"
  fi
  return 0
}
# The two builds' tests run side by side (they mostly wait on sockets and
# timers, and each finds its own free ports): the sanitized ones in a
# subshell whose output is shown after the plain ones', and whose verdicts
# come back through a file.
section "run the C tests (plain, and sanitized beside them)"
(
  pass() { printf 'passed\t%s\n' "$1" >>"$out/sanitized.verdicts"; echo "    PASSED $1"; }
  fail() { printf 'failed\t%s\n' "$1" >>"$out/sanitized.verdicts"; echo "!!! FAILED: $1 !!!"; }
  run_variant sanitized
) >"$out/sanitized.log" 2>&1 &
sanitized_pid=$!
background+=("$sanitized_pid")
run_variant plain
wait "$sanitized_pid"
section "the C tests (sanitized), run beside the plain ones"
cat "$out/sanitized.log"
expected=0
for t in "${tests[@]}" test_cpp; do
  [ -x "$out/sanitized/$t" ] && expected=$((expected + 1))
done
given=$(wc -l <"$out/sanitized.verdicts" 2>/dev/null || echo 0)
[ "$given" -eq "$expected" ] || fail "the sanitized C tests gave $given verdicts for $expected programs (see $out/sanitized.log)"
if [ -f "$out/sanitized.verdicts" ]; then
  while IFS=$'\t' read -r verdict name; do
    if [ "$verdict" = passed ]; then passed+=("$name"); else failed+=("$name"); echo "!!! FAILED: $name !!!" >&2; fi
  done <"$out/sanitized.verdicts"
else
  fail "the sanitized C tests gave no verdicts (see $out/sanitized.log)"
fi

# wait_for LOG PATTERN SECONDS PID: until a line of LOG matches PATTERN
# (false if PID ends first or the time runs out).
wait_for() {
  local log=$1 pattern=$2 limit=$3 pid=$4 i
  for ((i = 0; i < limit * 10; i++)); do
    grep -q -- "$pattern" "$log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# finish_background NAME PID LOG: waits for a program run in the
# background and judges it by its exit status.
finish_background() {
  local name=$1 pid=$2 log=$3 status
  wait "$pid"
  status=$?
  grep -E '^\[|listening|connected|disconnected|shutting down|error' "$log" | grep -v '^netcode:' | sed 's/^/    /' | tail -n 12
  if [ "$status" -eq 0 ]; then
    pass "$name"
  else
    echo "    --- end of $log:"
    tail -n 40 "$log" | sed 's/^/    | /'
    fail "$name (exit status $status)"
  fi
}

# What the C interop server's lines start with, as a pattern.
c_server_prefix='\[interop server\] '

# start_server NAME LOG PREFIX COMMAND...: runs the server COMMAND in the
# background, its output into LOG, and waits up to 20 s for its line
# "PREFIXserver listening on ADDRESS" (PREFIX a pattern): sets pid and
# address; otherwise shows the log's end, fails "NAME did not start" and
# returns 1.
start_server() {
  local name=$1 log=$2 prefix=$3
  shift 3
  "$@" >"$log" 2>&1 &
  pid=$!
  background+=("$pid")
  if ! wait_for "$log" "^${prefix}server listening on" 20 "$pid"; then
    tail -n 20 "$log" | sed 's/^/    | /'
    fail "$name did not start"
    return 1
  fi
  address=$(sed -n "s/^${prefix}server listening on \([^ ]*\).*/\1/p" "$log" | head -n 1)
}

section "bench/c/netcode_c_server.c on libnetcode: says where it serves, answers stats, ends with its input"
if [ -x "$out/plain/netcode_c_server" ]; then
  port=$("$out/plain/free_port")
  answer=$( (echo stats; sleep 0.5) | timeout 10 "$out/plain/netcode_c_server" 4 "$port" 10 2>&1)
  status=$?
  if [ "$status" -eq 0 ] && grep -q "^READY udp=127.0.0.1:$port " <<<"$answer" &&
    grep -qx "STATS connected=0" <<<"$answer"; then
    pass "the bench's C server on libnetcode (READY, STATS, exit 0 at the end of its input)"
  else
    sed 's/^/    | /' <<<"$answer"
    fail "the bench's C server on libnetcode (exit status $status)"
  fi
fi

section "interop: C programs on libnetcode (sanitized) with this repository's Rust server and client"
# examples_built: whether the Rust server and client programs are at hand
# (in NETCODE_EXAMPLES_BIN_DIR, or built now); sets rust_server and
# rust_client.
examples_built() {
  if [ -n "${NETCODE_EXAMPLES_BIN_DIR:-}" ]; then
    rust_server="$NETCODE_EXAMPLES_BIN_DIR/netcode-server"
    rust_client="$NETCODE_EXAMPLES_BIN_DIR/netcode-client"
    [ -x "$rust_server" ] && [ -x "$rust_client" ] && return 0
    echo "NETCODE_EXAMPLES_BIN_DIR=$NETCODE_EXAMPLES_BIN_DIR holds no netcode-server and netcode-client programs" \
      >"$out/examples-build.log"
    return 1
  fi
  rust_server="$target_dir/debug/netcode-server"
  rust_client="$target_dir/debug/netcode-client"
  cargo build --locked -p netcode-examples --bin netcode-server --bin netcode-client >"$out/examples-build.log" 2>&1
}
if examples_built; then

  # Our C client against the Rust server: both judge the run.
  log="$out/interop-rust-server.log"
  if start_server "the Rust server" "$log" "" "$rust_server" 127.0.0.1:0 --seconds 5; then
    run "C client on libnetcode -> Rust server (the C client's verdict)" "$out/interop-c-client.log" 30 \
      "$out/sanitized/interop_client" "$address" --seconds 3
    finish_background "C client on libnetcode -> Rust server (the Rust server's verdict)" "$pid" "$log"
  fi

  # The Rust client against our C server.
  log="$out/interop-c-server.log"
  if start_server "the C server on libnetcode" "$log" "$c_server_prefix" \
    "$out/sanitized/interop_server" 127.0.0.1:0 --seconds 5; then
    run "Rust client -> C server on libnetcode (the Rust client's verdict)" "$out/interop-rust-client.log" 30 \
      "$rust_client" "$address" --seconds 3
    finish_background "Rust client -> C server on libnetcode (the C server's verdict)" "$pid" "$log"
  fi
else
  tail -n 30 "$out/examples-build.log" | sed 's/^/    | /'
  fail "the Rust server and client programs (netcode-examples' netcode-server and netcode-client)"
fi

section "interop: C programs on libnetcode with the C reference's programs"
if [ -n "${NETCODE_C_SERVER:-}" ]; then
  if [ -x "$NETCODE_C_SERVER" ]; then
    port=$("$out/plain/free_port")
    log="$out/reference-server.log"
    "$NETCODE_C_SERVER" "127.0.0.1:$port" >"$log" 2>&1 &
    pid=$!
    background+=("$pid")
    sleep 1 # the reference's server prints nothing when it is ready
    run "C client on libnetcode -> the reference's server" "$out/reference-server-client.log" 30 \
      "$out/sanitized/interop_client" "127.0.0.1:$port" --seconds 3
    if kill -0 "$pid" 2>/dev/null; then
      pass "the reference's server ran throughout (it aborts on a wrong payload)"
      kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    else
      tail -n 20 "$log" | sed 's/^/    | /'
      fail "the reference's server exited during the run"
    fi
  else
    fail "NETCODE_C_SERVER=$NETCODE_C_SERVER is not an executable"
  fi
else
  skip "C client on libnetcode -> the reference's server" "NETCODE_C_SERVER unset (path to the C reference's built server program)"
fi
if [ -n "${NETCODE_C_CLIENT:-}" ]; then
  if [ -x "$NETCODE_C_CLIENT" ]; then
    log="$out/reference-client-server.log"
    if start_server "the C server on libnetcode" "$log" "$c_server_prefix" \
      "$out/sanitized/interop_server" 127.0.0.1:0 --seconds 5; then
      "$NETCODE_C_CLIENT" "$address" >"$out/reference-client.log" 2>&1 &
      client_pid=$!
      background+=("$client_pid")
      finish_background "the reference's client -> C server on libnetcode (the C server's verdict)" "$pid" "$log"
      # The reference's client ends when its server goes away; it aborts
      # (a signal) on a wrong payload.
      for _ in $(seq 30); do kill -0 "$client_pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$client_pid" 2>/dev/null; then
        kill "$client_pid" 2>/dev/null
        wait "$client_pid" 2>/dev/null
        pass "the reference's client ran throughout (still running when the server left)"
      else
        wait "$client_pid"
        client_status=$?
        if [ "$client_status" -lt 128 ]; then
          pass "the reference's client ended by itself (exit status $client_status)"
        else
          tail -n 20 "$out/reference-client.log" | sed 's/^/    | /'
          fail "the reference's client died (exit status $client_status)"
        fi
      fi
    fi
  else
    fail "NETCODE_C_CLIENT=$NETCODE_C_CLIENT is not an executable"
  fi
else
  skip "the reference's client -> C server on libnetcode" "NETCODE_C_CLIENT unset (path to the C reference's built client program)"
fi

section "the C reference's own programs compiled unchanged against this header and library"
if [ -n "${NETCODE_C_SOURCE:-}" ]; then
  source_dir="$out/reference-programs"
  mkdir -p "$source_dir"
  built_all=1
  for program in client server client_server soak profile; do
    if [ ! -f "$NETCODE_C_SOURCE/$program.c" ]; then
      fail "NETCODE_C_SOURCE=$NETCODE_C_SOURCE has no $program.c"
      built_all=0
      continue
    fi
    # Copied first: next to the reference's own netcode.h, #include
    # "netcode.h" would find that one rather than ours.
    cp "$NETCODE_C_SOURCE/$program.c" "$source_dir/"
    if "$CC" -O1 -w -I"$crate/include" "$source_dir/$program.c" "$lib" "${native_libs[@]}" -o "$source_dir/$program"; then
      pass "the reference's $program.c builds against netcode-c"
    else
      fail "the reference's $program.c does not build against netcode-c"
      built_all=0
    fi
  done
  if [ "$built_all" -eq 1 ]; then
    run "the reference's client_server.c on libnetcode" "$source_dir/client_server.log" 60 "$source_dir/client_server"
    run "the reference's soak.c on libnetcode (3000 iterations)" "$source_dir/soak.log" 120 "$source_dir/soak" 3000
  fi
else
  skip "the reference's example programs against netcode-c" "NETCODE_C_SOURCE unset (a checkout of the C reference)"
fi

section "packaging: install.sh into a temporary prefix; pkg-config and CMake find_package"
prefix="$out/prefix"
if NETCODE_C_PROFILE=debug bash "$crate/install.sh" "$prefix" >"$out/install.log" 2>&1; then
  sed -n '/^installed/,$p' "$out/install.log" | sed 's/^/    /'
  pass "install.sh"
  if command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    # shellcheck disable=SC2046 # pkg-config's output is a list of words
    if "$CC" $(pkg-config --cflags netcode) "$here/installed.c" $(pkg-config --libs netcode) -o "$out/installed-shared"; then
      run "pkg-config netcode (shared)" "$out/installed-shared.log" 30 env LD_LIBRARY_PATH="$prefix/lib" "$out/installed-shared"
    else
      fail "build with pkg-config --cflags --libs netcode"
    fi
    # shellcheck disable=SC2046
    if "$CC" $(pkg-config --cflags netcode-static) "$here/installed.c" $(pkg-config --libs netcode-static) -o "$out/installed-static"; then
      run "pkg-config netcode-static" "$out/installed-static.log" 30 "$out/installed-static"
    else
      fail "build with pkg-config --cflags --libs netcode-static"
    fi
    unset PKG_CONFIG_PATH
  else
    skip "pkg-config" "no pkg-config on this machine"
  fi
  if command -v cmake >/dev/null 2>&1; then
    project="$out/cmake-project"
    mkdir -p "$project"
    cp "$here/installed.c" "$project/"
    cat >"$project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(netcode_installed C)
find_package(netcode 1.4 REQUIRED)
add_executable(installed_static installed.c)
target_link_libraries(installed_static PRIVATE netcode::netcode)
add_executable(installed_shared installed.c)
target_link_libraries(installed_shared PRIVATE netcode::netcode_shared)
CMAKE
    if cmake -S "$project" -B "$project/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" >"$out/cmake.log" 2>&1 \
      && cmake --build "$project/build" >>"$out/cmake.log" 2>&1; then
      run "CMake find_package(netcode), netcode::netcode (static)" "$out/cmake-static.log" 30 "$project/build/installed_static"
      run "CMake find_package(netcode), netcode::netcode_shared" "$out/cmake-shared.log" 30 \
        env LD_LIBRARY_PATH="$prefix/lib" "$project/build/installed_shared"
    else
      tail -n 30 "$out/cmake.log" | sed 's/^/    | /'
      fail "CMake project with find_package(netcode)"
    fi
  else
    skip "CMake find_package(netcode)" "no cmake on this machine"
  fi
else
  tail -n 30 "$out/install.log" | sed 's/^/    | /'
  fail "install.sh"
fi

section "summary"
echo "passed: ${#passed[@]}"
for s in "${skipped[@]}"; do
  echo "SKIPPED $s"
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "logs kept in $out"
  for f in "${failed[@]}"; do
    echo "!!! FAILED: $f !!!" >&2
  done
  echo "!!! netcode-c C tests: ${#failed[@]} FAILED !!!" >&2
  exit 1
fi
echo "netcode-c C tests: all passed"
