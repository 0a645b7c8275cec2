#!/usr/bin/env bash
# tests/jit/error_scripts.sh MIST SCRIPTS: every error test of the script
# suite (SCRIPTS/**/NAME.ms with a NAME.err) run in eager and in graph
# mode prints the same to stdout and to stderr, byte for byte, with the
# same exit status.  The golden tests compare the first line of stderr
# only (unless their .err holds it all); this compares all of it between
# the modes: the source line, the carets and every traceback line.
set -uo pipefail
mist=$1
scripts=$2
case "$mist" in /*) ;; *) mist="$PWD/$mist" ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mist-errs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
while IFS= read -r err; do
  dir=$(dirname "$err")
  name=$(basename "${err%.err}")
  [ -f "$dir/$name.ms" ] || continue
  # scripts that write files run in their golden test's private copy
  grep -q '^# test: writes files' "$dir/$name.ms" && continue
  args=()
  [ -f "$dir/$name.args" ] && read -r -d '' -a args < "$dir/$name.args"
  input=/dev/null
  [ -f "$dir/$name.in" ] && input="$dir/$name.in"
  for mode in eager graph; do
    flags=()
    [ $mode = graph ] && flags=(--mode=graph)
    (cd "$dir" && exec "$mist" "${flags[@]}" "$name.ms" "${args[@]}") < "$input" > "$tmp/$mode.out" 2> "$tmp/$mode.err"
    echo "exit $?" >> "$tmp/$mode.out"
  done
  n=$((n + 1))
  if ! cmp -s "$tmp/eager.out" "$tmp/graph.out" || ! cmp -s "$tmp/eager.err" "$tmp/graph.err"; then
    bad=$((bad + 1))
    echo "FAIL: $dir/$name.ms: graph mode differs from eager mode"
    diff -u --label eager --label graph "$tmp/eager.out" "$tmp/graph.out"
    diff -u --label eager --label graph "$tmp/eager.err" "$tmp/graph.err"
  fi
done < <(find "$scripts" -name '*.err' | sort)
echo "$n error scripts in both modes: $bad differ"
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
