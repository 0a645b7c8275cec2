#!/usr/bin/env bash
# bench/tensor_run.sh: the tensor benchmarks (matmul, elementwise,
# reduce, conv), each a C program linked with devices/ that prints its
# figures next to a baseline measured in the same run (OpenBLAS called
# directly, a C loop, memcpy).  devices/ is compiled here with the flags
# of devices/CMakeLists.txt, so no CMake build is needed.  Usage:
#
#   bench/tensor_run.sh [NAME...]      default: matmul elementwise reduce conv
#   THREADS=1 bench/tensor_run.sh      pool size (default: every core)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=$here/.bin
cc=${CC:-gcc}
mkdir -p "$bin/devices"

if ! pkg-config --exists openblas 2>/dev/null; then
  echo "tensor benchmarks: OpenBLAS not found (apt-get install libopenblas-dev)" >&2
  exit 1
fi
blas_cflags=$(pkg-config --cflags openblas)
blas_libs=$(pkg-config --libs openblas)

# devices/ as a static library, rebuilt when a source is newer.
lib=$bin/libmist_devices.a
srcs=("$root"/devices/*.c "$root"/devices/cpu/*.c)
rebuild=0
[ -f "$lib" ] || rebuild=1
for s in "${srcs[@]}" "$root"/devices/*.h "$root"/devices/cpu/*.h; do
  [ "$s" -nt "$lib" ] && rebuild=1
done
if [ "$rebuild" = 1 ]; then
  objs=()
  for s in "${srcs[@]}"; do
    o=$bin/devices/$(basename "$(dirname "$s")")_$(basename "$s" .c).o
    $cc -O3 -fno-math-errno -DDEV_HAVE_MVEC=1 -I"$root" $blas_cflags -c "$s" -o "$o"
    objs+=("$o")
  done
  rm -f "$lib"
  ar rcs "$lib" "${objs[@]}"
fi
link=("$lib" $blas_libs -lmvec -lpthread -lm)

if [ $# -gt 0 ]; then names=("$@"); else names=(matmul elementwise reduce conv); fi
threads=${THREADS:-0}
status=0
for name in "${names[@]}"; do
  src=$here/$name.c
  extra=()
  if [ "$name" = elementwise ]; then
    # the baseline loop: one fused loop, vectorised math (the design's
    # reference: gcc -O3 -march=native -ffast-math)
    $cc -O3 -march=native -ffast-math -DFUSED_LOOP_ONLY -c "$src" -o "$bin/elementwise_loop.o"
    extra=("$bin/elementwise_loop.o")
  fi
  $cc -O3 -I"$root" $blas_cflags "$src" "${extra[@]}" -o "$bin/$name" "${link[@]}"
  echo
  if ! "$bin/$name" "$threads"; then
    echo "warning: $name failed" >&2
    status=1
  fi
  if [ "$name" = matmul ] && [ -z "${MIST_BLAS_CORETYPE:-}" ] && [ -n "${OPENBLAS_CORETYPE:-}" ]; then
    echo
    echo "matmul again with the environment's OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE:"
    MIST_BLAS_CORETYPE=env "$bin/$name" "$threads" | tail -n +2 || status=1
  fi
done
exit "$status"
