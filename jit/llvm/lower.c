/* lower.c: a specialised, typed graph to an LLVM module (docs/jit.md,
 * "How a function compiles").
 *
 * The module's functions are frames, exactly as the interpreter makes
 * them (ir/eval.c), so that recursion depth, tracebacks and errors are
 * eager mode's: a frame runs one graph, and in it, as blocks of the same
 * function, the branches of a `switch` called right away and the graphs
 * it tail-calls that are not user functions (a loop's header and body,
 * the code after a loop or an if): a loop is a real loop, with phis for
 * its variables.  Every other call of a graph is a call of that graph's
 * frame, counting a level of recursion as the interpreter does (checked
 * first, or for a tail call of a user function, counted first), and a
 * failure in a frame returns through each caller, which adds the
 * traceback line the interpreter's frame would have added
 * (mist_rt_fail, rt.c).
 *
 * Values are unboxed by their inferred type (a Rep): None, bool, int,
 * float in registers; a tuple as its items; a closure made here as the
 * values it captured, so that calling it is a direct call; a function
 * that captured nothing as nothing at all.  Other values (closures that
 * captured values, ranges, tensors) stay boxed as the interpreter's
 * Value, two words, and every operation on them is the interpreter's
 * primitive or builtin called through the runtime, except chains of
 * elementwise operations on tensors, which are loops of their own
 * (fuse.c, through emit_fused).  A primitive with a lowering (its
 * ops.def row's LOWER column) does the common case inline and calls the
 * primitive itself, on boxed arguments, for everything else, so every
 * error is raised by the interpreter's own code with its message.
 * Anything this file does not know how to compile (a value of a type
 * with no Rep, a call it cannot make) stops the lowering with the reason
 * and its place: the function then runs in the interpreter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>

#include "ir/eval.h"
#include "ir/map.h"
#include "jit/llvm/cg.h"
#include "jit/llvm/fuse.h"
#include "jit/llvm/fwd.h"
#include "jit/matmul.h"
#include "jit/tape.h"
#include "lang/gc.h"
#include "lang/ops.h"

/* ---- representations ---- */

typedef enum {
  R_NEVER,     /* no value (the node raises, or is not reached) */
  R_NONE,
  R_UNBOUND,   /* a variable not assigned yet */
  R_BOOL,      /* i1 */
  R_INT,       /* i64 */
  R_FLOAT,     /* double */
  R_TUPLE,     /* its items' leaves */
  R_CLOSURE,   /* a closure of graph: the leaves of its free variables' values */
  R_BUILTIN,   /* one builtin: no leaves */
  R_MAYBE,     /* T | None or T | Unbound: i1 (it is a T), then T's leaves */
  R_VALUE,     /* boxed: the Value's two words, tag and payload (i64 each) */
  R_TAPE,      /* the backpropagator of a loop's turn kept as a tape (below):
                  its buffer, its count of turns and the first turn's
                  continuation, boxed (i64 each) */
  R_UNION,     /* a closure of one of a few known graphs (items: their
                  R_CLOSUREs): i64 which, then each one's leaves (below) */
  R_HOLE,      /* in a tape's turn: where the turn keeps the tape (no leaves) */
} RepKind;

typedef struct Rep {
  RepKind kind;
  int nleaves;
  int n;               /* R_TUPLE: items; R_CLOSURE: free variables; R_MAYBE: 1 */
  struct Rep **items;
  IrGraph *graph;      /* R_CLOSURE */
  ObjBuiltin *builtin; /* R_BUILTIN */
  bool unbound;        /* R_MAYBE: the other value is Unbound (else None);
                          R_TAPE: its entries hold pointers (its buffer is scanned) */
  struct Rep *turn;    /* R_TAPE: the Rep of one turn's backpropagator, R_HOLE where
                          it captured the continuation: its leaves are an entry */
  struct Rep *cont;    /* R_TAPE: the Rep of the first turn's continuation where it
                          is kept unboxed (a loop in another loop's turn: a closure
                          over that loop's tape, R_HOLE for it in that loop's
                          turn); NULL: boxed */
} Rep;

static Rep r_never = {R_NEVER, 0}, r_none = {R_NONE, 0}, r_unbound = {R_UNBOUND, 0}, r_bool = {R_BOOL, 1},
           r_int = {R_INT, 1}, r_float = {R_FLOAT, 1}, r_value = {R_VALUE, 2}, r_hole = {R_HOLE, 0};

static Rep *rep_new(RepKind k, int n, Rep **items) {
  Rep *r = lang_alloc(sizeof *r);
  r->kind = k;
  r->n = n;
  if (n) {
    r->items = lang_alloc((size_t)n * sizeof *items);
    memcpy(r->items, items, (size_t)n * sizeof *items);
  }
  for (int i = 0; i < n; i++) r->nleaves += items[i]->nleaves;
  if (k == R_MAYBE || k == R_UNION) r->nleaves++;
  return r;
}

static bool rep_eq(const Rep *a, const Rep *b) {
  if (a == b) return true;
  if (a->kind != b->kind || a->n != b->n || a->graph != b->graph || a->builtin != b->builtin ||
      a->unbound != b->unbound || (a->turn != b->turn && (!a->turn || !b->turn || !rep_eq(a->turn, b->turn))) ||
      (a->cont != b->cont && (!a->cont || !b->cont || !rep_eq(a->cont, b->cont))))
    return false;
  for (int i = 0; i < a->n; i++)
    if (!rep_eq(a->items[i], b->items[i])) return false;
  return true;
}

/* A value in the lowering: its Rep and an LLVM value per leaf. */
typedef struct JV {
  Rep *rep;
  LLVMValueRef *v;
} JV;

static JV *jv_new(Rep *r) {
  JV *x = lang_alloc(sizeof *x);
  x->rep = r;
  x->v = lang_alloc((size_t)(r->nleaves ? r->nleaves : 1) * sizeof *x->v);
  return x;
}

/* ---- the lowering's state ---- */

typedef struct Frame {
  IrGraph *g;          /* the graph it runs: a specialised copy */
  int twin;            /* 0; i > 0 for the i-th copy in its recursion's chain of
                          twins (below); CAREFUL for its copy near the depth limit */
  struct Frame *root;  /* a twin's frame: the chain's first */
  int selfcalls;       /* a frame's calls of itself (its twin's calls) */
  int chain;           /* the frames in its chain, the frame first (once emitted) */
  int np, nfv;
  Rep **prep;          /* its parameters' */
  IrNode **fv;         /* its free variables (ir_free_vars), */
  Rep **fvrep;         /* as the callers pass them */
  Rep *ret;
  LLVMValueRef fn;
  LLVMTypeRef fnty, retty;
  struct Frame *next;
} Frame;

typedef struct Lw {
  MistVM *vm;
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  const char *prefix;
  LLVMTypeRef i1, i8, i32, i64, f64, ptr, voidt, valuet;
  JitSite *sites;
  int nsites, capsites;
  Value *consts;
  int nconsts, capconsts;
  JitGuard *guards;
  int nguards, capguards;
  Frame *frames;
  Frame **queue;       /* frames made whose bodies are still to be emitted */
  int nqueue, capqueue;
  NodeMap typed;       /* graphs of the specialisations: graph -> its IrTyped */
  NodeMap callee_specs; /* a program's graph -> the specialisations call_value made */
  IrTyped **results;   /* those specialisations */
  int nresults;
  NodeMap built;       /* builtin object -> 1 + its index in consts */
  const char *why;
  int nfn;
  bool fuse;           /* fused loops are made (jit_fuse_enabled) */
  int tape_nest;       /* tape_fv_reps's depth */
  int hole_nest;       /* turn_rep's search of a hole through loops' tapes: its depth */
  StrBuf fuselog;      /* what they compute, for MIST_JIT_LOG */
  struct TapeMemo *tapes; /* tape_over's answers (tape_over) */
  int ntapes, captapes;
  bool flat;           /* loops in other loops' turns are on tapes (jit_lower) */
  bool unfit;          /* such a tape met a turn it could not keep (to_tape) */
} Lw;

/* The emission of one frame. */
typedef struct Em {
  Lw *lw;
  Frame *f;
  LLVMValueRef fn, cx, vm;
  LLVMValueRef depth;  /* the frame's depth of recursion (vm->depth is
                          written only before calls into the runtime) */
  LLVMBasicBlockRef entry;
  NodeMap vals;        /* node -> JV */
  NodeMap blocks;      /* contified graph -> Block */
  NodeMap uses;        /* node -> uses, as the interpreter counts them */
  NodeMap shape_uses;  /* node -> those of its uses that read only its shape */
  NodeMap scaled;      /* a sum x +- s * y -> its Scaled, where the product tried both */
  NodeMap fused;       /* node -> the FuseGroup computing it (fuse.c) */
  bool dead;           /* the current block ended: what follows is not reached */
  /* the depth the last guard passed at, while its check still holds: a
   * later call at the same depth on the same straight-line path needs
   * no other (the depth and the stack are the same); NULL once control
   * flow branches or joins */
  LLVMValueRef guarded;
  LLVMValueRef scratch;  /* the Value slots (value_slots), */
  int cursor, top;       /* the first free, and the most used */
  struct TurnBlock *turns;  /* the backward steps run as blocks here (call_turn) */
  struct Block *start;      /* the frame's own block, where its tail calls of itself go */
} Em;

typedef struct Block {
  LLVMBasicBlockRef bb;
  Rep **prep;
  int np;
  LLVMValueRef *phis;  /* one per leaf of the parameters */
  LLVMValueRef *fvphis;  /* a frame's own block: one per leaf of its free variables */
} Block;

/* The path of the file node at is in, or NULL. */
static const char *file_of(Lw *lw, IrNode *at) {
  if (!at || at->span.file < 0 || at->span.file >= lw->vm->nfiles) return NULL;
  return lw->vm->files[at->span.file].path->data;
}

static const char *where(Lw *lw, IrNode *at) {
  const char *file = file_of(lw, at);
  return file ? lang_str_fmt(" at %s:%d:%d", file, at->span.line, at->span.col)->data : "";
}

/* Stop the lowering: the function runs in the interpreter, and why. */
__attribute__((format(printf, 3, 4))) static bool nope(Lw *lw, IrNode *at, const char *fmt, ...) {
  if (lw->why) return false;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  lw->why = lang_str_fmt("%s%s", buf, where(lw, at))->data;
  return false;
}

/* A node's type: its graph's specialisation's (a constant use, which has
 * no graph, in whichever has it). */
static IrType *type_of(Lw *lw, IrNode *n) {
  const IrTyped *t = n->graph ? ir_map_get(&lw->typed, n->graph) : NULL;
  if (t) return ir_infer_type(t, n);
  for (int i = 0; i < lw->nresults; i++) {
    IrType *ty = ir_infer_type(lw->results[i], n);
    if (ty) return ty;
  }
  return NULL;
}

static int add_typed_site(Lw *lw, IrNode *node, IrGraph *frame, IrType *type) {
  if (lw->nsites == lw->capsites) {
    lw->capsites = lw->capsites ? 2 * lw->capsites : 32;
    lw->sites = lang_realloc(lw->sites, (size_t)lw->capsites * sizeof *lw->sites);
  }
  lw->sites[lw->nsites] = (JitSite){node, frame, type};
  return lw->nsites++;
}

static int add_site(Lw *lw, IrNode *node, IrGraph *frame) { return add_typed_site(lw, node, frame, NULL); }

static int add_const(Lw *lw, Value v) {
  for (int i = 0; i < lw->nconsts; i++)
    if (lw->consts[i].tag == v.tag && lw->consts[i].i == v.i) return i;
  if (lw->nconsts == lw->capconsts) {
    lw->capconsts = lw->capconsts ? 2 * lw->capconsts : 16;
    lw->consts = lang_realloc(lw->consts, (size_t)lw->capconsts * sizeof *lw->consts);
  }
  lw->consts[lw->nconsts] = v;
  return lw->nconsts++;
}

static void add_guard(Lw *lw, ObjModule *m, ObjStr *name, Value v) {
  for (int i = 0; i < lw->nguards; i++)
    if (lw->guards[i].module == m && lang_str_eq(lw->guards[i].name, name)) return;
  if (lw->nguards == lw->capguards) {
    lw->capguards = lw->capguards ? 2 * lw->capguards : 8;
    lw->guards = lang_realloc(lw->guards, (size_t)lw->capguards * sizeof *lw->guards);
  }
  lw->guards[lw->nguards++] = (JitGuard){m, name, v};
}

static void note_result(Lw *lw, IrTyped *t) {
  for (int i = 0; i < lw->nresults; i++)
    if (lw->results[i] == t) return;
  lw->results = lang_realloc(lw->results, (size_t)(lw->nresults + 1) * sizeof *lw->results);
  lw->results[lw->nresults++] = t;
  for (int i = 0; i < t->unit->ngraphs; i++) ir_map_put(&lw->typed, t->unit->graphs[i], t);
}

/* ---- reps of types ---- */

/* What may stay boxed: values the interpreter's primitives and builtins
 * handle, reached through the runtime (strs, lists, dicts, modules,
 * closures, tensors, values inference types `any`).  Every type has a
 * boxed form today; the check stays for the types a later one may
 * not. */
static bool boxed_ok(const IrType *t) {
  switch (t->kind) {
  case IT_TUPLE: case IT_LIST: case IT_DICT: case IT_ENV: case IT_FNSET: {
    int m = t->kind == IT_LIST && t->n < 0 ? 1 : t->n;
    for (int i = 0; i < m; i++)
      if (!boxed_ok(t->items[i])) return false;
    return true;
  }
  case IT_BUILTIN: return t->n == 0 || boxed_ok(t->items[0]);
  default: return true;
  }
}

static Rep *rep_of(Lw *lw, IrType *t, IrNode *at);
static Rep *tape_rep(Lw *lw, IrType *t);
static Rep *tape_closure_rep(Lw *lw, IrType *t);
static Rep *union_rep(Lw *lw, IrType *t);

static Rep *rep_maybe(Lw *lw, IrType *t, IrNode *at) {
  IrType *inner = t->or_unbound ? ir_type_strip_unbound(t) : ir_type_strip_none(t);
  if (inner->or_none || inner->or_unbound) {
    nope(lw, at, "a value of type %s", ir_type_str(t));
    return NULL;
  }
  Rep *in = rep_of(lw, inner, at);
  if (!in) return NULL;
  if (in->kind == R_VALUE) return in;   /* the box holds None or Unbound as well */
  Rep *r = rep_new(R_MAYBE, 1, &in);
  r->unbound = t->or_unbound;
  return r;
}

/* The Rep values of type t have where they are stored: parameters,
 * results, phis, items.  NULL with the reason when there is none. */
static Rep *rep_of(Lw *lw, IrType *t, IrNode *at) {
  if (!t) {
    nope(lw, at, "a node without a type");
    return NULL;
  }
  if ((t->or_unbound || t->or_none) && t->kind != IT_NONE && t->kind != IT_UNBOUND) return rep_maybe(lw, t, at);
  switch (t->kind) {
  case IT_NEVER: return &r_never;
  case IT_NONE: return t->or_unbound ? rep_maybe(lw, t, at) : &r_none;
  case IT_UNBOUND: return t->or_none ? rep_maybe(lw, t, at) : &r_unbound;
  case IT_BOOL: return &r_bool;
  case IT_INT: return &r_int;
  case IT_FLOAT: return &r_float;
  case IT_TUPLE: {
    Rep **items = lang_alloc((size_t)(t->n ? t->n : 1) * sizeof *items);
    for (int i = 0; i < t->n; i++)
      if (!(items[i] = rep_of(lw, t->items[i], at))) return NULL;
    return rep_new(R_TUPLE, t->n, items);
  }
  case IT_CLOSURE: {
    if (!t->graph->fv_done) ir_free_vars(t->graph);
    if (t->graph->nfv == 0) {
      Rep *r = rep_new(R_CLOSURE, 0, NULL);
      r->graph = t->graph;
      return r;
    }
    Rep *r = tape_closure_rep(lw, t);
    return r ? r : &r_value;
  }
  case IT_FNSET: {
    Rep *r = tape_rep(lw, t);
    if (!r) r = union_rep(lw, t);
    if (r) return r;
    break;
  }
  case IT_BUILTIN:
    if (t->n == 0) {
      Rep *r = rep_new(R_BUILTIN, 0, NULL);
      r->builtin = t->builtin;
      return r;
    }
    break;
  default: break;
  }
  if (boxed_ok(t)) return &r_value;
  nope(lw, at, "a value of type %s is not compiled yet", ir_type_str(t));
  return NULL;
}

static void leaf_types(Lw *lw, const Rep *r, LLVMTypeRef *out, int *k) {
  switch (r->kind) {
  case R_BOOL: out[(*k)++] = lw->i1; break;
  case R_INT: out[(*k)++] = lw->i64; break;
  case R_FLOAT: out[(*k)++] = lw->f64; break;
  case R_VALUE: out[(*k)++] = lw->i64; out[(*k)++] = lw->i64; break;
  case R_TAPE:
    out[(*k)++] = lw->i64;
    out[(*k)++] = lw->i64;
    if (r->cont) {
      leaf_types(lw, r->cont, out, k);
    } else {
      out[(*k)++] = lw->i64;
      out[(*k)++] = lw->i64;
    }
    break;
  case R_MAYBE: case R_UNION: out[(*k)++] = r->kind == R_MAYBE ? lw->i1 : lw->i64; /* fall through */
  case R_TUPLE: case R_CLOSURE:
    for (int i = 0; i < r->n; i++) leaf_types(lw, r->items[i], out, k);
    break;
  default: break;
  }
}

static LLVMTypeRef *leaf_type_array(Lw *lw, const Rep *r) {
  LLVMTypeRef *t = lang_alloc((size_t)(r->nleaves ? r->nleaves : 1) * sizeof *t);
  int k = 0;
  leaf_types(lw, r, t, &k);
  return t;
}

/* ---- LLVM helpers ---- */

/* The leaves of n values of reps reps: the registers they take. */
static int leaves(Rep *const *reps, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) k += reps[i]->nleaves;
  return k;
}

static LLVMValueRef ci64(Lw *lw, int64_t v) { return LLVMConstInt(lw->i64, (unsigned long long)v, true); }
static LLVMValueRef ci32(Lw *lw, int32_t v) { return LLVMConstInt(lw->i32, (unsigned long long)(int64_t)v, true); }
static LLVMValueRef ci1(Lw *lw, bool v) { return LLVMConstInt(lw->i1, v, false); }

static LLVMValueRef helper(Lw *lw, const char *name, LLVMTypeRef ret, int n, LLVMTypeRef *params, LLVMTypeRef *fty) {
  *fty = LLVMFunctionType(ret, params, (unsigned)n, false);
  LLVMValueRef f = LLVMGetNamedFunction(lw->M, name);
  if (!f) f = LLVMAddFunction(lw->M, name, *fty);
  return f;
}

static LLVMValueRef call(Lw *lw, const char *name, LLVMTypeRef ret, int n, LLVMTypeRef *ptypes, LLVMValueRef *args) {
  LLVMTypeRef fty;
  LLVMValueRef f = helper(lw, name, ret, n, ptypes, &fty);
  return LLVMBuildCall2(lw->B, fty, f, args, (unsigned)n, "");
}

static LLVMBasicBlockRef new_block(Em *e, const char *name) { return LLVMAppendBasicBlockInContext(e->lw->C, e->fn, name); }

static LLVMValueRef entry_alloca(Em *e, int n, const char *name) {
  Lw *lw = e->lw;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(lw->C);
  LLVMValueRef first = LLVMGetFirstInstruction(e->entry);
  if (first) LLVMPositionBuilderBefore(b, first);
  else LLVMPositionBuilderAtEnd(b, e->entry);
  LLVMValueRef a = LLVMBuildAlloca(b, LLVMArrayType2(lw->valuet, (uint64_t)(n ? n : 1)), name);
  LLVMSetAlignment(a, 16);
  LLVMDisposeBuilder(b);
  return a;
}

/* A Value slot (or n of them) in the frame's scratch area, an array in
 * its entry block.  A slot holds a value only while one node is emitted
 * (a boxed argument, a result read back at once), so the slots of a
 * node are free again after it (emit_node): the frame's stack is the
 * most one node needs, not the sum over its nodes, which a recursion
 * thousands of calls deep would pay at every level. */
static LLVMValueRef value_slots(Em *e, int n) {
  Lw *lw = e->lw;
  if (!e->scratch) e->scratch = entry_alloca(e, 1, "scratch");
  LLVMValueRef p = LLVMBuildGEP2(lw->B, lw->valuet, e->scratch, (LLVMValueRef[]){ci64(lw, e->cursor)}, 1, "vals");
  e->cursor += n ? n : 1;
  if (e->cursor > e->top) e->top = e->cursor;
  return p;
}

/* The scratch area made as large as its most used. */
static void size_scratch(Em *e) {
  if (!e->scratch) return;
  LLVMValueRef a = entry_alloca(e, e->top, "scratch");
  LLVMReplaceAllUsesWith(e->scratch, a);
  LLVMInstructionEraseFromParent(e->scratch);
  e->scratch = a;
}

static LLVMValueRef slot_at(Em *e, LLVMValueRef base, int i) {
  Lw *lw = e->lw;
  return LLVMBuildGEP2(lw->B, lw->valuet, base, (LLVMValueRef[]){ci64(lw, i)}, 1, "");
}

static void store_value(Em *e, LLVMValueRef p, LLVMValueRef tag, LLVMValueRef pay) {
  Lw *lw = e->lw;
  LLVMBuildStore(lw->B, tag, p);
  LLVMBuildStore(lw->B, pay, LLVMBuildGEP2(lw->B, lw->i8, p, (LLVMValueRef[]){ci64(lw, 8)}, 1, ""));
}

static void load_value(Em *e, LLVMValueRef p, LLVMValueRef *tag, LLVMValueRef *pay) {
  Lw *lw = e->lw;
  *tag = LLVMBuildLoad2(lw->B, lw->i64, p, "tag");
  *pay = LLVMBuildLoad2(lw->B, lw->i64, LLVMBuildGEP2(lw->B, lw->i8, p, (LLVMValueRef[]){ci64(lw, 8)}, 1, ""), "pay");
}

/* A field of the VM, by its offset. */
static LLVMValueRef vm_field(Em *e, size_t off) {
  Lw *lw = e->lw;
  return LLVMBuildGEP2(lw->B, lw->i8, e->vm, (LLVMValueRef[]){ci64(lw, (int64_t)off)}, 1, "");
}

/* The failure of node n in this frame: the runtime adds the span and
 * the traceback line, and the frame returns failing. */
static void fail_here(Em *e, IrNode *n) {
  Lw *lw = e->lw;
  int site = add_site(lw, n, e->f->g);
  call(lw, "mist_rt_fail", lw->voidt, 2, (LLVMTypeRef[]){lw->ptr, lw->i32}, (LLVMValueRef[]){e->cx, ci32(lw, site)});
  LLVMBuildRet(lw->B, LLVMConstNull(e->f->retty));
}

/* A branch to yes where c holds, as it almost always does (no is a
 * failure or a slow path): LLVM lays the rare side out of the way and
 * keeps the common one's values in registers. */
static void likely_br(Lw *lw, LLVMValueRef c, LLVMBasicBlockRef yes, LLVMBasicBlockRef no) {
  LLVMValueRef br = LLVMBuildCondBr(lw->B, c, yes, no);
  LLVMMetadataRef w[3] = {LLVMMDStringInContext2(lw->C, "branch_weights", 14),
                          LLVMValueAsMetadata(ci32(lw, 2000)), LLVMValueAsMetadata(ci32(lw, 1))};
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(lw->C, "prof", 4),
                  LLVMMetadataAsValue(lw->C, LLVMMDNodeInContext2(lw->C, w, 3)));
}

/* Continue where ok holds; where it does not, fail at n. */
static void check(Em *e, LLVMValueRef ok, IrNode *n) {
  LLVMBasicBlockRef good = new_block(e, "ok"), bad = new_block(e, "fail");
  likely_br(e->lw, ok, good, bad);
  LLVMPositionBuilderAtEnd(e->lw->B, bad);
  fail_here(e, n);
  LLVMPositionBuilderAtEnd(e->lw->B, good);
}

/* ---- boxing ---- */

static bool box(Em *e, JV *x, LLVMValueRef *tag, LLVMValueRef *pay, IrNode *at);

/* The leaves of x boxed into n consecutive Value slots at base. */
static bool box_into(Em *e, JV *x, LLVMValueRef p, IrNode *at) {
  LLVMValueRef tag, pay;
  if (!box(e, x, &tag, &pay, at)) return false;
  store_value(e, p, tag, pay);
  return true;
}

static JV *item_of(JV *x, int i) {
  int k = x->rep->kind == R_MAYBE || x->rep->kind == R_UNION ? 1 : 0;
  for (int j = 0; j < i; j++) k += x->rep->items[j]->nleaves;
  JV *y = jv_new(x->rep->items[i]);
  for (int j = 0; j < y->rep->nleaves; j++) y->v[j] = x->v[k + j];
  return y;
}

/* A load of what never changes while the code lives (cx's fields, its
 * constants): LLVM may keep it across calls and merge the copies the
 * inlined twin makes. */
static void invariant(Lw *lw, LLVMValueRef load) {
  LLVMSetMetadata(load, LLVMGetMDKindIDInContext(lw->C, "invariant.load", 14),
                  LLVMMetadataAsValue(lw->C, LLVMMDNodeInContext2(lw->C, NULL, 0)));
}

static LLVMValueRef const_word(Lw *lw, Em *e, int k, int word) {
  LLVMValueRef consts = LLVMBuildLoad2(lw->B, lw->ptr,
                                       LLVMBuildGEP2(lw->B, lw->i8, e->cx, (LLVMValueRef[]){ci64(lw, offsetof(JitCx, consts))}, 1, ""),
                                       "consts");
  invariant(lw, consts);
  LLVMValueRef p = LLVMBuildGEP2(lw->B, lw->i8, consts, (LLVMValueRef[]){ci64(lw, (int64_t)k * 16 + word * 8)}, 1, "");
  LLVMValueRef w = LLVMBuildLoad2(lw->B, lw->i64, p, "");
  invariant(lw, w);
  return w;
}

static Value graph_value(IrGraph *g) {
  ObjGraph *o = lang_alloc(sizeof *o);
  o->obj.kind = O_GRAPH;
  o->graph = g;
  return v_obj(o);
}

/* The program's node a node of inference's copies stands for. */
static IrNode *node_origin(Lw *lw, IrNode *x) {
  for (;;) {
    const IrTyped *t = x->graph ? ir_map_get(&lw->typed, x->graph) : NULL;
    IrNode *o = t ? ir_map_get(&t->origin, x) : NULL;
    if (!o) return x;
    x = o;
  }
}

/* For a closure of *g, a copy inference made, that leaves compiled
 * code: *g becomes the program's graph it copies and the result says
 * where each captured value goes in that graph's free variables; NULL
 * (and *g unchanged) when they do not match one to one.  Autodiff knows
 * a function by its graph (its transforms, the graph a transform came
 * from), so a closure the interpreter meets must be of the program's
 * graph, as eager mode would have made it. */
static int *closure_origin(Lw *lw, IrGraph **g) {
  IrGraph *k = *g, *o = ir_graph_origin(k);
  if (o == k) return NULL;
  ir_free_vars(k);
  ir_free_vars(o);
  if (o->nfv != k->nfv) return NULL;
  int *order = lang_alloc((size_t)(k->nfv ? k->nfv : 1) * sizeof *order);
  for (int j = 0; j < k->nfv; j++) {
    IrNode *x = node_origin(lw, k->fv[j]);
    order[j] = -1;
    for (int i = 0; i < o->nfv; i++)
      if (o->fv[i] == x) order[j] = i;
    if (order[j] < 0) return NULL;
  }
  *g = o;
  return order;
}

static bool box_tape(Em *e, JV *x, LLVMValueRef *tag, LLVMValueRef *pay, IrNode *at);
static bool box_union(Em *e, JV *x, LLVMValueRef *tag, LLVMValueRef *pay, IrNode *at);

static bool box(Em *e, JV *x, LLVMValueRef *tag, LLVMValueRef *pay, IrNode *at) {
  Lw *lw = e->lw;
  Rep *r = x->rep;
  switch (r->kind) {
  case R_TAPE: return box_tape(e, x, tag, pay, at);
  case R_UNION: return box_union(e, x, tag, pay, at);
  case R_HOLE: break;
  case R_NEVER: *tag = ci64(lw, V_NONE); *pay = ci64(lw, 0); return true;
  case R_NONE: *tag = ci64(lw, V_NONE); *pay = ci64(lw, 0); return true;
  case R_UNBOUND: *tag = ci64(lw, V_UNBOUND); *pay = ci64(lw, 0); return true;
  case R_BOOL: *tag = ci64(lw, V_BOOL); *pay = LLVMBuildZExt(lw->B, x->v[0], lw->i64, ""); return true;
  case R_INT: *tag = ci64(lw, V_INT); *pay = x->v[0]; return true;
  case R_FLOAT: *tag = ci64(lw, V_FLOAT); *pay = LLVMBuildBitCast(lw->B, x->v[0], lw->i64, ""); return true;
  case R_VALUE: *tag = x->v[0]; *pay = x->v[1]; return true;
  case R_BUILTIN: {
    int k = add_const(lw, v_obj(r->builtin));
    *tag = const_word(lw, e, k, 0);
    *pay = const_word(lw, e, k, 1);
    return true;
  }
  case R_TUPLE: {
    LLVMValueRef items = value_slots(e, r->n), out = value_slots(e, 1);
    for (int i = 0; i < r->n; i++)
      if (!box_into(e, item_of(x, i), slot_at(e, items, i), at)) return false;
    call(lw, "mist_rt_tuple", lw->voidt, 3, (LLVMTypeRef[]){lw->i32, lw->ptr, lw->ptr},
         (LLVMValueRef[]){ci32(lw, r->n), items, out});
    load_value(e, out, tag, pay);
    return true;
  }
  case R_CLOSURE: {
    if (r->n == 0) {
      /* the program's own function, not inference's copy of it: what
       * the interpreter would have made (autodiff knows its transforms
       * by graph) */
      IrGraph *g = ir_graph_origin(r->graph);
      if (!g->fv_done) ir_free_vars(g);
      int k = add_const(lw, v_obj(ev_closure(lw->vm, g->nfv ? r->graph : g, NULL)));
      *tag = const_word(lw, e, k, 0);
      *pay = const_word(lw, e, k, 1);
      return true;
    }
    /* a closure of the program's own function when its captured
     * values can be matched to that function's free variables */
    IrGraph *g = r->graph;
    int *order = closure_origin(lw, &g);
    LLVMValueRef env = value_slots(e, r->n), out = value_slots(e, 1);
    for (int i = 0; i < r->n; i++)
      if (!box_into(e, item_of(x, i), slot_at(e, env, order ? order[i] : i), at)) return false;
    IrNode *gn = ir_const(ir_unit_new(), graph_value(g), at ? at->span : span_none());
    gn->inlined = at ? at->inlined : NULL;
    int site = add_site(lw, gn, e->f->g);
    call(lw, "mist_rt_closure", lw->voidt, 4, (LLVMTypeRef[]){lw->ptr, lw->i32, lw->ptr, lw->ptr},
         (LLVMValueRef[]){e->cx, ci32(lw, site), env, out});
    load_value(e, out, tag, pay);
    return true;
  }
  case R_MAYBE: {
    JV *in = item_of(x, 0);
    LLVMBasicBlockRef here = LLVMGetInsertBlock(lw->B), yes = new_block(e, "some"), join = new_block(e, "boxed");
    LLVMBuildCondBr(lw->B, x->v[0], yes, join);
    LLVMPositionBuilderAtEnd(lw->B, yes);
    LLVMValueRef t1, p1;
    if (!box(e, in, &t1, &p1, at)) return false;
    LLVMBasicBlockRef yes_end = LLVMGetInsertBlock(lw->B);
    LLVMBuildBr(lw->B, join);
    LLVMPositionBuilderAtEnd(lw->B, join);
    *tag = LLVMBuildPhi(lw->B, lw->i64, "tag");
    *pay = LLVMBuildPhi(lw->B, lw->i64, "pay");
    LLVMValueRef tv[2] = {t1, ci64(lw, r->unbound ? V_UNBOUND : V_NONE)}, pv[2] = {p1, ci64(lw, 0)};
    LLVMBasicBlockRef from[2] = {yes_end, here};
    LLVMAddIncoming(*tag, tv, from, 2);
    LLVMAddIncoming(*pay, pv, from, 2);
    return true;
  }
  }
  return nope(lw, at, "cannot box a value");
}

/* ---- unboxing ---- */

static void bad_value(Em *e, LLVMValueRef tag, LLVMValueRef pay, IrNode *at) {
  Lw *lw = e->lw;
  LLVMValueRef p = value_slots(e, 1);
  store_value(e, p, tag, pay);
  int site = add_typed_site(lw, at, e->f->g, at ? type_of(lw, at) : NULL);
  call(lw, "mist_rt_bad_value", lw->i1, 3, (LLVMTypeRef[]){lw->ptr, lw->ptr, lw->i32}, (LLVMValueRef[]){e->cx, p, ci32(lw, site)});
  fail_here(e, at);
}

/* Continue where ok holds; elsewhere the value (tag, pay) was not what
 * inference said: reported as the internal error it is. */
static void expect_ok(Em *e, LLVMValueRef ok, LLVMValueRef tag, LLVMValueRef pay, IrNode *at) {
  LLVMBasicBlockRef good = new_block(e, "typed"), bad = new_block(e, "badtype");
  likely_br(e->lw, ok, good, bad);
  LLVMPositionBuilderAtEnd(e->lw->B, bad);
  bad_value(e, tag, pay, at);
  LLVMPositionBuilderAtEnd(e->lw->B, good);
}

/* A boxed value as Rep r, checked (checked false: the caller knows it
 * is one, as the arguments of a signature). */
static JV *unbox_tape_closure(Em *e, LLVMValueRef tag, LLVMValueRef pay, Rep *r, IrNode *at);

static JV *unbox(Em *e, LLVMValueRef tag, LLVMValueRef pay, Rep *r, IrNode *at, bool checked) {
  Lw *lw = e->lw;
  JV *x = jv_new(r);
  LLVMBuilderRef B = lw->B;
#define EXPECT(t) if (checked) expect_ok(e, LLVMBuildICmp(B, LLVMIntEQ, tag, ci64(lw, t), ""), tag, pay, at)
  switch (r->kind) {
  case R_TAPE:
    /* a chain of closures: a tape of no turns over it (where the
     * first turn's continuation is kept unboxed, the chain may be of
     * the turns: not compiled) */
    if (r->cont) {
      nope(lw, at, "the backward pass of a loop in another loop's turn from a boxed value");
      return NULL;
    }
    x->v[0] = x->v[1] = ci64(lw, 0);
    x->v[2] = tag;
    x->v[3] = pay;
    return x;
  case R_UNION: return unbox_tape_closure(e, tag, pay, r, at);
  case R_NEVER: case R_HOLE: return x;
  case R_NONE: EXPECT(V_NONE); return x;
  case R_UNBOUND: EXPECT(V_UNBOUND); return x;
  case R_BOOL: EXPECT(V_BOOL); x->v[0] = LLVMBuildTrunc(B, pay, lw->i1, ""); return x;
  case R_INT: EXPECT(V_INT); x->v[0] = pay; return x;
  case R_FLOAT: EXPECT(V_FLOAT); x->v[0] = LLVMBuildBitCast(B, pay, lw->f64, ""); return x;
  case R_VALUE: x->v[0] = tag; x->v[1] = pay; return x;
  case R_BUILTIN: {
    int k = add_const(lw, v_obj(r->builtin));
    if (checked)
      expect_ok(e, LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, tag, ci64(lw, V_OBJ), ""),
                                LLVMBuildICmp(B, LLVMIntEQ, pay, const_word(lw, e, k, 1), ""), ""),
                tag, pay, at);
    return x;
  }
  case R_CLOSURE: {
    if (r->n) return unbox_tape_closure(e, tag, pay, r, at);
    if (checked) {
      LLVMValueRef p = value_slots(e, 1);
      store_value(e, p, tag, pay);
      IrNode *gn = ir_const(ir_unit_new(), graph_value(r->graph), at ? at->span : span_none());
      gn->inlined = at ? at->inlined : NULL;
      int site = add_site(lw, gn, e->f->g);
      LLVMValueRef ok = call(lw, "mist_rt_is_closure", lw->i1, 3, (LLVMTypeRef[]){lw->ptr, lw->ptr, lw->i32},
                             (LLVMValueRef[]){e->cx, p, ci32(lw, site)});
      expect_ok(e, ok, tag, pay, at);
    }
    return x;
  }
  case R_TUPLE: {
    LLVMValueRef p = value_slots(e, 1);
    store_value(e, p, tag, pay);
    LLVMValueRef items = call(lw, "mist_rt_tuple_items", lw->ptr, 2, (LLVMTypeRef[]){lw->ptr, lw->i64},
                              (LLVMValueRef[]){p, ci64(lw, r->n)});
    if (checked) expect_ok(e, LLVMBuildIsNotNull(B, items, ""), tag, pay, at);
    int k = 0;
    for (int i = 0; i < r->n; i++) {
      LLVMValueRef t, v;
      load_value(e, slot_at(e, items, i), &t, &v);
      JV *y = unbox(e, t, v, r->items[i], at, checked);
      if (!y) return NULL;
      for (int j = 0; j < y->rep->nleaves; j++) x->v[k++] = y->v[j];
    }
    return x;
  }
  case R_MAYBE: {
    LLVMValueRef none = ci64(lw, r->unbound ? V_UNBOUND : V_NONE);
    LLVMValueRef present = LLVMBuildICmp(B, LLVMIntNE, tag, none, "");
    LLVMBasicBlockRef here = LLVMGetInsertBlock(B), yes = new_block(e, "some"), join = new_block(e, "unboxed");
    LLVMBuildCondBr(B, present, yes, join);
    LLVMPositionBuilderAtEnd(B, yes);
    JV *in = unbox(e, tag, pay, r->items[0], at, checked);
    if (!in) return NULL;
    LLVMBasicBlockRef yes_end = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, join);
    LLVMPositionBuilderAtEnd(B, join);
    x->v[0] = present;
    LLVMTypeRef *lt = leaf_type_array(lw, r->items[0]);
    for (int j = 0; j < in->rep->nleaves; j++) {
      LLVMValueRef phi = LLVMBuildPhi(B, lt[j], "");
      LLVMValueRef vals[2] = {in->v[j], LLVMGetUndef(lt[j])};
      LLVMBasicBlockRef from[2] = {yes_end, here};
      LLVMAddIncoming(phi, vals, from, 2);
      x->v[1 + j] = phi;
    }
    return x;
  }
  }
#undef EXPECT
  return x;
}

/* ---- conversions between reps ---- */

static JV *to_tape(Em *e, JV *x, Rep *to, IrNode *at);
static JV *to_union(Em *e, JV *x, Rep *u, IrNode *at);
static IrNode *node_origin(Lw *lw, IrNode *x);

/* For closures of two copies of one graph (or of the same), where each
 * of to's free variables is in from's. */
static int *copy_order(Lw *lw, const Rep *from, const Rep *to) {
  IrGraph *a = from->graph, *b = to->graph;
  if (!a || !b || ir_graph_origin(a) != ir_graph_origin(b)) return NULL;
  ir_free_vars(a);
  ir_free_vars(b);
  if (a->nfv != b->nfv) return NULL;
  if (to->kind == R_CLOSURE && (from->n != a->nfv || to->n != b->nfv)) return NULL;
  int *order = lang_alloc((size_t)(b->nfv ? b->nfv : 1) * sizeof *order);
  for (int j = 0; j < b->nfv; j++) {
    order[j] = -1;
    IrNode *o = node_origin(lw, b->fv[j]);
    for (int i = 0; i < a->nfv; i++)
      if (node_origin(lw, a->fv[i]) == o) order[j] = i;
    if (order[j] < 0) return NULL;
  }
  return order;
}

static JV *coerce(Em *e, JV *x, Rep *to, IrNode *at) {
  Lw *lw = e->lw;
  Rep *from = x->rep;
  if (rep_eq(from, to)) return x;
  if (from->kind == R_NEVER) {
    JV *y = jv_new(to);
    LLVMTypeRef *lt = leaf_type_array(lw, to);
    for (int i = 0; i < to->nleaves; i++) y->v[i] = LLVMGetUndef(lt[i]);
    return y;
  }
  if (to->kind == R_TAPE) return to_tape(e, x, to, at);
  if (to->kind == R_VALUE) {
    JV *y = jv_new(to);
    return box(e, x, &y->v[0], &y->v[1], at) ? y : NULL;
  }
  if (from->kind == R_VALUE) return unbox(e, x->v[0], x->v[1], to, at, true);
  if (to->kind == R_UNION) return to_union(e, x, to, at);
  if (to->kind == R_MAYBE) {
    JV *y = jv_new(to);
    LLVMTypeRef *lt = leaf_type_array(lw, to->items[0]);
    if ((from->kind == R_NONE && !to->unbound) || (from->kind == R_UNBOUND && to->unbound)) {
      y->v[0] = ci1(lw, false);
      for (int i = 0; i < to->items[0]->nleaves; i++) y->v[1 + i] = LLVMGetUndef(lt[i]);
      return y;
    }
    JV *in = coerce(e, x, to->items[0], at);
    if (!in) return NULL;
    y->v[0] = ci1(lw, true);
    for (int i = 0; i < in->rep->nleaves; i++) y->v[1 + i] = in->v[i];
    return y;
  }
  if (from->kind == R_TUPLE && to->kind == R_TUPLE && from->n == to->n) {
    JV *y = jv_new(to);
    int k = 0;
    for (int i = 0; i < to->n; i++) {
      JV *it = coerce(e, item_of(x, i), to->items[i], at);
      if (!it) return NULL;
      for (int j = 0; j < it->rep->nleaves; j++) y->v[k++] = it->v[j];
    }
    return y;
  }
  if (from->kind == R_CLOSURE && to->kind == R_CLOSURE && from->graph == to->graph && to->n == 0) return jv_new(to);
  int *order = from->kind == R_CLOSURE && to->kind == R_CLOSURE ? copy_order(lw, from, to) : NULL;
  if (order) {
    /* a closure that holds a tape, made here or of another copy of its
     * graph, as its type keeps it */
    JV *y = jv_new(to);
    int k = 0;
    for (int i = 0; i < to->n; i++) {
      JV *it = coerce(e, item_of(x, order[i]), to->items[i], at);
      if (!it) return NULL;
      for (int j = 0; j < it->rep->nleaves; j++) y->v[k++] = it->v[j];
    }
    return y;
  }
  if (from->kind == R_UNION) {
    /* (a union narrowed: never, when inference is right) */
    LLVMValueRef tag, pay;
    return box(e, x, &tag, &pay, at) ? unbox(e, tag, pay, to, at, true) : NULL;
  }
  nope(lw, at, "a value kept in two ways that do not convert");
  return NULL;
}

/* ---- frames ---- */

enum { CAREFUL = -1 };

/* The frame of graph g with free variables passed as fvrep.  A frame
 * that calls itself calls its twin instead, an identical function
 * that calls the next twin, the last calling the frame back: LLVM
 * inlines the chain of twins into the frame, so a recursion runs
 * several levels per native call, as gcc -O2 unrolls one.  Each level
 * still counts its depth; the frame, on entry, checks that the depth
 * of the whole chain is below the limit, and else runs its CAREFUL
 * copy (the same function without twins, which checks the depth at
 * every call, as the interpreter): so the twins need not, and the
 * limit is met with the interpreter's error at its depth. */
/* Is g the standard library's derivative code (stdlib/ad.ms, the rules:
 * SourceFile.internal), or a derivative or specialised copy of it?
 * effort.c leaves such a frame unoptimised when it is big. */
static bool from_library(MistVM *vm, IrGraph *g) {
  for (int hops = 0; g && hops < 64; hops++) {
    if (g->span.file >= 0 && g->span.file < vm->nfiles && vm->files[g->span.file].internal) return true;
    g = g->jsource ? g->jsource : g->copy_of;
  }
  return false;
}

static Frame *get_frame(Lw *lw, IrGraph *g, Rep **fvrep, int twin, IrNode *at) {
  ir_free_vars(g);
  for (Frame *f = lw->frames; f; f = f->next) {
    if (f->g != g || f->twin != twin) continue;
    bool same = true;
    for (int i = 0; i < f->nfv && same; i++) same = rep_eq(f->fvrep[i], fvrep[i]);
    if (same) return f;
  }
  Frame *f = lang_alloc(sizeof *f);
  f->g = g;
  f->twin = twin;
  f->np = g->nparams;
  f->nfv = g->nfv;
  f->fv = g->fv;
  f->fvrep = lang_alloc((size_t)(g->nfv ? g->nfv : 1) * sizeof *f->fvrep);
  if (g->nfv) memcpy(f->fvrep, fvrep, (size_t)g->nfv * sizeof *fvrep);
  f->prep = lang_alloc((size_t)(g->nparams ? g->nparams : 1) * sizeof *f->prep);
  for (int i = 0; i < g->nparams; i++)
    if (!(f->prep[i] = rep_of(lw, type_of(lw, g->params[i]), g->params[i]))) return NULL;
  IrNode *r = g->ret;
  f->ret = &r_none;
  if (r) {
    int k = -1;
    for (int i = 0; i < g->nfv; i++)
      if (g->fv[i] == r) k = i;
    if (k >= 0) f->ret = fvrep[k];
    else if (!(f->ret = rep_of(lw, type_of(lw, r), r))) return NULL;
  }
  /* {ok, result...}(cx, depth, parameters..., free variables...) */
  int nl = 1 + f->ret->nleaves, np = 2;
  LLVMTypeRef *rt = lang_alloc((size_t)nl * sizeof *rt);
  rt[0] = lw->i1;
  int k = 1;
  leaf_types(lw, f->ret, rt, &k);
  f->retty = LLVMStructTypeInContext(lw->C, rt, (unsigned)nl, false);
  np += leaves(f->prep, g->nparams) + leaves(f->fvrep, g->nfv);
  LLVMTypeRef *pt = lang_alloc((size_t)np * sizeof *pt);
  pt[0] = lw->ptr;
  pt[1] = lw->i32;
  k = 2;
  for (int i = 0; i < g->nparams; i++) leaf_types(lw, f->prep[i], pt, &k);
  for (int i = 0; i < g->nfv; i++) leaf_types(lw, f->fvrep[i], pt, &k);
  f->fnty = LLVMFunctionType(f->retty, pt, (unsigned)np, false);
  char name[256];
  snprintf(name, sizeof name, "%s%s%s.%d", lw->prefix, g->name->data,
           twin > 0 ? ".twin" : twin == CAREFUL ? ".careful" : "", lw->nfn++);
  f->fn = LLVMAddFunction(lw->M, name, f->fnty);
  LLVMSetLinkage(f->fn, LLVMInternalLinkage);
  if (twin > 0) {
    unsigned k = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    LLVMAddAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(lw->C, k, 0));
  }
  if (from_library(lw->vm, g))
    LLVMAddAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(lw->C, "mist-library", 12, "", 0));
  if (twin == CAREFUL) {
    /* (it runs only within a chain's depth of the limit: not worth
     * LLVM's time, effort.c) */
    unsigned k = LLVMGetEnumAttributeKindForName("optnone", 7), l = LLVMGetEnumAttributeKindForName("noinline", 8);
    LLVMAddAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(lw->C, k, 0));
    LLVMAddAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(lw->C, l, 0));
  }
  f->next = lw->frames;
  lw->frames = f;
  if (lw->nqueue == lw->capqueue) {
    lw->capqueue = lw->capqueue ? 2 * lw->capqueue : 8;
    lw->queue = lang_realloc(lw->queue, (size_t)lw->capqueue * sizeof *lw->queue);
  }
  lw->queue[lw->nqueue++] = f;
  (void)at;
  return f;
}

/* The frame a call of g (free variables fvrep) made in e's frame runs:
 * a call of e's own frame goes to the next twin of its chain (the
 * frame itself after the last), a careful copy's to itself. */
static Frame *callee_frame(Em *e, IrGraph *g, Rep **fvrep, IrNode *at) {
  Frame *f = e->f;
  bool self = f->g == g;
  for (int i = 0; i < f->nfv && self; i++) self = rep_eq(f->fvrep[i], fvrep[i]);
  if (!self) return get_frame(e->lw, g, fvrep, 0, at);
  if (f->twin == CAREFUL) return f;
  /* (the frame is emitted before its twins, so its chain is known
   * when they call) */
  Frame *root = f->twin ? f->root : f;
  if (!f->twin) f->selfcalls++;
  Frame *t = get_frame(e->lw, g, fvrep, f->twin + 1 < (f->twin ? root->chain : 2) ? f->twin + 1 : 0, at);
  if (t && t->twin) t->root = root;
  return t;
}

/* How many frames the chain of a frame that calls itself selfcalls
 * times holds, its function being of size instructions: as many as
 * keep the copies LLVM inlines within a budget (fib's frame, about 150
 * instructions and two calls of itself, has four: its fourteen
 * copies run four levels of its recursion per native call). */
static int chain_length(int selfcalls, int size) {
  enum { MAXCHAIN = 4, BUDGET = 3000 };
  int n = 2;
  long copies = selfcalls, level = selfcalls;
  while (n < MAXCHAIN) {
    level *= selfcalls;
    if ((copies + level) * size > BUDGET) break;
    copies += level;
    n++;
  }
  return n;
}

/* ---- values of nodes ---- */

static JV *val(Em *e, IrNode *x, IrNode *at);

static JV *const_val(Em *e, IrNode *x, IrNode *at) {
  Lw *lw = e->lw;
  Value v = x->value;
  IrGraph *h = ir_node_graph(x);
  if (h) {
    /* a closure made here: the values it captures */
    ir_free_vars(h);
    Rep **fr = lang_alloc((size_t)(h->nfv ? h->nfv : 1) * sizeof *fr);
    JV **fv = lang_alloc((size_t)(h->nfv ? h->nfv : 1) * sizeof *fv);
    for (int i = 0; i < h->nfv; i++) {
      if (!(fv[i] = val(e, h->fv[i], at))) return NULL;
      fr[i] = fv[i]->rep;
    }
    Rep *r = rep_new(R_CLOSURE, h->nfv, fr);
    r->graph = h;
    JV *c = jv_new(r);
    int k = 0;
    for (int i = 0; i < h->nfv; i++)
      for (int j = 0; j < fr[i]->nleaves; j++) c->v[k++] = fv[i]->v[j];
    return c;
  }
  switch (v.tag) {
  case V_NONE: return jv_new(&r_none);
  case V_UNBOUND: return jv_new(&r_unbound);
  case V_BOOL: { JV *c = jv_new(&r_bool); c->v[0] = ci1(lw, v.b); return c; }
  case V_INT: { JV *c = jv_new(&r_int); c->v[0] = ci64(lw, v.i); return c; }
  case V_FLOAT: { JV *c = jv_new(&r_float); c->v[0] = LLVMConstReal(lw->f64, v.f); return c; }
  case V_OBJ: break;
  }
  if (v.o->kind == O_BUILTIN) {
    ObjBuiltin *b = AS_BUILTIN(v);
    if (b->prim >= 0) b = AS_BUILTIN(ir_prim_value(lw->vm, b->prim));
    Rep *r = rep_new(R_BUILTIN, 0, NULL);
    r->builtin = b;
    return jv_new(r);
  }
  if (v.o->kind == O_TUPLE) {
    ObjSeq *s = AS_SEQ(v);
    Rep **items = lang_alloc((size_t)(s->len ? s->len : 1) * sizeof *items);
    JV **iv = lang_alloc((size_t)(s->len ? s->len : 1) * sizeof *iv);
    for (size_t i = 0; i < s->len; i++) {
      IrNode tmp = *x;
      tmp.value = s->items[i];
      if (!(iv[i] = const_val(e, &tmp, at))) return NULL;
      items[i] = iv[i]->rep;
    }
    JV *c = jv_new(rep_new(R_TUPLE, (int)s->len, items));
    int k = 0;
    for (size_t i = 0; i < s->len; i++)
      for (int j = 0; j < items[i]->nleaves; j++) c->v[k++] = iv[i]->v[j];
    return c;
  }
  IrType *t = ir_type_of_value(v);
  if (!boxed_ok(t)) {
    nope(lw, at, "a constant of type %s is not compiled yet", ir_type_str(t));
    return NULL;
  }
  int k = add_const(lw, v);
  JV *c = jv_new(&r_value);
  c->v[0] = const_word(lw, e, k, 0);
  c->v[1] = const_word(lw, e, k, 1);
  return c;
}

static JV *val(Em *e, IrNode *x, IrNode *at) {
  JV *v = ir_map_get(&e->vals, x);
  if (v) return v;
  if (x->kind == IR_CONST) return const_val(e, x, at);
  nope(e->lw, at, "a value used before it is computed (a forward reference)");
  return NULL;
}

static void bind(Em *e, IrNode *n, JV *v) { ir_map_put(&e->vals, n, v); }

/* ---- calls ---- */

enum { CALL_PLAIN, CALL_TAIL, CALL_SAME };

/* vm->depth as the runtime must see it: this frame's depth. */
static void sync_depth(Em *e, LLVMValueRef depth) {
  LLVMBuildStore(e->lw->B, depth, vm_field(e, offsetof(MistVM, depth)));
}

/* Ctrl-C or the host's time limit may be due: the interrupt flag (set
 * from a signal handler: read each time) or a deadline at all.  The
 * deadline's bits, not its value, are tested with the flag's in one
 * comparison: any but 0.0's send the runtime to look (it compares the
 * value). */
static LLVMValueRef due(Em *e) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  LLVMValueRef intr = LLVMBuildLoad2(B, lw->i32, vm_field(e, offsetof(MistVM, interrupt)), "interrupt");
  LLVMSetVolatile(intr, true);
  LLVMValueRef dl = LLVMBuildLoad2(B, lw->i64, vm_field(e, offsetof(MistVM, deadline)), "deadline");
  return LLVMBuildICmp(B, LLVMIntNE, LLVMBuildOr(B, LLVMBuildZExt(B, intr, lw->i64, ""), dl, ""), ci64(lw, 0), "");
}

/* Where slow holds, runtime function rt (cx) decides, with vm->depth
 * set to depth if not NULL: on false, fail at n. */
static void unless_slow(Em *e, LLVMValueRef slow, LLVMValueRef depth, const char *rt, IrNode *n) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  LLVMBasicBlockRef chk = new_block(e, "slow"), go = new_block(e, "go");
  likely_br(lw, LLVMBuildNot(B, slow, ""), go, chk);
  LLVMPositionBuilderAtEnd(B, chk);
  if (depth) sync_depth(e, depth);
  LLVMValueRef ok = call(lw, rt, lw->i1, 1, (LLVMTypeRef[]){lw->ptr}, (LLVMValueRef[]){e->cx});
  LLVMBasicBlockRef bad = new_block(e, "stop");
  LLVMBuildCondBr(B, ok, go, bad);
  LLVMPositionBuilderAtEnd(B, bad);
  fail_here(e, n);
  LLVMPositionBuilderAtEnd(B, go);
}

/* The recursion guard before a call, at depth, as the interpreter's
 * stack_ok sees it: past the depth limit or below the C stack's, the
 * runtime raises the interpreter's error.  Ctrl-C and the time limit
 * are looked at here too, as the interpreter looks at them on every
 * call.  In a twin nothing is: its frame alone calls it, after a whole
 * guard, and LLVM inlines it there, so its calls are made from the
 * same native frame (the same C stack) a few instructions after the
 * frame's look at Ctrl-C, and the frame's entry checked the depths of
 * its whole chain (get_frame). */
static void guard_depth(Em *e, LLVMValueRef depth, IrNode *n) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  if (e->guarded == depth) return;
  if (e->f->twin > 0) {
    /* (its frame's entry checked the chain's depths) */
    e->guarded = depth;
    return;
  }
  LLVMValueRef max = LLVMBuildLoad2(B, lw->i32, vm_field(e, offsetof(MistVM, max_depth)), "max");
  LLVMValueRef lim = LLVMBuildLoad2(B, lw->i64, vm_field(e, offsetof(MistVM, stack_limit)), "limit");
  LLVMTypeRef sst;
  LLVMValueRef ssf = helper(lw, "llvm.stacksave.p0", lw->ptr, 0, NULL, &sst);
  LLVMValueRef sp = LLVMBuildCall2(B, sst, ssf, NULL, 0, "sp");
  /* (a NULL limit is 0: no address is below it) */
  LLVMValueRef low = LLVMBuildICmp(B, LLVMIntULT, LLVMBuildPtrToInt(B, sp, lw->i64, ""), lim, "");
  LLVMValueRef slow = LLVMBuildOr(B, LLVMBuildOr(B, LLVMBuildICmp(B, LLVMIntSGE, depth, max, ""), low, ""), due(e), "");
  /* (the runtime reads the depth it checks from the VM) */
  unless_slow(e, slow, depth, "mist_rt_call_check", n);
  e->guarded = depth;
}

/* Ctrl-C and the time limit on a loop's back edge. */
static void poll(Em *e, IrNode *n) { unless_slow(e, due(e), NULL, "mist_rt_poll", n); }

/* The leaves of the arguments and free variables' values of a call of
 * frame fr, as its parameters take them, into out. */
static bool frame_leaves(Em *e, Frame *fr, JV **args, JV **fvs, IrNode *n, LLVMValueRef *out) {
  int k = 0;
  for (int i = 0; i < fr->np + fr->nfv; i++) {
    JV *a = i < fr->np ? coerce(e, args[i], fr->prep[i], n) : coerce(e, fvs[i - fr->np], fr->fvrep[i - fr->np], n);
    if (!a) return false;
    for (int j = 0; j < a->rep->nleaves; j++) out[k++] = a->v[j];
  }
  return true;
}

/* Call frame fr with the arguments (as fr's parameters) and free
 * variables' values at node n.  CALL_PLAIN: the depth is checked, then
 * counted; CALL_TAIL (a tail call of a user function, whose frame the
 * interpreter reuses): counted, then checked; CALL_SAME (a tail call of
 * a graph that is not a user function, which the interpreter runs in
 * the caller's frame: a backward pass's continuation): not counted. */
static JV *call_frame(Em *e, Frame *fr, JV **args, JV **fvs, IrNode *n, int how) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  int na = 2 + leaves(fr->prep, fr->np) + leaves(fr->fvrep, fr->nfv);
  LLVMValueRef *av = lang_alloc((size_t)na * sizeof *av);
  int k = 0;
  av[k++] = e->cx;
  LLVMValueRef d1 = how == CALL_SAME ? e->depth : LLVMBuildAdd(B, e->depth, ci32(lw, 1), "");
  av[k++] = d1;
  if (!frame_leaves(e, fr, args, fvs, n, av + k)) return NULL;
  guard_depth(e, how == CALL_TAIL ? d1 : e->depth, n);
  LLVMValueRef r = LLVMBuildCall2(B, fr->fnty, fr->fn, av, (unsigned)na, "");
  check(e, LLVMBuildExtractValue(B, r, 0, "ok"), n);
  JV *out = jv_new(fr->ret);
  for (int j = 0; j < fr->ret->nleaves; j++) out->v[j] = LLVMBuildExtractValue(B, r, (unsigned)(1 + j), "");
  return out;
}

/* g called in a frame of its own, its result in the caller's
 * representation res */
static JV *call_graph(Em *e, IrGraph *g, Rep **fvrep, JV **args, JV **fvs, IrNode *n, int how,
                      Rep *res) {
  Frame *fm = callee_frame(e, g, fvrep, n);
  JV *r = fm ? call_frame(e, fm, args, fvs, n, how) : NULL;
  return r ? coerce(e, r, res, n) : NULL;
}

static bool has_tensor(const IrType *t) {
  if (t->kind == IT_TENSOR) return true;
  if (t->kind != IT_TUPLE && t->kind != IT_LIST) return false;
  int m = t->kind == IT_LIST && t->n < 0 ? 1 : t->n;
  for (int i = 0; i < m; i++)
    if (has_tensor(t->items[i])) return true;
  return false;
}

/* A result from the runtime (tag, pay; in memory at p) that inference
 * typed a tensor, or holding tensors, checked against that type (dtype,
 * rank and the dims it knows), as unbox checks a scalar's tag: code
 * compiled for a shape must never run on another.  A Value's tag is
 * enough for the other boxed types. */
static void check_tensor_type(Em *e, LLVMValueRef p, LLVMValueRef tag, LLVMValueRef pay, IrNode *n) {
  Lw *lw = e->lw;
  IrType *t = type_of(lw, n);
  if (!t || !has_tensor(t)) return;
  int site = add_typed_site(lw, n, e->f->g, t);
  LLVMValueRef ok = call(lw, "mist_rt_has_type", lw->i1, 3, (LLVMTypeRef[]){lw->ptr, lw->ptr, lw->i32},
                         (LLVMValueRef[]){e->cx, p, ci32(lw, site)});
  expect_ok(e, ok, tag, pay, n);
}

/* A call through the interpreter's ev_call: f and the arguments boxed,
 * the result unboxed as res (checked). */
static JV *call_boxed(Em *e, JV *f, int nargs, JV **args, Rep *res, IrNode *n) {
  Lw *lw = e->lw;
  LLVMValueRef fp = value_slots(e, 1), av = value_slots(e, nargs), out = value_slots(e, 1);
  if (!box_into(e, f, fp, n)) return NULL;
  for (int i = 0; i < nargs; i++)
    if (!box_into(e, args[i], slot_at(e, av, i), n)) return NULL;
  sync_depth(e, e->depth);
  LLVMValueRef ok = call(lw, "mist_rt_call", lw->i1, 5, (LLVMTypeRef[]){lw->ptr, lw->ptr, lw->i32, lw->ptr, lw->ptr},
                         (LLVMValueRef[]){e->cx, fp, ci32(lw, nargs), av, out});
  check(e, ok, n);
  LLVMValueRef tag, pay;
  load_value(e, out, &tag, &pay);
  check_tensor_type(e, out, tag, pay, n);
  return unbox(e, tag, pay, res, n, true);
}

/* x +- a * b where the product a * b (node m) is a temporary only the
 * sum (node u, right after m in its graph) reads: the product tries
 * both in one pass (lang_arith_scaled, as eager mode's I_MUL does with
 * the I_ADD or I_SUB after it, ir/eval.c), leaving the sum's value and
 * whether it did (done) for the sum, which computes itself where not. */
typedef struct Scaled {
  LLVMValueRef done, tag, pay;
} Scaled;

static IrNode *scaled_sum(Em *e, IrNode *m, int *k) {
  IrGraph *g = m->graph;
  int i = 0;
  while (i < g->nnodes && g->nodes[i] != m) i++;
  if (i + 1 >= g->nnodes || ir_map_int(&e->uses, m, 0) != 1) return NULL;
  IrNode *u = g->nodes[i + 1];
  int p = ir_node_prim(u);
  if ((p != IR_P_ADD && p != IR_P_SUB) || u->nin != 3 || u->in[1] == u->in[2] || ir_map_get(&e->fused, u) ||
      ev_switch_inlined(&e->uses, u) || !ev_dead_temporary(&e->uses, &e->shape_uses, m, u))
    return NULL;
  *k = u->in[1] == m ? 1 : u->in[2] == m ? 2 : 0;
  IrNode *x = *k ? u->in[3 - *k] : NULL;
  return x && (x->kind == IR_CONST || ir_map_get(&e->vals, x)) ? u : NULL;
}

/* At the product m (args its operands, dead which of them are dead
 * temporaries): try the sum u (k: the product is its operand k) in one
 * pass; *done holds where it did. */
static bool try_scaled(Em *e, IrNode *m, IrNode *u, int k, JV **args, unsigned dead) {
  Lw *lw = e->lw;
  JV *x = val(e, u->in[3 - k], u);
  if (!x) return false;
  LLVMValueRef av = value_slots(e, 3), out = value_slots(e, 1);
  if (!box_into(e, x, slot_at(e, av, 0), u) || !box_into(e, args[0], slot_at(e, av, 1), m) ||
      !box_into(e, args[1], slot_at(e, av, 2), m))
    return false;
  unsigned how = (k == 1 ? LANG_PRODUCT_FIRST : 0) |
                 (ev_dead_temporary(&e->uses, &e->shape_uses, u->in[3 - k], u) ? LANG_DEAD_X : 0) |
                 (dead & 1 ? LANG_DEAD_A : 0) | (dead & 2 ? LANG_DEAD_B : 0);
  LLVMValueRef r = call(lw, "mist_rt_scaled", lw->i32, 5, (LLVMTypeRef[]){lw->ptr, lw->i32, lw->i32, lw->ptr, lw->ptr},
                        (LLVMValueRef[]){e->cx, ci32(lw, ir_node_prim(u)), ci32(lw, (int)how), av, out});
  /* an error (-1) is the product's, as in eager mode */
  check(e, LLVMBuildICmp(lw->B, LLVMIntNE, r, ci32(lw, -1), ""), m);
  Scaled *sc = lang_alloc(sizeof *sc);
  sc->done = LLVMBuildICmp(lw->B, LLVMIntEQ, r, ci32(lw, 1), "");
  load_value(e, out, &sc->tag, &sc->pay);
  ir_map_put(&e->scaled, u, sc);
  return true;
}

static JV *prim_call(Em *e, int p, int nargs, JV **args, Rep *res, IrNode *n);
static JV *join2(Em *e, JV *fast, LLVMBasicBlockRef fast_end, JV *slow, LLVMBasicBlockRef slow_end);

/* Primitive p on boxed arguments, the result unboxed as res; for a
 * product the sum after it may take in one pass (scaled_sum), where it
 * did not, and for that sum, where the product did not do it. */
static JV *prim_boxed(Em *e, int p, int nargs, JV **args, Rep *res, IrNode *n) {
  Lw *lw = e->lw;
  Scaled *sc = ir_map_get(&e->scaled, n);
  int k;
  /* (only a product of boxed values, made where the code runs straight:
   * an int product's slow path is no place for it) */
  bool boxed = nargs == 2 && res->kind == R_VALUE &&
               (args[0]->rep->kind == R_VALUE || args[1]->rep->kind == R_VALUE);
  IrNode *u = p == IR_P_MUL && boxed && !sc ? scaled_sum(e, n, &k) : NULL;
  if (!sc && !u) return prim_call(e, p, nargs, args, res, n);
  unsigned dead = 0;
  for (int i = 0; u && i < 2; i++)
    if (ev_dead_temporary(&e->uses, &e->shape_uses, n->in[1 + i], n)) dead |= 1u << i;
  if (u && !try_scaled(e, n, u, k, args, dead)) return NULL;
  LLVMValueRef done = u ? ((Scaled *)ir_map_get(&e->scaled, u))->done : sc->done;
  if (sc) ir_map_put(&e->scaled, n, NULL);   /* (a graph emitted again tries again) */
  LLVMBasicBlockRef yes = new_block(e, "scaled"), no = new_block(e, "apart");
  LLVMBuildCondBr(lw->B, done, yes, no);
  LLVMPositionBuilderAtEnd(lw->B, no);
  JV *apart = prim_call(e, p, nargs, args, res, n);
  if (!apart) return NULL;
  LLVMBasicBlockRef no_end = LLVMGetInsertBlock(lw->B);
  LLVMPositionBuilderAtEnd(lw->B, yes);
  JV *r;
  if (u) {
    /* the product is not made: nothing reads it (its value is None) */
    r = coerce(e, jv_new(&r_none), res, n);
  } else {
    LLVMValueRef slot = value_slots(e, 1);
    store_value(e, slot, sc->tag, sc->pay);
    check_tensor_type(e, slot, sc->tag, sc->pay, n);
    r = unbox(e, sc->tag, sc->pay, res, n, true);
  }
  if (!r) return NULL;
  return join2(e, r, LLVMGetInsertBlock(lw->B), apart, no_end);
}

/* Primitive p on boxed arguments, the result unboxed as res.  As in
 * eager mode, + - * may write a tensor result over an operand that is a
 * temporary nothing reads afterwards, and the sensitivity of an
 * activation (P_OVER_D) over its d (ev_dead_temporary). */
static JV *prim_call(Em *e, int p, int nargs, JV **args, Rep *res, IrNode *n) {
  Lw *lw = e->lw;
  LLVMValueRef av = value_slots(e, nargs), out = value_slots(e, 1);
  for (int i = 0; i < nargs; i++)
    if (!box_into(e, args[i], slot_at(e, av, i), n)) return NULL;
  sync_depth(e, e->depth);
  unsigned dead = 0;
  bool arith = (p == IR_P_ADD || p == IR_P_SUB || p == IR_P_MUL) && nargs == 2;
  for (int i = 0; i < nargs && i < 2; i++)
    if ((arith || (i == 0 && (ir_prims[p].flags & P_OVER_D))) &&
        ev_dead_temporary(&e->uses, &e->shape_uses, n->in[1 + i], n))
      dead |= 1u << i;
  const char *fn = !dead ? "mist_rt_prim" : arith ? "mist_rt_arith_reusing" : "mist_rt_prim_over_d";
  LLVMValueRef ok = call(lw, fn, lw->i1, 5, (LLVMTypeRef[]){lw->ptr, lw->i32, lw->i32, lw->ptr, lw->ptr},
                         (LLVMValueRef[]){e->cx, ci32(lw, p), ci32(lw, dead && arith ? (int)dead : nargs), av, out});
  check(e, ok, n);
  LLVMValueRef tag, pay;
  load_value(e, out, &tag, &pay);
  check_tensor_type(e, out, tag, pay, n);
  return unbox(e, tag, pay, res, n, true);
}

static bool typed_graph(Lw *lw, IrGraph *g) { return ir_map_get(&lw->typed, g) != NULL; }

/* At a join of nv paths, each ending in ends[i] with vals[i] (of Rep
 * r): the value, a phi per leaf. */
static JV *joined(Em *e, Rep *r, JV **vals, LLVMBasicBlockRef *ends, int nv) {
  JV *out = jv_new(r);
  LLVMTypeRef *lt = leaf_type_array(e->lw, r);
  for (int i = 0; i < r->nleaves; i++) {
    out->v[i] = LLVMBuildPhi(e->lw->B, lt[i], "");
    for (int c = 0; c < nv; c++) LLVMAddIncoming(out->v[i], &vals[c]->v[i], &ends[c], 1);
  }
  return out;
}

/* ---- calls of closures that captured values ----
 *
 * A closure that captured values is boxed (the interpreter's ObjFunc),
 * but when inference knows its graph, or the few graphs it may be of
 * (`@a | @b`: the backpropagators of a loop's turns, the continuation of
 * a backward pass), the call need not go through the interpreter: the
 * closure's graph is compared with each, its captured values unboxed
 * from its env, and that graph's frame called natively.  A closure of
 * another graph (never, when inference is right) is called through the
 * runtime.  The closure may be of the program's graph (made by the
 * interpreter, or by compiled code: box) or of the copy itself. */

enum { MAX_TARGETS = 10 };

typedef struct Target {
  IrGraph *k;          /* the copy whose frame runs */
  IrGraph *o;          /* a graph the closure may be of */
  int *order;          /* where k's free variable j is in o's env; NULL: j */
  Rep **fvrep;
} Target;

/* The reps of k's free variables, or NULL (and no reason kept) when one
 * has none. */
static Rep **fv_reps(Lw *lw, IrGraph *k) {
  const char *why = lw->why;
  Rep **fr = lang_alloc((size_t)(k->nfv ? k->nfv : 1) * sizeof *fr);
  for (int j = 0; j < k->nfv; j++) {
    IrType *t = type_of(lw, k->fv[j]);
    if (!t || !(fr[j] = rep_of(lw, t, k->fv[j]))) {
      lw->why = why;
      return NULL;
    }
  }
  return fr;
}

/* Whether a value of Rep r holds the tape of a loop in another loop's
 * turn, which a boxed value cannot become (unbox). */
static bool holds_cont(const Rep *r) {
  if (r->kind == R_TAPE) return r->cont != NULL;
  for (int i = 0; i < r->n; i++)
    if (holds_cont(r->items[i])) return true;
  return false;
}

static int call_targets(Lw *lw, IrType *ft, int nargs, bool tail, Target *out) {
  if (!ft || ft->or_none || ft->or_unbound) return 0;
  IrType *one[1] = {ft};
  IrType **items = ft->kind == IT_FNSET ? ft->items : one;
  int n = ft->kind == IT_FNSET ? ft->n : ft->kind == IT_CLOSURE ? 1 : 0, m = 0;
  if (n > MAX_TARGETS / 2) return 0;
  for (int i = 0; i < n; i++) {
    if (items[i]->kind != IT_CLOSURE) return 0;
    IrGraph *k = items[i]->graph;
    if (!typed_graph(lw, k) || k->nparams != nargs || (tail && (k->flags & IRG_FUNCTION))) return 0;
    ir_free_vars(k);
    Rep **fr = fv_reps(lw, k);
    if (!fr) return 0;
    bool cont = false;
    for (int j = 0; j < k->nfv; j++) cont |= holds_cont(fr[j]);
    if (cont) continue;   /* (through the runtime) */
    IrGraph *o = k;
    int *order = closure_origin(lw, &o);
    out[m++] = (Target){k, k, NULL, fr};
    if (order) out[m++] = (Target){k, o, order, fr};
  }
  return m;
}

/* Whether a call of graph k over free variables of reps fvrep runs
 * e's own frame. */
static bool self_frame(Em *e, IrGraph *k, Rep **fvrep) {
  Frame *f = e->f;
  if (f->g != k || (k->flags & (IRG_FUNCTION | IRG_MODULE))) return false;
  for (int i = 0; i < f->nfv; i++)
    if (!rep_eq(f->fvrep[i], fvrep[i])) return false;
  return true;
}

/* A tail call of e's own frame with new arguments and free variables:
 * round to its start (its own block's phis). */
static bool jump_to_start(Em *e, JV **args, JV **fvs, IrNode *n) {
  Lw *lw = e->lw;
  Frame *f = e->f;
  Block *bk = e->start;
  int nl = leaves(f->prep, f->np), nfl = leaves(f->fvrep, f->nfv);
  LLVMValueRef *in = lang_alloc((size_t)(nl + nfl + 1) * sizeof *in);
  if (!frame_leaves(e, f, args, fvs, n, in)) return false;
  poll(e, n);
  LLVMBasicBlockRef from = LLVMGetInsertBlock(lw->B);
  for (int i = 0; i < nl; i++) LLVMAddIncoming(bk->phis[i], &in[i], &from, 1);
  for (int i = 0; i < nfl; i++) LLVMAddIncoming(bk->fvphis[i], &in[nl + i], &from, 1);
  LLVMBuildBr(lw->B, bk->bb);
  return true;
}

static JV *call_captured(Em *e, IrNode *n, JV *f, int nargs, JV **args, bool tail, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  Target tg[MAX_TARGETS];
  int nt = call_targets(lw, type_of(lw, n->in[0]), nargs, tail, tg);
  if (!nt) return NULL;
  LLVMValueRef obj = LLVMBuildIntToPtr(B, f->v[1], lw->ptr, "closure");
  LLVMBasicBlockRef isobj = new_block(e, "isobj"), isfn = new_block(e, "isfn"), other = new_block(e, "othercall");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntEQ, f->v[0], ci64(lw, V_OBJ), ""), isobj, other);
  LLVMPositionBuilderAtEnd(B, isobj);
  LLVMValueRef kind = LLVMBuildLoad2(B, lw->i8, obj, "kind");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntEQ, kind, LLVMConstInt(lw->i8, O_FUNC, false), ""), isfn, other);
  LLVMPositionBuilderAtEnd(B, isfn);
  LLVMValueRef graph = LLVMBuildLoad2(B, lw->ptr, LLVMBuildGEP2(B, lw->i8, obj, (LLVMValueRef[]){ci64(lw, offsetof(ObjFunc, graph))}, 1, ""), "graph");
  JV **vals = lang_alloc((size_t)(nt + 1) * sizeof *vals);
  LLVMBasicBlockRef *ends = lang_alloc((size_t)(nt + 1) * sizeof *ends);
  int nv = 0;
  LLVMValueRef guarded = e->guarded;
  for (int t = 0; t < nt; t++) {
    /* the graph, from the constants (code keeps no addresses) */
    int kc = add_const(lw, graph_value(tg[t].o));
    LLVMValueRef og = LLVMBuildLoad2(B, lw->ptr, LLVMBuildGEP2(B, lw->i8, LLVMBuildIntToPtr(B, const_word(lw, e, kc, 1), lw->ptr, ""),
                                                                (LLVMValueRef[]){ci64(lw, offsetof(ObjGraph, graph))}, 1, ""), "");
    LLVMBasicBlockRef yes = new_block(e, "known"), no = new_block(e, "next");
    LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntEQ, graph, og, ""), yes, no);
    LLVMPositionBuilderAtEnd(B, yes);
    e->guarded = guarded;
    IrGraph *k = tg[t].k;
    JV **fvs = lang_alloc((size_t)(k->nfv ? k->nfv : 1) * sizeof *fvs);
    for (int j = 0; j < k->nfv; j++) {
      int at = tg[t].order ? tg[t].order[j] : j;
      LLVMValueRef p = LLVMBuildGEP2(B, lw->i8, obj, (LLVMValueRef[]){ci64(lw, (int64_t)(offsetof(ObjFunc, env) + 16 * (size_t)at))}, 1, "");
      LLVMValueRef tag, pay;
      load_value(e, p, &tag, &pay);
      if (!(fvs[j] = unbox(e, tag, pay, tg[t].fvrep[j], n, true))) return NULL;
    }
    if (tail && self_frame(e, k, tg[t].fvrep)) {
      /* the same frame again, which the interpreter reuses: a jump to
       * its start, so a backward pass of n turns runs in one frame */
      if (!jump_to_start(e, args, fvs, n)) return NULL;
      LLVMPositionBuilderAtEnd(B, no);
      continue;
    }
    JV *r = call_graph(e, k, tg[t].fvrep, args, fvs, n, tail ? CALL_SAME : CALL_PLAIN, res);
    if (!r) return NULL;
    vals[nv] = r;
    ends[nv++] = LLVMGetInsertBlock(B);
    LLVMPositionBuilderAtEnd(B, no);
  }
  LLVMBuildBr(B, other);
  LLVMPositionBuilderAtEnd(B, other);
  e->guarded = NULL;
  JV *r = call_boxed(e, f, nargs, args, res, n);
  if (!r) return NULL;
  vals[nv] = r;
  ends[nv++] = LLVMGetInsertBlock(B);
  LLVMBasicBlockRef join = new_block(e, "called");
  for (int t = 0; t < nv; t++) {
    LLVMPositionBuilderAtEnd(B, ends[t]);
    LLVMBuildBr(B, join);
  }
  LLVMPositionBuilderAtEnd(B, join);
  e->guarded = NULL;
  return joined(e, res, vals, ends, nv);
}

/* ---- the tape of a loop's backward pass ----
 *
 * The forward pass of a differentiated loop makes on each turn a
 * closure of the turn's backpropagator graph B, which captures the
 * values the backward step needs and the continuation k it was given
 * (the previous turn's backpropagator, or for the first turn another
 * closure A): k is typed `@A | @B`.  Compiled code keeps such a k as a
 * tape (R_TAPE): the values of the turns, unboxed, in a buffer
 * (tape.c), a count of turns, and the first turn's continuation,
 * boxed.  Making the closure of B over k appends an entry; calling a
 * tape of n > 0 turns runs B over entry n - 1 with the tape of n - 1
 * turns as its k (in B's own frame, a jump to its start), and of none
 * calls the continuation.  A closure that holds a tape is kept as its
 * captured values too (its type's Rep), so that a backward pass
 * returned from a frame (J(f)'s result) keeps its tape.  Where a tape
 * must be boxed (it leaves compiled code, or goes where a boxed value
 * goes) it becomes the chain of closures eager mode makes, of the
 * program's graph B, each over the one before (box_tape); a boxed one
 * becomes a tape of no turns over it.  A turn's values are its
 * entry, leaf by leaf (8 bytes each); where they hold pointers (boxed
 * values, tapes) the collector scans the buffer.
 *
 * A loop in another loop's turn keeps its first turn's continuation
 * unboxed (the Rep's cont: a closure over the outer loop's tape, or
 * over a union of an if's branches before the loop that captured it),
 * and in the outer loop's turn its tape is a part of the entry, the
 * outer turn's hole inside its cont (tape_over); that turn may hold it
 * through a union (an if after the inner loop, a break out of it), and
 * the outer loop may itself be in a third loop's turn.
 *
 * A turn (the tape's Rep's turn) is B's closure with R_HOLE for k, or,
 * for a loop whose body has an if, a union (R_UNION) of the branches'
 * closures, each with its hole, or a closure of the code after the if
 * that captured such a union: its entry is the union's which, then
 * each closure's values.  A backward step tail-called through a tape
 * or a union runs as blocks of the calling frame (jump_to_turn), so
 * the backward pass goes round in one frame whichever branch each
 * turn took. */

/* Whether values of Rep r can be kept in a tape's entry: anything but
 * a value of no fixed size; *boxed is set where one holds a pointer
 * (a boxed value, a tape), which the collector must see in the buffer. */
static bool entry_rep(const Rep *r, bool *boxed) {
  switch (r->kind) {
  case R_NEVER: case R_NONE: case R_UNBOUND: case R_BOOL: case R_INT: case R_FLOAT: case R_BUILTIN: case R_HOLE:
    return true;
  case R_VALUE: *boxed = true; return true;
  case R_TAPE: *boxed = true; return !r->cont || entry_rep(r->cont, boxed);
  case R_CLOSURE: case R_TUPLE: case R_MAYBE: case R_UNION:
    for (int i = 0; i < r->n; i++)
      if (!entry_rep(r->items[i], boxed)) return false;
    return true;
  }
  return false;
}

/* How deep the search of a tape's Rep goes through closures that hold
 * tapes: a loop three deep's tape holds its first turn's continuation,
 * which holds the middle loop's tape, which holds the outer loop's,
 * whose turn holds the middle loop's tape, whose turn holds the inner
 * loop's exit. */
enum { MAX_TAPE_NEST = 9, MAX_HOLE_NEST = 6 };

/* The Rep of a value of type t, with no reason kept when it has none.
 * Tapes nest (a closure holding one is captured by a turn of another):
 * the nesting of closures is bounded (the values they captured beside
 * are not: a turn's floats at the bound are floats still). */
static Rep *quiet_rep(Lw *lw, IrType *t, IrNode *at) {
  if (!t || (lw->tape_nest > MAX_TAPE_NEST && (t->kind == IT_CLOSURE || t->kind == IT_FNSET))) return NULL;
  const char *why = lw->why;
  lw->tape_nest++;
  Rep *r = rep_of(lw, t, at);
  lw->tape_nest--;
  lw->why = why;
  return r;
}

/* The reps of g's free variables, or NULL. */
static Rep **tape_fv_reps(Lw *lw, IrGraph *g) {
  ir_free_vars(g);
  Rep **fr = lang_alloc((size_t)(g->nfv ? g->nfv : 1) * sizeof *fr);
  for (int j = 0; j < g->nfv; j++)
    if (!(fr[j] = quiet_rep(lw, type_of(lw, g->fv[j]), g->fv[j]))) return NULL;
  return fr;
}

static Rep *closure_rep(IrGraph *g, Rep **fr) {
  Rep *r = rep_new(R_CLOSURE, g->nfv, fr);
  r->graph = g;
  return r;
}

/* Whether a value of Rep r holds a tape: the closures that captured
 * values kept unboxed are those. */
static bool holds_tape(const Rep *r) {
  return r->kind == R_TAPE || r->kind == R_UNION || (r->kind == R_CLOSURE && r->n > 0);
}

static bool in_loop(Lw *lw, IrType *t, int depth);

/* Whether values typed x captured, through the closures they hold, a
 * value typed t (the search bounded). */
static bool holds_type(Lw *lw, IrType *x, IrType *t, int depth) {
  if (ir_type_eq(x, t)) return true;
  if (depth > 6 || (x->kind != IT_FNSET && x->kind != IT_CLOSURE)) return false;
  IrType *one[1] = {x};
  IrType **items = x->kind == IT_FNSET ? x->items : one;
  int n = x->kind == IT_FNSET ? x->n : 1;
  for (int i = 0; i < n; i++) {
    if (items[i]->kind != IT_CLOSURE || !typed_graph(lw, items[i]->graph)) continue;
    IrGraph *g = items[i]->graph;
    ir_free_vars(g);
    for (int j = 0; j < g->nfv; j++) {
      IrType *ft = type_of(lw, g->fv[j]);
      if (ft && holds_type(lw, ft, t, depth + 1)) return true;
    }
  }
  return false;
}

/* Whether a value typed x that the first turn's continuation of a loop
 * (typed t) captured goes on into the turn of another loop: the closures
 * of an if's branches, or of another loop's turns; or the backward step
 * of a branch (a loop after `if c: continue`) that captured the
 * continuation of a loop whose turns hold this loop's (a closure that
 * goes on to a loop before this one, after which it ran, is kept
 * boxed: once, not once a turn). */
static bool goes_on(Lw *lw, IrType *x, IrType *t) {
  if (x->kind == IT_FNSET) return in_loop(lw, x, 0);
  return x->kind == IT_CLOSURE && in_loop(lw, x, 0) && holds_type(lw, x, t, 0);
}

/* Whether the first turn's continuation a (of graph A) of the loop
 * whose continuation is typed t goes back into the turn of another loop
 * (it captured, maybe through an if's backward step, that loop's
 * continuation: goes_on), or after another loop: the
 * loop runs inside another's turn.  Its tape keeps a unboxed (cont_rep)
 * where that loop is on a tape, the tape then a part of that loop's
 * turn; else it keeps its closures (the outer turn, boxed on every
 * turn, would box this loop's tape too, making again on every outer
 * turn the closures a tape saves). */
static bool inside_turn(Lw *lw, IrGraph *a, IrType *t) {
  ir_free_vars(a);
  for (int j = 0; j < a->nfv; j++) {
    IrType *ft = type_of(lw, a->fv[j]);
    if (!ft || goes_on(lw, ft, t)) return true;
  }
  return false;
}

/* Whether a closure typed t (of one of a few graphs) goes on, through
 * the closures it captured, into a loop's continuation (the type of
 * which one of its graphs captured itself): else it is, say, the
 * backward step of an if before the loop in the function's body, not
 * in a turn, and boxing it costs once. */
static bool in_loop(Lw *lw, IrType *t, int depth) {
  IrType *one[1] = {t};
  IrType **items = t->kind == IT_FNSET ? t->items : one;
  int n = t->kind == IT_FNSET ? t->n : t->kind == IT_CLOSURE ? 1 : 0;
  if (depth > 4 || t->or_none || t->or_unbound) return true;   /* (unknown: as though it did) */
  for (int i = 0; i < n; i++) {
    if (items[i]->kind != IT_CLOSURE) return true;
    IrGraph *g = items[i]->graph;
    ir_free_vars(g);
    for (int j = 0; j < g->nfv; j++) {
      IrType *ft = type_of(lw, g->fv[j]);
      if (!ft || (t->kind == IT_FNSET && ir_type_eq(ft, t))) return true;
      if ((ft->kind == IT_FNSET || ft->kind == IT_CLOSURE) && in_loop(lw, ft, depth + 1)) return true;
    }
  }
  return false;
}

enum { MAX_UNION = 4 };

static Rep *turn_union(Lw *lw, IrType *ft, IrType *t);
static Rep *tape_over(Lw *lw, IrType *t, IrType *hole);

/* The Rep of a turn's backpropagator of graph g that captured the
 * continuation typed t once: its free variables' reps, R_HOLE for the
 * continuation, which may be inside another free variable instead (an
 * if's backpropagator, turn_union, whose branch may hold the tape of a
 * loop it ran; the tape of a loop the turn ran, whose first turn's
 * continuation captured it, tape_over; a closure holding either);
 * NULL where g is no such turn. */
static Rep *turn_rep(Lw *lw, IrGraph *g, IrType *t) {
  if (!typed_graph(lw, g)) return NULL;
  ir_free_vars(g);
  Rep **fr = lang_alloc((size_t)(g->nfv ? g->nfv : 1) * sizeof *fr);
  int holes = 0;
  for (int j = 0; j < g->nfv; j++) {
    IrType *ft = type_of(lw, g->fv[j]);
    if (!ft) return NULL;
    fr[j] = ir_type_eq(ft, t) ? &r_hole : NULL;
    if (!fr[j] && ft->kind == IT_FNSET && lw->hole_nest < MAX_HOLE_NEST) {
      /* the backpropagator of an if (a union of its branches'), or the
       * tape of a loop the turn ran (the types of continuations refer
       * to each other: the search is bounded) */
      lw->hole_nest++;
      fr[j] = tape_over(lw, ft, t);
      if (!fr[j]) fr[j] = turn_union(lw, ft, t);
      lw->hole_nest--;
    }
    if (!fr[j] && ft->kind == IT_CLOSURE && lw->tape_nest <= MAX_TAPE_NEST) {
      /* a closure that captured such a tape (the backward step of the
       * inner loop's exit) */
      lw->tape_nest++;
      fr[j] = turn_rep(lw, ft->graph, t);
      lw->tape_nest--;
    }
    if (fr[j]) holes++;
    else if (!(fr[j] = quiet_rep(lw, ft, g->fv[j]))) return NULL;
  }
  return holes == 1 ? closure_rep(g, fr) : NULL;
}

/* The leaves of a value of Rep r but those of the tapes it holds. */
static int leaves_but_tapes(const Rep *r) {
  switch (r->kind) {
  case R_TAPE: case R_HOLE: return 0;
  case R_CLOSURE: case R_TUPLE: case R_MAYBE: case R_UNION: {
    int k = r->kind == R_MAYBE || r->kind == R_UNION;
    for (int i = 0; i < r->n; i++) k += leaves_but_tapes(r->items[i]);
    return k;
  }
  default: return r->nleaves;
  }
}

/* Whether a union of closures is kept unboxed (union_rep): a union is
 * as many registers as its graphs' values together, and every closure
 * boxed becoming one would make code far larger than the boxes it
 * saves.  The tapes they hold are not counted, so that the forward
 * pass's union (a tape where the turn has its hole, and tapes whose
 * first turn's continuation holds the loop's tape, and so on) and the
 * turn's agree. */
static bool union_fits(const Rep *u) {
  enum { MAX_LEAVES = 24 };
  return leaves_but_tapes(u) <= MAX_LEAVES;
}

/* The Rep of the backpropagator of an `if` in a loop's turn, typed ft
 * (`@J.f.if6.back | @J.f.else7.back`), each of whose graphs captured
 * the loop's continuation typed t: the union of their turns, or NULL.
 * Only where the forward pass keeps that backpropagator as a union too
 * (union_fits): a turn whose union came boxed would not fit its tape. */
static Rep *turn_union(Lw *lw, IrType *ft, IrType *t) {
  if (ft->kind != IT_FNSET || ft->n < 2 || ft->n > MAX_UNION || ft->or_none || ft->or_unbound) return NULL;
  Rep **items = lang_alloc((size_t)ft->n * sizeof *items);
  for (int i = 0; i < ft->n; i++)
    if (ft->items[i]->kind != IT_CLOSURE || !(items[i] = turn_rep(lw, ft->items[i]->graph, t))) return NULL;
  Rep *r = rep_new(R_UNION, ft->n, items);
  return union_fits(r) ? r : NULL;
}

/* The Rep of the first turn's continuation of a loop (typed t) in
 * another loop's turn, a closure of graph a that captured the
 * continuation of that turn: its captured values, that continuation a
 * tape, or R_HOLE where hole is its type (in the Rep of that loop's
 * turn); or, where an if ran before the loop in that turn, the union of
 * the branches' backward steps, or the closure of the one branch that
 * goes on to it (`if c: continue`), over that continuation.  NULL where
 * that loop is not on a tape (its turns, boxed, would box this loop's
 * tape too, making on every outer turn the closures a tape saves). */
static Rep *cont_rep(Lw *lw, IrGraph *a, IrType *t, IrType *hole) {
  ir_free_vars(a);
  Rep **fr = lang_alloc((size_t)(a->nfv ? a->nfv : 1) * sizeof *fr);
  int tapes = 0;
  for (int j = 0; j < a->nfv; j++) {
    IrType *ft = type_of(lw, a->fv[j]);
    if (!ft) return NULL;
    if (!goes_on(lw, ft, t)) {
      if (!(fr[j] = quiet_rep(lw, ft, a->fv[j]))) return NULL;
      continue;
    }
    tapes++;
    if (!hole) {
      fr[j] = quiet_rep(lw, ft, a->fv[j]);
    } else if (ir_type_eq(ft, hole)) {
      fr[j] = &r_hole;
    } else if (ft->kind == IT_FNSET && lw->hole_nest < MAX_HOLE_NEST) {
      lw->hole_nest++;
      fr[j] = turn_union(lw, ft, hole);
      lw->hole_nest--;
    } else if (ft->kind == IT_CLOSURE && lw->tape_nest <= MAX_TAPE_NEST) {
      lw->tape_nest++;
      fr[j] = turn_rep(lw, ft->graph, hole);
      lw->tape_nest--;
    } else {
      fr[j] = NULL;
    }
    /* (a union or a closure there holds the tape: union_rep,
     * tape_closure_rep) */
    if (!fr[j] || (fr[j]->kind != R_TAPE && fr[j]->kind != R_HOLE && fr[j]->kind != R_UNION &&
                   !(fr[j]->kind == R_CLOSURE && fr[j]->n > 0)))
      return NULL;
  }
  return tapes == 1 ? closure_rep(a, fr) : NULL;
}

/* The Rep of a continuation typed t = `@A | @B` (or `@A | @B1 | @B2`,
 * a turn that ended in either branch of an if) that is a tape of the
 * B's turns, or NULL.  Where A captured the continuation of another
 * loop's turn (the loop runs in that turn) A's closure is kept
 * unboxed, the tape's cont, with R_HOLE for it where its type is hole
 * (the tape is in the Rep of that loop's turn), else that loop's
 * tape. */
static Rep *tape_search(Lw *lw, IrType *t, IrType *hole) {
  if (t->kind != IT_FNSET || t->n < 2 || t->n > MAX_UNION + 1 || t->or_none || t->or_unbound) return NULL;
  for (int a = 0; a < t->n; a++) {
    IrType *at = t->items[a];
    if (at->kind != IT_CLOSURE || !typed_graph(lw, at->graph)) continue;
    bool inside = inside_turn(lw, at->graph, t);
    if (hole && !inside) continue;
    if (inside && !lw->flat) continue;
    Rep **turns = lang_alloc((size_t)t->n * sizeof *turns);
    int m = 0;
    bool ok = true;
    for (int b = 0; b < t->n && ok; b++) {
      IrType *bt = t->items[b];
      if (b == a) continue;
      ok = bt->kind == IT_CLOSURE && bt->graph->nparams == at->graph->nparams &&
           (turns[m++] = turn_rep(lw, bt->graph, t));
    }
    if (!ok) continue;
    Rep *turn = m == 1 ? turns[0] : rep_new(R_UNION, m, turns);
    bool boxed = false;
    if (!entry_rep(turn, &boxed)) continue;
    Rep *cont = NULL;
    if (inside && !(cont = cont_rep(lw, at->graph, t, hole))) continue;
    Rep *r = rep_new(R_TAPE, 0, NULL);
    r->nleaves = 2 + (cont ? cont->nleaves : 2);
    r->graph = turns[0]->graph;
    r->turn = turn;
    r->cont = cont;
    r->unbound = boxed;   /* (R_TAPE: its buffer is scanned) */
    return r;
  }
  return NULL;
}

/* tape_over's answer for t and hole at a depth of the search: the
 * search goes through the same types again and again (a continuation's
 * type refers to the other loops'), which without the answers kept
 * took time exponential in the loops' nesting. */
typedef struct TapeMemo {
  IrType *t, *hole;
  int tape_nest, hole_nest;
  Rep *r;
} TapeMemo;

static Rep *tape_over(Lw *lw, IrType *t, IrType *hole) {
  for (int i = 0; i < lw->ntapes; i++) {
    TapeMemo *m = &lw->tapes[i];
    if (m->t == t && m->hole == hole && m->tape_nest == lw->tape_nest && m->hole_nest == lw->hole_nest) return m->r;
  }
  Rep *r = tape_search(lw, t, hole);
  if (lw->ntapes == lw->captapes) {
    lw->captapes = lw->captapes ? 2 * lw->captapes : 32;
    lw->tapes = lang_realloc(lw->tapes, (size_t)lw->captapes * sizeof *lw->tapes);
  }
  lw->tapes[lw->ntapes++] = (TapeMemo){t, hole, lw->tape_nest, lw->hole_nest, r};
  return r;
}

static Rep *tape_rep(Lw *lw, IrType *t) { return tape_over(lw, t, NULL); }

/* The Rep of a closure typed t (that captured values) when one of them
 * is a tape, or a closure holding one: its captured values; else NULL
 * (it is boxed). */
static Rep *tape_closure_rep(Lw *lw, IrType *t) {
  IrGraph *g = t->graph;
  if (!typed_graph(lw, g)) return NULL;
  Rep **fr = tape_fv_reps(lw, g);
  if (!fr) return NULL;
  bool tape = false;
  for (int j = 0; j < g->nfv; j++) tape |= holds_tape(fr[j]);
  return tape ? closure_rep(g, fr) : NULL;
}

/* The Rep of a closure typed t = `@a | @b` of known graphs each of
 * which captured a tape (the backward passes of an if's branches in a
 * loop's turn, each over the loop's tape): the union of theirs; else
 * NULL (it is boxed).  Only those: a union is as many registers as
 * its graphs' values together, and every closure boxed becoming one
 * would make code far larger than the boxes it saves. */
static Rep *union_rep(Lw *lw, IrType *t) {
  if (t->n < 2 || t->n > MAX_UNION || t->or_none || t->or_unbound) return NULL;
  Rep **items = lang_alloc((size_t)t->n * sizeof *items);
  for (int i = 0; i < t->n; i++) {
    IrType *it = t->items[i];
    if (it->kind != IT_CLOSURE || !typed_graph(lw, it->graph)) return NULL;
    Rep **fr = tape_fv_reps(lw, it->graph);
    if (!fr) return NULL;
    bool tape = false;
    for (int j = 0; j < it->graph->nfv; j++) tape |= holds_tape(fr[j]);
    if (!tape) return NULL;
    items[i] = closure_rep(it->graph, fr);
  }
  Rep *r = rep_new(R_UNION, t->n, items);
  return union_fits(r) ? r : NULL;
}

/* Turn's Rep with its continuation's Rep kc in its hole. */
static bool has_hole(const Rep *r);

static Rep *filled_rep(Rep *turn, Rep *kc) {
  if (turn->kind == R_HOLE) return kc;
  if (turn->kind == R_TAPE) {
    if (!has_hole(turn)) return turn;
    Rep *r = rep_new(R_TAPE, 0, NULL);
    *r = *turn;
    r->cont = filled_rep(turn->cont, kc);
    r->nleaves = 2 + r->cont->nleaves;
    return r;
  }
  if (turn->kind != R_CLOSURE && turn->kind != R_UNION) return turn;
  Rep **items = lang_alloc((size_t)(turn->n ? turn->n : 1) * sizeof *items);
  for (int i = 0; i < turn->n; i++) items[i] = filled_rep(turn->items[i], kc);
  Rep *r = rep_new(turn->kind, turn->n, items);
  r->graph = turn->graph;
  return r;
}

/* Whether a part of a turn holds its hole (else it is a value the
 * turn captured, a union of closures included). */
static bool has_hole(const Rep *r) {
  if (r->kind == R_HOLE) return true;
  if (r->kind == R_TAPE) return r->cont && has_hole(r->cont);
  if (r->kind != R_UNION && r->kind != R_CLOSURE) return false;
  for (int i = 0; i < r->n; i++)
    if (has_hole(r->items[i])) return true;
  return false;
}

/* Whether tapes of turns a and b keep them alike: copies of the same
 * graphs, with their free variables in the same order. */
static bool turns_alike(Lw *lw, const Rep *a, const Rep *b) {
  if (a->kind != b->kind || a->n != b->n) return false;
  if (a->kind == R_TAPE)
    return a->unbound == b->unbound && turns_alike(lw, a->turn, b->turn) &&
           (a->cont ? b->cont && turns_alike(lw, a->cont, b->cont) : !b->cont);
  if (a->kind == R_CLOSURE) {
    int *order = copy_order(lw, a, b);
    if (!order) return false;
    for (int j = 0; j < b->n; j++)
      if (order[j] != j) return false;
  }
  if (a->kind != R_CLOSURE && a->kind != R_UNION) return rep_eq(a, b);
  for (int i = 0; i < a->n; i++)
    if (!turns_alike(lw, a->items[i], b->items[i])) return false;
  return true;
}

static void turn_names(StrBuf *sb, const Rep *turn);

/* The names of the graphs over a turn's hole inside its free variable
 * r, for the log. */
static void hole_names(StrBuf *sb, const Rep *r) {
  if (!has_hole(r)) return;
  if (r->kind == R_UNION) {
    sb_printf(sb, " over ");
    turn_names(sb, r);
  } else if (r->kind == R_TAPE) {
    /* (the tape of a loop the turn ran, over this one) */
    sb_printf(sb, " over the tape of ");
    turn_names(sb, r->turn);
  } else if (r->kind == R_CLOSURE) {
    for (int i = 0; i < r->n; i++) hole_names(sb, r->items[i]);
  }
}

/* The names of a turn's graphs, for the log. */
static void turn_names(StrBuf *sb, const Rep *turn) {
  if (turn->kind == R_UNION) {
    sb_printf(sb, "(");
    for (int i = 0; i < turn->n; i++) {
      if (i) sb_printf(sb, " | ");
      turn_names(sb, turn->items[i]);
    }
    sb_printf(sb, ")");
    return;
  }
  sb_printf(sb, "@%s", turn->graph->name->data);
  for (int i = 0; i < turn->n; i++) hole_names(sb, turn->items[i]);
}

/* A leaf to and from its 8 bytes in an entry. */
static void store_leaf(Lw *lw, LLVMValueRef v, LLVMValueRef p) {
  if (LLVMTypeOf(v) == lw->i1) v = LLVMBuildZExt(lw->B, v, lw->i64, "");
  LLVMBuildStore(lw->B, v, p);
}

static LLVMValueRef load_leaf(Lw *lw, LLVMTypeRef t, LLVMValueRef p) {
  if (t == lw->i1) return LLVMBuildTrunc(lw->B, LLVMBuildLoad2(lw->B, lw->i64, p, ""), lw->i1, "");
  return LLVMBuildLoad2(lw->B, t, p, "");
}

static int64_t entry_bytes(const Rep *t) { return 8 * (int64_t)t->turn->nleaves; }

/* The words of the buffer owner (tape.h). */
static LLVMValueRef tape_words(Em *e, LLVMValueRef owner) { return LLVMBuildIntToPtr(e->lw->B, owner, e->lw->ptr, "words"); }

/* Entry i of the tape whose buffer is owner, given words. */
static LLVMValueRef tape_entry(Em *e, LLVMValueRef words, LLVMValueRef i, const Rep *t) {
  Lw *lw = e->lw;
  LLVMValueRef at = LLVMBuildAdd(lw->B, ci64(lw, 8 * JIT_TAPE_HEAD), LLVMBuildMul(lw->B, i, ci64(lw, entry_bytes(t)), ""), "");
  return LLVMBuildGEP2(lw->B, lw->i8, words, (LLVMValueRef[]){at}, 1, "entry");
}

static LLVMValueRef tape_at(Em *e, LLVMValueRef owner, LLVMValueRef i, const Rep *t) {
  return tape_entry(e, tape_words(e, owner), i, t);
}

/* Where entry count goes on the tape of buffer *owner: where there is
 * room and no entry past count was written, in place; else the
 * runtime's (tape.c), which may make *owner another buffer. */
static LLVMValueRef tape_push(Em *e, LLVMValueRef *owner, LLVMValueRef count, const Rep *t) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  LLVMBasicBlockRef some = new_block(e, "tape"), fast = new_block(e, "room"), slow = new_block(e, "grow"),
                    join = new_block(e, "pushed");
  LLVMValueRef o = *owner;
  likely_br(lw, LLVMBuildICmp(B, LLVMIntNE, o, ci64(lw, 0), ""), some, slow);
  LLVMPositionBuilderAtEnd(B, some);
  LLVMValueRef w = tape_words(e, o);
  LLVMValueRef used = LLVMBuildLoad2(B, lw->i64, w, "used");
  LLVMValueRef room = LLVMBuildLoad2(B, lw->i64, LLVMBuildGEP2(B, lw->i64, w, (LLVMValueRef[]){ci64(lw, 1)}, 1, ""), "room");
  LLVMValueRef ok = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, used, count, ""), LLVMBuildICmp(B, LLVMIntNE, room, count, ""), "");
  likely_br(lw, ok, fast, slow);
  LLVMPositionBuilderAtEnd(B, fast);
  LLVMBuildStore(B, LLVMBuildAdd(B, count, ci64(lw, 1), ""), w);
  LLVMValueRef p1 = tape_entry(e, w, count, t);
  LLVMBuildBr(B, join);
  LLVMPositionBuilderAtEnd(B, slow);
  LLVMValueRef slot = value_slots(e, 1);
  LLVMBuildStore(B, o, slot);
  LLVMValueRef p2 = call(lw, "mist_rt_tape_push", lw->ptr, 4, (LLVMTypeRef[]){lw->ptr, lw->i64, lw->i64, lw->i1},
                         (LLVMValueRef[]){slot, count, ci64(lw, entry_bytes(t)), ci1(lw, t->unbound)});
  LLVMValueRef o2 = LLVMBuildLoad2(B, lw->i64, slot, "tape");
  LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, join);
  LLVMPositionBuilderAtEnd(B, join);
  LLVMValueRef p = LLVMBuildPhi(B, lw->ptr, "entry");
  LLVMAddIncoming(p, (LLVMValueRef[]){p1, p2}, (LLVMBasicBlockRef[]){fast, slow_end}, 2);
  *owner = LLVMBuildPhi(B, lw->i64, "tape");
  LLVMAddIncoming(*owner, (LLVMValueRef[]){o, o2}, (LLVMBasicBlockRef[]){fast, slow_end}, 2);
  return p;
}

/* The leaves of turn (src, from *s on) with the continuation kc's in
 * its hole, into dst from *d on. */
static void fill_turn(const Rep *turn, LLVMValueRef *src, int *s, const JV *kc, LLVMValueRef *dst, int *d) {
  if (turn->kind == R_HOLE) {
    for (int l = 0; l < kc->rep->nleaves; l++) dst[(*d)++] = kc->v[l];
    return;
  }
  if (turn->kind == R_TAPE && has_hole(turn)) {
    /* its buffer and count, then its first turn's continuation */
    dst[(*d)++] = src[(*s)++];
    dst[(*d)++] = src[(*s)++];
    fill_turn(turn->cont, src, s, kc, dst, d);
    return;
  }
  if (turn->kind != R_CLOSURE && turn->kind != R_UNION) {
    for (int l = 0; l < turn->nleaves; l++) dst[(*d)++] = src[(*s)++];
    return;
  }
  if (turn->kind == R_UNION) dst[(*d)++] = src[(*s)++];
  for (int i = 0; i < turn->n; i++) fill_turn(turn->items[i], src, s, kc, dst, d);
}

/* The backpropagator of the turn of tape t whose entry is at p, over
 * the continuation kc. */
static JV *turn_value(Em *e, const Rep *t, LLVMValueRef p, JV *kc) {
  Lw *lw = e->lw;
  Rep *turn = t->turn;
  LLVMTypeRef *lt = leaf_type_array(lw, turn);
  LLVMValueRef *src = lang_alloc((size_t)(turn->nleaves ? turn->nleaves : 1) * sizeof *src);
  for (int l = 0; l < turn->nleaves; l++)
    src[l] = load_leaf(lw, lt[l], LLVMBuildGEP2(lw->B, lw->i8, p, (LLVMValueRef[]){ci64(lw, 8 * l)}, 1, ""));
  JV *y = jv_new(filled_rep(turn, kc->rep));
  int s = 0, d = 0;
  fill_turn(turn, src, &s, kc, y->v, &d);
  return y;
}

/* Blocks for each of a union's n closures, by which: the last one also
 * the default. */
static LLVMBasicBlockRef *union_cases(Em *e, LLVMValueRef which, int n) {
  LLVMBasicBlockRef *bb = lang_alloc((size_t)n * sizeof *bb);
  for (int i = 0; i < n; i++) bb[i] = new_block(e, "which");
  LLVMValueRef sw = LLVMBuildSwitch(e->lw->B, which, bb[n - 1], (unsigned)(n - 1));
  for (int i = 0; i < n - 1; i++) LLVMAddCase(sw, ci64(e->lw, i), bb[i]);
  return bb;
}

/* The union u's value that is the closure m of its i-th graph (the
 * others' leaves zero: an entry the collector scans holds no stale
 * pointer). */
static JV *union_of(Em *e, Rep *u, int i, JV *m) {
  JV *y = jv_new(u);
  LLVMTypeRef *lt = leaf_type_array(e->lw, u);
  y->v[0] = ci64(e->lw, i);
  for (int j = 0, w = 1; j < u->n; j++)
    for (int l = 0; l < u->items[j]->nleaves; l++, w++) y->v[w] = j == i ? m->v[l] : LLVMConstNull(lt[w]);
  return y;
}

/* x as the union u: a closure of one of u's graphs (or of a copy of
 * it), or a union of the same graphs kept otherwise; anything else
 * through its box. */
static JV *to_union(Em *e, JV *x, Rep *u, IrNode *at) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  Rep *from = x->rep;
  if (from->kind == R_CLOSURE)
    for (int i = 0; i < u->n; i++)
      if (ir_graph_origin(from->graph) == ir_graph_origin(u->items[i]->graph)) {
        JV *m = coerce(e, x, u->items[i], at);
        return m ? union_of(e, u, i, m) : NULL;
      }
  bool alike = from->kind == R_UNION && from->n == u->n;
  for (int i = 0; i < u->n && alike; i++)
    alike = ir_graph_origin(from->items[i]->graph) == ir_graph_origin(u->items[i]->graph);
  if (!alike) {
    LLVMValueRef tag, pay;
    return box(e, x, &tag, &pay, at) ? unbox(e, tag, pay, u, at, true) : NULL;
  }
  LLVMBasicBlockRef *bb = union_cases(e, x->v[0], u->n), join = new_block(e, "converted");
  JV **vals = lang_alloc((size_t)u->n * sizeof *vals);
  LLVMBasicBlockRef *ends = lang_alloc((size_t)u->n * sizeof *ends);
  for (int i = 0; i < u->n; i++) {
    LLVMPositionBuilderAtEnd(B, bb[i]);
    JV *m = coerce(e, item_of(x, i), u->items[i], at);
    if (!m) return NULL;
    vals[i] = union_of(e, u, i, m);
    ends[i] = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, join);
  }
  LLVMPositionBuilderAtEnd(B, join);
  return joined(e, u, vals, ends, u->n);
}

/* The first turn's continuation of tape x: as its Rep's cont, or
 * boxed. */
static JV *tape_cont(const JV *x) {
  JV *c = jv_new(x->rep->cont ? x->rep->cont : &r_value);
  for (int l = 0; l < c->rep->nleaves; l++) c->v[l] = x->v[2 + l];
  return c;
}

/* Whether a closure of Rep x is a turn of Rep turn. */
static bool turn_fits(Lw *lw, Rep *x, const Rep *turn) {
  if (turn->kind == R_UNION) {
    if (x->kind == R_UNION) {
      if (x->n != turn->n) return false;
      for (int i = 0; i < x->n; i++)
        if (!turn_fits(lw, x->items[i], turn->items[i])) return false;
      return true;
    }
    for (int i = 0; i < turn->n; i++)
      if (turn_fits(lw, x, turn->items[i])) return true;
    return false;
  }
  int *order = x->kind == R_CLOSURE ? copy_order(lw, x, turn) : NULL;
  if (!order) return false;
  for (int j = 0; j < turn->n; j++) {
    Rep *tj = turn->items[j], *xj = x->items[order[j]];
    if ((tj->kind == R_UNION || tj->kind == R_CLOSURE) && has_hole(tj) && !turn_fits(lw, xj, tj)) return false;
    /* the tape of a loop the turn ran, its first turn's continuation
     * over this tape */
    if (tj->kind == R_TAPE && has_hole(tj) &&
        !(xj->kind == R_TAPE && xj->cont && turns_alike(lw, xj->turn, tj->turn) && turn_fits(lw, xj->cont, tj->cont)))
      return false;
  }
  return true;
}

/* A closure x that fits turn (turn_fits) as turn's leaves, into out
 * from *o on, and the continuation it captured, as the tape t, *k. */
static bool split_turn(Em *e, JV *x, const Rep *turn, Rep *t, LLVMValueRef *out, int *o, JV **k, IrNode *at) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  if (turn->kind == R_CLOSURE) {
    int *order = copy_order(lw, x->rep, turn);
    for (int j = 0; j < turn->n; j++) {
      JV *v = item_of(x, order[j]);
      Rep *r = turn->items[j];
      if (r->kind == R_HOLE) {
        if (!(*k = coerce(e, v, t, at))) return false;
      } else if ((r->kind == R_UNION || r->kind == R_CLOSURE) && has_hole(r)) {
        if (!split_turn(e, v, r, t, out, o, k, at)) return false;
      } else if (r->kind == R_TAPE && has_hole(r)) {
        out[(*o)++] = v->v[0];
        out[(*o)++] = v->v[1];
        if (!split_turn(e, tape_cont(v), r->cont, t, out, o, k, at)) return false;
      } else {
        if (!(v = coerce(e, v, r, at))) return false;
        for (int l = 0; l < r->nleaves; l++) out[(*o)++] = v->v[l];
      }
    }
    return true;
  }
  LLVMTypeRef *lt = leaf_type_array(lw, turn);
  int base = *o;
  if (x->rep->kind != R_UNION) {
    /* a closure of one of the union's graphs */
    int i = 0;
    while (!turn_fits(lw, x->rep, turn->items[i])) i++;
    out[(*o)++] = ci64(lw, i);
    for (int j = 0; j < turn->n; j++) {
      if (j == i) {
        if (!split_turn(e, x, turn->items[j], t, out, o, k, at)) return false;
        continue;
      }
      for (int l = 0; l < turn->items[j]->nleaves; l++, (*o)++) out[*o] = LLVMConstNull(lt[*o - base]);
    }
    return true;
  }
  /* a union of the same graphs: each split where it is that one */
  int n = x->rep->n, nl = turn->nleaves;
  LLVMBasicBlockRef *bb = union_cases(e, x->v[0], n), join = new_block(e, "split");
  LLVMBasicBlockRef *ends = lang_alloc((size_t)n * sizeof *ends);
  LLVMValueRef **outs = lang_alloc((size_t)n * sizeof *outs);
  JV **ks = lang_alloc((size_t)n * sizeof *ks);
  for (int i = 0; i < n; i++) {
    LLVMPositionBuilderAtEnd(B, bb[i]);
    outs[i] = lang_alloc((size_t)nl * sizeof **outs);
    int oi = 0;
    if (!split_turn(e, item_of(x, i), turn, t, outs[i], &oi, &ks[i], at)) return false;
    ends[i] = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, join);
  }
  LLVMPositionBuilderAtEnd(B, join);
  for (int l = 0; l < nl; l++, (*o)++) {
    out[*o] = LLVMBuildPhi(B, lt[l], "");
    for (int i = 0; i < n; i++) LLVMAddIncoming(out[*o], &outs[i][l], &ends[i], 1);
  }
  *k = joined(e, t, ks, ends, n);
  return true;
}

/* x, any value of a continuation a tape t keeps, as that tape: a
 * closure of t's turn appends its turn; anything else is boxed, the
 * tape of no turns over it. */
static JV *to_tape(Em *e, JV *x, Rep *t, IrNode *at) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  JV *y = jv_new(t);
  if (x->rep->kind == R_TAPE && turns_alike(lw, x->rep->turn, t->turn) && !x->rep->cont == !t->cont) {
    /* a tape of other copies of its graphs, whose turns are kept alike */
    JV *c = coerce(e, tape_cont(x), t->cont ? t->cont : &r_value, at);
    if (!c) return NULL;
    y->v[0] = x->v[0];
    y->v[1] = x->v[1];
    for (int l = 0; l < c->rep->nleaves; l++) y->v[2 + l] = c->v[l];
    return y;
  }
  if (!turn_fits(lw, x->rep, t->turn)) {
    y->v[0] = y->v[1] = ci64(lw, 0);
    if (!t->cont) return box(e, x, &y->v[2], &y->v[3], at) ? y : NULL;
    /* the first turn's continuation, kept unboxed */
    if (x->rep->kind != R_CLOSURE || !copy_order(lw, x->rep, t->cont)) {
      lw->unfit = true;
      nope(lw, at, "the backward pass of a loop in another loop's turn kept in another way");
      return NULL;
    }
    JV *c = coerce(e, x, t->cont, at);
    if (!c) return NULL;
    for (int l = 0; l < c->rep->nleaves; l++) y->v[2 + l] = c->v[l];
    return y;
  }
  LLVMValueRef *leaf = lang_alloc((size_t)(t->turn->nleaves ? t->turn->nleaves : 1) * sizeof *leaf);
  int nl = 0;
  JV *k = NULL;
  if (!split_turn(e, x, t->turn, t, leaf, &nl, &k, at)) return NULL;
  const char *file = file_of(lw, at);
  StrBuf names;
  sb_init(&names);
  turn_names(&names, t->turn);
  const char *line = lang_str_fmt("jit: %s (%s:%d): the turns of %s on a tape (%d values a turn)\n", e->f->g->name->data,
                                  file ? file : "?", at ? at->span.line : 0, names.data, nl)->data;
  if (!lw->fuselog.data || !strstr(lw->fuselog.data, line)) sb_printf(&lw->fuselog, "%s", line);
  LLVMValueRef owner = k->v[0];
  LLVMValueRef p = tape_push(e, &owner, k->v[1], t);
  for (int l = 0; l < nl; l++) store_leaf(lw, leaf[l], LLVMBuildGEP2(B, lw->i8, p, (LLVMValueRef[]){ci64(lw, 8 * l)}, 1, ""));
  y->v[0] = owner;
  y->v[1] = LLVMBuildAdd(B, k->v[1], ci64(lw, 1), "turns");
  for (int l = 2; l < t->nleaves; l++) y->v[l] = k->v[l];
  return y;
}

/* Tape x boxed: the chain of closures eager mode makes, the first
 * turn's over the continuation, each later one's over the one before. */
static bool box_tape(Em *e, JV *x, LLVMValueRef *tag, LLVMValueRef *pay, IrNode *at) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  Rep *t = x->rep;
  LLVMValueRef ctag = x->v[2], cpay = x->v[3];
  if (t->cont && !box(e, tape_cont(x), &ctag, &cpay, at)) return false;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(B), head = new_block(e, "chain"), turn = new_block(e, "link"),
                    done = new_block(e, "chained");
  LLVMBuildBr(B, head);
  LLVMPositionBuilderAtEnd(B, head);
  LLVMValueRef i = LLVMBuildPhi(B, lw->i64, "i"), ptag = LLVMBuildPhi(B, lw->i64, "tag"),
               ppay = LLVMBuildPhi(B, lw->i64, "pay");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, i, x->v[1], ""), turn, done);
  LLVMPositionBuilderAtEnd(B, turn);
  JV *kc = jv_new(&r_value);
  kc->v[0] = ptag;
  kc->v[1] = ppay;
  JV *c = turn_value(e, t, tape_at(e, x->v[0], i, t), kc);
  LLVMValueRef ntag, npay;
  if (!box(e, c, &ntag, &npay, at)) return false;
  LLVMValueRef i1 = LLVMBuildAdd(B, i, ci64(lw, 1), "");
  LLVMBasicBlockRef end = LLVMGetInsertBlock(B);
  LLVMBuildBr(B, head);
  LLVMAddIncoming(i, (LLVMValueRef[]){ci64(lw, 0), i1}, (LLVMBasicBlockRef[]){pre, end}, 2);
  LLVMAddIncoming(ptag, (LLVMValueRef[]){ctag, ntag}, (LLVMBasicBlockRef[]){pre, end}, 2);
  LLVMAddIncoming(ppay, (LLVMValueRef[]){cpay, npay}, (LLVMBasicBlockRef[]){pre, end}, 2);
  LLVMPositionBuilderAtEnd(B, done);
  *tag = ptag;
  *pay = ppay;
  return true;
}

/* A union boxed: its closure, boxed where it is that one. */
static bool box_union(Em *e, JV *x, LLVMValueRef *tag, LLVMValueRef *pay, IrNode *at) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  int n = x->rep->n;
  LLVMBasicBlockRef *bb = union_cases(e, x->v[0], n), join = new_block(e, "boxed");
  LLVMValueRef *tags = lang_alloc((size_t)n * sizeof *tags), *pays = lang_alloc((size_t)n * sizeof *pays);
  LLVMBasicBlockRef *ends = lang_alloc((size_t)n * sizeof *ends);
  for (int i = 0; i < n; i++) {
    LLVMPositionBuilderAtEnd(B, bb[i]);
    if (!box(e, item_of(x, i), &tags[i], &pays[i], at)) return false;
    ends[i] = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, join);
  }
  LLVMPositionBuilderAtEnd(B, join);
  *tag = LLVMBuildPhi(B, lw->i64, "tag");
  *pay = LLVMBuildPhi(B, lw->i64, "pay");
  LLVMAddIncoming(*tag, tags, ends, (unsigned)n);
  LLVMAddIncoming(*pay, pays, ends, (unsigned)n);
  return true;
}

/* Where the boxed value at slot v is a closure of r's graph (a closure
 * that holds a tape): of inference's copy, or of the program's graph
 * it was made of (by eager mode, or boxed here), whose captured values
 * may be in another order, its values as r, made whole by as (NULL: r
 * itself), into got and ends (*ng of them).  The builder is left where
 * it is neither. */
static bool unbox_closure_of(Em *e, LLVMValueRef v, Rep *r, JV *(*as)(Em *, Rep *, int, JV *), Rep *whole, int which,
                             JV **got, LLVMBasicBlockRef *ends, int *ng, LLVMBasicBlockRef join, IrNode *at) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  IrGraph *gs[2] = {r->graph, r->graph};
  int *order[2] = {NULL, closure_origin(lw, &gs[1])};
  for (int c = 0; c < (order[1] ? 2 : 1); c++) {
    IrNode *gn = ir_const(ir_unit_new(), graph_value(gs[c]), at ? at->span : span_none());
    gn->inlined = at ? at->inlined : NULL;
    LLVMValueRef env = call(lw, "mist_rt_env_of", lw->ptr, 3, (LLVMTypeRef[]){lw->ptr, lw->ptr, lw->i32},
                            (LLVMValueRef[]){e->cx, v, ci32(lw, add_site(lw, gn, e->f->g))});
    LLVMBasicBlockRef yes = new_block(e, "ofgraph"), no = new_block(e, "notgraph");
    LLVMBuildCondBr(B, LLVMBuildIsNotNull(B, env, ""), yes, no);
    LLVMPositionBuilderAtEnd(B, yes);
    JV *x = jv_new(r);
    for (int j = 0, w = 0; j < r->n; j++) {
      LLVMValueRef t, p;
      load_value(e, slot_at(e, env, order[c] ? order[c][j] : j), &t, &p);
      JV *y = unbox(e, t, p, r->items[j], at, true);
      if (!y) return false;
      for (int l = 0; l < y->rep->nleaves; l++) x->v[w++] = y->v[l];
    }
    got[*ng] = as ? as(e, whole, which, x) : x;
    ends[(*ng)++] = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, join);
    LLVMPositionBuilderAtEnd(B, no);
  }
  return true;
}

/* A boxed closure of r's graph, or (r a union) of one of r's graphs,
 * as r. */
static JV *unbox_tape_closure(Em *e, LLVMValueRef tag, LLVMValueRef pay, Rep *r, IrNode *at) {
  LLVMValueRef v = value_slots(e, 1);
  store_value(e, v, tag, pay);
  int m = r->kind == R_UNION ? r->n : 1, ng = 0;
  JV **got = lang_alloc((size_t)(2 * m) * sizeof *got);
  LLVMBasicBlockRef *ends = lang_alloc((size_t)(2 * m) * sizeof *ends), join = new_block(e, "unboxed");
  for (int i = 0; i < m; i++)
    if (!(r->kind == R_UNION ? unbox_closure_of(e, v, r->items[i], union_of, r, i, got, ends, &ng, join, at)
                             : unbox_closure_of(e, v, r, NULL, r, 0, got, ends, &ng, join, at)))
      return NULL;
  bad_value(e, tag, pay, at);
  LLVMPositionBuilderAtEnd(e->lw->B, join);
  return joined(e, r, got, ends, ng);
}

static JV *call_value(Em *e, IrNode *n, JV *f, int nargs, JV **args, bool tail);
static int emit_body(Em *e, IrGraph *g, bool ret, JV **value);

/* A copy of m, to go back to. */
static NodeMap map_copy(const NodeMap *m) {
  NodeMap c = *m;
  if (!m->cap) return c;
  c.keys = lang_alloc(m->cap * sizeof *c.keys);
  c.vals = lang_alloc(m->cap * sizeof *c.vals);
  memcpy(c.keys, m->keys, m->cap * sizeof *c.keys);
  memcpy(c.vals, m->vals, m->cap * sizeof *c.vals);
  return c;
}

/* A backward step (a turn's graph, or a branch's that it calls) run as
 * blocks of the frame that tail-calls it, as the interpreter runs it
 * in the caller's frame: its parameters and free variables phis, so
 * that the turns of a backward pass, each calling the one before,
 * go round in one native frame whichever graph each turn is of. */
typedef struct TurnBlock {
  IrGraph *g;
  Rep **prep, **fvrep;
  LLVMBasicBlockRef bb;
  LLVMValueRef *phis;  /* the parameters' leaves, then the free variables' */
  struct TurnBlock *next;
} TurnBlock;

/* A tail call at n of the closure f of a graph that is not a function
 * as a jump to its blocks in e's frame, made the first time.  -1: it
 * failed; 0: not such a call (a value of other reps, a twin). */
static int jump_to_turn(Em *e, IrNode *n, JV *f, int nargs, JV **args) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  IrGraph *g = f->rep->graph;
  if (e->f->twin || nargs != g->nparams || (g->flags & (IRG_FUNCTION | IRG_MODULE)) || !typed_graph(lw, g)) return 0;
  /* (a graph's body is emitted once in a frame: its nodes, and the
   * blocks of graphs it runs, are bound once) */
  if (e->f->g == g || ir_map_get(&e->blocks, g)) return 0;
  TurnBlock *tb = e->turns;
  while (tb && tb->g != g) tb = tb->next;
  if (tb && !rep_eq(closure_rep(g, tb->fvrep), f->rep)) return 0;
  bool first = tb == NULL;
  if (first) {
    tb = lang_alloc(sizeof *tb);
    tb->g = g;
    tb->fvrep = f->rep->items;
    tb->prep = lang_alloc((size_t)(g->nparams ? g->nparams : 1) * sizeof *tb->prep);
    for (int i = 0; i < g->nparams; i++)
      if (!(tb->prep[i] = rep_of(lw, type_of(lw, g->params[i]), g->params[i]))) return -1;
  }
  int np = leaves(tb->prep, g->nparams), nl = np + f->rep->nleaves;
  LLVMValueRef *in = lang_alloc((size_t)(nl ? nl : 1) * sizeof *in);
  for (int i = 0, k = 0; i < g->nparams; i++) {
    JV *a = coerce(e, args[i], tb->prep[i], n);
    if (!a) return -1;
    for (int j = 0; j < a->rep->nleaves; j++) in[k++] = a->v[j];
  }
  for (int l = 0; l < f->rep->nleaves; l++) in[np + l] = f->v[l];
  if (!first) {
    poll(e, n);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
    for (int l = 0; l < nl; l++) LLVMAddIncoming(tb->phis[l], &in[l], &from, 1);
    LLVMBuildBr(B, tb->bb);
    return 1;
  }
  LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
  tb->bb = new_block(e, g->name->data);
  LLVMBuildBr(B, tb->bb);
  LLVMPositionBuilderAtEnd(B, tb->bb);
  tb->phis = lang_alloc((size_t)(nl ? nl : 1) * sizeof *tb->phis);
  Rep *all = rep_new(R_TUPLE, g->nparams, tb->prep);
  LLVMTypeRef *pt = leaf_type_array(lw, all), *ft = leaf_type_array(lw, f->rep);
  for (int l = 0; l < nl; l++) {
    tb->phis[l] = LLVMBuildPhi(B, l < np ? pt[l] : ft[l - np], "");
    LLVMAddIncoming(tb->phis[l], &in[l], &from, 1);
  }
  tb->next = e->turns;
  e->turns = tb;
  /* its free variables are nodes of the graph that made the closure:
   * bound to its values while its body is emitted */
  JV *pv = jv_new(all), *fv = jv_new(f->rep);
  for (int l = 0; l < nl; l++) {
    if (l < np) pv->v[l] = tb->phis[l];
    else fv->v[l - np] = tb->phis[l];
  }
  NodeMap outer = map_copy(&e->vals);
  for (int i = 0; i < g->nparams; i++) bind(e, g->params[i], item_of(pv, i));
  for (int j = 0; j < g->nfv; j++) bind(e, g->fv[j], item_of(fv, j));
  /* The graphs its body runs as blocks (a branch, the code after an
   * if) read its free variables, bound here to other values than
   * where the frame ran them: they are blocks of this turn's own
   * (emitted again here), and the bindings made for them are dropped
   * after (a block of the frame jumped to from here went round with
   * the frame's values, and a turn whose body shares one with the code
   * that called it went round for ever: adgen grad seed 9100032). */
  NodeMap blocks = e->blocks;
  e->blocks = (NodeMap){0};
  e->dead = false;
  e->guarded = NULL;
  int r = emit_body(e, g, true, NULL);
  e->blocks = blocks;
  e->vals = outer;
  return r < 0 ? -1 : 1;
}

/* A call at n of backpropagator f, a turn of a tape or a union of
 * closures: each result into vals and ends (*nv of them); a tail call
 * of the frame's own graph is a jump to its start, and of another
 * graph a jump to its blocks (jump_to_turn), so a backward pass runs
 * in one frame. */
static bool call_turn(Em *e, IrNode *n, JV *f, int nargs, JV **args, bool tail, Rep *res, JV **vals,
                      LLVMBasicBlockRef *ends, int *nv) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  if (f->rep->kind == R_UNION) {
    LLVMBasicBlockRef *bb = union_cases(e, f->v[0], f->rep->n);
    LLVMValueRef guarded = e->guarded;
    for (int i = 0; i < f->rep->n; i++) {
      LLVMPositionBuilderAtEnd(B, bb[i]);
      e->guarded = guarded;
      if (!call_turn(e, n, item_of(f, i), nargs, args, tail, res, vals, ends, nv)) return false;
    }
    return true;
  }
  IrGraph *g = f->rep->graph;
  JV **fvs = lang_alloc((size_t)(f->rep->n ? f->rep->n : 1) * sizeof *fvs);
  for (int i = 0; i < f->rep->n; i++) fvs[i] = item_of(f, i);
  JV *r;
  if (tail && nargs == g->nparams && self_frame(e, g, f->rep->items)) return jump_to_start(e, args, fvs, n);
  int jumped = tail ? jump_to_turn(e, n, f, nargs, args) : 0;
  if (jumped) return jumped > 0;
  if (f->rep->kind == R_CLOSURE && nargs == g->nparams && !(g->flags & IRG_FUNCTION) && typed_graph(lw, g))
    r = call_graph(e, g, f->rep->items, args, fvs, n, tail ? CALL_SAME : CALL_PLAIN, res);
  else
    r = call_value(e, n, f, nargs, args, tail);
  if (!r || !(r = coerce(e, r, res, n))) return false;
  vals[*nv] = r;
  ends[(*nv)++] = LLVMGetInsertBlock(B);
  return true;
}

/* The closures a turn may be: how many results call_turn may give. */
static int turn_closures(const Rep *f) {
  if (f->kind != R_UNION) return 1;
  int k = 0;
  for (int i = 0; i < f->n; i++) k += turn_closures(f->items[i]);
  return k;
}

/* A call of tape f, or of a union f, at n: for a tape, its last turn
 * over the tape of the turns before (in that turn's frame, a jump to
 * its start), or with no turn left, its continuation. */
static JV *call_tape(Em *e, IrNode *n, JV *f, int nargs, JV **args, bool tail, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  Rep *t = f->rep;
  int nv = 0, m = 1 + turn_closures(t->kind == R_TAPE ? t->turn : t);
  JV **vals = lang_alloc((size_t)m * sizeof *vals);
  LLVMBasicBlockRef *ends = lang_alloc((size_t)m * sizeof *ends), join = new_block(e, "turned");
  LLVMValueRef guarded = e->guarded;
  if (t->kind == R_UNION) {
    if (!call_turn(e, n, f, nargs, args, tail, res, vals, ends, &nv)) return NULL;
  } else {
    LLVMBasicBlockRef turn = new_block(e, "turn"), first = new_block(e, "first");
    likely_br(lw, LLVMBuildICmp(B, LLVMIntSGT, f->v[1], ci64(lw, 0), ""), turn, first);
    LLVMPositionBuilderAtEnd(B, turn);
    JV *kc = jv_new(t);
    kc->v[0] = f->v[0];
    kc->v[1] = LLVMBuildSub(B, f->v[1], ci64(lw, 1), "");
    for (int l = 2; l < t->nleaves; l++) kc->v[l] = f->v[l];
    if (!call_turn(e, n, turn_value(e, t, tape_at(e, f->v[0], kc->v[1], t), kc), nargs, args, tail, res, vals, ends, &nv))
      return NULL;
    LLVMPositionBuilderAtEnd(B, first);
    e->guarded = guarded;
    if (t->cont) {
      /* a closure that goes on into the turn of the loop this one ran in */
      if (!call_turn(e, n, tape_cont(f), nargs, args, tail, res, vals, ends, &nv)) return NULL;
    } else {
      JV *r = call_value(e, n, tape_cont(f), nargs, args, tail);
      if (!r || !(r = coerce(e, r, res, n))) return NULL;
      vals[nv] = r;
      ends[nv++] = LLVMGetInsertBlock(B);
    }
  }
  for (int i = 0; i < nv; i++) {
    LLVMPositionBuilderAtEnd(B, ends[i]);
    LLVMBuildBr(B, join);
  }
  LLVMPositionBuilderAtEnd(B, join);
  e->guarded = NULL;
  if (!nv) {
    /* every path went round or returned: nothing comes here (the
     * caller's code after the call goes in a block no path reaches) */
    JV *r = jv_new(res);
    LLVMTypeRef *lt = leaf_type_array(lw, res);
    for (int i = 0; i < res->nleaves; i++) r->v[i] = LLVMGetUndef(lt[i]);
    return r;
  }
  return joined(e, res, vals, ends, nv);
}

/* The result of calling a value of Rep f->rep at node n. */
static JV *call_tangent_rule(Em *e, IrNode *n, JV *f, int nargs, JV **args, Rep *res);

enum { MAX_CALLEE_SPECS = 8 };

static JV *call_value(Em *e, IrNode *n, JV *f, int nargs, JV **args, bool tail) {
  Lw *lw = e->lw;
  Rep *res = rep_of(lw, type_of(lw, n), n);
  if (!res) return NULL;
  if (f->rep->kind == R_BUILTIN) {
    JV *r = call_tangent_rule(e, n, f, nargs, args, res);
    if (r || lw->why) return r;
  }
  if (f->rep->kind == R_TAPE || f->rep->kind == R_UNION) return call_tape(e, n, f, nargs, args, tail, res);
  if (f->rep->kind == R_CLOSURE) {
    IrGraph *g = f->rep->graph;
    JV **fvs = lang_alloc((size_t)(f->rep->n ? f->rep->n : 1) * sizeof *fvs);
    for (int i = 0; i < f->rep->n; i++) fvs[i] = item_of(f, i);
    if (!typed_graph(lw, g)) {
      /* a function of the program that captured nothing, called through
       * a value: its own specialisation for these arguments */
      if (nargs != g->nparams) return call_boxed(e, f, nargs, args, res, n);
      IrType **at = lang_alloc((size_t)(nargs ? nargs : 1) * sizeof *at);
      for (int i = 0; i < nargs; i++) {
        IrNode *a = n->in[1 + i];
        at[i] = a->kind == IR_CONST ? ir_infer_value_type(lw->vm, a->value) : type_of(lw, a);
        /* values left out, as in a signature: a recursion on n - 1
         * is one specialisation, not one per value of n */
        at[i] = at[i] ? jit_widen(at[i]) : &ir_t_any;
      }
      /* a recursion that changes its arguments' types on every call
       * (f([x], n - 1), or a list, a tuple or a dict by n % 3) would
       * ask for a new specialisation at every level, for ever: past
       * MAX_CALLEE_SPECS of one graph, its arguments are `any`, one
       * specialisation more, which its own calls then reuse */
      int made = ir_map_int(&lw->callee_specs, g, 0);
      if (made >= MAX_CALLEE_SPECS)
        for (int i = 0; i < nargs; i++) at[i] = &ir_t_any;
      IrTyped *t = ir_infer(lw->vm, g, nargs, at, NULL);
      if (!t) {
        lang_error_clear(lw->vm);
        nope(lw, n, "a call inference cannot specialise");
        return NULL;
      }
      if (!ir_map_get(&lw->typed, t->graph)) ir_map_set_int(&lw->callee_specs, g, made + 1);
      note_result(lw, t);
      g = t->graph;
    }
    if (nargs != g->nparams) return call_boxed(e, f, nargs, args, res, n);
    bool user = (g->flags & IRG_FUNCTION) != 0;
    if (tail && !user && f->rep->n) {
      /* a closure that holds a tape (a backward pass's continuation):
       * run in the caller's frame, as call_captured calls one */
      ir_free_vars(g);
      return call_graph(e, g, f->rep->items, args, fvs, n, CALL_SAME, res);
    }
    if (tail && !user) {
      nope(lw, n, "a tail call of a graph that is not a function, through a value");
      return NULL;
    }
    ir_free_vars(g);
    Rep **fr = lang_alloc((size_t)(g->nfv ? g->nfv : 1) * sizeof *fr);
    for (int i = 0; i < g->nfv; i++) fr[i] = fvs[i]->rep;
    return call_graph(e, g, fr, args, fvs, n, tail ? CALL_TAIL : CALL_PLAIN, res);
  }
  if (f->rep->kind == R_VALUE) {
    JV *r = call_captured(e, n, f, nargs, args, tail, res);
    if (r || lw->why) return r;
  }
  if (f->rep->kind == R_BUILTIN || f->rep->kind == R_VALUE) {
    if (tail && f->rep->kind == R_VALUE) {
      /* the interpreter's tail call counts a level first when the callee
       * is a user function: so does this pre-check */
      guard_depth(e, LLVMBuildAdd(lw->B, e->depth, ci32(lw, 1), ""), n);
    }
    return call_boxed(e, f, nargs, args, res, n);
  }
  nope(lw, n, "a call of a value that is not a function");
  return NULL;
}

/* ---- primitives ---- */

typedef JV *(*LowerFn)(Em *e, IrNode *n, int p, JV **args, int nargs, Rep *res);

static bool is_num(const Rep *r) { return r->kind == R_BOOL || r->kind == R_INT || r->kind == R_FLOAT; }

static LLVMValueRef as_int(Em *e, JV *x) {
  return x->rep->kind == R_BOOL ? LLVMBuildZExt(e->lw->B, x->v[0], e->lw->i64, "") : x->v[0];
}

static LLVMValueRef as_float(Em *e, JV *x) {
  Lw *lw = e->lw;
  if (x->rep->kind == R_FLOAT) return x->v[0];
  return LLVMBuildSIToFP(lw->B, as_int(e, x), lw->f64, "");
}

/* The fast path is taken where fast holds; elsewhere the primitive runs
 * on boxed arguments (and raises its error, or computes the rare case). */
static JV *fast_or_prim(Em *e, IrNode *n, int p, JV **args, int nargs, Rep *res, LLVMValueRef fast,
                        LLVMBasicBlockRef *fast_bb) {
  Lw *lw = e->lw;
  LLVMBasicBlockRef f = new_block(e, "fast"), s = new_block(e, "slow");
  likely_br(lw, fast, f, s);
  LLVMPositionBuilderAtEnd(lw->B, s);
  JV *r = prim_boxed(e, p, nargs, args, res, n);
  if (!r) return NULL;
  *fast_bb = f;
  return r;
}

/* Join the fast path's result (built in fast_bb, now ended by the
 * caller's position) with the slow one (slow, in block slow_end). */
static JV *join2(Em *e, JV *fast, LLVMBasicBlockRef fast_end, JV *slow, LLVMBasicBlockRef slow_end) {
  Lw *lw = e->lw;
  LLVMBasicBlockRef j = new_block(e, "join");
  LLVMPositionBuilderAtEnd(lw->B, fast_end);
  LLVMBuildBr(lw->B, j);
  LLVMPositionBuilderAtEnd(lw->B, slow_end);
  LLVMBuildBr(lw->B, j);
  LLVMPositionBuilderAtEnd(lw->B, j);
  JV *r = jv_new(fast->rep);
  LLVMTypeRef *lt = leaf_type_array(lw, fast->rep);
  for (int i = 0; i < fast->rep->nleaves; i++) {
    r->v[i] = LLVMBuildPhi(lw->B, lt[i], "");
    LLVMValueRef vals[2] = {fast->v[i], slow->v[i]};
    LLVMBasicBlockRef from[2] = {fast_end, slow_end};
    LLVMAddIncoming(r->v[i], vals, from, 2);
  }
  return r;
}

static JV *scalar(Rep *r, LLVMValueRef v) {
  JV *x = jv_new(r);
  x->v[0] = v;
  return x;
}

/* Arithmetic with Python's rules (lang/ops.c): ints overflow into an
 * error, / is a float, // and % round toward minus infinity. */
static JV *l_arith(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  if (nargs != 2 || !is_num(a[0]->rep) || !is_num(a[1]->rep)) return prim_boxed(e, p, nargs, a, res, n);
  bool ints = a[0]->rep->kind != R_FLOAT && a[1]->rep->kind != R_FLOAT;
  if (!ints) {
    LLVMValueRef x = as_float(e, a[0]), y = as_float(e, a[1]);
    switch (p) {
    case IR_P_ADD: return coerce(e, scalar(&r_float, LLVMBuildFAdd(B, x, y, "")), res, n);
    case IR_P_SUB: return coerce(e, scalar(&r_float, LLVMBuildFSub(B, x, y, "")), res, n);
    case IR_P_MUL: return coerce(e, scalar(&r_float, LLVMBuildFMul(B, x, y, "")), res, n);
    case IR_P_TRUEDIV: {
      LLVMBasicBlockRef fb;
      LLVMValueRef nz = LLVMBuildFCmp(B, LLVMRealUNE, y, LLVMConstReal(lw->f64, 0.0), "");
      JV *slow = fast_or_prim(e, n, p, a, nargs, &r_float, nz, &fb);
      if (!slow) return NULL;
      LLVMBasicBlockRef se = LLVMGetInsertBlock(B);
      LLVMPositionBuilderAtEnd(B, fb);
      JV *fast = scalar(&r_float, LLVMBuildFDiv(B, x, y, ""));
      return coerce(e, join2(e, fast, LLVMGetInsertBlock(B), slow, se), res, n);
    }
    default: return prim_boxed(e, p, nargs, a, res, n);
    }
  }
  LLVMValueRef x = as_int(e, a[0]), y = as_int(e, a[1]);
  const char *ovf = p == IR_P_ADD ? "llvm.sadd.with.overflow.i64"
                  : p == IR_P_SUB ? "llvm.ssub.with.overflow.i64"
                  : p == IR_P_MUL ? "llvm.smul.with.overflow.i64" : NULL;
  LLVMBasicBlockRef fb;
  if (ovf) {
    LLVMTypeRef st = LLVMStructTypeInContext(lw->C, (LLVMTypeRef[]){lw->i64, lw->i1}, 2, false);
    LLVMValueRef r = call(lw, ovf, st, 2, (LLVMTypeRef[]){lw->i64, lw->i64}, (LLVMValueRef[]){x, y});
    LLVMValueRef fine = LLVMBuildNot(B, LLVMBuildExtractValue(B, r, 1, ""), "");
    JV *slow = fast_or_prim(e, n, p, a, nargs, &r_int, fine, &fb);
    if (!slow) return NULL;
    LLVMBasicBlockRef se = LLVMGetInsertBlock(B);
    LLVMPositionBuilderAtEnd(B, fb);
    JV *fast = scalar(&r_int, LLVMBuildExtractValue(B, r, 0, ""));
    return coerce(e, join2(e, fast, LLVMGetInsertBlock(B), slow, se), res, n);
  }
  if (p == IR_P_TRUEDIV) {
    /* exact when both fit a double's 53 bits, as lang/ops.c divides */
    LLVMValueRef lim = ci64(lw, (int64_t)1 << 53);
    LLVMValueRef in = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntULE, LLVMBuildAdd(B, x, lim, ""), LLVMBuildAdd(B, lim, lim, ""), ""),
                                   LLVMBuildICmp(B, LLVMIntULE, LLVMBuildAdd(B, y, lim, ""), LLVMBuildAdd(B, lim, lim, ""), ""), "");
    LLVMValueRef fine = LLVMBuildAnd(B, in, LLVMBuildICmp(B, LLVMIntNE, y, ci64(lw, 0), ""), "");
    JV *slow = fast_or_prim(e, n, p, a, nargs, &r_float, fine, &fb);
    if (!slow) return NULL;
    LLVMBasicBlockRef se = LLVMGetInsertBlock(B);
    LLVMPositionBuilderAtEnd(B, fb);
    JV *fast = scalar(&r_float, LLVMBuildFDiv(B, LLVMBuildSIToFP(B, x, lw->f64, ""), LLVMBuildSIToFP(B, y, lw->f64, ""), ""));
    return coerce(e, join2(e, fast, LLVMGetInsertBlock(B), slow, se), res, n);
  }
  if (p == IR_P_FLOORDIV || p == IR_P_MOD) {
    /* b > 0, the common case: no overflow, and the sign fix-up of
     * Python's rounding is one comparison */
    LLVMValueRef fine = LLVMBuildICmp(B, LLVMIntSGT, y, ci64(lw, 0), "");
    JV *slow = fast_or_prim(e, n, p, a, nargs, &r_int, fine, &fb);
    if (!slow) return NULL;
    LLVMBasicBlockRef se = LLVMGetInsertBlock(B);
    LLVMPositionBuilderAtEnd(B, fb);
    LLVMValueRef q = LLVMBuildSDiv(B, x, y, ""), m = LLVMBuildSRem(B, x, y, "");
    LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, m, ci64(lw, 0), "");
    LLVMValueRef r = p == IR_P_FLOORDIV ? LLVMBuildSelect(B, neg, LLVMBuildSub(B, q, ci64(lw, 1), ""), q, "")
                                        : LLVMBuildSelect(B, neg, LLVMBuildAdd(B, m, y, ""), m, "");
    JV *fast = scalar(&r_int, r);
    return coerce(e, join2(e, fast, LLVMGetInsertBlock(B), slow, se), res, n);
  }
  return prim_boxed(e, p, nargs, a, res, n);
}

static JV *l_neg(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  if (nargs != 1 || !is_num(a[0]->rep)) return prim_boxed(e, p, nargs, a, res, n);
  if (a[0]->rep->kind == R_FLOAT)
    return coerce(e, scalar(&r_float, p == IR_P_NEG ? LLVMBuildFNeg(B, a[0]->v[0], "") : a[0]->v[0]), res, n);
  LLVMValueRef x = as_int(e, a[0]);
  if (p == IR_P_POS) return coerce(e, scalar(&r_int, x), res, n);
  LLVMBasicBlockRef fb;
  LLVMValueRef fine = LLVMBuildICmp(B, LLVMIntNE, x, ci64(lw, INT64_MIN), "");
  JV *slow = fast_or_prim(e, n, p, a, nargs, &r_int, fine, &fb);
  if (!slow) return NULL;
  LLVMBasicBlockRef se = LLVMGetInsertBlock(B);
  LLVMPositionBuilderAtEnd(B, fb);
  JV *fast = scalar(&r_int, LLVMBuildNeg(B, x, ""));
  return coerce(e, join2(e, fast, LLVMGetInsertBlock(B), slow, se), res, n);
}

/* Truthiness as i1: scalars here, anything boxed by lang_truthy. */
static LLVMValueRef truth(Em *e, JV *x, IrNode *n) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  switch (x->rep->kind) {
  case R_BOOL: return x->v[0];
  case R_INT: return LLVMBuildICmp(B, LLVMIntNE, x->v[0], ci64(lw, 0), "");
  case R_FLOAT: return LLVMBuildFCmp(B, LLVMRealUNE, x->v[0], LLVMConstReal(lw->f64, 0.0), "");
  case R_NONE: case R_UNBOUND: case R_NEVER: return ci1(lw, false);
  case R_TUPLE: return ci1(lw, x->rep->n > 0);
  case R_CLOSURE: case R_BUILTIN: case R_TAPE: case R_UNION: return ci1(lw, true);
  default: break;
  }
  LLVMValueRef p = value_slots(e, 1), out = value_slots(e, 1);   /* (out: its first byte) */
  if (!box_into(e, x, p, n)) return NULL;
  LLVMValueRef ok = call(lw, "mist_rt_truthy", lw->i1, 3, (LLVMTypeRef[]){lw->ptr, lw->ptr, lw->ptr},
                         (LLVMValueRef[]){e->cx, p, out});
  check(e, ok, n);
  return LLVMBuildTrunc(B, LLVMBuildLoad2(B, lw->i8, out, ""), lw->i1, "");
}

static JV *l_truth(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  if (nargs != 1) return prim_boxed(e, p, nargs, a, res, n);
  LLVMValueRef t = truth(e, a[0], n);
  if (!t) return NULL;
  if (p == IR_P_NOT) t = LLVMBuildNot(e->lw->B, t, "");
  return coerce(e, scalar(&r_bool, t), res, n);
}

/* Comparisons of two ints (or bools) or two floats; mixed and other
 * kinds through the primitive (an int and a float compare exactly). */
static JV *l_cmp(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  if (nargs != 2) return prim_boxed(e, p, nargs, a, res, n);
  Rep *x = a[0]->rep, *y = a[1]->rep;
  static const LLVMIntPredicate ip[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
  int k = p == IR_P_EQ ? 0 : p == IR_P_NE ? 1 : p == IR_P_LT ? 2 : p == IR_P_LE ? 3 : p == IR_P_GT ? 4 : 5;
  if ((x->kind == R_INT || x->kind == R_BOOL) && (y->kind == R_INT || y->kind == R_BOOL))
    return coerce(e, scalar(&r_bool, LLVMBuildICmp(B, ip[k], as_int(e, a[0]), as_int(e, a[1]), "")), res, n);
  if (x->kind == R_FLOAT && y->kind == R_FLOAT)
    return coerce(e, scalar(&r_bool, LLVMBuildFCmp(B, fp[k], a[0]->v[0], a[1]->v[0], "")), res, n);
  if ((p == IR_P_EQ || p == IR_P_NE) && x->kind == R_NONE && y->kind == R_NONE)
    return coerce(e, scalar(&r_bool, ci1(lw, p == IR_P_EQ)), res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

static JV *l_make_tuple(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Rep **items = lang_alloc((size_t)(nargs ? nargs : 1) * sizeof *items);
  for (int i = 0; i < nargs; i++) items[i] = a[i]->rep;
  JV *t = jv_new(rep_new(R_TUPLE, nargs, items));
  int k = 0;
  for (int i = 0; i < nargs; i++)
    for (int j = 0; j < items[i]->nleaves; j++) t->v[k++] = a[i]->v[j];
  return coerce(e, t, res, n);
}

/* The constant int an argument is, when inference knows it. */
static bool known_int(Em *e, IrNode *x, int64_t *v) {
  if (x->kind == IR_CONST && x->value.tag == V_INT) {
    *v = x->value.i;
    return true;
  }
  IrType *t = type_of(e->lw, x);
  if (t && t->kind == IT_INT && t->has_val && !t->or_none && !t->or_unbound) {
    *v = t->ival;
    return true;
  }
  return false;
}

static JV *l_getitem(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  int64_t i;
  if (nargs == 2 && a[0]->rep->kind == R_TUPLE && known_int(e, n->in[2], &i)) {
    int len = a[0]->rep->n;
    if (i < 0) i += len;
    if (i >= 0 && i < len) return coerce(e, item_of(a[0], (int)i), res, n);
  }
  if (a[0]->rep->kind == R_TUPLE && res->kind != R_NEVER) {
    /* an index not known: through the primitive on the boxed tuple */
    return prim_boxed(e, p, nargs, a, res, n);
  }
  return prim_boxed(e, p, nargs, a, res, n);
}

static JV *l_unpack(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  int64_t k;
  if (nargs == 2 && a[0]->rep->kind == R_TUPLE && known_int(e, n->in[2], &k) && k == a[0]->rep->n)
    return coerce(e, a[0], res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

static JV *l_len(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  if (nargs == 1 && a[0]->rep->kind == R_TUPLE) return coerce(e, scalar(&r_int, ci64(e->lw, a[0]->rep->n)), res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

/* switch(c, a, b) as a value (not called right away): a select. */
static JV *l_switch(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  if (nargs != 3) return prim_boxed(e, p, nargs, a, res, n);
  LLVMValueRef c = truth(e, a[0], n);
  if (!c) return NULL;
  JV *x = coerce(e, a[1], res, n);
  JV *y = x ? coerce(e, a[2], res, n) : NULL;
  if (!y) return NULL;
  JV *r = jv_new(res);
  for (int i = 0; i < res->nleaves; i++) r->v[i] = LLVMBuildSelect(lw->B, c, x->v[i], y->v[i], "");
  return r;
}

/* check_bound(x, name): x, unless it is Unbound (the primitive raises). */
static JV *l_check_bound(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  Rep *r = a[0]->rep;
  if (nargs == 2 && r->kind == R_MAYBE && r->unbound) {
    LLVMBasicBlockRef fb;
    JV *slow = fast_or_prim(e, n, p, a, nargs, res, a[0]->v[0], &fb);
    if (!slow) return NULL;
    LLVMBasicBlockRef se = LLVMGetInsertBlock(lw->B);
    LLVMPositionBuilderAtEnd(lw->B, fb);
    JV *fast = coerce(e, item_of(a[0], 0), res, n);
    if (!fast) return NULL;
    return join2(e, fast, LLVMGetInsertBlock(lw->B), slow, se);
  }
  if (nargs == 2 && r->kind != R_VALUE && r->kind != R_UNBOUND && r->kind != R_MAYBE) return coerce(e, a[0], res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

static JV *l_identity(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  if (nargs == 1) return coerce(e, a[0], res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

/* ---- derivatives: the scalar cases of autodiff's primitives ----
 *
 * A backward pass is made of sensitivity primitives (mul_sens(d, x, y,
 * i)...), gadd and a few checks.  On floats each is an operation or two,
 * done here with the same operations in the same order as
 * ir/prims_sens.c and ir/prims.c, so the bits are eager mode's; None
 * (a zero sensitivity) and `float | None` are told apart here too.
 * Anything else (tensors, sequences, ints beside ints) calls the
 * primitive. */

static JV *none_as(Em *e, Rep *res, IrNode *n) { return coerce(e, jv_new(&r_none), res, n); }

/* A float | None sensitivity, as (present, value): None gives (false,
 * undef); false for any other rep. */
static bool maybe_float(Em *e, JV *x, LLVMValueRef *present, LLVMValueRef *v) {
  Lw *lw = e->lw;
  switch (x->rep->kind) {
  case R_NONE: *present = ci1(lw, false); *v = LLVMGetUndef(lw->f64); return true;
  case R_FLOAT: *present = ci1(lw, true); *v = x->v[0]; return true;
  case R_MAYBE:
    if (x->rep->unbound || x->rep->items[0]->kind != R_FLOAT) return false;
    *present = x->v[0];
    *v = x->v[1];
    return true;
  default: return false;
  }
}

/* The float r where present holds, None elsewhere, as res. */
static JV *float_or_none(Em *e, LLVMValueRef present, LLVMValueRef r, Rep *res, IrNode *n) {
  if (LLVMIsConstant(present) && LLVMConstIntGetZExtValue(present)) return coerce(e, scalar(&r_float, r), res, n);
  Rep *f = &r_float;
  JV *m = jv_new(rep_new(R_MAYBE, 1, &f));
  m->v[0] = present;
  m->v[1] = r;
  return coerce(e, m, res, n);
}

/* op_sens(d, x, y, i) of + - * / */
static JV *l_binary_sens(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  int64_t i;
  LLVMValueRef present, d;
  if (nargs != 4 || !known_int(e, n->in[4], &i) || (i != 0 && i != 1) || !maybe_float(e, a[0], &present, &d))
    return prim_boxed(e, p, nargs, a, res, n);
  /* (numbers only: a sequence beside them concatenates or repeats) */
  Rep *t = a[1 + i]->rep, *o = a[2 - i]->rep;
  if (!is_num(t) || !is_num(o)) return prim_boxed(e, p, nargs, a, res, n);
  if (a[0]->rep->kind == R_NONE || t->kind != R_FLOAT) return none_as(e, res, n);   /* d None, or an int's */
  if (o->kind == R_BOOL) return prim_boxed(e, p, nargs, a, res, n);
  LLVMValueRef x = as_float(e, a[1]), y = as_float(e, a[2]), r;
  switch (p) {
  case IR_P_ADD_SENS: r = d; break;
  case IR_P_SUB_SENS: r = i ? LLVMBuildFNeg(B, d, "") : d; break;
  case IR_P_MUL_SENS: r = i ? LLVMBuildFMul(B, x, d, "") : LLVMBuildFMul(B, d, y, ""); break;
  case IR_P_TRUEDIV_SENS:
    r = i ? LLVMBuildFDiv(B, LLVMBuildFMul(B, LLVMBuildFNeg(B, d, ""), x, ""), LLVMBuildFMul(B, y, y, ""), "")
          : LLVMBuildFDiv(B, d, y, "");
    break;
  default: return prim_boxed(e, p, nargs, a, res, n);
  }
  return float_or_none(e, present, r, res, n);
}

static LLVMValueRef libm1(Lw *lw, const char *name, LLVMValueRef x) {
  return call(lw, name, lw->f64, 1, (LLVMTypeRef[]){lw->f64}, (LLVMValueRef[]){x});
}

/* f_sens(d, x, y) of y = f(x) */
static JV *l_unary_sens(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  LLVMValueRef present, d;
  if (nargs != 3 || !maybe_float(e, a[0], &present, &d)) return prim_boxed(e, p, nargs, a, res, n);
  if (a[0]->rep->kind == R_NONE) return none_as(e, res, n);
  Rep *xr = a[1]->rep;
  if (xr->kind == R_INT || xr->kind == R_BOOL) return none_as(e, res, n);
  bool needs_y = p == IR_P_EXP_SENS || p == IR_P_SQRT_SENS || p == IR_P_TANH_SENS || p == IR_P_SIGMOID_SENS;
  if (xr->kind != R_FLOAT || (needs_y && a[2]->rep->kind != R_FLOAT)) return prim_boxed(e, p, nargs, a, res, n);
  LLVMValueRef x = a[1]->v[0], y = needs_y ? a[2]->v[0] : NULL, one = LLVMConstReal(lw->f64, 1.0), r;
  switch (p) {
  case IR_P_NEG_SENS: r = LLVMBuildFNeg(B, d, ""); break;
  case IR_P_POS_SENS: r = d; break;
  case IR_P_EXP_SENS: r = LLVMBuildFMul(B, d, y, ""); break;
  case IR_P_LOG_SENS: r = LLVMBuildFDiv(B, d, x, ""); break;
  case IR_P_SQRT_SENS: r = LLVMBuildFDiv(B, d, LLVMBuildFMul(B, LLVMConstReal(lw->f64, 2.0), y, ""), ""); break;
  case IR_P_SIN_SENS: r = LLVMBuildFMul(B, d, libm1(lw, "cos", x), ""); break;
  case IR_P_COS_SENS: r = LLVMBuildFMul(B, LLVMBuildFNeg(B, d, ""), libm1(lw, "sin", x), ""); break;
  case IR_P_TANH_SENS: r = LLVMBuildFMul(B, d, LLVMBuildFSub(B, one, LLVMBuildFMul(B, y, y, ""), ""), ""); break;
  case IR_P_SIGMOID_SENS: r = LLVMBuildFMul(B, LLVMBuildFMul(B, d, y, ""), LLVMBuildFSub(B, one, y, ""), ""); break;
  case IR_P_RELU_SENS:
    r = LLVMBuildFMul(B, d, LLVMBuildUIToFP(B, LLVMBuildFCmp(B, LLVMRealOGT, x, LLVMConstReal(lw->f64, 0.0), ""), lw->f64, ""), "");
    break;
  default: return prim_boxed(e, p, nargs, a, res, n);
  }
  return float_or_none(e, present, r, res, n);
}

/* Whether gadd of values of reps x and y is done here: None, floats
 * (or float | None), and tuples of those item by item. */
static bool gadd_here(const Rep *x, const Rep *y) {
  if (x->kind == R_NONE || y->kind == R_NONE) return true;
  if (x->kind == R_TUPLE && y->kind == R_TUPLE) {
    if (x->n != y->n) return false;
    for (int i = 0; i < x->n; i++)
      if (!gadd_here(x->items[i], y->items[i])) return false;
    return true;
  }
  bool fx = x->kind == R_FLOAT || (x->kind == R_MAYBE && !x->unbound && x->items[0]->kind == R_FLOAT);
  bool fy = y->kind == R_FLOAT || (y->kind == R_MAYBE && !y->unbound && y->items[0]->kind == R_FLOAT);
  return fx && fy;
}

static JV *gadd_values(Em *e, JV *x, JV *y, IrNode *n) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  if (x->rep->kind == R_NONE) return y;
  if (y->rep->kind == R_NONE) return x;
  if (x->rep->kind == R_TUPLE) {
    JV **items = lang_alloc((size_t)(x->rep->n ? x->rep->n : 1) * sizeof *items);
    Rep **reps = lang_alloc((size_t)(x->rep->n ? x->rep->n : 1) * sizeof *reps);
    for (int i = 0; i < x->rep->n; i++) {
      items[i] = gadd_values(e, item_of(x, i), item_of(y, i), n);
      reps[i] = items[i]->rep;
    }
    JV *t = jv_new(rep_new(R_TUPLE, x->rep->n, reps));
    int k = 0;
    for (int i = 0; i < x->rep->n; i++)
      for (int j = 0; j < reps[i]->nleaves; j++) t->v[k++] = items[i]->v[j];
    return t;
  }
  LLVMValueRef px, vx, py, vy;
  maybe_float(e, x, &px, &vx);
  maybe_float(e, y, &py, &vy);
  LLVMValueRef sum = LLVMBuildFAdd(B, vx, vy, "");
  /* None is zero: the other as it is */
  if (x->rep->kind == R_FLOAT && y->rep->kind == R_FLOAT) return scalar(&r_float, sum);
  if (x->rep->kind == R_FLOAT) return scalar(&r_float, LLVMBuildSelect(B, py, sum, vx, ""));
  if (y->rep->kind == R_FLOAT) return scalar(&r_float, LLVMBuildSelect(B, px, sum, vy, ""));
  LLVMValueRef r = LLVMBuildSelect(B, px, LLVMBuildSelect(B, py, sum, vx, ""), vy, "");
  return float_or_none(e, LLVMBuildOr(B, px, py, ""), r, rep_new(R_MAYBE, 1, (Rep *[]){&r_float}), n);
}

static JV *l_gadd(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  if (nargs != 2 || !gadd_here(a[0]->rep, a[1]->rep)) return prim_boxed(e, p, nargs, a, res, n);
  JV *r = gadd_values(e, a[0], a[1], n);
  return r ? coerce(e, r, res, n) : NULL;
}

/* zeros_like of a number: 0.0; of None: None */
static JV *l_zeros_like(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Rep *x = nargs == 1 ? a[0]->rep : NULL;
  if (x && (x->kind == R_FLOAT || x->kind == R_INT || x->kind == R_BOOL))
    return coerce(e, scalar(&r_float, LLVMConstReal(e->lw->f64, 0.0)), res, n);
  if (x && x->kind == R_NONE) return none_as(e, res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

/* seed(y, who) of a float: 1.0 */
static JV *l_seed(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  if (nargs == 2 && a[0]->rep->kind == R_FLOAT) return coerce(e, scalar(&r_float, LLVMConstReal(e->lw->f64, 1.0)), res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

/* check_diff(x, name) and float_arg(x) of a float: x */
/* a @ b, and matmul_sens(d, a, b, i) for a known i, on float matrices
 * of one dtype whose dims inference knows: matmul.c's direct product,
 * else (and for operands it finds of another kind) the primitive.  The
 * site is typed with the result's type, or for a sensitivity inference
 * did not type, with its operand's (checked: 0). */
static JV *l_matmul(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  Lw *lw = e->lw;
  bool sens = p == IR_P_MATMUL_SENS;
  IrType *t = type_of(lw, n);
  int64_t i = -1;
  if (nargs != (sens ? 4 : 2) || !t || !jit_matmul_typed(type_of(lw, n->in[sens ? 2 : 1]), type_of(lw, n->in[sens ? 3 : 2])) ||
      (sens && (!known_int(e, n->in[4], &i) || (i != 0 && i != 1))))
    return prim_boxed(e, p, nargs, a, res, n);
  bool checked = t->kind == IT_TENSOR;
  if (!checked && !sens) return prim_boxed(e, p, nargs, a, res, n);
  IrType *st = checked ? t : type_of(lw, n->in[2 + i]);
  LLVMValueRef av = value_slots(e, nargs), out = value_slots(e, 1);
  for (int j = 0; j < nargs; j++)
    if (!box_into(e, a[j], slot_at(e, av, j), n)) return NULL;
  int site = add_typed_site(lw, n, e->f->g, st);
  sync_depth(e, e->depth);
  LLVMValueRef ok = call(lw, sens ? "mist_rt_matmul_sens" : "mist_rt_matmul", lw->i1, 5,
                         (LLVMTypeRef[]){lw->ptr, lw->i32, lw->ptr, lw->i1, lw->ptr},
                         (LLVMValueRef[]){e->cx, ci32(lw, site), av, ci1(lw, checked), out});
  check(e, ok, n);
  LLVMValueRef tag, pay;
  load_value(e, out, &tag, &pay);
  return unbox(e, tag, pay, res, n, true);
}

static JV *l_float_check(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  if (nargs >= 1 && a[0]->rep->kind == R_FLOAT) return coerce(e, a[0], res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

/* J(f), jmask(f, ...) and F(f) of a function that captured nothing,
 * whose transform (a function that captures nothing either) inference
 * made (autodiff makes it once per graph): no value at run time, so
 * nothing to call; J and F of a number: the number.  Any other transform
 * is made by the primitive. */
static JV *l_transform(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  RepKind k = a[0]->rep->kind;
  if (res->kind == R_CLOSURE && res->n == 0 && k == R_CLOSURE && a[0]->rep->n == 0) return jv_new(res);
  if (p != IR_P_JMASK && (k == R_NONE || k == R_BOOL || k == R_INT || k == R_FLOAT)) return coerce(e, a[0], res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

/* tan_item(t, i): the tangent of a jvp's parameter i (None past the
 * tangents given) */
static JV *l_tan_item(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  int64_t i;
  if (a[0]->rep->kind == R_NONE) return none_as(e, res, n);
  if (nargs == 2 && a[0]->rep->kind == R_TUPLE && known_int(e, n->in[2], &i))
    return coerce(e, i >= 0 && i < a[0]->rep->n ? item_of(a[0], (int)i) : jv_new(&r_none), res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

/* tan_tuple(t): a list made a tuple; a tuple or None as it is */
static JV *l_tan_tuple(Em *e, IrNode *n, int p, JV **a, int nargs, Rep *res) {
  if (a[0]->rep->kind == R_NONE || a[0]->rep->kind == R_TUPLE) return coerce(e, a[0], res, n);
  return prim_boxed(e, p, nargs, a, res, n);
}

#define NOLOWER NULL
#define LOWER(f) f
static const LowerFn prim_lowering[IR_NPRIMS] = {
#define PRIM(e, name, arity, flags, eval, type, none, rev, fwd, lower, shard, doc) [IR_P_##e] = lower,
#include "ir/ops.def"
#undef PRIM
};

/* ---- forward mode: the tangent rules of floats ----
 *
 * A jvp's _F_mul(x, tx, y, ty) (autodiff/tangents.c) on floats (an int
 * beside one) and float or None tangents: the pair in registers (fwd.c),
 * and without tangents the operation alone (ints with their overflow
 * check); where tangents.c would not compute it itself (a division by
 * zero, an int past 2**53, exp's overflow...), the builtin is called as
 * the interpreter calls it, and raises its error.  NULL (and no reason)
 * for any other call. */

/* The pair (v, t) as res: its tangent a float where inference says so
 * (one of the two was), None where it says None */
static JV *tangent_pair(Em *e, IrNode *n, JV *v, JitTangent t, Rep *res) {
  Rep *tr = res->items[1];
  JV *pair[2] = {coerce(e, v, res->items[0], n),
                 tr->kind == R_NONE ? jv_new(&r_none) : tr->kind == R_FLOAT ? scalar(&r_float, t.v)
                                                     : float_or_none(e, t.present, t.v, tr, n)};
  return pair[0] && pair[1] ? l_make_tuple(e, n, IR_P_MAKE_TUPLE, pair, 2, res) : NULL;
}

static JV *call_tangent_rule(Em *e, IrNode *n, JV *f, int nargs, JV **args, Rep *res) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  const IrAdInterface *ad = lw->vm->ad;
  bool op;
  int id;
  if (!ad || !ad->tangent_rule || !ad->tangent_rule(v_obj(f->rep->builtin), &op, &id)) return NULL;
  bool binary = !op && id != IR_P_NEG;
  if (nargs != (binary ? 4 : 2) || res->kind != R_TUPLE || res->n != 2) return NULL;
  JV *x = args[0], *y = binary ? args[2] : NULL, *ty0 = binary ? args[3] : jv_new(&r_none);
  JitTangent tx, ty;
  if (!maybe_float(e, args[1], &tx.present, &tx.v) || !maybe_float(e, ty0, &ty.present, &ty.v)) return NULL;
  if (!is_num(x->rep) || (binary && !is_num(y->rep)) || x->rep->kind == R_BOOL || (binary && y->rep->kind == R_BOOL))
    return NULL;
  bool ints = x->rep->kind == R_INT && (!binary || y->rep->kind == R_INT);
  LLVMValueRef ok, value;
  JitTangent t;
  Rep *vrep = &r_float;
  if (ints) {
    /* no tangent (else the type is not a pair): + - * and - of ints */
    if (op || args[1]->rep->kind != R_NONE || ty0->rep->kind != R_NONE || id == IR_P_TRUEDIV) return NULL;
    vrep = &r_int;
    if (id == IR_P_NEG) {
      ok = LLVMBuildICmp(B, LLVMIntNE, x->v[0], ci64(lw, INT64_MIN), "");
      value = LLVMBuildNeg(B, x->v[0], "");
    } else {
      const char *ovf = id == IR_P_ADD ? "llvm.sadd.with.overflow.i64"
                      : id == IR_P_SUB ? "llvm.ssub.with.overflow.i64" : "llvm.smul.with.overflow.i64";
      LLVMTypeRef st = LLVMStructTypeInContext(lw->C, (LLVMTypeRef[]){lw->i64, lw->i1}, 2, false);
      LLVMValueRef r = call(lw, ovf, st, 2, (LLVMTypeRef[]){lw->i64, lw->i64}, (LLVMValueRef[]){x->v[0], y->v[0]});
      ok = LLVMBuildNot(B, LLVMBuildExtractValue(B, r, 1, ""), "");
      value = LLVMBuildExtractValue(B, r, 0, "");
    }
    t = (JitTangent){ci1(lw, false), LLVMGetUndef(lw->f64)};
  } else {
    if (!binary && x->rep->kind != R_FLOAT) return NULL;
    /* an int is a float only below 2**53 in size (else the rule runs) */
    LLVMValueRef lim = ci64(lw, (int64_t)1 << 53), in = ci1(lw, true);
    JV *xy[2] = {x, y};
    for (int i = 0; i < (binary ? 2 : 1); i++)
      if (xy[i]->rep->kind == R_INT)
        in = LLVMBuildAnd(B, in, LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGT, xy[i]->v[0], LLVMBuildNeg(B, lim, ""), ""),
                                              LLVMBuildICmp(B, LLVMIntSLT, xy[i]->v[0], lim, ""), ""), "");
    ok = jit_fwd_rule(lw->M, B, op, id, as_float(e, x), tx, binary ? as_float(e, y) : NULL, ty, &value, &t);
    if (!ok) return NULL;
    ok = LLVMBuildAnd(B, ok, in, "");
  }
  if (LLVMIsConstant(ok) && LLVMConstIntGetZExtValue(ok)) return tangent_pair(e, n, scalar(vrep, value), t, res);
  LLVMBasicBlockRef fb = new_block(e, "tanfast"), sb = new_block(e, "tanrule");
  likely_br(lw, ok, fb, sb);
  LLVMPositionBuilderAtEnd(B, sb);
  JV *slow = call_boxed(e, f, nargs, args, res, n);
  if (!slow) return NULL;
  LLVMBasicBlockRef se = LLVMGetInsertBlock(B);
  LLVMPositionBuilderAtEnd(B, fb);
  JV *fast = tangent_pair(e, n, scalar(vrep, value), t, res);
  return fast ? join2(e, fast, LLVMGetInsertBlock(B), slow, se) : NULL;
}

/* ---- the body of a frame ---- */

static int emit_body(Em *e, IrGraph *g, bool ret, JV **value);

static bool switch_inlined(Em *e, IrNode *s) { return ev_switch_inlined(&e->uses, s); }

static bool fvs_available(Em *e, IrGraph *h) {
  ir_free_vars(h);
  for (int i = 0; i < h->nfv; i++)
    if (!ir_map_get(&e->vals, h->fv[i]) && h->fv[i]->graph && !ir_is_ancestor(e->f->g, h->fv[i]->graph))
      return false;
  return true;
}

/* The result of a graph run as blocks here: returned (ret) or handed
 * to the caller. */
static int finish_value(Em *e, IrNode *n, JV *v, bool ret, JV **value) {
  Lw *lw = e->lw;
  if (!ret) {
    *value = v;
    return 0;
  }
  JV *r = coerce(e, v, e->f->ret, n);
  if (!r) return -1;
  LLVMValueRef agg = LLVMGetUndef(e->f->retty);
  agg = LLVMBuildInsertValue(lw->B, agg, ci1(lw, true), 0, "");
  for (int i = 0; i < r->rep->nleaves; i++) agg = LLVMBuildInsertValue(lw->B, agg, r->v[i], (unsigned)(1 + i), "");
  LLVMBuildRet(lw->B, agg);
  e->dead = true;
  return 1;
}

/* switch(c, @a, @b)() at n: the two graphs as blocks. */
static int emit_switch(Em *e, IrNode *sw, IrNode *n, bool tail, JV **value) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  IrGraph *a = ir_node_graph(sw->in[2]), *b = ir_node_graph(sw->in[3]);
  IrType *ct = type_of(lw, sw->in[1]);
  JV *c = val(e, sw->in[1], sw);
  if (!c) return -1;
  if (ct && ct->kind == IT_BOOL && ct->has_val && !ct->or_none && !ct->or_unbound) {
    /* inference took one branch only: the other was not specialised */
    JV *v = NULL;
    int r = emit_body(e, ct->ival ? a : b, tail, &v);
    if (r != 0 || tail) return r;
    bind(e, n, v);
    return 0;
  }
  LLVMValueRef cond = truth(e, c, sw);
  if (!cond) return -1;
  LLVMBasicBlockRef tb = new_block(e, "then"), eb = new_block(e, "else");
  LLVMBuildCondBr(B, cond, tb, eb);
  Rep *res = NULL;
  if (!tail && !(res = rep_of(lw, type_of(lw, n), n))) return -1;
  LLVMBasicBlockRef ends[2];
  JV *vals[2] = {NULL, NULL};
  IrGraph *gs[2] = {a, b};
  LLVMBasicBlockRef starts[2] = {tb, eb};
  LLVMValueRef before = e->guarded;   /* holds in both branches and after them */
  for (int k = 0; k < 2; k++) {
    LLVMPositionBuilderAtEnd(B, starts[k]);
    e->dead = false;
    e->guarded = before;
    JV *v = NULL;
    int r = emit_body(e, gs[k], tail, &v);
    if (r < 0) return -1;
    if (!tail && !e->dead && v) {
      vals[k] = coerce(e, v, res, n);
      if (!vals[k]) return -1;
      ends[k] = LLVMGetInsertBlock(B);
    }
  }
  if (tail) {
    e->dead = true;
    return 1;
  }
  int live = (vals[0] != NULL) + (vals[1] != NULL);
  if (!live) {
    e->dead = true;
    *value = NULL;
    return 0;
  }
  LLVMBasicBlockRef j = new_block(e, "endif");
  for (int k = 0; k < 2; k++)
    if (vals[k]) {
      LLVMPositionBuilderAtEnd(B, ends[k]);
      LLVMBuildBr(B, j);
    }
  LLVMPositionBuilderAtEnd(B, j);
  e->dead = false;
  e->guarded = before;
  JV *r = jv_new(res);
  LLVMTypeRef *lt = leaf_type_array(lw, res);
  for (int i = 0; i < res->nleaves; i++) {
    r->v[i] = LLVMBuildPhi(B, lt[i], "");
    for (int k = 0; k < 2; k++)
      if (vals[k]) LLVMAddIncoming(r->v[i], &vals[k]->v[i], &ends[k], 1);
  }
  bind(e, n, r);
  return 0;
}

/* A tail call of graph h with the arguments of n, as a jump to h's
 * block (made here the first time, with phis for its parameters). */
static int emit_jump(Em *e, IrGraph *h, IrNode *n) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  int nargs = n->nin - 1;
  JV **args = lang_alloc((size_t)(nargs ? nargs : 1) * sizeof *args);
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = val(e, n->in[1 + i], n))) return -1;
  Block *bk = ir_map_get(&e->blocks, h);
  bool first = bk == NULL;
  if (first) {
    bk = lang_alloc(sizeof *bk);
    bk->np = h->nparams;
    bk->prep = lang_alloc((size_t)(h->nparams ? h->nparams : 1) * sizeof *bk->prep);
    for (int i = 0; i < h->nparams; i++)
      if (!(bk->prep[i] = rep_of(lw, type_of(lw, h->params[i]), h->params[i]))) return -1;
  }
  int nl = leaves(bk->prep, h->nparams);
  LLVMValueRef *in = lang_alloc((size_t)(nl ? nl : 1) * sizeof *in);
  int k = 0;
  for (int i = 0; i < h->nparams; i++) {
    JV *a = coerce(e, args[i], bk->prep[i], n);
    if (!a) return -1;
    for (int j = 0; j < a->rep->nleaves; j++) in[k++] = a->v[j];
  }
  if (!first) poll(e, n);   /* a back edge: a loop going round */
  LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
  if (first) {
    bk->bb = new_block(e, h->name->data);
    LLVMBuildBr(B, bk->bb);
    LLVMPositionBuilderAtEnd(B, bk->bb);
    bk->phis = lang_alloc((size_t)(nl ? nl : 1) * sizeof *bk->phis);
    k = 0;
    for (int i = 0; i < h->nparams; i++) {
      JV *p = jv_new(bk->prep[i]);
      LLVMTypeRef *lt = leaf_type_array(lw, bk->prep[i]);
      for (int j = 0; j < bk->prep[i]->nleaves; j++) {
        p->v[j] = bk->phis[k] = LLVMBuildPhi(B, lt[j], "");
        LLVMAddIncoming(bk->phis[k], &in[k], &from, 1);
        k++;
      }
      bind(e, h->params[i], p);
    }
    ir_map_put(&e->blocks, h, bk);
    e->dead = false;
    e->guarded = NULL;
    return emit_body(e, h, true, NULL) < 0 ? -1 : 1;
  }
  for (int i = 0; i < nl; i++) LLVMAddIncoming(bk->phis[i], &in[i], &from, 1);
  if (bk->fvphis) {
    /* the frame's own block: its free variables go round unchanged */
    int nfl = leaves(e->f->fvrep, e->f->nfv);
    for (int i = 0; i < nfl; i++) LLVMAddIncoming(bk->fvphis[i], &bk->fvphis[i], &from, 1);
  }
  LLVMBuildBr(B, bk->bb);
  e->dead = true;
  return 1;
}

/* global(name): its value now, which the code assumes it keeps (a
 * guard checked on entry) when it is a function or a builtin. */
static JV *emit_global(Em *e, IrNode *n) {
  Lw *lw = e->lw;
  ObjStr *name = AS_STR(n->in[1]->value);
  ObjModule *m = n->graph->module;
  Value v = v_unbound(), slot;
  if (m && m->names && lang_dict_get(m->names, name, &slot)) v = m->slots[slot.i];
  if (v.tag == V_UNBOUND && !(lw->vm->builtins && lang_dict_get(lw->vm->builtins, name, &v))) {
    /* a def of a module not run yet (emit-llvm), as inference typed it */
    IrType *t = type_of(lw, n);
    if (!t || t->kind != IT_CLOSURE || t->ctx || (ir_free_vars(t->graph), t->graph->nfv)) {
      nope(lw, n, "global '%s' is not bound when compiled", name->data);
      return NULL;
    }
    v = v_obj(ev_closure(lw->vm, t->graph, NULL));
  }
  if (v_is_obj(v, O_FUNC) || v_is_obj(v, O_BUILTIN)) {
    add_guard(lw, m, name, v);
    if (v_is_obj(v, O_BUILTIN)) {
      Rep *r = rep_new(R_BUILTIN, 0, NULL);
      r->builtin = AS_BUILTIN(v);
      return jv_new(r);
    }
    if (AS_FUNC(v)->nenv == 0) {
      Rep *r = rep_new(R_CLOSURE, 0, NULL);
      r->graph = AS_FUNC(v)->graph;
      return jv_new(r);
    }
    int k = add_const(lw, v);
    JV *c = jv_new(&r_value);
    c->v[0] = const_word(lw, e, k, 0);
    c->v[1] = const_word(lw, e, k, 1);
    return c;
  }
  /* inference typed a module by the value too (ir_infer_global): the
   * code assumes it, as a function's */
  if (v_is_obj(v, O_MODULE)) add_guard(lw, m, name, v);
  Rep *res = rep_of(lw, type_of(lw, n), n);
  if (!res) return NULL;
  if (res->kind != R_VALUE) {
    nope(lw, n, "global '%s' holds a %s, which may change", name->data, lang_type_name(v));
    return NULL;
  }
  int site = add_site(lw, n, e->f->g);
  LLVMValueRef out = value_slots(e, 1);
  LLVMValueRef ok = call(lw, "mist_rt_global", lw->i1, 3, (LLVMTypeRef[]){lw->ptr, lw->i32, lw->ptr},
                         (LLVMValueRef[]){e->cx, ci32(lw, site), out});
  check(e, ok, n);
  LLVMValueRef tag, pay;
  load_value(e, out, &tag, &pay);
  return unbox(e, tag, pay, res, n, true);
}

/* ---- fused loops ---- */

static IrType *type_of_ud(void *lw, IrNode *n) { return type_of(lw, n); }

/* The value of fused group fg's root: its loop (fuse.c) run by the
 * runtime on the group's inputs, tensors boxed and numbers as bits. */
static JV *emit_fused(Em *e, FuseGroup *fg) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  IrNode *n = fg->root;
  char name[256];
  snprintf(name, sizeof name, "%sfused.%d", lw->prefix, lw->nfn++);
  LLVMValueRef loop = jit_fuse_kernel(lw->M, fg, name);
  LLVMValueRef tens = value_slots(e, fg->ntensors), nums = value_slots(e, fg->nnumbers), out = value_slots(e, 1);
  for (int i = 0; i < fg->nins; i++) {
    FuseIn *in = &fg->ins[i];
    JV *x = val(e, in->node, n);
    if (!x) return NULL;
    if (in->kind != FI_FLOAT && in->kind != FI_INT) {
      if (!box_into(e, x, slot_at(e, tens, in->slot), n)) return NULL;
      continue;
    }
    LLVMValueRef bits = in->kind == FI_INT ? as_int(e, x) : LLVMBuildBitCast(B, as_float(e, x), lw->i64, "");
    LLVMBuildStore(B, bits, LLVMBuildGEP2(B, lw->i64, nums, (LLVMValueRef[]){ci64(lw, in->slot)}, 1, ""));
  }
  int site = add_typed_site(lw, n, e->f->g, fg->result);
  sync_depth(e, e->depth);
  LLVMTypeRef pt[] = {lw->ptr, lw->ptr, lw->i32, lw->i32, lw->ptr, lw->ptr, lw->i64, lw->i64, lw->i32, lw->i64,
                      lw->i64, lw->i32, lw->ptr};
  LLVMValueRef av[] = {e->cx, loop, ci32(lw, site), ci32(lw, fg->ntensors), tens, nums, ci64(lw, fg->rows),
                       ci64(lw, fg->cols), ci32(lw, fg->reduce ? (int)fg->reduce | (fg->columns ? FR_COLUMNS : 0) | fg->type->dtype << FR_DTYPE_SHIFT : 0),
                       ci64(lw, fg->red_len), ci64(lw, fg->red_after), ci32(lw, fg->reuse), out};
  check(e, call(lw, "mist_rt_fused", lw->i1, 13, pt, av), n);
  JV *r = jv_new(&r_value);
  load_value(e, out, &r->v[0], &r->v[1]);
  const char *file = file_of(lw, n);
  sb_printf(&lw->fuselog, "jit: %s (%s:%d): fused %s\n", e->f->g->name->data, file ? file : "?", n->span.line,
            jit_fuse_describe(fg));
  return r;
}

static int emit_node_slots(Em *e, IrNode *n, bool tail, JV **value);

/* One node.  Returns 1 when it ended the block (a return or a jump for
 * a tail call), 0 when not, -1 when it cannot be compiled.  The Value
 * slots it used are free after it. */
static int emit_node(Em *e, IrNode *n, bool tail, JV **value) {
  int cursor = e->cursor;
  int r = emit_node_slots(e, n, tail, value);
  e->cursor = cursor;
  return r;
}

static int emit_node_slots(Em *e, IrNode *n, bool tail, JV **value) {
  Lw *lw = e->lw;
  if (switch_inlined(e, n)) return 0;
  IrNode *f = n->in[0];
  if (n->nin == 1 && f->kind == IR_APPLY && switch_inlined(e, f)) return emit_switch(e, f, n, tail, value);
  int p = ir_node_prim(n);
  int nargs = n->nin - 1;
  JV **args = lang_alloc((size_t)(nargs ? nargs : 1) * sizeof *args);
  if (p == IR_P_GLOBAL) {
    JV *v = emit_global(e, n);
    if (!v) return -1;
    bind(e, n, v);
    return 0;
  }
  if (p == IR_P_SET_GLOBAL || p == IR_P_IMPORT) return nope(lw, n, "a module's statement") ? 0 : -1;
  IrGraph *h = ir_node_graph(f);
  if (p < 0 && h && h->nparams == nargs && !(tail && (h->flags & IRG_FUNCTION))) {
    bool user = (h->flags & IRG_FUNCTION) != 0;
    if (tail && !user && (h == e->f->g || fvs_available(e, h))) return emit_jump(e, h, n);
  }
  JV *r;
  FuseGroup *fg = ir_map_get(&e->fused, n);
  if (fg && fg->root != n) return 0;   /* computed in its group's loop */
  if (fg) {
    r = emit_fused(e, fg);
    goto computed;
  }
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = val(e, n->in[1 + i], n))) return -1;
  if (p >= 0) {
    Rep *res = rep_of(lw, type_of(lw, n), n);
    if (!res) return -1;
    LowerFn lf = prim_lowering[p];
    r = lf ? lf(e, n, p, args, nargs, res) : prim_boxed(e, p, nargs, args, res, n);
  } else if (h && h->nparams == nargs && !(tail && (h->flags & IRG_FUNCTION))) {
    /* a graph called where it is made: its own frame */
    ir_free_vars(h);
    JV **fvs = lang_alloc((size_t)(h->nfv ? h->nfv : 1) * sizeof *fvs);
    Rep **fr = lang_alloc((size_t)(h->nfv ? h->nfv : 1) * sizeof *fr);
    for (int i = 0; i < h->nfv; i++) {
      if (!(fvs[i] = val(e, h->fv[i], n))) return -1;
      fr[i] = fvs[i]->rep;
    }
    Rep *res = rep_of(lw, type_of(lw, n), n);
    if (!res) return -1;
    r = call_graph(e, h, fr, args, fvs, n, CALL_PLAIN, res);
  } else {
    JV *fv = val(e, f, n);
    if (!fv) return -1;
    r = call_value(e, n, fv, nargs, args, tail);
  }
computed:
  if (!r) return -1;
  IrType *t = type_of(lw, n);
  if (t && t->kind == IT_NEVER) {
    /* it raises: nothing after it runs */
    LLVMValueRef tag, pay;
    if (!box(e, r, &tag, &pay, n)) return -1;
    bad_value(e, tag, pay, n);
    e->dead = true;
    return 1;
  }
  bind(e, n, r);
  if (tail) {
    JV *dummy = NULL;
    return finish_value(e, n, r, true, &dummy);
  }
  return 0;
}

/* Emit g's nodes and its result: returned (ret) or in *value.  Returns
 * 1 when the block ended, 0 when not, -1 when something cannot be
 * compiled. */
static int emit_body(Em *e, IrGraph *g, bool ret, JV **value) {
  IrNode *last = g->nnodes ? g->nodes[g->nnodes - 1] : NULL;
  if (e->lw->fuse) jit_fuse_plan(g, &e->uses, type_of_ud, e->lw, &e->fused);
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    bool tail = ret && n == g->ret && n == last;
    JV *v = NULL;
    int r = emit_node(e, n, tail, &v);
    if (r < 0) return -1;
    if (r > 0 || e->dead) return 1;
  }
  IrNode *rn = g->ret;
  JV *v = rn ? val(e, rn, rn) : jv_new(&r_none);
  if (!v) return -1;
  return finish_value(e, rn ? rn : last, v, ret, value);
}

/* The entry of a frame with twins (get_frame): where the depths its
 * chain counts may reach the limit, its careful copy runs instead. */
static bool enter_chain(Em *e) {
  Lw *lw = e->lw;
  LLVMBuilderRef B = lw->B;
  Frame *f = e->f;
  int size = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f->fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) size++;
  f->chain = chain_length(f->selfcalls, size);
  Frame *c = get_frame(lw, f->g, f->fvrep, CAREFUL, NULL);
  if (!c) return false;
  /* entry: ...; br start  becomes  entry: ...; br depth + chain < max, start, near */
  LLVMValueRef br = LLVMGetBasicBlockTerminator(e->entry);
  if (!br || LLVMGetInstructionOpcode(br) != LLVMBr || LLVMIsConditional(br)) {
    /* (its twins check no depth: without the check, no twins) */
    nope(lw, f->g->ret, "a recursion whose entry is not where its depth can be checked");
    return false;
  }
  LLVMBasicBlockRef start = LLVMGetSuccessor(br, 0), near = new_block(e, "near_limit");
  LLVMPositionBuilderBefore(B, br);
  LLVMValueRef max = LLVMBuildLoad2(B, lw->i32, vm_field(e, offsetof(MistVM, max_depth)), "max");
  LLVMValueRef deepest = LLVMBuildAdd(B, LLVMBuildSExt(B, e->depth, lw->i64, ""), ci64(lw, f->chain), "");
  likely_br(lw, LLVMBuildICmp(B, LLVMIntSLT, deepest, LLVMBuildSExt(B, max, lw->i64, ""), ""), start, near);
  /* (both sides compute the same: peek.c may look past it) */
  LLVMSetMetadata(LLVMGetPreviousInstruction(br), LLVMGetMDKindIDInContext(lw->C, "mist.same", 9),
                  LLVMMetadataAsValue(lw->C, LLVMMDNodeInContext2(lw->C, NULL, 0)));
  LLVMInstructionEraseFromParent(br);
  LLVMPositionBuilderAtEnd(B, near);
  unsigned np = LLVMCountParams(f->fn);
  LLVMValueRef *args = lang_alloc(np * sizeof *args);
  for (unsigned i = 0; i < np; i++) args[i] = LLVMGetParam(f->fn, i);
  LLVMBuildRet(B, LLVMBuildCall2(B, c->fnty, c->fn, args, np, ""));
  return true;
}

static bool emit_frame(Lw *lw, Frame *f) {
  Em em = {0}, *e = &em;
  e->lw = lw;
  e->f = f;
  e->fn = f->fn;
  IrGraph *g = f->g;
  ev_count_uses_shapes(g, &e->uses, &e->shape_uses);
  e->entry = new_block(e, "entry");
  LLVMPositionBuilderAtEnd(lw->B, e->entry);
  e->cx = LLVMGetParam(f->fn, 0);
  e->depth = LLVMGetParam(f->fn, 1);
  e->vm = LLVMBuildLoad2(lw->B, lw->ptr, e->cx, "vm");
  invariant(lw, e->vm);
  int k = 2;
  JV **params = lang_alloc((size_t)(g->nparams ? g->nparams : 1) * sizeof *params);
  for (int i = 0; i < g->nparams; i++) {
    params[i] = jv_new(f->prep[i]);
    for (int j = 0; j < f->prep[i]->nleaves; j++) params[i]->v[j] = LLVMGetParam(f->fn, (unsigned)k++);
  }
  for (int i = 0; i < f->nfv; i++) {
    JV *v = jv_new(f->fvrep[i]);
    for (int j = 0; j < f->fvrep[i]->nleaves; j++) v->v[j] = LLVMGetParam(f->fn, (unsigned)k++);
    bind(e, f->fv[i], v);
  }
  /* the graph's own block, with phis, for its tail calls of itself */
  Block *bk = lang_alloc(sizeof *bk);
  bk->np = g->nparams;
  bk->prep = f->prep;
  int nl = leaves(f->prep, g->nparams);
  bk->phis = lang_alloc((size_t)(nl ? nl : 1) * sizeof *bk->phis);
  bk->bb = new_block(e, "start");
  LLVMBuildBr(lw->B, bk->bb);
  LLVMPositionBuilderAtEnd(lw->B, bk->bb);
  k = 0;
  for (int i = 0; i < g->nparams; i++) {
    JV *p = jv_new(f->prep[i]);
    LLVMTypeRef *lt = leaf_type_array(lw, f->prep[i]);
    for (int j = 0; j < f->prep[i]->nleaves; j++) {
      p->v[j] = bk->phis[k] = LLVMBuildPhi(lw->B, lt[j], "");
      LLVMAddIncoming(bk->phis[k], &params[i]->v[j], &e->entry, 1);
      k++;
    }
    bind(e, g->params[i], p);
  }
  /* and for its free variables: a tail call of itself through another
   * closure of its graph (the turns of a loop's backward pass, each
   * calling the one before) goes round with new ones (call_captured) */
  int nfl = leaves(f->fvrep, f->nfv);
  bk->fvphis = lang_alloc((size_t)(nfl ? nfl : 1) * sizeof *bk->fvphis);
  k = 0;
  for (int i = 0; i < f->nfv; i++) {
    JV *v = ir_map_get(&e->vals, f->fv[i]), *p = jv_new(f->fvrep[i]);
    LLVMTypeRef *lt = leaf_type_array(lw, f->fvrep[i]);
    for (int j = 0; j < f->fvrep[i]->nleaves; j++) {
      p->v[j] = bk->fvphis[k] = LLVMBuildPhi(lw->B, lt[j], "");
      LLVMAddIncoming(bk->fvphis[k], &v->v[j], &e->entry, 1);
      k++;
    }
    bind(e, f->fv[i], p);
  }
  ir_map_put(&e->blocks, g, bk);
  e->start = bk;
  bool ok = emit_body(e, g, true, NULL) >= 0;
  size_scratch(e);
  if (ok && f->twin == 0 && f->selfcalls) ok = enter_chain(e);
  return ok;
}

/* ---- the entry ---- */

/* bool entry(cx, params, env, out): the signature's values unboxed,
 * the function's frame called, its result boxed. */
static bool emit_entry(Lw *lw, Frame *root, IrGraph *orig, const char *name) {
  LLVMTypeRef fty = LLVMFunctionType(lw->i1, (LLVMTypeRef[]){lw->ptr, lw->ptr, lw->ptr, lw->ptr}, 4, false);
  LLVMValueRef fn = LLVMAddFunction(lw->M, name, fty);
  Em em = {0}, *e = &em;
  e->lw = lw;
  e->f = root;
  e->fn = fn;
  e->entry = new_block(e, "entry");
  LLVMPositionBuilderAtEnd(lw->B, e->entry);
  e->cx = LLVMGetParam(fn, 0);
  e->vm = LLVMBuildLoad2(lw->B, lw->ptr, e->cx, "vm");
  invariant(lw, e->vm);
  LLVMValueRef params = LLVMGetParam(fn, 1), env = LLVMGetParam(fn, 2), out = LLVMGetParam(fn, 3);
  JV **args = lang_alloc((size_t)(root->np ? root->np : 1) * sizeof *args);
  JV **fvs = lang_alloc((size_t)(root->nfv ? root->nfv : 1) * sizeof *fvs);
  for (int i = 0; i < root->np; i++) {
    LLVMValueRef tag, pay;
    load_value(e, slot_at(e, params, i), &tag, &pay);
    if (!(args[i] = unbox(e, tag, pay, root->prep[i], root->g->params[i], false))) return false;
  }
  for (int i = 0; i < root->nfv; i++) {
    int j = 0;
    while (j < orig->nfv && orig->fv[j] != root->fv[i]) j++;
    if (j == orig->nfv) return nope(lw, root->fv[i], "a free variable of the copy that the function does not have");
    LLVMValueRef tag, pay;
    load_value(e, slot_at(e, env, j), &tag, &pay);
    if (!(fvs[i] = unbox(e, tag, pay, root->fvrep[i], root->fv[i], false))) return false;
  }
  /* the frame's own failures return false from here too; its depth is
   * the one the runtime counted for it, and is left so */
  int na = 2 + leaves(root->prep, root->np) + leaves(root->fvrep, root->nfv);
  LLVMValueRef *av = lang_alloc((size_t)na * sizeof *av);
  int k = 0;
  av[k++] = e->cx;
  e->depth = LLVMBuildLoad2(lw->B, lw->i32, vm_field(e, offsetof(MistVM, depth)), "depth");
  av[k++] = e->depth;
  for (int i = 0; i < root->np; i++)
    for (int j = 0; j < args[i]->rep->nleaves; j++) av[k++] = args[i]->v[j];
  for (int i = 0; i < root->nfv; i++)
    for (int j = 0; j < fvs[i]->rep->nleaves; j++) av[k++] = fvs[i]->v[j];
  LLVMValueRef r = LLVMBuildCall2(lw->B, root->fnty, root->fn, av, (unsigned)na, "");
  sync_depth(e, e->depth);
  LLVMBasicBlockRef good = new_block(e, "ok"), bad = new_block(e, "fail");
  LLVMBuildCondBr(lw->B, LLVMBuildExtractValue(lw->B, r, 0, ""), good, bad);
  LLVMPositionBuilderAtEnd(lw->B, bad);
  LLVMBuildRet(lw->B, ci1(lw, false));
  LLVMPositionBuilderAtEnd(lw->B, good);
  JV *res = jv_new(root->ret);
  for (int j = 0; j < root->ret->nleaves; j++) res->v[j] = LLVMBuildExtractValue(lw->B, r, (unsigned)(1 + j), "");
  /* boxing may call the runtime: its frame is the entry's, with no sites */
  LLVMValueRef tag, pay;
  if (!box(e, res, &tag, &pay, root->g->ret)) return false;
  store_value(e, out, tag, pay);
  LLVMBuildRet(lw->B, ci1(lw, true));
  size_scratch(e);
  return true;
}

/* jit_lower, with (flat) or without tapes of loops in other loops'
 * turns; *unfit where such a tape failed. */
static bool lower(MistVM *vm, LLVMContextRef ctx, IrGraph *g, IrTyped *t, IrType **sig, const char *prefix, bool flat,
                  Lowered *out, const char **why, bool *unfit) {
  Lw lwv = {0}, *lw = &lwv;
  lw->vm = vm;
  lw->flat = flat;
  lw->C = ctx;
  lw->prefix = prefix;
  lw->M = LLVMModuleCreateWithNameInContext(prefix, ctx);
  lw->B = LLVMCreateBuilderInContext(ctx);
  lw->i1 = LLVMInt1TypeInContext(ctx);
  lw->i8 = LLVMInt8TypeInContext(ctx);
  lw->i32 = LLVMInt32TypeInContext(ctx);
  lw->i64 = LLVMInt64TypeInContext(ctx);
  lw->f64 = LLVMDoubleTypeInContext(ctx);
  lw->ptr = LLVMPointerTypeInContext(ctx, 0);
  lw->voidt = LLVMVoidTypeInContext(ctx);
  lw->valuet = LLVMArrayType2(lw->i64, 2);
  lw->fuse = jit_fuse_enabled();
  sb_init(&lw->fuselog);
  note_result(lw, t);
  IrGraph *root = t->graph;
  ir_free_vars(root);
  ir_free_vars(g);
  Rep **fr = lang_alloc((size_t)(root->nfv ? root->nfv : 1) * sizeof *fr);
  bool ok = true;
  for (int i = 0; i < root->nfv && ok; i++) {
    int j = 0;
    while (j < g->nfv && g->fv[j] != root->fv[i]) j++;
    ok = j < g->nfv ? (fr[i] = rep_of(lw, sig[g->nparams + j], root->fv[i])) != NULL
                    : nope(lw, root->fv[i], "a free variable of the copy that the function does not have");
  }
  Frame *rf = ok ? get_frame(lw, root, fr, 0, root->ret) : NULL;
  ok = rf != NULL;
  for (int i = 0; ok && i < lw->nqueue; i++) ok = emit_frame(lw, lw->queue[i]);
  const char *entry = lang_str_fmt("%sentry", prefix)->data;
  if (ok) ok = emit_entry(lw, rf, g, entry);
  LLVMDisposeBuilder(lw->B);
  /* (not verified here: backend.c verifies what it compiles, and a hit
   * of the compile cache is a module verified when it was stored) */
  if (!ok) {
    LLVMDisposeModule(lw->M);
    *why = lw->why ? lw->why : "the lowering failed";
    *unfit = lw->unfit;
    return false;
  }
  /* (to the process's stderr, where tests/unit/test_jit.c reads them;
   * after what the program printed before, as the log's other lines) */
  if (lw->fuselog.len && getenv("MIST_JIT_LOG") && *getenv("MIST_JIT_LOG")) {
    fflush(stdout);
    fputs(lw->fuselog.data, stderr);
  }
  out->mod = lw->M;
  out->entry = entry;
  out->sites = lw->sites;
  out->nsites = lw->nsites;
  out->consts = lw->consts;
  out->nconsts = lw->nconsts;
  out->guards = lw->guards;
  out->nguards = lw->nguards;
  return true;
}

bool jit_lower(MistVM *vm, LLVMContextRef ctx, IrGraph *g, IrTyped *t, IrType **sig, const char *prefix,
               Lowered *out, const char **why) {
  bool unfit = false;
  if (lower(vm, ctx, g, t, sig, prefix, true, out, why, &unfit)) return true;
  /* A tape of a loop in another loop's turn whose turn came kept
   * otherwise than the tape keeps it: the search of their Reps is
   * bounded, and loops nested deeper than it sees (six deep) are met
   * in part.  Those loops keep their closures, compiled, as they did
   * before such tapes. */
  return unfit && lower(vm, ctx, g, t, sig, prefix, false, out, why, &unfit);
}
