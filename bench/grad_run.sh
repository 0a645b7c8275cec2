#!/usr/bin/env bash
# bench/grad_run.sh: the cost of a gradient relative to the function it
# differentiates (the design's target: at most 3x), for the cases in
# bench/grad/: a scalar polynomial called at many points (poly), a
# function with a 10^5-iteration scalar loop (loop), one training step
# of a 784-256-10 MLP on a batch of 64 (mlp; mlp2 is 784-256-256-10 with
# an SGD update), a loop reading the rows of a table (rows:N), the
# nested-AD saddle point in the four orders of forward and reverse
# (saddle: RR as f, FF as grad, FR and RF as further lines), and
# Microsoft ADBench's objectives on ADBench's inputs (gmm: Gaussian
# mixture d=10 K=5 n=1000; lstm: 2 layers, 1024 characters; ba: bundle
# adjustment's Jacobian over 31843 observations, all at once; ba_loop:
# the same residuals' gradient as a loop over the first N observations).
# Each NAME.ms times the function and its gradient in the same process
# (best of REPEAT runs after a warm-up; mlp runs 10x as many; a figure
# stops after 3 runs once its runs have taken 10 s, for PyTorch's scalar
# loops) and the script prints the ratio grad/f.  When PyTorch is
# installed (python3-torch, optional) the twin NAME.py is timed the same
# way and its ratio is printed beside Mist's, with torch's threads set
# to Mist's pool size.  A case that prints "rss_parts PART..." (ba,
# ba_loop) is also run once per part, each in a process of its own, for
# its peak resident memory.
# Usage:
#
#   bench/grad_run.sh [NAME[:ARG]...]  default: poly loop mlp mlp2 rows:1024 rows:4096 saddle gmm lstm ba ba_loop
#   REPEAT=10 MIST=path/to/mist PYTHON=python3 TORCH=0 bench/grad_run.sh
#
# A case whose gradient fails prints "NAME: gradient failed: <error>"
# and the script goes on; the exit status is then 1.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
dir=$here/grad
mist=${MIST:-$root/build/mist}
repeat=${REPEAT:-5}
limit=${TIMEOUT:-600}

if [ ! -x "$mist" ]; then
  echo "bench: $mist not found; run 'make build' first" >&2
  exit 1
fi
case "$mist" in /*) ;; *) mist=$PWD/$mist ;; esac

# Debian's own python3 first (python3-torch installs there).
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3 || true); fi
fi
torch_note=""
if [ "${TORCH:-1}" = 0 ]; then
  python=""
  torch_note="PyTorch: skipped (TORCH=0)"
elif [ -z "$python" ] || ! command -v "$python" >/dev/null; then
  python=""
  torch_note="PyTorch: no python3, the torch columns are left out"
elif ! torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null); then
  python=""
  torch_note="PyTorch: not installed (optional: apt-get install python3-torch), the torch columns are left out"
else
  torch_note="PyTorch: $torch_version ($("$python" --version 2>&1))"
fi

if [ $# -gt 0 ]; then names=("$@"); else names=(poly loop mlp mlp2 rows:1024 rows:4096 saddle gmm lstm ba ba_loop); fi

threads=${MIST_NUM_THREADS:-$(nproc 2>/dev/null || echo 1)}
export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ left in bench/grad
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run_case PROG FILE [ARG [N]]: run PROG FILE N [ARG] in bench/grad (N
# defaults to REPEAT),
# stdout to $tmp/out, stderr to $tmp/err; its status is returned.
run_case() {
  local prog=$1 file=$2 arg=${3:-} n=${4:-$repeat}
  (cd "$dir" && timeout "$limit" "$prog" "$file" "$n" $arg > "$tmp/out" 2> "$tmp/err")
}

# field KEY: the number after KEY on the line of $tmp/out starting with
# KEY ("f_ms" or "grad_ms"), and its check value into $check.
field() {
  awk -v k="$1" '$1 == k { print $2; exit }' "$tmp/out"
}
check_of() {
  awk -v k="$1" '$1 == k { print $4; exit }' "$tmp/out"
}

# why: the first error line of the last run (the timeout, else the first
# line of stderr that says "error", else its first line).
why() {
  local rc=$1
  if [ "$rc" = 124 ]; then echo "timed out after ${limit}s"; return; fi
  local line
  line=$(grep -m1 -i 'error' "$tmp/err" || true)
  [ -z "$line" ] && line=$(head -n1 "$tmp/err")
  [ -z "$line" ] && line="exit status $rc, no message"
  echo "$line"
}

ratio() {
  if [ -z "$1" ] || [ -z "$2" ]; then echo "-"; return; fi
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'
}
ms() { if [ -z "$1" ]; then echo "-"; else awk -v t="$1" 'BEGIN { printf "%.3f", t }'; fi; }

# same A B: whether two check values agree to 1e-3 (relative).
same() {
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; n = b < 0 ? -b : b; if (n > m) m = n; exit !(d <= 1e-3 * m + 1e-9) }'
}

# rss_line PROG FILE ARG PART...: "f 23.3 MB, grad 93.7 MB (4.02x f), ..."
# from one run of PROG FILE 1 [ARG] mem:PART per part (the first part is
# the function).
rss_line() {
  local prog=$1 file=$2 arg=$3 part out rc first="" line=""
  shift 3
  for part in "$@"; do
    run_case "$prog" "$file" "$arg mem:$part" 1
    rc=$?
    out=""
    [ "$rc" = 0 ] && out=$(awk '$1 == "rss_mb" { printf "%.1f", $5 - $3; exit }' "$tmp/out")
    if [ -z "$out" ]; then
      line+="${line:+, }$part failed ($(why "$rc"))"
      continue
    fi
    line+="${line:+, }$part $out MB"
    if [ -z "$first" ]; then first=$out; else line+=" ($(ratio "$out" "$first") $1)"; fi
  done
  echo "$line"
}

echo "mist: $mist ($("$mist" --version 2>/dev/null || echo '?')), $threads threads"
echo "$torch_note"
echo "best of $repeat timed runs after a warm-up (mlp: of $((repeat * 10)); a figure whose runs"
echo "pass 10 s stops after 3), function and gradient in one process;"
echo "ratio = grad_ms / f_ms (target: at most 3x)"
echo
fmt='%-6s %10s %10s %9s'
tfmt=' %12s %14s %12s'
printf "$fmt" case f_ms grad_ms ratio
[ -n "$python" ] && printf "$tfmt" torch_f_ms torch_grad_ms torch_ratio
echo
printf "$fmt" ------ ---------- ---------- ---------
[ -n "$python" ] && printf "$tfmt" ------------ -------------- ------------
echo

status=0
notes=()
for case_ in "${names[@]}"; do
  # NAME, or NAME:ARG (rows:4096 runs rows.ms with 4096 rows)
  name=${case_%%:*}
  arg=""
  [ "$case_" != "$name" ] && arg=${case_#*:}
  if [ ! -f "$dir/$name.ms" ]; then
    echo "bench: no $dir/$name.ms" >&2
    status=1
    continue
  fi
  run_case "$mist" "$name.ms" "$arg"
  rc=$?
  mist_out=$tmp/mist_out
  cp "$tmp/out" "$mist_out"
  f=$(field f_ms); g=$(field grad_ms)
  fc=$(check_of f_ms); gc=$(check_of grad_ms)
  if [ -z "$f" ]; then
    notes+=("$name: function failed: $(why "$rc")")
    status=1
  elif [ -z "$g" ]; then
    notes+=("$name: gradient failed: $(why "$rc")")
    status=1
  fi

  tf=""; tg=""
  if [ -n "$python" ] && [ -f "$dir/$name.py" ]; then
    MIST_NUM_THREADS=$threads run_case "$python" "$name.py" "$arg"
    rc=$?
    tf=$(field f_ms); tg=$(field grad_ms)
    if [ -z "$tf" ] || [ -z "$tg" ]; then
      notes+=("$name: torch failed: $(why "$rc")")
    else
      if [ -n "$fc" ] && ! same "$fc" "$(check_of f_ms)"; then
        notes+=("warning: $name: the functions' results differ: mist $fc, torch $(check_of f_ms)")
      fi
      if [ -n "$gc" ] && ! same "$gc" "$(check_of grad_ms)"; then
        notes+=("warning: $name: the gradients differ: mist $gc, torch $(check_of grad_ms)")
      fi
    fi
  fi

  printf "$fmt" "$case_" "$(ms "$f")" "$(ms "$g")" "$(ratio "$g" "$f")"
  [ -n "$python" ] && printf "$tfmt" "$(ms "$tf")" "$(ms "$tg")" "$(ratio "$tg" "$tf")"
  echo
  # further gradients a case times (grad_rows_ms: rows' with respect to
  # the table too), each against the same function
  for key in $(awk '$1 ~ /^grad_.*_ms$/ { print $1 }' "$mist_out"); do
    g2=$(awk -v k="$key" '$1 == k { print $2; exit }' "$mist_out")
    t2=""
    [ -n "$tf" ] && t2=$(awk -v k="$key" '$1 == k { print $2; exit }' "$tmp/out" 2>/dev/null)
    v=${key#grad_}; v=${v%_ms}
    printf "$fmt" "$case_/$v" "$(ms "$f")" "$(ms "$g2")" "$(ratio "$g2" "$f")"
    [ -n "$python" ] && printf "$tfmt" "$(ms "$tf")" "$(ms "$t2")" "$(ratio "$t2" "$tf")"
    echo
  done
  # peak memory: a case that prints "rss_parts PART..." is run again once
  # per part with the argument mem:PART, in a process of its own, and
  # prints "rss_mb base MB peak MB"; what each part adds to the process
  # (the peak less the resident size with the data loaded) is noted
  # under the table, and each gradient's as a multiple of the function's
  parts=$(awk '$1 == "rss_parts" { $1 = ""; print; exit }' "$mist_out")
  if [ -n "$parts" ]; then
    notes+=("$case_: peak RSS above the data loaded: $(rss_line "$mist" "$name.ms" "$arg" $parts)")
    if [ -n "$python" ] && [ -f "$dir/$name.py" ]; then
      notes+=("$case_: torch's peak RSS above the data loaded: $(rss_line "$python" "$name.py" "$arg" $parts)")
    fi
  fi
done

if [ ${#notes[@]} -gt 0 ]; then
  echo
  printf '%s\n' "${notes[@]}"
fi
exit "$status"
