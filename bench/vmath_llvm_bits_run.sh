#!/usr/bin/env bash
# bench/vmath_llvm_bits_run.sh: whether the f32 exp, log, tanh and sigmoid
# that graph mode inlines into its fused loops (the build's bitcode of
# devices/cpu/vmathf.c and vmathf256.c, jit/llvm/kernels.c) give the bits
# of those eager mode calls (GCC's build), for every f32 argument
# (bench/vmath_llvm_bits.c).  The bitcode goes through LLVM 19's O2 and
# llc as in libmist_jit.so; the symbols get an llvm_ prefix.  Needs a
# CPU with AVX-512F and a built build/.  Several minutes on two cores.
#
#   bench/vmath_llvm_bits_run.sh       BUILD=build THREADS=2
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
llvm=$(llvm-config-19 --bindir 2>/dev/null || echo /usr/lib/llvm-19/bin)
if ! grep -qw avx512f /proc/cpuinfo || [ ! -f "$build/jit/llvm/vmathf.bc" ]; then
  echo "vmath_llvm_bits_run.sh: needs AVX-512F and $build/jit/llvm/vmathf.bc" >&2
  exit 1
fi
bin=$here/.bin
mkdir -p "$bin"
objs=()
for k in vmathf vmathf256; do
  "$llvm/opt" -passes='default<O2>' "$build/jit/llvm/$k.bc" -o "$bin/$k.opt.bc"
  "$llvm/llc" -O2 -filetype=obj -relocation-model=pic "$bin/$k.opt.bc" -o "$bin/$k.llvm.o"
  objcopy --prefix-symbols=llvm_ "$bin/$k.llvm.o"
  objs+=("$bin/$k.llvm.o")
done
gcc -O2 -mavx512f -mavx2 -mfma -fopenmp -o "$bin/vmath_llvm_bits" "$here/vmath_llvm_bits.c" "${objs[@]}" \
  "$build/devices/libmist_devices.a" -lm
OMP_NUM_THREADS=${THREADS:-2} "$bin/vmath_llvm_bits"
