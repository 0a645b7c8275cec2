/* optim.c: the update of one tensor leaf by optim.ms's momentum and
 * Adam, as one pass over its elements.
 *
 * Written as tensor operations (optim.ms does that for float leaves),
 * an Adam step is fourteen elementwise operations per leaf, each reading
 * and writing a whole tensor and allocating its result; for an MLP's
 * weights that is most of a training step's time and memory traffic.
 * Here each element is read once and p, m and v are written once, in the
 * leaf's dtype, with the operations and their order of optim.ms (no
 * fused multiply-adds: contraction is off).  Large leaves are split over the thread pool. */
#include <math.h>
#include <string.h>

#include "devices/pool.h"
#include "stdlib/builtins.h"
#include "stdlib/files.h"
#include "stdlib/tensor.h"

/* vectorised for AVX-512 and AVX2 too; CMakeLists.txt builds this file
 * with -O3 -fno-math-errno (sqrt an instruction) -ffp-contract=off (no
 * fused multiply-adds) */
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

typedef struct Adam {
  const void *p, *g, *m, *v;
  void *po, *mo, *vo;
  double lr, b1, b2, eps, c1, c2;
  DType dt;
} Adam;

/* One pass over elements [begin, end) of a leaf; the arguments are
 * plain pointers (restrict: p, m, v and the new ones never overlap) so
 * that GCC vectorises the loop. */
#define ADAM_FN(NAME, T, SQRT)                                                                \
  CLONES static void NAME(const T *restrict p, const T *restrict g, const T *restrict m,        \
                          const T *restrict v, T *restrict po, T *restrict mo, T *restrict vo,  \
                          int64_t begin, int64_t end, T b1, T b2, T nb1, T nb2, T c1, T c2,     \
                          T lr, T eps) {                                                        \
    for (int64_t i = begin; i < end; i++) {                                                   \
      T mi = m[i] * b1 + g[i] * nb1;                                                          \
      T vi = v[i] * b2 + g[i] * g[i] * nb2;                                                   \
      mo[i] = mi;                                                                             \
      vo[i] = vi;                                                                             \
      po[i] = p[i] - (mi / c1) * lr / (SQRT(vi / c2) + eps);                                  \
    }                                                                                         \
  }
ADAM_FN(adam_f32, float, sqrtf)
ADAM_FN(adam_f64, double, sqrt)

static void adam_rows(void *ctx, int64_t begin, int64_t end) {
  Adam *a = ctx;
  if (a->dt == DT_F32)
    adam_f32(a->p, a->g, a->m, a->v, a->po, a->mo, a->vo, begin, end, (float)a->b1, (float)a->b2,
             (float)(1.0 - a->b1), (float)(1.0 - a->b2), (float)a->c1, (float)a->c2, (float)a->lr,
             (float)a->eps);
  else
    adam_f64(a->p, a->g, a->m, a->v, a->po, a->mo, a->vo, begin, end, a->b1, a->b2, 1.0 - a->b1,
             1.0 - a->b2, a->c1, a->c2, a->lr, a->eps);
}

typedef struct Momentum {
  const void *p, *g, *v;
  void *po, *vo;
  double lr, beta;
  DType dt;
} Momentum;

#define MOMENTUM_FN(NAME, T)                                                                  \
  CLONES static void NAME(const T *restrict p, const T *restrict g, const T *restrict v,        \
                          T *restrict po, T *restrict vo, int64_t begin, int64_t end, T beta,   \
                          T lr) {                                                               \
    for (int64_t i = begin; i < end; i++) {                                                   \
      T vi = v[i] * beta + g[i];                                                              \
      vo[i] = vi;                                                                             \
      po[i] = p[i] - vi * lr;                                                                 \
    }                                                                                         \
  }
MOMENTUM_FN(momentum_f32, float)
MOMENTUM_FN(momentum_f64, double)

static void momentum_rows(void *ctx, int64_t begin, int64_t end) {
  Momentum *a = ctx;
  if (a->dt == DT_F32)
    momentum_f32(a->p, a->g, a->v, a->po, a->vo, begin, end, (float)a->beta, (float)a->lr);
  else
    momentum_f64(a->p, a->g, a->v, a->po, a->vo, begin, end, a->beta, a->lr);
}

/* The leaves as contiguous float tensors of one dtype and shape, or
 * false (no error raised) when they are not: the caller then takes the
 * general path. */
static bool same_leaves(MistVM *vm, int n, const Value *in, ObjTensor **out, bool *ok) {
  *ok = false;
  for (int i = 0; i < n; i++) {
    if (!v_is_tensor(in[i])) return true;
    ObjTensor *t = AS_TENSOR(in[i]);
    if (!lang_dtype_is_float(t->dtype)) return true;
    if (i && (t->dtype != out[0]->dtype || t->ndim != out[0]->ndim ||
              memcmp(t->shape, out[0]->shape, (size_t)t->ndim * sizeof *t->shape) != 0))
      return true;
    if (!(out[i] = lang_tensor_contiguous(vm, t))) return false;
  }
  *ok = true;
  return true;
}

static bool number(MistVM *vm, const char *fname, Value v, double *out) {
  if (v.tag == V_FLOAT) *out = v.f;
  else if (v.tag == V_INT) *out = (double)v.i;
  else return lang_raise(vm, "TypeError", "%s: expected a number, not '%s'", fname, lang_type_name(v));
  return true;
}

/* _optim_adam(p, g, m, v, lr, b1, b2, eps, c1, c2): (p, m, v) after one
 * step, c1 and c2 being 1 - b1^t and 1 - b2^t; None when the leaves are
 * not float tensors of one dtype and shape. */
static bool bi_adam(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 10 || !std_no_kw(vm, "_optim_adam", kw))
    return lang_raise(vm, "TypeError", "_optim_adam() takes 10 arguments");
  ObjTensor *t[4];
  bool ok;
  Adam a;
  if (!same_leaves(vm, 4, argv, t, &ok)) return false;
  if (!ok) {
    *out = v_none();
    return true;
  }
  if (!number(vm, "_optim_adam", argv[4], &a.lr) || !number(vm, "_optim_adam", argv[5], &a.b1) ||
      !number(vm, "_optim_adam", argv[6], &a.b2) || !number(vm, "_optim_adam", argv[7], &a.eps) ||
      !number(vm, "_optim_adam", argv[8], &a.c1) || !number(vm, "_optim_adam", argv[9], &a.c2))
    return false;
  ObjTensor *r[3];
  for (int i = 0; i < 3; i++)
    if (!(r[i] = lang_tensor_new(vm, t[0]->dtype, t[0]->ndim, t[0]->shape, false))) return false;
  a.p = lang_tensor_ptr(t[0]), a.g = lang_tensor_ptr(t[1]), a.m = lang_tensor_ptr(t[2]);
  a.v = lang_tensor_ptr(t[3]);
  a.po = lang_tensor_ptr(r[0]), a.mo = lang_tensor_ptr(r[1]), a.vo = lang_tensor_ptr(r[2]);
  a.dt = t[0]->dtype;
  dev_parallel_for(t[0]->size >= ((int64_t)1 << 15) ? lang_tensor_pool(vm) : NULL, t[0]->size,
                   (int64_t)1 << 14, adam_rows, &a);
  LANG_KEEP(t);
  *out = lang_tuple_of(3, v_obj(r[0]), v_obj(r[1]), v_obj(r[2]));
  return true;
}

/* _optim_momentum(p, g, v, lr, beta): (p, v) after one step, or None. */
static bool bi_momentum(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (argc != 5 || !std_no_kw(vm, "_optim_momentum", kw))
    return lang_raise(vm, "TypeError", "_optim_momentum() takes 5 arguments");
  ObjTensor *t[3];
  bool ok;
  Momentum a;
  if (!same_leaves(vm, 3, argv, t, &ok)) return false;
  if (!ok) {
    *out = v_none();
    return true;
  }
  if (!number(vm, "_optim_momentum", argv[3], &a.lr) || !number(vm, "_optim_momentum", argv[4], &a.beta))
    return false;
  ObjTensor *r[2];
  for (int i = 0; i < 2; i++)
    if (!(r[i] = lang_tensor_new(vm, t[0]->dtype, t[0]->ndim, t[0]->shape, false))) return false;
  a.p = lang_tensor_ptr(t[0]), a.g = lang_tensor_ptr(t[1]), a.v = lang_tensor_ptr(t[2]);
  a.po = lang_tensor_ptr(r[0]), a.vo = lang_tensor_ptr(r[1]);
  a.dt = t[0]->dtype;
  dev_parallel_for(t[0]->size >= ((int64_t)1 << 15) ? lang_tensor_pool(vm) : NULL, t[0]->size,
                   (int64_t)1 << 14, momentum_rows, &a);
  LANG_KEEP(t);
  *out = lang_tuple_of(2, v_obj(r[0]), v_obj(r[1]));
  return true;
}

void std_register_optim(MistVM *vm) {
  lang_def_builtin(vm, "_optim_adam", bi_adam, -1, -1);
  lang_def_builtin(vm, "_optim_momentum", bi_momentum, -1, -1);
}
