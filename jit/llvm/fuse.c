/* fuse.c: chains of elementwise operations on tensors, fused into one
 * loop over the output's elements (docs/jit.md, "Fused elementwise
 * loops").
 *
 * The plan: in a typed graph, an elementwise operation (+ - * / **,
 * unary -, exp log sin cos tanh sigmoid sqrt abs relu floor ceil maximum minimum,
 * the comparisons, where, clip, astype) whose result inference types a
 * tensor with every dim known, on tensors and Python numbers, is a
 * loop's root; an operand that is such an operation too, of the same
 * shape, used only there, in the same graph, is computed in the same
 * loop, and so on up the chain.  Each operation computes in the dtype
 * eager mode promotes its operands to (lang/tensor_ops.c), and is fused
 * only when that gives the dtype inference gave it.  The other operands
 * are the loop's inputs: tensors that broadcast to the output by one of
 * the simple patterns of FuseInKind, and numbers.  A chain whose inputs
 * broadcast otherwise is not fused (its operations run through the
 * runtime, boxed).  A loop's output takes the buffer of a temporary
 * another loop made when nothing else reads it.  A sum, mean, max, min,
 * prod, argmax, argmin, any or all of a chain (of all of it, over one
 * axis or over adjacent axes) is computed with it (rt.c reduces in eager
 * mode's order, with eager mode's code).
 *
 * The loop: rows x columns of the output, each row in vectors of the
 * target's widest (jit_fuse_width: 512 or 256 bits of the widest dtype
 * in the loop), the last partial vector masked.  Every operation rounds,
 * wraps and converts as eager mode's kernel for it does, with no
 * contraction into FMAs, and the transcendentals call the very vector
 * functions eager mode's kernels call (devices/cpu/vmath.h,
 * dev_vec_unary and friends), lane for lane, or ones that give their
 * bits (a 256-bit loop on an AVX-512 CPU: Mist's 8-lane f32 exp, log,
 * tanh, sigmoid; those four are inlined, kernels.c), so a fused loop's
 * results are eager mode's to the bit.  rt.c's mist_rt_fused makes the output
 * and runs the loop, split over the thread pool when it is big.
 */
#include <stdlib.h>
#include <string.h>

#include "devices/cpu/vmath.h"
#include "jit/llvm/cg.h"
#include "jit/llvm/fuse.h"
#include "lang/gc.h"
#include "lang/tensor.h"

typedef enum { FO_ADD, FO_SUB, FO_MUL, FO_DIV, FO_NEG, FO_MAX, FO_MIN, FO_SQRT, FO_ABS, FO_RELU,
               FO_EXP, FO_LOG, FO_SIN, FO_COS, FO_TANH, FO_SIGMOID, FO_POW, FO_EQ, FO_NE, FO_LT, FO_LE,
               FO_GT, FO_GE, FO_WHERE, FO_ASTYPE, FO_CLIP, FO_FLOOR, FO_CEIL, FO_NONE } FuseOp;

static const char *const op_names[] = {"add", "sub", "mul", "truediv", "neg", "maximum", "minimum", "sqrt",
                                       "abs", "relu", "exp", "log", "sin", "cos", "tanh", "sigmoid", "pow",
                                       "eq", "ne", "lt", "le", "gt", "ge", "where", "astype", "clip", "floor", "ceil"};

/* The transcendentals: a loop computes them with the vector functions
 * eager mode's kernels call (dev_vec_unary, dev_vec_binary), declared in
 * its module as mist_vec_NAME_f32 / _f64 and given their addresses, when
 * the object is linked, by the runtime's jit_rt_symbol (jit/rt.c), which
 * must choose as vec_fn does; Mist's own f32 exp, log, tanh and sigmoid
 * are linked into the module instead, from the same C (kernels.c). */
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

static const char *vec_name(FuseOp op, bool f64, int bits) {
  return lang_str_fmt("mist_vec%s_%s_%s", bits == 256 ? "256" : "", op_names[op], f64 ? "f64" : "f32")->data;
}

/* The vector function eager mode calls for op on vectors of `bits`
 * bits (the host's kernels: AVX-512 or AVX2), or one with its bits (see
 * dev_vec_unary), or NULL. */
static DevVecFn vec_fn(FuseOp op, bool f64, int bits) {
  if (op == FO_POW) return dev_vec_binary(VM_POW, f64, bits);
  int vm = vm_op(op);
  if (vm < 0) return NULL;
  return dev_vec_unary((VmUnary)vm, f64, bits);
}

/* Whether a comma-separated LLVM feature list has +name. */
static bool has_feature(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n)
    if (p > list && p[-1] == '+' && (p[n] == ',' || p[n] == '\0')) return true;
  return false;
}

int jit_fuse_width(void) {
  const char *fixed = getenv("MIST_JIT_CPU");
  if (fixed && *fixed) {
    /* a CPU named: the widths of the x86-64 levels and of a few CPUs;
     * any other, nothing (its features are not known here) */
    static const struct {
      const char *cpu;
      int bits;
    } cpus[] = {{"x86-64-v4", 512}, {"skylake-avx512", 512}, {"icelake-server", 512}, {"sapphirerapids", 512},
                {"znver4", 512}, {"x86-64-v3", 256}, {"haswell", 256}, {"skylake", 256}, {"znver2", 256},
                {"znver3", 256}};
    for (size_t i = 0; i < sizeof cpus / sizeof *cpus; i++)
      if (strcmp(fixed, cpus[i].cpu) == 0) return cpus[i].bits;
    return 0;
  }
  static int host = -1;
  if (host < 0) {
    char *f = LLVMGetHostCPUFeatures();
    host = has_feature(f, "avx512f") ? 512 : has_feature(f, "avx2") && has_feature(f, "fma") ? 256 : 0;
    LLVMDisposeMessage(f);
  }
  return host;
}

bool jit_fuse_enabled(void) { return jit_fuse_width() > 0; }

/* The builtin n applies, or -1. */
static int builtin_of(IrNode *n) {
  IrNode *f = n->in[0];
  if (f->kind != IR_CONST || !v_is_obj(f->value, O_BUILTIN)) return -1;
  return AS_BUILTIN(f->value)->op;
}

/* The dtype a constant str names ("f32"...), or -1. */
static int dtype_named(IrNode *a) {
  if (a->kind != IR_CONST || !v_is_obj(a->value, O_STR)) return -1;
  static const char *const names[] = {"bool", "i32", "i64", "f32", "f64"};
  for (int i = 0; i < 5; i++)
    if (strcmp(AS_STR(a->value)->data, names[i]) == 0) return i;
  return -1;
}

/* Whether n is a method call, x.name(args): call_method(x, "name", args...) */
static bool is_method(IrNode *n) { return ir_node_prim(n) == IR_P_CALL_METHOD && n->nin >= 3; }

/* Operand q of n (x, then the arguments, for a method). */
static IrNode *operand(IrNode *n, int q) { return n->in[is_method(n) && q > 0 ? q + 2 : q + 1]; }

/* The builtin a tensor method x.name(...) calls (the METHOD rows of
 * builtin_ops.def), of those a loop computes; -1 for the others. */
static int method_builtin(IrNode *n) {
  IrNode *name = n->in[2];
  if (name->kind != IR_CONST || !v_is_obj(name->value, O_STR)) return -1;
  static const struct {
    const char *name;
    int op;
  } methods[] = {{"exp", IR_B_EXP}, {"log", IR_B_LOG}, {"sin", IR_B_SIN}, {"cos", IR_B_COS},
                 {"tanh", IR_B_TANH}, {"sigmoid", IR_B_SIGMOID}, {"sqrt", IR_B_SQRT}, {"abs", IR_B_ABS},
                 {"relu", IR_B_RELU}, {"maximum", IR_B_MAXIMUM}, {"minimum", IR_B_MINIMUM},
                 {"clip", IR_B_CLIP}, {"astype", IR_B_ASTYPE}, {"floor", IR_B_FLOOR}, {"ceil", IR_B_CEIL}};
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
    if (strcmp(AS_STR(name->value)->data, methods[i].name) == 0) return methods[i].op;
  return -1;
}

/* The dtype astype node n converts to. */
static int astype_dtype(IrNode *n) { return dtype_named(operand(n, 1)); }

/* The operation node n is, with the count of its operands a loop reads
 * (astype's dtype is not one); FO_NONE if none. */
static FuseOp op_of(IrNode *n, int *arity) {
  *arity = 0;
  if (n->kind != IR_APPLY || n->nin < 1) return FO_NONE;
  bool method = is_method(n);
  int nargs = method ? n->nin - 2 : n->nin - 1;
  *arity = nargs;
  FuseOp bin = FO_NONE;
  switch (ir_node_prim(n)) {
  case IR_P_ADD: bin = FO_ADD; break;
  case IR_P_SUB: bin = FO_SUB; break;
  case IR_P_MUL: bin = FO_MUL; break;
  case IR_P_TRUEDIV: bin = FO_DIV; break;
  case IR_P_POW: bin = FO_POW; break;
  case IR_P_EQ: bin = FO_EQ; break;
  case IR_P_NE: bin = FO_NE; break;
  case IR_P_LT: bin = FO_LT; break;
  case IR_P_LE: bin = FO_LE; break;
  case IR_P_GT: bin = FO_GT; break;
  case IR_P_GE: bin = FO_GE; break;
  case IR_P_NEG: return nargs == 1 ? FO_NEG : FO_NONE;
  default: break;
  }
  if (bin != FO_NONE) return nargs == 2 ? bin : FO_NONE;
  FuseOp op;
  switch (method ? method_builtin(n) : builtin_of(n)) {
  case IR_B_EXP: op = FO_EXP; break;
  case IR_B_LOG: op = FO_LOG; break;
  case IR_B_SIN: op = FO_SIN; break;
  case IR_B_COS: op = FO_COS; break;
  case IR_B_TANH: op = FO_TANH; break;
  case IR_B_SIGMOID: op = FO_SIGMOID; break;
  case IR_B_SQRT: op = FO_SQRT; break;
  case IR_B_ABS: op = FO_ABS; break;
  case IR_B_RELU: op = FO_RELU; break;
  case IR_B_FLOOR: op = FO_FLOOR; break;
  case IR_B_CEIL: op = FO_CEIL; break;
  case IR_B_MAXIMUM: return nargs == 2 ? FO_MAX : FO_NONE;
  case IR_B_MINIMUM: return nargs == 2 ? FO_MIN : FO_NONE;
  case IR_B_WHERE: return nargs == 3 ? FO_WHERE : FO_NONE;
  case IR_B_CLIP: return nargs == 3 ? FO_CLIP : FO_NONE;
  case IR_B_ASTYPE:
    if (nargs != 2 || astype_dtype(n) < 0) return FO_NONE;
    *arity = 1;
    return FO_ASTYPE;
  default: return FO_NONE;
  }
  return nargs == 1 ? op : FO_NONE;
}

/* A tensor type with a known dtype and every dim known. */
static bool known_tensor(const IrType *t) {
  if (!t || t->kind != IT_TENSOR || t->or_none || t->or_unbound || t->n < 0) return false;
  if (t->dtype < DT_BOOL || t->dtype > DT_F64) return false;
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
  int bits;   /* the vectors' width (jit_fuse_width) */
} Plan;

/* A Python number operand: FUSE_FLOAT, FUSE_INT or FUSE_SMALL_INT, or 0
 * when not one. */
static int number_kind(Plan *pl, IrNode *a) {
  if (a->kind == IR_CONST && a->value.tag == V_INT)
    return a->value.i >= INT32_MIN && a->value.i <= INT32_MAX ? FUSE_SMALL_INT : FUSE_INT;
  if (a->kind == IR_CONST) return a->value.tag == V_FLOAT ? FUSE_FLOAT : 0;
  IrType *t = pl->type_of(pl->ud, a);
  if (!t || t->or_none || t->or_unbound) return 0;
  return t->kind == IT_FLOAT ? FUSE_FLOAT : t->kind == IT_INT ? FUSE_INT : 0;
}

/* an operand not there (of a unary op) */
enum { NO_OPERAND = -9 };

/* ---- dtypes, as lang/tensor_ops.c promotes them ----
 * An operand's dtype is a tensor's DType or a number's FUSE_FLOAT or
 * FUSE_INT. */

static bool is_float_dt(int d) { return d == DT_F32 || d == DT_F64; }

static int elem_size(int d) { return d == DT_BOOL ? 1 : d == DT_I32 || d == DT_F32 ? 4 : 8; }

/* the dtype a Python number takes beside a tensor of dtype t (scalar_with) */
static int scalar_with(int t, int num) {
  if (num == FUSE_FLOAT) return is_float_dt(t) ? t : DT_F32;
  return t == DT_BOOL ? DT_I64 : t;
}

/* the dtype two operands compute in (operands()), before an op's own rule */
static int common(int x, int y) {
  if (x >= 0 && y >= 0) return x > y ? x : y;
  if (x >= 0) return scalar_with(x, y);
  if (y >= 0) return scalar_with(y, x);
  int a = x == FUSE_FLOAT ? DT_F32 : DT_I64, b = y == FUSE_FLOAT ? DT_F32 : DT_I64;
  return a > b ? a : b;
}

/* Whether operand dtype x can be brought to d in a loop as eager mode
 * brings it: a number only to a float, an int to i64, and to i32 an int
 * constant that fits (eager mode checks another int's range: left to
 * it). */
static bool fits(int x, int d) {
  if (x >= 0 || is_float_dt(d)) return true;
  return x != FUSE_FLOAT && (d == DT_I64 || (x == FUSE_SMALL_INT && d == DT_I32));
}

/* The dtypes of op on operands of dtypes od: *cdt what the operands are
 * brought to (for clip: the first step's, *cdt2 the second's), *rdt the
 * result's.  False when a loop does not compute it as eager mode does. */
static bool op_dtypes(FuseOp op, const int *od, int *cdt, int *cdt2, int *rdt) {
  int c;
  *cdt2 = -1;
  switch (op) {
  case FO_ADD: case FO_SUB: case FO_MUL:
    c = common(od[0], od[1]);
    if (c == DT_BOOL) c = DT_I64;
    break;
  case FO_DIV:
    c = common(od[0], od[1]);
    if (!is_float_dt(c)) c = DT_F32;
    break;
  case FO_POW:   /* integer powers may fail (negative exponents): left to eager mode */
    c = common(od[0], od[1]);
    if (!is_float_dt(c)) return false;
    break;
  case FO_MAX: case FO_MIN: c = common(od[0], od[1]); break;
  case FO_EQ: case FO_NE: case FO_LT: case FO_LE: case FO_GT: case FO_GE:
    c = common(od[0], od[1]);
    if (!fits(od[0], c) || !fits(od[1], c)) return false;
    *cdt = c;
    *rdt = DT_BOOL;
    return true;
  case FO_NEG: case FO_ABS: case FO_RELU:
    if (od[0] < 0) return false;
    c = od[0] == DT_BOOL ? DT_I64 : od[0];
    break;
  case FO_FLOOR: case FO_CEIL:   /* ints and bools are whole already: kept */
    if (od[0] < 0) return false;
    c = od[0];
    break;
  case FO_SQRT: case FO_EXP: case FO_LOG: case FO_SIN: case FO_COS: case FO_TANH: case FO_SIGMOID:
    if (od[0] < 0) return false;
    c = is_float_dt(od[0]) ? od[0] : DT_F32;
    break;
  case FO_WHERE:
    if (od[0] < 0) return false;
    c = common(od[1], od[2]);
    if (!fits(od[1], c) || !fits(od[2], c)) return false;
    *cdt = *rdt = c;
    return true;
  case FO_CLIP:
    c = common(od[0], od[1]);
    if (!fits(od[0], c) || !fits(od[1], c)) return false;
    *cdt = c;
    *cdt2 = *rdt = common(c, od[2]);
    return fits(od[2], *cdt2);
  default: return false;   /* astype: the plan knows its dtype */
  }
  if (!fits(od[0], c) || (od[1] != NO_OPERAND && !fits(od[1], c))) return false;
  *cdt = *rdt = c;
  return true;
}

/* Whether n is an operation a loop can compute: its result a tensor of
 * known shape and dtype, its operands tensors that broadcast to it, or
 * numbers, with the dtypes eager mode would give; *rdt its result's
 * dtype, *widest the largest element size it touches. */
static bool candidate_dt(Plan *pl, IrNode *n, int *widest) {
  int arity;
  FuseOp op = op_of(n, &arity);
  if (op == FO_NONE || arity > 3) return false;
  IrType *t = pl->type_of(pl->ud, n);
  /* (eager mode computes a one-element tensor's transcendentals with
   * libm, not the vector functions: left to it) */
  if (!known_tensor(t) || size_of(t) <= 1) return false;
  bool tensor = false;
  int od[3] = {NO_OPERAND, NO_OPERAND, NO_OPERAND};
  int wide = elem_size(t->dtype);
  for (int i = 0; i < arity; i++) {
    IrNode *a = operand(n, i);
    if ((od[i] = number_kind(pl, a)) != 0) continue;
    IrType *ta = a->kind == IR_CONST ? NULL : pl->type_of(pl->ud, a);
    if (!known_tensor(ta) || ta->n > t->n) return false;
    for (int d = 0; d < ta->n; d++) {
      int64_t odim = t->dims[t->n - ta->n + d];
      if (ta->dims[d] != odim && ta->dims[d] != 1) return false;
    }
    od[i] = ta->dtype;
    if (elem_size(ta->dtype) > wide) wide = elem_size(ta->dtype);
    tensor = true;
  }
  int cdt, cdt2, rdt;
  if (op == FO_ASTYPE) {
    if (od[0] < 0) return false;
    cdt = cdt2 = rdt = astype_dtype(n);
  } else if (!op_dtypes(op, od, &cdt, &cdt2, &rdt)) {
    return false;
  }
  if (rdt != t->dtype || !tensor) return false;
  if ((vm_op(op) >= 0 || op == FO_POW) && !vec_fn(op, cdt == DT_F64, pl->bits)) return false;
  if (elem_size(cdt) > wide) wide = elem_size(cdt);
  if (cdt2 >= 0 && elem_size(cdt2) > wide) wide = elem_size(cdt2);
  if (widest) *widest = wide;
  return true;
}

static bool candidate(Plan *pl, IrNode *n) { return candidate_dt(pl, n, NULL); }

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
  int arity;
  op_of(n, &arity);
  for (int i = 0; i < arity; i++) {
    IrNode *a = operand(n, i);
    if (*nn >= FUSE_MAX_NODES || a->graph != pl->g || a == pl->g->ret || ir_map_get(pl->groups, a) ||
        in_group(nodes, *nn, a) || ir_map_int(pl->uses, a, -1) != 1 || !candidate(pl, a) ||
        !same_shape(pl->type_of(pl->ud, a), t))
      continue;
    nodes[(*nn)++] = a;
    absorb(pl, a, t, nodes, nn);
  }
}

/* The group rooted at root, or NULL when its inputs do not fit; cut
 * after its first t->n - cut dims, or (cut -1) as its inputs allow. */
static FuseGroup *make_group(Plan *pl, IrNode *root, int cut) {
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
  int nins = 0, widest = 4;
  for (int i = 0; i < nn; i++) {
    int arity, wide;
    op_of(nodes[i], &arity);
    candidate_dt(pl, nodes[i], &wide);
    if (wide > widest) widest = wide;
    for (int j = 0; j < arity; j++) {
      IrNode *a = operand(nodes[i], j);
      if (in_group(nodes, nn, a)) continue;
      bool seen = false;
      for (int k = 0; k < nins && !seen; k++) seen = ins[k].node == a;
      if (seen) continue;
      if (nins == FUSE_MAX_INPUTS) return NULL;
      int num = number_kind(pl, a);
      ins[nins++] = num ? (FuseIn){a, num == FUSE_FLOAT ? FI_FLOAT : FI_INT, 0, num}
                        : (FuseIn){a, FI_FULL, 0, pl->type_of(pl->ud, a)->dtype};
    }
  }
  /* the cut into rows and columns: the whole output as one row when
   * every tensor is of its shape (or one element), else the most rows
   * for which every tensor reads by a pattern */
  int nd = t->n, k = cut >= 0 ? cut : nd;
  for (; k >= 0; k = cut >= 0 ? -1 : k - 1) {
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
  fg->bits = pl->bits;
  fg->lanes = pl->bits / 8 / widest;
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

/* The reduction a builtin (or method) name is, of those a loop computes. */
static FuseReduce reduction_named(const char *name) {
  static const struct {
    const char *name;
    FuseReduce r;
  } names[] = {{"sum", FR_SUM}, {"mean", FR_MEAN}, {"max", FR_MAX}, {"min", FR_MIN}, {"prod", FR_PROD},
               {"argmax", FR_ARGMAX}, {"argmin", FR_ARGMIN}, {"any", FR_ANY}, {"all", FR_ALL}};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(name, names[i].name) == 0) return names[i].r;
  return FR_NONE;
}

/* The reduction builtin b is: an op of builtin_ops.def, or Python's any
 * and all (stdlib/builtins.c: no op of their own; on a tensor, the
 * tensor's any and all). */
static FuseReduce reduction_builtin(const ObjBuiltin *b) {
  switch (b->op) {
  case IR_B_SUM: return FR_SUM;
  case IR_B_MEAN: return FR_MEAN;
  case IR_B_MAX: return FR_MAX;
  case IR_B_MIN: return FR_MIN;
  case IR_B_PROD: return FR_PROD;
  case IR_B_ARGMAX: return FR_ARGMAX;
  case IR_B_ARGMIN: return FR_ARGMIN;
  default: break;
  }
  if (b->op < 0 && b->prim < 0 && (strcmp(b->name, "any") == 0 || strcmp(b->name, "all") == 0))
    return reduction_named(b->name);
  return FR_NONE;
}

/* The axes axis names of a tensor of nd dims, as a mask (*mask), as
 * eager mode's std_axes_arg reads them: None (or no axis) all of them,
 * an int one, a tuple of ints (tuple: where allowed) those; false where
 * inference does not know them, or eager mode raises an error (out of
 * range, a duplicate, a tuple where one axis is wanted). */
static bool reduced_axes(Plan *pl, IrNode *axis, int nd, bool tuple, uint64_t *mask) {
  IrType *at = axis ? pl->type_of(pl->ud, axis) : NULL;
  *mask = nd >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << nd) - 1;
  if (!axis || (at && at->kind == IT_NONE && !at->or_none)) return true;
  if (!at || at->or_none || at->or_unbound) return false;
  IrType *const *items = &at;
  int k = 1;
  if (at->kind == IT_TUPLE) {
    if (!tuple || at->n < 1) return false;
    items = at->items;
    k = at->n;
  }
  *mask = 0;
  for (int i = 0; i < k; i++) {
    IrType *it = items[i];
    if (it->kind != IT_INT || !it->has_val || it->or_none || it->or_unbound || it->ival < -nd || it->ival >= nd)
      return false;
    int d = (int)(it->ival < 0 ? it->ival + nd : it->ival);
    if (*mask >> d & 1) return false;
    *mask |= (uint64_t)1 << d;
  }
  return true;
}

/* n as a reduction a loop can compute, of the tensor *x: sum, mean,
 * max, min, prod, argmax, argmin, any or all (sum(x), x.max(...),
 * min(x, axis=..., keepdims=...)) of all of x (*first -1) or over the
 * adjacent axes *first..*last (one axis, or a tuple of them in any
 * order), keepdims or not, giving *result: a sum, mean or prod of a
 * float tensor; a sum of an integer or bool tensor (to i64); max and
 * min of any dtype (to it); argmax and argmin (over one axis or all:
 * to i64) and any and all (to bool) of any dtype.  Integer products,
 * which may overflow, means of integers, and axes that are not
 * adjacent (eager mode moves them last, a transpose the loop would
 * gather) are left to eager mode. */
static FuseReduce reduction_of(Plan *pl, IrNode *n, IrNode **x, IrNode **method, int *first, int *last,
                               IrType **result) {
  if (n->kind != IR_APPLY || n->nin < 2) return FR_NONE;
  FuseReduce op = FR_NONE;
  int npos = 0;
  IrNode *pos[3], *axis = NULL, *keep = NULL;
  *method = NULL;
  if (ir_node_prim(n) == IR_P_CALL_KW) {
    if (n->nin < 3) return FR_NONE;
    IrNode *f = n->in[1], *names = n->in[2];
    if (names->kind != IR_CONST || !v_is_obj(names->value, O_TUPLE)) return FR_NONE;
    ObjSeq *nm = AS_SEQ(names->value);
    int nkw = (int)nm->len, first_pos = 0;
    if (f->kind == IR_CONST && v_is_obj(f->value, O_BUILTIN)) {
      op = reduction_builtin(AS_BUILTIN(f->value));
    } else if (f->kind == IR_APPLY && ir_node_prim(f) == IR_P_GETATTR && f->nin == 3 && f->graph == pl->g &&
               ir_map_int(pl->uses, f, -1) == 1 && f->in[2]->kind == IR_CONST && v_is_obj(f->in[2]->value, O_STR)) {
      /* x.sum(axis=...): the bound method, used only here, is not made */
      op = reduction_named(AS_STR(f->in[2]->value)->data);
      pos[0] = f->in[1];
      first_pos = 1;
      *method = f;
    } else {
      return FR_NONE;
    }
    npos = n->nin - 3 - nkw;
    if (npos < 0 || npos + first_pos < 1 || npos + first_pos > 3) return FR_NONE;
    for (int i = 0; i < npos; i++) pos[first_pos + i] = n->in[3 + i];
    for (int i = 0; i < nkw; i++) {
      const char *name = AS_STR(nm->items[i])->data;
      IrNode *v = n->in[3 + npos + i];
      if (strcmp(name, "axis") == 0 && !axis) axis = v;
      else if (strcmp(name, "keepdims") == 0 && !keep) keep = v;
      else return FR_NONE;
    }
    npos += first_pos;
  } else if (is_method(n)) {
    IrNode *name = n->in[2];
    if (name->kind != IR_CONST || !v_is_obj(name->value, O_STR)) return FR_NONE;
    op = reduction_named(AS_STR(name->value)->data);
    npos = n->nin - 2;
    if (npos > 3) return FR_NONE;
    pos[0] = n->in[1];
    for (int i = 1; i < npos; i++) pos[i] = n->in[2 + i];
  } else {
    IrNode *f = n->in[0];
    if (f->kind != IR_CONST || !v_is_obj(f->value, O_BUILTIN)) return FR_NONE;
    op = reduction_builtin(AS_BUILTIN(f->value));
    npos = n->nin - 1;
    if (npos > 3) return FR_NONE;
    for (int i = 0; i < npos; i++) pos[i] = n->in[1 + i];
  }
  if (op == FR_NONE || npos < 1) return FR_NONE;
  if (npos > 1) {
    if (axis) return FR_NONE;
    axis = pos[1];
  }
  if (npos > 2) {
    if (keep) return FR_NONE;
    keep = pos[2];
  }
  *x = pos[0];
  IrType *xt = pl->type_of(pl->ud, pos[0]);
  if (!known_tensor(xt)) return FR_NONE;
  IrType *kt = keep ? pl->type_of(pl->ud, keep) : NULL;
  if (keep && (!kt || kt->kind != IT_BOOL || !kt->has_val || kt->or_none)) return FR_NONE;
  bool arg = op == FR_ARGMAX || op == FR_ARGMIN;
  uint64_t mask;
  if (!reduced_axes(pl, axis, xt->n, !arg, &mask)) return FR_NONE;
  /* the result's type: as eager mode's lang_tensor_reduce makes it */
  int dt = xt->dtype;
  if (arg) dt = DT_I64;
  else if (op == FR_ANY || op == FR_ALL) dt = DT_BOOL;
  else if (op == FR_SUM && !is_float_dt(dt)) dt = DT_I64;
  else if ((op == FR_MEAN || op == FR_PROD) && !is_float_dt(dt)) return FR_NONE;
  int64_t dims[LANG_TENSOR_MAX_DIMS];
  int nd = 0, lo = -1, hi = -1;
  for (int d = 0; d < xt->n; d++) {
    if (!(mask >> d & 1)) dims[nd++] = xt->dims[d];
    else if (kt && kt->ival) dims[nd++] = 1;
    if (mask >> d & 1) {
      if (lo < 0) lo = d;
      else if (hi != d - 1) return FR_NONE;   /* not adjacent */
      hi = d;
    }
  }
  if (lo < 0) return FR_NONE;   /* axis=(): nothing reduced */
  IrType *t = ir_type_tensor(dt, nd, dims);
  /* any and all have no type rule; the others' must agree */
  if (op != FR_ANY && op != FR_ALL) {
    IrType *it = pl->type_of(pl->ud, n);
    if (!known_tensor(it) || it->dtype != dt || !same_shape(it, t)) return FR_NONE;
    t = it;
  }
  *result = t;
  /* over all of them: over all of it */
  *first = lo == 0 && hi == xt->n - 1 ? -1 : lo;
  *last = *first < 0 ? -1 : hi;
  return op;
}

void jit_fuse_plan(IrGraph *g, const NodeMap *uses, IrType *(*type_of)(void *ud, IrNode *n), void *ud,
                   NodeMap *groups) {
  Plan pl = {g, uses, type_of, ud, groups, jit_fuse_width()};
  /* from the last node back, so that a chain's root is found before
   * the operations it absorbs */
  for (int i = g->nnodes - 1; i >= 0; i--) {
    IrNode *n = g->nodes[i];
    if (ir_map_get(groups, n)) continue;
    IrNode *a = NULL, *method;
    int first = -1, last = -1;
    IrType *result = NULL;
    FuseReduce red = reduction_of(&pl, n, &a, &method, &first, &last, &result);
    if (red && a->graph == g && a != g->ret && ir_map_int(uses, a, -1) == 1 && candidate(&pl, a)) {
      /* the chain feeding a reduction: one loop, cut into rows and
       * columns so that a block of the elements reduced together is
       * whole rows or a run inside one row (jit/rt.c); a float sum or
       * mean over the leading axes in rows at the last of them, for
       * eager mode's column sums */
      IrType *at = type_of(ud, a);
      int nd = at->n;
      int64_t len = size_of(at), after = 1;
      if (first >= 0) {
        len = 1;
        for (int d = first; d <= last; d++) len *= at->dims[d];
        for (int d = last + 1; d < nd; d++) after *= at->dims[d];
      }
      bool columns = first == 0 && (red == FR_SUM || red == FR_MEAN) && is_float_dt(at->dtype);
      FuseGroup *fg = make_group(&pl, a, columns ? nd - 1 - last : -1);
      /* the loop's rows: single runs of `after`, or whole blocks of
       * len x after (not a part of the axes reduced over, which a
       * tuple of them could leave) */
      if (fg && (columns || (after > 1 ? fg->cols == after || fg->cols % (len * after) == 0 : fg->cols % len == 0))) {
        fg->root = n;
        fg->reduce = red;
        fg->red_axis = first;
        fg->red_last = last;
        fg->red_len = len;
        fg->red_after = after;
        fg->columns = columns;
        fg->result = result;
        ir_map_put(groups, n, fg);
        if (method) ir_map_put(groups, method, fg);
        for (int j = 0; j < fg->nnodes; j++) ir_map_put(groups, fg->nodes[j], fg);
        continue;
      }
    }
    if (!candidate(&pl, n)) continue;
    FuseGroup *fg = make_group(&pl, n, -1);
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
      if (fg->ins[k].kind != FI_FULL || fg->ins[k].dtype != fg->type->dtype || !src || src->root != a ||
          src->reduce || a == g->ret)
        continue;
      int inside = 0;
      for (int j = 0; j < fg->nnodes; j++) {
        int arity;
        op_of(fg->nodes[j], &arity);
        for (int q = 0; q < arity; q++) inside += operand(fg->nodes[j], q) == a;
      }
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
  if (fg->reduce) {
    static const char *const red[] = {"", "sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all"};
    sb_printf(&sb, ", then %s@%d:%d", red[fg->reduce], fg->root->span.line, fg->root->span.col);
    if (fg->red_axis >= 0 && fg->red_last > fg->red_axis) {
      sb_printf(&sb, " over axes (");
      for (int d = fg->red_axis; d <= fg->red_last; d++) sb_printf(&sb, "%s%d", d > fg->red_axis ? ", " : "", d);
      sb_printf(&sb, ")");
    } else if (fg->red_axis == fg->type->n - 1) {
      sb_printf(&sb, " over the last axis");
    } else if (fg->red_axis >= 0) {
      sb_printf(&sb, " over axis %d", fg->red_axis);
    }
  }
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
  LLVMTypeRef i1, i8, i32, i64, f32, f64, ptr;
  int w;                                       /* lanes */
  LLVMValueRef *data;                          /* per input: its data (tensors) */
  LLVMValueRef *splat;                         /* per input: its vector, where it is one */
  LLVMValueRef *num;                           /* per input: a number's scalar (double or i64) */
} K;

/* A value in the loop: a vector of k->w lanes of dtype dt (bools as i1),
 * or a number's scalar (dt FUSE_FLOAT: a double, FUSE_INT: an i64). */
typedef struct KV {
  LLVMValueRef v;
  int dt;
} KV;

static LLVMTypeRef scalar_type(K *k, int dt) {
  switch (dt) {
  case DT_BOOL: return k->i1;
  case DT_I32: return k->i32;
  case DT_I64: return k->i64;
  case DT_F32: return k->f32;
  default: return k->f64;
  }
}

/* in memory: a bool is a byte */
static LLVMTypeRef mem_type(K *k, int dt) { return dt == DT_BOOL ? k->i8 : scalar_type(k, dt); }

static LLVMTypeRef vec_of(LLVMTypeRef t, int w) { return LLVMVectorType(t, (unsigned)w); }

static const char *mangle(int w, int dt, bool mem) {
  static const char *const names[] = {"i1", "i32", "i64", "f32", "f64"};
  return lang_str_fmt("v%d%s", w, dt == DT_BOOL && mem ? "i8" : names[dt])->data;
}

static LLVMValueRef kcall(K *k, const char *name, LLVMTypeRef ret, int n, LLVMTypeRef *pt, LLVMValueRef *args) {
  LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)n, false);
  LLVMValueRef f = LLVMGetNamedFunction(k->M, name);
  if (!f) f = LLVMAddFunction(k->M, name, fty);
  return LLVMBuildCall2(k->B, fty, f, args, (unsigned)n, "");
}

/* x in every lane of a vector of w lanes */
static LLVMValueRef splat_w(K *k, int w, LLVMValueRef x) {
  LLVMTypeRef vt = vec_of(LLVMTypeOf(x), w);
  LLVMValueRef v = LLVMBuildInsertElement(k->B, LLVMGetPoison(vt), x, LLVMConstInt(k->i32, 0, false), "");
  return LLVMBuildShuffleVector(k->B, v, LLVMGetPoison(vt), LLVMConstNull(vec_of(k->i32, w)), "");
}

static LLVMValueRef splat(K *k, LLVMValueRef x) { return splat_w(k, k->w, x); }

/* memory to a loop value: bytes to bools */
static LLVMValueRef from_mem(K *k, LLVMValueRef v, int dt) {
  if (dt != DT_BOOL) return v;
  return LLVMBuildICmp(k->B, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

/* A vector of input i at element offset off (mask: the lanes, or NULL
 * for all). */
static LLVMValueRef load_vec(K *k, int i, LLVMValueRef off, LLVMValueRef mask) {
  int dt = k->fg->ins[i].dtype;
  LLVMTypeRef et = mem_type(k, dt), vt = vec_of(et, k->w);
  LLVMValueRef p = LLVMBuildGEP2(k->B, et, k->data[i], &off, 1, "");
  unsigned al = (unsigned)elem_size(dt);
  LLVMValueRef v;
  if (!mask) {
    v = LLVMBuildLoad2(k->B, vt, p, "");
    LLVMSetAlignment(v, al);
  } else {
    v = kcall(k, lang_str_fmt("llvm.masked.load.%s.p0", mangle(k->w, dt, true))->data, vt, 4,
              (LLVMTypeRef[]){k->ptr, k->i32, vec_of(k->i1, k->w), vt},
              (LLVMValueRef[]){p, LLVMConstInt(k->i32, al, false), mask, LLVMConstNull(vt)});
  }
  return from_mem(k, v, dt);
}

/* A value brought to dtype to, as eager mode's casts (lang/tensor.c's
 * lang_cast_row) and scalars (lang_tensor_store) bring it: a vector of
 * k->w lanes. */
static LLVMValueRef conv(K *k, KV x, int to) {
  LLVMBuilderRef B = k->B;
  LLVMTypeRef st = scalar_type(k, to);
  if (x.dt == FUSE_FLOAT)   /* only ever to a float (fits) */
    return splat(k, to == DT_F32 ? LLVMBuildFPTrunc(B, x.v, st, "") : x.v);
  if (x.dt == FUSE_INT || x.dt == FUSE_SMALL_INT)   /* to a float, to i64, or (a small one) to i32 */
    return splat(k, to == DT_I64 ? x.v : to == DT_I32 ? LLVMBuildTrunc(B, x.v, st, "") : LLVMBuildSIToFP(B, x.v, st, ""));
  if (x.dt == to) return x.v;
  LLVMTypeRef vt = vec_of(st, k->w);
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x.v));
  if (to == DT_BOOL)   /* x != 0: NaN is true */
    return is_float_dt(x.dt) ? LLVMBuildFCmp(B, LLVMRealUNE, x.v, zero, "") : LLVMBuildICmp(B, LLVMIntNE, x.v, zero, "");
  if (x.dt == DT_BOOL) return is_float_dt(to) ? LLVMBuildUIToFP(B, x.v, vt, "") : LLVMBuildZExt(B, x.v, vt, "");
  if (is_float_dt(x.dt) && is_float_dt(to))
    return to == DT_F64 ? LLVMBuildFPExt(B, x.v, vt, "") : LLVMBuildFPTrunc(B, x.v, vt, "");
  if (!is_float_dt(x.dt) && !is_float_dt(to))   /* i32 <-> i64: wraps */
    return to == DT_I64 ? LLVMBuildSExt(B, x.v, vt, "") : LLVMBuildTrunc(B, x.v, vt, "");
  if (is_float_dt(to)) return LLVMBuildSIToFP(B, x.v, vt, "");
  /* float to int: saturated, NaN to 0 (lang_f2i32, lang_f2i64) */
  return kcall(k, lang_str_fmt("llvm.fptosi.sat.%s.%s", mangle(k->w, to, false), mangle(k->w, x.dt, false))->data, vt,
               1, (LLVMTypeRef[]){LLVMTypeOf(x.v)}, (LLVMValueRef[]){x.v});
}

/* Call a vector function of fw lanes (a mist_vec_* or an intrinsic) on
 * vectors of k->w lanes, lane for lane: the operands cut into pieces
 * of fw lanes, or padded to fw (the results of the padding dropped). */
static LLVMValueRef vec_apply(K *k, const char *name, int fw, int dt, int nargs, LLVMValueRef *x) {
  LLVMBuilderRef B = k->B;
  LLVMTypeRef ft = vec_of(scalar_type(k, dt), fw);
  LLVMTypeRef pt[2] = {ft, ft};
  if (fw == k->w) return kcall(k, name, ft, nargs, pt, x);
  LLVMValueRef idx[64];
  if (fw > k->w) {   /* pad: lanes k->w.. are copies of lane 0 (never poison into a call) */
    for (int i = 0; i < fw; i++) idx[i] = LLVMConstInt(k->i32, (unsigned)(i < k->w ? i : 0), false);
    LLVMValueRef a[2];
    for (int j = 0; j < nargs; j++) a[j] = LLVMBuildShuffleVector(B, x[j], LLVMGetPoison(LLVMTypeOf(x[j])), LLVMConstVector(idx, (unsigned)fw), "");
    LLVMValueRef r = kcall(k, name, ft, nargs, pt, a);
    for (int i = 0; i < k->w; i++) idx[i] = LLVMConstInt(k->i32, (unsigned)i, false);
    return LLVMBuildShuffleVector(B, r, LLVMGetPoison(ft), LLVMConstVector(idx, (unsigned)k->w), "");
  }
  /* split into k->w / fw pieces, then join them */
  int np = k->w / fw;
  LLVMValueRef part[8];
  for (int p = 0; p < np; p++) {
    LLVMValueRef a[2];
    for (int i = 0; i < fw; i++) idx[i] = LLVMConstInt(k->i32, (unsigned)(p * fw + i), false);
    for (int j = 0; j < nargs; j++) a[j] = LLVMBuildShuffleVector(B, x[j], LLVMGetPoison(LLVMTypeOf(x[j])), LLVMConstVector(idx, (unsigned)fw), "");
    part[p] = kcall(k, name, ft, nargs, pt, a);
  }
  for (int width = fw; np > 1; width *= 2, np /= 2) {
    for (int i = 0; i < 2 * width; i++) idx[i] = LLVMConstInt(k->i32, (unsigned)i, false);
    for (int p = 0; p < np / 2; p++) part[p] = LLVMBuildShuffleVector(B, part[2 * p], part[2 * p + 1], LLVMConstVector(idx, (unsigned)(2 * width)), "");
  }
  return part[0];
}

/* the lanes of the vector functions for dtype dt */
static int fn_lanes(K *k, int dt) { return k->fg->bits / (dt == DT_F64 ? 64 : 32); }

/* NaN wins, then the larger (smaller) one, the first of equals: the
 * interpreter's maximum and minimum (lang/tensor_ops.c); integers by
 * value, bools as or (and). */
static LLVMValueRef extremum(K *k, LLVMValueRef x, LLVMValueRef y, int dt, bool max) {
  LLVMBuilderRef B = k->B;
  if (dt == DT_BOOL) return max ? LLVMBuildOr(B, x, y, "") : LLVMBuildAnd(B, x, y, "");
  if (!is_float_dt(dt))
    return LLVMBuildSelect(B, LLVMBuildICmp(B, max ? LLVMIntSGT : LLVMIntSLT, x, y, ""), x, y, "");
  LLVMValueRef xnan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, ""), ynan = LLVMBuildFCmp(B, LLVMRealUNO, y, y, "");
  LLVMValueRef pick = LLVMBuildFCmp(B, max ? LLVMRealOGE : LLVMRealOLE, x, y, "");
  LLVMValueRef r = LLVMBuildSelect(B, pick, x, y, "");
  r = LLVMBuildSelect(B, ynan, y, r, "");
  return LLVMBuildSelect(B, xnan, x, r, "");
}

/* x < y...: C's comparisons in dtype dt (NaN unequal to everything) */
static LLVMValueRef compare(K *k, FuseOp op, LLVMValueRef x, LLVMValueRef y, int dt) {
  static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
  static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  int i = op - FO_EQ;
  if (is_float_dt(dt)) return LLVMBuildFCmp(k->B, fp[i], x, y, "");
  return LLVMBuildICmp(k->B, dt == DT_BOOL ? up[i] : sp[i], x, y, "");
}

/* One node on its operands: the result's vector, of dtype *rdt. */
static LLVMValueRef compute_op(K *k, IrNode *n, FuseOp op, const KV *a, int *rdt) {
  LLVMBuilderRef B = k->B;
  int od[3] = {a[0].dt, a[1].v ? a[1].dt : NO_OPERAND, a[2].v ? a[2].dt : NO_OPERAND};
  int c, c2;
  if (op == FO_ASTYPE) c = c2 = *rdt = astype_dtype(n);
  else op_dtypes(op, od, &c, &c2, rdt);
  if (op == FO_WHERE)
    return LLVMBuildSelect(B, conv(k, a[0], DT_BOOL), conv(k, a[1], c), conv(k, a[2], c), "");
  if (op == FO_CLIP) {
    LLVMValueRef lo = extremum(k, conv(k, a[0], c), conv(k, a[1], c), c, true);
    return extremum(k, conv(k, (KV){lo, c}, c2), conv(k, a[2], c2), c2, false);
  }
  if (op == FO_ASTYPE) return conv(k, a[0], c);
  LLVMValueRef x = conv(k, a[0], c), y = a[1].v ? conv(k, a[1], c) : NULL;
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x));
  bool fl = is_float_dt(c);
  switch (op) {
  case FO_ADD: return fl ? LLVMBuildFAdd(B, x, y, "") : LLVMBuildAdd(B, x, y, "");
  case FO_SUB: return fl ? LLVMBuildFSub(B, x, y, "") : LLVMBuildSub(B, x, y, "");
  case FO_MUL: return fl ? LLVMBuildFMul(B, x, y, "") : LLVMBuildMul(B, x, y, "");
  case FO_DIV: return LLVMBuildFDiv(B, x, y, "");
  case FO_NEG: return fl ? LLVMBuildFNeg(B, x, "") : LLVMBuildSub(B, zero, x, "");
  case FO_MAX: return extremum(k, x, y, c, true);
  case FO_MIN: return extremum(k, x, y, c, false);
  case FO_EQ: case FO_NE: case FO_LT: case FO_LE: case FO_GT: case FO_GE: return compare(k, op, x, y, c);
  case FO_SQRT: return vec_apply(k, lang_str_fmt("llvm.sqrt.%s", mangle(k->w, c, false))->data, k->w, c, 1, &x);
  case FO_FLOOR: case FO_CEIL:
    /* exact, as floorf/ceilf (NaN and -0.0 kept) */
    if (!fl) return x;
    return vec_apply(k, lang_str_fmt("llvm.%s.%s", op == FO_FLOOR ? "floor" : "ceil", mangle(k->w, c, false))->data,
                     k->w, c, 1, &x);
  case FO_ABS:
    if (fl) return vec_apply(k, lang_str_fmt("llvm.fabs.%s", mangle(k->w, c, false))->data, k->w, c, 1, &x);
    return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, x, zero, ""), LLVMBuildSub(B, zero, x, ""), x, "");
  case FO_RELU:
    /* floats: x < 0 ? 0 : x, as devices/cpu/vmath.c (NaN stays); ints: x > 0 ? x : 0 */
    if (fl) return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, x, zero, ""), zero, x, "");
    return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, x, zero, ""), x, zero, "");
  case FO_POW: return vec_apply(k, vec_name(FO_POW, c == DT_F64, k->fg->bits), fn_lanes(k, c), c, 2, (LLVMValueRef[]){x, y});
  default: return vec_apply(k, vec_name(op, c == DT_F64, k->fg->bits), fn_lanes(k, c), c, 1, &x);
  }
}

/* The group's nodes on one vector of elements: rowoff the row's first
 * element, c the column.  *dt: the result's dtype. */
static LLVMValueRef compute(K *k, LLVMValueRef rowoff, LLVMValueRef c, LLVMValueRef mask, int *dt) {
  const FuseGroup *fg = k->fg;
  LLVMBuilderRef B = k->B;
  KV in[FUSE_MAX_INPUTS], val[FUSE_MAX_NODES];
  for (int i = 0; i < fg->nins; i++) {
    in[i].dt = fg->ins[i].dtype;
    switch (fg->ins[i].kind) {
    case FI_FULL: in[i].v = load_vec(k, i, LLVMBuildAdd(B, rowoff, c, ""), mask); break;
    case FI_INNER: in[i].v = load_vec(k, i, c, mask); break;
    case FI_FLOAT: case FI_INT: in[i].v = k->num[i]; break;
    default: in[i].v = k->splat[i]; break;
    }
  }
  for (int j = 0; j < fg->nnodes; j++) {
    IrNode *n = fg->nodes[j];
    int arity;
    FuseOp op = op_of(n, &arity);
    KV a[3] = {{NULL, NO_OPERAND}, {NULL, NO_OPERAND}, {NULL, NO_OPERAND}};
    for (int q = 0; q < arity; q++) {
      IrNode *x = operand(n, q);
      for (int i = 0; i < fg->nins && !a[q].v; i++)
        if (fg->ins[i].node == x) a[q] = in[i];
      for (int i = 0; i < j && !a[q].v; i++)
        if (fg->nodes[i] == x) a[q] = val[i];
    }
    val[j].v = compute_op(k, n, op, a, &val[j].dt);
  }
  *dt = val[fg->nnodes - 1].dt;
  return val[fg->nnodes - 1].v;
}

LLVMValueRef jit_fuse_kernel(LLVMModuleRef M, const FuseGroup *fg, const char *name) {
  K kv = {0}, *k = &kv;
  k->C = LLVMGetModuleContext(M);
  k->M = M;
  k->fg = fg;
  k->w = fg->lanes;
  k->i1 = LLVMInt1TypeInContext(k->C);
  k->i8 = LLVMInt8TypeInContext(k->C);
  k->i32 = LLVMInt32TypeInContext(k->C);
  k->i64 = LLVMInt64TypeInContext(k->C);
  k->f32 = LLVMFloatTypeInContext(k->C);
  k->f64 = LLVMDoubleTypeInContext(k->C);
  k->ptr = LLVMPointerTypeInContext(k->C, 0);
  int odt = fg->type->dtype;
  LLVMTypeRef oet = mem_type(k, odt), ovt = vec_of(oet, k->w), mt = vec_of(k->i1, k->w);
  unsigned oal = (unsigned)elem_size(odt);
  LLVMTypeRef i64 = k->i64;
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(k->C),
                                     (LLVMTypeRef[]){k->ptr, k->ptr, k->ptr, i64, i64, i64, i64}, 7, false);
  LLVMValueRef fn = LLVMAddFunction(M, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  /* the widest vectors, passed to the vector functions in zmm (ymm) registers */
  const char *width = fg->bits == 512 ? "512" : "256";
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(k->C, "prefer-vector-width", 19, width, 3));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(k->C, "min-legal-vector-width", 22, width, 3));
  /* The vector registers do not survive the calls to the vector
   * functions, so a vector live across one is spilled and reloaded in
   * every turn of the loop.  The ABI aligns the stack to 16 bytes only:
   * spilled there, a 64-byte vector straddles two cache lines unless
   * the caller's stack happens to sit right, and a load cannot take a
   * straddling store's bytes from the store buffer, so it waits for the
   * store to reach the cache.  That made one of two threads run the
   * loop 1.7x slower than the other, depending on its stack depth.  So
   * the loop aligns its own frame to the vector's size. */
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateStringAttribute(k->C, "stackrealign", 12, "", 0));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(k->C, LLVMGetEnumAttributeKindForName("alignstack", 10),
                                                  (uint64_t)fg->bits / 8));
  LLVMBuilderRef B = k->B = LLVMCreateBuilderInContext(k->C);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(k->C, fn, "entry");
  LLVMPositionBuilderAtEnd(B, entry);
  LLVMValueRef tens = LLVMGetParam(fn, 0), nums = LLVMGetParam(fn, 1), out = LLVMGetParam(fn, 2);
  LLVMValueRef r0 = LLVMGetParam(fn, 3), r1 = LLVMGetParam(fn, 4), c0 = LLVMGetParam(fn, 5), c1 = LLVMGetParam(fn, 6);
  LLVMValueRef data[FUSE_MAX_INPUTS], splats[FUSE_MAX_INPUTS], numv[FUSE_MAX_INPUTS];
  k->data = data;
  k->splat = splats;
  k->num = numv;
  for (int i = 0; i < fg->nins; i++) {
    const FuseIn *in = &fg->ins[i];
    data[i] = splats[i] = numv[i] = NULL;
    if (in->kind == FI_FLOAT || in->kind == FI_INT) {
      LLVMValueRef p = LLVMBuildGEP2(B, i64, nums, (LLVMValueRef[]){LLVMConstInt(i64, (unsigned)in->slot, false)}, 1, "");
      LLVMValueRef bits = LLVMBuildLoad2(B, i64, p, "");
      /* a number is brought to the dtype of what it meets at each use (conv) */
      numv[i] = in->kind == FI_INT ? bits : LLVMBuildBitCast(B, bits, k->f64, "");
      continue;
    }
    LLVMValueRef p = LLVMBuildGEP2(B, k->ptr, tens, (LLVMValueRef[]){LLVMConstInt(i64, (unsigned)in->slot, false)}, 1, "");
    data[i] = LLVMBuildLoad2(B, k->ptr, p, "");
    if (in->kind == FI_ONE) splats[i] = splat(k, from_mem(k, LLVMBuildLoad2(B, mem_type(k, in->dtype), data[i], ""), in->dtype));
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
      LLVMTypeRef et = mem_type(k, fg->ins[i].dtype);
      LLVMValueRef p = LLVMBuildGEP2(B, et, data[i], &r, 1, "");
      splats[i] = splat(k, from_mem(k, LLVMBuildLoad2(B, et, p, ""), fg->ins[i].dtype));
    }
  LLVMValueRef orow = LLVMBuildGEP2(B, oet, out, &rowoff, 1, "");
  LLVMBuildBr(B, colhead);
  LLVMPositionBuilderAtEnd(B, colhead);
  LLVMValueRef c = LLVMBuildPhi(B, i64, "c");
  LLVMValueRef wv = LLVMConstInt(i64, (unsigned)k->w, false);
  LLVMValueRef cw = LLVMBuildAdd(B, c, wv, "");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLE, cw, c1, ""), colbody, tail);
  LLVMPositionBuilderAtEnd(B, colbody);
  int vdt;
  LLVMValueRef v = compute(k, rowoff, c, NULL, &vdt);
  if (odt == DT_BOOL) v = LLVMBuildZExt(B, v, ovt, "");
  LLVMValueRef st = LLVMBuildStore(B, v, LLVMBuildGEP2(B, oet, orow, &c, 1, ""));
  LLVMSetAlignment(st, oal);
  LLVMBasicBlockRef colbody_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, colhead);
  LLVMPositionBuilderAtEnd(B, tail);
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, c, c1, ""), tailbody, rowend);
  LLVMPositionBuilderAtEnd(B, tailbody);
  /* the last partial vector: the lanes below c1 */
  LLVMValueRef iota[16];
  for (int i = 0; i < k->w; i++) iota[i] = LLVMConstInt(i64, (unsigned)i, false);
  LLVMValueRef lanes = LLVMBuildAdd(B, splat_w(k, k->w, c), LLVMConstVector(iota, (unsigned)k->w), "");
  LLVMValueRef mask = LLVMBuildICmp(B, LLVMIntSLT, lanes, splat_w(k, k->w, c1), "");
  LLVMValueRef tv = compute(k, rowoff, c, mask, &vdt);
  if (odt == DT_BOOL) tv = LLVMBuildZExt(B, tv, ovt, "");
  kcall(k, lang_str_fmt("llvm.masked.store.%s.p0", mangle(k->w, odt, true))->data, LLVMVoidTypeInContext(k->C), 4,
        (LLVMTypeRef[]){ovt, k->ptr, k->i32, mt},
        (LLVMValueRef[]){tv, LLVMBuildGEP2(B, oet, orow, &c, 1, ""), LLVMConstInt(k->i32, oal, false), mask});
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
