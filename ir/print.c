/* print.c: the IR's text form (docs/ir.md), written for people first:
 * nodes are named after the source variables they were bound to, spans
 * are trailing comments, and graphs appear parent first.  read.c parses
 * exactly this form back.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/types.h"
#include "lang/gc.h"
#include "lang/ops.h"

typedef struct Namer {
  int n, cap;
  IrNode **nodes;
  const char **names;
  int next_num;
  IrGraph **graphs;   /* the graphs being printed */
  int ngraphs;
  /* typed printing (ir_print_unit_typed): each node's type, or NULL */
  IrType *(*type_of)(void *ud, const IrNode *n);
  void *ud;
} Namer;

static const char *lookup_name(Namer *nm, IrNode *x) {
  for (int i = 0; i < nm->n; i++)
    if (nm->nodes[i] == x) return nm->names[i];
  return NULL;
}

static void add_name(Namer *nm, IrNode *x, const char *name) {
  if (nm->n == nm->cap) {
    nm->cap = nm->cap ? 2 * nm->cap : 32;
    nm->nodes = lang_realloc(nm->nodes, nm->cap * sizeof *nm->nodes);
    nm->names = lang_realloc(nm->names, nm->cap * sizeof *nm->names);
  }
  nm->nodes[nm->n] = x;
  nm->names[nm->n] = name;
  nm->n++;
}

static bool name_taken(Namer *nm, const char *name) {
  for (int i = 0; i < nm->n; i++)
    if (strcmp(nm->names[i], name) == 0) return true;
  return false;
}

/* Count how many nodes carry each source name, so a name used once
 * prints bare and repeated ones get .2, .3 suffixes. */
static int count_named(Namer *nm, ObjStr *name) {
  int k = 0;
  for (int gi = 0; gi < nm->ngraphs; gi++) {
    IrGraph *g = nm->graphs[gi];
    for (int i = 0; i < g->nparams; i++)
      if (g->params[i]->name && lang_str_eq(g->params[i]->name, name)) k++;
    for (int i = 0; i < g->nnodes; i++)
      if (g->nodes[i]->name && lang_str_eq(g->nodes[i]->name, name)) k++;
  }
  return k;
}

static void name_node(Namer *nm, IrNode *x) {
  if (lookup_name(nm, x)) return;
  StrBuf sb;
  sb_init(&sb);
  if (x->name && count_named(nm, x->name) == 1 && !name_taken(nm, x->name->data)) {
    sb_adds(&sb, x->name->data);
  } else if (x->name) {
    for (int k = 2;; k++) {
      sb.len = 0;
      sb_printf(&sb, "%s.%d", x->name->data, k);
      if (!name_taken(nm, sb.data)) break;
    }
  } else {
    do {
      sb.len = 0;
      sb_printf(&sb, "%d", ++nm->next_num);
    } while (name_taken(nm, sb.data));
  }
  add_name(nm, x, sb.data);
}

/* A str as a double-quoted literal; in an f-string's text (fstr) the
 * braces are doubled.  The IR text and the Mist source printout share it. */
void ir_str_literal(StrBuf *out, const char *s, size_t len, bool fstr) {
  lang_quote(out, s, len, '"', fstr ? LANG_QUOTE_BRACES : 0);
}

static void print_const(StrBuf *out, Value v) {
  switch (v.tag) {
  case V_NONE: sb_adds(out, "None"); return;
  case V_BOOL: sb_adds(out, v.b ? "True" : "False"); return;
  case V_INT: sb_printf(out, "%lld", (long long)v.i); return;
  case V_FLOAT: lang_float_repr(v.f, out); return;
  case V_UNBOUND: sb_adds(out, "Unbound"); return;
  case V_OBJ: break;
  }
  switch (v.o->kind) {
  case O_STR: ir_str_literal(out, AS_STR(v)->data, AS_STR(v)->len, false); return;
  case O_GRAPH: sb_printf(out, "@%s", AS_GRAPH(v)->graph->name->data); return;
  case O_BUILTIN: {
    ObjBuiltin *b = AS_BUILTIN(v);
    if (b->prim >= 0) sb_printf(out, "prim.%s", ir_prims[b->prim].name);
    else sb_printf(out, "$%s", b->name);
    return;
  }
  case O_TUPLE: {
    ObjSeq *t = AS_SEQ(v);
    sb_addc(out, '(');
    for (size_t i = 0; i < t->len; i++) {
      if (i) sb_adds(out, ", ");
      print_const(out, t->items[i]);
    }
    if (t->len == 1) sb_addc(out, ',');
    sb_addc(out, ')');
    return;
  }
  case O_FUNC: sb_printf(out, "<function %s>", ir_graph_name(AS_FUNC(v)->graph)); return;
  case O_ELLIPSIS: sb_adds(out, "Ellipsis"); return;
  default:
    sb_printf(out, "<%s>", lang_type_name(v));
  }
}

static void print_ref(Namer *nm, StrBuf *out, IrNode *x) {
  if (x->kind == IR_CONST) {
    print_const(out, x->value);
    return;
  }
  name_node(nm, x);
  sb_printf(out, "%%%s", lookup_name(nm, x));
}

static void print_span(StrBuf *out, Span s) {
  if (s.line <= 0) return;
  sb_printf(out, "  # %d:%d", s.line, s.col);
  if (s.len > 1) sb_printf(out, "+%d", s.len);
}

static bool printed(Namer *nm, IrGraph *g) {
  for (int i = 0; i < nm->ngraphs; i++)
    if (nm->graphs[i] == g) return true;
  return false;
}

static const char *flag_names[] = {"function", "module", "branch", "loop", "join", "body"};

static bool printed(Namer *nm, IrGraph *g);

/* A closure's graph in a type: its name when it or a graph of that name
 * is printed too (so the printout reads back), else NULL (the type
 * prints as any). */
static const char *printed_name(void *ud, IrGraph *g) {
  Namer *nm = ud;
  if (printed(nm, g)) return g->name->data;
  /* a graph that a printed copy was made from, under the same name */
  for (int i = 0; i < nm->ngraphs; i++)
    if (lang_str_eq(nm->graphs[i]->name, g->name)) return g->name->data;
  return NULL;
}

/* " : TYPE" after a node, in a typed printout */
static void print_type(Namer *nm, StrBuf *out, const IrNode *x, const char *sep) {
  if (!nm->type_of) return;
  IrType *t = nm->type_of(nm->ud, x);
  sb_adds(out, sep);
  ir_type_print(t ? t : &ir_t_any, out, printed_name, nm);
}

static void print_one(Namer *nm, IrGraph *g, StrBuf *out) {
  sb_printf(out, "graph @%s(", g->name->data);
  for (int i = 0; i < g->nparams; i++) {
    if (i) sb_adds(out, ", ");
    print_ref(nm, out, g->params[i]);
    print_type(nm, out, g->params[i], ": ");
    int d = i - (g->nparams - g->ndefaults);
    if (d >= 0) {
      sb_addc(out, '=');
      print_ref(nm, out, g->defaults[d]);
    }
  }
  sb_addc(out, ')');
  /* the parent only when it is printed too, so a printout of one
   * function (ir_print_graph) reads back: its module's graph is not in it */
  if (g->parent && printed(nm, g->parent)) sb_printf(out, " in @%s", g->parent->name->data);
  bool first = true;
  for (int i = 0; i < 6; i++) {
    if (!(g->flags & (1u << i))) continue;
    sb_adds(out, first ? " : " : ", ");
    sb_adds(out, flag_names[i]);
    first = false;
  }
  sb_adds(out, " {");
  print_span(out, g->span);
  sb_addc(out, '\n');
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *x = g->nodes[i];
    sb_adds(out, "  ");
    print_ref(nm, out, x);
    sb_adds(out, " = ");
    IrNode *f = x->in[0];
    if (f->kind == IR_CONST && v_is_obj(f->value, O_BUILTIN) && AS_BUILTIN(f->value)->prim >= 0)
      sb_adds(out, ir_prims[AS_BUILTIN(f->value)->prim].name);
    else
      print_ref(nm, out, f);
    sb_addc(out, '(');
    for (int j = 1; j < x->nin; j++) {
      if (j > 1) sb_adds(out, ", ");
      print_ref(nm, out, x->in[j]);
    }
    sb_addc(out, ')');
    print_type(nm, out, x, " : ");
    print_span(out, x->span);
    sb_addc(out, '\n');
  }
  sb_adds(out, "  return ");
  if (g->ret) print_ref(nm, out, g->ret);
  else sb_adds(out, "None");
  if (g->ret) print_type(nm, out, g->ret, " : ");
  sb_adds(out, "\n}\n");
}

static void name_all(Namer *nm) {
  /* params and nodes in print order, so numbering reads top-down */
  for (int gi = 0; gi < nm->ngraphs; gi++) {
    IrGraph *g = nm->graphs[gi];
    for (int i = 0; i < g->nparams; i++) name_node(nm, g->params[i]);
    for (int i = 0; i < g->nnodes; i++) name_node(nm, g->nodes[i]);
  }
}

static void print_set(MistVM *vm, IrGraph **graphs, int n, StrBuf *out,
                      IrType *(*type_of)(void *ud, const IrNode *n), void *ud) {
  Namer nm = {0};
  nm.graphs = graphs;
  nm.ngraphs = n;
  nm.type_of = type_of;
  nm.ud = ud;
  name_all(&nm);
  if (n > 0 && graphs[0]->span.file >= 0 && graphs[0]->span.file < vm->nfiles)
    sb_printf(out, "# file %s\n", vm->files[graphs[0]->span.file].path->data);
  for (int i = 0; i < n; i++) {
    if (i) sb_addc(out, '\n');
    print_one(&nm, graphs[i], out);
  }
}

/* Whether a graph that g's printout refers to by constant is printed
 * with it: the graphs nested in root (wherever the reference is: a
 * nested def may be called only from a loop body), synthetic graphs
 * (branches, loops, joins), and a lambda given as a default value. */
static bool belongs(IrGraph *root, IrGraph *h) {
  return h && h->parent && (ir_is_ancestor(root, h) || !(h->flags & IRG_FUNCTION));
}

/* root, then the graphs that belong to its printout (found from g). */
static void collect(IrGraph *root, IrGraph *g, IrGraph ***list, int *n, int *cap) {
  for (int i = 0; i < *n; i++)
    if ((*list)[i] == g) return;
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    *list = lang_realloc(*list, *cap * sizeof **list);
  }
  (*list)[(*n)++] = g;
  for (int i = 0; i < g->nnodes; i++)
    for (int j = 0; j < g->nodes[i]->nin; j++) {
      IrGraph *h = ir_node_graph(g->nodes[i]->in[j]);
      if (belongs(root, h)) collect(root, h, list, n, cap);
    }
  if (g->ret && belongs(root, ir_node_graph(g->ret)))
    collect(root, ir_node_graph(g->ret), list, n, cap);
  for (int d = 0; d < g->ndefaults; d++) {
    IrGraph *h = g->defaults[d] ? ir_node_graph(g->defaults[d]) : NULL;
    if (h && h->parent && ir_is_ancestor(h->parent, g)) collect(root, h, list, n, cap);
  }
}

static int by_id(const void *a, const void *b) {
  const IrGraph *x = *(IrGraph *const *)a, *y = *(IrGraph *const *)b;
  return (x->id > y->id) - (x->id < y->id);
}

void ir_print_graph(MistVM *vm, IrGraph *g, StrBuf *out) {
  IrGraph **list = NULL;
  int n = 0, cap = 0;
  collect(g, g, &list, &n, &cap);
  if (n > 1) qsort(list + 1, n - 1, sizeof *list, by_id);
  print_set(vm, list, n, out, NULL, NULL);
}

void ir_print_unit(MistVM *vm, IrUnit *u, StrBuf *out) {
  print_set(vm, u->graphs, u->ngraphs, out, NULL, NULL);
}

void ir_print_unit_typed(MistVM *vm, IrUnit *u, StrBuf *out,
                         IrType *(*type_of)(void *ud, const IrNode *n), void *ud) {
  print_set(vm, u->graphs, u->ngraphs, out, type_of, ud);
}
