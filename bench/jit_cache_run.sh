#!/usr/bin/env bash
# bench/jit_cache_run.sh: what graph mode's persistent compile cache
# saves (docs/jit.md, "The compile cache").  Each program runs twice in
# graph mode on a new, empty cache folder: the first run compiles with
# LLVM and stores the objects, the second loads them.  Printed, as the
# median over REPEAT such pairs: the functions compiled, the time all
# their compilations took in each run (the sum of MIST_JIT_LOG's
# "compiled (X ms)"), the slowest one, the ratio, and the time loading
# LLVM took (once per process, in both runs, not in the sums).  The
# issue's target: a cached second run's compilation < 20 ms.
#
#   bench/jit_cache_run.sh [FILE.ms...]   default: the programs below
#   MIST=path/to/mist REPEAT=5 bench/jit_cache_run.sh
#   ARGS='1 step' FROM=run_step bench/jit_cache_run.sh bench/grad/mlp2.ms
#     (the program's arguments; and only the compilations from the first
#     whose log line matches FROM on: mlp2.ms's training step)
#   CPU_CLOCK=1 ...: the log's times are the compiling thread's CPU time
#     (bench/cpuclock.c, through LD_PRELOAD), for a machine too loaded
#     for wall-clock times
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mist=${MIST:-$root/build/mist}
repeat=${REPEAT:-5}
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=("$here/jit/fib.ms" "$here/jit/loop.ms" "$root/examples/tour.ms"
                                  "$root/tests/scripts/autodiff/rules.ms")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
preload=
if [ "${CPU_CLOCK:-0}" = 1 ]; then
  ${CC:-cc} -O2 -shared -fPIC -o "$work/cpuclock.so" "$here/cpuclock.c" -ldl
  preload=$work/cpuclock.so
fi

# one run: "COUNT SUM MAX LOAD" from its log
run() {
  local prog=$1 cache=$2 log=$work/log
  # shellcheck disable=SC2086
  (cd "$(dirname "$prog")" && LD_PRELOAD=$preload MIST_CACHE_DIR=$cache MIST_JIT_LOG=1 "$mist" --mode=graph "$(basename "$prog")" ${ARGS:-} \
     </dev/null >/dev/null 2>"$log") || true
  awk -v from="${FROM:-}" '/^jit: the code generator .* loaded in/ { load = $(NF - 1) }
       from != "" && $0 ~ from { from = "" }
       from == "" && /: compiled \(/ { s = $0; sub(/.*: compiled \(/, "", s); sub(/ ms\).*/, "", s); s += 0   # (a number: compared as one)
                         n++; sum += s; if (s > max) max = s }
       END { printf "%d %.2f %.2f %.2f\n", n, sum, max, load }' "$log"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "mist: $mist, graph mode, $repeat pairs of runs on a new cache folder each; medians, ms"
printf '%-22s %5s %10s %10s %10s %10s %8s %9s\n' program funcs first cached 'max first' 'max cached' ratio 'LLVM load'
for prog in "${progs[@]}"; do
  : > "$work/first" && : > "$work/second"
  for ((i = 0; i < repeat; i++)); do
    rm -rf "$work/cache"
    run "$prog" "$work/cache" >> "$work/first"
    run "$prog" "$work/cache" >> "$work/second"
  done
  n=$(awk '{ print $1 }' "$work/first" | median)
  n2=$(awk '{ print $1 }' "$work/second" | median)
  [ "$n" = "$n2" ] || echo "warning: $prog: $n compilations in the first run, $n2 in the second" >&2
  f=$(awk '{ print $2 }' "$work/first" | median)
  s=$(awk '{ print $2 }' "$work/second" | median)
  fm=$(awk '{ print $3 }' "$work/first" | median)
  sm=$(awk '{ print $3 }' "$work/second" | median)
  ld=$(awk '{ print $4 }' "$work/first" "$work/second" | median)
  printf '%-22s %5s %10.2f %10.2f %10.2f %10.2f %7.1fx %9.2f\n' "$(basename "$prog")" "$n" "$f" "$s" "$fm" "$sm" \
    "$(awk -v a="$f" -v b="$s" 'BEGIN { print (b > 0 ? a / b : 0) }')" "$ld"
done
