#!/usr/bin/env bash
# bench/literal_run.sh: compiling a program whose list literal holds n
# distinct float constants must take time linear in n (each constant is
# looked up among the graph's constants when ir/eval.c gives it a slot;
# a linear search there made it quadratic: 133,000 floats took 5.3 s,
# 400,000 took 57 s).
# The same program is timed at n and 8n constants, best of REPEAT runs
# (default 3), by mist and by CPython (which compiles and runs the same
# source), and the script prints each time, mist/python at each size,
# and the growth t(8n) / (8 t(n)): about 1 when linear, about 8 when
# quadratic.
#
#   bench/literal_run.sh            n = 50000
#   N=50000 REPEAT=5 MIST=path/to/mist bench/literal_run.sh
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mist=${MIST:-$root/build/mist}
repeat=${REPEAT:-3}
n=${N:-50000}
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3); fi
fi
if [ ! -x "$mist" ]; then
  echo "bench: $mist not found; run 'make build' first" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# write SIZE FILE: x = [0.5, 1.5, ...] (SIZE distinct floats), then its length
write() {
  "$python" -c "
import sys
n = int(sys.argv[1])
print('x = [' + ', '.join(repr(i + 0.5) for i in range(n)) + ']')
print('print(len(x))')" "$1" > "$2"
}

# best_ms PROG FILE: the best wall-clock time of REPEAT runs, in ms
best_ms() {
  local best="" t
  for _ in $(seq "$repeat"); do
    local t0 t1
    t0=$(date +%s%N)
    "$1" "$2" > /dev/null
    t1=$(date +%s%N)
    t=$(((t1 - t0) / 1000000))
    if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
  done
  echo "$best"
}

write "$n" "$tmp/small.ms"
write $((8 * n)) "$tmp/big.ms"
if [ "$("$mist" "$tmp/big.ms")" != "$((8 * n))" ]; then
  echo "bench: mist did not print $((8 * n)) for the big literal" >&2
  exit 1
fi
ms_small=$(best_ms "$mist" "$tmp/small.ms")
ms_big=$(best_ms "$mist" "$tmp/big.ms")
py_small=$(best_ms "$python" "$tmp/small.ms")
py_big=$(best_ms "$python" "$tmp/big.ms")
awk -v n="$n" -v ms="$ms_small" -v mb="$ms_big" -v ps="$py_small" -v pb="$py_big" 'BEGIN {
  printf "%-24s %10s %10s %12s\n", "list literal", "mist ms", "python ms", "mist/python"
  printf "%-24s %10d %10d %11.2fx\n", n " floats", ms, ps, (ps > 0 ? ms / ps : 0)
  printf "%-24s %10d %10d %11.2fx\n", 8 * n " floats", mb, pb, (pb > 0 ? mb / pb : 0)
  printf "growth t(8n) / (8 t(n)): mist %.2f, python %.2f (1 is linear, 8 quadratic)\n",
         (ms > 0 ? mb / (8 * ms) : 0), (ps > 0 ? pb / (8 * ps) : 0)
}'
