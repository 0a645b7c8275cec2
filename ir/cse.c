/* cse.c: common subexpression elimination of pure primitives.
 *
 * Two applications of the same pure primitive (P_PURE in ops.def) to the
 * same inputs compute the same value: inputs are the same node, or
 * constants of equal value (same type and bits, equal text, the same
 * graph).  When the later one runs, the earlier one has run and
 * succeeded, so the later one cannot fail either and goes, its uses
 * taking the earlier one.  Nothing is ever moved earlier.
 *
 * "Earlier" is the schedule order within a graph.  A node of an
 * enclosing graph A is earlier than everything in a nested graph N when
 * it is scheduled before the first point of A that can make a closure
 * leading to N (a graph constant in A's schedule from which N is
 * reachable inside A): N cannot run before then.  Those entry points are
 * computed per enclosing graph by a walk of the graphs nested in it.
 *
 * Left alone: switch (the interpreter runs `switch(c, @a, @b)()` as
 * blocks only when the switch has one use), make_list and make_dict
 * (each list display is a new object in Python: `[] is []` is False).
 * global and getattr read state that top-level code changes, so they are
 * merged only within one graph, with no effect (a call, set_global,
 * import...) in between.
 */
#include <string.h>

#include "ir/scope.h"
#include "lang/gc.h"

typedef struct Cse {
  IrScope scope;
  NodeMap repl, dead;
  NodeMap pos;        /* node -> its position in its graph */
  NodeMap entries;    /* enclosing graph -> NodeMap* (nested graph -> entry position) */
  int nbuckets;
  IrNode ***buckets;  /* hash -> NULL-terminated growing arrays of candidates */
  int *bucket_len, *bucket_cap;
} Cse;

/* ---- which nodes, and when two are the same ---- */

static bool state_read(int p) { return p == IR_P_GLOBAL || p == IR_P_GETATTR; }

static bool eligible(const IrNode *n) {
  int p = ir_node_prim(n);
  if (p < 0 || p >= IR_NPRIMS || !(ir_prims[p].flags & P_PURE)) return false;
  return p != IR_P_SWITCH && p != IR_P_MAKE_LIST && p != IR_P_MAKE_DICT;
}

/* May n act or change state that global() or getattr() read? */
static bool effect(const IrNode *n) {
  int p = ir_node_prim(n);
  return p < 0 || !(ir_prims[p].flags & P_PURE);
}

static bool same_value(Value a, Value b) {
  if (a.tag != b.tag) return false;
  switch (a.tag) {
  case V_NONE: case V_UNBOUND: return true;
  case V_BOOL: return a.b == b.b;
  case V_INT: return a.i == b.i;
  case V_FLOAT: return memcmp(&a.f, &b.f, sizeof a.f) == 0;
  case V_OBJ: break;
  }
  if (a.o == b.o) return true;
  if (a.o->kind != b.o->kind) return false;
  switch (a.o->kind) {
  case O_STR: return lang_str_eq(AS_STR(a), AS_STR(b));
  case O_GRAPH: return AS_GRAPH(a)->graph == AS_GRAPH(b)->graph;
  case O_BUILTIN: return AS_BUILTIN(a)->prim >= 0 && AS_BUILTIN(a)->prim == AS_BUILTIN(b)->prim;
  default: return false;
  }
}

static bool same_input(const IrNode *x, const IrNode *y) {
  if (x == y) return true;
  return x->kind == IR_CONST && y->kind == IR_CONST && same_value(x->value, y->value);
}

static bool same_apply(const IrNode *a, const IrNode *b) {
  if (a->nin != b->nin) return false;
  for (int j = 0; j < a->nin; j++)
    if (!same_input(a->in[j], b->in[j])) return false;
  return true;
}

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t input_hash(const IrNode *x) {
  if (x->kind != IR_CONST) return (uint64_t)(uintptr_t)x;
  Value v = x->value;
  switch (v.tag) {
  case V_NONE: case V_UNBOUND: return 0x51 + v.tag;
  case V_BOOL: return 0x77 + v.b;
  case V_INT: return mix(0x13, (uint64_t)v.i);
  case V_FLOAT: {
    uint64_t bits;
    memcpy(&bits, &v.f, sizeof bits);
    return mix(0x29, bits);
  }
  case V_OBJ: break;
  }
  switch (v.o->kind) {
  case O_STR: return mix(0x3b, lang_str_hash(AS_STR(v)));
  case O_GRAPH: return mix(0x47, (uint64_t)(uintptr_t)AS_GRAPH(v)->graph);
  case O_BUILTIN:
    if (AS_BUILTIN(v)->prim >= 0) return mix(0x5d, (uint64_t)AS_BUILTIN(v)->prim);
    return (uint64_t)(uintptr_t)v.o;
  default: return (uint64_t)(uintptr_t)v.o;
  }
}

static int bucket_of(Cse *c, const IrNode *n) {
  uint64_t h = (uint64_t)n->nin;
  for (int j = 0; j < n->nin; j++) h = mix(h, input_hash(n->in[j]));
  return (int)(h % (uint64_t)c->nbuckets);
}

static void remember(Cse *c, int b, IrNode *n) {
  if (c->bucket_len[b] == c->bucket_cap[b]) {
    c->bucket_cap[b] = c->bucket_cap[b] ? 2 * c->bucket_cap[b] : 4;
    c->buckets[b] = lang_realloc(c->buckets[b], (size_t)c->bucket_cap[b] * sizeof **c->buckets);
  }
  c->buckets[b][c->bucket_len[b]++] = n;
}

/* ---- entry points of nested graphs ---- */

typedef struct EntryWalk {
  IrGraph *anc;
  NodeMap *entry;
  int at;
  int n, cap;
  IrGraph **stack;
} EntryWalk;

static void entry_ref(void *ctx, IrGraph *h, int pos) {
  (void)pos;
  EntryWalk *w = ctx;
  if (h == w->anc || !ir_is_ancestor(w->anc, h) || ir_map_get(w->entry, h)) return;
  ir_map_set_int(w->entry, h, w->at);
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 16;
    w->stack = lang_realloc(w->stack, (size_t)w->cap * sizeof *w->stack);
  }
  w->stack[w->n++] = h;
}

/* The first position of anc's schedule where a closure leading to a
 * nested graph can be made, for every nested graph reachable inside anc
 * (anc's output counts as position nnodes). */
static NodeMap *entries_of(Cse *c, IrGraph *anc) {
  NodeMap *e = ir_map_get(&c->entries, anc);
  if (e) return e;
  e = lang_alloc(sizeof *e);
  ir_map_put(&c->entries, anc, e);
  EntryWalk w = {anc, e, 0, 0, 0, NULL};
  for (int i = 0; i <= anc->nnodes; i++) {
    w.at = i;
    if (i < anc->nnodes) {
      IrNode *n = anc->nodes[i];
      for (int j = 0; j < n->nin; j++)
        if (ir_node_graph(n->in[j])) entry_ref(&w, ir_node_graph(n->in[j]), i);
    } else if (anc->ret && ir_node_graph(anc->ret)) {
      entry_ref(&w, ir_node_graph(anc->ret), i);
    }
    /* what the graphs found so far reach is reachable from here too */
    while (w.n > 0) ir_each_ref(w.stack[--w.n], entry_ref, &w);
  }
  return e;
}

/* Has candidate m certainly run whenever n (in graph g, at position i)
 * runs, with nothing in between that global() or getattr() would see? */
static bool dominates(Cse *c, IrNode *m, IrGraph *g, int last_effect, int p) {
  int at = ir_map_int(&c->pos, m, -1);
  if (at < 0) return false;
  if (m->graph == g) return !state_read(p) || at > last_effect;
  if (state_read(p) || !ir_scope_has(&c->scope, m->graph) || !ir_is_ancestor(m->graph, g))
    return false;
  int entry = ir_map_int(entries_of(c, m->graph), g, -1);
  return entry >= 0 && at < entry;
}

/* ---- the sweep ---- */

static bool cse_graph(Cse *c, IrGraph *g) {
  bool changed = false;
  int last_effect = -1;
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    for (int j = 0; j < n->nin; j++) n->in[j] = ir_repl_resolve(&c->repl, n->in[j]);
    ir_map_set_int(&c->pos, n, i);
    if (!eligible(n)) {
      if (effect(n)) last_effect = i;
      continue;
    }
    int b = bucket_of(c, n), p = ir_node_prim(n);
    IrNode *found = NULL;
    for (int k = 0; k < c->bucket_len[b] && !found; k++) {
      IrNode *m = c->buckets[b][k];
      if (same_apply(m, n) && dominates(c, m, g, last_effect, p)) found = m;
    }
    if (found) {
      ir_map_put(&c->repl, n, found);
      ir_map_put(&c->dead, n, n);
      changed = true;
    } else {
      remember(c, b, n);
    }
  }
  if (g->ret) g->ret = ir_repl_resolve(&c->repl, g->ret);
  return changed;
}

bool ir_cse(MistVM *vm, IrUnit *u, IrGraph *g) {
  (void)vm;
  Cse c;
  memset(&c, 0, sizeof c);
  ir_scope_collect(&c.scope, u, g);
  int total = 0;
  for (int k = 0; k < c.scope.n; k++) total += c.scope.graphs[k]->nnodes;
  c.nbuckets = 2 * total + 7;
  c.buckets = lang_alloc((size_t)c.nbuckets * sizeof *c.buckets);
  c.bucket_len = lang_alloc_atomic((size_t)c.nbuckets * sizeof *c.bucket_len);
  c.bucket_cap = lang_alloc_atomic((size_t)c.nbuckets * sizeof *c.bucket_cap);
  memset(c.bucket_len, 0, (size_t)c.nbuckets * sizeof *c.bucket_len);
  memset(c.bucket_cap, 0, (size_t)c.nbuckets * sizeof *c.bucket_cap);
  bool changed = false;
  for (int k = 0; k < c.scope.n; k++) changed |= cse_graph(&c, c.scope.graphs[k]);
  if (!changed) return false;
  ir_scope_rewrite(&c.scope, &c.repl);
  ir_scope_unschedule(&c.scope, &c.dead);
  ir_scope_forget_free_vars(&c.scope, u);
  return true;
}
