#!/usr/bin/env bash
# bench/mlp_products_run.sh: the MLP training step's matrix products one
# by one (bench/mlp_products.c; bench/README.md, "The MLP step's products
# one by one"), ROUNDS runs of the best of REPEAT calls each, OpenBLAS
# opened as devices/blas.c opens it (its core printed), one thread.
#
#   bench/mlp_products_run.sh [B...]      REPEAT=300 ROUNDS=3 (batches default 64 512)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-gcc}
bin=$here/.bin
mkdir -p "$bin"
# the kernel Mist runs (devices/cpu/gemm_thin.c), built as devices/ builds it
"$cc" -O3 -march=native -I"$here/.." -o "$bin/mlp_products" "$here/mlp_products.c" \
  "$here/../devices/cpu/gemm_thin.c" -ldl -lm
for r in $(seq "${ROUNDS:-3}"); do
  echo "== run $r"
  "$bin/mlp_products" "${REPEAT:-300}" "$@"
done
