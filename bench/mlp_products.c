/* mlp_products.c: the matrix products of one training step of the
 * 784-256-256-10 MLP (bench/jit/mlp.ms, bench/grad/mlp2.ms), each timed
 * alone, with the other ways the backward pass could compute them
 * (bench/mlp_products_run.sh; bench/README.md, "The MLP step's products
 * one by one").  OpenBLAS is opened as devices/blas.c and bench/jit/mlp.c
 * open it (OPENBLAS_CORETYPE from the CPU's features), one thread.
 *
 * The step multiplies, at batch B, in row-major f32 (the derivative of
 * a @ b is d @ b^T for a and a^T @ d for b, in eager and graph mode
 * alike: dev_gemm_f32 with the transposed operand as a BLAS transpose,
 * alpha 1, beta 0):
 *   forward   x @ w0 (B x 784 . 784 x 256), h0 @ w1, h1 @ w2: NN
 *   dW        h^T @ d: TN, m = fan in, n = fan out, k = B
 *   dX        d @ w^T: NT, m = B, n = fan in, k = fan out (not for x)
 * Alternatives timed for dW: beta 1 on a zeroed C (OpenBLAS's pass that
 * zeroes C left out), its transpose d^T @ h (TN with the sides swapped),
 * a copy of h^T then NN, NN on an h^T made beforehand (the NN kernel
 * alone), and devices/cpu/gemm_thin.c's AVX-512 kernel (no packing) where
 * it takes the shape; for dX: its transpose w @ d^T (NT), a copy of w^T
 * then NN, NN on a w^T made beforehand, and gemm_thin.c's NT kernel.
 * Each figure is the best of N calls, in microseconds, with GFLOP/s
 * (2 m n k); each alternative's
 * result is compared with the NT/TN product bit for bit ("bits same", or
 * the largest relative difference).  Then the eight products in the
 * step's order on the step's buffers (operands where the step leaves
 * them in the cache), each timed in place, the backward ones by
 * OpenBLAS and by Mist's kernels where they take the shape.
 *
 *   mlp_products N [B...]    best of N (default 300), batches (default 64 512) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/cpu/gemm_thin.h"

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef void (*SgemmFn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                        float *, int);
static SgemmFn sgemm;

static void load_blas(void) {
  __builtin_cpu_init();
  const char *want = getenv("MIST_BLAS_CORETYPE");
  if (!want || !*want) {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      want = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      want = "Haswell";
  }
  if (want && strcmp(want, "env") != 0) setenv("OPENBLAS_CORETYPE", want, 1);
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "mlp_products: cannot open OpenBLAS: %s\n", dlerror());
    exit(1);
  }
  sgemm = (SgemmFn)dlsym(h, "cblas_sgemm");
  void (*set_threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
  char *(*config)(void) = (char *(*)(void))dlsym(h, "openblas_get_config");
  char *(*corename)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
  if (!sgemm || !set_threads) {
    fprintf(stderr, "mlp_products: OpenBLAS lacks cblas_sgemm\n");
    exit(1);
  }
  set_threads(1);
  printf("blas %s; core %s; one thread\n", config ? config() : "?", corename ? corename() : "?");
}

/* C (m x n, ldc n) = op(A) @ op(B), row-major, lda and ldb the rows' lengths */
static void gemm(int ta, int tb, int m, int n, int k, const float *a, const float *b, float beta, float *c) {
  sgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, beta,
        c, n);
}

/* t (cols x rows) = the transpose of s (rows x cols), in 16 x 16 blocks */
static void transpose(int rows, int cols, const float *s, float *t) {
  for (int i0 = 0; i0 < rows; i0 += 16)
    for (int j0 = 0; j0 < cols; j0 += 16)
      for (int i = i0; i < i0 + 16 && i < rows; i++)
        for (int j = j0; j < j0 + 16 && j < cols; j++) t[(size_t)j * rows + i] = s[(size_t)i * cols + j];
}

/* ---- timing ---- */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
  int m, n, k;
  const float *a, *b, *at;
  float *c, *tmp;
} Job;

static int reps = 300;

static double best_us(void (*fn)(Job *), Job *j) {
  for (int i = 0; i < 10; i++) fn(j);
  double best = 1e9;
  for (int i = 0; i < reps; i++) {
    double s = now();
    fn(j);
    s = now() - s;
    if (s < best) best = s;
  }
  return best * 1e6;
}

/* dW = A^T @ B: a (k x m) the layer's input, b (k x n) the sensitivity */
static void dw_tn(Job *j) { gemm(1, 0, j->m, j->n, j->k, j->a, j->b, 0.0f, j->c); }
static void dw_tn_beta1(Job *j) { gemm(1, 0, j->m, j->n, j->k, j->a, j->b, 1.0f, j->c); }
static void dwt_tn(Job *j) { gemm(1, 0, j->n, j->m, j->k, j->b, j->a, 0.0f, j->tmp); }
static void dw_copy_nn(Job *j) {
  transpose(j->k, j->m, j->a, j->tmp);
  gemm(0, 0, j->m, j->n, j->k, j->tmp, j->b, 0.0f, j->c);
}
static void dw_nn_pre(Job *j) { gemm(0, 0, j->m, j->n, j->k, j->at, j->b, 0.0f, j->c); }
/* devices/cpu/gemm_thin.c's kernel where it takes the shape, else OpenBLAS */
static void dw_mist(Job *j) {
  if (!dev_cpu_sgemm_tn(j->m, j->n, j->k, j->a, j->m, j->b, j->n, j->c, j->n)) dw_tn(j);
}

/* dX = B @ W^T: m = batch, n = fan in, k = fan out; a = d (m x k), b = w (n x k) */
static void dx_nt(Job *j) { gemm(0, 1, j->m, j->n, j->k, j->a, j->b, 0.0f, j->c); }
static void dxt_nt(Job *j) { gemm(0, 1, j->n, j->m, j->k, j->b, j->a, 0.0f, j->tmp); }
static void dx_copy_nn(Job *j) {
  transpose(j->n, j->k, j->b, j->tmp);
  gemm(0, 0, j->m, j->n, j->k, j->a, j->tmp, 0.0f, j->c);
}
static void dx_mist(Job *j) {
  if (!dev_cpu_sgemm_nt(j->m, j->n, j->k, j->a, j->k, j->b, j->k, j->c, j->n)) dx_nt(j);
}
static void dx_nn_pre(Job *j) { gemm(0, 0, j->m, j->n, j->k, j->a, j->at, 0.0f, j->c); }

/* forward: a (m x k) @ b (k x n) */
static void fw_nn(Job *j) { gemm(0, 0, j->m, j->n, j->k, j->a, j->b, 0.0f, j->c); }

static float *randm(size_t n) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  for (size_t i = 0; i < n; i++) p[i] = (float)rand() / RAND_MAX - 0.5f;
  return p;
}

/* "bits same" or the largest relative difference of c against ref (transposed when t) */
static const char *compare(const float *ref, const float *c, int m, int n, int t) {
  static char buf[64];
  double worst = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float x = ref[(size_t)i * n + j], y = t ? c[(size_t)j * m + i] : c[(size_t)i * n + j];
      if (memcmp(&x, &y, 4) != 0) {
        double d = fabs((double)x - y) / (fabs(x) > 1e-30 ? fabs(x) : 1e-30);
        if (d > worst || worst == 0) worst = d > 0 ? d : 1e-300;
      }
    }
  if (worst == 0) return "bits same";
  snprintf(buf, sizeof buf, "differs, %.1e rel", worst);
  return buf;
}

static void row(const char *name, double us, const Job *j, const char *bits) {
  printf("  %-34s %5dx%-4dx%-4d %9.1f us %7.1f GFLOP/s  %s\n", name, j->m, j->n, j->k, us,
         2.0 * j->m * j->n * j->k / us * 1e-3, bits);
}

static const int fan_in[3] = {784, 256, 256}, fan_out[3] = {256, 256, 10};

static void batch(int b) {
  printf("batch %d\n", b);
  double fw = 0, bw_mist = 0, bw_best = 0;
  for (int l = 0; l < 3; l++) {
    Job j = {b, fan_out[l], fan_in[l]};
    j.a = randm((size_t)b * fan_in[l]);
    j.b = randm((size_t)fan_in[l] * fan_out[l]);
    j.c = randm((size_t)b * fan_out[l]);
    double us = best_us(fw_nn, &j);
    fw += us;
    char name[64];
    snprintf(name, sizeof name, "forward %d: x @ w (NN)", l);
    row(name, us, &j, "");
  }
  for (int l = 2; l >= 0; l--) {
    int in = fan_in[l], out = fan_out[l];
    /* dW (in x out) = h^T (in x b) @ d (b x out) */
    Job j = {in, out, b};
    j.a = randm((size_t)b * in);
    j.b = randm((size_t)b * out);
    float *at = randm((size_t)in * b);
    transpose(b, in, j.a, at);
    j.at = at;
    j.c = randm((size_t)in * out);
    j.tmp = randm((size_t)in * out + (size_t)in * b);
    float *ref = randm((size_t)in * out);
    dw_tn(&j);
    memcpy(ref, j.c, (size_t)in * out * sizeof(float));
    char name[64];
    double us = best_us(dw_tn, &j), best = us;
    bw_mist += us;
    snprintf(name, sizeof name, "dW%d = h^T @ d (TN, Mist)", l);
    row(name, us, &j, "");
    memset(j.c, 0, (size_t)in * out * sizeof(float));
    us = best_us(dw_tn_beta1, &j);
    row("   beta 1 (no zeroing pass)", us, &j, "");
    us = best_us(dwt_tn, &j);
    row("   dW^T = d^T @ h (TN)", us, &j, compare(ref, j.tmp, in, out, 1));
    us = best_us(dw_copy_nn, &j);
    if (us < best) best = us;
    row("   copy h^T, then NN", us, &j, compare(ref, j.c, in, out, 0));
    us = best_us(dw_nn_pre, &j);
    row("   NN on h^T made before (kernel)", us, &j, compare(ref, j.c, in, out, 0));
    if (dev_cpu_sgemm_tn(in, out, b, j.a, in, j.b, out, j.c, out)) {
      us = best_us(dw_mist, &j);
      if (us < best) best = us;
      row("   Mist's kernel (cpu/gemm_thin.c)", us, &j, compare(ref, j.c, in, out, 0));
    } else
      printf("   Mist's kernel (cpu/gemm_thin.c) declines this shape: OpenBLAS\n");
    bw_best += best;
    free(at), free((void *)j.a), free((void *)j.b), free(j.c), free(j.tmp), free(ref);
    if (l == 0) break; /* x's sensitivity is not computed */
    /* dX (b x in) = d (b x out) @ w^T (out x in) */
    Job x = {b, in, out};
    x.a = randm((size_t)b * out);
    x.b = randm((size_t)in * out);
    float *wt = randm((size_t)in * out);
    transpose(in, out, x.b, wt);
    x.at = wt;
    x.c = randm((size_t)b * in);
    x.tmp = randm((size_t)in * out + (size_t)b * in);
    ref = randm((size_t)b * in);
    dx_nt(&x);
    memcpy(ref, x.c, (size_t)b * in * sizeof(float));
    us = best_us(dx_nt, &x), best = us;
    bw_mist += us;
    snprintf(name, sizeof name, "dX%d = d @ w^T (NT, Mist)", l);
    row(name, us, &x, "");
    us = best_us(dxt_nt, &x);
    row("   dX^T = w @ d^T (NT)", us, &x, compare(ref, x.tmp, b, in, 1));
    us = best_us(dx_copy_nn, &x);
    if (us < best) best = us;
    row("   copy w^T, then NN", us, &x, compare(ref, x.c, b, in, 0));
    us = best_us(dx_nn_pre, &x);
    row("   NN on w^T made before (kernel)", us, &x, compare(ref, x.c, b, in, 0));
    if (dev_cpu_sgemm_nt(b, in, out, x.a, out, x.b, out, x.c, in)) {
      us = best_us(dx_mist, &x);
      if (us < best) best = us;
      row("   Mist's kernel (cpu/gemm_thin.c)", us, &x, compare(ref, x.c, b, in, 0));
    } else
      printf("   Mist's kernel (cpu/gemm_thin.c) declines this shape: OpenBLAS\n");
    bw_best += best;
    free(wt), free((void *)x.a), free((void *)x.b), free(x.c), free(x.tmp), free(ref);
  }
  printf("  forward products %.1f us; backward, Mist's flags %.1f us (gradient/forward %.2fx);"
         " backward, fastest way each %.1f us (%.2fx)\n",
         fw, bw_mist, (fw + bw_mist) / fw, bw_best, (fw + bw_best) / fw);
}

/* The eight products in the step's order on the step's buffers, as
 * bench/jit/mlp.c's step_products runs them (each operand last touched
 * where the step touches it), each timed in place: best of N per
 * product and of the whole; the backward products by OpenBLAS, or by
 * gemm_thin.c's kernels where they take the shape (hand). */
static void sequence(int b, int hand) {
  static const char *names[8] = {"x @ w0", "h0 @ w1", "h1 @ w2", "dW2 = h1^T @ dz", "dh1 = dz @ w2^T",
                                 "dW1 = h0^T @ dh1", "dh0 = dh1 @ w1^T", "dW0 = x^T @ dh0"};
  float *x = randm((size_t)b * 784), *w[3], *gw[3], *h0 = randm((size_t)b * 256), *h1 = randm((size_t)b * 256),
        *lg = randm((size_t)b * 10), *dz = randm((size_t)b * 10), *dh1 = randm((size_t)b * 256),
        *dh0 = randm((size_t)b * 256);
  for (int l = 0; l < 3; l++) w[l] = randm((size_t)fan_in[l] * fan_out[l]), gw[l] = randm((size_t)fan_in[l] * fan_out[l]);
  double best[8], total = 1e9;
  for (int i = 0; i < 8; i++) best[i] = 1e9;
  for (int it = 0; it < reps + 10; it++) {
    double t[9];
    t[0] = now();
    gemm(0, 0, b, 256, 784, x, w[0], 0.0f, h0);
    t[1] = now();
    gemm(0, 0, b, 256, 256, h0, w[1], 0.0f, h1);
    t[2] = now();
    gemm(0, 0, b, 10, 256, h1, w[2], 0.0f, lg);
    t[3] = now();
    if (!hand || !dev_cpu_sgemm_tn(256, 10, b, h1, 256, dz, 10, gw[2], 10)) gemm(1, 0, 256, 10, b, h1, dz, 0.0f, gw[2]);
    t[4] = now();
    if (!hand || !dev_cpu_sgemm_nt(b, 256, 10, dz, 10, w[2], 10, dh1, 256)) gemm(0, 1, b, 256, 10, dz, w[2], 0.0f, dh1);
    t[5] = now();
    if (!hand || !dev_cpu_sgemm_tn(256, 256, b, h0, 256, dh1, 256, gw[1], 256))
      gemm(1, 0, 256, 256, b, h0, dh1, 0.0f, gw[1]);
    t[6] = now();
    if (!hand || !dev_cpu_sgemm_nt(b, 256, 256, dh1, 256, w[1], 256, dh0, 256))
      gemm(0, 1, b, 256, 256, dh1, w[1], 0.0f, dh0);
    t[7] = now();
    if (!hand || !dev_cpu_sgemm_tn(784, 256, b, x, 784, dh0, 256, gw[0], 256))
      gemm(1, 0, 784, 256, b, x, dh0, 0.0f, gw[0]);
    t[8] = now();
    if (it < 10) continue;
    for (int i = 0; i < 8; i++)
      if (t[i + 1] - t[i] < best[i]) best[i] = t[i + 1] - t[i];
    if (t[8] - t[0] < total) total = t[8] - t[0];
  }
  printf("batch %d, the eight products in the step's order, the backward ones by %s\n", b, hand ? "Mist's kernels where they apply" : "OpenBLAS");
  double fw = 0, bw = 0;
  for (int i = 0; i < 8; i++) {
    printf("  %-20s %8.1f us\n", names[i], best[i] * 1e6);
    if (i < 3) fw += best[i];
    else bw += best[i];
  }
  printf("  forward %.1f us, backward %.1f us, (forward + backward) / forward %.2fx; best whole sequence %.1f us\n",
         fw * 1e6, bw * 1e6, (fw + bw) / fw, total * 1e6);
  free(x), free(h0), free(h1), free(lg), free(dz), free(dh1), free(dh0);
  for (int l = 0; l < 3; l++) free(w[l]), free(gw[l]);
}

int main(int argc, char **argv) {
  if (argc > 1) reps = atoi(argv[1]);
  load_blas();
  int n = argc > 2 ? argc - 2 : 2;
  for (int i = 0; i < n; i++) {
    int b = argc > 2 ? atoi(argv[i + 2]) : i ? 512 : 64;
    batch(b);
    sequence(b, 0);
    sequence(b, 1);
  }
  return 0;
}
