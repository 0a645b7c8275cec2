/* inline.c: replacing calls of known graphs by their bodies.
 *
 * A call whose callee is a graph constant, @h(args), or a switch on a
 * constant condition, switch(True, @a, @b)(), calls a graph known where
 * the call is.  Inlining puts a copy of that graph's body in place of the
 * call (ir_clone_body, clone.c): parameters become the arguments, the
 * graphs nested in h are cloned so that their free variables are the
 * copies, and every use of the call becomes a use of the copied output.
 * The copies run where the call ran, in the same order among themselves,
 * so effects and errors keep their order and their source spans.
 *
 * A graph is inlined only when that cannot change what runs: it has no
 * default values and gets exactly one argument per parameter (otherwise
 * the call raises a TypeError, which stays), it is not reachable from
 * itself (recursion and loops stay calls: their bodies are not finite),
 * it reads the same module's globals (or none), and each of its free variables is
 * in scope in the caller and computed before the call (a closure made
 * earlier than a variable it names would read Unbound).  And only when
 * it pays: small graphs (INLINE_SMALL nodes with their nested graphs),
 * or a graph named by no other constant in the unit, which then simply
 * moves (up to INLINE_ONCE nodes).  The copies are scanned in turn, so
 * calls inside them are inlined in the same sweep; a budget bounds the
 * sweep.  What is inlined away becomes garbage for ir_prune_unit.
 */
#include <string.h>

#include "ir/scope.h"
#include "lang/gc.h"
#include "lang/ops.h"

enum {
  INLINE_SMALL = 30,    /* nodes, nested graphs included */
  INLINE_ONCE = 400,    /* the same, for a graph called from one place */
  INLINE_BUDGET = 512,  /* inlinings per call of ir_inline */
};

typedef struct Inliner {
  MistVM *vm;
  IrUnit *u;
  IrScope scope;
  NodeMap refs;       /* graph -> graph constants naming it in u */
  NodeMap recursive;  /* graph -> 1 when reachable from itself, 0 not */
  NodeMap repl;       /* inlined call -> the copy of the callee's output */
  int budget;
} Inliner;

/* ---- facts about the callee ---- */

static void count_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  NodeMap *refs = ctx;
  ir_map_set_int(refs, h, ir_map_int(refs, h, 0) + 1);
}

typedef struct Reach {
  IrGraph *target;
  bool found;
  NodeMap seen;
  int n, cap;
  IrGraph **stack;
} Reach;

static void reach_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  Reach *r = ctx;
  if (h == r->target) r->found = true;
  if (ir_map_get(&r->seen, h)) return;
  ir_map_put(&r->seen, h, h);
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 16;
    r->stack = lang_realloc(r->stack, (size_t)r->cap * sizeof *r->stack);
  }
  r->stack[r->n++] = h;
}

static bool is_recursive(Inliner *in, IrGraph *h) {
  int known = ir_map_int(&in->recursive, h, -1);
  if (known >= 0) return known == 1;
  Reach r = {h, false, {0}, 0, 0, NULL};
  ir_each_ref(h, reach_ref, &r);
  while (r.n > 0 && !r.found) ir_each_ref(r.stack[--r.n], reach_ref, &r);
  ir_map_set_int(&in->recursive, h, r.found);
  return r.found;
}

/* Nodes of h and of the graphs nested in h its body reaches: what a
 * copy costs. */
static int body_size(IrGraph *h) {
  Reach r = {NULL, false, {0}, 0, 0, NULL};
  int size = h->nnodes;
  ir_each_ref(h, reach_ref, &r);
  while (r.n > 0) {
    IrGraph *g = r.stack[--r.n];
    if (g == h || !ir_is_ancestor(h, g)) continue;
    size += g->nnodes;
    ir_each_ref(g, reach_ref, &r);
  }
  return size;
}

/* The truthiness of a constant, when it is certain. */
static bool const_truth(MistVM *vm, Value v, bool *t) {
  if (v.tag == V_UNBOUND) return false;
  MistError saved = vm->err;
  if (lang_truthy(vm, v, t)) return true;
  vm->err = saved;
  return false;
}

/* The graph n certainly calls, or NULL. */
static IrGraph *callee_of(Inliner *in, IrNode *n) {
  IrNode *f = n->in[0];
  IrGraph *h = ir_node_graph(f);
  if (h) return h;
  if (ir_node_prim(f) != IR_P_SWITCH) return NULL;
  IrNode *c = ir_repl_resolve(&in->repl, f->in[1]);
  bool t;
  if (c->kind != IR_CONST || !const_truth(in->vm, c->value, &t)) return NULL;
  return ir_node_graph(ir_repl_resolve(&in->repl, f->in[t ? 2 : 3]));
}

static bool scheduled_before(IrGraph *g, IrNode *x, int pos) {
  for (int i = 0; i < pos; i++)
    if (g->nodes[i] == x) return true;
  return false;
}

/* Are h's free variables in scope at position pos of graph g, and
 * computed by then? */
static bool free_vars_ready(Inliner *in, IrGraph *g, int pos, IrGraph *h) {
  ir_free_vars(h);
  for (int i = 0; i < h->nfv; i++) {
    IrNode *x = ir_repl_resolve(&in->repl, h->fv[i]);
    if (x->kind == IR_CONST) continue;
    if (!x->graph || !ir_is_ancestor(x->graph, g)) return false;
    if (x->graph == g && x->kind == IR_APPLY && !scheduled_before(g, x, pos)) return false;
  }
  return true;
}

/* Does h's own code read or bind its module's globals?  (Its nested
 * graphs keep their module when cloned; h's nodes move to the caller's.) */
static bool uses_module(IrGraph *h) {
  for (int i = 0; i < h->nnodes; i++) {
    int p = ir_node_prim(h->nodes[i]);
    if (p == IR_P_GLOBAL || p == IR_P_SET_GLOBAL || p == IR_P_IMPORT) return true;
  }
  return false;
}

static bool can_inline(Inliner *in, IrGraph *g, int pos, IrNode *n, IrGraph *h) {
  if (h->ndefaults || h->nparams != n->nin - 1 || h == g) return false;
  if (h->module != g->module && uses_module(h)) return false;
  if (!h->ret || is_recursive(in, h)) return false;
  int size = body_size(h);
  if (size > INLINE_SMALL && !(size <= INLINE_ONCE && ir_map_int(&in->refs, h, 0) <= 1)) return false;
  return free_vars_ready(in, g, pos, h);
}

/* ---- doing it ---- */

/* Every use of n, in g (after it) and in the graphs of u nested in g
 * (clones made by this pass among them), becomes a use of r.  Done at
 * once, not at the end: a graph about to be cloned must not keep a
 * reference to a call that is gone, or its copy would keep it too. */
static void replace_uses(Inliner *in, IrGraph *g, IrNode *n, IrNode *r) {
  for (int k = 0; k < in->u->ngraphs; k++) {
    IrGraph *h = in->u->graphs[k];
    if (h->code || !ir_is_ancestor(g, h)) continue;
    for (int i = 0; i < h->nnodes; i++)
      for (int j = 0; j < h->nodes[i]->nin; j++)
        if (h->nodes[i]->in[j] == n) h->nodes[i]->in[j] = r;
    if (h->ret == n) h->ret = r;
    for (int d = 0; d < h->ndefaults; d++)
      if (h->defaults[d] == n) h->defaults[d] = r;
  }
}

/* Replace the call n at position pos of g by h's body; the number of
 * nodes put in its place. */
static int inline_at(Inliner *in, IrGraph *g, int pos, IrNode *n, IrGraph *h) {
  NodeMap m = {0};
  for (int i = 0; i < h->nparams; i++)
    ir_map_put(&m, h->params[i], ir_repl_resolve(&in->repl, n->in[i + 1]));
  int before = g->nnodes;
  IrNode *r = ir_clone_body(in->u, h, g, &m);
  int k = g->nnodes - before;
  /* the k copies were appended: move them to where n was */
  IrNode **copies = lang_alloc((size_t)(k ? k : 1) * sizeof *copies);
  memcpy(copies, g->nodes + before, (size_t)k * sizeof *copies);
  memmove(g->nodes + pos + k, g->nodes + pos + 1, (size_t)(before - pos - 1) * sizeof *g->nodes);
  memcpy(g->nodes + pos, copies, (size_t)k * sizeof *copies);
  g->nnodes = before - 1 + k;
  if (r->kind == IR_APPLY && r->graph == g && !r->name) r->name = n->name;
  ir_map_put(&in->repl, n, r);
  replace_uses(in, g, n, r);
  return k;
}

static bool inline_in(Inliner *in, IrGraph *g) {
  bool changed = false;
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    for (int j = 0; j < n->nin; j++) n->in[j] = ir_repl_resolve(&in->repl, n->in[j]);
    IrGraph *h = callee_of(in, n);
    if (!h || in->budget <= 0 || !can_inline(in, g, i, n, h)) continue;
    in->budget--;
    inline_at(in, g, i, n, h);
    changed = true;
    i--;   /* scan the copies too */
  }
  if (g->ret) g->ret = ir_repl_resolve(&in->repl, g->ret);
  return changed;
}

bool ir_inline(MistVM *vm, IrUnit *u, IrGraph *g) {
  Inliner in = {vm, u, {0}, {0}, {0}, {0}, INLINE_BUDGET};
  ir_scope_collect(&in.scope, u, g);
  for (int i = 0; i < u->ngraphs; i++) ir_each_ref(u->graphs[i], count_ref, &in.refs);
  bool changed = false;
  int n = in.scope.n;   /* graphs cloned on the way wait for the next call */
  for (int k = 0; k < n; k++) changed |= inline_in(&in, in.scope.graphs[k]);
  if (!changed) return false;
  IrScope now;
  ir_scope_collect(&now, u, g);
  ir_scope_rewrite(&now, &in.repl);
  ir_scope_forget_free_vars(&now, u);
  return true;
}
