#!/bin/sh
# check_lessons.sh: the autodiff lessons say what they print.
#
#   check_lessons.sh MIST              check every lesson
#   check_lessons.sh --update MIST     rewrite the .out files from what
#                                      the lessons print now
#
# Each examples/autodiff/NAME.ms has its printout in NAME.out beside it:
# the lesson's commentary describes that printout (the derived programs
# show_source prints, with their names t8, body3_back, _mul_sens...).
# Two checks keep them in step:
#   1. the lesson prints exactly NAME.out;
#   2. every name of a derived program that the commentary quotes (t
#      and a number, a name ending in _back or in _ and a number, J_ or
#      grad_ names, primitives with a leading underscore) appears in
#      NAME.out.
# When a change to autodiff changes a printout, run with --update, read
# the diff of the .out files, and fix the commentary that quotes the
# old names (check 2 lists them).
#
# Exit status: 0 pass, 1 fail.

set -u
update=0
if [ "${1:-}" = "--update" ]; then
    update=1
    shift
fi
MIST=${1:?usage: check_lessons.sh [--update] MIST}
case "$MIST" in /*) ;; *) MIST=$PWD/$MIST ;; esac
DIR=$(cd "$(dirname "$0")/../../examples/autodiff" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mist-lessons.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

fail=0
for ms in "$DIR"/*.ms; do
    name=$(basename "$ms" .ms)
    out="$DIR/$name.out"
    (cd "$DIR" && "$MIST" "$name.ms") > "$TMP/$name.out" 2> "$TMP/$name.err"
    status=$?
    if [ "$status" -ne 0 ]; then
        echo "FAIL: $name.ms exited with status $status"
        cat "$TMP/$name.err"
        fail=1
        continue
    fi
    if [ "$update" -eq 1 ]; then
        cp "$TMP/$name.out" "$out"
        echo "updated $name.out"
    elif [ ! -f "$out" ]; then
        echo "FAIL: $name.ms has no $name.out (run with --update to make it)"
        fail=1
        continue
    elif ! cmp -s "$out" "$TMP/$name.out"; then
        echo "FAIL: $name.ms prints something else than $name.out"
        diff -u --label "$name.out" --label "printed" "$out" "$TMP/$name.out"
        fail=1
    fi
    # the names the commentary quotes, against the printout
    missing=$(grep '^ *#' "$ms" \
        | grep -oE '\b(t[0-9]+|[a-z][a-z0-9]*_back|[a-z][a-z0-9_]*_[0-9]+|J_[a-z][a-z0-9_]*|grad_[a-z][a-z0-9_]*|_[a-z][a-z0-9_]*)\b' \
        | sort -u | while read -r word; do
            grep -qw -- "$word" "$TMP/$name.out" || echo "$word"
        done)
    if [ -n "$missing" ]; then
        echo "FAIL: $name.ms's commentary quotes names its printout lacks:" $missing
        fail=1
    fi
done
[ "$fail" -eq 0 ] && echo "check_lessons: PASS"
exit "$fail"
