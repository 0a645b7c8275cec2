/* key.c: the description of a specialisation that the compile cache's
 * key hashes, made from the typed graphs before anything is lowered
 * (docs/jit.md, "The compile cache"), and the build-ids that stand for
 * the version of the code that lowers them.
 *
 * The lowering (jit/llvm/lower.c) reads the specialised graphs of t,
 * their nodes, constants and types, the graphs those reach (closures,
 * callees it specialises itself, the program's graphs that copies came
 * from, autodiff's sources), and the globals those graphs read.  So
 * that the key stands for all of it, the description walks every graph
 * reached from t in one order (each graph numbered when first met, its
 * parameters and schedule numbered in order), writing each node's
 * kind, name, inputs (a node by its graph's number and its place, a
 * constant by its content: floats by their bits, strs by text, builtins
 * by name, graphs by number), type and the program's node it copies,
 * and each global read by what it holds now.  Nothing depends on an
 * address, so the same program described in two processes is the same
 * bytes.  What cannot be described by content (a tensor constant, a
 * global module read by a graph that the lowering would specialise
 * itself) makes no description: backend.c then keys the entry by the
 * lowered module, as before.  Whether the description misses something
 * the lowering reads is checked, not trusted: under
 * MIST_JIT_CACHE_CHECK=1 (every test) a hit is lowered too and its
 * module compared with the one stored (backend.c).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ir/map.h"
#include "ir/eval.h"
#include "jit/key.h"
#include "lang/gc.h"

struct JitKey {
  MistVM *vm;
  const IrTyped *t;
  StrBuf *out;         /* where what is written goes: main, or a type's content */
  StrBuf *main;        /* the description */
  NodeMap tnum;        /* type -> 1 + the number of its content */
  ObjDict *contents;       /* a type's content met (its bytes) -> its number */
  int ncontents;
  const IrType **types;    /* content number -> the first type met with it */
  ObjBuiltin **builtins;   /* the builtins met, in order (their tables' names) */
  int nbuiltins;
  NodeMap bnum;            /* builtin -> 1 + its place there */
  Value *values;           /* the objects met as constants or globals, in order */
  int nvalues;
  NodeMap vnum;            /* such an object -> 1 + its place there */
  NodeMap gnum;        /* graph -> 1 + its number */
  NodeMap nnum;        /* parameter or application -> its place in its graph */
  NodeMap typed;       /* the graphs of t's unit -> 1 */
  NodeMap deep;        /* graph -> 1 when its body is written */
  IrGraph **queue;     /* graphs in the order met (numbered), */
  int nqueue, capqueue;
  IrGraph **bodies;    /* and those whose body is written, in the order they were found to be */
  int nbodies, capbodies;
  const char *why;
};
typedef struct JitKey Kw;

static void put(Kw *k, const void *p, size_t n) { sb_add(k->out, p, n); }
static void put_tag(Kw *k, char c) { sb_addc(k->out, c); }
static void put_i64(Kw *k, int64_t v) { put(k, &v, sizeof v); }
static void put_text(Kw *k, const char *s, size_t n) {
  put_i64(k, (int64_t)n);
  put(k, s, n);
}
static void put_str(Kw *k, const ObjStr *s) {
  if (!s) put_i64(k, -1);
  else put_text(k, s->data, s->len);
}

static bool no(Kw *k, const char *why) {
  if (!k->why) k->why = why;
  return false;
}

static void push(IrGraph ***list, int *n, int *cap, IrGraph *g) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 32;
    *list = lang_realloc(*list, (size_t)*cap * sizeof **list);
  }
  (*list)[(*n)++] = g;
}

/* A graph by its number, numbering it (and its nodes) when first met.
 * Every graph met has its head written (its name, parameters, free
 * variables, what it copies); its body (nodes and their types) only
 * when deep: a graph the lowering may lower (t's, and what they make,
 * call or read as globals, which the lowering may specialise itself).
 * A graph met only as the place of a node or as what a copy copies is
 * read by the lowering no deeper than its head. */
static void put_graph_as(Kw *k, IrGraph *g, bool deep) {
  if (!g) {
    put_i64(k, -1);
    return;
  }
  int num = ir_map_int(&k->gnum, g, -1);
  if (num < 0) {
    num = k->nqueue;
    push(&k->queue, &k->nqueue, &k->capqueue, g);
    ir_map_set_int(&k->gnum, g, num);
    for (int i = 0; i < g->nparams; i++) ir_map_set_int(&k->nnum, g->params[i], i);
    for (int i = 0; i < g->nnodes; i++) ir_map_set_int(&k->nnum, g->nodes[i], g->nparams + i);
  }
  if ((deep || ir_map_get(&k->typed, g)) && !ir_map_get(&k->deep, g)) {
    ir_map_set_int(&k->deep, g, 1);
    push(&k->bodies, &k->nbodies, &k->capbodies, g);
  }
  put_i64(k, num);
}

static void put_graph(Kw *k, IrGraph *g) { put_graph_as(k, g, true); }
static void put_place(Kw *k, IrGraph *g) { put_graph_as(k, g, false); }

static bool put_builtin(Kw *k, ObjBuiltin *b) {
  if (ir_map_int(&k->bnum, b, -1) < 0) {
    ir_map_set_int(&k->bnum, b, k->nbuiltins);
    k->builtins = lang_realloc(k->builtins, (size_t)(k->nbuiltins + 1) * sizeof *k->builtins);
    k->builtins[k->nbuiltins++] = b;
  }
  put_text(k, b->name, strlen(b->name));
  put_i64(k, b->prim);
  put_i64(k, b->op);
  put_i64(k, b->min_args);
  put_i64(k, b->max_args);
  put_i64(k, (int64_t)b->self_kinds << 1 | b->nondiff);
  return true;
}

static bool put_value(Kw *k, Value v, int depth);
static bool put_type(Kw *k, const IrType *t, int depth);

/* An object met as a constant or a global's value, which a table may
 * name by its place (the same object in the process that reads the
 * tables: its description is the same). */
static void note_value(Kw *k, Value v) {
  if (v.tag != V_OBJ || ir_map_int(&k->vnum, v.o, -1) >= 0) return;
  ir_map_set_int(&k->vnum, v.o, k->nvalues);
  k->values = lang_realloc(k->values, (size_t)(k->nvalues + 1) * sizeof *k->values);
  k->values[k->nvalues++] = v;
}

/* A type's content, its parts by their numbers (put_type). */
static bool write_type(Kw *k, const IrType *t, int depth) {
  if (depth > 64) return no(k, "a type too deep to describe");
  put_i64(k, t->kind);
  put_i64(k, (int64_t)t->or_none | (int64_t)t->or_unbound << 1 | (int64_t)t->has_val << 2);
  put_i64(k, t->n);
  put_i64(k, t->dtype);
  if (t->has_val) put_i64(k, t->ival);
  put_tag(k, t->sval ? 's' : '-');
  if (t->sval) put_str(k, t->sval);
  int n = t->n > 0 ? t->n : 0;
  switch (t->kind) {
  case IT_TENSOR:
    if (t->dims) put(k, t->dims, (size_t)n * sizeof *t->dims);
    return true;
  case IT_SLICE:
    if (t->dims && t->n == 3) put(k, t->dims, 3 * sizeof *t->dims);
    return true;
  case IT_LIST:
    if (t->n < 0) return put_type(k, t->items[0], depth + 1);
    break;
  case IT_DICT:
    for (int i = 0; i < n; i++) put_str(k, t->keys[i]);
    break;
  case IT_ENV:
    put(k, t->ekeys, (size_t)n * sizeof *t->ekeys);
    break;
  case IT_BUILTIN:
    put_builtin(k, t->builtin);
    if (t->n == 1) return put_type(k, t->items[0], depth + 1);
    return true;
  case IT_CLOSURE:
    put_graph(k, t->graph);
    put_tag(k, t->ctx ? 'c' : '-');
    /* a signature's closure type: the types of what it captured */
    ir_free_vars(t->graph);
    for (int i = 0; i < t->graph->nfv; i++)
        if (!put_type(k, ir_infer_closure_fv(t, i), depth + 1)) return false;
    return true;
  default:
    break;
  }
  if (t->items)
    for (int i = 0; i < n; i++)
      if (!put_type(k, t->items[i], depth + 1)) return false;
  return true;
}

/* The number of a type's content, written once to the description
 * when first met (its parts first); the same content has the same
 * number wherever it is and however types are shared, so the
 * description is the same in every process (and small: the graphs of
 * a program repeat a few types many times). */
static bool put_type(Kw *k, const IrType *t, int depth) {
  int num = t ? ir_map_int(&k->tnum, t, -1) : -1;
  if (!t || num >= 0) {
    put_i64(k, num);
    return true;
  }
  StrBuf *at = k->out, content;
  sb_init(&content);
  k->out = &content;
  bool ok = write_type(k, t, depth);
  k->out = at;
  if (!ok) return false;
  ObjStr *key = lang_str_new(content.data ? content.data : "", content.len);
  Value seen;
  if (!lang_dict_get(k->contents, key, &seen)) {
    seen = v_int(k->ncontents);
    lang_dict_put(k->contents, key, seen);
    k->types = lang_realloc(k->types, (size_t)(k->ncontents + 1) * sizeof *k->types);
    k->types[k->ncontents++] = t;
    sb_addc(k->main, 'T');
    sb_add(k->main, (const char *)&content.len, sizeof content.len);
    sb_add(k->main, content.data, content.len);
  }
  num = (int)seen.i;
  ir_map_set_int(&k->tnum, t, num);
  put_i64(k, num);
  return true;
}

static bool put_value(Kw *k, Value v, int depth) {
  if (depth > 64) return no(k, "a constant too deep to describe");
  put_i64(k, v.tag);
  switch (v.tag) {
  case V_BOOL: put_i64(k, v.b); return true;
  case V_INT: put_i64(k, v.i); return true;
  case V_FLOAT: put(k, &v.f, sizeof v.f); return true;   /* by its bits */
  case V_OBJ: break;
  default: return true;
  }
  put_i64(k, v.o->kind);
  switch (v.o->kind) {
  case O_STR: put_str(k, AS_STR(v)); return true;
  case O_TUPLE: {
    ObjSeq *s = AS_SEQ(v);
    put_i64(k, (int64_t)s->len);
    for (size_t i = 0; i < s->len; i++)
      if (!put_value(k, s->items[i], depth + 1)) return false;
    return true;
  }
  case O_BUILTIN: return put_builtin(k, AS_BUILTIN(v));
  case O_GRAPH: put_graph(k, AS_GRAPH(v)->graph); return true;
  case O_SLICE: {
    ObjSlice *s = AS_SLICE(v);
    return put_value(k, s->start, depth + 1) && put_value(k, s->stop, depth + 1) && put_value(k, s->step, depth + 1);
  }
  case O_ELLIPSIS: return true;
  case O_FUNC: {
    ObjFunc *f = AS_FUNC(v);
    put_graph(k, f->graph);
    put_i64(k, f->nenv);
    for (int i = 0; i < f->nenv; i++)
      if (!put_value(k, f->env[i], depth + 1)) return false;
    return true;
  }
  default: return no(k, lang_str_fmt("a constant %s", lang_type_name(v))->data);
  }
}

/* A node used as an input (or named as a free variable, an origin): a
 * constant by its content and type, any other by its graph and place. */
static bool put_node(Kw *k, IrNode *n) {
  if (!n) {
    put_tag(k, 'n');
    return true;
  }
  if (n->kind == IR_CONST) {
    put_tag(k, 'c');
    note_value(k, n->value);
    return put_value(k, n->value, 0) && put_type(k, ir_infer_type(k->t, n), 0);
  }
  if (!n->graph) return no(k, "a node of no graph");
  put_tag(k, 'r');
  put_place(k, n->graph);
  int at = ir_map_int(&k->nnum, n, -1);
  if (at < 0) return no(k, "a node out of its graph's schedule");
  put_i64(k, at);
  return true;
}

/* What global(name) at n reads now, as the lowering finds it
 * (emit_global): a function by its graph, a builtin by name, any other
 * value by its kind (the code then works on it through its type). */
static bool put_global(Kw *k, IrNode *n, bool typed) {
  if (n->nin < 2 || n->in[1]->kind != IR_CONST || !v_is_obj(n->in[1]->value, O_STR)) return true;
  ObjStr *name = AS_STR(n->in[1]->value);
  ObjModule *m = n->graph->module;
  Value v = v_unbound(), slot;
  if (m && m->names && lang_dict_get(m->names, name, &slot)) v = m->slots[slot.i];
  if (v.tag == V_UNBOUND && k->vm->builtins) lang_dict_get(k->vm->builtins, name, &v);
  put_tag(k, 'G');
  put_i64(k, v.tag);
  if (v.tag != V_OBJ) return true;
  note_value(k, v);
  put_i64(k, v.o->kind);
  if (v_is_obj(v, O_BUILTIN)) return put_builtin(k, AS_BUILTIN(v));
  if (v_is_obj(v, O_FUNC)) {
    put_i64(k, AS_FUNC(v)->nenv == 0);
    put_graph(k, AS_FUNC(v)->graph);
    return true;
  }
  /* what a graph the lowering specialises itself makes of a module's
   * attributes is not in any type written here */
  if (v_is_obj(v, O_MODULE) && !typed) return no(k, "a module read by a graph not yet specialised");
  return true;
}

static bool put_graph_head(Kw *k, IrGraph *g) {
  put_tag(k, 'h');
  put_str(k, g->name);
  put_str(k, g->display);
  put_i64(k, g->flags);
  put_str(k, g->module ? g->module->name : NULL);
  put_i64(k, g->nparams);
  put_i64(k, g->nnodes);
  /* the free variables, made now if they were not: whether they were
   * depends on what the process did before (the lowering makes them) */
  ir_free_vars(g);
  put_i64(k, g->nfv);
  bool ok = true;
  for (int i = 0; i < g->nfv && ok; i++) ok = put_node(k, g->fv[i]);
  put_i64(k, g->ndefaults);
  for (int i = 0; i < g->ndefaults && ok; i++) ok = put_node(k, g->defaults[i]);
  put_place(k, g->copy_of);
  put_place(k, g->jsource);
  if (g->jorig)
    for (int i = 0; i < g->nfv && ok; i++) ok = put_node(k, g->jorig[i]);
  if (g->forig)
    for (int i = 0; i < g->nfv && ok; i++) {
      ok = put_node(k, g->forig[i]);
      put_i64(k, g->ftan ? g->ftan[i] : -1);
    }
  return ok;
}

static bool put_graph_body(Kw *k, IrGraph *g) {
  const IrTyped *t = k->t;
  bool typed = ir_map_get(&k->typed, g) != NULL, ok = true;
  put_tag(k, 'g');
  put_i64(k, ir_map_int(&k->gnum, g, -1));
  for (int i = 0; i < g->nparams && ok; i++) {
    IrNode *p = g->params[i];
    put_str(k, p->name);
    ok = put_type(k, ir_infer_type(t, p), 0) && put_node(k, ir_map_get(&t->origin, p));
  }
  for (int i = 0; i < g->nnodes && ok; i++) {
    IrNode *n = g->nodes[i];
    put_tag(k, 'a');
    put_i64(k, n->kind);
    put_i64(k, n->nin);
    put_str(k, n->name);
    for (int j = 0; j < n->nin && ok; j++) ok = put_node(k, n->in[j]);
    ok = ok && put_type(k, ir_infer_type(t, n), 0) && put_node(k, ir_map_get(&t->origin, n));
    if (ok && ir_node_prim(n) == IR_P_GLOBAL) ok = put_global(k, n, typed);
  }
  put_tag(k, 'R');
  return ok && put_node(k, g->ret);
}

JitKey *jit_key_describe(MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, StrBuf *out, const char **why) {
  Kw *k = lang_alloc(sizeof *k);
  *k = (Kw){.vm = vm, .t = t, .out = out, .main = out, .contents = lang_dict_new()};
  for (int i = 0; i < t->unit->ngraphs; i++) ir_map_set_int(&k->typed, t->unit->graphs[i], 1);
  ir_free_vars(g);
  put_graph(k, t->graph);
  put_place(k, g);
  bool ok = put_type(k, t->ret, 0);
  put_i64(k, g->nparams + g->nfv);
  for (int i = 0; i < g->nparams + g->nfv && ok; i++) ok = put_type(k, sig[i], 0);
  /* heads, then bodies, each of which may meet more graphs */
  for (int h = 0, b = 0; ok && (h < k->nqueue || b < k->nbodies);) {
    if (h < k->nqueue) ok = put_graph_head(k, k->queue[h++]);
    else ok = put_graph_body(k, k->bodies[b++]);
  }
  if (!ok) *why = k->why ? k->why : "the graphs cannot be described";
  return ok ? k : NULL;
}

/* ---- the tables, stored with the object ---- */

/* The tables a lowering built (the sites, constants and guards its code
 * reads, jit/backend.h) are stored with the object, in the terms of the
 * description, so that a hit rebuilds them without lowering: a graph
 * by its number, a node by its graph and place, a type by its content's
 * number, a builtin by its place among those met, a str by its text, a
 * closure or graph constant by its graph, a guard by the module of a
 * graph and a name (what it assumed is what the global holds now, which
 * the description has written).  Anything else, or anything not in the
 * description (a node or type of a specialisation the lowering made
 * itself), and the tables are not stored: a hit then lowers. */

typedef struct Rd {
  const char *p, *end;
  bool ok;
} Rd;

static int64_t get_i64(Rd *r) {
  int64_t v = 0;
  if (r->end - r->p < (ptrdiff_t)sizeof v) {
    r->ok = false;
    return -1;
  }
  memcpy(&v, r->p, sizeof v);
  r->p += sizeof v;
  return v;
}

static const char *get_text(Rd *r, size_t *n) {
  int64_t len = get_i64(r);
  if (!r->ok || len < 0 || r->end - r->p < len) {
    r->ok = false;
    return NULL;
  }
  const char *s = r->p;
  r->p += len;
  *n = (size_t)len;
  return s;
}

static int graph_num(const Kw *k, IrGraph *g) { return g ? ir_map_int(&k->gnum, g, -1) : -1; }

static IrGraph *graph_at(const Kw *k, Rd *r) {
  int64_t i = get_i64(r);
  if (i < 0 || i >= k->nqueue) r->ok = false;
  return r->ok ? k->queue[i] : NULL;
}

static bool save_site(Kw *k, const JitSite *s) {
  IrNode *n = s->node;
  if (!n) put_tag(k, 'n');
  else if (n->kind == IR_CONST && v_is_obj(n->value, O_GRAPH) && graph_num(k, AS_GRAPH(n->value)->graph) >= 0) {
    /* a graph constant the lowering made, to make closures of it: its
     * span is where errors and tracebacks point */
    put_tag(k, 'k');
    put_i64(k, graph_num(k, AS_GRAPH(n->value)->graph));
    /* its span as that of a node of its frame (the node it was made
     * for): the description has no spans, so two functions alike but
     * for where they are share an entry */
    int at = -1;
    IrGraph *f = s->frame;
    for (int i = 0; f && at < 0 && i < f->nparams + f->nnodes; i++) {
      Span o = (i < f->nparams ? f->params[i] : f->nodes[i - f->nparams])->span;
      if (o.file == n->span.file && o.line == n->span.line && o.col == n->span.col && o.len == n->span.len) at = i;
    }
    if (at < 0) return false;
    put_i64(k, at);
  } else {
    int g = graph_num(k, n->graph), at = ir_map_int(&k->nnum, n, -1);
    if (g < 0 || at < 0) return false;
    put_tag(k, 'r');
    put_i64(k, g);
    put_i64(k, at);
  }
  int frame = graph_num(k, s->frame), type = s->type ? ir_map_int(&k->tnum, s->type, -1) : -1;
  if ((s->frame && frame < 0) || (s->type && type < 0)) return false;
  put_i64(k, frame);
  put_i64(k, type);
  return true;
}

static bool load_site(Kw *k, Rd *r, JitSite *s) {
  char tag = r->p < r->end ? *r->p++ : (r->ok = false, 0);
  s->node = NULL;
  if (tag == 'k') {
    IrGraph *g = graph_at(k, r);
    int64_t at = get_i64(r);
    int64_t frame = -1;   /* its frame's number, which follows (read below) */
    if (r->end - r->p >= (ptrdiff_t)sizeof frame) memcpy(&frame, r->p, sizeof frame);
    IrGraph *f = r->ok && frame >= 0 && frame < k->nqueue ? k->queue[frame] : NULL;
    if (!f || at < 0 || at >= f->nparams + f->nnodes) return r->ok = false;
    IrNode *like = at < f->nparams ? f->params[at] : f->nodes[at - f->nparams];
    ObjGraph *o = lang_alloc(sizeof *o);
    o->obj.kind = O_GRAPH;
    o->graph = g;
    /* made by hand, not by ir_const: it takes no serial (those the
     * lowering would have taken are skipped as one count) */
    IrNode *n = lang_alloc(sizeof *n);
    n->kind = IR_CONST;
    n->value = v_obj(o);
    n->span = like->span;
    n->inlined = like->inlined;
    s->node = n;
  } else if (tag == 'r') {
    IrGraph *g = graph_at(k, r);
    int64_t at = get_i64(r);
    if (!r->ok || at < 0 || at >= g->nparams + g->nnodes) return r->ok = false;
    s->node = at < g->nparams ? g->params[at] : g->nodes[at - g->nparams];
  } else if (tag != 'n') {
    return r->ok = false;
  }
  int64_t frame = get_i64(r), type = get_i64(r);
  if (!r->ok || frame >= k->nqueue || type >= k->ncontents) return r->ok = false;
  s->frame = frame < 0 ? NULL : k->queue[frame];
  s->type = type < 0 ? NULL : (IrType *)k->types[type];
  return true;
}

static bool save_const(Kw *k, Value v) {
  if (v_is_obj(v, O_BUILTIN)) {
    int b = ir_map_int(&k->bnum, AS_BUILTIN(v), -1);
    if (b < 0) return false;
    put_tag(k, 'b');
    put_i64(k, b);
  } else if (v_is_obj(v, O_FUNC) && AS_FUNC(v)->nenv == 0 && graph_num(k, AS_FUNC(v)->graph) >= 0) {
    put_tag(k, 'c');
    put_i64(k, graph_num(k, AS_FUNC(v)->graph));
  } else if (v_is_obj(v, O_GRAPH) && graph_num(k, AS_GRAPH(v)->graph) >= 0) {
    put_tag(k, 'o');
    put_i64(k, graph_num(k, AS_GRAPH(v)->graph));
  } else if (v.tag == V_OBJ && ir_map_int(&k->vnum, v.o, -1) >= 0) {
    put_tag(k, 'v');
    put_i64(k, ir_map_int(&k->vnum, v.o, -1));
  } else if (v_is_obj(v, O_STR)) {
    put_tag(k, 's');
    put_str(k, AS_STR(v));
  } else {
    return false;
  }
  return true;
}

static bool load_const(Kw *k, Rd *r, Value *v) {
  char tag = r->p < r->end ? *r->p++ : (r->ok = false, 0);
  if (tag == 's') {
    size_t n = 0;
    const char *text = get_text(r, &n);
    if (r->ok) *v = v_obj(lang_str_new(text, n));
  } else if (tag == 'v') {
    int64_t i = get_i64(r);
    if (i < 0 || i >= k->nvalues) r->ok = false;
    if (r->ok) *v = k->values[i];
  } else if (tag == 'b') {
    int64_t b = get_i64(r);
    if (b < 0 || b >= k->nbuiltins) r->ok = false;
    if (r->ok) *v = v_obj(k->builtins[b]);
  } else if (tag == 'c' || tag == 'o') {
    IrGraph *g = graph_at(k, r);
    if (r->ok && tag == 'c') *v = v_obj(ev_closure(k->vm, g, NULL));
    if (r->ok && tag == 'o') {
      ObjGraph *o = lang_alloc(sizeof *o);
      o->obj.kind = O_GRAPH;
      o->graph = g;
      *v = v_obj(o);
    }
  } else {
    r->ok = false;
  }
  return r->ok;
}

/* A guard: the global's module as that of the first graph of the
 * description that reads its globals, and its name. */
static bool save_guard(Kw *k, const JitGuard *gd) {
  int g = -1;
  for (int i = 0; i < k->nqueue && g < 0; i++)
    if (k->queue[i]->module == gd->module) g = i;
  if (gd->module && g < 0) return false;
  put_i64(k, g);
  put_str(k, gd->name);
  return true;
}

static bool load_guard(Kw *k, Rd *r, JitGuard *gd) {
  int64_t g = get_i64(r);
  size_t n = 0;
  const char *name = get_text(r, &n);
  if (!r->ok || g >= k->nqueue) return r->ok = false;
  gd->module = g < 0 ? NULL : k->queue[g]->module;
  gd->name = lang_str_new(name, n);
  Value v = v_unbound(), slot;
  if (gd->module && gd->module->names && lang_dict_get(gd->module->names, gd->name, &slot)) v = gd->module->slots[slot.i];
  if (v.tag == V_UNBOUND && k->vm->builtins) lang_dict_get(k->vm->builtins, gd->name, &v);
  /* a def of a module not run yet (emit-llvm's case): lowered */
  if (v.tag == V_UNBOUND) return r->ok = false;
  gd->expect = v;
  return true;
}

bool jit_key_save_tables(JitKey *k, const JitSite *sites, int nsites, const Value *consts, int nconsts,
                         const JitGuard *guards, int nguards, uint64_t serials, StrBuf *out) {
  StrBuf *was = k->out;
  k->out = out;
  bool ok = true;
  put_i64(k, (int64_t)serials);
  put_i64(k, nsites);
  for (int i = 0; i < nsites && ok; i++) ok = save_site(k, &sites[i]);
  put_i64(k, nconsts);
  for (int i = 0; i < nconsts && ok; i++) ok = save_const(k, consts[i]);
  put_i64(k, nguards);
  for (int i = 0; i < nguards && ok; i++) ok = save_guard(k, &guards[i]);
  k->out = was;
  return ok;
}

bool jit_key_load_tables(JitKey *k, const void *data, size_t size, JitSite **sites, int *nsites, Value **consts,
                         int *nconsts, JitGuard **guards, int *nguards, uint64_t *serials) {
  Rd r = {data, (const char *)data + size, true};
  *serials = (uint64_t)get_i64(&r);
  int64_t n = get_i64(&r);
  if (!r.ok || n < 0 || n > (int64_t)size) return false;
  *nsites = (int)n;
  *sites = lang_alloc((size_t)(n ? n : 1) * sizeof **sites);
  for (int i = 0; i < n && r.ok; i++) load_site(k, &r, &(*sites)[i]);
  n = get_i64(&r);
  if (!r.ok || n < 0 || n > (int64_t)size) return false;
  *nconsts = (int)n;
  *consts = lang_alloc((size_t)(n ? n : 1) * sizeof **consts);
  for (int i = 0; i < n && r.ok; i++) load_const(k, &r, &(*consts)[i]);
  n = get_i64(&r);
  if (!r.ok || n < 0 || n > (int64_t)size) return false;
  *nguards = (int)n;
  *guards = lang_alloc((size_t)(n ? n : 1) * sizeof **guards);
  for (int i = 0; i < n && r.ok; i++) load_guard(k, &r, &(*guards)[i]);
  return r.ok && r.p == r.end;
}

/* ---- build-ids ---- */

typedef struct Found {
  uintptr_t addr;
  StrBuf *out;
  bool ok;
} Found;

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  Found *f = data;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    holds = ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      const char *name = p + sizeof *nh;
      const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
          (const char *)desc + nh->n_descsz <= end) {
        for (unsigned j = 0; j < nh->n_descsz; j++) sb_printf(f->out, "%02x", desc[j]);
        f->ok = true;
        return 1;
      }
      p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

bool jit_build_id(const void *addr, StrBuf *out) {
  Found f = {(uintptr_t)addr, out, false};
  dl_iterate_phdr(find_build_id, &f);
  return f.ok;
}
