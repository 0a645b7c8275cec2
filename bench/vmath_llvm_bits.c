/* vmath_llvm_bits.c: Mist's own f32 exp, log, tanh and sigmoid as
 * graph mode's fused loops get them (the build's bitcode, jit/llvm/
 * kernels.c, optimised and compiled by LLVM 19; their names prefixed
 * llvm_) against the functions eager mode calls (GCC's build, in
 * libmist_devices.a), bit for bit, over every one of the 2^32 f32
 * arguments, 16 lanes and 8 (bench/vmath_llvm_bits_run.sh).  Prints per
 * function and width how many arguments give other bits; exits 1 if
 * any does.  Split over OMP_NUM_THREADS threads; needs AVX-512F. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define T512 __attribute__((target("avx512f")))
#define T256 __attribute__((target("avx2,fma")))
#define DECLARE(f)                                                              \
  T512 __m512 dev_vec_##f##16(__m512);                                          \
  T512 __m512 llvm_dev_vec_##f##16(__m512);                                     \
  T256 __m256 dev_vec_##f##8(__m256);                                           \
  T256 __m256 llvm_dev_vec_##f##8(__m256);
DECLARE(expf)
DECLARE(logf)
DECLARE(tanhf)
DECLARE(sigmoidf)

typedef __m512 (*Fn16)(__m512);
typedef __m256 (*Fn8)(__m256);

int main(void) {
  const char *names[] = {"exp", "log", "tanh", "sigmoid"};
  Fn16 gcc16[] = {dev_vec_expf16, dev_vec_logf16, dev_vec_tanhf16, dev_vec_sigmoidf16};
  Fn16 llvm16[] = {llvm_dev_vec_expf16, llvm_dev_vec_logf16, llvm_dev_vec_tanhf16, llvm_dev_vec_sigmoidf16};
  Fn8 gcc8[] = {dev_vec_expf8, dev_vec_logf8, dev_vec_tanhf8, dev_vec_sigmoidf8};
  Fn8 llvm8[] = {llvm_dev_vec_expf8, llvm_dev_vec_logf8, llvm_dev_vec_tanhf8, llvm_dev_vec_sigmoidf8};
  int status = 0;
  for (int f = 0; f < 4; f++) {
    uint64_t differ16 = 0, differ8 = 0;
#pragma omp parallel for reduction(+ : differ16, differ8) schedule(static, 4096)
    for (int64_t b = 0; b < ((int64_t)1 << 32); b += 16) {
      uint32_t in[16], a[16], c[16];
      for (int i = 0; i < 16; i++) in[i] = (uint32_t)(b + i);
      __m512 x;
      memcpy(&x, in, sizeof x);
      _mm512_storeu_ps((float *)a, gcc16[f](x));
      _mm512_storeu_ps((float *)c, llvm16[f](x));
      for (int i = 0; i < 16; i++) differ16 += a[i] != c[i];
      for (int h = 0; h < 2; h++) {
        __m256 y;
        memcpy(&y, in + 8 * h, sizeof y);
        _mm256_storeu_ps((float *)a, gcc8[f](y));
        _mm256_storeu_ps((float *)c, llvm8[f](y));
        for (int i = 0; i < 8; i++) differ8 += a[i] != c[i];
      }
    }
    printf("%-8s 16 lanes: %llu arguments with other bits; 8 lanes: %llu\n", names[f],
           (unsigned long long)differ16, (unsigned long long)differ8);
    status |= differ16 || differ8;
  }
  return status;
}
