/* verify.c: the IR verifier, run after lowering and (in debug builds)
 * after every pass, so a pass that breaks the IR is caught where it did
 * it rather than where the interpreter trips over the result.
 *
 * It checks the invariants every other stage relies on: the chain of
 * enclosing graphs ends (no cycle); parameters belong to their graph,
 * and their default values are constants or nodes of an enclosing graph
 * (they are evaluated where a closure of the graph is made);
 * every scheduled node is an application owned by its graph, scheduled
 * once, with a callee and non-NULL inputs; each input is a constant, or
 * a parameter or application of the graph itself or of a graph that
 * encloses it (a free variable), and an application is scheduled in its
 * graph, before its uses when the use is in the same graph; a primitive
 * gets as many arguments as ops.def says; the graph has an output in
 * scope; and node ids are unique in a unit.  Failures raise "IRError"
 * with a message naming the graph and the node, at the node's span when
 * it has one.  Schedules are indexed in small pointer-keyed hash maps,
 * so verifying is linear in the size of the graph and its ancestors.
 */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/map.h"
#include "lang/gc.h"

/* ---- positions in a NodeMap ---- */

static bool map_get(const NodeMap *m, const void *key, int *val) {
  if (!ir_map_get(m, key)) return false;
  if (val) *val = ir_map_int(m, key, 0);
  return true;
}

/* false when key was already there (its value is left alone) */
static bool map_put(NodeMap *m, const void *key, int val) {
  if (ir_map_get(m, key)) return false;
  ir_map_set_int(m, key, val);
  return true;
}

/* ---- messages ---- */

/* "%acc" for a node bound to a source name, else "#12" (its id). */
static const char *label(const IrNode *n) {
  char buf[32];
  if (n->name) return lang_str_fmt("%%%s", n->name->data)->data;
  snprintf(buf, sizeof buf, "#%u", (unsigned)n->id);
  return lang_strdup(buf);
}

static const char *gname(const IrGraph *g) {
  return g && g->name ? g->name->data : "?";
}

static Span where(const IrGraph *g, const IrNode *n) {
  if (n && n->span.line > 0) return n->span;
  if (g && g->span.line > 0) return g->span;
  return span_none();
}

#define FAIL(g, n, ...) lang_raise_at(vm, where(g, n), "IRError", __VA_ARGS__)

/* ---- one graph ---- */

typedef struct Ctx {
  MistVM *vm;
  IrGraph *g;
  NodeMap own;       /* g's schedule: node -> position */
  NodeMap *outer;    /* the schedules of the graphs enclosing g (and maybe more) */
} Ctx;

static bool is_param_of(const IrNode *x, const IrGraph *h) {
  for (int i = 0; i < h->nparams; i++)
    if (h->params[i] == x) return true;
  return false;
}

/* Who uses a node, for messages (built only when something fails). */
typedef struct User {
  const IrNode *node;    /* an application, or */
  const IrNode *param;   /* the parameter whose default it is, or neither: the output */
} User;

static const char *user_text(User u) {
  if (u.node) return lang_str_fmt("node %s", label(u.node))->data;
  if (u.param) return lang_str_fmt("the default of parameter %s", label(u.param))->data;
  return "the return value";
}

/* x used by u (at schedule position pos, or -1 outside the schedule). */
static bool check_use(Ctx *c, User u, const IrNode *x, int pos) {
  MistVM *vm = c->vm;
  IrGraph *g = c->g;
  const IrNode *at_node = u.node ? u.node : u.param;
  if (x->kind == IR_CONST) return true;
  if (x->kind != IR_PARAM && x->kind != IR_APPLY)
    return FAIL(g, at_node, "graph @%s: %s uses a node of unknown kind %d", gname(g),
                user_text(u), (int)x->kind);
  if (!x->graph)
    return FAIL(g, at_node, "graph @%s: %s uses %s, which belongs to no graph", gname(g),
                user_text(u), label(x));
  if (!ir_is_ancestor(x->graph, g))
    return FAIL(g, at_node, "graph @%s: %s uses %s of graph @%s, which is not in scope",
                gname(g), user_text(u), label(x), gname(x->graph));
  if (x->kind == IR_PARAM) {
    if (!is_param_of(x, x->graph))
      return FAIL(g, at_node, "graph @%s: %s uses %s, which is not a parameter of graph @%s",
                  gname(g), user_text(u), label(x), gname(x->graph));
    return true;
  }
  if (x->graph == g) {
    int at;
    if (!map_get(&c->own, x, &at))
      return FAIL(g, at_node, "graph @%s: %s uses %s, which is not scheduled in graph @%s",
                  gname(g), user_text(u), label(x), gname(g));
    if (pos >= 0 && at >= pos)
      return FAIL(g, at_node, "graph @%s: %s uses %s before it is computed", gname(g),
                  user_text(u), label(x));
    return true;
  }
  if (!map_get(c->outer, x, NULL))
    return FAIL(g, at_node, "graph @%s: %s uses %s, which is not scheduled in graph @%s",
                gname(g), user_text(u), label(x), gname(x->graph));
  return true;
}

static bool check_apply(Ctx *c, IrNode *n, int pos) {
  MistVM *vm = c->vm;
  IrGraph *g = c->g;
  if (n->nin < 1 || !n->in)
    return FAIL(g, n, "graph @%s: node %s has no callee", gname(g), label(n));
  User u = {n, NULL};
  for (int j = 0; j < n->nin; j++) {
    if (!n->in[j])
      return FAIL(g, n, "graph @%s: input %d of node %s is NULL", gname(g), j, label(n));
    if (!check_use(c, u, n->in[j], pos)) return false;
  }
  IrNode *f = n->in[0];
  if (f->kind == IR_CONST && v_is_obj(f->value, O_BUILTIN) && AS_BUILTIN(f->value)->prim >= 0) {
    int p = AS_BUILTIN(f->value)->prim;
    if (p >= IR_NPRIMS)
      return FAIL(g, n, "graph @%s: node %s calls unknown primitive %d", gname(g), label(n), p);
    int arity = ir_prims[p].arity;
    if (arity >= 0 && n->nin - 1 != arity)
      return FAIL(g, n, "graph @%s: node %s: %s takes %d argument%s, got %d", gname(g),
                  label(n), ir_prims[p].name, arity, arity == 1 ? "" : "s", n->nin - 1);
  }
  return true;
}

/* The chain of g's enclosing graphs ends (Floyd's tortoise and hare):
 * checked before anything walks it. */
static bool chain_ends(MistVM *vm, IrGraph *g) {
  for (IrGraph *slow = g, *fast = g; fast && fast->parent;) {
    slow = slow->parent;
    fast = fast->parent->parent;
    if (fast && fast == slow)
      return FAIL(g, NULL, "graph @%s: its chain of enclosing graphs has a cycle", gname(g));
  }
  return true;
}

/* Add the schedules of g's enclosing graphs to m, each graph once
 * (seen: the graphs added so far). */
static void add_outer(NodeMap *m, NodeMap *seen, IrGraph *g) {
  for (IrGraph *h = g->parent; h; h = h->parent) {
    if (!map_put(seen, h, 0)) break;   /* it and its ancestors are in */
    for (int i = 0; i < h->nnodes; i++)
      if (h->nodes[i]) map_put(m, h->nodes[i], i);
  }
}

static bool verify_graph(MistVM *vm, IrGraph *g, NodeMap *outer);

bool ir_verify_graph(MistVM *vm, IrGraph *g) {
  if (!g) return lang_raise(vm, "IRError", "NULL graph");
  NodeMap outer = {0}, seen = {0};
  if (!chain_ends(vm, g)) return false;
  add_outer(&outer, &seen, g);
  return verify_graph(vm, g, &outer);
}

/* g, with outer holding (at least) the schedules of its enclosing graphs */
static bool verify_graph(MistVM *vm, IrGraph *g, NodeMap *outer) {
  if (!g) return lang_raise(vm, "IRError", "NULL graph");
  Ctx c = {vm, g, {0}, outer};
  for (int i = 0; i < g->nparams; i++) {
    IrNode *p = g->params[i];
    if (!p) return FAIL(g, NULL, "graph @%s: parameter %d is NULL", gname(g), i);
    if (p->kind != IR_PARAM)
      return FAIL(g, p, "graph @%s: parameter %d (%s) is not a parameter node", gname(g), i,
                  label(p));
    if (p->graph != g)
      return FAIL(g, p, "graph @%s: parameter %s belongs to graph @%s", gname(g), label(p),
                  gname(p->graph));
  }
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    if (!n) return FAIL(g, NULL, "graph @%s: schedule entry %d is NULL", gname(g), i);
    if (n->kind != IR_APPLY)
      return FAIL(g, n, "graph @%s: scheduled node %s is not an application", gname(g),
                  label(n));
    if (n->graph != g)
      return FAIL(g, n, "graph @%s: scheduled node %s belongs to graph @%s", gname(g), label(n),
                  gname(n->graph));
    if (!map_put(&c.own, n, i))
      return FAIL(g, n, "graph @%s: node %s is scheduled twice", gname(g), label(n));
  }
  if (g->ndefaults < 0 || g->ndefaults > g->nparams || (g->ndefaults && !g->defaults))
    return FAIL(g, NULL, "graph @%s: %d default values for %d parameters", gname(g),
                g->ndefaults, g->nparams);
  for (int d = 0; d < g->ndefaults; d++) {
    IrNode *p = g->params[g->nparams - g->ndefaults + d], *x = g->defaults[d];
    User u = {NULL, p};
    if (!x) return FAIL(g, p, "graph @%s: %s is NULL", gname(g), user_text(u));
    if (x->kind != IR_CONST && x->graph == g)
      return FAIL(g, p, "graph @%s: %s uses %s of the graph itself", gname(g), user_text(u),
                  label(x));
    if (!check_use(&c, u, x, -1)) return false;
  }
  for (int i = 0; i < g->nnodes; i++)
    if (!check_apply(&c, g->nodes[i], i)) return false;
  if (!g->ret) return FAIL(g, NULL, "graph @%s has no return node", gname(g));
  User ret = {NULL, NULL};
  return check_use(&c, ret, g->ret, -1);
}

bool ir_verify_unit(MistVM *vm, IrUnit *u) {
  /* one index of the enclosing schedules for the whole unit: a module's
   * graph encloses every def in it, and indexing it once per def made
   * verifying quadratic (most of loading the derivative rules) */
  NodeMap outer = {0}, seen = {0};
  for (int i = 0; i < u->ngraphs; i++) {
    IrGraph *g = u->graphs[i];
    if (!g) return lang_raise(vm, "IRError", "NULL graph");
    if (!chain_ends(vm, g)) return false;
    add_outer(&outer, &seen, g);
  }
  for (int i = 0; i < u->ngraphs; i++)
    if (!verify_graph(vm, u->graphs[i], &outer)) return false;
  /* node ids: map id -> the node that has it */
  NodeMap ids = {0};
  IrNode **owner = NULL;
  int nowner = 0, capowner = 0;
  for (int gi = 0; gi < u->ngraphs; gi++) {
    IrGraph *g = u->graphs[gi];
    for (int i = 0; i < g->nparams + g->nnodes; i++) {
      IrNode *n = i < g->nparams ? g->params[i] : g->nodes[i - g->nparams];
      /* ids are keyed as pointers: id + 1, never NULL */
      const void *key = (const void *)(uintptr_t)((uint64_t)n->id + 1);
      int at;
      if (map_get(&ids, key, &at)) {
        if (owner[at] == n) continue;
        IrNode *m = owner[at];
        return FAIL(g, n, "node id %u is used twice: %s in graph @%s and %s in graph @%s",
                    (unsigned)n->id, label(m), gname(m->graph), label(n), gname(g));
      }
      if (nowner == capowner) {
        capowner = capowner ? 2 * capowner : 64;
        owner = lang_realloc(owner, (size_t)capowner * sizeof *owner);
      }
      owner[nowner] = n;
      map_put(&ids, key, nowner++);
    }
  }
  return true;
}
