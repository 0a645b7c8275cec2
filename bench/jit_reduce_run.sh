#!/usr/bin/env bash
# bench/jit_reduce_run.sh: graph mode's reductions fused with the chain
# that feeds them, against C: max(exp(x) * y, axis=1) and axis=-1 on x,
# y of f32[100,1000,100] (bench/jit/reduce_max.ms), and of the same
# chain sum(..., axis=(1, 2)), argmax(..., axis=-1) and sum(... > 1.0)
# (CASES="middle last axes argmax count" picks some), against the same
# loops in C built with gcc -O3 -march=native -ffast-math -fopenmp
# (bench/jit/reduce_max.c: expf through glibc's libmvec), on 1 and 2
# threads (MIST_NUM_THREADS, OMP_NUM_THREADS).  Each is timed inside its
# own process as the best of N calls after a first one (which, for Mist,
# compiles); the programs run alternately ROUNDS times and the best of
# each is kept, so that a busy machine slows them alike.  BEFORE=path
# to another mist (e.g. a build of the commit before) adds its column:
# the same script, the same run.  CHRT=1: each run under `chrt -f 1`.
#
#   bench/jit_reduce_run.sh            MIST=path/to/mist BEFORE= REPEAT=5 ROUNDS=3 CHRT=0 CASES=...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mist=${MIST:-$here/../build/mist}
before=${BEFORE:-}
cc=${CC:-gcc}
repeat=${REPEAT:-5}
rounds=${ROUNDS:-3}
bin=$here/.bin
mkdir -p "$bin"
run=()
[ "${CHRT:-0}" = 1 ] && run=(chrt -f 1)
echo "mist: $mist${before:+ (before: $before)}, graph mode; C: $("$cc" --version | head -1), -O3 -march=native -ffast-math -fopenmp (libmvec)${run:+; each run under ${run[*]}}"
"$cc" -O3 -march=native -ffast-math -fopenmp -o "$bin/jit_reduce_max" "$here/jit/reduce_max.c" -lm
best() { sed -n 's/.*best ms: //p'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }
declare -A what=([middle]="max(exp(x) * y, axis=1)" [last]="max(exp(x) * y, axis=-1)"
                 [axes]="sum(exp(x) * y, axis=(1, 2))" [argmax]="argmax(exp(x) * y, axis=-1)"
                 [count]="sum(exp(x) * y > 1.0)")
for axis in ${CASES:-middle last axes argmax count}; do
  echo "${what[$axis]} on f32[100,1000,100]: best of $repeat calls a process, best of $rounds processes, wall clock"
  printf '%-8s %12s %12s %9s%s\n' threads mist C mist/C "${before:+      before  before/C}"
  for t in 1 2; do
    bm=1e9 bc=1e9 bb=1e9
    for _ in $(seq "$rounds"); do
      out=$(cd "$here/jit" && MIST_NUM_THREADS=$t ${run[@]+"${run[@]}"} "$mist" --mode=graph reduce_max.ms "$repeat" $axis)
      bm=$(min "$bm" "$(best <<<"$out")")
      bc=$(min "$bc" "$(OMP_NUM_THREADS=$t ${run[@]+"${run[@]}"} "$bin/jit_reduce_max" "$repeat" $axis | best)")
      if [ -n "$before" ]; then
        out=$(cd "$here/jit" && MIST_NUM_THREADS=$t ${run[@]+"${run[@]}"} "$before" --mode=graph reduce_max.ms "$repeat" $axis)
        bb=$(min "$bb" "$(best <<<"$out")")
      fi
    done
    printf '%-8s %9.3f ms %9.3f ms %8sx' "$t" "$bm" "$bc" "$(awk -v a="$bm" -v b="$bc" 'BEGIN { printf "%.2f", a / b }')"
    [ -n "$before" ] && printf ' %9.3f ms %8sx' "$bb" "$(awk -v a="$bb" -v b="$bc" 'BEGIN { printf "%.2f", a / b }')"
    echo
  done
done
