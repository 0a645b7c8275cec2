/* mlp.c: the C baseline of bench/jit/mlp.ms (bench/jit_mlp_run.sh): one
 * training step of a 784-256-256-10 MLP on a batch of B (float32), two
 * relu hidden layers, log_softmax cross-entropy averaged over the batch,
 * an SGD update (lr 0.01) of the three weights and biases into new
 * buffers (the old parameters stay, as Mist's step returns new ones, so
 * every step computes the same numbers).  Forward, backward and update
 * are written by hand with the arithmetic Mist's step does (its rules in
 * stdlib/ad_rules.ms and ir/prims_sens.c): f32 everywhere, sums over an
 * axis accumulated in double and rounded once, `p - 0.01f * g` without
 * FMA contraction (build with -ffp-contract=off); the eight matrix
 * products are OpenBLAS's cblas_sgemm on preallocated buffers, the
 * transposed operands passed as BLAS transposes.
 *
 * OpenBLAS is opened with dlopen exactly as devices/blas.c opens it:
 * OPENBLAS_CORETYPE set from the CPU's features just before (AVX-512
 * F/CD/BW/DQ/VL: SkylakeX; AVX2 and FMA: Haswell), or from
 * MIST_BLAS_CORETYPE ("env" keeps the environment's), so the baseline
 * runs the kernel Mist runs; the core OpenBLAS reports is printed.
 *
 *   mlp N B [THREADS]   best of N calls of the forward pass and of the
 *                       step (after 0.3 s of warm-up); OpenBLAS on
 *                       THREADS threads (default 1)
 * Prints "batch B forward_ms F step_ms S grad_ms G blas_forward_ms BF
 * blas_step_ms BS check C": G the step without its update (the forward
 * and backward passes: the gradient's cost), BF and BS the forward pass's three products and the step's
 * eight alone (best of N each: the floor OpenBLAS sets under S / F), C
 * the step's loss plus the sum of every new parameter, in double, as
 * mlp.ms prints it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef void (*SgemmFn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                        float *, int);
static SgemmFn sgemm;

static const char *cpu_coretype(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return NULL;
}

static void load_blas(int threads) {
  const char *want = getenv("MIST_BLAS_CORETYPE");
  if (!(want && strcmp(want, "env") == 0)) {
    if (!want || !*want) want = cpu_coretype();
    if (want) setenv("OPENBLAS_CORETYPE", want, 1);
  }
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "mlp: cannot open OpenBLAS: %s\n", dlerror());
    exit(1);
  }
  sgemm = (SgemmFn)dlsym(h, "cblas_sgemm");
  void (*set_threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
  char *(*config)(void) = (char *(*)(void))dlsym(h, "openblas_get_config");
  char *(*corename)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
  if (!sgemm || !set_threads) {
    fprintf(stderr, "mlp: OpenBLAS lacks cblas_sgemm\n");
    exit(1);
  }
  set_threads(threads);
  printf("blas %s; core %s; OPENBLAS_CORETYPE=%s; %d thread(s)\n", config ? config() : "?",
         corename ? corename() : "?", getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)",
         threads);
}

/* C (m x n) = op(A) @ op(B), row-major, beta 0 */
static void gemm(int ta, int tb, int m, int n, int k, const float *a, const float *b, float *c) {
  sgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f,
        c, n);
}

#define NI 784
#define NH 256
#define NO 10

typedef struct {
  int b;
  const float *x, *y, *w[3], *bias[3];
  /* forward */
  float *z0, *h0, *z1, *h1, *lg, *lsm;
  /* backward */
  float *dz, *dh1, *dh0, *gw[3], *gb[3];
  /* new parameters */
  float *nw[3], *nb[3];
  float loss;
} Net;

static const int fan_in[3] = {NI, NH, NH}, fan_out[3] = {NH, NH, NO};

/* z = a @ w (a: b x k), then out = z + bias, relu'd when relu (z kept) */
static void dense(int b, int k, int n, const float *a, const float *w, const float *bias, float *z, float *out,
                  int relu) {
  gemm(0, 0, b, n, k, a, w, z);
  for (int i = 0; i < b; i++)
    for (int j = 0; j < n; j++) {
      float v = z[i * n + j] + bias[j];
      out[i * n + j] = relu ? (v > 0.0f ? v : 0.0f) : v;
    }
}

static void forward(Net *t) {
  int b = t->b;
  dense(b, NI, NH, t->x, t->w[0], t->bias[0], t->z0, t->h0, 1);
  dense(b, NH, NH, t->h0, t->w[1], t->bias[1], t->z1, t->h1, 1);
  dense(b, NH, NO, t->h1, t->w[2], t->bias[2], t->lg, t->lg, 0);
  /* log_softmax over each row: z - (log(sum(exp(z - m))) + m) */
  double total = 0.0;
  for (int i = 0; i < b; i++) {
    const float *z = t->lg + i * NO;
    float m = z[0];
    for (int j = 1; j < NO; j++) m = z[j] > m ? z[j] : m;
    double s = 0.0;
    for (int j = 0; j < NO; j++) s += expf(z[j] - m);
    float l = logf((float)s) + m;
    double row = 0.0;
    for (int j = 0; j < NO; j++) {
      t->lsm[i * NO + j] = z[j] - l;
      row += t->lsm[i * NO + j] * t->y[i * NO + j];
    }
    total += (float)row;
  }
  t->loss = -(float)(total / b);
}

/* the bias's gradient: d summed over the batch, each column in double,
 * row after row (the order Mist's sum over axis 0 adds them in) */
static void sum_rows(int b, int n, const float *d, float *out) {
  double acc[NH];
  for (int j = 0; j < n; j++) acc[j] = 0.0;
  for (int i = 0; i < b; i++)
    for (int j = 0; j < n; j++) acc[j] += d[i * n + j];
  for (int j = 0; j < n; j++) out[j] = (float)acc[j];
}

/* relu's sensitivity: d where z + bias > 0, else 0 */
static void relu_mask(int b, float *d, const float *z, const float *bias) {
  for (int i = 0; i < b; i++)
    for (int j = 0; j < NH; j++) d[i * NH + j] = z[i * NH + j] + bias[j] > 0.0f ? d[i * NH + j] : 0.0f;
}

/* the gradient: the forward pass and the backward pass, no update */
static void gradient(Net *t) {
  int b = t->b;
  forward(t);
  /* mean, then sum over axis 1, then the product with y: d = y * (-1 / b);
   * log_softmax's rule: dz = d - exp(lsm) * sum(d, axis 1) */
  float dm = -1.0f / (float)b;
  for (int i = 0; i < b; i++) {
    double s = 0.0;
    float *d = t->dz + i * NO;
    for (int j = 0; j < NO; j++) {
      d[j] = dm * t->y[i * NO + j];
      s += d[j];
    }
    for (int j = 0; j < NO; j++) d[j] = d[j] - expf(t->lsm[i * NO + j]) * (float)s;
  }
  sum_rows(b, NO, t->dz, t->gb[2]);
  gemm(1, 0, NH, NO, b, t->h1, t->dz, t->gw[2]);
  gemm(0, 1, b, NH, NO, t->dz, t->w[2], t->dh1);
  relu_mask(b, t->dh1, t->z1, t->bias[1]);
  sum_rows(b, NH, t->dh1, t->gb[1]);
  gemm(1, 0, NH, NH, b, t->h0, t->dh1, t->gw[1]);
  gemm(0, 1, b, NH, NH, t->dh1, t->w[1], t->dh0);
  relu_mask(b, t->dh0, t->z0, t->bias[0]);
  sum_rows(b, NH, t->dh0, t->gb[0]);
  gemm(1, 0, NI, NH, b, t->x, t->dh0, t->gw[0]);
}

static void step(Net *t) {
  gradient(t);
  /* the update, p - 0.01 * g in f32 */
  for (int l = 0; l < 3; l++) {
    int nw = fan_in[l] * fan_out[l], nb = fan_out[l];
    for (int i = 0; i < nw; i++) t->nw[l][i] = t->w[l][i] - 0.01f * t->gw[l][i];
    for (int i = 0; i < nb; i++) t->nb[l][i] = t->bias[l][i] - 0.01f * t->gb[l][i];
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The step's eight matrix products alone, the forward pass's three
 * first, on the buffers the last step left (the same shapes, transposes
 * and data): what OpenBLAS alone takes, the floor under the step's
 * ratio to its forward pass that no fusion of the elementwise work can
 * go below. */
static void forward_products(Net *t) {
  int b = t->b;
  gemm(0, 0, b, NH, NI, t->x, t->w[0], t->z0);
  gemm(0, 0, b, NH, NH, t->h0, t->w[1], t->z1);
  gemm(0, 0, b, NO, NH, t->h1, t->w[2], t->lg);
}

static void step_products(Net *t) {
  int b = t->b;
  forward_products(t);
  gemm(1, 0, NH, NO, b, t->h1, t->dz, t->gw[2]);
  gemm(0, 1, b, NH, NO, t->dz, t->w[2], t->dh1);
  gemm(1, 0, NH, NH, b, t->h0, t->dh1, t->gw[1]);
  gemm(0, 1, b, NH, NH, t->dh1, t->w[1], t->dh0);
  gemm(1, 0, NI, NH, b, t->x, t->dh0, t->gw[0]);
}

/* the best of reps calls of fn, in seconds */
static double best_of(int reps, void (*fn)(Net *), Net *t) {
  double best = 1e9;
  for (int i = 0; i < reps; i++) {
    double s = now();
    fn(t);
    s = now() - s;
    if (s < best) best = s;
  }
  return best;
}

/* mlp2.ms's det(shape, n, phase, scale): sin((i % 97) * 0.37 + phase) * scale,
 * all in f32 as Mist computes it (an int tensor times a float is f32) */
static float *det(int n, double phase, float scale) {
  float *p = malloc((size_t)n * sizeof *p);
  for (int i = 0; i < n; i++) p[i] = sinf((float)(i % 97) * 0.37f + (float)phase) * scale;
  return p;
}

static float *buf(int n) { return calloc((size_t)n, sizeof(float)); }

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 100, b = argc > 2 ? atoi(argv[2]) : 64,
      threads = argc > 3 ? atoi(argv[3]) : 1;
  load_blas(threads);
  Net t = {.b = b};
  float *w[3], *bias[3];
  for (int l = 0; l < 3; l++) {
    w[l] = det(fan_in[l] * fan_out[l], 0.1 * l + 0.1, 0.05f);
    bias[l] = det(fan_out[l], 0.1 * l + 0.2, 0.01f);
    t.w[l] = w[l];
    t.bias[l] = bias[l];
    t.gw[l] = buf(fan_in[l] * fan_out[l]);
    t.gb[l] = buf(fan_out[l]);
    t.nw[l] = buf(fan_in[l] * fan_out[l]);
    t.nb[l] = buf(fan_out[l]);
  }
  t.x = det(b * NI, 0.5, 1.0f);
  float *y = buf(b * NO);
  for (int i = 0; i < b; i++) y[i * NO + i % 10] = 1.0f;
  t.y = y;
  t.z0 = buf(b * NH), t.h0 = buf(b * NH), t.z1 = buf(b * NH), t.h1 = buf(b * NH);
  t.lg = buf(b * NO), t.lsm = buf(b * NO), t.dz = buf(b * NO);
  t.dh1 = buf(b * NH), t.dh0 = buf(b * NH);

  double t0 = now();
  while (now() - t0 < 0.3) step(&t);
  double best_f = best_of(reps, forward, &t), best_s = best_of(reps, step, &t);
  double best_g = best_of(reps, gradient, &t);
  double blas_f = best_of(reps, forward_products, &t), blas_s = best_of(reps, step_products, &t);
  step(&t);   /* the check's buffers as a step leaves them */
  double check = t.loss;
  for (int l = 0; l < 3; l++) {
    for (int i = 0; i < fan_in[l] * fan_out[l]; i++) check += t.nw[l][i];
    for (int i = 0; i < fan_out[l]; i++) check += t.nb[l][i];
  }
  printf("batch %d forward_ms %.4f step_ms %.4f grad_ms %.4f blas_forward_ms %.4f blas_step_ms %.4f check %.9e\n",
         b, best_f * 1e3, best_s * 1e3, best_g * 1e3, blas_f * 1e3, blas_s * 1e3, check);
  return 0;
}
