#!/usr/bin/env bash
# tests/embed/test_embed.sh BUILD_DIR: a host program is compiled and
# linked with nothing but `pkg-config --cflags --libs mist` (LANGUAGE.md
# section 9), against this build tree (mist-uninstalled.pc) and against
# an installation (`cmake --install`), and runs (tests/embed/host.c).
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
want='eager: 0 10.0 6.0
graph: 0 10.0 6.0
status 1
<bad>:1:1: error: division by zero
    1 / 0
    ^^^^^
Traceback (innermost last):
  <bad>:1:1 in <module>'

# check NAME PKG_CONFIG_PATH: compile host.c with that mist.pc, run it
check() {
  local name=$1 flags out
  if ! flags=$(PKG_CONFIG_PATH=$2 pkg-config --cflags --libs mist 2>&1); then
    echo "FAIL $name: pkg-config mist: $flags"
    fails=$((fails + 1))
    return
  fi
  # shellcheck disable=SC2086
  # (EMBED_HOST_FLAGS: a sanitizer build's libmist needs its runtime)
  # shellcheck disable=SC2086
  if ! out=$(cc -o "$dir/host-$name" "$here/host.c" $flags ${EMBED_HOST_FLAGS:-} 2>&1); then
    echo "FAIL $name: the host does not build: $out"
    fails=$((fails + 1))
    return
  fi
  out=$("$dir/host-$name" 2>&1)
  if [ "$out" != "$want" ]; then
    echo "FAIL $name: the host printed:"
    echo "$out"
    fails=$((fails + 1))
  fi
}

check build-tree "$build"
if cmake --install "$build" --prefix "$dir/inst" > "$dir/install.log" 2>&1; then
  check installed "$dir/inst/lib/pkgconfig"
else
  echo "FAIL install: $(tail -5 "$dir/install.log")"
  fails=$((fails + 1))
fi

if [ "$fails" -gt 0 ]; then
  echo "$fails failed"
  exit 1
fi
echo "embed: all passed"
