#!/usr/bin/env bash
# bench/run.sh: time each benchmark in Mist, CPython and C, and print the
# ratios.  Each bench/NAME.ms has a twin NAME.py (the same program) and a C
# baseline NAME.c built here with gcc -O2.  Every figure is the best of
# REPEAT wall-clock runs (default 3; 10 for start-up), so the ratios hold
# on a noisy machine.  Usage (from anywhere; `make bench` builds mist first):
#
#   bench/run.sh [NAME...]        default: every bench/*.ms
#   MIST=path/to/mist PYTHON=python3.12 REPEAT=5 bench/run.sh fib
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mist=${MIST:-$root/build/mist}
repeat=${REPEAT:-3}
bin=$here/.bin

if [ ! -x "$mist" ]; then
  echo "bench: $mist not found; run 'make build' first" >&2
  exit 1
fi
# Debian's own python3 first: a pyenv shim in front of it adds ~250 ms a run.
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3 || true); fi
fi
if [ -z "$python" ]; then
  echo "python3 not found: the python column is left empty"
fi
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null; then
  echo "$cc not found: the C column is left empty"
  cc=
fi

if [ $# -gt 0 ]; then
  names=("$@")
else
  names=()
  for f in "$here"/*.ms; do
    n=$(basename "$f" .ms)
    names+=("$n")
  done
fi

# now VAR: the wall clock in seconds into VAR.  bash 5's $EPOCHREALTIME
# reads it without starting a process; date is the fallback.
now() {
  if [ -n "${EPOCHREALTIME:-}" ]; then
    printf -v "$1" '%s' "${EPOCHREALTIME/,/.}"
  else
    printf -v "$1" '%s' "$(date +%s.%N)"
  fi
}

# best_time N CMD...: the fastest of N runs in seconds, or "error" when a
# run fails.  The program's output goes to $out_file (from the last run).
out_file=$(mktemp)
trap 'rm -f "$out_file"' EXIT
best_time() {
  local n=$1 best="" t0 t1 t i
  shift
  for ((i = 0; i < n; i++)); do
    now t0
    if ! "$@" > "$out_file" 2>&1; then
      echo error
      return
    fi
    now t1
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$t
    fi
  done
  echo "$best"
}

# ratio A B: A / B to two places, "-" when either is missing.
ratio() {
  case "$1$2" in *error*|*-*) echo "-"; return ;; esac
  if [ -z "$1" ] || [ -z "$2" ]; then echo "-"; return; fi
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'
}

fmt() {
  case "$1" in
    ""|-) echo "-" ;;
    error) echo "error" ;;
    *) awk -v t="$1" 'BEGIN { if (t < 1) printf "%.1f ms", t * 1000; else printf "%.3f s", t }' ;;
  esac
}

mkdir -p "$bin"
echo "mist: $mist ($("$mist" --version 2>/dev/null || echo '?'))"
[ -n "$python" ] && echo "python: $("$python" --version 2>&1)"
[ -n "$cc" ] && echo "C: $("$cc" --version | head -1), -O2"
echo "best of $repeat runs (start-up: of 10), wall clock"
echo
printf '%-10s %12s %12s %12s %13s %10s\n' bench mist python3 C mist/python mist/C
printf '%-10s %12s %12s %12s %13s %10s\n' ---------- ------------ ------------ ------------ ------------- ----------

status=0
for name in "${names[@]}"; do
  ms=$here/$name.ms
  if [ ! -f "$ms" ]; then
    echo "bench: no $ms" >&2
    status=1
    continue
  fi
  n=$repeat
  [ "$name" = startup ] && n=10

  tm=$(cd "$here" && best_time "$n" "$mist" "$name.ms")
  mist_out=$(cat "$out_file")

  tp=-
  if [ -n "$python" ] && [ -f "$here/$name.py" ]; then
    tp=$(cd "$here" && best_time "$n" "$python" "$name.py")
    if [ "$tm" != error ] && [ "$tp" != error ] && [ "$mist_out" != "$(cat "$out_file")" ]; then
      echo "warning: $name: mist and python3 print different results" >&2
    fi
  fi

  tc=-
  if [ -n "$cc" ] && [ -f "$here/$name.c" ]; then
    if "$cc" -O2 -o "$bin/$name" "$here/$name.c" -lm; then
      tc=$(best_time "$n" "$bin/$name")
    else
      tc=error
    fi
  fi

  if [ "$tm" = error ]; then
    echo "warning: $name: mist failed:" >&2
    printf '  %s\n' "$mist_out" >&2
    status=1
  fi
  printf '%-10s %12s %12s %12s %13s %10s\n' "$name" "$(fmt "$tm")" "$(fmt "$tp")" \
    "$(fmt "$tc")" "$(ratio "$tm" "$tp")" "$(ratio "$tm" "$tc")"
done
# The tensor benchmarks (matmul, elementwise, reduce, conv: C programs
# over devices/, each with its baseline measured in the same run), when
# no names were given; TENSOR=0 skips them.
if [ $# -eq 0 ] && [ "${TENSOR:-1}" != 0 ]; then
  echo
  "$here/tensor_run.sh" || status=1
fi
exit "$status"
