#!/usr/bin/env bash
# tests/jit/avx2_bits.sh MIST: graph mode's fused loops for an AVX2 CPU
# (256-bit vectors, the AVX2 kernels' transcendentals, Mist's own f32
# ones inlined) against eager mode, bit for bit (avx2_bits.ms); that
# those are inlined; and on a CPU with AVX-512F, Mist's
# 8-lane f32 exp, log, tanh and sigmoid (eager mode's under valgrind)
# against the 16-lane ones (eager mode's without it), bit for bit.  valgrind runs mist on a CPU without
# AVX-512F as far as the program sees (it hides AVX-512), which is the
# only way to reach that path on an AVX-512 machine.  Skipped (77)
# without valgrind or AVX2 and FMA.
set -uo pipefail
mist=$1
here=$(cd "$(dirname "$0")" && pwd)
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
if ! command -v valgrind > /dev/null || [[ " $flags " != *" avx2 "* ]] || [[ " $flags " != *" fma "* ]]; then
  echo "needs valgrind and a CPU with AVX2 and FMA (skipped)"
  exit 77
fi
out=$(MIST_JIT_CACHE=0 MIST_JIT_LOG=1 valgrind --tool=none -q "$mist" "$here/avx2_bits.ms" 2>&1)
status=0
# every chain fused, transcendentals and pow included
if [ "$(grep -c ': fused 15 ops\|: fused 11 ops' <<<"$out")" -ne 16 ]; then
  echo "FAIL: not every chain fused in one loop:"
  grep ': fused' <<<"$out"
  status=1
fi
if [ "$(grep -E '^f(32|64) [0-9]+ ' <<<"$out")" != "$(printf 'f32 %s 0 0\n' 2 9 37 300; printf 'f64 %s 0 0\n' 2 9 37 300)" ]; then
  echo "FAIL: fused loops differ from eager mode:"
  echo "$out" | grep -v '^jit:'
  status=1
fi
# Mist's own f32 exp, log, tanh and sigmoid are inlined into the fused
# loop (jit/llvm/kernels.c), not called, at 8 lanes and (on a CPU with
# AVX-512F) at 16: the loop of transc holds no call of them
for cpu in x86-64-v3 ""; do
  [ -z "$cpu" ] && [[ " $flags " != *" avx512f "* ]] && continue
  ir=$(MIST_JIT_CPU=$cpu MIST_JIT_CACHE=0 "$mist" emit-llvm "$here/avx2_bits.ms" transc 'f32[9]' 2>&1)
  if ! grep -q '^define internal void @m0.fused' <<<"$ir" ||
    grep -q 'call .*@mist_vec\(256\)\?_\(exp\|log\|tanh\|sigmoid\)_f32' <<<"$ir"; then
    echo "FAIL: the fused loop for ${cpu:-this CPU} calls Mist's f32 exp, log, tanh or sigmoid (or there is none):"
    grep -E '^define|call .*@mist_vec' <<<"$ir"
    status=1
  fi
done
# Mist's own f32 kernels: 8 lanes here give the bits of the 16 that
# eager mode calls on this CPU when it has AVX-512F
if [[ " $flags " == *" avx512f "* ]]; then
  native=$(MIST_JIT_CACHE=0 "$mist" "$here/avx2_bits.ms" 2>&1 | grep '^values')
  if [ "$(grep -c '^values' <<<"$native")" -ne 4 ] || [ "$native" != "$(grep '^values' <<<"$out")" ]; then
    echo "FAIL: f32 exp, log, tanh or sigmoid give other values on 8 lanes (valgrind) than on 16:"
    diff <(tr ',' '\n' <<<"$native") <(grep '^values' <<<"$out" | tr ',' '\n') | head -20
    status=1
  fi
fi
exit $status
