/* inline.c: replacing calls of known graphs by their bodies.
 *
 * A call whose callee is a graph constant, @h(args) (or a closure
 * constant that captured nothing, which is the same), or a switch on a
 * constant condition, switch(True, @a, @b)(), calls a graph known where
 * the call is.  Inlining puts a copy of that graph's body in place of the
 * call (ir_clone_body, clone.c): parameters become the arguments, the
 * graphs nested in h are cloned so that their free variables are the
 * copies, and every use of the call becomes a use of the copied output.
 * The copies run where the call ran, in the same order among themselves,
 * so effects and errors keep their order and their source spans, and
 * remember the call (IrNode.inlined), so that a traceback still lists
 * the frame of the function inlined.
 *
 * A graph is inlined only when that cannot change what runs: it has no
 * default values and gets exactly one argument per parameter (otherwise
 * the call raises a TypeError, which stays), it is not reachable from
 * itself (recursion and loops stay calls: their bodies are not finite),
 * it reads the same module's globals (or none), and each of its free
 * variables is in scope in the caller and computed before the call (a
 * closure made earlier than a variable it names would read Unbound).
 * And only when it pays: small graphs (INLINE_SMALL nodes with their
 * nested graphs) without loops, or a graph named by no other constant
 * in the unit, which then simply moves (up to INLINE_ONCE nodes).  The
 * copies are scanned in turn, so calls inside them are inlined in the
 * same sweep; a budget bounds the sweep.  A graph whose nested graphs
 * include an autodiff transform (jsource set) is not copied: the copy of
 * a transform would not know what it transforms.  What is inlined away becomes
 * garbage for ir_prune_unit.
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

/* ---- facts about the callee ---- */

static void count_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  NodeMap *refs = ctx;
  ir_map_set_int(refs, h, ir_map_int(refs, h, 0) + 1);
}

/* ---- recursion: strongly connected components of graph references ----
 *
 * A graph is recursive when it reaches itself: it refers to itself, or
 * it is in a strongly connected component of more than one graph.
 * Tarjan's algorithm, iterative, over every graph the scope reaches,
 * once per call of ir_inline. */

typedef struct Frame {
  IrGraph *g;
  int nrefs, next;
  IrGraph **refs;
} Frame;

typedef struct Tarjan {
  NodeMap index, low, on_stack;
  NodeMap *recursive;
  int counter;
  int nstack, capstack;
  IrGraph **stack;
  int nframes, capframes;
  Frame *frames;
} Tarjan;

typedef struct RefList {
  IrGraph *self;
  bool self_ref;
  int n, cap;
  IrGraph **items;
} RefList;

static void list_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  RefList *l = ctx;
  if (h == l->self) l->self_ref = true;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 8;
    l->items = lang_realloc(l->items, (size_t)l->cap * sizeof *l->items);
  }
  l->items[l->n++] = h;
}

static void tarjan_enter(Tarjan *t, IrGraph *g) {
  ir_map_set_int(&t->index, g, t->counter);
  ir_map_set_int(&t->low, g, t->counter);
  t->counter++;
  if (t->nstack == t->capstack) {
    t->capstack = t->capstack ? 2 * t->capstack : 32;
    t->stack = lang_realloc(t->stack, (size_t)t->capstack * sizeof *t->stack);
  }
  t->stack[t->nstack++] = g;
  ir_map_set_int(&t->on_stack, g, 1);
  RefList l = {g, false, 0, 0, NULL};
  ir_each_ref(g, list_ref, &l);
  if (l.self_ref) ir_map_set_int(t->recursive, g, 1);
  if (t->nframes == t->capframes) {
    t->capframes = t->capframes ? 2 * t->capframes : 32;
    t->frames = lang_realloc(t->frames, (size_t)t->capframes * sizeof *t->frames);
  }
  t->frames[t->nframes++] = (Frame){g, l.n, 0, l.items};
}

static void tarjan_from(Tarjan *t, IrGraph *root) {
  if (ir_map_get(&t->index, root)) return;
  tarjan_enter(t, root);
  while (t->nframes > 0) {
    Frame *f = &t->frames[t->nframes - 1];
    if (f->next < f->nrefs) {
      IrGraph *h = f->refs[f->next++];
      if (!ir_map_get(&t->index, h)) {
        tarjan_enter(t, h);
      } else if (ir_map_int(&t->on_stack, h, 0)) {
        int lh = ir_map_int(&t->index, h, 0);
        if (lh < ir_map_int(&t->low, f->g, 0)) ir_map_set_int(&t->low, f->g, lh);
      }
      continue;
    }
    IrGraph *g = f->g;
    int low = ir_map_int(&t->low, g, 0);
    t->nframes--;
    if (t->nframes > 0) {
      IrGraph *p = t->frames[t->nframes - 1].g;
      if (low < ir_map_int(&t->low, p, 0)) ir_map_set_int(&t->low, p, low);
    }
    if (low != ir_map_int(&t->index, g, 0)) continue;
    /* g roots a component: pop it */
    int first = t->nstack - 1;
    while (t->stack[first] != g) first--;
    bool many = t->nstack - first > 1;
    for (int k = first; k < t->nstack; k++) {
      ir_map_set_int(&t->on_stack, t->stack[k], 0);
      if (many) ir_map_set_int(t->recursive, t->stack[k], 1);
      else if (!ir_map_get(t->recursive, t->stack[k])) ir_map_set_int(t->recursive, t->stack[k], 0);
    }
    t->nstack = first;
  }
}

typedef struct Inliner {
  MistVM *vm;
  IrUnit *u;
  IrScope scope;
  NodeMap refs;       /* graph -> graph constants naming it in u */
  NodeMap recursive;  /* graph -> 1 when reachable from itself, 0 not */
  Tarjan tarjan;      /* the components found so far */
  NodeMap repl;       /* inlined call -> the copy of the callee's output */
  int budget;
} Inliner;

/* (A graph this pass made, a clone, is not known yet: its component is
 * found now.  Clones cannot close a cycle through older graphs: that
 * would have made what they were cloned from recursive, and it was
 * not, or it would not have been inlined.) */
static bool is_recursive(Inliner *in, IrGraph *h) {
  if (!ir_map_get(&in->recursive, h)) tarjan_from(&in->tarjan, h);
  return ir_map_int(&in->recursive, h, 0) == 1;
}

typedef struct Size {
  IrGraph *h;
  Inliner *in;
  NodeMap seen;
  int n, cap;
  IrGraph **stack;
  int nodes;
  bool loops;
  bool transforms;   /* an autodiff transform among them */
} Size;

static void size_ref(void *ctx, IrGraph *g, int pos) {
  (void)pos;
  Size *s = ctx;
  if (g == s->h || !ir_is_ancestor(s->h, g) || ir_map_get(&s->seen, g)) return;
  ir_map_put(&s->seen, g, g);
  s->nodes += g->nnodes;
  if (is_recursive(s->in, g)) s->loops = true;
  if (g->jsource) s->transforms = true;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->stack = lang_realloc(s->stack, (size_t)s->cap * sizeof *s->stack);
  }
  s->stack[s->n++] = g;
}

/* Nodes of h and of the graphs nested in h its body reaches: what a
 * copy costs; *loops when a loop is among them, *transforms when an
 * autodiff transform is (a copy would lose what its closures stand for:
 * IrGraph.jsource). */
static int body_size(Inliner *in, IrGraph *h, bool *loops, bool *transforms) {
  Size s = {h, in, {0}, 0, 0, NULL, h->nnodes, false, false};
  ir_each_ref(h, size_ref, &s);
  while (s.n > 0) ir_each_ref(s.stack[--s.n], size_ref, &s);
  *loops = s.loops;
  *transforms = s.transforms;
  return s.nodes;
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
  IrGraph *h = ir_known_callee(f);
  if (h) return h;
  if (ir_node_prim(f) != IR_P_SWITCH) return NULL;
  IrNode *c = ir_repl_resolve(&in->repl, f->in[1]);
  bool t;
  if (c->kind != IR_CONST || !const_truth(in->vm, c->value, &t)) return NULL;
  return ir_node_graph(ir_repl_resolve(&in->repl, f->in[t ? 2 : 3]));
}

typedef struct Ready {
  Inliner *in;
  IrGraph *g;
  NodeMap before;     /* g's nodes scheduled before the call */
  NodeMap seen;
  int n, cap;
  IrGraph **stack;
  bool ok;
} Ready;

static void ready_use(Ready *r, IrNode *x) {
  x = ir_repl_resolve(&r->in->repl, x);
  if (x && x->kind == IR_APPLY && x->graph == r->g && !ir_map_get(&r->before, x)) r->ok = false;
}

static void ready_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  Ready *r = ctx;
  if (h == r->g || !ir_is_ancestor(r->g, h) || ir_map_get(&r->seen, h)) return;
  ir_map_put(&r->seen, h, h);
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 16;
    r->stack = lang_realloc(r->stack, (size_t)r->cap * sizeof *r->stack);
  }
  r->stack[r->n++] = h;
}

/* Are h's free variables in scope at position pos of graph g, and
 * computed by then?  When h's parent encloses g, they are all nodes of
 * graphs enclosing g: in scope, and as computed as they were at the
 * call.  When h is nested in g itself, the nodes of g that h and the
 * graphs nested in g it reaches use must come before pos.  Otherwise
 * (rare: h nested elsewhere) ask ir_free_vars. */
static bool free_vars_ready(Inliner *in, IrGraph *g, int pos, IrGraph *h) {
  if (!h->parent || (h->parent != g && ir_is_ancestor(h->parent, g))) return true;
  if (h->parent == g) {
    Ready r = {in, g, {0}, {0}, 0, 0, NULL, true};
    for (int i = 0; i < pos; i++) ir_map_put(&r.before, g->nodes[i], g->nodes[i]);
    ready_ref(&r, h, 0);
    while (r.n > 0 && r.ok) {
      IrGraph *k = r.stack[--r.n];
      for (int i = 0; i < k->nnodes; i++)
        for (int j = 0; j < k->nodes[i]->nin; j++) ready_use(&r, k->nodes[i]->in[j]);
      if (k->ret) ready_use(&r, k->ret);
      for (int d = 0; d < k->ndefaults; d++) ready_use(&r, k->defaults[d]);
      ir_each_ref(k, ready_ref, &r);
    }
    return r.ok;
  }
  ir_free_vars(h);
  for (int i = 0; i < h->nfv; i++) {
    IrNode *x = ir_repl_resolve(&in->repl, h->fv[i]);
    if (x->kind == IR_CONST) continue;
    if (!x->graph || !ir_is_ancestor(x->graph, g)) return false;
    if (x->graph == g && x->kind == IR_APPLY) {
      bool found = false;
      for (int k = 0; k < pos && !found; k++) found = g->nodes[k] == x;
      if (!found) return false;
    }
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
  bool loops, transforms;
  int size = body_size(in, h, &loops, &transforms);
  if (transforms) return false;
  /* (a closure constant's graph may be named from anywhere: never once) */
  bool by_closure = n->in[0]->kind == IR_CONST && v_is_obj(n->in[0]->value, O_FUNC);
  bool once = !by_closure && ir_map_int(&in->refs, h, 0) <= 1;
  if (once ? size > INLINE_ONCE : (size > INLINE_SMALL || loops)) return false;
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
    if (ir_frozen(h) || !ir_is_ancestor(g, h)) continue;
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
  /* the copies of a function's body remember the call, so that an error
   * in them lists h's frame as the call would have (a branch or a join
   * is part of the frame it is in already) */
  IrInlined *at = NULL;
  if (h->flags & IRG_FUNCTION) {
    at = lang_alloc(sizeof *at);
    at->call = n->span;
    at->callee = h->display ? h->display->data : h->name->data;
    at->outer = n->inlined;
  }
  int before = g->nnodes;
  IrNode *r = ir_clone_body(in->u, h, g, &m, at);
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
  Inliner in;
  memset(&in, 0, sizeof in);
  in.vm = vm;
  in.u = u;
  in.budget = INLINE_BUDGET;
  in.tarjan.recursive = &in.recursive;
  ir_scope_collect(&in.scope, u, g);
  for (int i = 0; i < u->ngraphs; i++) ir_each_ref(u->graphs[i], count_ref, &in.refs);
  for (int k = 0; k < in.scope.n; k++) tarjan_from(&in.tarjan, in.scope.graphs[k]);
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
