#!/usr/bin/env bash
# bench/jit_run.sh: graph mode's compiled code against C (gcc -O2), each
# timed inside its own process as the best of N calls after a first one
# (which, for Mist, compiles): so the figures are the compiled code's,
# not start-up's or LLVM's.  The design's targets: recursive fib(30)
# within 1.5x of C, the 10^7-iteration float loop within 1.2x.  Prints
# each figure, the ratio, and the time graph mode took to compile (its
# MIST_JIT_LOG line).
#
#   bench/jit_run.sh [NAME...]      default: fib loop (bench/jit/NAME.ms, NAME.c)
#   MIST=path/to/mist CC=clang REPEAT=20 bench/jit_run.sh fib
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mist=${MIST:-$here/../build/mist}
cc=${CC:-gcc}
repeat=${REPEAT:-}
bin=$here/.bin
mkdir -p "$bin"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fib loop)
declare -A target=([fib]=1.5 [loop]=1.2)

# clang -O2 beside it when installed: LLVM's own code for the same C,
# without gcc's unrolling of recursive calls into each other
clang=$(command -v clang || true)
echo "mist: $mist, graph mode; C: $("$cc" --version | head -1), -O2${clang:+; clang: $("$clang" --version | head -1), -O2}"
echo "best of N calls in one process (fib: N=10, loop: N=5), wall clock"
printf '%-6s %12s %12s %9s %8s %14s %12s %12s\n' bench mist C mist/C target compile clang mist/clang
status=0
for n in "${names[@]}"; do
  "$cc" -O2 -o "$bin/jit_$n" "$here/jit/$n.c"
  # (without the compile cache: the compile column is LLVM's time;
  # bench/jit_cache_run.sh times the cache)
  out=$(cd "$here/jit" && MIST_JIT_CACHE=0 MIST_JIT_LOG=1 "$mist" --mode=graph "$n.ms" $repeat 2>"$bin/jit_$n.log") || {
    echo "bench: mist failed on jit/$n.ms:" >&2
    cat "$bin/jit_$n.log" >&2
    status=1
    continue
  }
  cout=$("$bin/jit_$n" $repeat)
  tm=$(sed -n 's/.*best ms: //p' <<<"$out")
  tc=$(sed -n 's/.*best ms: //p' <<<"$cout")
  # the same result (floats to 15 significant digits: C prints 17)
  rm=$(sed 's/.*= \(.*\) best ms.*/\1/' <<<"$out")
  rc=$(sed 's/.*= \(.*\) best ms.*/\1/' <<<"$cout")
  awk -v a="$rm" -v b="$rc" 'BEGIN { exit !(a == b || (a - b) * (a - b) <= 1e-28 * b * b) }' ||
    echo "warning: $n: mist gives $rm, C $rc" >&2
  compile=$(grep -m1 -o 'compiled ([0-9.]* ms)' "$bin/jit_$n.log" | sed 's/compiled (//; s/)//' || echo "-")
  tl=- rl=-
  if [ -n "$clang" ] && "$clang" -O2 -o "$bin/jit_${n}_clang" "$here/jit/$n.c" 2>/dev/null; then
    tl=$("$bin/jit_${n}_clang" $repeat | sed -n 's/.*best ms: //p')
    rl=$(awk -v a="$tm" -v b="$tl" 'BEGIN { printf "%.2fx", a / b }')
    tl=$(awk -v t="$tl" 'BEGIN { printf "%.3f ms", t }')
  fi
  printf '%-6s %9.3f ms %9.3f ms %8.2fx %7sx %14s %12s %12s\n' "$n" "$tm" "$tc" "$(awk -v a="$tm" -v b="$tc" 'BEGIN { print a / b }')" \
    "${target[$n]:--}" "$compile" "$tl" "$rl"
done
exit "$status"
