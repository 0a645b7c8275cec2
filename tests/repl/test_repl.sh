#!/bin/sh
# test_repl.sh: drives the `mist` REPL in a real terminal and checks what
# a user sees.
#
# Usage: tests/repl/test_repl.sh [PATH/TO/mist]    (default: build/mist)
#
# The REPL runs in a detached tmux session of fixed size, on a private
# tmux server (its own socket, no config file), with HOME set to a
# temporary folder so the history goes to a throw-away ~/.mist_history.
# Keys are typed with send-keys and the screen is read with capture-pane;
# every wait polls the screen with a time limit instead of sleeping a
# fixed time.  Before each check the screen is cleared (Ctrl-L at the
# prompt, and the tmux scrollback), so a check sees only its own output.
#
# Exit status: 0 pass, 1 fail (the screen is printed), 77 skip (no tmux).

set -u

MIST=${1:-build/mist}
if ! command -v tmux >/dev/null 2>&1; then
    echo "test_repl: tmux not found, skipped"
    exit 77
fi
if [ ! -x "$MIST" ]; then
    echo "test_repl: no mist binary at $MIST"
    exit 1
fi
MIST=$(cd "$(dirname "$MIST")" && pwd)/$(basename "$MIST")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mist-repl.XXXXXX") || exit 1
mkdir "$TMP/home"
SOCK="$TMP/tmux.sock"
trap 'tmux -S "$SOCK" kill-server >/dev/null 2>&1; rm -rf "$TMP"' EXIT
trap 'exit 1' HUP INT TERM

# The pane runs mist, then prints its exit status and stays open.  The
# shell catches SIGINT (a trap, which mist does not inherit) so that
# Ctrl-C, sent to the whole foreground group, does not end the shell.
cat >"$TMP/run.sh" <<'EOF'
trap : INT
"$MIST_BIN"
echo "[mist exited with status $?]"
exec sleep 600
EOF

tm() { tmux -S "$SOCK" "$@"; }

fail() {
    echo "test_repl: FAIL: $1"
    echo "---- screen ----"
    tm capture-pane -p -t repl 2>&1
    echo "----------------"
    exit 1
}

# The screen's text; a vanished session is a failure at once.
screen() {
    tm capture-pane -p -t repl 2>/dev/null || fail "the tmux session is gone"
}

# wait_for DESCRIPTION GREP-E-PATTERN [SECONDS]: until the screen matches.
wait_for() {
    ticks=$(( ${3:-10} * 20 ))
    while [ "$ticks" -gt 0 ]; do
        screen | grep -Eq -- "$2" && return 0
        sleep 0.05
        ticks=$((ticks - 1))
    done
    fail "$1 (no line matching /$2/)"
}

# wait_prompt DESCRIPTION: until the last non-empty line is a bare prompt.
wait_prompt() {
    ticks=200
    while [ "$ticks" -gt 0 ]; do
        screen | grep -v '^ *$' | tail -n 1 | grep -Eq '^>>> ?$' && return 0
        sleep 0.05
        ticks=$((ticks - 1))
    done
    fail "$1 (no fresh '>>> ' prompt)"
}

# Clear the screen and the scrollback, leaving one prompt at the top.
fresh() {
    tm send-keys -t repl C-l
    tm clear-history -t repl
    ticks=200
    while [ "$ticks" -gt 0 ]; do
        [ "$(screen | grep -cv '^ *$')" = 1 ] && screen | grep -Eq '^>>> ?$' && return 0
        sleep 0.05
        ticks=$((ticks - 1))
    done
    fail "clearing the screen"
}

# enter LINE: type the text and press Enter.
enter() {
    tm send-keys -t repl -l -- "$1"
    tm send-keys -t repl Enter
}

MIST_BIN=$MIST HOME=$TMP/home INPUTRC=/dev/null \
    tmux -S "$SOCK" -f /dev/null new-session -d -s repl -x 100 -y 40 "sh '$TMP/run.sh'" \
    || { echo "test_repl: tmux new-session failed"; exit 1; }

# Start-up: the banner and a prompt.
wait_for "the banner" '^Mist [0-9]+\.[0-9]+\.[0-9]+ .* :help for help, Ctrl-D to leave'
wait_prompt "the first prompt"

# An expression's value is echoed.
fresh
enter '1 + 2'
wait_for "echo of 1 + 2" '^3$'
wait_prompt "prompt after 1 + 2"

# A multi-line definition (ended by an empty line), then a call.
fresh
enter 'def square(x):'
wait_for "continuation prompt" '^\.\.\. ?$'
enter '    return x * x'
enter ''
wait_prompt "prompt after the def"
enter 'square(12)'
wait_for "square(12)" '^144$'
wait_prompt "prompt after square(12)"

# An error is reported, and the REPL goes on.
fresh
enter 'undefined_name_xyz + 1'
wait_for "the error message" 'error:'
wait_prompt "prompt after the error"
enter '100 + 23'
wait_for "a result after the error" '^123$'
wait_prompt "prompt after 100 + 23"

# :help lists the commands.
fresh
enter ':help'
wait_for ":help lists :ir" '^ +:ir NAME'
wait_for ":help lists :quit" '^ +:quit'
wait_prompt "prompt after :help"

# :ir prints the IR of a function of the session (output lines, not the
# typed command, must name it).
fresh
enter ':ir square'
wait_prompt "prompt after :ir"
screen | grep -v '^>>> ' | grep -q 'square' || fail ":ir square does not name the function"
screen | grep -q 'error' && fail ":ir square reported an error"

# :llvm prints the LLVM IR graph mode makes for a function of the
# session and argument types (its end is on the screen: the entry's
# return, and the branch weights of its rare paths).
fresh
enter ':llvm square int'
wait_for ":llvm square int" 'ret i1 %[0-9]+'
wait_prompt "prompt after :llvm"
screen | grep -q 'branch_weights' || fail ":llvm square int: no branch weights at the end"
screen | grep -q 'error' && fail ":llvm square int reported an error"

# An unknown command is reported.
fresh
enter ':frobnicate'
wait_for "unknown command" 'unknown command'
wait_prompt "prompt after an unknown command"

# Ctrl-C stops a running loop: KeyboardInterrupt, then a prompt that works.
fresh
enter 'while True: pass'
sleep 0.5   # let the loop start: a key before it would only be typeahead
screen | grep -v '^ *$' | tail -n 1 | grep -Eq '^>>> while True: pass$' \
    || fail "the loop did not keep running"
tm send-keys -t repl C-c
wait_for "KeyboardInterrupt" 'KeyboardInterrupt' 5
wait_prompt "prompt after Ctrl-C"
enter '5 * 5'
wait_for "a result after Ctrl-C" '^25$'
wait_prompt "prompt after 5 * 5"

# Ctrl-C at the prompt drops the line being typed.
fresh
tm send-keys -t repl -l -- 'dropped_line_xyz'
wait_for "typed text" 'dropped_line_xyz'
tm send-keys -t repl C-c
wait_prompt "prompt after Ctrl-C at the prompt"
enter '6 * 7'
wait_for "a result after a dropped line" '^42$'
wait_prompt "prompt after 6 * 7"
screen | grep -q 'error' && fail "the dropped line was run"

# _ is the last value shown.
fresh
enter '6 * 7'
wait_for "6 * 7" '^42$'
enter '_ + 1'
wait_for "_ + 1" '^43$'
wait_prompt "prompt after _ + 1"

# complete TYPED SHOWN REST RESULT: type TYPED, press Tab, expect the
# line to read SHOWN (a pattern), type REST and Enter, expect RESULT.
complete() {
    tm send-keys -t repl -l -- "$1"
    tm send-keys -t repl Tab
    wait_for "$1 completed" "^>>> $2\$"
    tm send-keys -t repl -l -- "$3"
    tm send-keys -t repl Enter
    wait_for "the completed $1" "$4"
    wait_prompt "prompt after completing $1"
}

# Tab completes a builtin, a method after '.', and a module member.
fresh
complete 'isinst' 'isinstance' '(1, int)' '^True$'
fresh
enter 'word = "abc"'
wait_prompt "prompt after word ="
complete 'word.upp' 'word\.upper' '()' "^'ABC'$"
fresh
enter 'import math'
wait_prompt "prompt after import math"
complete 'math.flo' 'math\.floor' '(2.5)' '^2$'

# Tab on an empty continuation line indents by four spaces.
fresh
enter 'def twice(x):'
wait_for "continuation prompt for twice" '^\.\.\. ?$'
tm send-keys -t repl Tab
tm send-keys -t repl -l -- 'return 2 * x'
tm send-keys -t repl Enter
enter ''
wait_prompt "prompt after def twice"
enter 'twice(21)'
wait_for "twice(21)" '^42$'
wait_prompt "prompt after twice(21)"

# Tab after :load completes a file name.
echo 'loaded_value = 99' > "$TMP/home/to_load_xyz.ms"
fresh
tm send-keys -t repl -l -- ":load $TMP/home/to_lo"
tm send-keys -t repl Tab
wait_for ":load completed" 'to_load_xyz\.ms'
tm send-keys -t repl Enter
wait_prompt "prompt after :load"
enter 'loaded_value'
wait_for "loaded_value" '^99$'
wait_prompt "prompt after loaded_value"

# help(f) prints the signature and the doc comment.
fresh
enter '# Add one.'
wait_prompt "prompt after a comment"
enter 'def inc(n, by=1): return n + by'
wait_prompt "prompt after def inc"
enter 'help(inc)'
wait_for "help's signature" '^inc\(n, by=1\)$'
wait_prompt "prompt after help(inc)"
enter 'help(len)'
wait_for "help(len)" '^len\(obj\)$'
wait_prompt "prompt after help(len)"

# Ctrl-D at a continuation prompt reports the incomplete entry and stays.
fresh
enter 'xs = [1, 2,'
wait_for "continuation prompt" '^\.\.\. ?$'
tm send-keys -t repl C-d
wait_for "incomplete entry reported" "error: '\\[' was never closed"
wait_prompt "prompt after Ctrl-D at ..."
enter '7 + 7'
wait_for "a result after Ctrl-D at ..." '^14$'
wait_prompt "prompt after 7 + 7"

# Ctrl-D leaves with status 0.
fresh
tm send-keys -t repl C-d
wait_for "exit on Ctrl-D" '^\[mist exited with status 0\]$'

# exit() leaves too, with the status asked for.
MIST_BIN=$MIST HOME=$TMP/home INPUTRC=/dev/null \
    tmux -S "$SOCK" -f /dev/null new-session -d -s repl2 -x 100 -y 40 "sh '$TMP/run.sh'" \
    || fail "tmux new-session for exit()"
tm kill-session -t repl
tm rename-session -t repl2 repl
wait_prompt "the prompt of a second REPL"
enter 'exit(3)'
wait_for "exit(3)" '^\[mist exited with status 3\]$'

# The history was written, one line an entry.
HIST=$TMP/home/.mist_history
[ -f "$HIST" ] || fail "no history file at ~/.mist_history"
for entry in '1 + 2' 'def square(x):' 'square(12)' ':help' '5 * 5'; do
    grep -qxF -- "$entry" "$HIST" || fail "history lacks '$entry' (it has: $(cat "$HIST"))"
done

echo "test_repl: PASS"
exit 0
