#!/usr/bin/env bash
# tests/fusion/run.sh MIST NAME.ms [--update]: IR-text tests of graph
# mode's fused elementwise loops (jit/llvm/fuse.c).  NAME.fused holds the
# lines MIST_JIT_LOG=1 prints for the loops of `mist --mode=graph
# NAME.ms`: which operations (by name and place) went into one loop,
# over which shape, and how each input is read.  Skipped (77) on a CPU
# without AVX-512F, and under MIST_JIT_CPU (code for another CPU), where
# nothing is fused.
set -uo pipefail
mist=$1
script=$2
case "$mist" in /*) ;; *) mist="$PWD/$mist" ;; esac
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  echo "no AVX-512F: nothing is fused here (skipped)"
  exit 77
fi
if [ -n "${MIST_JIT_CPU:-}" ]; then
  echo "MIST_JIT_CPU=$MIST_JIT_CPU: nothing is fused for another CPU (skipped)"
  exit 77
fi
dir=$(cd "$(dirname "$script")" && pwd)
name=$(basename "$script" .ms)
golden="$dir/$name.fused"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
(cd "$dir" && MIST_JIT_LOG=1 "$mist" --mode=graph "$name.ms" 2>&1 >/dev/null) | grep ': fused ' > "$out"
if [ "${3:-}" = --update ]; then
  cp "$out" "$golden"
  exit 0
fi
if ! diff -u --label expected --label actual "$golden" "$out"; then
  echo "FAIL: $golden differs (tests/fusion/run.sh MIST $script --update rewrites it)"
  exit 1
fi
