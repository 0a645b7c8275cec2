/* eval.c: the reference interpreter of IR graphs (eager mode).
 *
 * A graph is compiled, on first use, into an EvCode: a flat list of
 * register instructions over the slots of one frame (parameters, free
 * variables, constants, then one slot per application node).  Three
 * shapes that the lowering produces everywhere are compiled without
 * making closures or frames, which is what makes the interpreter fast:
 *
 *  - `switch(c, @then, @else)()`: both branch graphs are inlined as
 *    blocks of the same frame, selected by a conditional jump;
 *  - a call to a graph constant in tail position (a loop going round, a
 *    join after an `if`, the code after a loop) jumps to that graph's
 *    block in the same frame after moving the arguments to its
 *    parameter slots, so loops run in constant space;
 *  - any other tail call replaces the frame instead of growing the C
 *    stack (a loop graph used as a value, mutual tail recursion).
 *
 * Arithmetic whose operand is a tensor temporary that nothing reads
 * afterwards (dead_temporary) may write its result over that operand's
 * buffer instead of a new one, and x + s * y, where the product is such
 * a temporary, runs in one pass without it (scaled_sum).
 *
 * Everything else runs by the general rule: a graph constant used as a
 * value becomes a closure capturing the current values of its free
 * variables; an application calls its callee.  Errors record the span
 * of the node that failed, and each Mist frame unwound adds a traceback
 * entry.  Runaway recursion is an error, never a crash: every call
 * checks the depth and the C stack.
 *
 * Graph mode (jit/) is offered every call of a function it may compile
 * (IrJitInterface, eval.h) while vm->jit_calls is set, and frames then
 * run in exec_graph, a second copy of the loop (eval_exec.h) whose tail
 * calls it is offered too; eager mode's loop, exec, has no trace of it.
 */
#include <alloca.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/map.h"
#include "lang/gc.h"
#include "lang/ops.h"

/* -DMIST_PRIM_PROFILE=ON: cycles per primitive (prim_profile.h) */
#ifdef MIST_PRIM_PROFILE
#include "ir/prim_profile.h"
#else
#define PROF_START
#define PROF_END(name)
#endif

/* A value copied as its two words, as the constructors write them: a
 * 16-byte load of a value just written by two 8-byte stores cannot take
 * them from the store buffer and waits for them to reach the cache
 * (a stall of a dozen cycles on each sensitivity passed along). */
static inline void copy_value(Value *dst, const Value *src) {
  uint64_t w[2];
  memcpy(w, src, sizeof w);
  __asm__("" : "+r"(w[0]), "+r"(w[1]));   /* keep them two words */
  memcpy(dst, w, sizeof w);
}

typedef enum {
  I_MOVE,
  I_ADD, I_SUB, I_MUL, I_LT, I_LE, I_GT, I_GE, I_EQ, I_NE,
  I_GETITEM,
  I_PRIM,       /* fn(args) for a primitive or builtin C function */
  /* primitives that reverse mode emits everywhere, done here for the
   * common cases (floats, None) and by fn(args) like I_PRIM otherwise */
  I_TUPLE,      /* make_tuple(args) */
  I_SETITEM,    /* setitem(x, i, v): a list and an int index here, the rest through the primitive */
  I_SELECT,     /* switch(c, a, b) as a value */
  I_GADD,       /* gadd(a, b) */
  I_SENS_AT_GADD, /* sens_at(x, i, d) that the next instruction, a gadd, adds to slot c (ir_gadd_sens_at) */
  I_ENV_GET,    /* env_get(e, key) */
  I_SENS_ADD, I_SENS_SUB, I_SENS_MUL, I_SENS_DIV,   /* add_sens(d, x, y, i)... */
  I_SENS_MUL2,  /* this I_SENS_MUL and the next (same operands, the other i) at once */
  I_AD_FLOAT,   /* grad's bookkeeping on a float x: check_diff, float_arg, J (x), seed (1.0), zeros_like (0.0) */
  I_CALL,       /* slot a called with args */
  I_TAILCALL,
  I_CALLG,      /* graph g called directly: env from slots */
  I_CLOSURE,    /* dst = closure of g over env slots */
  I_JUMP,
  I_JUMPIFNOT,  /* if not truthy(a) jump */
  I_PMOVE,      /* parallel move args -> dsts (then a jump follows) */
  I_MOVES,      /* the same, when moving in order overwrites nothing still to be read */
  I_RETURN,
  I_GLOBAL,
  I_SETGLOBAL,
  I_IMPORT,
  I_INTERRUPT,  /* a loop's back edge: check for Ctrl-C */
} Op;

typedef struct Instr {
  uint8_t op;
  int32_t dst, a, b;
  int32_t c, imm;      /* I_SENS_*: y's slot, and argument number i (-1: not 0 or 1 constant);
                          I_ADD, I_SUB, I_MUL, I_GADD: which operands are dead temporaries (dead_temporary,
                          dead_sum: 1 a, 2 b), and for I_MUL whether the next instruction adds it
                          (NEXT_ADDS_A, _B) */
  int32_t nargs;
  int32_t *args;
  int32_t *dsts;       /* I_PMOVE */
  int32_t target;
  BuiltinFn fn;        /* I_PRIM */
  bool over_d;         /* I_PRIM: its P_OVER_D primitive may write over argument 0, a dead temporary */
  IrGraph *graph;      /* I_CALLG, I_CLOSURE */
  struct EvCode *gcode; /* I_CALLG: the callee's code; I_CALL, I_TAILCALL: the last callee's (code_at) */
  ObjModule *module;   /* I_GLOBAL, I_SETGLOBAL, I_IMPORT */
  ObjStr *name;
  IrNode *node;        /* where it came from: errors point here */
} Instr;

/* I_MUL's imm: the next instruction, I_ADD or I_SUB, takes this product,
 * a dead temporary, as its operand a or b (the two run as one) */
enum { NEXT_ADDS_A = 4, NEXT_ADDS_B = 8 };

typedef struct EvCode {
  IrGraph *graph;
  int nslots, nparams, nfv;
  int nconst;
  int32_t *const_slots;
  Value *const_vals;
  Instr *ins;
  int nins;
  const char *name;
  bool traced;        /* a user function or module: shows in tracebacks */
  bool zero;          /* frames must start zeroed: a slot may be read
                         before it is written (a forward reference) */
  bool pass;          /* grad's graph (IRG_PASS, zeroed too) */
  int *default_fv;    /* for each default: its index among the free variables */
} EvCode;

/* A frame replaced by a tail call, owed its line in a traceback: the
 * call's place, and where the call was inlined from (ev_trace_frame) */
typedef struct EvTail {
  Span span;
  Span own; /* the call node's own place (none in a graph autodiff built):
               an error not placed yet is placed there, as fail_at does */
  const char *name;
  const IrInlined *inlined;
} EvTail;

typedef struct EvState {
  Value prims[IR_NPRIMS];
  /* frames replaced by tail calls of user functions, still owed a line
   * in a traceback: a stack shared by all exec() invocations */
  EvTail *tails;
  int ntails, captails;
  unsigned ticks;   /* loop turns and calls, to look at the clock now and then */
  /* the chunk that closures of IRG_TAPE graphs are cut from */
  char *tape, *tape_end;
  size_t tape_size;
  void *tape_last;    /* the closure cut last */
} EvState;

/* Past the host's deadline?  Looked at every 1024 loop turns or calls,
 * and only when a deadline is set, so it costs nothing otherwise. */
static bool out_of_time(MistVM *vm, EvState *st) {
  if ((++st->ticks & 1023) != 0) return false;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9 > vm->deadline;
}

/* ---- counts in a NodeMap ---- */

static void count_one(NodeMap *m, const void *k) { ir_map_set_int(m, k, ir_map_int(m, k, 0) + 1); }

/* ---- compilation ---- */

typedef struct Comp {
  MistVM *vm;
  EvCode *code;
  IrGraph *root;
  NodeMap slots;      /* node -> slot */
  NodeMap uses;       /* node -> number of uses in the graphs reachable from root */
  NodeMap shape_uses; /* node -> how many of those read only its shape (P_SHAPE_XY) */
  NodeMap fresh_sums; /* gadd node -> 1 when its value is a tensor of its own, 2 when not (dead_sum) */
  NodeMap blocks;     /* graph -> pc of its block (contified graphs) */
  Instr *ins;
  int nins, capins;
  int nslots;
  int nconst, capconst;
  int32_t *const_slots;
  Value *const_vals;
  int *const_index;  /* hash of (tag, bits) -> 1 + index into const_vals, 0 empty; 2 * capconst entries */
  bool failed;
  bool zero;
} Comp;

static Instr *emit(Comp *c, Op op, IrNode *node) {
  if (c->nins == c->capins) {
    c->capins = c->capins ? 2 * c->capins : 32;
    c->ins = lang_realloc(c->ins, c->capins * sizeof *c->ins);
  }
  Instr *i = &c->ins[c->nins++];
  memset(i, 0, sizeof *i);
  i->op = op;
  i->node = node;
  i->dst = i->a = i->b = i->c = -1;
  return i;
}

static int new_slot(Comp *c) { return c->nslots++; }

/* The uses of every node in the graphs reachable from g, into uses, and
 * of those the ones that read only a shape (P_SHAPE_XY) into shape_uses
 * when it is not NULL. */
static void count_uses(NodeMap *uses, NodeMap *shape_uses, IrGraph *g, NodeMap *seen) {
  if (ir_map_get(seen, g)) return;
  ir_map_put(seen, g, g);
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    int p = ir_node_prim(n);
    bool shape_xy = shape_uses && p >= 0 && (ir_prims[p].flags & P_SHAPE_XY);
    for (int j = 0; j < n->nin; j++) {
      count_one(uses, n->in[j]);
      if (shape_xy && (j == 2 || j == 3)) count_one(shape_uses, n->in[j]);
      IrGraph *h = ir_node_graph(n->in[j]);
      if (h) count_uses(uses, shape_uses, h, seen);
    }
  }
  if (g->ret) {
    count_one(uses, g->ret);
    IrGraph *h = ir_node_graph(g->ret);
    if (h) count_uses(uses, shape_uses, h, seen);
  }
  for (int i = 0; i < g->ndefaults; i++) {
    count_one(uses, g->defaults[i]);
    IrGraph *h = ir_node_graph(g->defaults[i]);
    if (h) count_uses(uses, shape_uses, h, seen);
  }
}

void ev_count_uses(IrGraph *g, NodeMap *uses) { ev_count_uses_shapes(g, uses, NULL); }

void ev_count_uses_shapes(IrGraph *g, NodeMap *uses, NodeMap *shape_uses) {
  NodeMap seen = {0};
  count_uses(uses, shape_uses, g, &seen);
}

bool ev_dead_temporary(const NodeMap *uses, const NodeMap *shape_uses, const IrNode *x, const IrNode *at) {
  int p = ir_node_prim(x);
  return x->kind == IR_APPLY && x->graph == at->graph && p >= 0 && (ir_prims[p].flags & P_FRESH) &&
         ir_map_int(uses, x, 0) - ir_map_int(shape_uses, x, 0) == 1;
}

static int operand(Comp *c, IrNode *x, IrNode *at);

/* The entry of c->const_index for v: its constant's, or the empty one
 * where it would go.  Constants are the same when their tag and bits
 * are (an object by identity). */
static int *const_entry(Comp *c, Value v) {
  size_t mask = 2 * (size_t)c->capconst - 1;
  uint64_t h = (uint64_t)v.i ^ (uint64_t)v.tag << 56;
  h = (h ^ h >> 33) * 0xff51afd7ed558ccdull;   /* murmur3's mix: whole floats have low bits 0 */
  size_t i = (size_t)(h ^ h >> 33) & mask;
  for (;; i = (i + 1) & mask) {
    int k = c->const_index[i];
    if (!k || (c->const_vals[k - 1].tag == v.tag && c->const_vals[k - 1].i == v.i))
      return &c->const_index[i];
  }
}

/* Room for one more constant; the index is made again for the new
 * capacity (so it is at most half full). */
static void grow_constants(Comp *c) {
  c->capconst = c->capconst ? 2 * c->capconst : 16;
  c->const_slots = lang_realloc(c->const_slots, c->capconst * sizeof *c->const_slots);
  c->const_vals = lang_realloc(c->const_vals, c->capconst * sizeof *c->const_vals);
  size_t bytes = 2 * (size_t)c->capconst * sizeof *c->const_index;
  c->const_index = lang_alloc_atomic(bytes);
  memset(c->const_index, 0, bytes);
  for (int k = 0; k < c->nconst; k++) *const_entry(c, c->const_vals[k]) = k + 1;
}

static int32_t *env_slots(Comp *c, IrGraph *g, IrNode *at) {
  ir_free_vars(g);
  int32_t *env = lang_alloc_atomic((g->nfv ? g->nfv : 1) * sizeof *env);
  for (int i = 0; i < g->nfv; i++) env[i] = operand(c, g->fv[i], at);
  return env;
}

/* The slot holding x's value at `at`.  Constants get a slot filled at
 * frame entry; a graph constant used as a value makes a closure here. */
static int operand(Comp *c, IrNode *x, IrNode *at) {
  if (x->kind == IR_CONST) {
    IrGraph *g = ir_node_graph(x);
    if (g) {
      Instr *in = emit(c, I_CLOSURE, at);
      in->graph = g;
      in->args = env_slots(c, g, at);
      in->nargs = g->nfv;
      in->dst = new_slot(c);
      return in->dst;
    }
    int s = ir_map_int(&c->slots, x, -1);
    if (s >= 0) return s;
    Value v = x->value;
    if (v_is_obj(v, O_BUILTIN) && AS_BUILTIN(v)->prim >= 0) v = ir_prim_value(c->vm, AS_BUILTIN(v)->prim);
    /* one slot per distinct scalar or object, found through a hash of
     * its bits (a list literal of n distinct numbers is n constants) */
    if (c->nconst == c->capconst) grow_constants(c);
    int *entry = const_entry(c, v);
    if (*entry) {
      s = c->const_slots[*entry - 1];
      ir_map_set_int(&c->slots, x, s);
      return s;
    }
    s = new_slot(c);
    ir_map_set_int(&c->slots, x, s);
    *entry = c->nconst + 1;
    c->const_slots[c->nconst] = s;
    c->const_vals[c->nconst++] = v;
    return s;
  }
  int s = ir_map_int(&c->slots, x, -1);
  if (s >= 0) return s;
  /* a node not computed yet on this path (a forward reference between
   * nested functions): its slot reads as Unbound, so frames are zeroed */
  s = new_slot(c);
  ir_map_set_int(&c->slots, x, s);
  c->zero = true;
  return s;
}

static int slot_of(Comp *c, IrNode *n) {
  int s = ir_map_int(&c->slots, n, -1);
  if (s < 0) {
    s = new_slot(c);
    ir_map_set_int(&c->slots, n, s);
  }
  return s;
}

static int32_t *operands(Comp *c, IrNode *n, int from) {
  int k = n->nin - from;
  int32_t *a = lang_alloc_atomic((k ? k : 1) * sizeof *a);
  for (int i = 0; i < k; i++) a[i] = operand(c, n->in[from + i], n);
  return a;
}

typedef enum { M_RETURN, M_VALUE } Mode;

static void emit_body(Comp *c, IrGraph *g, Mode mode, int dst);

/* Can graph h run as a block of this frame?  Its free variables must all
 * be available here. */
static bool fvs_available(Comp *c, IrGraph *h) {
  ir_free_vars(h);
  for (int i = 0; i < h->nfv; i++)
    if (ir_map_int(&c->slots, h->fv[i], -1) < 0 && h->fv[i]->graph && !ir_is_ancestor(c->root, h->fv[i]->graph))
      return false;
  return true;
}

/* Moving args[i] -> dsts[i] in order is safe unless a destination is
 * written before a later source reads it. */
static Op parallel_op(const int32_t *args, const int32_t *dsts, int n) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (args[j] == dsts[i]) return I_PMOVE;
  return I_MOVES;
}

/* A tail call of graph h with args: move them to h's parameter slots
 * and continue in h's block.  The first such call emits the block right
 * here (so it needs no jump at all); later ones jump back to it, and a
 * backward jump is a loop going round, which checks for Ctrl-C. */
static void emit_jump_to(Comp *c, IrGraph *h, IrNode *n) {
  int nargs = n->nin - 1;
  int label = ir_map_int(&c->blocks, h, -1);
  if (label < 0)
    for (int i = 0; i < h->nparams; i++) slot_of(c, h->params[i]);
  int32_t *args = operands(c, n, 1);
  if (nargs) {
    int32_t *dsts = lang_alloc_atomic(nargs * sizeof *dsts);
    for (int i = 0; i < nargs; i++) dsts[i] = slot_of(c, h->params[i]);
    Instr *pm = emit(c, nargs == 1 ? I_MOVE : parallel_op(args, dsts, nargs), n);
    if (nargs == 1) {
      pm->a = args[0];
      pm->dst = dsts[0];
    } else {
      pm->args = args;
      pm->nargs = nargs;
      pm->dsts = dsts;
    }
  }
  if (label >= 0) {
    emit(c, I_INTERRUPT, n);
    emit(c, I_JUMP, n)->target = label;
    return;
  }
  ir_map_set_int(&c->blocks, h, c->nins);
  emit_body(c, h, M_RETURN, -1);
}

/* switch(c, @a, @b) whose only use is a call with no arguments right in
 * its graph: the call runs one of the two graphs as a block here. */
bool ev_switch_inlined(const NodeMap *uses, const IrNode *s) {
  if (ir_node_prim(s) != IR_P_SWITCH || ir_map_int(uses, s, -1) != 1) return false;
  IrGraph *a = ir_node_graph(s->in[2]), *b = ir_node_graph(s->in[3]);
  if (!a || !b || a->nparams || b->nparams) return false;
  for (int i = 0; i < s->graph->nnodes; i++) {
    IrNode *m = s->graph->nodes[i];
    if (m->nin == 1 && m->in[0] == s) return true;
  }
  return false;
}

static bool switch_inlined(Comp *c, IrNode *s) { return ev_switch_inlined(&c->uses, s); }

static bool is_inlinable_switch(Comp *c, IrNode *n, IrNode **s_out) {
  if (n->nin != 1 || n->in[0]->kind != IR_APPLY || !switch_inlined(c, n->in[0])) return false;
  *s_out = n->in[0];
  return true;
}

/* The slot of a module global, made (unassigned) if new. */
static int module_slot(ObjModule *m, ObjStr *name) {
  Value slot;
  if (!m->names) m->names = lang_dict_new();
  if (lang_dict_get(m->names, name, &slot)) return (int)slot.i;
  if (m->nslots == m->capslots) {
    m->capslots = m->capslots ? 2 * m->capslots : 32;
    m->slots = lang_realloc(m->slots, m->capslots * sizeof *m->slots);
  }
  int k = (int)m->nslots++;
  m->slots[k] = v_unbound();
  lang_dict_put(m->names, name, v_int(k));
  return k;
}

void ev_set_global(ObjModule *m, ObjStr *name, Value v) {
  int k = module_slot(m, name);   /* may move m->slots */
  m->slots[k] = v;
}

static const Op fast_ops[IR_NPRIMS] = {
  [IR_P_ADD] = I_ADD, [IR_P_SUB] = I_SUB, [IR_P_MUL] = I_MUL, [IR_P_LT] = I_LT,
  [IR_P_LE] = I_LE, [IR_P_GT] = I_GT, [IR_P_GE] = I_GE, [IR_P_EQ] = I_EQ, [IR_P_NE] = I_NE,
  [IR_P_GETITEM] = I_GETITEM,
};

/* Primitives with an instruction of their own that keeps I_PRIM's
 * operands (fn, args), so it can fall back to the call.  A backward pass
 * is mostly these: through I_PRIM, copying the arguments and calling
 * cost more than the arithmetic. */
static const Op prim_ops[IR_NPRIMS] = {
  [IR_P_MAKE_TUPLE] = I_TUPLE, [IR_P_SETITEM] = I_SETITEM, [IR_P_SWITCH] = I_SELECT, [IR_P_GADD] = I_GADD,
  [IR_P_ENV_GET] = I_ENV_GET, [IR_P_ADD_SENS] = I_SENS_ADD, [IR_P_SUB_SENS] = I_SENS_SUB,
  [IR_P_MUL_SENS] = I_SENS_MUL, [IR_P_TRUEDIV_SENS] = I_SENS_DIV,
  [IR_P_CHECK_DIFF] = I_AD_FLOAT, [IR_P_FLOAT_ARG] = I_AD_FLOAT, [IR_P_J] = I_AD_FLOAT,
  [IR_P_SEED] = I_AD_FLOAT, [IR_P_ZEROS_LIKE] = I_AD_FLOAT,
};

/* Is x, an operand of node `at`, a temporary that nothing reads after
 * it?  x must be computed in the same graph (each run of the graph
 * computes it again before `at` reads it) by a primitive that gives a
 * tensor result a new buffer of its own (P_FRESH: arithmetic, most
 * sensitivity primitives), and used nowhere else, not even by a nested
 * function, but for its shape (P_SHAPE_XY: the backward pass of a + b
 * reads a's shape only, so a forward pass under grad still writes
 * x @ w + b over x @ w).  `at` may then write its tensor result over
 * x's buffer: arithmetic (lang_arith_reusing), and the primitives that
 * take that (P_OVER_D: relu's sensitivity over the matrix product's).
 * NumPy's elision of temporaries, found here without reference counts:
 * a weight update p - lr * g makes one new tensor instead of two. */
static bool dead_temporary(Comp *c, IrNode *x, IrNode *at) { return ev_dead_temporary(&c->uses, &c->shape_uses, x, at); }

/* dead_temporary, or x the gadd of two operands that were dead
 * temporaries there, used once: its value is one of theirs or a new one
 * (ir_gadd), so nothing else holds it either.  A backward pass adds up
 * the sensitivities of a value read several times this way (the four
 * gate slices of an LSTM step), each sum written over the last.  The
 * answer for each gadd is kept, so a chain of n sums costs n. */
static bool dead_sum(Comp *c, IrNode *x, IrNode *at) {
  if (dead_temporary(c, x, at)) return true;
  if (x->kind != IR_APPLY || x->graph != at->graph || ir_node_prim(x) != IR_P_GADD || x->nin != 3 ||
      ir_map_int(&c->uses, x, 0) - ir_map_int(&c->shape_uses, x, 0) != 1)
    return false;
  int fresh = ir_map_int(&c->fresh_sums, x, 0);
  if (!fresh) {
    fresh = dead_sum(c, x->in[1], x) && dead_sum(c, x->in[2], x) ? 1 : 2;
    ir_map_set_int(&c->fresh_sums, x, fresh);
  }
  return fresh == 1;
}

static void emit_node(Comp *c, IrNode *n, bool tail) {
  IrNode *f = n->in[0];
  int p = ir_node_prim(n);
  /* a switch whose call runs it as blocks: emitted at that call */
  if (switch_inlined(c, n)) return;
  IrNode *sw;
  if (is_inlinable_switch(c, n, &sw)) {
    int cond = operand(c, sw->in[1], sw);
    int br = (int)(emit(c, I_JUMPIFNOT, sw) - c->ins);
    c->ins[br].a = cond;
    int dst = tail ? -1 : slot_of(c, n);
    emit_body(c, ir_node_graph(sw->in[2]), tail ? M_RETURN : M_VALUE, dst);
    int jend = tail ? -1 : (int)(emit(c, I_JUMP, n) - c->ins);
    c->ins[br].target = c->nins;
    emit_body(c, ir_node_graph(sw->in[3]), tail ? M_RETURN : M_VALUE, dst);
    if (jend >= 0) c->ins[jend].target = c->nins;
    return;
  }
  if (p >= 0) {
    if (p == IR_P_GLOBAL || p == IR_P_SET_GLOBAL || p == IR_P_IMPORT) {
      int a = p == IR_P_SET_GLOBAL ? operand(c, n->in[2], n) : -1;
      Instr *in = emit(c, p == IR_P_GLOBAL ? I_GLOBAL : p == IR_P_SET_GLOBAL ? I_SETGLOBAL : I_IMPORT, n);
      in->module = n->graph->module;
      in->name = AS_STR(n->in[1]->value);
      in->a = a;
      if (p != IR_P_IMPORT && in->module) in->b = module_slot(in->module, in->name);
      in->dst = slot_of(c, n);
      return;
    }
    if (fast_ops[p]) {
      int a = operand(c, n->in[1], n), b = operand(c, n->in[2], n);
      Instr *in = emit(c, fast_ops[p], n);
      in->a = a;
      in->b = b;
      in->dst = slot_of(c, n);
      if (in->op == I_ADD || in->op == I_SUB || in->op == I_MUL)
        in->imm = (dead_temporary(c, n->in[1], n) ? 1 : 0) | (dead_temporary(c, n->in[2], n) ? 2 : 0);
      /* x +- s * y with the product just computed and read nowhere else
       * (not even for its shape, since it is never made): the product
       * does both (lang_arith_scaled), x - lr * g in one pass (the sum
       * still runs alone when a jump lands on it) */
      Instr *prev = c->nins >= 2 ? &c->ins[c->nins - 2] : NULL;
      if ((in->op == I_ADD || in->op == I_SUB) && prev && prev->op == I_MUL && in->a != in->b) {
        int k = in->a == prev->dst ? 1 : in->b == prev->dst ? 2 : 0;
        if (k && (in->imm & k) && ir_map_int(&c->uses, n->in[k], 0) == 1)
          prev->imm |= k == 1 ? NEXT_ADDS_A : NEXT_ADDS_B;
      }
      return;
    }
    int32_t *args = operands(c, n, 1);
    /* the fast paths read their operands without counting them */
    int arity = ir_prims[p].arity;
    bool own = prim_ops[p] && (arity < 0 || n->nin - 1 == arity);
    Instr *in = emit(c, own ? prim_ops[p] : I_PRIM, n);
    in->fn = ev_prim_fn(p);
    in->args = args;
    in->nargs = n->nin - 1;
    in->dst = slot_of(c, n);
    in->over_d = (ir_prims[p].flags & P_OVER_D) && n->nin > 1 && dead_temporary(c, n->in[1], n);
    if (own && in->op >= I_SENS_ADD && in->op <= I_SENS_DIV) {
      /* op_sens(d, x, y, i): the operands in the instruction, i known */
      IrNode *i = n->in[4];
      bool known = i->kind == IR_CONST && i->value.tag == V_INT && (i->value.i == 0 || i->value.i == 1);
      in->a = args[0];
      in->b = args[1];
      in->c = args[2];
      in->imm = known ? (int32_t)i->value.i : -1;
      /* a product's two sensitivities, as reverse mode writes them, one
       * after the other: the first does both (the next still runs alone
       * when a jump lands on it) */
      Instr *prev = c->nins >= 2 ? &c->ins[c->nins - 2] : NULL;
      if (in->op == I_SENS_MUL && known && prev && prev->op == I_SENS_MUL && prev->imm == 1 - in->imm &&
          prev->a == in->a && prev->b == in->b && prev->c == in->c)
        prev->op = I_SENS_MUL2;
    } else if (own && in->op == I_AD_FLOAT) {
      /* on a float: 0 the float itself, 1 one, 2 zero */
      in->a = args[0];
      in->imm = p == IR_P_SEED ? 1 : p == IR_P_ZEROS_LIKE ? 2 : 0;
    } else if (own && (in->op == I_GADD || in->op == I_ENV_GET || in->op == I_SELECT || in->op == I_SETITEM)) {
      in->a = args[0];
      in->b = args[1];
      in->c = in->nargs > 2 ? args[2] : -1;
      if (in->op == I_GADD && in->a != in->b)
        in->imm = (dead_sum(c, n->in[1], n) ? 1 : 0) | (dead_sum(c, n->in[2], n) ? 2 : 0);
      /* acc + sens_at(x, i, d) just made, both dead: sens_at adds d into
       * acc's block instead of making a tensor of zeros for the sum (the
       * sum still runs alone when a jump lands on it) */
      Instr *prev = c->nins >= 2 ? &c->ins[c->nins - 2] : NULL;
      if (in->op == I_GADD && in->imm == 3 && prev && prev->op == I_PRIM && prev->node == n->in[2] &&
          ir_node_prim(prev->node) == IR_P_SENS_AT && prev->nargs == 3 && prev->dst == in->b) {
        prev->op = I_SENS_AT_GADD;
        prev->c = in->a;
      }
    }
    return;
  }
  /* a builtin carrying data (an ffi function, autodiff's shaped
   * builtins) is called through ev_call, which sets vm->callee */
  if (f->kind == IR_CONST && v_is_obj(f->value, O_BUILTIN) && !AS_BUILTIN(f->value)->data) {
    int32_t *args = operands(c, n, 1);
    Instr *in = emit(c, I_PRIM, n);
    in->fn = AS_BUILTIN(f->value)->fn;
    in->args = args;
    in->nargs = n->nin - 1;
    in->dst = slot_of(c, n);
    in->name = lang_str(AS_BUILTIN(f->value)->name);
    return;
  }
  IrGraph *h = ir_node_graph(f);
  if (h && h->nparams == n->nin - 1 && !(tail && (h->flags & IRG_FUNCTION))) {
    /* a tail call of a loop, join or branch graph is a jump; a user
     * function's still counts as a level of recursion and a traceback
     * line, so it goes through the frame-reusing I_TAILCALL below */
    bool user = (h->flags & IRG_FUNCTION) != 0;
    if (tail && !user && (h == c->root || fvs_available(c, h))) {
      if (h == c->root) {
        /* self tail call: the root's block is pc 0 */
        int nargs = n->nin - 1;
        int32_t *args = operands(c, n, 1);
        int32_t *dsts = lang_alloc_atomic((nargs ? nargs : 1) * sizeof *dsts);
        for (int i = 0; i < nargs; i++) dsts[i] = i;
        Instr *pm = emit(c, parallel_op(args, dsts, nargs), n);
        pm->args = args;
        pm->nargs = nargs;
        pm->dsts = dsts;
        emit(c, I_INTERRUPT, n);
        Instr *j = emit(c, I_JUMP, n);
        j->target = 0;
        return;
      }
      emit_jump_to(c, h, n);
      return;
    }
    int32_t *env = env_slots(c, h, n);
    int32_t *args = operands(c, n, 1);
    Instr *in = emit(c, I_CALLG, n);
    in->graph = h;
    in->b = h->nfv;
    in->dsts = env;
    in->args = args;
    in->nargs = n->nin - 1;
    in->dst = slot_of(c, n);
    return;
  }
  int fs = operand(c, f, n);
  int32_t *args = operands(c, n, 1);
  Instr *in = emit(c, tail ? I_TAILCALL : I_CALL, n);
  in->a = fs;
  in->args = args;
  in->nargs = n->nin - 1;
  in->dst = slot_of(c, n);
}

static void emit_body(Comp *c, IrGraph *g, Mode mode, int dst) {
  IrNode *last = g->nnodes ? g->nodes[g->nnodes - 1] : NULL;
  bool tail_done = false;
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    bool tail = mode == M_RETURN && n == g->ret && n == last;
    emit_node(c, n, tail);
    if (tail) {
      Op op = c->ins[c->nins - 1].op;
      tail_done = op == I_TAILCALL || op == I_JUMP || op == I_RETURN;
      if (!tail_done && c->nins > 0 && op == I_PRIM) tail_done = false;
    }
  }
  if (tail_done) return;
  IrNode *r = g->ret;
  if (mode == M_RETURN) {
    int s = r ? operand(c, r, r) : -1;
    if (s < 0) {
      /* no output recorded: None */
      IrNode *none = ir_const(ir_unit_new(), v_none(), g->span);
      s = operand(c, none, none);
    }
    Instr *in = emit(c, I_RETURN, r);
    in->a = s;
  } else {
    int s = r ? operand(c, r, r) : -1;
    if (s < 0) {
      IrNode *none = ir_const(ir_unit_new(), v_none(), g->span);
      s = operand(c, none, none);
    }
    Instr *in = emit(c, I_MOVE, r);
    in->a = s;
    in->dst = dst;
  }
}

/* Renumber slots so the constants sit together right after the
 * parameters and free variables: a frame is then filled by copying one
 * block. */
static void group_constants(Comp *c, int nfixed) {
  int *map = lang_alloc_atomic((c->nslots ? c->nslots : 1) * sizeof *map);
  for (int i = 0; i < c->nslots; i++) map[i] = -1;
  for (int i = 0; i < nfixed; i++) map[i] = i;
  int next = nfixed;
  for (int k = 0; k < c->nconst; k++) map[c->const_slots[k]] = next++;
  for (int i = 0; i < c->nslots; i++)
    if (map[i] < 0) map[i] = next++;
#define R(x) ((x) = (x) >= 0 ? map[(x)] : (x))
  for (int i = 0; i < c->nins; i++) {
    Instr *in = &c->ins[i];
    switch ((Op)in->op) {
    case I_JUMP: case I_INTERRUPT: break;
    case I_GLOBAL: case I_IMPORT: R(in->dst); break;
    case I_SETGLOBAL: R(in->dst); R(in->a); break;
    case I_CALLG:
      R(in->dst);
      for (int k = 0; k < in->b; k++) R(in->dsts[k]);
      for (int k = 0; k < in->nargs; k++) R(in->args[k]);
      break;
    case I_PMOVE:
    case I_MOVES:
      for (int k = 0; k < in->nargs; k++) {
        R(in->args[k]);
        R(in->dsts[k]);
      }
      break;
    default:
      R(in->dst);
      R(in->a);
      R(in->b);
      R(in->c);
      for (int k = 0; k < in->nargs; k++) R(in->args[k]);
    }
  }
#undef R
  for (int k = 0; k < c->nconst; k++) c->const_slots[k] = nfixed + k;
}

static EvCode *compile(MistVM *vm, IrGraph *g) {
  Comp c = {0};
  c.vm = vm;
  c.root = g;
  ir_free_vars(g);
  NodeMap seen = {0};
  count_uses(&c.uses, &c.shape_uses, g, &seen);
  for (int i = 0; i < g->nparams; i++) ir_map_set_int(&c.slots, g->params[i], new_slot(&c));
  for (int i = 0; i < g->nfv; i++) ir_map_set_int(&c.slots, g->fv[i], new_slot(&c));
  emit_body(&c, g, M_RETURN, -1);
  group_constants(&c, g->nparams + g->nfv);

  EvCode *code = lang_alloc(sizeof *code);
  code->graph = g;
  code->nslots = c.nslots;
  code->nparams = g->nparams;
  code->nfv = g->nfv;
  code->nconst = c.nconst;
  code->const_slots = c.const_slots;
  code->const_vals = c.const_vals;
  code->ins = c.ins;
  code->nins = c.nins;
  code->name = g->display ? g->display->data : g->name->data;
  code->traced = (g->flags & (IRG_FUNCTION | IRG_MODULE)) != 0;
  code->zero = c.zero || (g->flags & (IRG_ZERO_FRAME | IRG_PASS));
  code->pass = (g->flags & IRG_PASS) != 0;
  code->default_fv = lang_alloc_atomic((g->ndefaults ? g->ndefaults : 1) * sizeof(int));
  for (int d = 0; d < g->ndefaults; d++) {
    code->default_fv[d] = -1;
    for (int i = 0; i < g->nfv; i++)
      if (g->fv[i] == g->defaults[d]) code->default_fv[d] = i;
  }
  return code;
}

static const char *op_names[] = {
  "move", "add", "sub", "mul", "lt", "le", "gt", "ge", "eq", "ne", "getitem", "prim", "tuple", "setitem", "select",
  "gadd", "sens_at_gadd", "env_get", "add_sens", "sub_sens", "mul_sens", "truediv_sens", "mul_sens2", "ad_float", "call",
  "tailcall", "callg", "closure", "jump", "jumpifnot", "pmove", "moves", "return", "global", "setglobal",
  "import", "interrupt",
};

/* MIST_DUMP_CODE=1 in the environment prints each graph's compiled code
 * to stderr as it is made: the interpreter's view of the IR. */
static void dump_code(EvCode *c) {
  fprintf(stderr, "code %s: %d slots, %d params, %d free, %d constants%s\n", c->graph->name->data,
          c->nslots, c->nparams, c->nfv, c->nconst, c->zero ? ", zeroed" : "");
  for (int i = 0; i < c->nins; i++) {
    Instr *in = &c->ins[i];
    fprintf(stderr, "  %3d %-9s dst=%d a=%d b=%d", i, op_names[in->op], in->dst, in->a, in->b);
    for (int k = 0; k < in->nargs; k++) fprintf(stderr, "%s%d", k ? "," : " args=", in->args[k]);
    if ((in->op == I_ADD || in->op == I_SUB || in->op == I_MUL || in->op == I_GADD) && (in->imm & 3))
      fprintf(stderr, " reusing %s", (in->imm & 3) == 3 ? "a,b" : in->imm & 1 ? "a" : "b");
    if (in->op == I_MUL && (in->imm & (NEXT_ADDS_A | NEXT_ADDS_B))) fprintf(stderr, " with the next");
    if ((in->op == I_PRIM || in->op == I_SENS_AT_GADD) && in->over_d) fprintf(stderr, " over d");
    if (in->op == I_SENS_AT_GADD) fprintf(stderr, " into %d", in->c);
    if (in->op == I_JUMP || in->op == I_JUMPIFNOT) fprintf(stderr, " -> %d", in->target);
    if (in->graph) fprintf(stderr, " @%s", in->graph->name->data);
    fprintf(stderr, "\n");
  }
}

/* ---- compiled code, by graph ----
 *
 * The code of a graph lives in the graph's side slot IR_SIDE_CODE (the
 * IR holds the program only), so it dies with the graph: one load.  Two
 * threads may compile a graph at once; both codes are equal and either
 * may stay. */

/* g's code the first time: compiled, and kept in its side slot (from then
 * on g is frozen: ir_frozen) */
__attribute__((noinline, cold)) static EvCode *code_compile(MistVM *vm, IrGraph *g) {
  EvCode *code = compile(vm, g);
  const char *dump = getenv("MIST_DUMP_CODE");
  if (dump && *dump == '1') dump_code(code);
  ir_side_set(g, IR_SIDE_CODE, code);
  return code;
}

static EvCode *code_of(MistVM *vm, IrGraph *g) {
  EvCode *code = ir_side(g, IR_SIDE_CODE);
  return code ? code : code_compile(vm, g);
}

/* The code of g for a call instruction that calls closures: the code
 * it called last when that is g's (most call sites call one function),
 * so a call costs no lookup.  One pointer, read and written whole, so a
 * thread that sees another's update sees a whole code, whose graph it
 * checks. */
static inline EvCode *code_at(MistVM *vm, Instr *in, IrGraph *g) {
  EvCode *c = in->gcode;
  if (__builtin_expect(c && c->graph == g, 1)) return c;
  c = code_of(vm, g);
  in->gcode = c;
  return c;
}

/* ---- running ---- */

/* Closures of a backward pass made on each turn of a loop (IRG_TAPE)
 * are cut in turn from chunks, not allocated one by one.  Each holds
 * the one made on the turn before, so the chain is a run of memory: the
 * forward pass bumps a pointer instead of taking the collector's free
 * lists, the backward pass walks it back in order, and a collection
 * marks a few big objects instead of 10^5 scattered small ones.  A
 * closure keeps its whole chunk alive (the collector sees interior
 * pointers), and with it everything the chunk's other closures hold: so
 * a chunk holds one chain only, and a closure that does not hold the
 * last one cut starts a new chunk.  Chunks start small, for the short
 * chains of short loops, and double as a chain grows.  A closure of more
 * than TAPE_MAX bytes is allocated alone (and the next one starts a new
 * chunk, since it holds this one, not the last one cut). */
#define TAPE_FIRST ((size_t)512)
#define TAPE_CHUNK ((size_t)32 << 10)
#define TAPE_MAX 256

static void *tape_alloc(EvState *st, size_t size, bool chained) {
  size = (size + 7) & ~(size_t)7;   /* Values need 8-byte alignment, not 16 */
  if (!chained || (size_t)(st->tape_end - st->tape) < size) {
    st->tape_size = !chained || !st->tape_size ? TAPE_FIRST : st->tape_size < TAPE_CHUNK ? 2 * st->tape_size : TAPE_CHUNK;
    /* a little under the power of two: the collector adds a byte to
     * each object (for pointers just past its end), and 32 KiB + 1
     * would take 36 KiB */
    st->tape = lang_alloc(st->tape_size - 16);
    st->tape_end = st->tape + st->tape_size - 16;
  }
  void *p = st->tape;
  st->tape += size;
  st->tape_last = p;
  return p;
}

/* The next closure cut starts a new chunk: the last chain's chunk is no
 * longer held here, so a collection now finds it dead. */
void ev_tape_forget(MistVM *vm) {
  EvState *st = vm->eval;
  if (!st) return;
  st->tape = st->tape_end = NULL;
  st->tape_last = NULL;
  st->tape_size = 0;
}

/* A closure of g over the values of its free variables: frame[env[i]]
 * for each, or frame[i] when env is NULL.  g's free variables must be
 * known (ir_free_vars): compiling an I_CLOSURE computed them, so the
 * hot path only checks that they still are. */
static ObjFunc *make_closure(MistVM *vm, IrGraph *g, const Value *frame, const int32_t *env) {
  if (__builtin_expect(!g->fv_done, 0)) ir_free_vars(g);   /* a pass forgot them since */
  size_t size = sizeof(ObjFunc) + g->nfv * sizeof(Value);
  ObjFunc *f;
  if ((g->flags & IRG_TAPE) && size <= TAPE_MAX) {
    EvState *st = vm->eval;
    bool chained = false;
    for (int i = 0; i < g->nfv && !chained; i++) {
      Value v = env ? frame[env[i]] : frame[i];
      chained = v.tag == V_OBJ && (void *)v.o == st->tape_last;
    }
    f = tape_alloc(st, size, chained);
  } else {
    f = lang_alloc(size);
  }
  f->obj.kind = O_FUNC;
  f->graph = g;
  f->nenv = g->nfv;
  if (env)
    for (int i = 0; i < g->nfv; i++) copy_value(&f->env[i], &frame[env[i]]);
  else if (g->nfv)
    memcpy(f->env, frame, g->nfv * sizeof(Value));
  if (g->ndefaults) {
    EvCode *code = code_of(vm, g);
    ObjFuncExtra *x = lang_func_extra(f);
    x->ndefaults = g->ndefaults;
    x->defaults = lang_alloc(g->ndefaults * sizeof(Value));
    for (int d = 0; d < g->ndefaults; d++) {
      int k = code->default_fv[d];
      IrNode *dn = g->defaults[d];
      x->defaults[d] = k >= 0 ? f->env[k] : dn->kind == IR_CONST ? dn->value : v_none();
    }
  }
  return f;
}

ObjFunc *ev_closure(MistVM *vm, IrGraph *g, const Value *env) {
  ir_free_vars(g);
  return make_closure(vm, g, env, NULL);
}

static const char *plural(int n, const char *one, const char *many) { return n == 1 ? one : many; }

/* Bind arguments to a function's parameters as Python does, with its
 * error messages.  The first `skip` parameters (a transform's
 * continuation) are taken from the first `skip` arguments and are not
 * the caller's to name; where[j], if asked for, is the parameter (after
 * those) that argument j (positional, then keyword) went to. */
static bool bind_args_from(MistVM *vm, IrGraph *g, int skip, const char *name, int argc, const Value *argv,
                           const KwArgs *kw, int ndefaults, const Value *defaults, Value *params, int *where) {
  int np = g->nparams - skip, nreq = np - ndefaults;
  IrNode **pn = g->params + skip;
  for (int i = 0; i < skip; i++) params[i] = argv[i];
  params += skip, argv += skip, argc -= skip;
  if (argc > np) {
    if (ndefaults)
      return lang_raise(vm, "TypeError", "%s() takes from %d to %d positional arguments but %d %s given",
                        name, nreq, np, argc, argc == 1 ? "was" : "were");
    return lang_raise(vm, "TypeError", "%s() takes %d positional %s but %d %s given", name, np,
                      plural(np, "argument", "arguments"), argc, argc == 1 ? "was" : "were");
  }
  for (int i = 0; i < np; i++) params[i] = v_unbound();
  for (int i = 0; i < argc; i++) {
    params[i] = argv[i];
    if (where) where[i] = i;
  }
  if (kw) {
    for (int k = 0; k < kw->n; k++) {
      int i = 0;
      while (i < np && !lang_str_eq(pn[i]->name, kw->names[k])) i++;
      if (i == np)
        return lang_raise(vm, "TypeError", "%s() got an unexpected keyword argument '%s'", name,
                          kw->names[k]->data);
      if (params[i].tag != V_UNBOUND)
        return lang_raise(vm, "TypeError", "%s() got multiple values for argument '%s'", name,
                          kw->names[k]->data);
      params[i] = kw->values[k];
      if (where) where[argc + k] = i;
    }
  }
  int missing = 0;
  for (int i = 0; i < np; i++)
    if (params[i].tag == V_UNBOUND) {
      if (i >= nreq) params[i] = defaults[i - nreq];
      else missing++;
    }
  if (missing) {
    StrBuf sb;
    sb_init(&sb);
    int k = 0;
    for (int i = 0; i < nreq; i++) {
      if (params[i].tag != V_UNBOUND) continue;
      k++;
      if (k > 1) sb_adds(&sb, missing == 2 ? " and " : k == missing ? ", and " : ", ");
      sb_printf(&sb, "'%s'", pn[i]->name->data);
    }
    return lang_raise(vm, "TypeError", "%s() missing %d required positional %s: %s", name, missing,
                      plural(missing, "argument", "arguments"), sb.data);
  }
  return true;
}

static bool bind_args(MistVM *vm, IrGraph *g, const char *name, int argc, const Value *argv,
                      const KwArgs *kw, int ndefaults, const Value *defaults, Value *params) {
  return bind_args_from(vm, g, 0, name, argc, argv, kw, ndefaults, defaults, params, NULL);
}

/* exec runs a frame (ir/eval_exec.h); exec_graph is the same loop while
 * graph mode may want calls (vm->jit_calls), whose tail calls it offers
 * to the jit first. */
static bool exec(MistVM *vm, EvCode *code, Value *frame, int cap, Value *out);
static bool exec_graph(MistVM *vm, EvCode *code, Value *frame, int cap, Value *out);

/* "Did you mean" for a global read of a name that is not defined, with
 * CPython's candidates in CPython's order: the enclosing function's
 * local names (its parameters and the variables bound in it and in the
 * branch and loop graphs on the way to the read), the module's names,
 * the builtins. */
static const char *name_hint(MistVM *vm, const Instr *in) {
  LangSuggest s;
  lang_suggest_start(&s, in->name->data);
  IrGraph *g = in->node ? in->node->graph : NULL;
  for (; g && !(g->flags & IRG_MODULE); g = g->parent) {
    for (int i = 0; i < g->nparams; i++)
      if (g->params[i]->name) lang_suggest_offer(&s, g->params[i]->name->data);
    for (int i = 0; i < g->nnodes; i++)
      if (g->nodes[i]->name) lang_suggest_offer(&s, g->nodes[i]->name->data);
    if (g->flags & IRG_FUNCTION) break;
  }
  if (!s.best) lang_suggest_module(&s, in->module);
  if (!s.best) lang_suggest_dict(&s, vm->builtins);
  return lang_suggest_hint(&s);
}

static inline bool stack_ok(MistVM *vm) {
  char here;
  if (__builtin_expect(vm->depth >= vm->max_depth || (vm->stack_limit && &here < vm->stack_limit), 0))
    return lang_check_stack(vm);
  return true;
}

/* A frame that starts zeroed.  Before a reverse pass (grad's graph), the
 * collector may collect: here, before the graph's C frame is made, the
 * values the last pass left in that frame's registers and spill slots
 * lie below the stack pointer, where the collector does not look. */
static __attribute__((noinline)) void fresh_frame(MistVM *vm, EvCode *code, Value *frame, int cap) {
  memset(frame, 0, cap * sizeof(Value));
  if (code->pass && lang_gc_pass_due(vm->depth)) {
    ev_tape_forget(vm);
    lang_gc_pass_collect();
  }
}

/* Run code in a new frame on the C stack (which the GC scans): params
 * from args (nparams of them), free variables from env, in exec or
 * exec_graph.  Always inlined into a function of its own, so the frame
 * goes when the call returns. */
static inline __attribute__((always_inline)) bool frame_run(MistVM *vm, EvCode *code, const Value *args,
                                                            const Value *env, Value *out, bool graph) {
  if (!stack_ok(vm)) return false;
  int cap = code->nslots;
  Value *frame = alloca(cap * sizeof(Value));
  if (code->zero) fresh_frame(vm, code, frame, cap);
  int np = code->nparams, nfv = code->nfv;
  for (int k = 0; k < np; k++) copy_value(&frame[k], &args[k]);
  for (int k = 0; k < nfv; k++) copy_value(&frame[np + k], &env[k]);
  vm->depth++;
  bool ok = graph ? exec_graph(vm, code, frame, cap, out) : exec(vm, code, frame, cap, out);
  vm->depth--;
  return ok;
}

static int callg_jit(MistVM *vm, EvCode *code, const Value *args, const Value *env, Value *out);

/* enter() while graph mode may want calls: a user function's graph
 * called directly (I_CALLG) goes to the jit first. */
static __attribute__((noinline, cold)) bool enter_graph(MistVM *vm, EvCode *code, const Value *args,
                                                        const Value *env, Value *out) {
  int r = callg_jit(vm, code, args, env, out);
  if (r != EV_JIT_INTERPRET) return r == EV_JIT_DONE;
  return frame_run(vm, code, args, env, out, true);
}

static __attribute__((noinline)) bool enter(MistVM *vm, EvCode *code, const Value *args,
                                            const Value *env, Value *out) {
  if (__builtin_expect(vm->jit_calls, 0)) return enter_graph(vm, code, args, env, out);
  return frame_run(vm, code, args, env, out, false);
}

/* Call closure f (with code `code`) on nargs == its parameter count
 * arguments read straight from the caller's frame slots: the jit's, or
 * the interpreter's in exec_graph, when graph mode may want calls. */
static __attribute__((noinline, cold)) bool call_slots_graph(MistVM *vm, ObjFunc *f, EvCode *code,
                                                             const Value *caller, const int32_t *slots, Value *out) {
  Value *args = alloca((code->nparams + 1) * sizeof(Value));
  for (int k = 0; k < code->nparams; k++) copy_value(&args[k], &caller[slots[k]]);
  if (ev_jit_takes(vm, f)) {
    int r = vm->jit->call(vm, f, code->nparams, args, NULL, out);
    if (r != EV_JIT_INTERPRET) return r == EV_JIT_DONE;
  }
  return frame_run(vm, code, args, f->env, out, true);
}

/* The same in eager mode: arguments copied straight into the frame. */
static __attribute__((noinline)) bool call_slots(MistVM *vm, ObjFunc *f, EvCode *code, const Value *caller,
                                                 const int32_t *slots, Value *out) {
  if (__builtin_expect(vm->jit_calls, 0)) return call_slots_graph(vm, f, code, caller, slots, out);
  if (!stack_ok(vm)) return false;
  int cap = code->nslots;
  Value *frame = alloca(cap * sizeof(Value));
  if (code->zero) fresh_frame(vm, code, frame, cap);
  int np = code->nparams, nfv = code->nfv;
  for (int k = 0; k < np; k++) copy_value(&frame[k], &caller[slots[k]]);
  for (int k = 0; k < nfv; k++) copy_value(&frame[np + k], &f->env[k]);
  vm->depth++;
  bool ok = exec(vm, code, frame, cap, out);
  vm->depth--;
  return ok;
}

/* Run closure f on arguments. */
static bool call_func(MistVM *vm, ObjFunc *f, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (__builtin_expect(vm->jit_calls, 0) && ev_jit_takes(vm, f)) {
    int r = vm->jit->call(vm, f, argc, argv, kw, out);
    if (r != EV_JIT_INTERPRET) return r == EV_JIT_DONE;
  }
  EvCode *code = code_of(vm, f->graph);
  if (argc == code->nparams && !kw) return enter(vm, code, argv, f->env, out);
  Value *params = alloca((code->nparams + 1) * sizeof(Value));
  if (!bind_args(vm, f->graph, code->name, argc, argv, kw, lang_func_ndefaults(f), lang_func_defaults(f), params))
    return false;
  return enter(vm, code, params, f->env, out);
}

bool ev_bind(MistVM *vm, ObjFunc *f, const char *name, int skip, int argc, const Value *argv, const KwArgs *kw,
             Value *params, int *where) {
  EvCode *code = code_of(vm, f->graph);
  return bind_args_from(vm, f->graph, skip, name ? name : code->name, argc, argv, kw, lang_func_ndefaults(f), lang_func_defaults(f),
                        params, where);
}

bool ev_call(MistVM *vm, Value fn, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (fn.tag == V_OBJ) {
    switch (fn.o->kind) {
    case O_FUNC: return call_func(vm, AS_FUNC(fn), argc, argv, kw, out);
    case O_BUILTIN: {
      ObjBuiltin *b = AS_BUILTIN(fn);
      if (!b->fn) return lang_raise(vm, "TypeError", "'%s' cannot be called", b->name);
      vm->callee = b;
      return b->fn(vm, argc, argv, kw, out);
    }
    case O_BOUND: {
      ObjBound *b = AS_BOUND(fn);
      Value *args = alloca((argc + 1) * sizeof(Value));
      args[0] = b->self;
      if (argc) memcpy(args + 1, argv, argc * sizeof(Value));
      return ev_call(vm, b->fn, argc + 1, args, kw, out);
    }
    case O_GRAPH: {
      IrGraph *g = AS_GRAPH(fn)->graph;
      ir_free_vars(g);
      if (g->nfv) return lang_raise(vm, "TypeError", "graph @%s needs its free variables", g->name->data);
      ObjFunc *f = ev_closure(vm, g, NULL);
      return call_func(vm, f, argc, argv, kw, out);
    }
    default: break;
    }
  }
  return lang_raise(vm, "TypeError", "'%s' object is not callable", lang_type_name(fn));
}

/* ---- graph mode's calls (ir/eval.h, IrJitInterface), out of exec's
 * way: exec tests one flag and calls these, so that its own code (and
 * eager mode's speed) does not change. */

/* A user function's graph called directly (I_CALLG), in graph mode: as a
 * closure over env, through the jit; EV_JIT_INTERPRET when the
 * interpreter runs it.  (A call from call_func, which asked the jit
 * first, asks again: the same answer, from the cache.) */
static __attribute__((noinline, cold)) int callg_jit(MistVM *vm, EvCode *code, const Value *args, const Value *env,
                                                     Value *out) {
  IrGraph *g = code->graph;
  if (!vm->graph_mode || !(g->flags & IRG_FUNCTION)) return EV_JIT_INTERPRET;
  ObjFunc *f = make_closure(vm, g, env, NULL);
  return vm->jit->call(vm, f, code->nparams, args, NULL, out);
}

/* I_TAILCALL of closure f through the jit: compiled code runs as an
 * ordinary call, whose value the frame returns; the depth is checked as
 * a tail call checks it (counted first), so that runaway recursion stops
 * where it does in eager mode. */
static __attribute__((noinline, cold)) int tailcall_jit(MistVM *vm, ObjFunc *f, Instr *in, Value *frame,
                                                        Value *out) {
  if (!ev_jit_takes(vm, f)) return EV_JIT_INTERPRET;
  vm->depth++;
  bool deep = !stack_ok(vm);
  vm->depth--;
  if (deep) return EV_JIT_FAILED;
  Value *args = alloca((in->nargs + 1) * sizeof(Value));
  for (int k = 0; k < in->nargs; k++) copy_value(&args[k], &frame[in->args[k]]);
  return vm->jit->call(vm, f, in->nargs, args, NULL, out);
}

void ev_trace_frame(MistVM *vm, Span span, const IrInlined *inlined, const char *name) {
  for (; inlined; inlined = inlined->outer) {
    lang_trace_push(vm, span, inlined->callee);
    span = inlined->call;
  }
  lang_trace_push(vm, span, name);
}

static bool fail_at(MistVM *vm, EvCode *code, Instr *in) {
  if (vm->err.span.file < 0 && in->node) vm->err.span = in->node->span;
  /* a node with no place of its own (in the graph grad(f) builds) is
   * shown at its graph's */
  if (code->traced)
    ev_trace_frame(vm, in->node && in->node->span.file >= 0 ? in->node->span : code->graph->span,
                   in->node ? in->node->inlined : NULL, code->name);
  return false;
}

static inline bool truthy_fast(MistVM *vm, Value v, bool *t) {
  if (v.tag == V_BOOL) {
    *t = v.b;
    return true;
  }
  return lang_truthy(vm, v, t);
}

#define F frame

static inline void load_constants(EvCode *code, Value *frame) {
  Value *dst = frame + code->nparams + code->nfv;
  const Value *src = code->const_vals;
  for (int i = 0, n = code->nconst; i < n; i++) dst[i] = src[i];
}

/* in, an I_MUL marked NEXT_ADDS_A or _B, with sum, the I_ADD or I_SUB
 * after it, at once where they can be (lang_arith_scaled): 1 when done,
 * 0 when not (nothing done), -1 after an error. */
static int scaled_sum(MistVM *vm, const Instr *in, const Instr *sum, Value *frame) {
  bool first = in->imm & NEXT_ADDS_A;
  unsigned how = (first ? LANG_PRODUCT_FIRST : 0) | (sum->imm & (first ? 2 : 1) ? LANG_DEAD_X : 0) |
                 (in->imm & 1 ? LANG_DEAD_A : 0) | (in->imm & 2 ? LANG_DEAD_B : 0);
  return lang_arith_scaled(vm, sum->op == I_ADD ? OP_ADD : OP_SUB, frame[first ? sum->b : sum->a], frame[in->a],
                           frame[in->b], how, &frame[sum->dst]);
}

/* The interpreter's loop, twice (ir/eval_exec.h): exec, eager mode's,
 * and exec_graph, which offers tail calls to graph mode. */
#define EXEC_NAME exec
#define EXEC_GRAPH 0
#include "ir/eval_exec.h"
#undef EXEC_NAME
#undef EXEC_GRAPH
#define EXEC_NAME exec_graph
#define EXEC_GRAPH 1
#include "ir/eval_exec.h"
#undef EXEC_NAME
#undef EXEC_GRAPH

bool ev_run_main(MistVM *vm, IrGraph *g, Value *out) {
  ObjFunc *f = ev_closure(vm, g, NULL);
  return call_func(vm, f, 0, NULL, NULL, out);
}

static bool prim_value_call(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return lang_raise(vm, "TypeError", "bad primitive call");
}

Value ir_prim_value(MistVM *vm, IrPrim p) {
  EvState *st = vm->eval;
  if (st->prims[p].tag == V_UNBOUND) {
    BuiltinFn fn = ev_prim_fn(p);
    ObjBuiltin *b = lang_builtin_new(ir_prims[p].name, fn ? fn : prim_value_call, -1, -1);
    b->prim = (int)p;
    st->prims[p] = v_obj(b);
  }
  return st->prims[p];
}

void ev_init(MistVM *vm) {
  EvState *st = lang_alloc(sizeof *st);
  vm->eval = st;
  vm->call = ev_call;
  vm->graph_name = ir_graph_name;
}
