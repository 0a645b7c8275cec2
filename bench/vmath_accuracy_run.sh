#!/usr/bin/env bash
# bench/vmath_accuracy_run.sh: the accuracy of Mist's f32 vector
# functions (exp log tanh sigmoid sin cos, what dev_vec_unary gives:
# eager mode's kernels and graph mode's fused loops call them) over all
# 2^32 f32 arguments against the exact value, beside glibc's libmvec and
# SLEEF's 1-ulp functions (bench/vmath_accuracy.c).  Needs a CPU with
# AVX-512F, libsleef-dev and a built build/devices/libmist_devices.a.
# About two minutes a function on two cores.
#
#   bench/vmath_accuracy_run.sh [FUNCTION...]     BUILD=build THREADS=2
#   VMATH_STEP=64 bench/vmath_accuracy_run.sh     every 64th argument only
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
cc=${CC:-gcc}
devlib=$build/devices/libmist_devices.a
sleef=/usr/include/$("$cc" -print-multiarch 2>/dev/null)/sleef.h
if ! grep -qw avx512f /proc/cpuinfo || [ ! -f "$sleef" ] || [ ! -f "$devlib" ]; then
  echo "vmath_accuracy_run.sh: needs AVX-512F, libsleef-dev and $devlib" >&2
  exit 1
fi
mkdir -p "$here/.bin"
"$cc" -O2 -mavx512f -fopenmp -I"$here/.." -I"$(dirname "$sleef")" -o "$here/.bin/vmath_accuracy" \
  "$here/vmath_accuracy.c" "$devlib" -lsleef -lmvec -lm -lpthread
OMP_NUM_THREADS=${THREADS:-2} "$here/.bin/vmath_accuracy" "$@"
