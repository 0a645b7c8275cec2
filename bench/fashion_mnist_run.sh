#!/usr/bin/env bash
# bench/fashion_mnist_run.sh: seconds per training epoch on Fashion-MNIST
# (the flagship's models, examples/fashion_mnist.ms), Mist against
# PyTorch in the same run, same batch size and thread count.
#
#   bench/fashion_mnist_run.sh [MODEL...]     default: mlp cnn
#   EPOCHS=2 BATCH=128 MIST_NUM_THREADS=2 bench/fashion_mnist_run.sh mlp
#
# For each model it prints, from bench/fashion_mnist/train.ms and
# train.py (best epoch of EPOCHS, after a 20-step warm-up):
#
#   mist memory     the training steps alone, on one batch made beforehand
#   mist pipeline   batches from data's background pipeline (shuffle +
#                   batch over the IDX files), as the flagship trains;
#                   the ratio pipeline / memory is what loading and
#                   batching cost an epoch
#   pipeline alone  the pipeline's batches taken with no training: the
#                   most loading and batching could add to an epoch were
#                   they not concurrent with it; alone / memory is that
#                   bound as a fraction of the epoch (target: under 5%),
#                   which holds whatever the load, unlike the difference
#                   of two noisy epochs
#   torch           PyTorch as installed (python3-torch), batches cut
#                   from tensors in memory
#   torch best      the same with OpenBLAS's best kernel for this CPU
#                   (OPENBLAS_CORETYPE from the CPU's features, the one
#                   Mist's devices/blas.c picks; machines that set
#                   OPENBLAS_CORETYPE=Haswell hold it to AVX2)
#
# and the ratios mist pipeline / torch.  Needs the dataset
# (/usr/share/datasets/fashion-mnist, `make deps`).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
dir=$here/fashion_mnist
mist=${MIST:-$root/build/mist}
epochs=${EPOCHS:-2}
batch=${BATCH:-128}
threads=${MIST_NUM_THREADS:-$(nproc 2>/dev/null || echo 1)}
export MIST_NUM_THREADS=$threads
export PYTHONDONTWRITEBYTECODE=1
python=${PYTHON:-/usr/bin/python3}

if [ ! -x "$mist" ]; then
  echo "bench: $mist not found; run 'make build' first" >&2
  exit 1
fi
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "bench: the Fashion-MNIST files are missing: make deps (dataset-fashion-mnist)" >&2
  exit 1
fi
have_torch=1
"$python" -c 'import torch' 2>/dev/null || have_torch=0

# The core type OpenBLAS's best kernel needs here (as devices/blas.c).
best_core() {
  local f
  f=$(grep -m1 '^flags' /proc/cpuinfo)
  if [[ $f == *avx512f* && $f == *avx512cd* && $f == *avx512bw* && $f == *avx512dq* && $f == *avx512vl* ]]; then
    echo SkylakeX
  elif [[ $f == *avx2* && $f == *fma* ]]; then
    echo Haswell
  fi
}
core=$(best_core)

seconds() { awk '$1 == "epoch_s" { print $2 }'; }

if [ $# -gt 0 ]; then models=("$@"); else models=(mlp cnn); fi
echo "Fashion-MNIST, seconds per epoch: batch $batch, $threads threads, best of $epochs epochs"
echo "(OPENBLAS_CORETYPE in the environment: ${OPENBLAS_CORETYPE:-unset}; best kernel here: ${core:-unknown})"
status=0
for m in "${models[@]}"; do
  mem=$(cd "$dir" && "$mist" train.ms "$m" memory "$batch" "$epochs" | seconds)
  pipe=$(cd "$dir" && "$mist" train.ms "$m" pipeline "$batch" "$epochs" | seconds)
  if [ -z "$mem" ] || [ -z "$pipe" ]; then
    echo "$m: mist failed"
    status=1
    continue
  fi
  printf '%s  mist memory %7.2f s   mist pipeline %7.2f s   pipeline/memory %.3f\n' "$m" "$mem" "$pipe" \
    "$(awk -v a="$pipe" -v b="$mem" 'BEGIN { print a / b }')"
  alone=$(cd "$dir" && "$mist" train.ms "$m" alone "$batch" "$epochs" | seconds)
  printf '%s  pipeline alone %7.3f s   alone/memory %.1f%% (the most it can add; target under 5%%)\n' \
    "$m" "$alone" "$(awk -v a="$alone" -v b="$mem" 'BEGIN { print 100 * a / b }')"
  if [ "$have_torch" = 1 ]; then
    t=$(cd "$dir" && "$python" train.py "$m" "$batch" "$epochs" | seconds)
    tb=$(cd "$dir" && OPENBLAS_CORETYPE=$core "$python" train.py "$m" "$batch" "$epochs" | seconds)
    printf '%s  torch       %7.2f s   torch best    %7.2f s   mist/torch %.2f   mist/torch best %.2f\n' \
      "$m" "$t" "$tb" "$(awk -v a="$pipe" -v b="$t" 'BEGIN { print a / b }')" \
      "$(awk -v a="$pipe" -v b="$tb" 'BEGIN { print a / b }')"
  else
    echo "$m  torch: not installed (apt-get install python3-torch)"
  fi
done
exit $status
