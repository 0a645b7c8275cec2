/* rt.c: the runtime functions compiled code calls (docs/jit.md), in
 * the runtime, so that code from the compile cache runs without LLVM.
 *
 * Compiled code does the common case itself (int and float arithmetic
 * that cannot overflow or divide by zero, comparisons, branches, loops,
 * calls of known functions) and hands everything else to the
 * interpreter's own code through these: a primitive or a builtin on
 * boxed values (mist_rt_prim, mist_rt_call), which computes what eager
 * mode computes and raises its errors with its messages; the recursion
 * guard; Ctrl-C and the time limit; and mist_rt_fail, which adds the
 * span and the traceback line of a failing frame exactly as the
 * interpreter's fail_at does (ir/eval.c).  A Value crosses in memory
 * (Value *), never by value.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "devices/cpu/vmath.h"
#include "ir/eval.h"
#include "jit/backend.h"
#include "jit/matmul.h"
#include "jit/rt.h"
#include "jit/tape.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/tensor.h"

/* The error at a site: its span unless one is set already, and a
 * traceback line when its frame is a function's or a module's. */
static void mist_rt_fail(const JitCx *cx, int32_t site) {
  MistVM *vm = cx->vm;
  const JitSite *s = &cx->sites[site];
  if (vm->err.span.file < 0 && s->node) vm->err.span = s->node->span;
  IrGraph *g = s->frame;
  if (g->flags & (IRG_FUNCTION | IRG_MODULE))
    ev_trace_frame(vm, s->node && s->node->span.file >= 0 ? s->node->span : g->span, s->node ? s->node->inlined : NULL,
                   g->display ? g->display->data : g->name->data);
}

/* Primitive p of ops.def on boxed arguments. */
static bool mist_rt_prim(const JitCx *cx, int32_t p, int32_t argc, const Value *argv, Value *out) {
  return ev_prim_fn((IrPrim)p)(cx->vm, argc, argv, NULL, out);
}

/* + - * (prim p) on boxed operands a and b, where operand a (dead & 1)
 * or b (dead & 2) is a temporary nothing reads afterwards: its buffer
 * may take a tensor result, as eager mode's I_ADD, I_SUB and I_MUL do. */
static bool mist_rt_arith_reusing(const JitCx *cx, int32_t p, int32_t dead, const Value *argv, Value *out) {
  ArithOp op = p == IR_P_ADD ? OP_ADD : p == IR_P_SUB ? OP_SUB : OP_MUL;
  return lang_arith_reusing(cx->vm, op, argv[0], argv[1], (unsigned)dead, out);
}

/* x +- a * b (p: the sum's primitive; xab: x, a, b) in one pass, the
 * product a temporary nothing else reads (`how`: lang_arith_scaled's
 * bits): 1 done, 0 not done (the product and the sum run apart), -1
 * after an error. */
static int32_t mist_rt_scaled(const JitCx *cx, int32_t p, int32_t how, const Value *xab, Value *out) {
  *out = v_none();
  return lang_arith_scaled(cx->vm, p == IR_P_SUB ? OP_SUB : OP_ADD, xab[0], xab[1], xab[2], (unsigned)how, out);
}

/* Primitive p (P_OVER_D) whose argument 0, d, is a temporary nothing
 * reads afterwards: it may write its result over d, as eager mode's
 * I_PRIM tells it (vm->over_d). */
static bool mist_rt_prim_over_d(const JitCx *cx, int32_t p, int32_t argc, const Value *argv, Value *out) {
  cx->vm->over_d = true;
  bool ok = ev_prim_fn((IrPrim)p)(cx->vm, argc, argv, NULL, out);
  cx->vm->over_d = false;
  return ok;
}

/* Call fn, any callable value, as the interpreter calls it. */
static bool mist_rt_call(const JitCx *cx, const Value *fn, int32_t argc, const Value *argv, Value *out) {
  return ev_call(cx->vm, *fn, argc, argv, NULL, out);
}

/* Ctrl-C and the host's time limit, on a loop's back edge or a call,
 * when either may be due. */
static bool mist_rt_poll(const JitCx *cx) {
  MistVM *vm = cx->vm;
  if (vm->interrupt) {
    vm->interrupt = 0;
    return lang_raise(vm, "KeyboardInterrupt", "KeyboardInterrupt");
  }
  if (vm->deadline > 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if ((double)ts.tv_sec + ts.tv_nsec * 1e-9 > vm->deadline)
      return lang_raise(vm, "TimeoutError", "the program ran past its time limit of %g seconds", vm->time_limit);
  }
  return true;
}

/* Before a call, where the depth or the C stack is near its end, or
 * Ctrl-C or the time limit may be due: the interpreter's checks, in its
 * order (I_CALL looks at Ctrl-C and the clock, then enter() at the
 * stack). */
static bool mist_rt_call_check(const JitCx *cx) { return mist_rt_poll(cx) && lang_check_stack(cx->vm); }

static bool mist_rt_truthy(const JitCx *cx, const Value *v, bool *out) { return lang_truthy(cx->vm, *v, out); }

/* A closure of the graph held by the constant node of the site, over
 * env (its free variables' values, in ir_free_vars order). */
static void mist_rt_closure(const JitCx *cx, int32_t site, const Value *env, Value *out) {
  *out = v_obj(ev_closure(cx->vm, ir_node_graph(cx->sites[site].node), env));
}

static void mist_rt_tuple(int32_t n, const Value *items, Value *out) {
  ObjSeq *t = lang_tuple_new((size_t)n);
  if (n) memcpy(t->items, items, (size_t)n * sizeof *items);
  *out = v_obj(t);
}

/* The items of *v when it is a tuple of n items, else NULL. */
static const Value *mist_rt_tuple_items(const Value *v, int64_t n) {
  if (!v_is_obj(*v, O_TUPLE) || AS_SEQ(*v)->len != (size_t)n) return NULL;
  return AS_SEQ(*v)->items;
}

/* Whether *v is a closure of graph g (of the site's node, a graph
 * constant) that captured nothing, for a value inference said is one:
 * of g or of another copy inference made of the same graph (compiled
 * code that made it was specialised apart). */
static bool mist_rt_is_closure(const JitCx *cx, const Value *v, int32_t site) {
  return v_is_obj(*v, O_FUNC) && AS_FUNC(*v)->nenv == 0 &&
         ir_graph_origin(AS_FUNC(*v)->graph) == ir_graph_origin(ir_node_graph(cx->sites[site].node));
}

/* A value of another kind than inference said: a bug of inference or
 * of the lowering, reported, never computed with. */
static bool mist_rt_bad_value(const JitCx *cx, const Value *v, int32_t site) {
  const IrType *t = cx->sites[site].type;
  cx->vm->jit_bad_value = true;
  return lang_raise(cx->vm, "RuntimeError", "graph mode: compiled code got a %s where inference expected %s",
                    lang_type_name(*v), t ? ir_type_str(t) : "another type");
}

/* Whether the tensors in v have their places' types in t (dtype and
 * shape), through tuples and lists; the other parts are not looked at
 * (a closure's graph may be the program's where t names inference's
 * copy of it). */
static bool tensors_typed(const IrType *t, Value v) {
  if ((t->or_none && v.tag == V_NONE) || t->kind == IT_ANY) return true;
  if (t->kind == IT_TENSOR) return ir_type_has_value(t, v);
  if (t->kind != IT_TUPLE && t->kind != IT_LIST) return true;
  if (v_is_obj(v, O_SPARSE)) return ir_type_has_value(t, v);   /* a sensitivity kept in parts */
  if (!v_is_obj(v, t->kind == IT_TUPLE ? O_TUPLE : O_LIST)) return false;
  ObjSeq *s = AS_SEQ(v);
  if (t->n >= 0 && s->len != (size_t)t->n) return false;
  for (size_t i = 0; i < s->len; i++)
    if (!tensors_typed(t->n < 0 ? t->items[0] : t->items[i], s->items[i])) return false;
  return true;
}

/* Whether the tensors in *v have the type of the site (dtype, shape). */
static bool mist_rt_has_type(const JitCx *cx, const Value *v, int32_t site) {
  return tensors_typed(cx->sites[site].type, *v);
}

/* ---- fused loops (fuse.c) ---- */

typedef void (*FusedLoop)(void *const *tensors, const int64_t *numbers, void *out, int64_t r0, int64_t r1,
                          int64_t c0, int64_t c1);

typedef struct FusedRun {
  FusedLoop loop;
  void *const *tensors;
  const int64_t *numbers;
  void *out;
  int64_t cols;
} FusedRun;

static void fused_rows(void *ctx, int64_t begin, int64_t end) {
  const FusedRun *f = ctx;
  f->loop(f->tensors, f->numbers, f->out, begin, end, 0, f->cols);
}

/* Columns go in blocks of FUSED_BLOCK, so that every chunk but the
 * last starts on a whole vector and cache line. */
#define FUSED_BLOCK 1024

static void fused_cols(void *ctx, int64_t begin, int64_t end) {
  const FusedRun *f = ctx;
  end *= FUSED_BLOCK;
  f->loop(f->tensors, f->numbers, f->out, 0, 1, begin * FUSED_BLOCK, end < f->cols ? end : f->cols);
}

/* The elements [lo, hi) of the loop's output (in its row-major order)
 * computed into dst: whole rows, or a run inside one row (fuse.c cuts
 * the loop so that every run asked for is one of those). */
static void fused_range(const FusedRun *f, char *dst, size_t es, int64_t lo, int64_t hi) {
  char *out = dst - (size_t)lo * es;   /* the loop writes element e at out + e */
  int64_t r = lo / f->cols;
  if (lo % f->cols == 0 && hi % f->cols == 0 && hi > lo) f->loop(f->tensors, f->numbers, out, r, hi / f->cols, 0, f->cols);
  else if (hi > lo) f->loop(f->tensors, f->numbers, out, r, r + 1, lo - r * f->cols, hi - r * f->cols);
}

/* The elements of short runs computed at a time */
enum { FUSED_BATCH = 8192 };

/* A reduction of a loop's output seen as outer x len x after, over len
 * (fuse.c's FuseGroup): each run of len elements reduced as eager mode
 * reduces it (lang/tensor_ops.c, lang_tensor_reduce: the kept axes
 * first, the run contiguous): a float sum or mean pairwise by blocks of
 * DEV_SUM_BLOCK (dev_sum_f32/f64), max and min by blocks too
 * (dev_max/dev_min: NaN wins, the sign of a zero as they give it),
 * a float prod left to right in double, an integer's or a bool's max
 * and min left to right; an integer's or a bool's sum exactly (an
 * OverflowError when the total does not fit in i64, as eager mode's);
 * argmax and argmin left to right, the first of equals and the first
 * NaN winning; any and all of each element's truth (x != 0, so a NaN is
 * true, as eager mode's cast to bool). */
typedef struct FusedRed {
  const FusedRun *run;
  int op;              /* FR_SUM... */
  int xdt;             /* the loop's output's DType (what is reduced) */
  int dt;              /* the result's DType */
  int64_t outer, len, after, band;   /* band: the runs of `after` reduced at a time */
  void *out;
  double *part;        /* the blocks' results of a reduction of all of it, run in parallel */
  struct RedAcc *blk;  /* (theirs in full) */
  bool failed, overflow;
} FusedRed;

/* What the blocks of a run carry */
typedef struct RedAcc {
  double *part;        /* per block: its sum or max/min (floats) */
  double prod;         /* a float prod so far */
  int64_t ext;         /* an integer max/min so far; argmax's index */
  __int128 isum;       /* an integer sum so far */
  double best;         /* argmax's best float so far */
  int64_t ibest;       /* argmax's best integer so far */
  bool seen;           /* argmax, an integer's max or min has one */
  bool done;           /* argmax met a NaN; any/all's answer */
} RedAcc;

static int64_t int_at(int dt, const char *x, int64_t i) {
  return dt == DT_BOOL ? ((const uint8_t *)x)[i] : dt == DT_I32 ? ((const int32_t *)x)[i] : ((const int64_t *)x)[i];
}

static double float_at(int dt, const char *x, int64_t i) {
  return dt == DT_F32 ? ((const float *)x)[i] : ((const double *)x)[i];
}

/* A float max or min of a block of n elements, with the bits of eager
 * mode's (dev_extreme_block_f32/f64: 16 lanes, element i in lane i %
 * 16 by the comparison v > acc ? v : acc, so the first of equal zeros
 * stays; then the lanes in order from -inf, and a NaN anywhere gives
 * NaN).  With AVX-512F the lanes are one or two registers: MAXPS and
 * MINPS compute v > acc ? v : acc (v < acc ? v : acc) lane for lane,
 * and the lanes combined in order give the first lane that holds the
 * extreme value: that value, or where it is a zero, the first lane's
 * zero.  A short run (a row of 100) costs a third of the generic
 * leaf's time, most of it in its tail and its lanes combined one by
 * one. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static double extreme16_f32(const float *x, int64_t n, bool mx) {
  __m512 acc = _mm512_set1_ps(mx ? -INFINITY : INFINITY);
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    acc = mx ? _mm512_max_ps(v, acc) : _mm512_min_ps(v, acc);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  if (i < n) {
    __mmask16 tail = (__mmask16)((1u << (n - i)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(tail, x + i);
    acc = mx ? _mm512_mask_max_ps(acc, tail, v, acc) : _mm512_mask_min_ps(acc, tail, v, acc);
    nan |= _mm512_mask_cmp_ps_mask(tail, v, v, _CMP_UNORD_Q);
  }
  if (nan) return (double)(float)NAN;
  float m = mx ? _mm512_reduce_max_ps(acc) : _mm512_reduce_min_ps(acc);
  if (m != 0) return (double)m;
  float lanes[16];
  _mm512_storeu_ps(lanes, acc);
  return (double)lanes[__builtin_ctz(_mm512_cmp_ps_mask(acc, _mm512_setzero_ps(), _CMP_EQ_OQ))];
}

__attribute__((target("avx512f"))) static double extreme16_f64(const double *x, int64_t n, bool mx) {
  __m512d lo = _mm512_set1_pd(mx ? -INFINITY : INFINITY), hi = lo;   /* lanes 0-7, 8-15 */
  __mmask8 nan = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512d a = _mm512_loadu_pd(x + i), b = _mm512_loadu_pd(x + i + 8);
    lo = mx ? _mm512_max_pd(a, lo) : _mm512_min_pd(a, lo);
    hi = mx ? _mm512_max_pd(b, hi) : _mm512_min_pd(b, hi);
    nan |= _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q) | _mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q);
  }
  if (i < n) {
    unsigned t = (1u << (n - i)) - 1;
    __mmask8 ta = (__mmask8)t, tb = (__mmask8)(t >> 8);
    __m512d a = _mm512_maskz_loadu_pd(ta, x + i), b = _mm512_maskz_loadu_pd(tb, x + i + 8);
    lo = mx ? _mm512_mask_max_pd(lo, ta, a, lo) : _mm512_mask_min_pd(lo, ta, a, lo);
    hi = mx ? _mm512_mask_max_pd(hi, tb, b, hi) : _mm512_mask_min_pd(hi, tb, b, hi);
    nan |= _mm512_mask_cmp_pd_mask(ta, a, a, _CMP_UNORD_Q) | _mm512_mask_cmp_pd_mask(tb, b, b, _CMP_UNORD_Q);
  }
  if (nan) return (double)NAN;
  double m = mx ? _mm512_reduce_max_pd(_mm512_max_pd(lo, hi)) : _mm512_reduce_min_pd(_mm512_min_pd(lo, hi));
  if (m != 0) return m;
  double lanes[16];
  _mm512_storeu_pd(lanes, lo);
  _mm512_storeu_pd(lanes + 8, hi);
  unsigned zeros = _mm512_cmp_pd_mask(lo, _mm512_setzero_pd(), _CMP_EQ_OQ) |
                   (unsigned)_mm512_cmp_pd_mask(hi, _mm512_setzero_pd(), _CMP_EQ_OQ) << 8;
  return lanes[__builtin_ctz(zeros)];
}

static bool has_avx512(void) {
  static int yes = -1;
  if (yes < 0) yes = __builtin_cpu_supports("avx512f") ? 1 : 0;
  return yes;
}

static double extreme_block(bool f64, const char *x, int64_t n, bool mx) {
  if (has_avx512()) return f64 ? extreme16_f64((const double *)x, n, mx) : extreme16_f32((const float *)x, n, mx);
  return f64 ? dev_extreme_block_f64((const double *)x, n, mx) : dev_extreme_block_f32((const float *)x, n, mx);
}
#else
static bool has_avx512(void) { return false; }

static double extreme_block(bool f64, const char *x, int64_t n, bool mx) {
  return f64 ? dev_extreme_block_f64((const double *)x, n, mx) : dev_extreme_block_f32((const float *)x, n, mx);
}
#endif

/* The start of a run's reduction */
static RedAcc red_start(const FusedRed *s, double *part) {
  return (RedAcc){.part = part, .prod = 1.0, .done = s->op == FR_ALL};
}

/* A float argmax (argmin) of x[0..n), n > 0, in AVX-512 registers: the
 * index of the first NaN (*nan set), else of the first element equal to
 * the largest (smallest), *best (equal: zeros of either sign), which is
 * what the scan left to right that keeps a strictly better one finds. */
#if defined(__x86_64__) && defined(__GNUC__)
#define ARG16(T, SUF, V, W, MASK, SET1, MASKZ_LOADU, MASK_MAX, MASK_MIN, MASK_CMP, RMAX, RMIN)                      \
  __attribute__((target("avx512f"))) static int64_t arg16_##SUF(const T *x, int64_t n, bool mx, double *best,  \
                                                                bool *nan) {                                   \
    V acc = SET1(mx ? (T)-INFINITY : (T)INFINITY);                                                             \
    *nan = false;                                                                                              \
    for (int64_t i = 0; i < n; i += W) {                                                                       \
      MASK m = n - i >= W ? (MASK)~(MASK)0 : (MASK)((1u << (n - i)) - 1);                                      \
      V v = MASKZ_LOADU(m, x + i);                                                                             \
      unsigned bad = MASK_CMP(m, v, v, _CMP_UNORD_Q);                                                          \
      if (bad) {                                                                                               \
        *nan = true;                                                                                           \
        return i + __builtin_ctz(bad);                                                                         \
      }                                                                                                        \
      acc = mx ? MASK_MAX(acc, m, v, acc) : MASK_MIN(acc, m, v, acc);                                          \
    }                                                                                                          \
    T e = mx ? RMAX(acc) : RMIN(acc);                                                                          \
    *best = e;                                                                                                 \
    V ev = SET1(e);                                                                                            \
    for (int64_t i = 0;; i += W) {                                                                             \
      MASK m = n - i >= W ? (MASK)~(MASK)0 : (MASK)((1u << (n - i)) - 1);                                      \
      unsigned eq = MASK_CMP(m, MASKZ_LOADU(m, x + i), ev, _CMP_EQ_OQ);                                       \
      if (eq) return i + __builtin_ctz(eq);                                                                    \
    }                                                                                                          \
  }
ARG16(float, f32, __m512, 16, __mmask16, _mm512_set1_ps, _mm512_maskz_loadu_ps, _mm512_mask_max_ps, _mm512_mask_min_ps,
      _mm512_mask_cmp_ps_mask, _mm512_reduce_max_ps, _mm512_reduce_min_ps)
ARG16(double, f64, __m512d, 8, __mmask8, _mm512_set1_pd, _mm512_maskz_loadu_pd, _mm512_mask_max_pd, _mm512_mask_min_pd,
      _mm512_mask_cmp_pd_mask, _mm512_reduce_max_pd, _mm512_reduce_min_pd)
#undef ARG16
#endif

/* argmax or argmin: block b (n elements at x) of a run into acc */
static void arg_block(const FusedRed *s, const char *x, int64_t n, int64_t b, RedAcc *acc) {
  bool mx = s->op == FR_ARGMAX;
  int64_t i0 = b * DEV_SUM_BLOCK;
  if (acc->done) return;
#if defined(__x86_64__) && defined(__GNUC__)
  if ((s->xdt == DT_F32 || s->xdt == DT_F64) && n > 0 && has_avx512()) {
    double v;
    bool nan;
    int64_t k = s->xdt == DT_F32 ? arg16_f32((const float *)x, n, mx, &v, &nan) : arg16_f64((const double *)x, n, mx, &v, &nan);
    if (nan) acc->ext = i0 + k, acc->done = true;
    else if (!acc->seen || (mx ? v > acc->best : v < acc->best)) acc->ext = i0 + k, acc->best = v, acc->seen = true;
    return;
  }
#endif
  if (s->xdt == DT_F32 || s->xdt == DT_F64) {
    for (int64_t i = 0; i < n; i++) {
      double v = float_at(s->xdt, x, i);
      if (v != v) {   /* the first NaN wins, as NumPy */
        acc->ext = i0 + i;
        acc->done = true;
        return;
      }
      if (!acc->seen || (mx ? v > acc->best : v < acc->best)) acc->ext = i0 + i, acc->best = v, acc->seen = true;
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t v = int_at(s->xdt, x, i);
    if (!acc->seen || (mx ? v > acc->ibest : v < acc->ibest)) acc->ext = i0 + i, acc->ibest = v, acc->seen = true;
  }
}

/* Block b (n elements at x) of a run into acc */
static void red_block(const FusedRed *s, const char *x, int64_t n, int64_t b, RedAcc *acc) {
  bool f64 = s->xdt == DT_F64, mx = s->op == FR_MAX;
  switch (s->op) {
  case FR_ARGMAX: case FR_ARGMIN: arg_block(s, x, n, b, acc); return;
  case FR_ANY: case FR_ALL: {
    bool any = s->op == FR_ANY;
    bool fl = s->xdt == DT_F32 || f64;
    for (int64_t i = 0; i < n && acc->done != any; i++)
      if ((fl ? float_at(s->xdt, x, i) != 0 : int_at(s->xdt, x, i) != 0) == any) acc->done = any;
    return;
  }
  default: break;
  }
  if (s->xdt == DT_F32 || f64) {
    switch (s->op) {
    case FR_SUM: case FR_MEAN:
      acc->part[b] = f64 ? dev_sum_block_f64((const double *)x, n) : dev_sum_block_f32((const float *)x, n);
      return;
    case FR_MAX: case FR_MIN:
      acc->part[b] = extreme_block(f64, x, n, mx);
      return;
    default:   /* prod */
      if (f64) for (int64_t i = 0; i < n; i++) acc->prod *= ((const double *)x)[i];
      else for (int64_t i = 0; i < n; i++) acc->prod *= ((const float *)x)[i];
      return;
    }
  }
  if (s->op == FR_SUM) {
    /* a block of bools or i32 cannot overflow i64 (2^16 x 2^31) */
    int64_t r = 0;
    if (s->xdt == DT_BOOL) for (int64_t i = 0; i < n; i++) r += ((const uint8_t *)x)[i];
    else if (s->xdt == DT_I32) for (int64_t i = 0; i < n; i++) r += ((const int32_t *)x)[i];
    else {
      const int64_t *v = (const int64_t *)x;
      for (int64_t i = 0; i < n; i++)
        if (__builtin_add_overflow(r, v[i], &r)) {
          __int128 e = 0;
          for (int64_t j = 0; j < n; j++) e += v[j];
          acc->isum += e;
          return;
        }
    }
    acc->isum += r;
    return;
  }
  int64_t i = 0;
  if (!acc->seen) acc->ext = int_at(s->xdt, x, i++), acc->seen = true;
  for (; i < n; i++) {
    int64_t v = int_at(s->xdt, x, i);
    if (mx ? v > acc->ext : v < acc->ext) acc->ext = v;
  }
}

/* The blocks' accumulators blk[0..nb) of a run computed apart, as one
 * that took them in order: a later block's best only where it is
 * better (the first of equals), the first NaN, the first true (any) or
 * false (all); sums added (floats' partial sums stay in acc->part). */
static void red_combine(const FusedRed *s, RedAcc *acc, const RedAcc *blk, int64_t nb) {
  bool mx = s->op == FR_ARGMAX, fl = lang_dtype_is_float((DType)s->xdt);
  for (int64_t b = 0; b < nb; b++) {
    const RedAcc *k = &blk[b];
    switch (s->op) {
    case FR_ARGMAX: case FR_ARGMIN:
      if (acc->done) break;
      if (k->done || !acc->seen ||
          (fl ? (mx ? k->best > acc->best : k->best < acc->best) : (mx ? k->ibest > acc->ibest : k->ibest < acc->ibest)))
        *acc = *k;
      break;
    case FR_ANY: acc->done |= k->done; break;
    case FR_ALL: acc->done &= k->done; break;
    case FR_MAX: case FR_MIN:   /* (an integer's: a float's are in part) */
      if (!acc->seen || (s->op == FR_MAX ? k->ext > acc->ext : k->ext < acc->ext)) acc->ext = k->ext, acc->seen = true;
      break;
    default: acc->isum += k->isum; break;
    }
  }
}

/* The run's result, of nb blocks, stored at dst */
static void red_finish(FusedRed *s, RedAcc *acc, int64_t nb, char *dst) {
  double v = acc->prod;
  switch (s->op) {
  case FR_SUM: case FR_MEAN:
    if (!lang_dtype_is_float((DType)s->xdt)) {
      if (acc->isum < INT64_MIN || acc->isum > INT64_MAX) s->overflow = true;
      *(int64_t *)dst = (int64_t)acc->isum;
      return;
    }
    v = nb == 1 ? acc->part[0] : dev_sum_partials(acc->part, nb);
    if (s->op == FR_MEAN) v /= (double)s->len;
    break;
  case FR_MAX: case FR_MIN: v = nb == 1 ? acc->part[0] : dev_extreme_partials(acc->part, nb, s->op == FR_MAX); break;
  case FR_ARGMAX: case FR_ARGMIN: *(int64_t *)dst = acc->ext; return;
  case FR_ANY: case FR_ALL: *(uint8_t *)dst = acc->done; return;
  default: break;
  }
  switch (s->dt) {
  case DT_F32: *(float *)dst = (float)v; return;
  case DT_F64: *(double *)dst = v; return;
  case DT_BOOL: *(uint8_t *)dst = (uint8_t)acc->ext; return;
  case DT_I32: *(int32_t *)dst = (int32_t)acc->ext; return;
  default: *(int64_t *)dst = acc->ext; return;
  }
}

/* A contiguous run of s->len elements at x, reduced into dst */
static void red_run(FusedRed *s, const char *x, char *dst, double *part) {
  size_t es = dev_dtype_size((DType)s->xdt);
  RedAcc acc = red_start(s, part);
  int64_t nb = (s->len + DEV_SUM_BLOCK - 1) / DEV_SUM_BLOCK;
  for (int64_t b = 0; b < nb; b++) {
    int64_t lo = b * DEV_SUM_BLOCK, n = s->len - lo < DEV_SUM_BLOCK ? s->len - lo : DEV_SUM_BLOCK;
    red_block(s, x + (size_t)lo * es, n, b, &acc);
  }
  red_finish(s, &acc, nb, dst);
}

/* src, len rows of w elements of es bytes, turned into w rows of len */
static void turn(char *dst, const char *src, int64_t len, int64_t w, size_t es) {
#define TURN(T)                                                                                 \
  for (int64_t d = 0; d < len; d++)                                                             \
    for (int64_t j = 0; j < w; j++) ((T *)dst)[j * len + d] = ((const T *)src)[d * w + j];
  if (es == 8) {
    TURN(uint64_t)
  } else if (es == 4) {
    TURN(uint32_t)
  } else {
    TURN(uint8_t)
  }
#undef TURN
}

/* One row of a band into its lane: acc[j] = row[j] > acc[j] ? row[j] :
 * acc[j] (<: a min) and flag[j] set where row[j] is NaN, j < w; with
 * AVX-512F 16 (8) columns at a time (MAXPS and MINPS compute just that,
 * lane for lane), the NaN flags set one by one where a NaN is met. */
#define ROW_EXTREME(T, SUF)                                                                          \
  static void row_extreme_##SUF(T *acc, uint8_t *flag, const T *row, int64_t w, bool mx) {          \
    if (mx)                                                                                          \
      for (int64_t j = 0; j < w; j++) acc[j] = row[j] > acc[j] ? row[j] : acc[j], flag[j] |= row[j] != row[j]; \
    else                                                                                             \
      for (int64_t j = 0; j < w; j++) acc[j] = row[j] < acc[j] ? row[j] : acc[j], flag[j] |= row[j] != row[j]; \
  }
ROW_EXTREME(float, f32)
ROW_EXTREME(double, f64)
#undef ROW_EXTREME

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void row_extreme16_f32(float *acc, uint8_t *flag, const float *row,
                                                                 int64_t w, bool mx) {
  for (int64_t j = 0; j < w; j += 16) {
    __mmask16 m = w - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (w - j)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(m, row + j), a = _mm512_maskz_loadu_ps(m, acc + j);
    _mm512_mask_storeu_ps(acc + j, m, mx ? _mm512_max_ps(v, a) : _mm512_min_ps(v, a));
    for (unsigned nn = _mm512_mask_cmp_ps_mask(m, v, v, _CMP_UNORD_Q); nn; nn &= nn - 1) flag[j + __builtin_ctz(nn)] = 1;
  }
}

__attribute__((target("avx512f"))) static void row_extreme16_f64(double *acc, uint8_t *flag, const double *row,
                                                                 int64_t w, bool mx) {
  for (int64_t j = 0; j < w; j += 8) {
    __mmask8 m = w - j >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (w - j)) - 1);
    __m512d v = _mm512_maskz_loadu_pd(m, row + j), a = _mm512_maskz_loadu_pd(m, acc + j);
    _mm512_mask_storeu_pd(acc + j, m, mx ? _mm512_max_pd(v, a) : _mm512_min_pd(v, a));
    for (unsigned nn = _mm512_mask_cmp_pd_mask(m, v, v, _CMP_UNORD_Q); nn; nn &= nn - 1) flag[j + __builtin_ctz(nn)] = 1;
  }
}
#else
#define row_extreme16_f32 row_extreme_f32
#define row_extreme16_f64 row_extreme_f64
#endif

/* Rows d0..d0+c of the band of columns b0..b0+w of `after` at outer
 * index a, computed into buf (c x w): at once where the band is all of
 * `after` (the loop's columns are the trailing dims from the reduced
 * axis or after it, fuse.c, so its rows are single runs of `after` or
 * hold whole len x after blocks: rows d0..d0+c are whole rows or inside
 * one), else row by row. */
static void band_rows(const FusedRed *s, char *buf, int64_t a, int64_t b0, int64_t w, int64_t d0, int64_t c) {
  const FusedRun *f = s->run;
  size_t es = dev_dtype_size((DType)s->xdt);
  int64_t base = a * s->len * s->after;
  if (w == s->after) {
    fused_range(f, buf, es, base + d0 * s->after, base + (d0 + c) * s->after);
    return;
  }
  for (int64_t k = 0; k < c; k++)
    fused_range(f, buf + (size_t)(k * w) * es, es, base + (d0 + k) * s->after + b0, base + (d0 + k) * s->after + b0 + w);
}

/* Bytes of rows of a band computed at a time for a max or min: in L1 */
enum { FUSED_CHUNK_BYTES = 1 << 14 };

/* The max (min) of each of the w columns of the band of columns b0..
 * b0+w of `after` at outer index a (len x w), into out[0..w), with
 * dev_max's (dev_min's) bits, without turning the band: its rows
 * computed a few at a time into buf (band_rows), element d of a column
 * going to lane d % 16 of block d / DEV_SUM_BLOCK, as their leaves take
 * a run (a NaN flagged per lane, the first of equals kept: the sign of
 * a zero), then the lanes and the blocks combined in their order.
 * lanes: 16 x w values, nan: 16 x w flags, comb: w doubles. */
#define COLUMN_EXTREME(T, SUF)                                                                        \
  static void column_extreme_##SUF(const FusedRed *s, int64_t a, int64_t b0_col, int64_t w, char *buf,  \
                                   T *lanes, uint8_t *nan, double *comb, T *out) {                    \
    bool mx = s->op == FR_MAX;                                                                        \
    const T init = mx ? (T)-INFINITY : (T)INFINITY;                                                   \
    void (*row_into)(T *, uint8_t *, const T *, int64_t, bool) = has_avx512() ? row_extreme16_##SUF : row_extreme_##SUF; \
    int64_t len = s->len, chunk = FUSED_CHUNK_BYTES / (w * (int64_t)sizeof(T));                      \
    if (chunk < 1) chunk = 1;                                                                         \
    for (int64_t b0 = 0; b0 < len; b0 += DEV_SUM_BLOCK) {                                             \
      int64_t n = len - b0 < DEV_SUM_BLOCK ? len - b0 : DEV_SUM_BLOCK;                                \
      for (int64_t i = 0; i < 16 * w; i++) lanes[i] = init, nan[i] = 0;                               \
      for (int64_t d = 0; d < n;) {                                                                   \
        int64_t c = n - d < chunk ? n - d : chunk;                                                    \
        band_rows(s, buf, a, b0_col, w, b0 + d, c);                                                   \
        for (int64_t k = 0; k < c; k++, d++)                                                          \
          row_into(lanes + (d & 15) * w, nan + (d & 15) * w, (const T *)buf + k * w, w, mx);          \
      }                                                                                               \
      for (int64_t j = 0; j < w; j++) {                                                               \
        T r = init;                                                                                   \
        int any = 0;                                                                                  \
        for (int l = 0; l < 16; l++) {                                                                \
          T v = lanes[l * w + j];                                                                     \
          r = (mx ? v > r : v < r) ? v : r;                                                           \
          any |= nan[l * w + j];                                                                      \
        }                                                                                             \
        double bv = any ? (double)(T)NAN : (double)r;                                                 \
        comb[j] = b0 == 0 || (mx ? bv > comb[j] : bv < comb[j]) || bv != bv ? bv : comb[j];          \
      }                                                                                               \
    }                                                                                                 \
    for (int64_t j = 0; j < w; j++) out[j] = (T)comb[j];                                              \
  }

COLUMN_EXTREME(float, f32)
COLUMN_EXTREME(double, f64)
#undef COLUMN_EXTREME

/* Units [u0, u1): unit u is outer index u / nbands and the band of
 * `after` u % nbands.  Runs (after 1) are computed many at a time, or
 * a long one a block at a time, and reduced as they come; otherwise the band's len x band elements
 * are computed, turned so that each run is contiguous (as eager mode
 * copies the tensor transposed), and each run reduced. */
static void fused_reduce_units(void *ctx, int64_t u0, int64_t u1) {
  FusedRed *s = ctx;
  const FusedRun *f = s->run;
  size_t es = dev_dtype_size((DType)s->xdt), rs = dev_dtype_size((DType)s->dt);
  int64_t nbands = (s->after + s->band - 1) / s->band, nb = (s->len + DEV_SUM_BLOCK - 1) / DEV_SUM_BLOCK;
  /* short runs (after 1) are computed many at a time: a call of the
   * loop per run would cost as much as the run */
  int64_t batch = s->after == 1 && s->len < FUSED_BATCH ? FUSED_BATCH / s->len : 1;
  int64_t block = s->after == 1 ? (s->len < DEV_SUM_BLOCK ? s->len * batch : DEV_SUM_BLOCK) : s->len * s->band;
  /* a float max or min over a band: by columns, in lanes (turned holds
   * them, 16 x band), its rows computed a chunk at a time into buf */
  bool extreme = s->after > 1 && (s->op == FR_MAX || s->op == FR_MIN) && lang_dtype_is_float((DType)s->dt);
  size_t turned_size = (size_t)(extreme ? 16 * s->band : block) * es;
  if (extreme) block = FUSED_CHUNK_BYTES / (int64_t)es > s->band ? FUSED_CHUNK_BYTES / (int64_t)es : s->band;
  char *buf = malloc((size_t)block * es), *turned = s->after == 1 ? NULL : malloc(turned_size);
  double *part = malloc((size_t)nb * sizeof *part), *comb = extreme ? malloc((size_t)s->band * sizeof *comb) : NULL;
  uint8_t *lane_nan = extreme ? malloc((size_t)(16 * s->band)) : NULL;
  if (!buf || !part || (s->after > 1 && !turned) || (extreme && (!comb || !lane_nan))) {
    free(buf);
    free(turned);
    free(part);
    free(comb);
    free(lane_nan);
    s->failed = true;
    return;
  }
  char *out = s->out;
  for (int64_t u = u0; u < u1; u++) {
    int64_t a = u / nbands, b0 = u % nbands * s->band, w = s->after - b0 < s->band ? s->after - b0 : s->band;
    int64_t base = a * s->len * s->after;
    if (batch > 1) {
      /* runs a.. up to the end of the units, of the batch, or of the
       * loop's row where a row holds several (else whole rows) */
      int64_t per_row = f->cols / s->len, end = a + batch;
      if (end > u1) end = u1;
      if (per_row > 1 && end > (a / per_row + 1) * per_row) end = (a / per_row + 1) * per_row;
      fused_range(f, buf, es, a * s->len, end * s->len);
      for (int64_t k = a; k < end; k++) red_run(s, buf + (size_t)((k - a) * s->len) * es, out + (size_t)k * rs, part);
      u = end - 1;
      continue;
    }
    if (s->after == 1) {
      RedAcc acc = red_start(s, part);
      for (int64_t b = 0; b < nb; b++) {
        int64_t lo = b * DEV_SUM_BLOCK, n = s->len - lo < DEV_SUM_BLOCK ? s->len - lo : DEV_SUM_BLOCK;
        fused_range(f, buf, es, base + lo, base + lo + n);
        red_block(s, buf, n, b, &acc);
      }
      red_finish(s, &acc, nb, out + (size_t)a * rs);
      continue;
    }
    char *dst = out + (size_t)(a * s->after + b0) * rs;
    if (extreme && s->dt == DT_F32) {
      column_extreme_f32(s, a, b0, w, buf, (float *)turned, lane_nan, comb, (float *)dst);
      continue;
    }
    if (extreme && s->dt == DT_F64) {
      column_extreme_f64(s, a, b0, w, buf, (double *)turned, lane_nan, comb, (double *)dst);
      continue;
    }
    band_rows(s, buf, a, b0, w, 0, s->len);
    turn(turned, buf, s->len, w, es);
    for (int64_t j = 0; j < w; j++) red_run(s, turned + (size_t)(j * s->len) * es, dst + (size_t)j * rs, part);
  }
  free(buf);
  free(turned);
  free(part);
  free(comb);
  free(lane_nan);
}

/* The blocks [b0, b1) of a reduction of all of the output, each into
 * its own accumulator s->blk[b] (floats' sums, max and min into
 * s->part[b]), combined afterwards in order (red_combine): all but a
 * float product, whose rounding depends on the order */
static void fused_reduce_blocks(void *ctx, int64_t b0, int64_t b1) {
  FusedRed *s = ctx;
  size_t es = dev_dtype_size((DType)s->xdt);
  char *buf = malloc((size_t)DEV_SUM_BLOCK * es);
  if (!buf) {
    s->failed = true;
    return;
  }
  for (int64_t b = b0; b < b1; b++) {
    int64_t lo = b * DEV_SUM_BLOCK, n = s->len - lo < DEV_SUM_BLOCK ? s->len - lo : DEV_SUM_BLOCK;
    fused_range(s->run, buf, es, lo, lo + n);
    s->blk[b] = red_start(s, s->part);
    red_block(s, buf, n, b, &s->blk[b]);
  }
  free(buf);
}

/* Elements of a band: about 256 KiB of them, or all of `after` */
enum { FUSED_BAND_BYTES = 1 << 18 };

/* The reduction op of a loop's output of dtype xdt, of n elements seen
 * as outer x len x after, into a new tensor of type t. */
static bool fused_reduce(MistVM *vm, FusedRun *f, const IrType *t, int32_t op, int xdt, int64_t n, int64_t len,
                         int64_t after, Value *out) {
  ObjTensor *r = lang_tensor_new(vm, (DType)t->dtype, t->n, t->dims, false);
  if (!r) return false;
  size_t es = dev_dtype_size((DType)xdt);
  FusedRed s = {.run = f, .op = op, .xdt = xdt, .dt = t->dtype, .outer = n / (len * after), .len = len,
                .after = after, .band = after, .out = lang_tensor_ptr(r)};
  /* (a float max or min keeps only 16 rows of a band: its lanes) */
  bool extreme = (op == FR_MAX || op == FR_MIN) && lang_dtype_is_float((DType)xdt);
  int64_t fit = FUSED_BAND_BYTES / (int64_t)es / (extreme ? 16 : len);
  if (after > 1 && fit < after) s.band = fit < 16 ? 16 : fit;
  DevPool *pool = n >= DEV_PAR_GRAIN ? lang_tensor_pool(vm) : NULL;
  int64_t nb = (len + DEV_SUM_BLOCK - 1) / DEV_SUM_BLOCK;
  if (s.outer == 1 && after == 1 && nb > 1 && op != FR_PROD) {
    /* all of it at once: its blocks in parallel, as dev_sum and dev_max
     * split them (a product, left to right, in order) */
    double *part = malloc((size_t)nb * sizeof *part);
    RedAcc *blk = malloc((size_t)nb * sizeof *blk);
    if (!part || !blk) {
      free(part);
      free(blk);
      return lang_raise(vm, "MemoryError", "out of memory");
    }
    s.part = part;
    s.blk = blk;
    dev_parallel_for(pool, nb, 1, fused_reduce_blocks, &s);
    if (!s.failed) {
      RedAcc acc = red_start(&s, part);
      red_combine(&s, &acc, blk, nb);
      red_finish(&s, &acc, nb, lang_tensor_ptr(r));
    }
    free(part);
    free(blk);
  } else {
    int64_t units = s.outer * ((after + s.band - 1) / s.band), grain = DEV_PAR_GRAIN / 4 / (len * s.band);
    dev_parallel_for(pool, units, grain > 0 ? grain : 1, fused_reduce_units, &s);
  }
  if (s.failed) return lang_raise(vm, "MemoryError", "out of memory");
  if (s.overflow)   /* (only sums of integers are fused) */
    return lang_raise(vm, "OverflowError", "sum: integer overflow (the result does not fit in i64)");
  *out = v_obj(r);
  return true;
}

/* A loop summed over the first axis: rows x cols computed four rows at
 * a time into a buffer and added up column by column as dev_sum_rows
 * adds them (in double, four rows as (a + b) + (c + d), the rest one
 * by one), so that the sums have eager mode's bits.  Split over bands
 * of columns as dev_sum_rows splits them. */
typedef struct FusedCols {
  const FusedRun *run;
  int64_t rows;
  double scale;
  bool f64, failed;
} FusedCols;

static void fused_sum_cols(void *ctx, int64_t c0, int64_t c1) {
  FusedCols *s = ctx;
  const FusedRun *f = s->run;
  int64_t cols = f->cols, w = c1 - c0;
  size_t es = s->f64 ? sizeof(double) : sizeof(float);
  char *buf = malloc((size_t)(4 * cols) * es);
  double *acc = calloc((size_t)w, sizeof *acc);
  if (!buf || !acc) {
    free(buf);
    free(acc);
    s->failed = true;
    return;
  }
  for (int64_t r = 0; r < s->rows; r += 4) {
    int64_t n = s->rows - r < 4 ? s->rows - r : 4;
    /* rows r.. land at the start of buf */
    f->loop(f->tensors, f->numbers, buf - (size_t)(r * cols) * es, r, r + n, c0, c1);
    if (s->f64) {
      const double *x = (const double *)buf + c0;
      if (n == 4)
        for (int64_t j = 0; j < w; j++) acc[j] += (x[j] + x[cols + j]) + (x[2 * cols + j] + x[3 * cols + j]);
      else
        for (int64_t q = 0; q < n; q++)
          for (int64_t j = 0; j < w; j++) acc[j] += x[q * cols + j];
    } else {
      const float *x = (const float *)buf + c0;
      if (n == 4)
        for (int64_t j = 0; j < w; j++)
          acc[j] += ((double)x[j] + (double)x[cols + j]) + ((double)x[2 * cols + j] + (double)x[3 * cols + j]);
      else
        for (int64_t q = 0; q < n; q++)
          for (int64_t j = 0; j < w; j++) acc[j] += x[q * cols + j];
    }
  }
  for (int64_t j = 0; j < w; j++) {
    if (s->f64) ((double *)f->out)[c0 + j] = acc[j] * s->scale;
    else ((float *)f->out)[c0 + j] = (float)(acc[j] * s->scale);
  }
  free(buf);
  free(acc);
}

static bool fused_sum_columns(MistVM *vm, FusedRun *f, const IrType *t, int64_t rows, bool mean, Value *out) {
  ObjTensor *r = lang_tensor_new(vm, (DType)t->dtype, t->n, t->dims, false);
  if (!r) return false;
  f->out = lang_tensor_ptr(r);
  FusedCols s = {f, rows, mean ? 1.0 / (double)rows : 1.0, t->dtype == DT_F64, false};
  if (rows * f->cols >= DEV_PAR_GRAIN && f->cols >= 512) dev_parallel_for(lang_tensor_pool(vm), f->cols, 256, fused_sum_cols, &s);
  else fused_sum_cols(&s, 0, f->cols);
  if (s.failed) return lang_raise(vm, "MemoryError", "out of memory");
  *out = v_obj(r);
  return true;
}

/* Run the fused loop of the site (whose type is the result's) on the
 * ntensors tensors (contiguous copies of those that are not) and the
 * numbers' bits, over rows x cols elements, into a new tensor from the
 * caching allocator or into tensor `reuse` (>= 0: a dead temporary of
 * the output's type, fuse.c), or reduced (reduce: a FuseReduce, maybe
 * with FR_COLUMNS, and the loop's dtype, over runs of len elements `after` apart); split over
 * the thread pool from the size at which eager mode's kernels split
 * theirs (DEV_PAR_GRAIN). */
static bool mist_rt_fused(const JitCx *cx, void *loop, int32_t site, int32_t ntensors, const Value *tensors,
                          const int64_t *numbers, int64_t rows, int64_t cols, int32_t reduce, int64_t len,
                          int64_t after, int32_t reuse, Value *out) {
  MistVM *vm = cx->vm;
  const IrType *t = cx->sites[site].type;
  /* *out is a slot of the compiled frame that may still hold this
   * loop's result from the call before: the collector, which scans the
   * stack conservatively, would keep that tensor (and its buffer, out of
   * the allocator's cache) alive while the new one is made */
  *out = v_none();
  /* (zeroed for the same reason: stale words on the stack are roots) */
  ObjTensor *keep[FUSE_MAX_INPUTS] = {0};
  void *data[FUSE_MAX_INPUTS] = {0};
  for (int i = 0; i < ntensors; i++) {
    ObjTensor *x = AS_TENSOR(tensors[i]);
    if (!lang_tensor_is_contiguous(x) && !(x = lang_tensor_contiguous(vm, x))) return false;
    keep[i] = x;
    data[i] = lang_tensor_ptr(x);
  }
  if (reduce != FR_NONE) {
    FusedRun f = {(FusedLoop)loop, data, numbers, NULL, cols};
    int op = reduce & FR_OP_MASK, xdt = reduce >> FR_DTYPE_SHIFT;
    bool ok = reduce & FR_COLUMNS ? fused_sum_columns(vm, &f, t, rows, op == FR_MEAN, out)
                                  : fused_reduce(vm, &f, t, op, xdt, rows * cols, len, after, out);
    for (int i = 0; i < ntensors; i++) LANG_KEEP(keep[i]);
    return ok;
  }
  /* (a temporary the lowering chose is a loop's output: contiguous and
   * of the type; checked all the same) */
  ObjTensor *r = reuse >= 0 && keep[reuse] == AS_TENSOR(tensors[reuse]) &&
                         lang_tensor_reusable(keep[reuse], (DType)t->dtype, t->n, t->dims)
                     ? keep[reuse]
                     : lang_tensor_new(vm, (DType)t->dtype, t->n, t->dims, false);
  if (!r) return false;
  FusedRun f = {(FusedLoop)loop, data, numbers, lang_tensor_ptr(r), cols};
  DevPool *pool = rows * cols >= DEV_PAR_GRAIN ? lang_tensor_pool(vm) : NULL;
  if (rows > 1) {
    int64_t grain = DEV_PAR_GRAIN / cols;
    dev_parallel_for(pool, rows, grain > 1 ? grain : 1, fused_rows, &f);
  } else {
    dev_parallel_for(pool, (cols + FUSED_BLOCK - 1) / FUSED_BLOCK, DEV_PAR_GRAIN / FUSED_BLOCK, fused_cols, &f);
  }
  for (int i = 0; i < ntensors; i++) LANG_KEEP(keep[i]);
  *out = v_obj(r);
  return true;
}

/* The value of the module global the site's node reads, as the
 * interpreter reads it (its module's binding, else a builtin). */
static bool mist_rt_global(const JitCx *cx, int32_t site, Value *out) {
  MistVM *vm = cx->vm;
  IrNode *n = cx->sites[site].node;
  ObjStr *name = AS_STR(n->in[1]->value);
  ObjModule *m = n->graph->module;
  Value slot;
  if (m && m->names && lang_dict_get(m->names, name, &slot) && m->slots[slot.i].tag != V_UNBOUND) {
    *out = m->slots[slot.i];
    return true;
  }
  if (vm->builtins && lang_dict_get(vm->builtins, name, out)) return true;
  return lang_raise(vm, "NameError", "name '%s' is not defined", name->data);
}

/* The runtime's functions and libm's, by the names the lowering declares
 * them under. */
static const struct {
  const char *name;
  void *addr;
} helpers[] = {
#define H(f) {#f, (void *)f}
  H(mist_rt_fail), H(mist_rt_prim), H(mist_rt_arith_reusing), H(mist_rt_prim_over_d), H(mist_rt_scaled),
  H(mist_rt_call), H(mist_rt_call_check), H(mist_rt_poll),
  H(mist_rt_truthy), H(mist_rt_closure), H(mist_rt_tuple), H(mist_rt_tuple_items),
  H(mist_rt_is_closure), H(mist_rt_bad_value), H(mist_rt_global), H(mist_rt_has_type),
  H(mist_rt_fused), H(mist_rt_tape_push), H(mist_rt_env_of), H(mist_rt_matmul), H(mist_rt_matmul_sens),
  /* libm, which the interpreter's math builtins call too */
  H(exp), H(log), H(sin), H(cos), H(tanh), H(tan), H(asin), H(acos), H(atan), H(log2), H(log10),
  H(erf), H(lgamma), H(floor), H(ceil), H(fmod), H(pow),
#undef H
};

/* The vector math function fuse.c declares as mist_vec[256]_OP_DTYPE:
 * the host's kernel eager mode calls for OP on vectors of 512 (or 256)
 * bits, as fuse.c's vec_fn chooses it, or NULL. */
static void *vec_helper(const char *name) {
  static const struct {
    const char *op;
    int vm;   /* a VmUnary, or -1: pow, the one VmBinary */
  } ops[] = {{"exp", VM_EXP}, {"log", VM_LOG}, {"sin", VM_SIN}, {"cos", VM_COS}, {"tanh", VM_TANH},
             {"sigmoid", VM_SIGMOID}, {"pow", -1}};
  const char *p = name + strlen("mist_vec");
  int bits = 512;
  if (strncmp(p, "256", 3) == 0) {
    bits = 256;
    p += 3;
  }
  if (*p++ != '_') return NULL;
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    size_t n = strlen(ops[i].op);
    if (strncmp(p, ops[i].op, n) != 0 || p[n] != '_') continue;
    const char *dt = p + n + 1;
    bool f64 = strcmp(dt, "f64") == 0;
    if (!f64 && strcmp(dt, "f32") != 0) return NULL;
    DevVecFn fn = ops[i].vm < 0 ? dev_vec_binary(VM_POW, f64, bits) : dev_vec_unary((VmUnary)ops[i].vm, f64, bits);
    return (void *)(uintptr_t)fn;
  }
  return NULL;
}

void *jit_rt_symbol(void *ud, const char *name) {
  (void)ud;
  for (size_t i = 0; i < sizeof helpers / sizeof *helpers; i++)
    if (strcmp(helpers[i].name, name) == 0) return helpers[i].addr;
  if (strncmp(name, "mist_vec", 8) == 0) return vec_helper(name);
  /* what LLVM's code generator calls of the C library (memcpy, memset,
   * sincos...): the process's, as ORC's LLJIT found them */
  return dlsym(RTLD_DEFAULT, name);
}

