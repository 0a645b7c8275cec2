/* fuse.c: chains of elementwise operations on tensors, fused into one
 * loop over the output's elements (docs/jit.md, "Fused elementwise
 * loops").
 *
 * The plan: in a typed graph, an elementwise operation (+ - * /, unary
 * -, exp log sin cos tanh sigmoid sqrt abs relu maximum minimum) whose
 * result inference types an f32 or f64 tensor with every dim known, on
 * tensors of that dtype and Python numbers, is a loop's root; an
 * operand that is such an operation too, of the same shape, used only
 * there, in the same graph, is computed in the same loop, and so on up
 * the chain.  The other operands are the loop's inputs: tensors that
 * broadcast to the output by one of the simple patterns of FuseInKind,
 * and numbers.  A chain whose inputs broadcast otherwise is not fused
 * (its operations run through the runtime, boxed).  A loop's output
 * takes the buffer of a temporary another loop made when nothing else
 * reads it.
 *
 * The loop: rows x columns of the output, each row in vectors of the
 * CPU's widest (16 floats or 8 doubles under AVX-512), the last partial
 * vector masked.  Every operation rounds as eager mode's kernel for it
 * does, in the tensor's dtype, with no contraction into FMAs, and the
 * transcendentals call the very vector functions eager mode's kernels
 * call (devices/cpu/vmath.h, dev_vec_unary), lane for lane, so a fused
 * loop's results are eager mode's to the bit.  rt.c's mist_rt_fused
 * makes the output and runs the loop, split over the thread pool when
 * it is big.
 */
#include <stdlib.h>
#include <string.h>

#include "devices/cpu/vmath.h"
#include "jit/llvm/cg.h"
#include "jit/llvm/fuse.h"
#include "lang/gc.h"
#include "lang/tensor.h"

typedef enum { FO_ADD, FO_SUB, FO_MUL, FO_DIV, FO_NEG, FO_MAX, FO_MIN, FO_SQRT, FO_ABS, FO_RELU,
               FO_EXP, FO_LOG, FO_SIN, FO_COS, FO_TANH, FO_SIGMOID, FO_NONE } FuseOp;

static const char *const op_names[] = {"add", "sub", "mul", "truediv", "neg", "maximum", "minimum", "sqrt",
                                       "abs", "relu", "exp", "log", "sin", "cos", "tanh", "sigmoid"};

/* The transcendentals: a loop computes them with the vector functions
 * eager mode's kernels call (dev_vec_unary), declared in its module as
 * mist_vec_NAME_f32 / _f64 and given their addresses by
 * jit_vec_helpers. */
static const struct {
  FuseOp op;
  VmUnary vm;
} vec_ops[] = {{FO_EXP, VM_EXP}, {FO_LOG, VM_LOG}, {FO_SIN, VM_SIN}, {FO_COS, VM_COS}, {FO_TANH, VM_TANH},
               {FO_SIGMOID, VM_SIGMOID}};
enum { NVEC = sizeof vec_ops / sizeof *vec_ops };

static int vm_op(FuseOp op) {
  for (int i = 0; i < NVEC; i++)
    if (vec_ops[i].op == op) return (int)vec_ops[i].vm;
  return -1;
}

static const char *vec_name(FuseOp op, bool f64) {
  return lang_str_fmt("mist_vec_%s_%s", op_names[op], f64 ? "f64" : "f32")->data;
}

const JitHelper *jit_vec_helpers(int *n) {
  static JitHelper h[2 * NVEC];
  int k = 0;
  for (int i = 0; i < NVEC; i++)
    for (int f64 = 0; f64 < 2; f64++) {
      DevVecFn fn = dev_vec_unary(vec_ops[i].vm, f64);
      if (!fn) continue;
      h[k].name = vec_name(vec_ops[i].op, f64);
      h[k++].addr = (void *)(uintptr_t)fn;
    }
  *n = k;
  return h;
}

bool jit_fuse_enabled(void) {
  const char *fixed = getenv("MIST_JIT_CPU");
  if (fixed && *fixed) return false;
  for (int i = 0; i < NVEC; i++)
    if (!dev_vec_unary(vec_ops[i].vm, false) || !dev_vec_unary(vec_ops[i].vm, true)) return false;
  return true;
}

/* The operation node n is, with its operands' count; FO_NONE if none. */
static FuseOp op_of(IrNode *n, int *arity) {
  *arity = 0;
  if (n->kind != IR_APPLY || n->nin < 1) return FO_NONE;
  int nargs = n->nin - 1;
  *arity = nargs;
  switch (ir_node_prim(n)) {
  case IR_P_ADD: return nargs == 2 ? FO_ADD : FO_NONE;
  case IR_P_SUB: return nargs == 2 ? FO_SUB : FO_NONE;
  case IR_P_MUL: return nargs == 2 ? FO_MUL : FO_NONE;
  case IR_P_TRUEDIV: return nargs == 2 ? FO_DIV : FO_NONE;
  case IR_P_NEG: return nargs == 1 ? FO_NEG : FO_NONE;
  default: break;
  }
  IrNode *f = n->in[0];
  if (f->kind != IR_CONST || !v_is_obj(f->value, O_BUILTIN)) return FO_NONE;
  FuseOp op;
  switch (AS_BUILTIN(f->value)->op) {
  case IR_B_EXP: op = FO_EXP; break;
  case IR_B_LOG: op = FO_LOG; break;
  case IR_B_SIN: op = FO_SIN; break;
  case IR_B_COS: op = FO_COS; break;
  case IR_B_TANH: op = FO_TANH; break;
  case IR_B_SIGMOID: op = FO_SIGMOID; break;
  case IR_B_SQRT: op = FO_SQRT; break;
  case IR_B_ABS: op = FO_ABS; break;
  case IR_B_RELU: op = FO_RELU; break;
  case IR_B_MAXIMUM: return nargs == 2 ? FO_MAX : FO_NONE;
  case IR_B_MINIMUM: return nargs == 2 ? FO_MIN : FO_NONE;
  default: return FO_NONE;
  }
  return nargs == 1 ? op : FO_NONE;
}

/* A tensor type with a float dtype and every dim known. */
static bool known_float_tensor(const IrType *t) {
  if (!t || t->kind != IT_TENSOR || t->or_none || t->or_unbound || t->n < 0) return false;
  if (t->dtype != DT_F32 && t->dtype != DT_F64) return false;
  for (int i = 0; i < t->n; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

static int64_t size_of(const IrType *t) {
  int64_t s = 1;
  for (int i = 0; i < t->n; i++) s *= t->dims[i];
  return s;
}

static bool same_shape(const IrType *a, const IrType *b) {
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

typedef struct Plan {
  IrGraph *g;
  const NodeMap *uses;
  IrType *(*type_of)(void *ud, IrNode *n);
  void *ud;
  NodeMap *groups;
} Plan;

/* A Python number operand: the kind it is read as. */
static int number_kind(Plan *pl, IrNode *a) {
  if (a->kind == IR_CONST) return a->value.tag == V_FLOAT ? FI_FLOAT : a->value.tag == V_INT ? FI_INT : -1;
  IrType *t = pl->type_of(pl->ud, a);
  if (!t || t->or_none || t->or_unbound) return -1;
  return t->kind == IT_FLOAT ? FI_FLOAT : t->kind == IT_INT ? FI_INT : -1;
}

/* Whether n is an operation a loop can compute: its result an f32 or
 * f64 tensor of known shape, its operands tensors of that dtype that
 * broadcast to it, or numbers. */
static bool candidate(Plan *pl, IrNode *n) {
  int arity;
  FuseOp op = op_of(n, &arity);
  if (op == FO_NONE) return false;
  IrType *t = pl->type_of(pl->ud, n);
  /* (eager mode computes a one-element tensor's transcendentals with
   * libm, not the vector functions: left to it) */
  if (!known_float_tensor(t) || size_of(t) <= 1) return false;
  if (vm_op(op) >= 0 && !dev_vec_unary((VmUnary)vm_op(op), t->dtype == DT_F64)) return false;
  bool tensor = false;
  for (int i = 1; i <= arity; i++) {
    IrNode *a = n->in[i];
    if (number_kind(pl, a) >= 0) continue;
    IrType *ta = a->kind == IR_CONST ? NULL : pl->type_of(pl->ud, a);
    if (!known_float_tensor(ta) || ta->dtype != t->dtype || ta->n > t->n) return false;
    for (int d = 0; d < ta->n; d++) {
      int64_t od = t->dims[t->n - ta->n + d];
      if (ta->dims[d] != od && ta->dims[d] != 1) return false;
    }
    tensor = true;
  }
  return tensor;
}

/* How input type ta is read against output type t cut after its first
 * t->n - k dims; -1 when by none of the patterns. */
static int tensor_kind(const IrType *ta, const IrType *t, int k) {
  if (size_of(ta) == 1) return FI_ONE;
  int nd = t->n, off = nd - ta->n;
  bool full = true, inner = true, outer = true;
  for (int d = 0; d < nd; d++) {
    int64_t x = d < off ? 1 : ta->dims[d - off];
    if (x != t->dims[d]) full = false;
    if (d < nd - k ? x != 1 : x != t->dims[d]) inner = false;
    if (d < nd - k ? x != t->dims[d] : x != 1) outer = false;
  }
  return full ? FI_FULL : inner ? FI_INNER : outer ? FI_OUTER : -1;
}

static bool in_group(IrNode **nodes, int n, IrNode *x) {
  for (int i = 0; i < n; i++)
    if (nodes[i] == x) return true;
  return false;
}

/* Absorb n's operands that the loop can compute into it. */
static void absorb(Plan *pl, IrNode *n, const IrType *t, IrNode **nodes, int *nn) {
  for (int i = 1; i < n->nin; i++) {
    IrNode *a = n->in[i];
    if (*nn >= FUSE_MAX_NODES || a->graph != pl->g || a == pl->g->ret || ir_map_get(pl->groups, a) ||
        in_group(nodes, *nn, a) || ir_map_int(pl->uses, a, -1) != 1 || !candidate(pl, a) ||
        !same_shape(pl->type_of(pl->ud, a), t))
      continue;
    nodes[(*nn)++] = a;
    absorb(pl, a, t, nodes, nn);
  }
}

/* The group rooted at root, or NULL when its inputs do not fit. */
static FuseGroup *make_group(Plan *pl, IrNode *root) {
  IrType *t = pl->type_of(pl->ud, root);
  IrNode *nodes[FUSE_MAX_NODES];
  int nn = 0;
  nodes[nn++] = root;
  absorb(pl, root, t, nodes, &nn);
  /* in the graph's order */
  IrNode *found[FUSE_MAX_NODES];
  int nf = 0;
  for (int i = 0; i < pl->g->nnodes && nf < nn; i++)
    if (in_group(nodes, nn, pl->g->nodes[i])) found[nf++] = pl->g->nodes[i];
  memcpy(nodes, found, (size_t)nn * sizeof *nodes);
  FuseIn ins[FUSE_MAX_INPUTS];
  int nins = 0;
  for (int i = 0; i < nn; i++)
    for (int j = 1; j < nodes[i]->nin; j++) {
      IrNode *a = nodes[i]->in[j];
      if (in_group(nodes, nn, a)) continue;
      bool seen = false;
      for (int k = 0; k < nins && !seen; k++) seen = ins[k].node == a;
      if (seen) continue;
      if (nins == FUSE_MAX_INPUTS) return NULL;
      ins[nins++] = (FuseIn){a, number_kind(pl, a), 0};
    }
  /* the cut into rows and columns: the whole output as one row when
   * every tensor is of its shape (or one element), else the most rows
   * for which every tensor reads by a pattern */
  int nd = t->n, k = nd;
  for (; k >= 0; k--) {
    bool fits = true;
    for (int i = 0; i < nins && fits; i++) {
      if ((int)ins[i].kind == FI_FLOAT || (int)ins[i].kind == FI_INT) continue;
      int kind = tensor_kind(pl->type_of(pl->ud, ins[i].node), t, k);
      fits = k == nd ? kind == FI_FULL || kind == FI_ONE : kind >= 0;
    }
    if (fits) break;
  }
  if (k < 0 || (k == 0 && nd > 0)) return NULL;
  FuseGroup *fg = lang_alloc(sizeof *fg);
  fg->root = root;
  fg->type = fg->result = t;
  fg->reuse = -1;
  fg->nnodes = nn;
  fg->nodes = lang_alloc((size_t)nn * sizeof *fg->nodes);
  memcpy(fg->nodes, nodes, (size_t)nn * sizeof *nodes);
  fg->nins = nins;
  fg->ins = lang_alloc((size_t)(nins ? nins : 1) * sizeof *fg->ins);
  fg->cols = 1;
  for (int d = nd - k; d < nd; d++) fg->cols *= t->dims[d];
  fg->rows = size_of(t) / fg->cols;
  for (int i = 0; i < nins; i++) {
    FuseIn in = ins[i];
    if ((int)in.kind == FI_FLOAT || (int)in.kind == FI_INT) {
      in.slot = fg->nnumbers++;
    } else {
      in.kind = (FuseInKind)tensor_kind(pl->type_of(pl->ud, in.node), t, k);
      in.slot = fg->ntensors++;
    }
    fg->ins[i] = in;
  }
  return fg;
}

/* n as a reduction of a whole tensor a loop can compute: sum(x) or
 * mean(x), x an f32 or f64 tensor, the result a 0-d tensor of its
 * dtype. */
static FuseReduce reduction_of(Plan *pl, IrNode *n) {
  if (n->kind != IR_APPLY || n->nin != 2 || n->in[0]->kind != IR_CONST || !v_is_obj(n->in[0]->value, O_BUILTIN))
    return FR_NONE;
  int op = AS_BUILTIN(n->in[0]->value)->op;
  if (op != IR_B_SUM && op != IR_B_MEAN) return FR_NONE;
  IrType *t = pl->type_of(pl->ud, n), *x = pl->type_of(pl->ud, n->in[1]);
  if (!t || t->kind != IT_TENSOR || t->or_none || t->or_unbound || t->n != 0 || !known_float_tensor(x) ||
      t->dtype != x->dtype)
    return FR_NONE;
  return op == IR_B_SUM ? FR_SUM : FR_MEAN;
}

void jit_fuse_plan(IrGraph *g, const NodeMap *uses, IrType *(*type_of)(void *ud, IrNode *n), void *ud,
                   NodeMap *groups) {
  Plan pl = {g, uses, type_of, ud, groups};
  /* from the last node back, so that a chain's root is found before
   * the operations it absorbs */
  for (int i = g->nnodes - 1; i >= 0; i--) {
    IrNode *n = g->nodes[i];
    if (ir_map_get(groups, n)) continue;
    FuseReduce red = reduction_of(&pl, n);
    IrNode *a = red ? n->in[1] : NULL;
    if (red && a->graph == g && a != g->ret && ir_map_int(uses, a, -1) == 1 && candidate(&pl, a)) {
      /* the chain feeding a sum or mean: one loop that sums, when it
       * reads its inputs in full (one row) */
      FuseGroup *fg = make_group(&pl, a);
      if (fg && fg->rows == 1) {
        fg->root = n;
        fg->reduce = red;
        fg->result = type_of(ud, n);
        ir_map_put(groups, n, fg);
        for (int j = 0; j < fg->nnodes; j++) ir_map_put(groups, fg->nodes[j], fg);
        continue;
      }
    }
    if (!candidate(&pl, n)) continue;
    FuseGroup *fg = make_group(&pl, n);
    if (!fg) continue;
    for (int j = 0; j < fg->nnodes; j++) ir_map_put(groups, fg->nodes[j], fg);
  }
  /* A loop's output may take the buffer of an input read in full that
   * another loop of this graph made (so no one else holds it) and that
   * nothing reads after: each element is read before it is written, at
   * the same place. */
  for (int i = 0; i < g->nnodes; i++) {
    FuseGroup *fg = ir_map_get(groups, g->nodes[i]);
    if (!fg || fg->root != g->nodes[i] || fg->reduce) continue;
    for (int k = 0; k < fg->nins && fg->reuse < 0; k++) {
      IrNode *a = fg->ins[k].node;
      FuseGroup *src = ir_map_get(groups, a);
      if (fg->ins[k].kind != FI_FULL || !src || src->root != a || src->reduce || a == g->ret) continue;
      int inside = 0;
      for (int j = 0; j < fg->nnodes; j++)
        for (int q = 1; q < fg->nodes[j]->nin; q++) inside += fg->nodes[j]->in[q] == a;
      if (inside == ir_map_int(uses, a, -1)) fg->reuse = fg->ins[k].slot;
    }
  }
}

const char *jit_fuse_describe(const FuseGroup *fg) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "%d op%s in one loop over %s:", fg->nnodes, fg->nnodes == 1 ? "" : "s", ir_type_str(fg->type));
  for (int i = 0; i < fg->nnodes; i++) {
    int arity;
    IrNode *n = fg->nodes[i];
    sb_printf(&sb, " %s@%d:%d", op_names[op_of(n, &arity)], n->span.line, n->span.col);
  }
  if (fg->reduce)
    sb_printf(&sb, ", then %s@%d:%d", fg->reduce == FR_SUM ? "sum" : "mean", fg->root->span.line, fg->root->span.col);
  sb_printf(&sb, " (%lld x %lld", (long long)fg->rows, (long long)fg->cols);
  static const char *const kinds[] = {"full", "inner", "outer", "one", "float", "int"};
  for (int i = 0; i < fg->nins; i++) sb_printf(&sb, "%s%s", i ? " " : "; inputs ", kinds[fg->ins[i].kind]);
  sb_printf(&sb, ")");
  if (fg->reuse >= 0) sb_printf(&sb, ", into the buffer of input %d", fg->reuse + 1);
  return sb.data;
}

/* ---- the loop ---- */

typedef struct K {
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  const FuseGroup *fg;
  LLVMTypeRef i1, i32, i64, ptr, et, vt, mt;   /* element, vector, mask */
  int w;                                       /* lanes */
  bool f64;
  LLVMValueRef *data;                          /* per input: its data (tensors) */
  LLVMValueRef *splat;                         /* per input: its vector, where it is one */
} K;

static LLVMValueRef kcall(K *k, const char *name, LLVMTypeRef ret, int n, LLVMTypeRef *pt, LLVMValueRef *args) {
  LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)n, false);
  LLVMValueRef f = LLVMGetNamedFunction(k->M, name);
  if (!f) f = LLVMAddFunction(k->M, name, fty);
  return LLVMBuildCall2(k->B, fty, f, args, (unsigned)n, "");
}

/* x in every lane of a vector of type vt (k->w lanes) */
static LLVMValueRef splat_as(K *k, LLVMTypeRef vt, LLVMValueRef x) {
  LLVMValueRef v = LLVMBuildInsertElement(k->B, LLVMGetPoison(vt), x, LLVMConstInt(k->i32, 0, false), "");
  return LLVMBuildShuffleVector(k->B, v, LLVMGetPoison(vt), LLVMConstNull(LLVMVectorType(k->i32, (unsigned)k->w)), "");
}

static LLVMValueRef splat(K *k, LLVMValueRef x) { return splat_as(k, k->vt, x); }

static const char *vname(K *k, const char *base) {
  return lang_str_fmt("llvm.%s.v%d%s%s", base, k->w, k->f64 ? "f64" : "f32",
                      strstr(base, "masked") ? ".p0" : "")->data;
}

/* A vector of input i at element offset off (mask: the lanes, or NULL
 * for all). */
static LLVMValueRef load_vec(K *k, int i, LLVMValueRef off, LLVMValueRef mask) {
  LLVMValueRef p = LLVMBuildGEP2(k->B, k->et, k->data[i], &off, 1, "");
  unsigned al = k->f64 ? 8 : 4;
  if (!mask) {
    LLVMValueRef v = LLVMBuildLoad2(k->B, k->vt, p, "");
    LLVMSetAlignment(v, al);
    return v;
  }
  return kcall(k, vname(k, "masked.load"), k->vt, 4, (LLVMTypeRef[]){k->ptr, k->i32, k->mt, k->vt},
               (LLVMValueRef[]){p, LLVMConstInt(k->i32, al, false), mask, LLVMConstNull(k->vt)});
}

static LLVMValueRef unary_call(K *k, const char *name, LLVMValueRef x) {
  return kcall(k, name, k->vt, 1, (LLVMTypeRef[]){k->vt}, (LLVMValueRef[]){x});
}

/* NaN wins, then the larger (smaller) one, the first of equals: the
 * interpreter's maximum and minimum (lang/tensor_ops.c). */
static LLVMValueRef extremum(K *k, LLVMValueRef x, LLVMValueRef y, bool max) {
  LLVMBuilderRef B = k->B;
  LLVMValueRef xnan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, ""), ynan = LLVMBuildFCmp(B, LLVMRealUNO, y, y, "");
  LLVMValueRef pick = LLVMBuildFCmp(B, max ? LLVMRealOGE : LLVMRealOLE, x, y, "");
  LLVMValueRef r = LLVMBuildSelect(B, pick, x, y, "");
  r = LLVMBuildSelect(B, ynan, y, r, "");
  return LLVMBuildSelect(B, xnan, x, r, "");
}

/* The group's nodes on one vector of elements: rowoff the row's first
 * element, c the column, r the row. */
static LLVMValueRef compute(K *k, LLVMValueRef rowoff, LLVMValueRef c, LLVMValueRef mask) {
  const FuseGroup *fg = k->fg;
  LLVMBuilderRef B = k->B;
  LLVMValueRef in[FUSE_MAX_INPUTS], val[FUSE_MAX_NODES];
  for (int i = 0; i < fg->nins; i++) {
    switch (fg->ins[i].kind) {
    case FI_FULL: in[i] = load_vec(k, i, LLVMBuildAdd(B, rowoff, c, ""), mask); break;
    case FI_INNER: in[i] = load_vec(k, i, c, mask); break;
    default: in[i] = k->splat[i]; break;
    }
  }
  for (int j = 0; j < fg->nnodes; j++) {
    IrNode *n = fg->nodes[j];
    int arity;
    FuseOp op = op_of(n, &arity);
    LLVMValueRef a[2] = {NULL, NULL};
    for (int q = 0; q < arity; q++) {
      IrNode *x = n->in[1 + q];
      for (int i = 0; i < fg->nins && !a[q]; i++)
        if (fg->ins[i].node == x) a[q] = in[i];
      for (int i = 0; i < j && !a[q]; i++)
        if (fg->nodes[i] == x) a[q] = val[i];
    }
    LLVMValueRef zero = LLVMConstNull(k->vt);
    switch (op) {
    case FO_ADD: val[j] = LLVMBuildFAdd(B, a[0], a[1], ""); break;
    case FO_SUB: val[j] = LLVMBuildFSub(B, a[0], a[1], ""); break;
    case FO_MUL: val[j] = LLVMBuildFMul(B, a[0], a[1], ""); break;
    case FO_DIV: val[j] = LLVMBuildFDiv(B, a[0], a[1], ""); break;
    case FO_NEG: val[j] = LLVMBuildFNeg(B, a[0], ""); break;
    case FO_MAX: val[j] = extremum(k, a[0], a[1], true); break;
    case FO_MIN: val[j] = extremum(k, a[0], a[1], false); break;
    case FO_SQRT: val[j] = unary_call(k, vname(k, "sqrt"), a[0]); break;
    case FO_ABS: val[j] = unary_call(k, vname(k, "fabs"), a[0]); break;
    case FO_RELU:   /* x < 0 ? 0 : x, as devices/cpu/vmath.c: NaN stays */
      val[j] = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, a[0], zero, ""), zero, a[0], "");
      break;
    default:
      val[j] = unary_call(k, vec_name(op, k->f64), a[0]);
      break;
    }
  }
  return val[fg->nnodes - 1];
}

LLVMValueRef jit_fuse_kernel(LLVMModuleRef M, const FuseGroup *fg, const char *name) {
  K kv = {0}, *k = &kv;
  k->C = LLVMGetModuleContext(M);
  k->M = M;
  k->fg = fg;
  k->f64 = fg->type->dtype == DT_F64;
  k->w = k->f64 ? 8 : 16;
  k->i1 = LLVMInt1TypeInContext(k->C);
  k->i32 = LLVMInt32TypeInContext(k->C);
  k->i64 = LLVMInt64TypeInContext(k->C);
  k->ptr = LLVMPointerTypeInContext(k->C, 0);
  k->et = k->f64 ? LLVMDoubleTypeInContext(k->C) : LLVMFloatTypeInContext(k->C);
  k->vt = LLVMVectorType(k->et, (unsigned)k->w);
  k->mt = LLVMVectorType(k->i1, (unsigned)k->w);
  LLVMTypeRef i64 = k->i64;
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(k->C),
                                     (LLVMTypeRef[]){k->ptr, k->ptr, k->ptr, i64, i64, i64, i64}, 7, false);
  LLVMValueRef fn = LLVMAddFunction(M, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  /* the widest vectors, passed to the vector functions in zmm registers */
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(k->C, "prefer-vector-width", 19, "512", 3));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(k->C, "min-legal-vector-width", 22, "512", 3));
  LLVMBuilderRef B = k->B = LLVMCreateBuilderInContext(k->C);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(k->C, fn, "entry");
  LLVMPositionBuilderAtEnd(B, entry);
  LLVMValueRef tens = LLVMGetParam(fn, 0), nums = LLVMGetParam(fn, 1), out = LLVMGetParam(fn, 2);
  LLVMValueRef r0 = LLVMGetParam(fn, 3), r1 = LLVMGetParam(fn, 4), c0 = LLVMGetParam(fn, 5), c1 = LLVMGetParam(fn, 6);
  LLVMValueRef data[FUSE_MAX_INPUTS], splats[FUSE_MAX_INPUTS];
  k->data = data;
  k->splat = splats;
  for (int i = 0; i < fg->nins; i++) {
    const FuseIn *in = &fg->ins[i];
    data[i] = splats[i] = NULL;
    if (in->kind == FI_FLOAT || in->kind == FI_INT) {
      LLVMValueRef p = LLVMBuildGEP2(B, i64, nums, (LLVMValueRef[]){LLVMConstInt(i64, (unsigned)in->slot, false)}, 1, "");
      LLVMValueRef bits = LLVMBuildLoad2(B, i64, p, "");
      /* a number takes the tensor's dtype, rounded once (scalar_with) */
      LLVMValueRef x = in->kind == FI_INT
                           ? LLVMBuildSIToFP(B, bits, k->et, "")
                           : LLVMBuildBitCast(B, bits, LLVMDoubleTypeInContext(k->C), "");
      if (in->kind == FI_FLOAT && !k->f64) x = LLVMBuildFPTrunc(B, x, k->et, "");
      splats[i] = splat(k, x);
      continue;
    }
    LLVMValueRef p = LLVMBuildGEP2(B, k->ptr, tens, (LLVMValueRef[]){LLVMConstInt(i64, (unsigned)in->slot, false)}, 1, "");
    data[i] = LLVMBuildLoad2(B, k->ptr, p, "");
    if (in->kind == FI_ONE) splats[i] = splat(k, LLVMBuildLoad2(B, k->et, data[i], ""));
  }
  LLVMBasicBlockRef rowhead = LLVMAppendBasicBlockInContext(k->C, fn, "row"),
                    rowbody = LLVMAppendBasicBlockInContext(k->C, fn, "rowbody"),
                    colhead = LLVMAppendBasicBlockInContext(k->C, fn, "col"),
                    colbody = LLVMAppendBasicBlockInContext(k->C, fn, "colbody"),
                    tail = LLVMAppendBasicBlockInContext(k->C, fn, "tail"),
                    tailbody = LLVMAppendBasicBlockInContext(k->C, fn, "tailbody"),
                    rowend = LLVMAppendBasicBlockInContext(k->C, fn, "rowend"),
                    done = LLVMAppendBasicBlockInContext(k->C, fn, "done");
  LLVMBuildBr(B, rowhead);
  LLVMPositionBuilderAtEnd(B, rowhead);
  LLVMValueRef r = LLVMBuildPhi(B, i64, "r");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, r, r1, ""), rowbody, done);
  LLVMPositionBuilderAtEnd(B, rowbody);
  LLVMValueRef rowoff = LLVMBuildMul(B, r, LLVMConstInt(i64, (unsigned long long)fg->cols, false), "rowoff");
  for (int i = 0; i < fg->nins; i++)
    if (fg->ins[i].kind == FI_OUTER) {
      LLVMValueRef p = LLVMBuildGEP2(B, k->et, data[i], &r, 1, "");
      splats[i] = splat(k, LLVMBuildLoad2(B, k->et, p, ""));
    }
  LLVMValueRef orow = LLVMBuildGEP2(B, k->et, out, &rowoff, 1, "");
  LLVMBuildBr(B, colhead);
  LLVMPositionBuilderAtEnd(B, colhead);
  LLVMValueRef c = LLVMBuildPhi(B, i64, "c");
  LLVMValueRef wv = LLVMConstInt(i64, (unsigned)k->w, false);
  LLVMValueRef cw = LLVMBuildAdd(B, c, wv, "");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLE, cw, c1, ""), colbody, tail);
  LLVMPositionBuilderAtEnd(B, colbody);
  LLVMValueRef v = compute(k, rowoff, c, NULL);
  LLVMValueRef st = LLVMBuildStore(B, v, LLVMBuildGEP2(B, k->et, orow, &c, 1, ""));
  LLVMSetAlignment(st, k->f64 ? 8 : 4);
  LLVMBasicBlockRef colbody_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, colhead);
  LLVMPositionBuilderAtEnd(B, tail);
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, c, c1, ""), tailbody, rowend);
  LLVMPositionBuilderAtEnd(B, tailbody);
  /* the last partial vector: the lanes below c1 */
  LLVMValueRef iota[16];
  for (int i = 0; i < k->w; i++) iota[i] = LLVMConstInt(i64, (unsigned)i, false);
  LLVMTypeRef v64 = LLVMVectorType(i64, (unsigned)k->w);
  LLVMValueRef lanes = LLVMBuildAdd(B, splat_as(k, v64, c), LLVMConstVector(iota, (unsigned)k->w), "");
  LLVMValueRef mask = LLVMBuildICmp(B, LLVMIntSLT, lanes, splat_as(k, v64, c1), "");
  LLVMValueRef tv = compute(k, rowoff, c, mask);
  kcall(k, vname(k, "masked.store"), LLVMVoidTypeInContext(k->C), 4, (LLVMTypeRef[]){k->vt, k->ptr, k->i32, k->mt},
        (LLVMValueRef[]){tv, LLVMBuildGEP2(B, k->et, orow, &c, 1, ""), LLVMConstInt(k->i32, k->f64 ? 8 : 4, false), mask});
  LLVMBuildBr(B, rowend);
  LLVMPositionBuilderAtEnd(B, rowend);
  LLVMValueRef rn = LLVMBuildAdd(B, r, LLVMConstInt(i64, 1, false), "");
  LLVMBuildBr(B, rowhead);
  LLVMPositionBuilderAtEnd(B, done);
  LLVMBuildRetVoid(B);
  LLVMAddIncoming(r, (LLVMValueRef[]){r0, rn}, (LLVMBasicBlockRef[]){entry, rowend}, 2);
  LLVMAddIncoming(c, (LLVMValueRef[]){c0, cw}, (LLVMBasicBlockRef[]){rowbody, colbody_end}, 2);
  LLVMDisposeBuilder(B);
  return fn;
}
