#!/usr/bin/env bash
# bench/instr_run.sh: the interpreter's instruction counts (valgrind's
# callgrind, which a loaded machine does not disturb) for the scalar
# benchmarks, one build beside another: the check that a change leaves
# eager mode no slower.
#
#   bench/instr_run.sh BEFORE_MIST [AFTER_MIST] [NAME...]   default AFTER: build/mist; NAMEs: fib loop closure
#
# Prints each NAME's instructions under both binaries and after/before.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
before="${1:?usage: bench/instr_run.sh BEFORE_MIST [AFTER_MIST] [NAME...]}"
after="${2:-$here/../build/mist}"
shift $(( $# >= 2 ? 2 : 1 ))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fib loop closure)
command -v valgrind > /dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
instr() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-10s %16s %16s %8s\n' bench before after ratio
for n in "${names[@]}"; do
  b=$(instr "$before" "$here/$n.ms")
  a=$(instr "$after" "$here/$n.ms")
  awk -v n="$n" -v b="$b" -v a="$a" 'BEGIN { printf "%-10s %16.0f %16.0f %8.3f\n", n, b, a, a / b }'
done
