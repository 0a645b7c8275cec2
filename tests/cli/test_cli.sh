#!/usr/bin/env bash
# tests/cli/test_cli.sh MIST: the `mist` command line: exit statuses
# (0 success, 1 an error in the program, 2 bad usage), `mist ir` and its
# options, and `--dump`, which prints the pipeline's stages of the
# program and of each module it imports before running it.
set -u
mist=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"

cat > "$dir/lib.ms" <<'MS'
def twice(x):
    return 2 * x
MS
cat > "$dir/prog.ms" <<'MS'
import lib
def sq(x):
    return x * x
print(sq(3) + lib.twice(1))
MS
printf 'print(1 / 0)\n' > "$dir/bad.ms"

expect version 0 '^mist [0-9]' "$mist" --version
expect run 0 '^11$' "$mist" "$dir/prog.ms"
expect runtime-error 1 'bad.ms:1:7: error: division by zero' "$mist" "$dir/bad.ms"
expect missing-file 2 "can't open file" "$mist" "$dir/nope.ms"
expect unknown-option 2 'unknown option --nope' "$mist" --nope "$dir/prog.ms"
# exit(n): the status is n's low 8 bits, as Python's (a negative n was reported as an error)
expect exit-3 3 '^$' "$mist" -e 'exit(3)'
expect exit-negative 255 '^a$' "$mist" -e 'print("a"); exit(-1)'
expect exit-negative-graph 254 '^$' "$mist" --mode=graph -e 'def f():
    exit(-2)
f()'
expect exit-300 44 '^$' "$mist" -e 'exit(300)'

# mist ir: as lowered, after the optimiser (sq(3) + 1 folds), as source, the derivative
expect ir 0 'mul\(%x, %x\)' "$mist" ir "$dir/prog.ms" sq
expect ir-opt 0 'graph @sq\(%x\)' "$mist" ir --opt "$dir/prog.ms" sq
expect ir-grad 0 'graph' "$mist" ir --grad "$dir/prog.ms" sq
expect ir-source 0 'def sq\(x\)' "$mist" ir --source "$dir/prog.ms" sq
expect ir-no-name 1 "no top-level function named 'nope'" "$mist" ir "$dir/prog.ms" nope
expect ir-bad-option 2 'ir: unknown option --nope' "$mist" ir --nope "$dir/prog.ms" sq

# mist ir --types: specialised to argument types, a shape error proven
# before running with the interpreter's message and position
printf 'def add3(x, y):\n    z = x * 2.0\n    return z + y\n' > "$dir/shapes.ms"
expect ir-types 0 'mul\(%x, %x\) : float' "$mist" ir --types "$dir/prog.ms" sq float
expect ir-types-tensor 0 'add\(%z, %y\) : f32\[2,3\]' "$mist" ir --types "$dir/shapes.ms" add3 'f32[2,3]' 'f32[3]'
expect ir-types-error 1 'shapes.ms:3:12: error: add: shapes \(3,\) and \(4,\) cannot be broadcast' \
  "$mist" ir --types "$dir/shapes.ms" add3 'f32[3]' 'f32[4]'
expect ir-types-grad 0 'graph @grad.sq\(%x.*: float\)' "$mist" ir --types --grad "$dir/prog.ms" sq float
expect ir-types-bad-type 2 "bad argument type 'f33\[2\]'" "$mist" ir --types "$dir/prog.ms" sq 'f33[2]'
expect ir-types-arity 1 'prog.ms:[0-9]*:1: error: sq\(\) takes 1 argument but the signature gives 2' "$mist" ir --types "$dir/prog.ms" sq int int

# --dump: each stage of the program and of the module it imports, then the run
out=$("$mist" --dump=ast,ir,opt "$dir/prog.ms" 2>&1)
for want in "# ---- ast: $dir/prog.ms ----" "# ---- ir: $dir/prog.ms ----" \
            "# ---- opt: $dir/prog.ms ----" "# ---- ast: $dir/lib.ms ----" \
            "# ---- opt: $dir/lib.ms ----" "(Def sq (x)" "%3 = @sq(3)"; do
  if ! grep -Fq -- "$want" <<<"$out"; then
    echo "FAIL dump: no line '$want' in:"
    echo "$out" | head -40
    fails=$((fails + 1))
  fi
done
if [ "$(tail -n 1 <<<"$out")" != 11 ]; then
  echo "FAIL dump: the program's output does not follow the stages"
  fails=$((fails + 1))
fi
# the optimiser's copy is printed, the program runs as lowered: the
# traceback keeps the frame of the call that the optimiser inlines
cat > "$dir/tb.ms" <<'MS'
def f(x):
    return x / 0
print(f(1))
MS
expect dump-traceback 1 'tb.ms:2:12 in f' "$mist" --dump=opt "$dir/tb.ms"
expect dump-ir-only 0 '^# ---- ir: ' "$mist" --dump=ir -e 'print(1)'
cat > "$dir/typed.ms" <<'MS'
def sq(x):
    return x * x
print(sq(3.0) + 1)
MS
expect dump-types 0 '%[0-9]+ = \$print\(10\.0\) : ' "$mist" --dump=types "$dir/typed.ms"
# (types of the derivative rules' modules as grad imports them, and of
# tuples with no items: UBSan checks what the rules do with them)
expect dump-types-grad 0 '^2\.0$' "$mist" --dump=types -e 'print(grad(lambda t: t * t)(1.0))'
expect dump-types-empty 0 '^\(\)$' "$mist" --dump=types -e 'print(() + ())'
expect dump-unknown 2 "unknown stage 'typo'" "$mist" --dump=ir,typo "$dir/prog.ms"
expect dump-empty 2 'needs its stages' "$mist" --dump= "$dir/prog.ms"

# the standard library is found beside the binary: an installation's
# share/mist/stdlib (a module only that copy has), or $MIST_STDLIB
mkdir -p "$dir/inst/bin" "$dir/inst/share/mist/stdlib"
cp "$mist" "$dir/inst/bin/mist"
cp "$(dirname "$0")/../../stdlib/"*.ms "$dir/inst/share/mist/stdlib/"
printf 'here = "installed"\n' > "$dir/inst/share/mist/stdlib/only_installed.ms"
expect stdlib-installed 0 '^installed 6.0$' "$dir/inst/bin/mist" -e 'import only_installed; print(only_installed.here, grad(lambda x: x * x * x)(2.0) / 2)'
expect stdlib-env 0 '^installed$' env MIST_STDLIB="$dir/inst/share/mist/stdlib" "$mist" -e 'import only_installed; print(only_installed.here)'
expect stdlib-env-missing 1 "No module named 'nn'" env MIST_STDLIB="$dir/nowhere" "$mist" -e 'import nn'

# io's writes go through a temporary renamed over the path, except where
# that would replace what the path is: a fifo (or a device, /dev/null) is
# written in place, a symbolic link keeps pointing at the file written
mkfifo "$dir/fifo"
timeout 20 cat "$dir/fifo" > "$dir/fifo.read" &
reader=$!
expect write-fifo 0 '^$' "$mist" -e "import io
io.save_npy('$dir/fifo', tensor([1.0]))"
wait "$reader"
[ -p "$dir/fifo" ] && [ -s "$dir/fifo.read" ] || { echo "FAIL write-fifo-kept: $(ls -l "$dir/fifo" "$dir/fifo.read")"; fails=$((fails + 1)); }
echo old > "$dir/target.npy"
ln -s target.npy "$dir/link.npy"
expect write-symlink 0 '^\[2\.0\]$' "$mist" -e "import io
io.save_npy('$dir/link.npy', tensor([2.0]))
print(io.load_npy('$dir/target.npy').tolist())"
[ -L "$dir/link.npy" ] || { echo "FAIL write-symlink-kept: $(ls -l "$dir")"; fails=$((fails + 1)); }

if [ "$fails" -gt 0 ]; then
  echo "$fails failed"
  exit 1
fi
echo "cli: all passed"
