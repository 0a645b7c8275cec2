#!/usr/bin/env bash
# tests/cli/test_cli_edges.sh MIST: the command line given what users
# give it by mistake or by accident: each command without its
# arguments or with bad ones (exit 2, a usage message on stderr), files
# that are not there or are folders, empty files, a byte-order mark,
# CRLF or no final newline, bytes that are not UTF-8, a NUL, very long
# and very deep lines (a clear error with its position, exit 1, never a
# crash), `-e` with several lines, the options in either order, and
# `emit-ptx`, whose backend is not built (a clear error, exit 1).
set -u
mist=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/lib.sh"

# expect_err NAME STATUS PATTERN COMMAND...: as expect, and the pattern
# is in stderr alone (stdout stays clean of the error)
expect_err() {
  local name=$1 status=$2 pattern=$3
  shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != "$status" ] || ! grep -Eq -- "$pattern" <<<"$err"; then
    echo "FAIL $name: exit $rc (expected $status), stderr:"
    echo "$err" | head -20
    fails=$((fails + 1))
  fi
}

printf 'def sq(x):\n    return x * x\nprint(sq(3))\n' > "$dir/ok.ms"

# ---- usage errors: exit 2, the message and the usage on stderr
expect_err ir-nothing 2 '^mist: ir: expected FILE.ms NAME' "$mist" ir
expect_err ir-no-name 2 'ir: expected FILE.ms NAME' "$mist" ir "$dir/ok.ms"
expect_err ir-extra 2 "ir: unexpected argument 'extra'" "$mist" ir "$dir/ok.ms" sq extra
expect_err ir-dir 2 "can't open file '$dir': Is a directory" "$mist" ir "$dir" sq
expect_err ir-types-source 2 'ir: --types cannot be combined with --source' "$mist" ir --types --source "$dir/ok.ms" sq
expect_err ir-types-source-typed 2 'ir: --types cannot be combined with --source' "$mist" ir --types --source "$dir/ok.ms" sq float
# ir's options anywhere, the argument types after --types or before it
expect ir-types-grad-last 0 'graph @grad.sq\(%x[.0-9]*: float\)' "$mist" ir --types "$dir/ok.ms" sq float --grad
expect ir-types-after 0 'mul\(%x, %x\) : float' "$mist" ir "$dir/ok.ms" sq --types float
expect ir-opt-last 0 'graph @sq\(%x\)' "$mist" ir "$dir/ok.ms" sq --opt
expect_err ir-types-without 2 "ir: unexpected argument 'float' \(argument types go with --types\)" "$mist" ir "$dir/ok.ms" sq float
expect_err ir-types-bad 2 "ir: bad argument type 'f32\[2'" "$mist" ir --types "$dir/ok.ms" sq 'f32[2'
expect_err llvm-nothing 2 'emit-llvm: expected FILE.ms NAME ARGTYPES' "$mist" emit-llvm
expect_err llvm-no-name 2 'emit-llvm: expected FILE.ms NAME ARGTYPES' "$mist" emit-llvm "$dir/ok.ms"
expect_err llvm-bad-type 2 "emit-llvm: bad argument type 'floaty'" "$mist" emit-llvm "$dir/ok.ms" sq floaty
expect_err llvm-option 2 'emit-llvm: unknown option --grad' "$mist" emit-llvm --grad "$dir/ok.ms" sq float
expect_err llvm-missing 2 "can't open file '$dir/nope.ms'" "$mist" emit-llvm "$dir/nope.ms" sq float
expect_err llvm-arity 1 'ok.ms:1:1: error: sq\(\) takes 1 argument but the signature gives 2' "$mist" emit-llvm "$dir/ok.ms" sq float float
expect_err llvm-no-function 1 "no top-level function named 'nope'" "$mist" emit-llvm "$dir/ok.ms" nope float
expect_err e-nothing 2 'option -e needs an argument' "$mist" -e
expect_err mode-empty 2 "option --mode needs 'eager' or 'graph'" "$mist" --mode= "$dir/ok.ms"
expect_err mode-bad 2 "option --mode needs 'eager' or 'graph'" "$mist" --mode=fast "$dir/ok.ms"
expect_err dump-bare 2 'option --dump needs its stages' "$mist" --dump "$dir/ok.ms"
expect_err dash-dash 2 'expected FILE.ms after --' "$mist" --
expect_err dir 2 "can't open file '$dir': Is a directory" "$mist" "$dir"
expect_err usage-lines 2 '^usage: mist ' "$mist" --bogus

# ---- emit-ptx: its command line is checked, then the missing backend says so
expect_err ptx 1 '^mist: emit-ptx: the GPU backend is not built yet' "$mist" emit-ptx "$dir/ok.ms" sq float
expect_err ptx-nothing 2 'emit-ptx: expected FILE.ms NAME ARGTYPES' "$mist" emit-ptx
expect_err ptx-bad-type 2 "emit-ptx: bad argument type 'f99'" "$mist" emit-ptx "$dir/ok.ms" sq f99
expect_err ptx-missing 2 "can't open file '$dir/nope.ms'" "$mist" emit-ptx "$dir/nope.ms" sq float
expect help-ptx 0 'emit-ptx FILE.ms NAME ARGTYPES' "$mist" --help

# ---- files of every shape
: > "$dir/empty.ms"
expect empty 0 '^$' "$mist" "$dir/empty.ms"
printf '\xef\xbb\xbfprint("bom")\n' > "$dir/bom.ms"
expect bom 0 '^bom$' "$mist" "$dir/bom.ms"
printf 'def f(x):\r\n    return x + 1\r\nprint(f(1))\r\nprint(1 / 0)\r\n' > "$dir/crlf.ms"
expect crlf 1 'crlf.ms:4:7: error: division by zero' "$mist" "$dir/crlf.ms"
expect crlf-output 1 '^2$' "$mist" "$dir/crlf.ms"
printf 'print(7)' > "$dir/nonl.ms"
expect no-final-newline 0 '^7$' "$mist" "$dir/nonl.ms"
printf 'print(1 / 0)' > "$dir/nonl-err.ms"
expect_err no-final-newline-error 1 'nonl-err.ms:1:7: error: division by zero' "$mist" "$dir/nonl-err.ms"
printf 'print(1)\nx = "\xff"\n' > "$dir/latin1.ms"
expect_err not-utf8 1 'latin1.ms:2:6: error: invalid UTF-8: byte 0xff' "$mist" "$dir/latin1.ms"
# a NUL byte: the error keeps the rest of the line and its caret
printf 'x = 1\0\nprint(x)\n' > "$dir/nul.ms"
err=$("$mist" "$dir/nul.ms" 2>&1 >/dev/null)
want="$dir/nul.ms:1:6: error: source code cannot contain null bytes
    x = 1"$'\xef\xbf\xbd'"
         ^"
[ "$err" = "$want" ] || { echo "FAIL nul-caret: stderr:"; echo "$err"; fails=$((fails + 1)); }
python3 -c "print('x = ' + '1+' * 100000 + '1')" > "$dir/long.ms"
expect_err long-line 1 'long.ms:1:5: error: expression too long' "$mist" "$dir/long.ms"
python3 -c "print('x = ' + '(' * 100000 + '1' + ')' * 100000)" > "$dir/deep.ms"
expect_err deep-parens 1 'deep.ms:1:[0-9]+: error: too many nested parentheses' "$mist" "$dir/deep.ms"
python3 -c "print('x = ' + '-' * 100000 + '1')" > "$dir/deep-unary.ms"
expect_err deep-unary 1 'deep-unary.ms:1:[0-9]+: error: expression too deeply nested' "$mist" "$dir/deep-unary.ms"
python3 -c "
for i in range(400): print(' ' * 4 * i + 'if True:')
print(' ' * 1600 + 'x = 1')" > "$dir/deep-blocks.ms"
out=$("$mist" "$dir/deep-blocks.ms" 2>&1)
rc=$?
if [ "$rc" -gt 1 ] || { [ "$rc" = 1 ] && ! grep -Eq 'deep-blocks.ms:[0-9]+:[0-9]+: error: ' <<<"$out"; }; then
  echo "FAIL deep-blocks: exit $rc: $(head -3 <<<"$out")"
  fails=$((fails + 1))
fi

# ---- -e with several lines: the traceback, innermost last, in both modes
src='def f(x):
    return g(x)
def g(y):
    return y / 0
f(1)'
for mode in eager graph; do
  err=$("$mist" --mode=$mode -e "$src" 2>&1 >/dev/null)
  rc=$?
  want='<string>:4:12: error: division by zero
        return y / 0
               ^^^^^
Traceback (innermost last):
  <string>:5:1 in <module>
  <string>:2:12 in f
  <string>:4:12 in g'
  [ "$rc" = 1 ] && [ "$err" = "$want" ] || { echo "FAIL e-traceback-$mode: exit $rc:"; echo "$err"; fails=$((fails + 1)); }
done

# ---- options in either order; what follows the program is its args()
expect mode-dump 0 '^# ---- ir: <string> ----' "$mist" --mode=graph --dump=ir -e 'print(1)'
expect dump-mode 0 '^# ---- ir: <string> ----' "$mist" --dump=ir --mode=graph -e 'print(1)'
expect mode-twice 0 "^\['a'\]$" "$mist" --mode=graph --mode=eager -e 'print(args())' a
printf 'print(args())\n' > "$dir/args.ms"
expect args-after 0 "^\['--mode=graph', 'b c', '-e'\]$" "$mist" "$dir/args.ms" --mode=graph 'b c' -e
expect args-graph 0 "^\['x'\]$" "$mist" --mode=graph "$dir/args.ms" x
expect args-stdin 0 "^\['y'\]$" sh -c "printf 'print(args())' | '$mist' - y"

# ---- standard input and output
expect stdin-program 0 '^9$' sh -c "printf 'def f(x):\n    return x * x\nprint(f(3))\n' | '$mist'"
expect stdin-empty 0 '^$' sh -c "'$mist' < /dev/null"
expect_err stdout-full 1 'error writing standard output' sh -c "'$mist' -e 'print(1)' > /dev/full"
expect exit-status 3 '^$' "$mist" -e 'exit(3)'
expect_err exit-message 1 '^bye$' "$mist" -e 'exit("bye")'
# the status's low byte, as the OS and Python keep it: exit(-1) is 255,
# not an error "failed (no message)" with status 1
expect exit-negative 255 '^$' "$mist" -e 'exit(-1)'
expect exit-wraps 0 '^$' "$mist" -e 'exit(256)'
expect exit-big 0 '^$' "$mist" -e 'exit(2 ** 40)'

if [ "$fails" -gt 0 ]; then
  echo "$fails failed"
  exit 1
fi
echo "cli edges: all passed"
