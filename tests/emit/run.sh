#!/usr/bin/env bash
# tests/emit/run.sh MIST NAME.ll [--update]: golden tests of `mist
# emit-llvm`.  The first line of NAME.ll is `; emit-llvm FILE.ms FUNCTION
# ARGTYPES...`; the rest is the optimised LLVM IR graph mode makes for
# it, for the generic x86-64 CPU (MIST_JIT_CPU=x86-64, so that the
# printout does not depend on the machine).  --update rewrites it.
set -uo pipefail
mist=$1
golden=$2
case "$mist" in /*) ;; *) mist="$PWD/$mist" ;; esac
dir=$(cd "$(dirname "$golden")" && pwd)
read -r _ cmd file rest < "$golden"
if [ "$cmd" != emit-llvm ]; then
  echo "FAIL: $golden: the first line must be '; emit-llvm FILE.ms FUNCTION ARGTYPES...'"
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086
(cd "$dir" && MIST_JIT_CPU=x86-64 "$mist" emit-llvm "$file" $rest) > "$out" 2>&1 || {
  echo "FAIL: mist emit-llvm $file $rest:"
  cat "$out"
  exit 1
}
if [ "${3:-}" = --update ]; then
  { head -1 "$golden"; cat "$out"; } > "$golden.new" && mv "$golden.new" "$golden"
  exit 0
fi
if ! diff -u --label expected --label actual <(tail -n +2 "$golden") "$out"; then
  echo "FAIL: $golden differs (tests/emit/run.sh MIST $golden --update rewrites it)"
  exit 1
fi
