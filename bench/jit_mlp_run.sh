#!/usr/bin/env bash
# bench/jit_mlp_run.sh: graph mode's MLP training step against C and
# PyTorch (issue 14's MLP rows).  The step (bench/jit/mlp.ms): a
# 784-256-256-10 MLP, f32, relu, softmax cross-entropy averaged over the
# batch, value_and_grad and the SGD update of the six parameters, at
# batch 64 and 512, run by `mist --mode=graph`.  Its twins:
# bench/jit/mlp.c (the same arithmetic by hand, the products through
# OpenBLAS's cblas_sgemm on preallocated buffers, OpenBLAS opened with the
# core type devices/blas.c gives Mist: the line it prints says which) and
# bench/jit/mlp.py (Debian's python3-torch, skipped when torch does not
# import; its products reach the system's OpenBLAS, timed as installed and
# with OPENBLAS_CORETYPE set to the core Mist picks).  Each is timed inside
# its own process (best of N calls after 0.3 s of warm-up); the programs
# run alternately ROUNDS times and the best of each is kept, so that a
# busy machine slows all alike.  Printed per batch: forward and step ms,
# step / C step (target <= 1.05x), step / forward and the gradient alone
# (value_and_grad: the step without its update) / forward (target
# <= 2.3x: "the same step, gradient"), and
# the checks (the step's loss plus the sum of the new parameters), which
# must agree within 1e-6 relative; and the C twin's forward products and
# step products alone (mlp.c's blas_*_ms), whose ratio is the floor
# OpenBLAS sets under C's step / forward (Mist's backward products run
# devices/cpu/gemm_thin.c where it applies, faster: its floor is
# bench/mlp_products_run.sh's).  Then the compilation of the step
# (`mlp.ms N B compile`: the step called once, nothing else compiled),
# the sum of MIST_JIT_LOG's "compiled (X ms)" on a new, empty
# MIST_CACHE_DIR (target < 300 ms) and again from that cache (target
# < 20 ms), LLVM's loading apart; medians of ROUNDS pairs.
#
#   bench/jit_mlp_run.sh       MIST=path/to/mist REPEAT=200 ROUNDS=3 THREADS=1 TORCH=0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mist=${MIST:-$here/../build/mist}
cc=${CC:-gcc}
python=${PYTHON:-/usr/bin/python3}
repeat=${REPEAT:-200}
rounds=${ROUNDS:-3}
threads=${THREADS:-1}
bin=$here/.bin
mkdir -p "$bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# -ffp-contract=off: p - 0.01 * g rounds twice, as Mist's kernels do
"$cc" -O2 -march=native -ffp-contract=off -o "$bin/jit_mlp" "$here/jit/mlp.c" -ldl -lm

torch=0
if [ "${TORCH:-1}" != 0 ] && "$python" -c 'import torch' 2>/dev/null; then torch=1; fi
core=$("$bin/jit_mlp" 1 8 "$threads" | sed -n 's/.*; core \([^;]*\);.*/\1/p')

field() { sed -n "s/.* $1 \([^ ]*\).*/\1/p" <<<"$2"; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "mist: $mist, --mode=graph, MIST_NUM_THREADS=$threads"
cinfo=$("$bin/jit_mlp" 1 8 "$threads")
echo "C: $("$cc" --version | head -1), -O2 -march=native -ffp-contract=off; $(head -1 <<<"$cinfo")"
echo "   (devices/blas.c gives Mist the same core: OPENBLAS_CORETYPE from the CPU's features, as mlp.c does)"
if [ $torch = 1 ]; then
  tinfo=$(OPENBLAS_NUM_THREADS=$threads "$python" "$here/jit/mlp.py" 1 8 "$threads")
  echo "PyTorch: $(head -1 <<<"$tinfo")"
  echo "   (as installed; 'torch+core': the same with OPENBLAS_CORETYPE=$core)"
else
  echo "PyTorch: skipped (torch does not import in $python, or TORCH=0)"
fi
echo "best of $repeat calls a process, best of $rounds processes, wall clock, ms"
status=0
for b in 64 512; do
  declare -A f=() s=() g=() chk=()
  names=(mist C)
  [ $torch = 1 ] && names+=(torch torch+core)
  for n in "${names[@]}"; do f[$n]=1e9 s[$n]=1e9 g[$n]=1e9; done
  bf=1e9 bs=1e9
  for _ in $(seq "$rounds"); do
    for n in "${names[@]}"; do
      case $n in
        mist) out=$(cd "$here/jit" && MIST_NUM_THREADS=$threads "$mist" --mode=graph mlp.ms "$repeat" "$b") || {
                echo "bench: mist failed on jit/mlp.ms" >&2; exit 1; } ;;
        C) out=$("$bin/jit_mlp" "$repeat" "$b" "$threads" | tail -1) ;;
        torch) out=$(OPENBLAS_NUM_THREADS=$threads "$python" "$here/jit/mlp.py" "$repeat" "$b" "$threads" | tail -1) ;;
        torch+core) out=$(OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$threads \
                            "$python" "$here/jit/mlp.py" "$repeat" "$b" "$threads" | tail -1) ;;
      esac
      f[$n]=$(min "${f[$n]}" "$(field forward_ms "$out")")
      s[$n]=$(min "${s[$n]}" "$(field step_ms "$out")")
      g[$n]=$(min "${g[$n]}" "$(field grad_ms "$out")")
      chk[$n]=$(field check "$out")
      if [ "$n" = C ]; then
        bf=$(min "$bf" "$(field blas_forward_ms "$out")")
        bs=$(min "$bs" "$(field blas_step_ms "$out")")
      fi
    done
  done
  echo
  echo "batch $b"
  printf '  %-11s %11s %11s %10s %11s %10s %14s\n' "" forward step step/fwd gradient grad/fwd check
  for n in "${names[@]}"; do
    printf '  %-11s %11.4f %11.4f %9sx %11.4f %9sx %14s\n' "$n" "${f[$n]}" "${s[$n]}" \
      "$(ratio "${s[$n]}" "${f[$n]}")" "${g[$n]}" "$(ratio "${g[$n]}" "${f[$n]}")" "${chk[$n]}"
  done
  printf '  mist step / C step %sx (target 1.05x); mist step / mist forward %sx, its gradient / forward %sx (target 2.3x)\n' \
    "$(ratio "${s[mist]}" "${s[C]}")" "$(ratio "${s[mist]}" "${f[mist]}")" "$(ratio "${g[mist]}" "${f[mist]}")"
  printf '  the products alone (C): forward %.4f, step %.4f, %sx (the floor OpenBLAS sets under the step / forward of C; the backward products of Mist run kernels of its own: bench/mlp_products_run.sh)\n' \
    "$bf" "$bs" "$(ratio "$bs" "$bf")"
  for n in "${names[@]}"; do
    if ! awk -v a="${chk[$n]}" -v b="${chk[mist]}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * (b < 0 ? -b : b)) }'; then
      echo "  warning: $n's check ${chk[$n]} differs from mist's ${chk[mist]} by more than 1e-6 relative"
      status=1
    fi
  done
  unset f s g chk
done

# the step's compilation: "SUM LOAD COUNT" from one run's log
compile() {
  local b=$1 cache=$2 log=$work/log
  (cd "$here/jit" && MIST_CACHE_DIR=$cache MIST_JIT_LOG=1 MIST_NUM_THREADS=$threads \
     "$mist" --mode=graph mlp.ms 1 "$b" compile >/dev/null 2>"$log") || {
    echo "bench: mist failed on jit/mlp.ms compile" >&2; cat "$log" >&2; exit 1; }
  awk '/^jit: the code generator .* loaded in/ { load = $(NF - 1) }
       /: compiled \(/ { s = $0; sub(/.*: compiled \(/, "", s); sub(/ ms\).*/, "", s); n++; sum += s }
       END { printf "%.2f %.2f %d\n", sum, load, n }' "$log"
}
echo
echo "compiling the step (mlp.ms N B compile), medians of $rounds pairs of runs on a new cache folder, ms"
printf '  %-6s %9s %10s %10s %10s\n' batch funcs first cached 'LLVM load'
for b in 64 512; do
  : > "$work/first" && : > "$work/second"
  for _ in $(seq "$rounds"); do
    rm -rf "$work/cache"
    compile "$b" "$work/cache" >> "$work/first"
    compile "$b" "$work/cache" >> "$work/second"
  done
  printf '  %-6s %9s %10.2f %10.2f %10.2f\n' "$b" "$(awk '{ print $3 }' "$work/first" | median)" \
    "$(awk '{ print $1 }' "$work/first" | median)" "$(awk '{ print $1 }' "$work/second" | median)" \
    "$(awk '{ print $2 }' "$work/first" "$work/second" | median)"
done
echo "  targets: first < 300 ms, cached < 20 ms (LLVM's load apart)"
exit "$status"
