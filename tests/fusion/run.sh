#!/usr/bin/env bash
# tests/fusion/run.sh MIST NAME.ms [--update]: IR-text tests of graph
# mode's fused elementwise loops (jit/llvm/fuse.c).  NAME.fused holds the
# lines MIST_JIT_LOG=1 prints for the loops of `mist --mode=graph
# NAME.ms`: which operations (by name and place) went into one loop,
# over which shape, and how each input is read.  Skipped (77) on a CPU
# with neither AVX-512F nor AVX2 and FMA, where nothing is fused.
#
# With MIST_JIT_CPU=x86-64-v3 (AVX2, 256-bit loops) on a CPU with
# AVX-512F, whose eager kernels are AVX-512's, the transcendentals other
# than f32 exp, log, tanh and sigmoid (whose 8-lane kernels give the
# 16-lane ones' bits) are left to eager mode and the rest fuses:
# NAME.v3.fused holds those lines where they differ from NAME.fused.  Another MIST_JIT_CPU, or v3 on a
# CPU without AVX-512F: skipped.
set -uo pipefail
mist=$1
script=$2
case "$mist" in /*) ;; *) mist="$PWD/$mist" ;; esac
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { [[ " $flags " == *" $1 "* ]]; }
suffix=fused
if [ -n "${MIST_JIT_CPU:-}" ]; then
  if [ "$MIST_JIT_CPU" != x86-64-v3 ] || ! has avx512f; then
    echo "MIST_JIT_CPU=$MIST_JIT_CPU: only x86-64-v3 on a CPU with AVX-512F is tested (skipped)"
    exit 77
  fi
  suffix=v3.fused
elif ! has avx512f && ! { has avx2 && has fma; }; then
  echo "neither AVX-512F nor AVX2 and FMA: nothing is fused here (skipped)"
  exit 77
fi
dir=$(cd "$(dirname "$script")" && pwd)
name=$(basename "$script" .ms)
golden="$dir/$name.$suffix"
# (the v3 lines are NAME.fused's where no NAME.v3.fused is kept)
if [ "$suffix" = v3.fused ] && [ ! -e "$golden" ] && [ "${3:-}" != --update ]; then golden="$dir/$name.fused"; fi
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
