#!/usr/bin/env bash
# bench/jit_tensor_run.sh: graph mode's fused elementwise loop against C:
# exp(x) * y + tanh(x) on 10^7 f32 (bench/jit/elementwise.ms), against
# the same loop in C built with gcc -O3 -march=native -ffast-math
# -fopenmp (bench/jit/elementwise.c: vectorised through glibc's libmvec),
# on 1 and 2 threads (MIST_NUM_THREADS, OMP_NUM_THREADS).  Each is timed
# inside its own process as the best of N calls after a first one (which,
# for Mist, compiles); the two programs run alternately ROUNDS times and
# the best of each is kept, so that a busy machine slows both alike.
# The design's target: within 1.25x of C.  The same for a chain of a
# comparison, where and clip (bench/jit/select.ms).  Then
# bench/jit/vecmath.c:
# the vector math libraries the fused loop could call for f32 exp and
# tanh (Mist's own, libmvec's, SLEEF's; libsleef-dev), their speed on
# the same chain and their accuracy, and the speed of each of exp, tanh,
# log and sigmoid alone, on a CPU with AVX-512F.
#
# AVX2=1: the comparison an AVX2 machine without AVX-512 would make, on
# any CPU with AVX-512F: Mist's loops compiled for x86-64-v3
# (MIST_JIT_CPU: 256-bit vectors, Mist's 8-lane kernels) against C
# built with -march=haswell (libmvec's 8-lane _ZGVdN8v_expf and
# _ZGVdN8v_tanhf).  CHRT=1: each run under `chrt -f 1` (root), without
# which two threads on a busy shared machine read anything.
#
#   bench/jit_tensor_run.sh            MIST=path/to/mist REPEAT=10 ROUNDS=3 AVX2=0 CHRT=0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mist=${MIST:-$here/../build/mist}
cc=${CC:-gcc}
repeat=${REPEAT:-10}
rounds=${ROUNDS:-3}
bin=$here/.bin
mkdir -p "$bin"
march=native
if [ "${AVX2:-0}" = 1 ]; then
  export MIST_JIT_CPU=x86-64-v3
  march=haswell
fi
run=()
[ "${CHRT:-0}" = 1 ] && run=(chrt -f 1)
echo "mist: $mist, graph mode${MIST_JIT_CPU:+, MIST_JIT_CPU=$MIST_JIT_CPU}; C: $("$cc" --version | head -1), -O3 -march=$march -ffast-math -fopenmp (libmvec)${run:+; each run under ${run[*]}}"
status=0
"$cc" -O3 -march=$march -ffast-math -fopenmp -o "$bin/jit_elementwise_$march" "$here/jit/elementwise.c" -lm
# each benchmark: NAME (bench/jit/NAME.ms; elementwise.c's loop NAME) and what it computes
for bench in "elementwise:exp(x) * y + tanh(x)" "select:where(x > 0, x, 0.1 * x) + clip(y, -0.5, 0.5)"; do
  name=${bench%%:*}
  echo "${bench#*:} on 10^7 f32: best of $repeat calls a process, best of $rounds processes, wall clock"
  printf '%-8s %12s %12s %9s %8s\n' threads mist C mist/C target
  for t in 1 2; do
    bm=1e9 bc=1e9
    for _ in $(seq "$rounds"); do
      out=$(cd "$here/jit" && MIST_NUM_THREADS=$t ${run[@]+"${run[@]}"} "$mist" --mode=graph "$name.ms" "$repeat") || {
        echo "bench: mist failed on jit/$name.ms" >&2
        exit 1
      }
      cout=$(OMP_NUM_THREADS=$t ${run[@]+"${run[@]}"} "$bin/jit_elementwise_$march" "$repeat" "$name")
      bm=$(awk -v a="$bm" -v b="$(sed -n 's/.*best ms: //p' <<<"$out")" 'BEGIN { print (b < a ? b : a) }')
      bc=$(awk -v a="$bc" -v b="$(sed -n 's/.*best ms: //p' <<<"$cout")" 'BEGIN { print (b < a ? b : a) }')
    done
    ratio=$(awk -v a="$bm" -v b="$bc" 'BEGIN { printf "%.2f", a / b }')
    printf '%-8s %9.3f ms %9.3f ms %8sx %7sx\n' "$t" "$bm" "$bc" "$ratio" 1.25
  done
done

sleef=/usr/include/$(gcc -print-multiarch 2>/dev/null)/sleef.h
devlib=$(dirname "$mist")/devices/libmist_devices.a
if grep -qw avx512f /proc/cpuinfo && [ -f "$sleef" ] && [ -f "$devlib" ]; then
  echo
  echo "f32 exp and tanh, 16 lanes (bench/jit/vecmath.c): the chain on one thread, and accuracy; each function alone;"
  echo "then the same on 8 lanes (AVX2)"
  "$cc" -O2 -mavx512f -o "$bin/jit_vecmath" "$here/jit/vecmath.c" -I"$(dirname "$sleef")" "$devlib" \
    -lsleef -lmvec -lm -lpthread
  "$bin/jit_vecmath"
else
  echo "(vector math comparison skipped: needs AVX-512F, libsleef-dev and $devlib)"
fi
exit "$status"
