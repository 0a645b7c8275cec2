/* devices/cpu/vmathf.h: internal to devices/cpu: f32 transcendentals
 * for x86-64, within 1 ulp of the exact value for every argument
 * (vmathf.c): the _avx512 functions for a CPU with AVX-512F, the _avx2
 * ones (vmathf256.c: the same bits, 8 lanes at a time) for one with
 * AVX2 and FMA.  Call each only on such a CPU.  out may equal x. */
#ifndef MIST_DEVICES_CPU_VMATHF_H
#define MIST_DEVICES_CPU_VMATHF_H

#include <stdint.h>

void dev_vexpf_avx512(float *out, const float *x, int64_t n);
void dev_vlogf_avx512(float *out, const float *x, int64_t n);
void dev_vtanhf_avx512(float *out, const float *x, int64_t n);
void dev_vsigmoidf_avx512(float *out, const float *x, int64_t n);

void dev_vexpf_avx2(float *out, const float *x, int64_t n);
void dev_vlogf_avx2(float *out, const float *x, int64_t n);
void dev_vtanhf_avx2(float *out, const float *x, int64_t n);
void dev_vsigmoidf_avx2(float *out, const float *x, int64_t n);

/* The same on one vector of 16 floats (__m512) or 8 (__m256), for
 * dev_vec_unary. */
#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx512f"))) __m512 dev_vec_expf16(__m512 v);
__attribute__((target("avx512f"))) __m512 dev_vec_logf16(__m512 v);
__attribute__((target("avx512f"))) __m512 dev_vec_tanhf16(__m512 v);
__attribute__((target("avx512f"))) __m512 dev_vec_sigmoidf16(__m512 v);
__attribute__((target("avx2,fma"))) __m256 dev_vec_expf8(__m256 v);
__attribute__((target("avx2,fma"))) __m256 dev_vec_logf8(__m256 v);
__attribute__((target("avx2,fma"))) __m256 dev_vec_tanhf8(__m256 v);
__attribute__((target("avx2,fma"))) __m256 dev_vec_sigmoidf8(__m256 v);
#endif

#endif
