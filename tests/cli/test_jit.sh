#!/usr/bin/env bash
# tests/cli/test_jit.sh MIST: graph mode from the command line
# (docs/jit.md): --mode, MIST_JIT_LOG's line per compilation (once per
# function and signature: a seen signature never compiles again),
# MIST_JIT_PERFMAP's map file.
set -u
mist=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"

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
count log-once 1 '^jit: fib\(int\) -> int \(.*fib.ms:1\): ' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/fib.ms"
count log-float 1 '^jit: fib\(float\) -> float .*: ' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/fib.ms"
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

# native code: fib compiles (the code generator loads), and LLVM (in
# libmist_jit.so, or libLLVM.so when it is not linked in) is loaded only
# by a program that compiles something
count native-fib 1 '^jit: fib\(int\) -> int .*: compiled' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/fib.ms"
loads_llvm() { LD_DEBUG=libs "$@" 2>&1 >/dev/null | grep -ciE 'init: .*(libLLVM|libmist_jit)' || true; }
if [ "$(loads_llvm "$mist" -e 'print(1)')" != 0 ]; then
  echo "FAIL no-llvm: mist -e 'print(1)' loaded LLVM"
  fails=$((fails + 1))
fi
if [ "$(loads_llvm "$mist" --mode=graph -e 'print(1)')" != 0 ]; then
  echo "FAIL no-llvm-graph: mist --mode=graph -e 'print(1)' loaded LLVM"
  fails=$((fails + 1))
fi
if [ "$(loads_llvm "$mist" --mode=graph "$dir/fib.ms")" = 0 ]; then
  echo "FAIL llvm-loaded: compiling fib did not load LLVM"
  fails=$((fails + 1))
fi
# a code generator that cannot be loaded: the interpreter runs
# everything, with the same output, and the log says why
expect no-cg 0 '^6765$' env MIST_JIT_LIB=/nonexistent/libmist_jit.so "$mist" --mode=graph "$dir/fib.ms"
count no-cg-why 1 'interpreted .*cannot load the code generator' env MIST_JIT_LOG=1 MIST_JIT_LIB=/nonexistent/libmist_jit.so "$mist" -e 'print(jit(lambda x: x + 1)(2))'

# a global a compiled function read is bound again: compiled again
# (f reads g as a global: g is bound after f's def runs)
cat > "$dir/rebind.ms" <<'MS'
def f(x):
    return g(x) * 2
def g(x):
    return x + 1
print(f(1))
def g(x):
    return x - 1
print(f(1))
MS
expect rebind 0 '^4 0$' bash -c "\"$mist\" --mode=graph \"$dir/rebind.ms\" | tr '\\n' ' ' | sed 's/ $//'"
count rebind-log 1 'bound again' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/rebind.ms"

# the tape of a loop's backward pass (docs/jit.md): a differentiated
# loop keeps its turns on a tape, and errors raised in a taped loop's
# forward pass, or in its backward pass run from a pullback that left
# compiled code, print eager mode's whole message and traceback
cat > "$dir/tape.ms" <<'MS'
def f(a, n):
    x = 1.0
    i = 0
    while i < n:
        x = sqrt(x * a - 0.1 * i) + 0.5
        i += 1
    return x


@jit
def back(a, ct):
    y, pb = vjp(f, a, 6)
    return pb(ct)


print(grad(f)(0.9, 4))
print(back(0.9, 1.0))
print(back(0.9, ARG))
MS
count tape-log 2 'the turns of @J.f.body[0-9]*.back on a tape' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/tape.ms"
for arg in '"one"' '[1.0]' 'None'; do
  for n in 4 40; do
    sed -e "s/ARG/$arg/" -e "s/grad(f)(0.9, 4)/grad(f)(0.9, $n)/" "$dir/tape.ms" > "$dir/tape_err.ms"
    "$mist" "$dir/tape_err.ms" > "$dir/eager.out" 2> "$dir/eager.err"
    eager_rc=$?
    "$mist" --mode=graph "$dir/tape_err.ms" > "$dir/graph.out" 2> "$dir/graph.err"
    graph_rc=$?
    if [ "$eager_rc" != "$graph_rc" ] || ! cmp -s "$dir/eager.out" "$dir/graph.out" || ! cmp -s "$dir/eager.err" "$dir/graph.err"; then
      echo "FAIL tape-error $arg $n: graph mode differs from eager mode (exit $graph_rc, eager $eager_rc)"
      diff "$dir/eager.err" "$dir/graph.err" | head -20
      fails=$((fails + 1))
    fi
  done
done

# a loop with an if in its body keeps its turns on a tape too, each
# turn's entry the union of the branches' backward steps
cat > "$dir/tape_if.ms" <<'MS'
def f(a, n):
    x = a
    for i in range(n):
        if x > 1.0:
            x = sqrt(x) + 0.1 * a
        else:
            x = x * a + 0.3
        x = x * 0.5
    return x


print(grad(f)(0.9, 50))
MS
count tape-if-log 1 'the turns of @J.f.join[0-9]*.back over \(@J.f.if[0-9]*.back \| @J.f.else[0-9]*.back\) on a tape' env MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/tape_if.ms"

# a loop in a loop's turn followed by an if, or left by a break: the
# outer turn's entry is a union of closures over the inner loop's tape;
# and loops three deep, each loop's tape in the entries of the one
# around it
cat > "$dir/tape_deep.ms" <<'MS'
def after_if(a, n):
    x = a
    for i in range(n):
        for j in range(3):
            x = x * a + 0.125
        if x > 0.6:
            x = x * 0.5
        else:
            x = x + 0.1
        x = x * 0.75 + 0.0625
    return x


def leave(a, n):
    x = a
    for i in range(n):
        for j in range(6):
            x = x * a + 0.25
            if x > 2.0:
                break
        x = x / (1.0 + x * x)
    return x


def cube(a, n):
    x = a
    for i in range(n):
        for j in range(n):
            for k in range(3):
                x = x * a + 0.5
                x = x / (1.0 + x * x)
    return x


print(grad(after_if)(0.8, 25), grad(leave)(0.6, 50), grad(cube)(0.7, 12))
MS
count tape-if-after-log 1 'the turns of @J.after_if.join[0-9]*.back over \(@J.after_if.if[0-9]*.back over the tape of @J.after_if.body[0-9]*.back \| @J.after_if.else[0-9]*.back over the tape of @J.after_if.body[0-9]*.back\) on a tape' env MIST_JIT_CACHE=0 MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/tape_deep.ms"
count tape-break-log 1 'the turns of @J.leave.after[0-9]*.back over \(@J.leave.if[0-9]*.back over the tape of @J.leave.else[0-9]*.back \| @J.leave.exit[0-9]*.back over the tape of @J.leave.else[0-9]*.back\) on a tape' env MIST_JIT_CACHE=0 MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/tape_deep.ms"
count tape-deep-log 1 'the turns of @J.cube.after[0-9]*.back over the tape of @J.cube.after[0-9]*.back over the tape of @J.cube.body[0-9]*.back on a tape' env MIST_JIT_CACHE=0 MIST_JIT_LOG=1 "$mist" --mode=graph "$dir/tape_deep.ms"

# mist emit-llvm: the IR of a function for the types named; what is
# not compiled natively says why; bad usage is exit 2
printf 'def sq(x):\n    return x * x\ndef words(n):\n    return [str(i) for i in range(n)]\n' > "$dir/e.ms"
printf 'def scale(t):\n    return t @ t\n' >> "$dir/e.ms"
printf 'def unbound(x):\n    return nothere(x)\n' >> "$dir/e.ms"
printf 'def chain(x, y):\n    return x * y + 1.0\n' >> "$dir/e.ms"
expect emit 0 'fmul double' "$mist" emit-llvm "$dir/e.ms" sq float
expect emit-int 0 'llvm.smul.with.overflow.i64' "$mist" emit-llvm "$dir/e.ms" sq int
expect emit-boxed 0 'mist_rt_call' "$mist" emit-llvm "$dir/e.ms" words int
expect emit-tensor 0 'mist_rt_has_type' "$mist" emit-llvm "$dir/e.ms" scale 'i64[3,3]'
expect emit-matmul 0 'mist_rt_matmul' "$mist" emit-llvm "$dir/e.ms" scale 'f32[3,3]'
expect emit-not-native 1 "unbound is not compiled natively for these types: global 'nothere' is not bound when compiled at .*e.ms:8" "$mist" emit-llvm "$dir/e.ms" unbound int
# a fused loop aligns its frame to its vectors (jit/llvm/fuse.c: the
# vectors it spills around calls must not straddle cache lines)
expect emit-fused-align 0 'alignstack=64 .*"stackrealign"' env MIST_JIT_CPU=x86-64-v4 "$mist" emit-llvm "$dir/e.ms" chain 'f32[1000]' 'f32[1000]'
expect emit-fused-align-v3 0 'alignstack=32 .*"stackrealign"' env MIST_JIT_CPU=x86-64-v3 "$mist" emit-llvm "$dir/e.ms" chain 'f32[1000]' 'f32[1000]'
expect emit-no-name 1 "no top-level function named 'nope'" "$mist" emit-llvm "$dir/e.ms" nope int
expect emit-bad-type 2 "bad argument type 'f33'" "$mist" emit-llvm "$dir/e.ms" sq f33
expect emit-usage 2 'emit-llvm: expected FILE.ms NAME' "$mist" emit-llvm "$dir/e.ms"
expect emit-arity 1 'e.ms:[0-9]*:1: error: sq\(\) takes 1 argument but the signature gives 2' "$mist" emit-llvm "$dir/e.ms" sq int int

# MIST_JIT_PERFMAP=1: /tmp/perf-PID.map names the compiled functions
# (START SIZE NAME, as perf reads it); nothing written without it
MIST_JIT_PERFMAP=1 "$mist" --mode=graph "$dir/fib.ms" >/dev/null 2>&1 &
pid=$!
wait $pid
if ! grep -Eq '^[0-9a-f]+ [0-9a-f]+ mist:fib:m0\.fib\.' "/tmp/perf-$pid.map" 2>/dev/null; then
  echo "FAIL perfmap: /tmp/perf-$pid.map does not name fib"
  fails=$((fails + 1))
fi
rm -f "/tmp/perf-$pid.map"
"$mist" --mode=graph "$dir/fib.ms" >/dev/null 2>&1 &
pid=$!
wait $pid
if [ -e "/tmp/perf-$pid.map" ]; then
  echo "FAIL perfmap-off: /tmp/perf-$pid.map written without MIST_JIT_PERFMAP"
  fails=$((fails + 1))
fi

# a new shape compiles again, a seen one does not; every line of the log,
# the fused loops' too, comes after what the program printed before it
# (stdout flushed first), so that stdout and stderr in one file read in
# order
cat > "$dir/shapes.ms" <<'MS'
@jit
def f(x):
    return x * 2.0 + 1.0
for n in (2, 3, 2):
    print("shape", n, f(ones((n,))).sum())
MS
count shapes-compile 2 '^jit: f\(f32\[[0-9]\]\)' env MIST_JIT_LOG=1 MIST_JIT_CACHE=0 "$mist" "$dir/shapes.ms"
order=$(env MIST_JIT_LOG=1 MIST_JIT_CACHE=0 "$mist" "$dir/shapes.ms" 2>&1 | grep -E '^shape 2|fused .* over f32\[3\]' | head -2 | cut -c1-5 | tr '\n' ' ')
if [ "$order" != "shape jit:  " ]; then
  echo "FAIL log-order: the fused loop of f32[3] logged before the first line printed ($order)"
  fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all jit command-line checks passed"
