/* matmul.c: matrix products in compiled code (docs/jit.md, "Matrix
 * products").  Where inference types both operands of `a @ b` as float
 * matrices (2-D) of one dtype with known dims, or the backward pass's
 * matmul_sens(d, a, b, i) on such matrices, the lowering calls these
 * runtime functions in place of the interpreter's primitive: they read
 * the two tensors' layouts (a transposed view is a BLAS transpose, as
 * eager mode passes it), take the result from the caching allocator and
 * call the devices/ kernel (dev_gemm_f32/f64) with exactly the arguments
 * eager mode's lang_tensor_matmul passes, so the bits are its bits.  No
 * dispatch through the primitive, the operator table, the promotion of
 * dtypes or the broadcasting of a batch, and for a sensitivity no
 * transposed view made.  Operands of any other kind (a layout BLAS cannot
 * read in place, a dtype or shape other than inference said) go to the
 * interpreter's primitive, which computes, or raises, what eager mode
 * does.
 */
#include "jit/matmul.h"

#include "devices/blas.h"
#include "ir/eval.h"
#include "lang/tensor.h"

bool jit_matmul_typed(const IrType *x, const IrType *y) {
  if (!x || !y || x->kind != IT_TENSOR || y->kind != IT_TENSOR || x->or_none || y->or_none) return false;
  if (x->n != 2 || y->n != 2 || x->dtype != y->dtype || (x->dtype != DT_F32 && x->dtype != DT_F64)) return false;
  for (int i = 0; i < 2; i++)
    if (x->dims[i] < 0 || y->dims[i] < 0) return false;
  return x->dims[1] == y->dims[0];
}

/* Whether v is a matrix of dtype dt and shape rows x cols. */
static bool matrix_of(Value v, DType dt, int64_t rows, int64_t cols) {
  if (!v_is_tensor(v)) return false;
  const ObjTensor *t = AS_TENSOR(v);
  return t->ndim == 2 && t->dtype == dt && t->shape[0] == rows && t->shape[1] == cols;
}

/* One operand as BLAS reads it: op(t), t's transpose where `t_` (as the
 * view lang_tensor_transpose makes, whose layout eager mode reads). */
typedef struct Operand {
  const char *data;
  int64_t rows, cols, ld;
  bool trans;
} Operand;

static bool operand(const ObjTensor *t, bool t_, Operand *o) {
  int64_t r = t->shape[0], c = t->shape[1], sr = t->strides[0], sc = t->strides[1];
  o->data = lang_tensor_ptr(t);
  o->rows = t_ ? c : r;
  o->cols = t_ ? r : c;
  return t_ ? lang_mat_layout(c, r, sc, sr, &o->trans, &o->ld) : lang_mat_layout(r, c, sr, sc, &o->trans, &o->ld);
}

/* op(x) @ op(y) into a new matrix, as lang_tensor_matmul computes it
 * for two matrices of dtype dt: 1 done, 0 not (a layout BLAS cannot
 * read in place: nothing done), -1 after an error. */
static int gemm(MistVM *vm, DType dt, const ObjTensor *x, bool tx, const ObjTensor *y, bool ty, Value *out) {
  Operand a, b;
  if (!operand(x, tx, &a) || !operand(y, ty, &b)) return 0;
  int64_t m = a.rows, k = a.cols, n = b.cols;
  ObjTensor *r = lang_tensor_new(vm, dt, 2, (int64_t[]){m, n}, k == 0);
  if (!r) return -1;
  if (m > 0 && n > 0 && k > 0) {
    DevPool *pool = lang_tensor_pool(vm);
    if (dt == DT_F32)
      dev_gemm_f32(pool, a.trans, b.trans, m, n, k, 1.0f, (const float *)a.data, a.ld, (const float *)b.data, b.ld,
                   0.0f, (float *)lang_tensor_ptr(r), n);
    else
      dev_gemm_f64(pool, a.trans, b.trans, m, n, k, 1.0, (const double *)a.data, a.ld, (const double *)b.data, b.ld,
                   0.0, (double *)lang_tensor_ptr(r), n);
  }
  LANG_KEEP(x);
  LANG_KEEP(y);
  *out = v_obj(r);
  return 1;
}

/* The interpreter's primitive p, where the direct path does not apply,
 * its result checked against the site's type (where `checked`) as any
 * result of the runtime is (lower.c's check_tensor_type). */
static bool by_prim(const JitCx *cx, int32_t site, IrPrim p, int argc, const Value *argv, bool checked, Value *out) {
  MistVM *vm = cx->vm;
  if (!ev_prim_fn(p)(vm, argc, argv, NULL, out)) return false;
  const IrType *t = cx->sites[site].type;
  if (checked && !ir_type_has_value(t, *out)) {
    vm->jit_bad_value = true;
    return lang_raise(vm, "RuntimeError", "graph mode: compiled code got a %s where inference expected %s",
                      lang_type_name(*out), ir_type_str(t));
  }
  return true;
}

bool mist_rt_matmul(const JitCx *cx, int32_t site, const Value *ab, bool checked, Value *out) {
  /* (a stale result in the frame's slot would keep its buffer alive) */
  *out = v_none();
  const IrType *t = cx->sites[site].type;
  DType dt = (DType)t->dtype;
  Value a = ab[0], b = ab[1];
  if (v_is_tensor(a) && v_is_tensor(b) && AS_TENSOR(a)->ndim == 2) {
    int64_t k = AS_TENSOR(a)->shape[1];
    if (matrix_of(a, dt, t->dims[0], k) && matrix_of(b, dt, k, t->dims[1])) {
      int done = gemm(cx->vm, dt, AS_TENSOR(a), false, AS_TENSOR(b), false, out);
      if (done) return done > 0;
    }
  }
  return by_prim(cx, site, IR_P_MATMUL, 2, ab, checked, out);
}

bool mist_rt_matmul_sens(const JitCx *cx, int32_t site, const Value *args, bool checked, Value *out) {
  *out = v_none();
  Value d = args[0], a = args[1], b = args[2], i = args[3];
  DType dt = (DType)cx->sites[site].type->dtype;
  if (v_is_tensor(a) && v_is_tensor(b) && AS_TENSOR(a)->ndim == 2 && AS_TENSOR(b)->ndim == 2 && i.tag == V_INT &&
      (i.i == 0 || i.i == 1)) {
    int64_t m = AS_TENSOR(a)->shape[0], k = AS_TENSOR(a)->shape[1], n = AS_TENSOR(b)->shape[1];
    /* d @ b^T for a, a^T @ d for b, as p_matmul_sens computes them, of
     * a's and b's shapes (which its sum_to then leaves as they are) */
    if (matrix_of(a, dt, m, k) && matrix_of(b, dt, k, n) && matrix_of(d, dt, m, n)) {
      int done = i.i == 0 ? gemm(cx->vm, dt, AS_TENSOR(d), false, AS_TENSOR(b), true, out)
                          : gemm(cx->vm, dt, AS_TENSOR(a), true, AS_TENSOR(d), false, out);
      if (done) return done > 0;
    }
  }
  return by_prim(cx, site, IR_P_MATMUL_SENS, 4, args, checked, out);
}
