/* ir.c: building IR graphs, the primitive table, and free variables.
 *
 * Graphs and nodes live on the GC heap like everything else.  A unit
 * collects the graphs of one lowering (or one derivative) so they can be
 * printed and verified together.  Free variables are computed on demand:
 * a graph's free variables are the nodes of enclosing graphs that it, its
 * nested graphs, or graphs it refers to by constant (a sibling it calls,
 * a continuation) need; a fixpoint handles recursion between graphs.
 */
#include <stdarg.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/map.h"
#include "lang/gc.h"

const IrPrimInfo ir_prims[IR_NPRIMS] = {
#define PRIM(e, name, arity, flags, eval, type, none, rev, fwd, lower, shard, doc) {name, arity, flags, doc},
#include "ir/ops.def"
#undef PRIM
};

const IrBuiltinOpInfo ir_builtin_ops[IR_NBUILTIN_OPS] = {
#define OP(e, name, kind, flags, eval, type, rev, fwd, lower, shard, doc) {name, IR_OP_##kind, flags, doc},
#include "ir/builtin_ops.def"
#undef OP
};

int ir_prim_lookup(const char *name, size_t len) {
  for (int i = 0; i < IR_NPRIMS; i++)
    if (strlen(ir_prims[i].name) == len && memcmp(ir_prims[i].name, name, len) == 0)
      return i;
  return -1;
}

IrUnit *ir_unit_new(void) {
  IrUnit *u = lang_alloc(sizeof *u);
  u->next_id = 1;
  return u;
}

IrGraph *ir_graph_alloc(void) {
  return lang_alloc(sizeof(IrGraph) + IR_NSIDES * sizeof(void *));
}

IrGraph *ir_graph_new(IrUnit *u, const char *name, IrGraph *parent, unsigned flags, Span span) {
  IrGraph *g = ir_graph_alloc();
  g->name = lang_str(name);
  g->display = g->name;
  g->id = u->next_id++;
  g->flags = flags;
  g->parent = parent;
  g->module = parent ? parent->module : NULL;
  g->span = span;
  if (u->ngraphs == u->capgraphs) {
    u->capgraphs = u->capgraphs ? 2 * u->capgraphs : 16;
    u->graphs = lang_realloc(u->graphs, u->capgraphs * sizeof *u->graphs);
  }
  u->graphs[u->ngraphs++] = g;
  return g;
}

static uint64_t next_serial = 1;

uint64_t ir_serials_made(void) { return __atomic_load_n(&next_serial, __ATOMIC_RELAXED); }

void ir_serials_skip(uint64_t n) { __atomic_fetch_add(&next_serial, n, __ATOMIC_RELAXED); }

static IrNode *node_new(IrUnit *u, IrKind kind, IrGraph *g, Span span) {
  IrNode *n = lang_alloc(sizeof *n);
  n->serial = __atomic_fetch_add(&next_serial, 1, __ATOMIC_RELAXED);
  n->kind = kind;
  n->id = u->next_id++;
  n->graph = g;
  n->span = span;
  n->inlined = u->inlined;
  return n;
}

IrNode *ir_param(IrUnit *u, IrGraph *g, ObjStr *name, Span span) {
  IrNode *n = node_new(u, IR_PARAM, g, span);
  n->name = name;
  g->params = lang_realloc(g->params, (g->nparams + 1) * sizeof *g->params);
  g->params[g->nparams++] = n;
  return n;
}

IrNode *ir_const(IrUnit *u, Value v, Span span) {
  IrNode *n = node_new(u, IR_CONST, NULL, span);
  n->value = v;
  return n;
}

IrNode *ir_const_graph(IrUnit *u, IrGraph *g, Span span) {
  ObjGraph *o = lang_alloc(sizeof *o);
  o->obj.kind = O_GRAPH;
  o->graph = g;
  return ir_const(u, v_obj(o), span);
}

/* Primitive constants hold a small placeholder builtin carrying only the
 * primitive's number; ir_prim_value gives the VM's callable one. */
IrNode *ir_const_prim(IrUnit *u, IrPrim p, Span span) {
  ObjBuiltin *b = lang_builtin_new(ir_prims[p].name, NULL, -1, -1);
  b->prim = (int)p;
  return ir_const(u, v_obj(b), span);
}

IrNode *ir_apply(IrUnit *u, IrGraph *g, int nin, IrNode **in, Span span) {
  IrNode *n = node_new(u, IR_APPLY, g, span);
  n->nin = nin;
  n->in = lang_alloc(nin * sizeof *n->in);
  memcpy(n->in, in, nin * sizeof *n->in);
  if (g->nnodes == g->capnodes) {
    g->capnodes = g->capnodes ? 2 * g->capnodes : 8;
    g->nodes = lang_realloc(g->nodes, g->capnodes * sizeof *g->nodes);
  }
  g->nodes[g->nnodes++] = n;
  return n;
}

IrNode *ir_prim_applyv(IrUnit *u, IrGraph *g, IrPrim p, Span span, int nargs, IrNode **args) {
  IrNode *small[8];
  IrNode **in = nargs + 1 <= 8 ? small : lang_alloc((nargs + 1) * sizeof *in);
  in[0] = ir_const_prim(u, p, span);
  for (int i = 0; i < nargs; i++) in[i + 1] = args[i];
  return ir_apply(u, g, nargs + 1, in, span);
}

IrNode *ir_prim_apply(IrUnit *u, IrGraph *g, IrPrim p, Span span, int nargs, ...) {
  IrNode *args[8];
  va_list ap;
  va_start(ap, nargs);
  for (int i = 0; i < nargs && i < 8; i++) args[i] = va_arg(ap, IrNode *);
  va_end(ap);
  return ir_prim_applyv(u, g, p, span, nargs, args);
}

int ir_node_prim(const IrNode *n) {
  if (n->kind != IR_APPLY) return -1;
  const IrNode *f = n->in[0];
  if (f->kind == IR_CONST && v_is_obj(f->value, O_BUILTIN)) return AS_BUILTIN(f->value)->prim;
  return -1;
}

IrGraph *ir_node_graph(const IrNode *n) {
  if (n->kind == IR_CONST && v_is_obj(n->value, O_GRAPH)) return AS_GRAPH(n->value)->graph;
  return NULL;
}

bool ir_is_ancestor(const IrGraph *anc, const IrGraph *g) {
  for (; g; g = g->parent)
    if (g == anc) return true;
  return false;
}

/* What a function value prints as: its display name ("f", "<lambda>"). */
const char *ir_graph_name(struct IrGraph *g) { return g->display ? g->display->data : g->name->data; }

/* ---- free variables ----
 *
 * Direct needs of g: nodes used by g's applications (and output) that
 * belong to a graph that is not g or nested in g.  Then the needs of
 * graphs g refers to by constant are added, minus nodes that belong to g
 * or its descendants.  Graph references form cycles (loops, mutual
 * recursion), so we iterate all graphs reachable from g to a fixpoint. */

typedef struct NodeSet {
  int n, cap;
  IrNode **items;
} NodeSet;

static bool set_has(NodeSet *s, IrNode *x) {
  for (int i = 0; i < s->n; i++)
    if (s->items[i] == x) return true;
  return false;
}

static bool set_add(NodeSet *s, IrNode *x) {
  if (set_has(s, x)) return false;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 8;
    s->items = lang_realloc(s->items, s->cap * sizeof *s->items);
  }
  s->items[s->n++] = x;
  return true;
}

typedef struct FvGraph {
  IrGraph *g;
  NodeSet fv;
  int nrefs;
  IrGraph **refs;   /* graphs referenced by constant from g's own nodes */
} FvGraph;

typedef struct FvWork {
  int n, cap;
  FvGraph *items;
  NodeMap index;    /* graph -> its place in items (a module reaches hundreds of graphs) */
} FvWork;

static int work_find(FvWork *w, IrGraph *g) { return ir_map_int(&w->index, g, -1); }

static void use_node(FvGraph *fg, IrNode *x) {
  if (x->kind == IR_CONST) {
    IrGraph *h = ir_node_graph(x);
    if (h) {
      for (int i = 0; i < fg->nrefs; i++)
        if (fg->refs[i] == h) return;
      fg->refs = lang_realloc(fg->refs, (fg->nrefs + 1) * sizeof *fg->refs);
      fg->refs[fg->nrefs++] = h;
    }
    return;
  }
  if (!ir_is_ancestor(fg->g, x->graph)) set_add(&fg->fv, x);
}

static int work_add(FvWork *w, IrGraph *g) {
  int i = work_find(w, g);
  if (i >= 0) return i;
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 16;
    w->items = lang_realloc(w->items, w->cap * sizeof *w->items);
  }
  i = w->n++;
  ir_map_set_int(&w->index, g, i);
  FvGraph *fg = &w->items[i];
  memset(fg, 0, sizeof *fg);
  fg->g = g;
  for (int k = 0; k < g->nnodes; k++)
    for (int j = 0; j < g->nodes[k]->nin; j++) use_node(&w->items[i], g->nodes[k]->in[j]);
  if (g->ret) use_node(&w->items[i], g->ret);
  for (int k = 0; k < g->ndefaults; k++) use_node(&w->items[i], g->defaults[k]);
  /* refs may point anywhere; add them too (the array may move) */
  int nrefs = w->items[i].nrefs;
  IrGraph **refs = w->items[i].refs;
  for (int r = 0; r < nrefs; r++) work_add(w, refs[r]);
  return i;
}

void ir_free_vars(IrGraph *g) {
  if (g->fv_done) return;
  FvWork w = {0};
  work_add(&w, g);
  bool changed = true;
  while (changed) {
    changed = false;
    for (int i = 0; i < w.n; i++) {
      FvGraph *fg = &w.items[i];
      for (int r = 0; r < fg->nrefs; r++) {
        FvGraph *h = &w.items[work_find(&w, fg->refs[r])];
        for (int k = 0; k < h->fv.n; k++) {
          IrNode *x = h->fv.items[k];
          if (!ir_is_ancestor(fg->g, x->graph) && set_add(&fg->fv, x)) changed = true;
        }
      }
    }
  }
  for (int i = 0; i < w.n; i++) {
    FvGraph *fg = &w.items[i];
    if (fg->g->fv_done) continue;
    fg->g->nfv = fg->fv.n;
    fg->g->fv = fg->fv.items;
    fg->g->fv_done = true;
  }
}
