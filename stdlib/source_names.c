/* source_names.c: the identifiers of a printout of IR as Mist source
 * (source.c has the overview).
 *
 * Every node gets one identifier, unique in the whole printout (its
 * source variable's name, `acc_2` for a repeat, `t1`, `t2`... for
 * nameless nodes), so a name never means two things; the only exception
 * is a parameter of a def, which keeps its source name where that is
 * safe, so keyword calls still work.
 *
 * First every name the printout reads but does not bind is reserved
 * (keywords, globals, builtins, the names a spelling calls, defs
 * printed elsewhere), with the graphs that read it; then the root, the
 * parameters of defs, the defs and the other nodes that need a name are
 * named in turn.  A derived printout's top-level defs also keep clear
 * of the program's globals, since it is meant to be pasted after the
 * program.  Builtins are printed by the name they are bound to, which
 * for a primitive's builtin may be a hidden one (`_gadd`). */
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "stdlib/source_int.h"
#include "lang/gc.h"
#include "lang/ops.h"

/* ---- the names in use ---- */

static size_t str_hash(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static Name *find_name(const Taken *t, const char *text) {
  if (!t->cap) return NULL;
  for (size_t i = str_hash(text) & (t->cap - 1);; i = (i + 1) & (t->cap - 1))
    if (!t->slots[i] || strcmp(t->slots[i]->text, text) == 0) return t->slots[i];
}

static bool is_taken(const Taken *t, const char *text) { return find_name(t, text) != NULL; }

static void slot_in(Taken *t, Name *nm) {
  size_t i = str_hash(nm->text) & (t->cap - 1);
  while (t->slots[i]) i = (i + 1) & (t->cap - 1);
  t->slots[i] = nm;
  t->n++;
}

/* The entry of text, made if new. */
static Name *name_entry(Taken *t, const char *text) {
  Name *nm = find_name(t, text);
  if (nm) return nm;
  if (2 * (t->n + 1) > t->cap) {
    Taken big = {0};
    big.cap = t->cap ? 2 * t->cap : 128;
    big.slots = lang_alloc(big.cap * sizeof *big.slots);
    for (size_t i = 0; i < t->cap; i++)
      if (t->slots[i]) slot_in(&big, t->slots[i]);
    *t = big;
  }
  nm = lang_alloc(sizeof *nm);
  nm->text = text;
  slot_in(t, nm);
  return nm;
}

/* text names node owner (NULL: a name nothing may share, such as a def's). */
static void take(Taken *t, const char *text, IrNode *owner) {
  Name *nm = name_entry(t, text);
  if (!owner) {
    nm->fixed = true;
    return;
  }
  nm->owners = lang_realloc(nm->owners, (nm->nowners + 1) * sizeof *nm->owners);
  nm->owners[nm->nowners++] = owner;
}

static const char *const keywords[] = {
  "def", "lambda", "return", "if", "elif", "else", "while", "for", "in", "is", "break",
  "continue", "and", "or", "not", "True", "False", "None", "import", "as", "pass", "assert",
  /* reserved by the lexer, or Python's, kept out so a printout stays Python too */
  "class", "del", "global", "nonlocal", "try", "except", "finally", "raise", "with", "yield",
  "async", "await", "from",
};

static bool is_keyword(const char *s) {
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (strcmp(keywords[i], s) == 0) return true;
  return false;
}

bool src_is_ident(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || (unsigned char)*p >= 0x80))
      return false;
  return !is_keyword(s);
}

/* raw as an identifier: other characters become '_', a leading digit
 * or a keyword gets '_' added. */
const char *src_sanitize(const char *raw) {
  StrBuf sb;
  sb_init(&sb);
  if (*raw >= '0' && *raw <= '9') sb_addc(&sb, '_');
  for (const char *p = raw; *p; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    sb_addc(&sb, ok ? c : '_');
  }
  if (sb.len == 0) sb_addc(&sb, '_');
  if (is_keyword(sb.data)) sb_addc(&sb, '_');
  return sb.data;
}

/* ---- builtins by name ---- */

/* The name under which v is a builtin (`_ad_kid`), or NULL. */
const char *src_value_name(Src *s, Value v) {
  if (v.tag != V_OBJ) return NULL;
  int i = ir_map_int(&s->named, v.o, -1);
  return i < 0 ? NULL : s->bnames[i];
}

/* The builtins by object, for value_name. */
void src_name_builtins(Src *s) {
  ObjDict *d = s->vm->builtins;
  s->bnames = lang_alloc((d->len ? d->len : 1) * sizeof *s->bnames);
  for (size_t i = 0; i < d->len; i++) {
    Value v = d->entries[i].value;
    if (v.tag != V_OBJ || !d->entries[i].key || ir_map_int(&s->named, v.o, -1) >= 0) continue;
    s->bnames[i] = d->entries[i].key->data;
    ir_map_set_int(&s->named, v.o, (int)i);
  }
}

/* ---- naming the printout ---- */

bool src_needs_name(Src *s, Info *in) {
  IrNode *n = in->node;
  if (in->outer || in->dead || in->as) return false;
  if (n->kind == IR_PARAM) return true;
  if (n->kind != IR_APPLY) return false;
  if (in->role == R_TARGET || in->value_entry) return true;
  if (in->role != R_STMT || in->tail) return false;
  if (in->targets) return in->need_tuple;
  if (src_is_prim(n, IR_P_SET_GLOBAL)) return false;
  if (src_is_prim(n, IR_P_ASSERT_FAIL)) return in->nuses > 0;
  if (src_is_prim(n, IR_P_IMPORT) || src_is_prim(n, IR_P_SETITEM)) return true;
  return !(in->nuses == 0 && src_call_like(n));
}

const char *src_fresh(Src *s) {
  for (;;) {
    const char *name = lang_str_fmt("t%d", ++s->next_temp)->data;
    if (!is_taken(&s->taken, name)) {
      take(&s->taken, name, NULL);
      return name;
    }
  }
}

/* base, or base_2, base_3... whichever is free first. */
static const char *unique(Src *s, const char *base, IrNode *owner) {
  const char *name = base;
  for (int k = 2; is_taken(&s->taken, name); k++) name = lang_str_fmt("%s_%d", base, k)->data;
  take(&s->taken, name, owner);
  return name;
}

/* Whether node x is read in graph g or in a graph nested in it. */
static bool read_within(Src *s, IrNode *x, IrGraph *g) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *d = s->gs[gx].g;
    if (!ir_is_ancestor(g, d)) continue;
    for (int i = 0; i < d->nnodes; i++)
      for (int j = 0; j < d->nodes[i]->nin; j++)
        if (src_resolve(d->nodes[i]->in[j]) == x) return true;
    if (d->ret && src_resolve(d->ret) == x) return true;
    if (d != g)
      for (int k = 0; k < d->ndefaults; k++)
        if (src_resolve(d->defaults[k]) == x) return true;
  }
  return false;
}

/* A def's parameter keeps its source name, so keyword calls work, also
 * when another node has it: the def's own scope then hides that node,
 * which is fine when nothing in the def reads it. */
static bool can_share(Src *s, const char *name, IrGraph *g) {
  Name *nm = find_name(&s->taken, name);
  if (nm->fixed) return false;
  for (int k = 0; k < nm->nowners; k++)
    if (read_within(s, nm->owners[k], g)) return false;
  for (int k = 0; k < nm->nreaders; k++)
    if (ir_is_ancestor(g, nm->readers[k])) return false;
  return true;
}

/* A def's name: a function's own (`inner`; `lambda3` nested, else the
 * whole name, `grad_f`), a synthetic graph's last two components
 * (`fib.if1` -> `fib_if1`). */
static const char *graph_base(Src *s, IrGraph *g) {
  const char *full = g->name->data, *dot = strrchr(full, '.');
  if (g->flags & (IRG_FUNCTION | IRG_MODULE)) {
    const char *own = g->display && src_is_ident(g->display->data) ? g->display->data
                    : src_sanitize(dot && g != s->root && src_ginfo(s, g->parent) ? dot + 1 : full);
    /* a transform of a function (J.f, J.f.inner): never the function's own name */
    return g->jsource && !src_ginfo(s, g->parent) ? src_sanitize(full)
         : g->jsource ? lang_str_fmt("J_%s", own)->data : own;
  }
  const char *from = full;
  for (const char *p = full; dot && p < dot; p++)
    if (*p == '.') from = p + 1;
  return src_sanitize(from);
}

/* The name a primitive is called by: its builtin, `_gadd` (see
 * autodiff/names.c), or its plain name where it is a builtin so
 * (stop_gradient) or where there is none. */
const char *src_prim_text(Src *s, int p) {
  const char *plain = ir_prims[p].name;
  Value v = ir_prim_value(s->vm, (IrPrim)p), b;
  if (lang_dict_get(s->vm->builtins, lang_str(plain), &b) && b.tag == V_OBJ && b.o == v.o) return plain;
  const char *nm = src_value_name(s, v);
  return nm ? nm : plain;
}

/* A builtin by the name it is bound to. */
const char *src_builtin_text(Src *s, ObjBuiltin *b) {
  if (b->prim >= 0) return src_prim_text(s, b->prim);
  Value v = v_obj(b), old;
  if (lang_dict_get(s->vm->builtins, lang_str(b->name), &old) && old.tag == V_OBJ && old.o == v.o) return b->name;
  const char *nm = src_value_name(s, v);
  return nm ? nm : b->name;
}

/* Whether module m's globals are read from outside the root's module:
 * then as attributes of m, imported under module_alias. */
bool src_foreign(Src *s, ObjModule *m) {
  /* (a builtin differentiated as a graph belongs to no module: every
   * module is foreign to it) */
  return m && m != s->home && m->name && src_is_ident(m->name->data);
}

const char *src_module_alias(Src *s, ObjModule *m) {
  const char *alias = lang_str_fmt("_%s", m->name->data)->data;
  for (int i = 0; i < s->nmods; i++)
    if (s->mods[i] == m) return alias;
  s->mods = lang_realloc(s->mods, (s->nmods + 1) * sizeof *s->mods);
  s->mods[s->nmods++] = m;
  return alias;
}

/* name is read in graph where (NULL: outside the printout) as a name
 * of the program's: a global, a builtin, a def printed elsewhere. */
static void reserve(Src *s, const char *name, IrGraph *where) {
  Name *nm = name_entry(&s->taken, name);
  if (!where) return;
  nm->readers = lang_realloc(nm->readers, (nm->nreaders + 1) * sizeof *nm->readers);
  nm->readers[nm->nreaders++] = where;
}

static void reserve_const(Src *s, Value v, IrGraph *where) {
  if (v.tag == V_FLOAT && !isfinite(v.f)) reserve(s, "float", where);
  if (v.tag != V_OBJ) return;
  switch (v.o->kind) {
  case O_BUILTIN: reserve(s, src_builtin_text(s, AS_BUILTIN(v)), where); break;
  case O_GRAPH:
    if (!src_ginfo(s, AS_GRAPH(v)->graph)) reserve(s, src_sanitize(AS_GRAPH(v)->graph->name->data), where);
    break;
  case O_FUNC: {
    IrGraph *h = AS_FUNC(v)->graph;
    if (src_value_name(s, v)) reserve(s, src_value_name(s, v), where);
    else if (src_top_def(h) && src_foreign(s, h->module)) reserve(s, src_module_alias(s, h->module), where);
    else if (!src_ginfo(s, h)) reserve(s, src_sanitize(h->name->data), where);
    break;
  }
  case O_MODULE: reserve(s, src_sanitize(AS_MODULE(v)->name->data), where); break;
  case O_RANGE: reserve(s, "range", where); break;
  case O_TUPLE:
  case O_LIST:
    for (size_t i = 0; i < AS_SEQ(v)->len; i++) reserve_const(s, AS_SEQ(v)->items[i], where);
    break;
  default: break;
  }
}

/* The names the printout reads but does not bind: globals, builtins
 * (also those a spelling uses, such as len), free variables of the root
 * from outside it, graphs printed elsewhere. */
static void reserve_names(Src *s) {
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) take(&s->taken, keywords[i], NULL);
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    IrNode *n = in->node;
    Known *kn = src_known(s, n);
    if (in->outer && kn && kn->subst) {
      for (int u = 0; u < in->nuses; u++) reserve_const(s, kn->v, in->uses[u].where);
      continue;
    }
    if (in->outer) {
      /* named as the comments before the printout list captured values */
      in->name = n->name && src_is_ident(n->name->data) ? n->name->data : lang_str_fmt("free_%u", n->id)->data;
      take(&s->taken, in->name, n);
      continue;
    }
    if (n->kind != IR_APPLY) continue;
    IrGraph *at = n->graph;
    if (in->role == R_KNOWN) {
      reserve_const(s, kn->v, at);
      continue;
    }
    if (in->role == R_DROP) continue;
    for (int j = 0; j < n->nin; j++)
      if (n->in[j]->kind == IR_CONST && !(j == 0 && src_prim_of(n) >= 0)) reserve_const(s, n->in[j]->value, at);
    int p = src_prim_of(n);
    if (p == IR_P_LEN) reserve(s, "len", at);
    else if (p == IR_P_TRUTH) reserve(s, "bool", at);
    else if (p == IR_P_REPR) reserve(s, "repr", at);
    else if (p == IR_P_STR) reserve(s, "str", at);
    else if (p == IR_P_ITER_SEQ) {
      reserve(s, "list", at);
      reserve(s, "type", at);
    } else if (p == IR_P_GLOBAL && n->nin > 1 && src_const_str(n->in[1]) && src_foreign(s, at->module)) {
      reserve(s, src_module_alias(s, at->module), at);
    } else if ((p == IR_P_GLOBAL || p == IR_P_SET_GLOBAL || p == IR_P_IMPORT) && n->nin > 1 &&
               src_const_str(n->in[1])) {
      reserve(s, src_sanitize(AS_STR(n->in[1]->value)->data), at);
    } else if (p >= 0 && !src_spelled(p)) {
      reserve(s, src_prim_text(s, p), at);   /* printed as a call of its name (see expr) */
    }
  }
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    for (int d = 0; d < g->ndefaults; d++)
      if (g->defaults[d] && g->defaults[d]->kind == IR_CONST)
        reserve_const(s, g->defaults[d]->value, src_ginfo(s, g->parent) ? g->parent : NULL);
    if (g->ret && g->ret->kind == IR_CONST) reserve_const(s, g->ret->value, g);
  }
}

/* Whether a derived printout's top-level def may not be called name:
 * a global of the program it is to run in has it. */
static bool program_global(Src *s, const char *name) {
  Value slot;
  if (!s->derived) return false;
  if (s->home && s->home->names && lang_dict_get(s->home->names, lang_str(name), &slot)) return true;
  return find_name(&s->globals, name) != NULL;
}

/* The globals a module's code assigns, for program_global when the
 * module has not run (`mist ir`): found from the module graphs that the
 * printed graphs, or the graphs they transform, are nested in. */
static void program_globals(Src *s) {
  NodeMap seen = {0};
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *m = s->gs[gx].g;
    while (m && !(m->flags & IRG_MODULE)) m = m->jsource ? m->jsource : m->parent;
    if (!m || m->module != s->home || ir_map_int(&seen, m, -1) >= 0) continue;
    ir_map_set_int(&seen, m, 1);
    for (int i = 0; i < m->nnodes; i++)
      if (src_is_prim(m->nodes[i], IR_P_SET_GLOBAL) && src_const_str(m->nodes[i]->in[1]))
        name_entry(&s->globals, AS_STR(m->nodes[i]->in[1]->value)->data);
  }
}

/* A top-level def's name: unique, and in a derived printout none of
 * the program's globals, which pasting it after the program would
 * replace. */
static const char *unique_top(Src *s, const char *base) {
  const char *name = base;
  for (int k = 2; is_taken(&s->taken, name) || program_global(s, name); k++)
    name = lang_str_fmt("%s_%d", base, k)->data;
  take(&s->taken, name, NULL);
  return name;
}

void src_name_all(Src *s) {
  reserve_names(s);
  if (s->derived) program_globals(s);
  /* the root keeps its name unless a free variable from outside has it
   * (grad.f reads f); a global of that name is itself, called again */
  GInfo *root = src_ginfo(s, s->root);
  const char *base = graph_base(s, s->root);
  Name *nm = find_name(&s->taken, base);
  root->name = (nm && (nm->fixed || nm->nowners)) || program_global(s, base) ? unique_top(s, base) : base;
  take(&s->taken, root->name, NULL);
  /* parameters of defs first, with their own names where possible */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *g = s->gs[gx].g;
    if (!(g->flags & IRG_FUNCTION)) continue;
    for (int i = 0; i < g->nparams; i++) {
      IrNode *p = g->params[i];
      if (!p->name || !src_is_ident(p->name->data)) continue;
      const char *nm = p->name->data;
      if (!is_taken(&s->taken, nm) || can_share(s, nm, g)) {
        take(&s->taken, nm, p);
        src_info(s, p)->name = nm;
      }
    }
  }
  /* a def printed at top level beside the root (a lambda it uses) is
   * a global of the program it is run in: its full name, to keep out
   * of the way of the program's own */
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *h = s->gs[gx].g;
    if (!s->gs[gx].name && !s->gs[gx].in_place && !s->gs[gx].trivial)
      s->gs[gx].name = src_ginfo(s, h->parent) ? unique(s, graph_base(s, h), NULL) : unique_top(s, src_sanitize(h->name->data));
  }
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < s->ninfos; k++) {
      Info *in = s->infos[k];
      if (in->name || !src_needs_name(s, in)) continue;
      IrNode *n = in->node;
      if (pass == 0 && n->name) in->name = unique(s, src_sanitize(n->name->data), n);
      else if (pass == 1) in->name = src_fresh(s);
    }
  for (int k = 0; k < s->ninfos; k++) {
    IrNode *to = s->infos[k]->as;
    while (to && src_info(s, to)->as) to = src_info(s, to)->as;
    if (to) s->infos[k]->name = src_info(s, to)->name;
  }
  for (int k = 0; k < s->ninfos; k++) {
    Info *in = s->infos[k];
    if (!in->targets || in->role != R_STMT) continue;
    int64_t cnt = in->node->in[2]->value.i;
    for (int64_t i = 0; i < cnt; i++)
      in->tnames[i] = in->targets[i] ? src_info(s, in->targets[i])->name : src_fresh(s);
  }
}
