#!/usr/bin/env bash
# bench/startup_run.sh: start-up of `mist -e 'print(1)'`, the design's
# promise that graph mode costs a program nothing until it compiles
# (LLVM, in jit/libmist_jit.so, is opened on the first compilation).
#
#   bench/startup_run.sh                       build/mist alone
#   MIST_BEFORE=path/to/older/mist bench/startup_run.sh
#                                              and an older binary beside it
#
# Prints the best of REPEAT (default 50) runs of each command, the runs
# of the two binaries interleaved so that a busy machine slows both
# alike; whether the process loaded LLVM (ld.so's LD_DEBUG); and, for
# reference, a run that compiles one function (LLVM loaded and used).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mist=${MIST:-$here/../build/mist}
before=${MIST_BEFORE:-}
repeat=${REPEAT:-50}

now() { printf -v "$1" '%s' "${EPOCHREALTIME/,/.}"; }

# best BIN ARGS...: the fastest of $repeat runs, in ms
declare -A best
run_once() {
  local key=$1 t0 t1 t
  shift
  now t0
  "$@" > /dev/null 2>&1
  now t1
  t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
  if [ -z "${best[$key]:-}" ] || awk -v a="$t" -v b="${best[$key]}" 'BEGIN { exit !(a < b) }'; then
    best[$key]=$t
  fi
}

compile_one=$'def f(x):\n    return x + 1\nprint(jit(f)(1))'
for ((i = 0; i < repeat; i++)); do
  run_once after "$mist" -e 'print(1)'
  run_once after_graph "$mist" --mode=graph -e 'print(1)'
  [ -n "$before" ] && run_once before "$before" -e 'print(1)'
  # the compile cache off: every run compiles, and nothing is written to ~/.cache
  [ $i -lt 10 ] && MIST_JIT_CACHE=0 run_once compile "$mist" -e "$compile_one"
done

loads_llvm() {
  local n
  n=$(LD_DEBUG=libs "$@" 2>&1 >/dev/null | grep -ciE 'init: .*(libLLVM|libmist_jit)' || true)
  [ "$n" -gt 0 ] && echo yes || echo no
}

echo "start-up, best of $repeat runs (wall clock)"
printf '%-44s %10s %12s\n' command ms "loads LLVM"
[ -n "$before" ] && printf '%-44s %10s %12s\n' "before: mist -e 'print(1)'" "${best[before]}" "$(loads_llvm "$before" -e 'print(1)')"
printf '%-44s %10s %12s\n' "mist -e 'print(1)'" "${best[after]}" "$(loads_llvm "$mist" -e 'print(1)')"
printf '%-44s %10s %12s\n' "mist --mode=graph -e 'print(1)'" "${best[after_graph]}" "$(loads_llvm "$mist" --mode=graph -e 'print(1)')"
printf '%-44s %10s %12s\n' "mist -e 'jit(f)(1)' (one compilation)" "${best[compile]}" "$(MIST_JIT_CACHE=0 loads_llvm "$mist" -e "$compile_one")"
if [ -n "$before" ]; then
  awk -v a="${best[after]}" -v b="${best[before]}" 'BEGIN { printf "after/before: %.2fx\n", a / b }'
fi
