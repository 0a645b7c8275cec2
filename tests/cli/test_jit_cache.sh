#!/usr/bin/env bash
# tests/cli/test_jit_cache.sh MIST: graph mode's persistent compile cache
# (docs/jit.md, "The compile cache"): a second run loads the objects the
# first stored and runs no LLVM pass, with the same output and errors; a
# corrupt, truncated or foreign entry is ignored and replaced; a folder
# that cannot be written means no cache, said in the log; the size cap
# prunes; emit-llvm neither reads nor writes it; several processes at
# once; an edited program, globals of other types and shapes and another
# CPU (MIST_JIT_CPU) never meet a stale entry, nor does a function whose
# callee was edited.  Every run here names its own folder
# (MIST_CACHE_DIR or HOME).
set -u
mist=$1
dir=$(mktemp -d)
trap 'chmod -R u+w "$dir" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"
unset XDG_CACHE_HOME MIST_JIT_CACHE MIST_JIT_CACHE_MB
fail() {
  echo "FAIL $1"
  shift
  [ $# -gt 0 ] && printf '%s\n' "$@" | head -20
  fails=$((fails + 1))
}

# two functions, three signatures, and an error raised in compiled code
# (its message, place and traceback come from the sites, not the object)
cat > "$dir/prog.ms" <<'MS'
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
def walk(x, k):
    s = 0.0
    for i in range(k):
        s = s + x * i
    return s
def boom(n):
    return 10 // (n - 3)
print(fib(20), fib(2.0), walk(0.5, 10))
print(boom(4))
print(boom(3))
MS

# run NAME CACHEDIR [ENV...]: the program in graph mode with the log on;
# stdout into NAME.out, stderr into NAME.err
run() {
  local name=$1 cache=$2
  shift 2
  env MIST_JIT_LOG=1 MIST_CACHE_DIR="$cache" "$@" "$mist" --mode=graph "$dir/prog.ms" \
    > "$dir/$name.out" 2> "$dir/$name.err"
  echo $? > "$dir/$name.rc"
}
# the output without the log's lines: stdout, stderr, exit status
result() { cat "$dir/$1.out"; grep -v '^jit: ' "$dir/$1.err"; cat "$dir/$1.rc"; }
compiled() { grep -c ': compiled (' "$dir/$1.err"; }
from_cache() { grep -c ': compiled ([0-9.]* ms): cached: ' "$dir/$1.err"; }
passes_ran() { grep -c 'optimised [0-9.]* ms' "$dir/$1.err"; }
entries() { find "$1" -name '*.o' -type f | wc -l; }

"$mist" "$dir/prog.ms" > "$dir/eager.out" 2> "$dir/eager.err"
echo $? > "$dir/eager.rc"
grep -q 'division or modulo by zero' "$dir/eager.err" || fail eager-error "$(cat "$dir/eager.err")"

# ---- a first run stores, a second loads ----
c=$dir/c1
run first "$c"
run second "$c"
[ "$(result first)" = "$(result eager)" ] || fail first-output "$(result first)"
[ "$(result second)" = "$(result eager)" ] || fail second-output "$(result second)"
n=$(compiled first)
[ "$n" -ge 4 ] || fail first-count "$n functions compiled" "$(cat "$dir/first.err")"
[ "$(passes_ran first)" = "$n" ] || fail first-passes "$(cat "$dir/first.err")"
[ "$(entries "$c")" = "$n" ] || fail first-entries "$(entries "$c") entries for $n functions"
[ "$(compiled second)" = "$n" ] || fail second-count "$(cat "$dir/second.err")"
[ "$(from_cache second)" = "$n" ] || fail second-cached "$(cat "$dir/second.err")"
[ "$(passes_ran second)" = 0 ] || fail second-no-passes "$(cat "$dir/second.err")"
[ -z "$(find "$c" -name '.tmp.*')" ] || fail no-temp-left "$(ls -a "$c/jit")"

# ---- corrupt, truncated and foreign entries: ignored, then replaced ----
mapfile -t objs < <(find "$c" -name '*.o' -type f | sort)
size=$(stat -c %s "${objs[0]}")
head -c $((size / 2)) "${objs[0]}" > "$dir/half" && cat "$dir/half" > "${objs[0]}"     # truncated
printf 'garbage' | dd of="${objs[1]}" bs=1 seek=$((size / 2 + 40)) conv=notrunc 2>/dev/null   # a flipped object
cp "${objs[3]}" "${objs[2]}"                                                            # another key's entry
printf 'not an object' > "${objs[3]}"                                                   # not an entry at all
run corrupt "$c"
[ "$(result corrupt)" = "$(result eager)" ] || fail corrupt-output "$(result corrupt)" "$(cat "$dir/corrupt.err")"
[ "$(passes_ran corrupt)" = 4 ] || fail corrupt-recompiled "$(cat "$dir/corrupt.err")"
[ "$(from_cache corrupt)" = $((n - 4)) ] || fail corrupt-rest-cached "$(cat "$dir/corrupt.err")"
run mended "$c"
[ "$(result mended)" = "$(result eager)" ] || fail mended-output "$(result mended)"
[ "$(from_cache mended)" = "$n" ] || fail mended-cached "$(cat "$dir/mended.err")"

# ---- entries stored where nothing checked: a checking run makes them anew ----
# (a process without MIST_JIT_CACHE_CHECK stores no hash of the module,
# so a check would have nothing to compare: not a stale entry, a miss)
c=$dir/c-unchecked
run unchecked "$c" MIST_JIT_CACHE_CHECK=0
run checked "$c" MIST_JIT_CACHE_CHECK=1
run checked-again "$c" MIST_JIT_CACHE_CHECK=1
for r in unchecked checked checked-again; do
  [ "$(result $r)" = "$(result eager)" ] || fail $r-output "$(result $r)" "$(cat "$dir/$r.err")"
done
[ "$(passes_ran checked)" = "$n" ] || fail unchecked-made-anew "$(cat "$dir/checked.err")"
[ "$(from_cache checked-again)" = "$n" ] || fail checked-cached "$(cat "$dir/checked-again.err")"

# ---- what the code was made from changed: never a stale entry ----
# an edited function compiles again (the others are the same code, and
# come from the cache); the output is the edited program's
sed 's/s = s + x \* i/s = s + x * i + 1.0/' "$dir/prog.ms" > "$dir/edited.ms"
"$mist" "$dir/edited.ms" > "$dir/edited-eager.out" 2>&1
env MIST_JIT_LOG=1 MIST_CACHE_DIR="$c" "$mist" --mode=graph "$dir/edited.ms" > "$dir/edited.out" 2> "$dir/edited.err"
[ "$(cat "$dir/edited.out"; grep -v '^jit: ' "$dir/edited.err")" = "$(cat "$dir/edited-eager.out")" ] ||
  fail edited-output "$(cat "$dir/edited.out" "$dir/edited.err")"
grep -q '^jit: walk(float, int) .*: compiled ([0-9.]* ms): lowered' "$dir/edited.err" || fail edited-recompiled "$(cat "$dir/edited.err")"
grep -q '^jit: fib(int) .*: compiled ([0-9.]* ms): cached: ' "$dir/edited.err" || fail edited-rest-cached "$(cat "$dir/edited.err")"

# a callee's body is part of its callers' code (lowered into their
# modules): editing it alone makes the caller compile anew, never meet
# the entry stored for the old callee
cat > "$dir/callee.ms" <<'MS'
def sq(x):
    return x * x
def f(x):
    s = 0.0
    for i in range(4):
        s = s + sq(x + i)
    return s
print(f(1.5))
MS
sed 's/return x \* x/return x * x + 0.5/' "$dir/callee.ms" > "$dir/callee2.ms"
for v in callee callee2 callee2; do
  "$mist" "$dir/$v.ms" > "$dir/$v-eager.out" 2>&1
  env MIST_JIT_LOG=1 MIST_CACHE_DIR="$dir/c-callee" "$mist" --mode=graph "$dir/$v.ms" > "$dir/$v.out" 2> "$dir/$v.err"
  [ "$(cat "$dir/$v.out"; grep -v '^jit: ' "$dir/$v.err")" = "$(cat "$dir/$v-eager.out")" ] ||
    fail "$v-output" "$(cat "$dir/$v.out" "$dir/$v.err")" "eager: $(cat "$dir/$v-eager.out")"
  # (the first run of the edited program compiles f anew; the second has it cached)
  [ -e "$dir/$v.seen" ] && want='cached: ' || want='lowered'
  grep -q "^jit: f(float) .*: compiled ([0-9.]* ms): $want" "$dir/$v.err" || fail "$v-f-$want" "$(cat "$dir/$v.err")"
  touch "$dir/$v.seen"
done
[ "$(cat "$dir/callee.out")" != "$(cat "$dir/callee2.out")" ] || fail callee-edit-shows "$(cat "$dir/callee.out")"

# the types and shapes of the globals a function reads, from the
# command line: each run prints what eager mode prints for it, whatever
# the runs before it stored
cat > "$dir/globals.ms" <<'MS'
a = args()
n = int(a[0])
G = 2 if a[1] == "int" else 2.5
W = reshape(arange(n * 2) * 0.5, (2, n))
def f(x):
    return sum(W * x) + G
def g(k):
    return k * G
print(f(ones((n,))), g(3), g(1.5))
MS
for run_args in "3 int" "4 int" "3 float" "4 float" "3 int"; do
  tag=${run_args// /-}
  # shellcheck disable=SC2086
  "$mist" "$dir/globals.ms" $run_args > "$dir/g-eager-$tag.out" 2>&1
  # shellcheck disable=SC2086
  env MIST_JIT_LOG=1 MIST_CACHE_DIR="$dir/c-glob" "$mist" --mode=graph "$dir/globals.ms" $run_args \
    > "$dir/g-$tag.out" 2> "$dir/g-$tag.err"
  [ "$(cat "$dir/g-$tag.out"; grep -v '^jit: ' "$dir/g-$tag.err")" = "$(cat "$dir/g-eager-$tag.out")" ] ||
    fail "globals-$tag" "$(cat "$dir/g-$tag.out" "$dir/g-$tag.err")" "eager: $(cat "$dir/g-eager-$tag.out")"
  [ "$(grep -c ': compiled (' "$dir/g-$tag.err")" -ge 3 ] || fail "globals-$tag-compiled" "$(cat "$dir/g-$tag.err")"
done
# the last run is the first one's again: all of it from the cache
[ "$(grep -c ': compiled ([0-9.]* ms): cached: ' "$dir/g-3-int.err")" = "$(grep -c ': compiled (' "$dir/g-3-int.err")" ] ||
  fail globals-again-cached "$(cat "$dir/g-3-int.err")"

# another CPU (MIST_JIT_CPU): its own entries, none of the host's
run cpu "$c" MIST_JIT_CPU=x86-64
[ "$(result cpu)" = "$(result eager)" ] || fail cpu-output "$(result cpu)"
[ "$(from_cache cpu)" = 0 ] || fail cpu-not-host "$(cat "$dir/cpu.err")"
run cpu-again "$c" MIST_JIT_CPU=x86-64
[ "$(from_cache cpu-again)" = "$n" ] || fail cpu-again-cached "$(cat "$dir/cpu-again.err")"
run host-again "$c"
[ "$(result host-again)" = "$(result eager)" ] || fail host-again-output "$(result host-again)"
[ "$(from_cache host-again)" = "$n" ] || fail host-again-cached "$(cat "$dir/host-again.err")"

# ---- a folder that cannot be made or written: no cache, said ----
printf 'a file\n' > "$dir/file"
run unwritable "$dir/file/sub"
[ "$(result unwritable)" = "$(result eager)" ] || fail unwritable-output "$(result unwritable)"
[ "$(grep -c 'no compile cache: cannot make or write .*file/sub/jit' "$dir/unwritable.err")" = "$n" ] ||
  fail unwritable-said "$(cat "$dir/unwritable.err")"
if [ "$(id -u)" != 0 ]; then
  # (root writes anywhere: only a non-root user sees a read-only folder)
  mkdir -p "$dir/ro/jit" && chmod 555 "$dir/ro/jit"
  run readonly "$dir/ro"
  [ "$(result readonly)" = "$(result eager)" ] || fail readonly-output "$(result readonly)"
  grep -q 'no compile cache: cannot make or write' "$dir/readonly.err" || fail readonly-said "$(cat "$dir/readonly.err")"
fi

# ---- MIST_JIT_CACHE=0: nothing read or written, nothing said ----
run off "$dir/c-off" MIST_JIT_CACHE=0
[ "$(result off)" = "$(result eager)" ] || fail off-output "$(result off)"
[ ! -e "$dir/c-off" ] || fail off-wrote "$(ls -R "$dir/c-off")"
[ "$(passes_ran off)" = "$n" ] || fail off-compiled "$(cat "$dir/off.err")"
grep -q 'cache' "$dir/off.err" && fail off-quiet "$(cat "$dir/off.err")"
run off-again "$c" MIST_JIT_CACHE=0
[ "$(from_cache off-again)" = 0 ] || fail off-not-read "$(cat "$dir/off-again.err")"

# ---- where it is by default: $XDG_CACHE_HOME/mist, else ~/.cache/mist ----
env -u MIST_CACHE_DIR HOME="$dir/home" "$mist" --mode=graph "$dir/prog.ms" > /dev/null 2>&1
[ "$(entries "$dir/home/.cache/mist/jit")" = "$n" ] || fail home-default "$(ls -aR "$dir/home" 2>&1)"
env -u MIST_CACHE_DIR HOME="$dir/home2" XDG_CACHE_HOME="$dir/xdg" "$mist" --mode=graph "$dir/prog.ms" > /dev/null 2>&1
[ "$(entries "$dir/xdg/mist/jit")" = "$n" ] || fail xdg "$(ls -aR "$dir/xdg" 2>&1)"
[ ! -e "$dir/home2" ] || fail xdg-not-home "$(ls -aR "$dir/home2")"

# ---- the cap: the entries used longest ago go; a dead writer's temporary file too ----
cap=$dir/c-cap
mkdir -p "$cap/jit"
printf 'x' > "$cap/jit/.tmp.1.0.0" && touch -d '2 hours ago' "$cap/jit/.tmp.1.0.0"
printf 'y' > "$cap/jit/.tmp.2.0.0"
run capped "$cap" MIST_JIT_CACHE_MB=0.004
[ "$(result capped)" = "$(result eager)" ] || fail capped-output "$(result capped)"
total=$(find "$cap" -name '*.o' -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
[ "$total" -le 4194 ] && [ "$(entries "$cap")" -ge 1 ] || fail cap-kept "$total bytes: $(ls -la "$cap/jit")"
[ ! -e "$cap/jit/.tmp.1.0.0" ] || fail cap-old-temp "$(ls -la "$cap/jit")"
[ -e "$cap/jit/.tmp.2.0.0" ] || fail cap-new-temp-kept "$(ls -la "$cap/jit")"
# the last stored (boom's) is the one kept
run capped2 "$cap"
grep -q '^jit: boom(int) .*: compiled ([0-9.]* ms): cached: ' "$dir/capped2.err" || fail cap-newest-kept "$(cat "$dir/capped2.err")"

# ---- several processes at once on an empty folder ----
par=$dir/c-par
for i in 1 2 3 4; do run "par$i" "$par" & done
wait
for i in 1 2 3 4; do
  [ "$(result "par$i")" = "$(result eager)" ] || fail "par$i-output" "$(result "par$i")" "$(cat "$dir/par$i.err")"
done
[ "$(entries "$par")" = "$n" ] || fail par-entries "$(ls -la "$par/jit")"
[ -z "$(find "$par" -name '.tmp.*')" ] || fail par-no-temp "$(ls -a "$par/jit")"
run par-after "$par"
[ "$(from_cache par-after)" = "$n" ] || fail par-after-cached "$(cat "$dir/par-after.err")"

# ---- the same program lowers to the same modules in every process ----
# Derivative programs hold autodiff's keys of free variables'
# sensitivities as constants (once node addresses, different in every
# process), and the choice of what LLVM optimises once followed a map's
# order by address: either made a second run miss the cache.  Nested
# derivatives of closures meet both.
cat > "$dir/nested.ms" <<'MS'
def f(x, y):
    g = lambda t: t * x + sin(t * y)
    return grad(g)(x) * grad(lambda u: u * u * y)(y)
print(grad(f)(1.5, 0.5), grad(grad(lambda x: f(x, 2.0)))(0.7))
print(jacobian(lambda v: (v[0] * v[1], sin(v[0])))((1.0, 2.0)))
MS
# The second run twice: checked (every hit lowered too and compared), and
# not (a hit whose tables were stored is not lowered, and must leave the
# process as a lowering would: the serials of the nodes made after it).
for i in 1 2 3; do
  MIST_CACHE_DIR="$dir/c-nested" MIST_JIT_LOG=1 MIST_JIT_CACHE_CHECK=$((i != 3)) "$mist" --mode=graph "$dir/nested.ms" \
    > "$dir/nested$i.out" 2> "$dir/nested$i.err" || fail "nested$i" "$(cat "$dir/nested$i.err")"
done
for i in 2 3; do
  [ "$(grep -c ': compiled (' "$dir/nested$i.err")" -gt 0 ] || fail nested-compiled "$(cat "$dir/nested$i.err")"
  # (or, for a signature that lowers to a module this process linked
  # already, that code again: LLVM does not run either)
  [ "$(grep -c ': compiled ([0-9.]* ms): \(cached: \|lowered [0-9.]* ms, the same code as before\|tables read, the same code as before\)' "$dir/nested$i.err")" = \
    "$(grep -c ': compiled (' "$dir/nested$i.err")" ] ||
    fail "nested-again-cached-$i" "$(grep ': compiled (' "$dir/nested$i.err" | grep -v 'cached: \|the same code as before')"
  cmp -s "$dir/nested1.out" "$dir/nested$i.out" || fail "nested-output-$i" "$(cat "$dir/nested1.out" "$dir/nested$i.out")"
done
grep -q ': compiled ([0-9.]* ms): cached: tables read, ' "$dir/nested3.err" || fail nested-unlowered "$(cat "$dir/nested3.err")"

# A callee specialised in one process while lowering its caller, and in
# another beforehand (for an earlier function): the caller's entry is the
# same code with the same tables, though the second lowering made no new
# nodes; a checked hit must not call that a stale entry.
cat > "$dir/spec1.ms" <<'MS'
def use0(x):
    return (G0(x), G0(x - 1))
G0 = lambda v: (v, v)
print(use0(3))
MS
cat > "$dir/spec2.ms" <<'MS'
def use0(x):
    return (G0(x), G0(x - 1))
def use1(x):
    return [G0(x)]
G0 = lambda v: (v, v)
print(use1(2))
print(use0(3))
MS
for p in spec1 spec2; do
  MIST_CACHE_DIR="$dir/c-spec" MIST_JIT_LOG=1 MIST_JIT_CACHE_CHECK=1 "$mist" --mode=graph "$dir/$p.ms" \
    > "$dir/$p.out" 2> "$dir/$p.err" || fail "$p" "$(cat "$dir/$p.err")"
done
[ "$(cat "$dir/spec2.out")" = "$(printf '[(2, 2)]\n((3, 3), (2, 2))')" ] || fail spec2-output "$(cat "$dir/spec2.out")"
grep -q 'use0(int).*cached: ' "$dir/spec2.err" || fail spec2-cached "$(cat "$dir/spec2.err")"

# ---- emit-llvm neither reads nor writes the cache ----
MIST_CACHE_DIR="$dir/c-emit" "$mist" emit-llvm "$dir/prog.ms" fib int > "$dir/emit.ll" 2>&1 || fail emit "$(cat "$dir/emit.ll")"
grep -q 'define internal fastcc' "$dir/emit.ll" || fail emit-ir "$(head "$dir/emit.ll")"
[ ! -e "$dir/c-emit" ] || fail emit-wrote "$(ls -R "$dir/c-emit")"

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all compile cache checks passed"
