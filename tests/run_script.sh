#!/usr/bin/env bash
# run_script.sh: the golden-test harness for Mist scripts.
#
#   run_script.sh MIST DIR/NAME.ms [MIST_FLAGS...]
#       Run `MIST [MIST_FLAGS...] NAME.ms [ARGS...]` with DIR as the working
#       directory and check it against the files beside the script:
#         NAME.args  words passed after NAME.ms (optional)
#         NAME.in    piped to stdin (optional; /dev/null otherwise)
#         NAME.out   expected stdout, compared byte for byte (missing: empty)
#         NAME.err   expected FIRST line of stderr, such as
#                    "NAME.ms:3:7: error: division by zero" (a trailing
#                    "..." makes it a prefix match), or, when it has
#                    several lines, the whole of stderr (traceback and
#                    all); its presence means the run must exit with
#                    status 1.  Without it the
#                    run must exit 0 and write nothing to stderr.
#
#   run_script.sh --no-crash MIST FILE [MIST_FLAGS...]
#       Run FILE and pass when mist exits 0 or 1 (a clean result or a
#       reported error), whatever it prints: for fuzzer regressions.
#
#   run_script.sh --exit0 MIST FILE [MIST_FLAGS...]
#       Run FILE and pass when mist exits 0, whatever it prints: for examples.
#
# Exit status: 0 pass, 1 fail, 2 bad usage.  On a failure it prints what
# differed (a unified diff for stdout) so ctest --output-on-failure shows it.
set -uo pipefail

mode=golden
case "${1:-}" in
  --no-crash) mode=nocrash; shift ;;
  --exit0) mode=exit0; shift ;;
esac
if [ $# -lt 2 ]; then
  echo "usage: $0 [--no-crash|--exit0] MIST FILE.ms [MIST_FLAGS...]" >&2
  exit 2
fi

mist=$1
script=$2
shift 2
flags=("$@")

case "$mist" in
  /*) ;;
  *) mist="$PWD/$mist" ;;
esac
if [ ! -x "$mist" ]; then
  echo "FAIL: mist binary not found or not executable: $mist" >&2
  exit 1
fi
if [ ! -f "$script" ]; then
  echo "FAIL: no such script: $script" >&2
  exit 1
fi

dir=$(cd "$(dirname "$script")" && pwd)
name=$(basename "$script")
stem="$dir/${name%.*}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mist-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

args=()
if [ -f "$stem.args" ]; then
  # Words separated by white space; no quoting.
  read -r -d '' -a args < "$stem.args"
fi
input=/dev/null
if [ -f "$stem.in" ]; then
  input="$stem.in"
fi

# A script that writes files (marked "# test: writes files") runs in a
# private copy of its folder (scripts and the files they read), so its
# eager and graph runs, which ctest may start at the same time, never
# write the same file.  Any other script must leave its folder as it
# found it.
private=false
if grep -q '^# test: writes files' "$script"; then
  mkdir "$tmp/cwd"
  cp -R "$dir"/. "$tmp/cwd/"
  dir="$tmp/cwd"
  private=true
fi
ls -A "$dir" > "$tmp/files.before"

(cd "$dir" && exec "$mist" "${flags[@]}" "$name" "${args[@]}") \
  < "$input" > "$tmp/stdout" 2> "$tmp/stderr"
status=$?

if ! $private && ! ls -A "$dir" | cmp -s - "$tmp/files.before"; then
  echo "FAIL: $script made or removed files in its folder; mark it '# test: writes files':" >&2
  ls -A "$dir" | diff "$tmp/files.before" - >&2
  exit 1
fi

show_stderr() {
  echo "--- stderr ---"
  cat "$tmp/stderr"
}

describe() {
  # 128+N is how bash reports death by signal N.
  if [ "$status" -gt 128 ]; then
    echo "exit status $status (killed by signal $((status - 128)): $(kill -l $((status - 128)) 2>/dev/null || echo '?'))"
  else
    echo "exit status $status"
  fi
}

case "$mode" in
  nocrash)
    if [ "$status" -eq 0 ] || [ "$status" -eq 1 ]; then exit 0; fi
    echo "FAIL: $name: expected exit status 0 or 1, got $(describe)"
    show_stderr
    exit 1 ;;
  exit0)
    if [ "$status" -eq 0 ]; then exit 0; fi
    echo "FAIL: $name: expected exit status 0, got $(describe)"
    show_stderr
    exit 1 ;;
esac

fail=0

# stdout, exactly.
expected_out="$stem.out"
if [ ! -f "$expected_out" ]; then
  expected_out="$tmp/empty"
  : > "$expected_out"
fi
if ! cmp -s "$expected_out" "$tmp/stdout"; then
  echo "FAIL: $name: stdout differs from ${name%.*}.out"
  diff -u --label expected --label actual "$expected_out" "$tmp/stdout"
  fail=1
fi

if [ -f "$stem.err" ]; then
  # An error test: status 1 and the expected first line of stderr.
  IFS= read -r want < "$stem.err" || true
  IFS= read -r got < "$tmp/stderr" || true
  if [ "$status" -ne 1 ]; then
    echo "FAIL: $name: expected exit status 1 (an error), got $(describe)"
    fail=1
  fi
  # A .err of several lines is the whole of stderr (the traceback
  # included); a .err line ending in "..." matches any first line that
  # starts with the rest (for long messages whose tail may still change).
  if [ "$(wc -l < "$stem.err")" -gt 1 ]; then
    match=0
    cmp -s "$stem.err" "$tmp/stderr" && match=1
  elif [ "${want%...}" != "$want" ]; then
    match=0
    case "${got:-}" in "${want%...}"*) match=1 ;; esac
  else
    match=0
    [ "$want" = "${got:-}" ] && match=1
  fi
  if [ "$match" -ne 1 ]; then
    echo "FAIL: $name: stderr differs from ${name%.*}.err"
    if [ "$(wc -l < "$stem.err")" -gt 1 ]; then
      diff -u --label expected --label actual "$stem.err" "$tmp/stderr"
    else
      echo "expected: $want"
      echo "actual:   ${got:-<no stderr>}"
    fi
    fail=1
  fi
  if [ "$fail" -ne 0 ]; then show_stderr; fi
else
  if [ "$status" -ne 0 ]; then
    echo "FAIL: $name: expected exit status 0, got $(describe)"
    fail=1
  fi
  if [ -s "$tmp/stderr" ]; then
    echo "FAIL: $name: expected empty stderr"
    fail=1
  fi
  if [ "$fail" -ne 0 ]; then show_stderr; fi
fi

exit "$fail"
