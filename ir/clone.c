/* clone.c: copying graphs, for inlining and for anyone who needs a
 * graph twice (specialisation, derivatives).
 *
 * Copying graph h means copying its parameters, its applications, and
 * the graphs nested in h that its body reaches: those use h's nodes as
 * free variables and must use the copies instead.  Graphs outside h (siblings h calls,
 * functions of the module) are shared, not copied.  The work goes in
 * three steps, so that every reference finds its target made: first the
 * set of nested graphs to copy (with any enclosing graph between them
 * and h, ancestors first), then an empty copy of each with its
 * parameters, then the nodes, graph by graph in that order: a node only
 * uses nodes of its own graph scheduled before it or nodes of enclosing
 * graphs, which are copied by then.  One map (NodeMap) takes old nodes
 * and graphs to new ones; a caller may seed it, which is how inlining
 * binds parameters to arguments.
 */
#include <string.h>

#include "ir/scope.h"
#include "lang/gc.h"

typedef struct Cloner {
  IrUnit *u;
  NodeMap *m;
  IrGraph *old_top;   /* h */
  IrGraph *new_top;   /* h's copy, or the graph h's body is copied into */
  int n, cap;
  IrGraph **set;      /* graphs nested in h to copy, ancestors first */
  NodeMap in_set;
  const IrInlined *at;   /* inlining: the call h's body replaces, else NULL */
  NodeMap rebased;       /* a copy's IrInlined for each of the originals' */
} Cloner;

/* ---- which graphs ---- */

static void add_nested(Cloner *c, IrGraph *g);

static void visit_ref(void *ctx, IrGraph *r, int pos) {
  (void)pos;
  Cloner *c = ctx;
  if (r != c->old_top && ir_is_ancestor(c->old_top, r)) add_nested(c, r);
}

static void add_nested(Cloner *c, IrGraph *g) {
  if (ir_map_get(&c->in_set, g)) return;
  ir_map_put(&c->in_set, g, g);
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 8;
    c->set = lang_realloc(c->set, (size_t)c->cap * sizeof *c->set);
  }
  c->set[c->n++] = g;
  /* the graphs between g and h must be copied too, to hold g's copy */
  if (g->parent && g->parent != c->old_top) add_nested(c, g->parent);
  ir_each_ref(g, visit_ref, c);
}

static void collect_set(Cloner *c) {
  ir_each_ref(c->old_top, visit_ref, c);
  /* ancestors first: insertion sort by depth (the sets are small) */
  for (int i = 1; i < c->n; i++) {
    IrGraph *g = c->set[i];
    int d = ir_graph_depth(g), j = i;
    while (j > 0 && ir_graph_depth(c->set[j - 1]) > d) {
      c->set[j] = c->set[j - 1];
      j--;
    }
    c->set[j] = g;
  }
}

/* ---- names ---- */

static bool name_taken(IrUnit *u, const char *name) {
  for (int i = 0; i < u->ngraphs; i++)
    if (strcmp(u->graphs[i]->name->data, name) == 0) return true;
  return false;
}

/* The part of g's name that is its own: after its parent's name, else
 * after the last dot; a numeric suffix that only made it unique goes. */
static const char *own_part(IrGraph *g, size_t *len) {
  const char *name = g->name->data;
  const char *part = strrchr(name, '.');
  part = part ? part + 1 : name;
  if (g->parent) {
    size_t k = g->parent->name->len;
    if (strncmp(name, g->parent->name->data, k) == 0 && name[k] == '.') part = name + k + 1;
  }
  size_t n = strlen(part);
  /* "if2.3" -> "if2" */
  const char *dot = strrchr(part, '.');
  if (dot && dot[1]) {
    const char *p = dot + 1;
    while (*p >= '0' && *p <= '9') p++;
    if (!*p) n = (size_t)(dot - part);
  }
  *len = n;
  return part;
}

static const char *clone_name(IrUnit *u, IrGraph *g, IrGraph *parent) {
  StrBuf sb;
  sb_init(&sb);
  if (parent) {
    size_t n;
    const char *part = own_part(g, &n);
    sb_printf(&sb, "%s.", parent->name->data);
    sb_add(&sb, part, n);
  } else {
    sb_adds(&sb, g->name->data);
  }
  size_t base = sb.len;
  for (int k = 2; name_taken(u, sb.data); k++) {
    sb.len = base;
    sb_printf(&sb, ".%d", k);
  }
  return sb.data;
}

/* ---- copying ---- */

/* x as the copies see it. */
static IrNode *map_input(Cloner *c, IrNode *x) {
  if (!x) return NULL;
  if (x->kind == IR_CONST) {
    IrGraph *g = ir_node_graph(x);
    IrGraph *ng = g ? ir_map_get(c->m, g) : NULL;
    if (!ng || ng == g) return x;
    IrNode *k = ir_map_get(c->m, x);
    if (!k) {
      k = ir_const_graph(c->u, ng, x->span);
      ir_map_put(c->m, x, k);
    }
    return k;
  }
  IrNode *y = ir_map_get(c->m, x);
  return y ? y : x;
}

static IrGraph *shell(Cloner *c, IrGraph *g, IrGraph *parent) {
  IrGraph *k = ir_graph_new(c->u, clone_name(c->u, g, parent), parent, g->flags, g->span);
  k->display = g->display;
  k->module = g->module;
  for (int i = 0; i < g->nparams; i++) {
    IrNode *p = ir_param(c->u, k, g->params[i]->name, g->params[i]->span);
    ir_map_put(c->m, g->params[i], p);
  }
  k->ndefaults = g->ndefaults;
  if (g->ndefaults) k->defaults = lang_alloc((size_t)g->ndefaults * sizeof *k->defaults);
  ir_map_put(c->m, g, k);
  return k;
}

/* Does graph g (h or nested in h) run in h's frame: h, or its branches,
 * loops and joins, not a function of its own? */
static bool in_frame(const Cloner *c, const IrGraph *g) {
  for (; g && g != c->old_top; g = g->parent)
    if (g->flags & IRG_FUNCTION) return false;
  return true;
}

/* Where a copy of a node of h's frame comes from, inlined at c->at: its
 * own chain (inlined into h from further in) continued by c->at. */
static const IrInlined *rebase(Cloner *c, const IrInlined *from) {
  if (!from) return c->at;
  IrInlined *r = ir_map_get(&c->rebased, from);
  if (r) return r;
  r = lang_alloc(sizeof *r);
  r->call = from->call;
  r->callee = from->callee;
  r->outer = rebase(c, from->outer);
  ir_map_put(&c->rebased, from, r);
  return r;
}

static void copy_nodes(Cloner *c, IrGraph *from, IrGraph *to) {
  bool frame = c->at && in_frame(c, from);
  for (int i = 0; i < from->nnodes; i++) {
    IrNode *x = from->nodes[i];
    IrNode *small[8];
    IrNode **in = x->nin <= 8 ? small : lang_alloc((size_t)x->nin * sizeof *in);
    for (int j = 0; j < x->nin; j++) in[j] = map_input(c, x->in[j]);
    IrNode *y = ir_apply(c->u, to, x->nin, in, x->span);
    y->name = x->name;
    y->inlined = frame ? rebase(c, x->inlined) : x->inlined;
    ir_map_put(c->m, x, y);
  }
}

static void copy_rest(Cloner *c, IrGraph *from, IrGraph *to) {
  to->ret = map_input(c, from->ret);
  for (int d = 0; d < from->ndefaults; d++) to->defaults[d] = map_input(c, from->defaults[d]);
}

static void copy_set(Cloner *c) {
  for (int i = 0; i < c->n; i++) {
    IrGraph *g = c->set[i];
    IrGraph *p = g->parent == c->old_top ? c->new_top : ir_map_get(c->m, g->parent);
    shell(c, g, p ? p : g->parent);
  }
}

static void fill_set(Cloner *c) {
  for (int i = 0; i < c->n; i++) {
    IrGraph *g = c->set[i], *k = ir_map_get(c->m, g);
    copy_nodes(c, g, k);
    copy_rest(c, g, k);
  }
}

IrGraph *ir_clone_graph(IrUnit *u, IrGraph *h, IrGraph *new_parent, NodeMap *m) {
  Cloner c = {u, m, h, NULL, 0, 0, NULL, {0}, NULL, {0}};
  collect_set(&c);
  c.new_top = shell(&c, h, new_parent);
  c.new_top->module = h->module;
  copy_set(&c);
  copy_nodes(&c, h, c.new_top);
  copy_rest(&c, h, c.new_top);
  fill_set(&c);
  return c.new_top;
}

IrNode *ir_clone_body(IrUnit *u, IrGraph *h, IrGraph *into, NodeMap *m, const IrInlined *at) {
  Cloner c = {u, m, h, into, 0, 0, NULL, {0}, at, {0}};
  collect_set(&c);
  copy_set(&c);
  copy_nodes(&c, h, into);
  fill_set(&c);
  return map_input(&c, h->ret);
}
