#!/usr/bin/env bash
# bench/update_run.sh: updates of lists, dicts and tensors in a loop
# (xs[i] = v, d[k] = v, xs = xs + [v], t[i] = v), which values being
# immutable must not make slow, against CPython and NumPy doing the same,
# and the reads (indexing, iteration, printing) that versioned containers
# must not make slower.  Each bench/update/NAME.ms times its cases in one
# process (best of REPEAT runs after a 0.3 s warm-up) and prints
# "CASE ms MS check CHECK"; its twin NAME.py (CPython; NumPy for the
# tensors) does the same, and the script prints the ratio mist/baseline
# beside the target where the design sets one.
#
#   bench/update_run.sh [NAME...]      default: sieve wordcount tensor_set append read
#   REPEAT=10 MIST=path/to/mist PYTHON=python3 bench/update_run.sh
#   MIST_BEFORE=path/to/older/mist bench/update_run.sh   adds that binary's
#       figures and the ratio after/before (the same programs, the same run)
#
# A case whose check value differs from the baseline's is reported; the
# exit status is then 1, as when a program fails.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
dir=$here/update
mist=${MIST:-$root/build/mist}
before=${MIST_BEFORE:-}
repeat=${REPEAT:-5}
limit=${TIMEOUT:-600}

if [ ! -x "$mist" ]; then
  echo "bench: $mist not found; run 'make build' first" >&2
  exit 1
fi
case "$mist" in /*) ;; *) mist=$PWD/$mist ;; esac
case "$before" in ""|/*) ;; *) before=$PWD/$before ;; esac

# Debian's own python3 first (python3-numpy installs there; a pyenv shim
# in front of it may have no NumPy).
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3 || true); fi
fi

if [ $# -gt 0 ]; then names=("$@"); else names=(sieve wordcount tensor_set append read); fi

export PYTHONDONTWRITEBYTECODE=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run_to FILE PROG ARGS...: run in bench/update, stdout to FILE; status returned.
run_to() {
  local f=$1
  shift
  (cd "$dir" && timeout "$limit" "$@" "$repeat" > "$f" 2> "$tmp/err")
}
field() { awk -v c="$2" '$1 == c && $2 == "ms" { print $3; exit }' "$1"; }
check_of() { awk -v c="$2" '$1 == c && $2 == "ms" { print $5; exit }' "$1"; }
ratio() {
  if [ -z "$1" ] || [ -z "$2" ]; then echo "-"; return; fi
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'
}
ms() { if [ -z "$1" ]; then echo "-"; else awk -v t="$1" 'BEGIN { printf "%.2f", t }'; fi; }
target() {
  case "$1" in
    sieve|wordcount) echo "3x CPython" ;;
    tensor_set) echo "10x NumPy" ;;
    *) echo "-" ;;
  esac
}

echo "mist: $mist ($("$mist" --version 2>/dev/null || echo '?'))"
[ -n "$before" ] && echo "before: $before"
echo "baseline: ${python:-none} ($("${python:-false}" --version 2>&1 || echo 'not found'); NumPy $("${python:-false}" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo 'not installed'))"
echo "best of $repeat timed runs after a 0.3 s warm-up, in one process; times in ms"
echo
fmt='%-13s %10s %10s %10s %12s'
bfmt=' %10s %13s'
printf "$fmt" case mist baseline ratio target
[ -n "$before" ] && printf "$bfmt" before after/before
echo
printf "$fmt" ------------- ---------- ---------- ---------- ------------
[ -n "$before" ] && printf "$bfmt" ---------- -------------
echo

status=0
notes=()
for name in "${names[@]}"; do
  if [ ! -f "$dir/$name.ms" ]; then
    echo "bench: no $dir/$name.ms" >&2
    status=1
    continue
  fi
  if ! run_to "$tmp/mist" "$mist" "$name.ms"; then
    notes+=("$name: mist failed: $(head -n1 "$tmp/err")")
    status=1
  fi
  : > "$tmp/base"
  if [ -n "$python" ] && [ -f "$dir/$name.py" ] && ! run_to "$tmp/base" "$python" "$name.py"; then
    notes+=("$name: the baseline failed: $(head -n1 "$tmp/err")")
  fi
  : > "$tmp/before"
  if [ -n "$before" ] && ! run_to "$tmp/before" "$before" "$name.ms"; then
    notes+=("$name: the binary before failed: $(head -n1 "$tmp/err")")
  fi
  for c in $(awk '$2 == "ms" { print $1 }' "$tmp/mist"); do
    m=$(field "$tmp/mist" "$c"); b=$(field "$tmp/base" "$c"); o=$(field "$tmp/before" "$c")
    if [ -n "$b" ] && [ "$(check_of "$tmp/mist" "$c")" != "$(check_of "$tmp/base" "$c")" ]; then
      notes+=("warning: $c: mist and the baseline compute different results: $(check_of "$tmp/mist" "$c") and $(check_of "$tmp/base" "$c")")
      status=1
    fi
    printf "$fmt" "$c" "$(ms "$m")" "$(ms "$b")" "$(ratio "$m" "$b")" "$(target "$c")"
    [ -n "$before" ] && printf "$bfmt" "$(ms "$o")" "$(ratio "$m" "$o")"
    echo
  done
done

if [ ${#notes[@]} -gt 0 ]; then
  echo
  printf '%s\n' "${notes[@]}"
fi
exit "$status"
