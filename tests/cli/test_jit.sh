#!/usr/bin/env bash
# tests/cli/test_jit.sh MIST: graph mode from the command line
# (docs/jit.md): --mode, MIST_JIT_LOG's line per compilation (once per
# function and signature: a seen signature never compiles again).
set -u
mist=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

# expect NAME STATUS PATTERN COMMAND...: COMMAND exits STATUS and its
# stdout and stderr together match the extended regex PATTERN
expect() {
  local name=$1 status=$2 pattern=$3
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$status" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL $name: exit $rc (expected $status), output:"
    echo "$out" | head -20
    fails=$((fails + 1))
  fi
}

# count NAME WANT PATTERN COMMAND...: COMMAND's stderr has WANT lines
# matching PATTERN
count() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local got
  got=$("$@" 2>&1 >/dev/null | grep -Ec -- "$pattern")
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: $got lines match '$pattern', expected $want:"
    "$@" 2>&1 >/dev/null | head -20
    fails=$((fails + 1))
  fi
}

cat > "$dir/fib.ms" <<'MS'
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
print(fib(20))
print(fib(2.0))
MS

expect mode-graph 0 '^6765$' "$mist" --mode=graph "$dir/fib.ms"
expect mode-eager 0 '^6765$' "$mist" --mode=eager "$dir/fib.ms"
expect mode-and-dump 0 '^# ---- ir: ' "$mist" --mode=graph --dump=ir "$dir/fib.ms"
expect mode-bad 2 "option --mode needs 'eager' or 'graph'" "$mist" --mode=fast "$dir/fib.ms"
expect mode-missing 2 "option --mode needs" "$mist" --mode "$dir/fib.ms"
expect mode-e 0 '^1$' "$mist" --mode=graph -e 'print(1)'

# one line per signature: fib(int) once for its 21891 calls, fib(float) once
count log-once 1 '^jit: fib\(int\) -> int: ' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/fib.ms"
count log-float 1 '^jit: fib\(float\) -> float: ' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/fib.ms"
count log-eager 0 '^jit: ' env MIST_JIT_LOG=1 "$mist" "$dir/fib.ms"
count log-off 0 '^jit: ' "$mist" --mode=graph "$dir/fib.ms"
count log-jit-call 1 '^jit: <lambda>\(int\)' env MIST_JIT_LOG=1 "$mist" -e 'sq = jit(lambda x: x * x)
print(sq(3), sq(4))'
count log-set-mode 1 '^jit: sq\(int\)' env MIST_JIT_LOG=1 "$mist" -e 'def sq(x):
    return x * x
print(sq(1))
set_mode("graph")
print(sq(2))
set_mode("eager")
print(sq(3))'

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all jit command-line checks passed"
