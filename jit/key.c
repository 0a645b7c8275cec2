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
#include <stdint.h>
#include <string.h>

#include "ir/map.h"
#include "jit/key.h"
#include "lang/gc.h"

typedef struct TypeContent {
  const char *text;
  size_t len;
  uint64_t hash;
  int num;
} TypeContent;

typedef struct Kw {
  MistVM *vm;
  const IrTyped *t;
  StrBuf *out;         /* where what is written goes: main, or a type's content */
  StrBuf *main;        /* the description */
  NodeMap tnum;        /* type -> 1 + the number of its content */
  TypeContent *contents;   /* the contents met: an open-addressed table */
  int ncontents, capcontents;
  NodeMap gnum;        /* graph -> 1 + its number */
  NodeMap nnum;        /* parameter or application -> its place in its graph */
  NodeMap typed;       /* the graphs of t's unit -> 1 */
  NodeMap deep;        /* graph -> 1 when its body is written */
  IrGraph **queue;     /* graphs in the order met (numbered), */
  int nqueue, capqueue;
  IrGraph **bodies;    /* and those whose body is written, in the order they were found to be */
  int nbodies, capbodies;
  const char *why;
} Kw;

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

static bool put_builtin(Kw *k, const ObjBuiltin *b) {
  put_text(k, b->name, strlen(b->name));
  put_i64(k, b->prim);
  put_i64(k, b->op);
  put_i64(k, (int64_t)b->min_args << 32 | (uint32_t)b->max_args);
  put_i64(k, (int64_t)b->self_kinds << 1 | b->nondiff);
  return true;
}

static bool put_value(Kw *k, Value v, int depth);
static bool put_type(Kw *k, const IrType *t, int depth);

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
    if (t->graph->fv_done)
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

static uint64_t fnv(const char *p, size_t n) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211u;
  return h;
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
  uint64_t h = fnv(content.data, content.len);
  if (2 * (k->ncontents + 1) > k->capcontents) {
    int cap = k->capcontents ? 2 * k->capcontents : 256;
    TypeContent *old = k->contents, *tab = lang_alloc((size_t)cap * sizeof *tab);
    for (int i = 0; i < k->capcontents; i++)
      if (old[i].text) {
        int j = (int)(old[i].hash & (uint64_t)(cap - 1));
        while (tab[j].text) j = (j + 1) & (cap - 1);
        tab[j] = old[i];
      }
    k->contents = tab;
    k->capcontents = cap;
  }
  int j = (int)(h & (uint64_t)(k->capcontents - 1));
  while (k->contents[j].text && !(k->contents[j].hash == h && k->contents[j].len == content.len &&
                                  memcmp(k->contents[j].text, content.data, content.len) == 0))
    j = (j + 1) & (k->capcontents - 1);
  if (!k->contents[j].text) {
    k->contents[j] = (TypeContent){content.data, content.len, h, k->ncontents++};
    sb_addc(k->main, 'T');
    sb_add(k->main, (const char *)&content.len, sizeof content.len);
    sb_add(k->main, content.data, content.len);
  }
  num = k->contents[j].num;
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
  bool typed = ir_map_get(&k->typed, g) != NULL;
  put_tag(k, 'h');
  put_str(k, g->name);
  put_str(k, g->display);
  put_i64(k, g->flags);
  put_str(k, g->module ? g->module->name : NULL);
  put_i64(k, (int64_t)g->nparams << 32 | (uint32_t)g->nnodes);
  /* the lowering asks for the free variables of what it lowers: as
   * they are made from the graphs, an unmade list is made the same */
  if (typed) ir_free_vars(g);
  put_i64(k, g->fv_done ? g->nfv : -1);
  bool ok = true;
  if (g->fv_done)
    for (int i = 0; i < g->nfv && ok; i++) ok = put_node(k, g->fv[i]);
  put_i64(k, g->ndefaults);
  for (int i = 0; i < g->ndefaults && ok; i++) ok = put_node(k, g->defaults[i]);
  put_place(k, g->copy_of);
  put_place(k, g->jsource);
  if (g->fv_done && g->jorig)
    for (int i = 0; i < g->nfv && ok; i++) ok = put_node(k, g->jorig[i]);
  if (g->fv_done && g->forig)
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
    put_i64(k, (int64_t)n->kind << 32 | (uint32_t)n->nin);
    put_str(k, n->name);
    for (int j = 0; j < n->nin && ok; j++) ok = put_node(k, n->in[j]);
    ok = ok && put_type(k, ir_infer_type(t, n), 0) && put_node(k, ir_map_get(&t->origin, n));
    if (ok && ir_node_prim(n) == IR_P_GLOBAL) ok = put_global(k, n, typed);
  }
  put_tag(k, 'R');
  return ok && put_node(k, g->ret);
}

bool jit_key_describe(MistVM *vm, IrGraph *g, IrTyped *t, IrType **sig, StrBuf *out, const char **why) {
  Kw kw = {.vm = vm, .t = t, .out = out, .main = out}, *k = &kw;
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
  return ok;
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
