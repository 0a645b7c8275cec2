/* ir.h: Mist's one intermediate representation.
 *
 * A program is a set of graphs.  A graph has parameters, a schedule of
 * application nodes (the order they run in, which is source order as
 * lowered: it keeps the order of effects such as print and errors) and
 * an output node.  Nodes are constants, parameters and applications
 * (callee and arguments).  A node of an enclosing graph used inside a
 * nested graph is a free variable, which makes the nested graph a
 * closure: a graph constant evaluates to a closure that captures the
 * current values of the graph's free variables.  `if` is
 * `switch(c, @then, @else)()`, loops are tail-recursive graphs, and
 * the code after a loop or an `if` that needs a join is a continuation
 * graph called in tail position.
 *
 * Every node keeps the source span it came from.  The text form
 * (print.c writes it, read.c parses it back) is documented in
 * docs/ir.md.
 */
#ifndef MIST_IR_IR_H
#define MIST_IR_IR_H

#include "lang/strbuf.h"
#include "lang/vm.h"

typedef enum {
#define PRIM(e, name, arity, flags, eval, type, none, rev, fwd, lower, shard, doc) IR_P_##e,
#include "ir/ops.def"
#undef PRIM
  IR_NPRIMS
} IrPrim;

enum { P_PURE = 1, P_DIFF = 2, P_SHAPE_XY = 4, P_FRESH = 8, P_OVER_D = 16 };   /* ops.def's flags */

typedef struct IrPrimInfo {
  const char *name;
  int arity;         /* -1: variadic */
  unsigned flags;
  const char *doc;
} IrPrimInfo;

extern const IrPrimInfo ir_prims[IR_NPRIMS];
int ir_prim_lookup(const char *name, size_t len);     /* -1 when unknown */

/* The math and tensor operations users call by name (builtin_ops.def):
 * ObjBuiltin.op is one of these. */
typedef enum {
#define OP(e, name, kind, flags, eval, type, rev, fwd, lower, shard, doc) IR_B_##e,
#include "ir/builtin_ops.def"
#undef OP
  IR_NBUILTIN_OPS
} IrBuiltinOp;

enum { B_DIFF = 1 };                         /* builtin_ops.def's flags */
typedef enum { IR_OP_FN, IR_OP_METHOD, IR_OP_PROP } IrOpKind;   /* and its kinds */

typedef struct IrBuiltinOpInfo {
  const char *name;
  IrOpKind kind;
  unsigned flags;
  const char *doc;
} IrBuiltinOpInfo;

extern const IrBuiltinOpInfo ir_builtin_ops[IR_NBUILTIN_OPS];

typedef enum { IR_CONST, IR_PARAM, IR_APPLY } IrKind;

typedef struct IrNode IrNode;
typedef struct IrGraph IrGraph;

/* Where a node inlined from another function's body came from
 * (ir/inline.c): the call it replaced, in the caller's frame, and the
 * function it was in, so that an error in it lists that function's frame
 * as the call would have (ev_trace_frame).  Chained outwards when the
 * call was itself a copy inlined from further in. */
typedef struct IrInlined {
  Span call;                  /* the call the body replaced */
  const char *callee;         /* the display name of the function inlined */
  const struct IrInlined *outer;
} IrInlined;

struct IrNode {
  IrKind kind;
  uint32_t id;          /* unique in its IrUnit, for printing; dense there, so
                           a pass may keep a mark per node in an array (marks.h) */
  IrGraph *graph;       /* owner (params and applies); NULL for constants */
  Span span;
  Value value;          /* IR_CONST: the constant: a number, str, tuple,
                           None, a builtin or primitive (ObjBuiltin) or a
                           graph (ObjGraph) */
  int nin;              /* IR_APPLY: in[0] is the callee, in[1..] the args */
  IrNode **in;
  ObjStr *name;         /* the source variable it was bound to, or NULL */
  uint64_t serial;      /* unique in the process, given in order of making: a
                           name for the node that is the same from run to run
                           (autodiff's keys of free variables' sensitivities,
                           which end up as constants in derivative programs,
                           so in the compile cache's keys) */
  const IrInlined *inlined;   /* NULL, or where the inliner copied it from */
};

enum {
  IRG_FUNCTION = 1,     /* a def or lambda of the user */
  IRG_MODULE = 2,       /* a file's top-level code */
  IRG_BRANCH = 4,       /* a branch of an if or a short-circuit operator */
  IRG_LOOP = 8,         /* a loop's header: it calls itself to iterate */
  IRG_JOIN = 16,        /* the code after a loop or an if (a continuation) */
  IRG_BODY = 32,        /* a loop body that returns to its header */
  IRG_TAPE = 64,        /* a backward pass made on each turn of a loop: its
                           closures form a chain, so they are allocated side
                           by side (see make_closure in eval.c) */
  IRG_ZERO_FRAME = 128, /* a reverse pass's forward graph (J of a graph,
                           grad's): its frames start zeroed, since the slots
                           that receive its callees' backpropagators are
                           written late, and until then would hold the last
                           pass's, keeping its whole chain alive */
  IRG_PASS = 256,       /* grad's graph: each call is a reverse pass, before
                           which the last one's chain is dead (a time to
                           collect: lang_gc_pass_due) */
  IRG_BACK = 512,       /* a backward pass made by the reverse transform:
                           though a branch, it is passed as a value (a
                           backpropagator, a continuation) and called
                           through it, not only where it is named */
};

struct IrGraph {
  ObjStr *name;         /* unique in a unit: "fib", "outer.inner", "fib.if1" */
  ObjStr *display;      /* what errors call it: "inner", "<lambda>", "<module>" */
  uint32_t id;
  unsigned flags;
  IrGraph *parent;      /* lexically enclosing graph, NULL at top */
  ObjModule *module;    /* whose globals global() reads */
  Span span;
  int nparams;
  IrNode **params;
  int nnodes, capnodes;
  IrNode **nodes;       /* the schedule: apply nodes in the order they run */
  IrNode *ret;          /* the output */
  /* default values of the last ndefaults parameters: nodes of an
   * enclosing graph, evaluated when a closure of g is made, so they
   * count as free variables of g */
  int ndefaults;
  IrNode **defaults;
  /* free variables: nodes of enclosing graphs used here or in graphs
   * nested here or in graphs referenced from here (ir_free_vars) */
  int nfv;
  IrNode **fv;
  bool fv_done;
  /* for an autodiff transform: the graph it transforms, and for each of
   * its free variables (in fv order) the node of jsource it stands for.
   * Part of the program: the primitives that re-key sensitivities
   * between a transform and its source (jenv, jinv_env) read them. */
  struct IrGraph *jsource;
  IrNode **jorig;
  /* for a forward-mode transform: for each free variable, the node of
   * jsource whose value (ftan false) or tangent (true) it is */
  IrNode **forig;
  bool *ftan;
  /* for a specialised copy that inference made (ir_infer): the graph it
   * copies, so that a closure leaving compiled code, or met there, is
   * known as the program's own function */
  struct IrGraph *copy_of;
};

/* The program's graph g is a copy of (g itself when it is no copy). */
static inline struct IrGraph *ir_graph_origin(struct IrGraph *g) {
  while (g->copy_of) g = g->copy_of;
  return g;
}

/* What a pass keeps about a graph (the interpreter's compiled code,
 * autodiff's transforms of it, inference's specialisations) is not part
 * of the program, so it is no field of IrGraph: each such pass owns a
 * side slot, a word allocated with the graph after its struct, where it
 * hangs data of a type only it knows.  The data lives as long as the
 * graph and dies with it.  (A table of the pass's own, keyed by graph,
 * could not let a graph die: its entries refer back to their graph, as
 * code runs it and a transform names its source, and a weak table of
 * the collector cannot drop an entry whose value reaches its key: it
 * has no ephemerons.)  Copies of a graph start with empty slots.
 * Threads may read a slot while another sets it. */
typedef enum {
  IR_SIDE_CODE,         /* ir/eval.c: the graph's EvCode */
  IR_SIDE_AD,           /* autodiff/: its AdRoots (transforms, derivative graphs made of it) */
  IR_SIDE_INFER,        /* ir/infer.c: its specialisations, by signature */
  IR_NSIDES
} IrSide;

static inline void *ir_side(const IrGraph *g, IrSide s) {
  return __atomic_load_n(&((void *const *)(g + 1))[s], __ATOMIC_ACQUIRE);
}
static inline void ir_side_set(IrGraph *g, IrSide s, void *data) {
  __atomic_store_n(&((void **)(g + 1))[s], data, __ATOMIC_RELEASE);
}
/* Sets slot s to data unless it holds something already; what it holds
 * then (data, or what another thread put there first). */
static inline void *ir_side_claim(IrGraph *g, IrSide s, void *data) {
  void *old = NULL;
  if (__atomic_compare_exchange_n(&((void **)(g + 1))[s], &old, data, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return data;
  return old;
}

/* Has the interpreter compiled g (its code is in g's side slot
 * IR_SIDE_CODE)?  Then g's free variables and body are fixed, and
 * passes leave it alone. */
static inline bool ir_frozen(const IrGraph *g) { return ir_side(g, IR_SIDE_CODE) != NULL; }

/* All graphs made by one lowering, for printing and passes. */
typedef struct IrUnit {
  int ngraphs, capgraphs;
  IrGraph **graphs;
  uint32_t next_id;
  const IrInlined *inlined;   /* given to each node made (IrNode.inlined):
                                 autodiff sets it to that of the node it
                                 transforms, so derivatives of derivatives
                                 keep the frames inlined */
} IrUnit;

IrUnit *ir_unit_new(void);
/* A zeroed graph with its side slots, in no unit (ir_graph_new makes
 * one that is). */
IrGraph *ir_graph_alloc(void);
IrGraph *ir_graph_new(IrUnit *u, const char *name, IrGraph *parent, unsigned flags, Span span);
IrNode *ir_param(IrUnit *u, IrGraph *g, ObjStr *name, Span span);
IrNode *ir_const(IrUnit *u, Value v, Span span);
/* The serial the next node made will have, and skipping n serials: the
 * compile cache's hits that do not lower (jit/key.c) skip what the
 * lowering would have taken, so that the serials of what is made after
 * them, which derivative programs hold as constants, are those of a run
 * that lowered. */
uint64_t ir_serials_made(void);
void ir_serials_skip(uint64_t n);
IrNode *ir_const_graph(IrUnit *u, IrGraph *g, Span span);
IrNode *ir_const_prim(IrUnit *u, IrPrim p, Span span);
/* An application appended to g's schedule.  in[0] is the callee. */
IrNode *ir_apply(IrUnit *u, IrGraph *g, int nin, IrNode **in, Span span);
IrNode *ir_prim_apply(IrUnit *u, IrGraph *g, IrPrim p, Span span, int nargs, ...);
IrNode *ir_prim_applyv(IrUnit *u, IrGraph *g, IrPrim p, Span span, int nargs, IrNode **args);

/* The primitive a node calls, or -1. */
int ir_node_prim(const IrNode *n);
/* The graph a constant node holds, or NULL. */
IrGraph *ir_node_graph(const IrNode *n);
bool ir_is_ancestor(const IrGraph *anc, const IrGraph *g);   /* anc == g or encloses it */

/* The primitive as a callable value (an ObjBuiltin with prim set), one
 * per VM; made by the interpreter, which gives it its meaning. */
Value ir_prim_value(MistVM *vm, IrPrim p);

/* Free variables of g (computed once, cached in g->fv). */
void ir_free_vars(IrGraph *g);

/* Text form.  ir_print_graph writes g and every graph it uses that is
 * nested in it or synthetic (branches, loops, joins), in text form. */
void ir_print_graph(MistVM *vm, IrGraph *g, StrBuf *out);
void ir_print_unit(MistVM *vm, IrUnit *u, StrBuf *out);
/* A str as a double-quoted literal (braces doubled in an f-string: fstr). */
void ir_str_literal(StrBuf *out, const char *s, size_t len, bool fstr);
const char *ir_graph_name(struct IrGraph *g);

/* Check the invariants (see verify.c); false with an error raised. */
bool ir_verify_graph(MistVM *vm, IrGraph *g);
bool ir_verify_unit(MistVM *vm, IrUnit *u);

/* Parse the text form back into a new unit; NULL with an error raised. */
IrUnit *ir_read(MistVM *vm, const char *name, const char *text, size_t len);

#endif
