#!/usr/bin/env bash
# tests/cli/test_jit_calls.sh MIST: the call path of compiled code
# (docs/jit.md, "How a function compiles"): a recursion that reaches the
# depth limit fails exactly where eager mode fails, whichever of a
# frame and its inlined twins (which do not check the depth) the last
# level falls in; Ctrl-C stops a compiled recursion.
set -u
mist=$1
. "$(dirname "$0")/lib.sh"

# same_as_eager NAME SRC: graph mode prints what eager mode prints for
# the program SRC, errors, tracebacks and exit status included
same_as_eager() {
  local eager graph
  eager=$("$mist" -e "$2" 2>&1; echo "exit $?")
  graph=$("$mist" --mode=graph -e "$2" 2>&1; echo "exit $?")
  if [ "$eager" != "$graph" ]; then
    echo "FAIL $1: graph mode differs from eager mode:"
    diff <(echo "$eager") <(echo "$graph") | head -10
    fails=$((fails + 1))
  fi
}

# g(k) recurses k levels (h adds one): around mist's limit of 200000,
# each depth, odd and even, gives eager mode's output, error, traceback
# and exit status
for k in $(seq 199994 200001); do
  src="def g(n):
    return 0 if n == 0 else g(n - 1) + 1
def h(n):
    return 1 + g(n)
print(g($k))
print(h($k))"
  same_as_eager "depth-$k" "$src"
done
# the same for recursions with two calls of themselves, whose frames
# inline a chain of twins that do not check the depth (the frame checks
# the whole chain's on entry, and runs its careful copy near the limit)
# and whose calls test the base case before calling (peek.c): the limit
# met in the first call, in the second, or in a recursion called from
# one (fib at every depth, whose frames are entered near the limit at
# each place in their chain)
for k in $(seq 199994 200001); do
  for body in 't(n + 1) + t(-1)' 't(-1) + t(n + 1)' 'fib(6) + t(n + 1)'; do
    src="def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
def t(n):
    if n < 0 or n >= $k:
        return 0
    return $body
print(t(0))"
    same_as_eager "tree-depth-$k ($body)" "$src"
  done
done
# (the range covers both ends: all fine, then failures)
expect depth-fine 0 '^199994$' "$mist" --mode=graph -e 'def g(n):
    return 0 if n == 0 else g(n - 1) + 1
print(g(199994))'
expect depth-fails 1 'maximum recursion depth exceeded' "$mist" --mode=graph -e 'def g(n):
    return 0 if n == 0 else g(n - 1) + 1
print(g(200001))'

# Ctrl-C in a long compiled recursion (fib(50): minutes): stops it with
# KeyboardInterrupt and the traceback, soon after (SIGINT is reset to
# its default for the child: a background job's is ignored)
if command -v python3 > /dev/null; then
  out=$(python3 - "$mist" <<'PY'
import signal, subprocess, sys, time
src = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(50))\n"
p = subprocess.Popen([sys.argv[1], "--mode=graph", "-e", src], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(1.0)
p.send_signal(signal.SIGINT)
try:
    out, err = p.communicate(timeout=20)
except subprocess.TimeoutExpired:
    p.kill()
    print("not stopped 20 s after Ctrl-C")
    sys.exit(0)
print(err.decode("utf-8", "replace")[:400])
PY
)
  if ! grep -q 'error: KeyboardInterrupt' <<<"$out" || ! grep -q ' in fib$' <<<"$out"; then
    echo "FAIL ctrl-c: $out"
    fails=$((fails + 1))
  fi
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all compiled call path checks passed"
