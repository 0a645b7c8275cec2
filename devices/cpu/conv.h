/* devices/cpu/conv.h: 2-D convolution and max pooling, NCHW, groups = 1.
 * Output sizes follow PyTorch: Ho = (H + 2*ph - kh) / sh + 1, likewise Wo
 * (callers check that they are >= 1). */
#ifndef MIST_DEVICES_CPU_CONV_H
#define MIST_DEVICES_CPU_CONV_H

#include <stdint.h>

#include "devices/pool.h"

/* Ho (or Wo) for one spatial axis; < 1 when the window does not fit. */
int64_t dev_conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad);

/* out[N, Cout, Ho, Wo] = conv(x[N, Cin, H, W], wt[Cout, Cin, Kh, Kw])
 * + bias[Cout] (bias may be NULL).  Through im2col + gemm; when the
 * scratch buffer cannot be allocated, through direct loops instead. */
void dev_conv2d_f32(DevPool *p, const float *x, int64_t n, int64_t cin, int64_t h, int64_t w,
                    const float *wt, int64_t cout, int64_t kh, int64_t kw, const float *bias,
                    int64_t sh, int64_t sw, int64_t ph, int64_t pw, float *out);
void dev_conv2d_f64(DevPool *p, const double *x, int64_t n, int64_t cin, int64_t h, int64_t w,
                    const double *wt, int64_t cout, int64_t kh, int64_t kw, const double *bias,
                    int64_t sh, int64_t sw, int64_t ph, int64_t pw, double *out);

/* out[N, C, Ho, Wo] = max over each window (padding counts as -inf);
 * argmax, when not NULL, gets the flat index h*W + w of the winner in
 * its input plane: the first element of the window unless a larger value
 * or a NaN comes later (PyTorch's rule: the last NaN wins); -1 when a
 * window holds only padding. */
void dev_maxpool2d_f32(DevPool *p, const float *x, int64_t n, int64_t c, int64_t h, int64_t w,
                       int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                       float *out, int64_t *argmax);
void dev_maxpool2d_f64(DevPool *p, const double *x, int64_t n, int64_t c, int64_t h, int64_t w,
                       int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                       double *out, int64_t *argmax);

#endif
