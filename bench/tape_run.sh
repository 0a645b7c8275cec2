#!/usr/bin/env bash
# bench/tape_run.sh: the backward pass of loops whose turns compiled
# code keeps on a tape (docs/jit.md, "The tape of a loop's backward
# pass"), in graph mode: for each bench/tape/NAME.ms, the function's
# time, its gradient's, and the gradient over the function.  With
# BEFORE=path/to/another/mist (the binary before a change), each round
# runs both binaries one after the other and prints the ratio of their
# gradients' times (this machine's noise hits both alike); each binary
# has a compile cache of its own.  Best of REPEAT runs in a process,
# ROUNDS rounds.
#
#   bench/tape_run.sh [NAME...]          default: every bench/tape/*.ms
#   BEFORE=/work/main/build/mist ROUNDS=3 REPEAT=7 bench/tape_run.sh if_loop
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mist=${MIST:-$root/build/mist}
before=${BEFORE:-}
rounds=${ROUNDS:-3}
repeat=${REPEAT:-7}
for b in "$mist" $before; do
  if [ ! -x "$b" ]; then
    echo "bench: $b not found; run 'make build' first" >&2
    exit 1
  fi
done
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$here"/tape/*.ms; do names+=("$(basename "$f" .ms)"); done
fi
caches=$(mktemp -d)
trap 'rm -rf "$caches"' EXIT

# "f_ms X check Y" and "grad_ms X check Y" of one run: "F G"
run() {
  MIST_CACHE_DIR="$caches/$2" "$1" --mode=graph "$here/tape/$3.ms" "$repeat" |
    awk '/^f_ms/ {f = $2} /^grad_ms/ {g = $2} END {print f, g}'
}

status=0
for name in "${names[@]}"; do
  for r in $(seq "$rounds"); do
    read -r f g < <(run "$mist" after "$name")
    if [ -z "$g" ]; then
      echo "$name: failed"
      status=1
      continue
    fi
    line=$(awk -v f="$f" -v g="$g" 'BEGIN {printf "f %.3f ms, grad %.3f ms, grad/f %.2f", f, g, g / f}')
    if [ -n "$before" ]; then
      read -r bf bg < <(run "$before" before "$name")
      line="$line; before: $(awk -v f="$bf" -v g="$bg" -v a="$g" \
        'BEGIN {printf "f %.3f ms, grad %.3f ms, grad/f %.2f; grad before/after %.2f", f, g, g / f, g / a}')"
    fi
    echo "$name round $r: $line"
  done
done
exit $status
