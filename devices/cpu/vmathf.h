/* devices/cpu/vmathf.h: internal to devices/cpu: f32 transcendentals
 * for x86-64 with AVX-512, computed in double precision inside the
 * vector (vmathf.c).  Call only when the CPU has AVX-512F.  out may
 * equal x. */
#ifndef MIST_DEVICES_CPU_VMATHF_H
#define MIST_DEVICES_CPU_VMATHF_H

#include <stdint.h>

void dev_vexpf_avx512(float *out, const float *x, int64_t n);
void dev_vlogf_avx512(float *out, const float *x, int64_t n);
void dev_vtanhf_avx512(float *out, const float *x, int64_t n);
void dev_vsigmoidf_avx512(float *out, const float *x, int64_t n);

#endif
