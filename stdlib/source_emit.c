/* source_emit.c: the printer of IR graphs as Mist source (source.c has
 * the overview).  Once the analysis has given every node its role and
 * name and every graph its mode, it walks the graphs from the root and
 * writes the text: each scheduled application as one statement, a
 * primitive as the operator or call it means (expr), constants as
 * literals, the shapes folded back in place (conditionals, f-strings,
 * subscripts, unpacks, asserts), a switch ending a graph as if/elif/
 * else with its join after it, a loop as `while` with continue and
 * break, and each def just before the first statement that needs it.
 * Before the defs, a preamble lists the captured values printed by name
 * and imports the modules the printout reads.  Lines a statement needs
 * first (a constant hoisted out of an f-string) go to s->pre and are
 * written before it. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "stdlib/source_int.h"
#include "lang/gc.h"
#include "lang/ops.h"

/* ---- expressions ---- */

enum { C_FREE, C_OPERAND, C_POSTFIX };   /* where a value is written */

static void const_text(Src *s, Value v, int ctx, StrBuf *out) {
  size_t start = out->len;
  bool negative = false;
  switch (v.tag) {
  case V_NONE: sb_adds(out, "None"); return;
  case V_UNBOUND:
    s->unbound = true;
    sb_adds(out, "None");
    return;
  case V_BOOL: sb_adds(out, v.b ? "True" : "False"); return;
  case V_INT:
    sb_printf(out, "%lld", (long long)v.i);
    negative = v.i < 0;
    break;
  case V_FLOAT:
    if (isnan(v.f)) sb_adds(out, "float(\"nan\")");
    else if (isinf(v.f)) sb_adds(out, v.f > 0 ? "float(\"inf\")" : "-float(\"inf\")");
    else lang_float_repr(v.f, out);
    negative = signbit(v.f) && !isnan(v.f);
    if (isinf(v.f) && !negative) return;
    break;
  case V_OBJ:
    switch (v.o->kind) {
    case O_STR: ir_str_literal(out, AS_STR(v)->data, AS_STR(v)->len, false); return;
    case O_TUPLE:
    case O_LIST: {
      ObjSeq *t = AS_SEQ(v);
      bool tuple = v.o->kind == O_TUPLE;
      sb_addc(out, tuple ? '(' : '[');
      for (size_t i = 0; i < t->len; i++) {
        if (i) sb_adds(out, ", ");
        const_text(s, t->items[i], C_FREE, out);
      }
      if (tuple && t->len == 1) sb_addc(out, ',');
      sb_addc(out, tuple ? ')' : ']');
      return;
    }
    case O_DICT: {
      ObjDict *d = AS_DICT(v);
      sb_addc(out, '{');
      for (size_t i = 0; i < d->len; i++) {
        if (i) sb_adds(out, ", ");
        ir_str_literal(out, d->entries[i].key->data, d->entries[i].key->len, false);
        sb_adds(out, ": ");
        const_text(s, d->entries[i].value, C_FREE, out);
      }
      sb_addc(out, '}');
      return;
    }
    case O_ELLIPSIS: sb_adds(out, "..."); return;
    case O_RANGE: {
      ObjRange *r = AS_RANGE(v);
      sb_printf(out, "range(%lld, %lld, %lld)", (long long)r->start, (long long)r->stop, (long long)r->step);
      return;
    }
    case O_GRAPH: {
      GInfo *gi = src_ginfo(s, AS_GRAPH(v)->graph);
      sb_adds(out, gi && gi->name ? gi->name : src_sanitize(AS_GRAPH(v)->graph->name->data));
      return;
    }
    case O_FUNC: {
      ObjFunc *f = AS_FUNC(v);
      bool plain = (f->nenv == 0 && lang_func_ndefaults(f) == 0) || ir_map_int(&s->mat, f, -1) >= 0;
      GInfo *gi = plain ? src_ginfo(s, f->graph) : NULL;
      if (src_value_name(s, v)) sb_adds(out, src_value_name(s, v));
      else if (gi && gi->name) sb_adds(out, gi->name);
      else if (src_top_def(f->graph) && src_foreign(s, f->graph->module))
        sb_printf(out, "%s.%s", src_module_alias(s, f->graph->module), f->graph->name->data);
      else sb_adds(out, src_sanitize(f->graph->name->data));
      return;
    }
    case O_MODULE: sb_adds(out, src_sanitize(AS_MODULE(v)->name->data)); return;
    case O_BUILTIN: sb_adds(out, src_builtin_text(s, AS_BUILTIN(v))); return;
    default:
      /* a tensor or another value the parser does not make: its repr,
       * which is what a program would write to build it */
      if (!lang_repr(s->vm, v, out)) {
        out->len = start;
        sb_printf(out, "None  # error: a %s constant has no source form\n", lang_type_name(v));
      }
      return;
    }
  }
  if (ctx == C_POSTFIX || (negative && ctx == C_OPERAND)) {
    /* (-1) ** 2, (1).real */
    char *num = lang_alloc_atomic(out->len - start + 1);
    memcpy(num, out->data + start, out->len - start + 1);
    out->len = start;
    sb_printf(out, "(%s)", num);
  }
}

/* global("name") read in its graph: bare in the root's module, else an
 * attribute of the module imported under its alias. */
static void global_text(Src *s, IrNode *n, StrBuf *out) {
  const char *name = AS_STR(n->in[1]->value)->data;
  if (src_foreign(s, n->graph->module)) sb_printf(out, "%s.%s", src_module_alias(s, n->graph->module), src_sanitize(name));
  else sb_adds(out, src_sanitize(name));
}

/* An env key (a node's address as an int) as a small number, the same
 * for the same key throughout the printout. */
static bool key_text(Src *s, IrNode *x, StrBuf *out) {
  int64_t key;
  if (!src_const_int(src_resolve(x), &key)) return false;
  int i = 0;
  while (i < s->nkeys && s->keys[i] != key) i++;
  if (i == s->nkeys) {
    s->keys = lang_realloc(s->keys, (s->nkeys + 1) * sizeof *s->keys);
    s->keys[s->nkeys++] = key;
  }
  sb_printf(out, "%d", i + 1);
  return true;
}

/* x as an atom: a name or a literal. */
static void atom(Src *s, IrNode *x, int ctx, StrBuf *out);
static void expr(Src *s, IrNode *n, StrBuf *out);

static void atom(Src *s, IrNode *x, int ctx, StrBuf *out) {
  x = src_resolve(x);
  Known *k = x->kind != IR_CONST ? src_known(s, x) : NULL;
  if (x->kind == IR_CONST || (k && k->subst)) {
    const_text(s, k ? k->v : x->value, ctx, out);
    return;
  }
  Info *in = src_info(s, x);
  if (in->role == R_GLOBAL) {
    global_text(s, x, out);
  } else if (in->role == R_NEG) {
    sb_adds(out, ctx == C_FREE ? "-" : "(-");
    const_text(s, x->in[1]->value, C_OPERAND, out);
    if (ctx != C_FREE) sb_addc(out, ')');
  } else if (in->name) {
    sb_adds(out, in->name);
  } else {
    /* printed in place: only reached for shapes the roles did not expect */
    sb_addc(out, '(');
    expr(s, x, out);
    sb_addc(out, ')');
  }
}

static void args_text(Src *s, IrNode **in, int n, StrBuf *out) {
  for (int i = 0; i < n; i++) {
    if (i) sb_adds(out, ", ");
    atom(s, in[i], C_FREE, out);
  }
}

/* A line before the statement being built: name = value. */
static const char *hoist(Src *s, Value v) {
  const char *name = src_fresh(s);
  for (int i = 0; i < s->ind; i++) sb_adds(&s->pre, "    ");
  sb_printf(&s->pre, "%s = ", name);
  const_text(s, v, C_FREE, &s->pre);
  sb_addc(&s->pre, '\n');
  return name;
}

static bool simple_const(Value v) {
  return v.tag == V_INT || v.tag == V_BOOL || v.tag == V_NONE || (v.tag == V_FLOAT && isfinite(v.f));
}

/* A spec written as is after ':' in an f-string field. */
static bool plain_spec(const ObjStr *spec) {
  for (size_t i = 0; i < spec->len; i++) {
    unsigned char c = (unsigned char)spec->data[i];
    if (c < 0x20 || c == 0x7f || c == '{' || c == '}' || c == '"' || c == '\'' || c == '\\') return false;
  }
  return true;
}

/* {v} or {v:spec} of an f-string */
static void field(Src *s, IrNode *v, IrNode *spec, StrBuf *out) {
  v = src_resolve(v);
  const char *conv = "";
  if (v->kind != IR_CONST && src_info(s, v)->role == R_CONV) {
    conv = src_is_prim(v, IR_P_REPR) ? "!r" : "!s";
    v = src_resolve(v->in[1]);
  }
  sb_addc(out, '{');
  if (v->kind == IR_CONST && !simple_const(v->value)) sb_adds(out, hoist(s, v->value));
  else atom(s, v, C_OPERAND, out);
  sb_adds(out, conv);
  if (spec) {
    spec = src_resolve(spec);
    if (src_const_str(spec) && plain_spec(AS_STR(spec->value))) {
      if (AS_STR(spec->value)->len) sb_printf(out, ":%s", AS_STR(spec->value)->data);
    } else {
      sb_adds(out, ":{");
      if (spec->kind == IR_CONST) sb_adds(out, hoist(s, spec->value));
      else atom(s, spec, C_OPERAND, out);
      sb_addc(out, '}');
    }
  }
  sb_addc(out, '}');
}

/* concat_str(parts...) as one f-string */
static void fstring(Src *s, IrNode **parts, int n, StrBuf *out) {
  sb_adds(out, "f\"");
  for (int i = 0; i < n; i++) {
    IrNode *p = src_resolve(parts[i]);
    if (src_const_str(p)) {
      StrBuf lit;
      sb_init(&lit);
      ir_str_literal(&lit, AS_STR(p->value)->data, AS_STR(p->value)->len, true);
      sb_add(out, lit.data + 1, lit.len - 2);
    } else if (p->kind != IR_CONST && src_info(s, p)->role == R_FIELD) {
      field(s, p->in[1], p->in[2], out);
    } else {
      field(s, p, NULL, out);
    }
  }
  sb_addc(out, '"');
}

/* a[IDX]: a slice as a:b:c, a tuple of indices as i, j */
static void index_text(Src *s, IrNode *i, StrBuf *out) {
  i = src_resolve(i);
  Info *in = i->kind == IR_CONST ? NULL : src_info(s, i);
  if (in && in->role == R_INDEX && src_is_prim(i, IR_P_SLICE)) {
    for (int k = 1; k <= 3; k++) {
      IrNode *part = i->in[k];
      bool none = part->kind == IR_CONST && part->value.tag == V_NONE;
      if (k == 3 && none) break;
      if (k > 1) sb_addc(out, ':');
      if (!none) atom(s, part, C_FREE, out);
    }
  } else if (in && in->role == R_INDEX) {
    for (int k = 1; k < i->nin; k++) {
      if (k > 1) sb_adds(out, ", ");
      index_text(s, i->in[k], out);
    }
    if (i->nin == 2) sb_addc(out, ',');
  } else {
    atom(s, i, C_FREE, out);
  }
}

static void cond_text(Src *s, IrNode *c, StrBuf *out) {
  c = src_resolve(c);
  if (c->kind != IR_CONST && src_info(s, c)->role == R_COND) expr(s, c, out);
  else atom(s, c, C_OPERAND, out);
}

/* One side of a conditional called at once: a() or the value a branch
 * only returns. */
static void side(Src *s, IrNode *x, StrBuf *out) {
  IrGraph *h = src_const_graph(s, x);
  if (h && src_ginfo(s, h)->trivial) {
    if (h->ret) atom(s, h->ret, C_OPERAND, out);
    else sb_adds(out, "None");
    return;
  }
  atom(s, x, C_POSTFIX, out);
  sb_adds(out, "()");
}

/* switch(c, a, b)(args...) */
static void switch_call(Src *s, IrNode *call, StrBuf *out) {
  IrNode *sw = call->in[0];
  sb_addc(out, '(');
  if (call->nin == 1) {
    side(s, sw->in[2], out);
    sb_adds(out, " if ");
    cond_text(s, sw->in[1], out);
    sb_adds(out, " else ");
    side(s, sw->in[3], out);
    sb_addc(out, ')');
    return;
  }
  atom(s, sw->in[2], C_OPERAND, out);
  sb_adds(out, " if ");
  cond_text(s, sw->in[1], out);
  sb_adds(out, " else ");
  atom(s, sw->in[3], C_OPERAND, out);
  sb_adds(out, ")(");
  args_text(s, call->in + 1, call->nin - 1, out);
  sb_addc(out, ')');
}

static const char *binop(int p) {
  switch (p) {
  case IR_P_ADD: return "+";
  case IR_P_SUB: return "-";
  case IR_P_MUL: return "*";
  case IR_P_TRUEDIV: return "/";
  case IR_P_FLOORDIV: return "//";
  case IR_P_MOD: return "%";
  case IR_P_POW: return "**";
  case IR_P_MATMUL: return "@";
  case IR_P_EQ: return "==";
  case IR_P_NE: return "!=";
  case IR_P_LT: return "<";
  case IR_P_LE: return "<=";
  case IR_P_GT: return ">";
  case IR_P_GE: return ">=";
  case IR_P_IS: return "is";
  case IR_P_IS_NOT: return "is not";
  default: return NULL;
  }
}

static bool attr_name(const IrNode *x) { return src_const_str(x) && src_is_ident(AS_STR(x->value)->data); }

/* The expression an application means. */
static void expr(Src *s, IrNode *n, StrBuf *out) {
  int p = src_prim_of(n);
  IrNode **a = n->in + 1;
  int na = n->nin - 1;
  if (p < 0) {
    IrNode *f = n->in[0];
    if (f->kind != IR_CONST && src_info(s, f)->role == R_SWITCH) {
      switch_call(s, n, out);
      return;
    }
    atom(s, f, C_POSTFIX, out);
    sb_addc(out, '(');
    args_text(s, a, na, out);
    sb_addc(out, ')');
    return;
  }
  bool fixed = ir_prims[p].arity < 0 || na == ir_prims[p].arity;
  const char *op = binop(p);
  if (op && fixed) {
    atom(s, a[0], C_OPERAND, out);
    sb_printf(out, " %s ", op);
    atom(s, a[1], C_OPERAND, out);
    return;
  }
  switch (fixed ? p : -1) {
  case IR_P_NEG:
  case IR_P_POS:
  case IR_P_NOT:
    sb_adds(out, p == IR_P_NEG ? "-" : p == IR_P_POS ? "+" : "not ");
    atom(s, a[0], C_OPERAND, out);
    return;
  case IR_P_TRUTH:
  case IR_P_LEN:
  case IR_P_REPR:
  case IR_P_STR:
    sb_printf(out, "%s(", p == IR_P_TRUTH ? "bool" : ir_prims[p].name);
    atom(s, a[0], C_FREE, out);
    sb_addc(out, ')');
    return;
  case IR_P_CONTAINS:
    atom(s, a[1], C_OPERAND, out);
    sb_adds(out, " in ");
    atom(s, a[0], C_OPERAND, out);
    return;
  case IR_P_MAKE_TUPLE:
    sb_addc(out, '(');
    args_text(s, a, na, out);
    if (na == 1) sb_addc(out, ',');
    sb_addc(out, ')');
    return;
  case IR_P_MAKE_LIST:
    sb_addc(out, '[');
    args_text(s, a, na, out);
    sb_addc(out, ']');
    return;
  case IR_P_MAKE_DICT:
    if (na % 2) break;
    sb_addc(out, '{');
    for (int i = 0; i < na; i += 2) {
      if (i) sb_adds(out, ", ");
      atom(s, a[i], C_FREE, out);
      sb_adds(out, ": ");
      atom(s, a[i + 1], C_FREE, out);
    }
    sb_addc(out, '}');
    return;
  case IR_P_GETITEM:
    atom(s, a[0], C_POSTFIX, out);
    sb_addc(out, '[');
    index_text(s, a[1], out);
    sb_addc(out, ']');
    return;
  case IR_P_ITER_SEQ:
    /* a dict's keys as a list, anything else itself */
    sb_adds(out, "(list(");
    atom(s, a[0], C_FREE, out);
    sb_adds(out, ") if type(");
    atom(s, a[0], C_FREE, out);
    sb_adds(out, ") == \"dict\" else ");
    atom(s, a[0], C_OPERAND, out);
    sb_addc(out, ')');
    return;
  case IR_P_FORMAT:
    sb_adds(out, "f\"");
    field(s, a[0], a[1], out);
    sb_addc(out, '"');
    return;
  case IR_P_CONCAT_STR: fstring(s, a, na, out); return;
  case IR_P_SWITCH:
    sb_addc(out, '(');
    atom(s, a[1], C_OPERAND, out);
    sb_adds(out, " if ");
    cond_text(s, a[0], out);
    sb_adds(out, " else ");
    atom(s, a[2], C_OPERAND, out);
    sb_addc(out, ')');
    return;
  case IR_P_CALL_KW: {
    IrNode *names = src_resolve(a[1]);
    if (na < 2 || names->kind != IR_CONST || !v_is_obj(names->value, O_TUPLE)) break;
    ObjSeq *kw = AS_SEQ(names->value);
    int nk = (int)kw->len, npos = na - 2 - nk;
    bool ok = npos >= 0;
    for (int i = 0; ok && i < nk; i++)
      ok = v_is_obj(kw->items[i], O_STR) && src_is_ident(AS_STR(kw->items[i])->data);
    if (!ok) break;
    atom(s, a[0], C_POSTFIX, out);
    sb_addc(out, '(');
    args_text(s, a + 2, npos, out);
    for (int i = 0; i < nk; i++) {
      if (npos || i) sb_adds(out, ", ");
      sb_printf(out, "%s=", AS_STR(kw->items[i])->data);
      atom(s, a[2 + npos + i], C_FREE, out);
    }
    sb_addc(out, ')');
    return;
  }
  case IR_P_CALL_METHOD:
    if (na < 2 || !attr_name(a[1])) break;
    atom(s, a[0], C_POSTFIX, out);
    sb_printf(out, ".%s(", AS_STR(a[1]->value)->data);
    args_text(s, a + 2, na - 2, out);
    sb_addc(out, ')');
    return;
  case IR_P_GETATTR:
    if (!attr_name(a[1])) break;
    atom(s, a[0], C_POSTFIX, out);
    sb_printf(out, ".%s", AS_STR(a[1]->value)->data);
    return;
  case IR_P_GLOBAL:
    if (!src_const_str(a[0])) break;
    global_text(s, n, out);
    return;
  default: break;
  }
  /* no spelling of its own: a call of the primitive's builtin (`_gadd`:
   * autodiff/names.c), an env key as a small number */
  sb_printf(out, "%s(", src_prim_text(s, p));
  for (int i = 0; i < na; i++) {
    if (i) sb_adds(out, ", ");
    /* env keys read as small numbers, the same on every run */
    bool key = (i == 1 && fixed && (p == IR_P_ENV_GET || p == IR_P_ENV_SET)) || (p == IR_P_MAKE_ENV && i % 2 == 0);
    if (!(key && key_text(s, a[i], out)))
      atom(s, a[i], C_FREE, out);
  }
  sb_addc(out, ')');
}

/* Whether expr or emit_stmt writes primitive p other than as a call of
 * its own name. */
bool src_spelled(int p) {
  return binop(p) || p == IR_P_NEG || p == IR_P_POS || p == IR_P_NOT || p == IR_P_TRUTH ||
         p == IR_P_CONTAINS || p == IR_P_MAKE_TUPLE || p == IR_P_MAKE_LIST || p == IR_P_MAKE_DICT ||
         p == IR_P_GETITEM || p == IR_P_SETITEM || p == IR_P_UNPACK || p == IR_P_ITER_SEQ ||
         p == IR_P_FORMAT || p == IR_P_CONCAT_STR || p == IR_P_SWITCH || p == IR_P_CALL_KW ||
         p == IR_P_CALL_METHOD || p == IR_P_GETATTR || p == IR_P_GLOBAL || p == IR_P_SET_GLOBAL ||
         p == IR_P_IMPORT || p == IR_P_ASSERT_FAIL || p == IR_P_CHECK_BOUND;
}

/* ---- statements and defs ---- */

static void indent(StrBuf *out, int ind) {
  for (int i = 0; i < ind; i++) sb_adds(out, "    ");
}

/* Start a statement at the current indentation. */
static void begin(Src *s, int ind, StrBuf *line) {
  sb_init(line);
  s->pre.len = 0;
  s->ind = ind;
  s->unbound = false;
}

/* Write the lines hoisted for it, then the statement. */
static void end(Src *s, StrBuf *line) {
  sb_add(s->out, s->pre.data, s->pre.len);
  s->pre.len = 0;
  indent(s->out, s->ind);
  sb_add(s->out, line->data, line->len);
  if (s->unbound) sb_adds(s->out, "  # None: not assigned yet");
  sb_addc(s->out, '\n');
}

static void say(Src *s, int ind, const char *text) {
  indent(s->out, ind);
  sb_adds(s->out, text);
  sb_addc(s->out, '\n');
}

static void emit_jump(Src *s, IrNode *call, IrGraph *h, int ind);

static void emit_stmt(Src *s, IrNode *n, int ind) {
  Info *in = src_info(s, n);
  if (in->role != R_STMT) return;
  if (in->value_entry) {
    /* x = loop(...): the while, whose returns are `x = value; break` */
    IrGraph *saved = s->vloop;
    const char *saved_name = s->vname;
    s->vloop = src_const_graph(s, n->in[0]);
    s->vname = in->name;
    emit_jump(s, n, s->vloop, ind);
    s->vloop = saved;
    s->vname = saved_name;
    return;
  }
  StrBuf line;
  begin(s, ind, &line);
  if (in->assert_form) {
    IrNode *sw = n->in[0];
    IrGraph *fail = src_const_graph(s, sw->in[3]);
    IrNode *af = fail->nodes[fail->nnodes - 1];
    if (fail->nnodes == 1) {
      sb_adds(&line, "assert ");
      cond_text(s, sw->in[1], &line);
    } else {
      /* the message takes statements of its own */
      IrNode *c = src_resolve(sw->in[1]);
      bool plain = c->kind == IR_CONST || src_info(s, c)->role != R_COND;
      sb_adds(&line, plain ? "if not " : "if not (");
      cond_text(s, c, &line);
      sb_adds(&line, plain ? ":" : "):");
      end(s, &line);
      for (int i = 0; i < fail->nnodes - 1; i++) emit_stmt(s, fail->nodes[i], ind + 1);
      begin(s, ind + 1, &line);
      sb_adds(&line, "assert False");
    }
    IrNode *msg = src_resolve(af->in[1]);
    if (!(msg->kind == IR_CONST && msg->value.tag == V_NONE)) {
      sb_adds(&line, ", ");
      atom(s, msg, C_FREE, &line);
    }
  } else if (in->targets) {
    int64_t cnt = n->in[2]->value.i;
    for (int64_t i = 0; i < cnt; i++) {
      if (i) sb_adds(&line, ", ");
      sb_adds(&line, in->tnames[i]);
    }
    if (cnt == 1) sb_addc(&line, ',');
    sb_adds(&line, " = ");
    IrNode *x = src_resolve(n->in[1]);
    if (x->kind != IR_CONST && src_info(s, x)->role == R_TUPLE) {
      args_text(s, x->in + 1, x->nin - 1, &line);
      if (x->nin == 2) sb_addc(&line, ',');
    } else {
      atom(s, x, C_FREE, &line);
    }
    if (in->need_tuple) {
      end(s, &line);
      begin(s, ind, &line);
      sb_printf(&line, "%s = (", in->name);
      for (int64_t i = 0; i < cnt; i++) sb_printf(&line, "%s%s", i ? ", " : "", in->tnames[i]);
      sb_adds(&line, cnt == 1 ? ",)" : ")");
    }
  } else if (src_is_prim(n, IR_P_SETITEM)) {
    /* a copy of a with one item replaced: name = a; name[i] = v */
    sb_printf(&line, "%s = ", in->name);
    size_t at = line.len;
    atom(s, n->in[1], C_FREE, &line);
    if (strcmp(line.data + at, in->name) != 0) {
      end(s, &line);
      begin(s, ind, &line);
    } else {
      line.len = 0;   /* a[i] = v on a itself */
      line.data[0] = 0;
    }
    sb_printf(&line, "%s[", in->name);
    index_text(s, n->in[2], &line);
    sb_adds(&line, "] = ");
    atom(s, n->in[3], C_FREE, &line);
  } else if (src_is_prim(n, IR_P_IMPORT) && src_const_str(n->in[1]) && src_is_ident(AS_STR(n->in[1]->value)->data)) {
    const char *m = AS_STR(n->in[1]->value)->data;
    sb_printf(&line, "import %s", m);
    if (strcmp(m, in->name) != 0) sb_printf(&line, " as %s", in->name);
  } else if (src_is_prim(n, IR_P_ASSERT_FAIL)) {
    sb_adds(&line, "assert False");
    IrNode *m = src_resolve(n->in[1]);
    if (!(m->kind == IR_CONST && m->value.tag == V_NONE)) {
      sb_adds(&line, ", ");
      atom(s, m, C_FREE, &line);
    }
    if (in->name) {
      end(s, &line);
      begin(s, ind, &line);
      sb_printf(&line, "%s = None", in->name);
    }
  } else if (src_is_prim(n, IR_P_SET_GLOBAL) && src_const_str(n->in[1])) {
    const char *g = src_sanitize(AS_STR(n->in[1]->value)->data);
    StrBuf v;
    sb_init(&v);
    atom(s, n->in[2], C_FREE, &v);
    if (strcmp(v.data, g) == 0) return;
    sb_printf(&line, "%s = %s", g, v.data);
  } else {
    if (src_is_prim(n, IR_P_SLICE))
      say(s, ind, "# error: a slice outside [] has no source form; slice() is not a builtin");
    if (in->name) sb_printf(&line, "%s = ", in->name);
    expr(s, n, &line);
  }
  end(s, &line);
}

static IrGraph *owner(Src *s, IrGraph *g) { return src_ginfo(s, g->parent) ? g->parent : NULL; }

static void emit_def(Src *s, IrGraph *g, int ind);
static void need_within(Src *s, IrGraph *o, IrGraph *g, int ind);

/* Define the graph x names if it is a def of body `o` not written yet. */
static void need_const(Src *s, IrGraph *o, IrNode *x, int ind) {
  IrGraph *h = x ? src_const_graph(s, x) : NULL;
  if (!h) return;
  GInfo *gi = src_ginfo(s, h);
  if (gi->trivial) {
    need_const(s, o, h->ret, ind);
    return;
  }
  if (gi->emitted || gi->in_place || owner(s, h) != o) return;
  emit_def(s, h, ind);
}

/* The defs of body o that statement n needs, before it. */
static void need_node(Src *s, IrGraph *o, IrNode *n, int ind) {
  n = src_resolve(n);
  if (n->kind == IR_CONST) {
    need_const(s, o, n, ind);
    return;
  }
  Info *in = src_info(s, n);
  if (in->outer || n->kind != IR_APPLY) return;
  for (int j = 0; j < n->nin; j++) {
    IrNode *x = src_resolve(n->in[j]);
    if (x->kind == IR_CONST) need_const(s, o, x, ind);
    else if (src_info(s, x)->role != R_STMT && src_info(s, x)->role != R_TARGET && x->graph == n->graph)
      need_node(s, o, x, ind);
  }
  if (in->assert_form) need_within(s, o, src_const_graph(s, n->in[0]->in[3]), ind);
  if (in->value_entry) need_within(s, o, src_const_graph(s, n->in[0]), ind);
}

/* The defs of body o that graph g, or a graph nested in it, needs. */
static void need_within(Src *s, IrGraph *o, IrGraph *g, int ind) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    IrGraph *d = s->gs[gx].g;
    if (!ir_is_ancestor(g, d)) continue;
    for (int i = 0; i < d->nnodes; i++)
      for (int j = 0; j < d->nodes[i]->nin; j++) need_const(s, o, src_resolve(d->nodes[i]->in[j]), ind);
    if (d->ret) need_const(s, o, src_resolve(d->ret), ind);
    for (int k = 0; k < d->ndefaults; k++) need_const(s, o, src_resolve(d->defaults[k]), ind);
  }
}

/* What is left of body o's defs, before its end. */
static void need_rest(Src *s, IrGraph *o, int ind) {
  for (int gx = 0; gx < s->ngraphs; gx++) {
    GInfo *gi = &s->gs[gx];
    if (!gi->emitted && !gi->in_place && !gi->trivial && gi->g != s->root && owner(s, gi->g) == o)
      emit_def(s, gi->g, ind);
  }
}

/* Whether branch g is only an if, to be written as elif: no statements
 * and no defs before its tail. */
static bool only_if(Src *s, IrGraph *g) {
  GInfo *gi = src_ginfo(s, g);
  if (!gi->tail) return false;
  for (int i = 0; i < g->nnodes; i++) {
    int r = src_info(s, g->nodes[i])->role;
    if (g->nodes[i] != gi->tail && (r == R_STMT || r == R_TARGET)) return false;
  }
  for (int gx = 0; gx < s->ngraphs; gx++)
    if (s->gs[gx].g->parent == g && !s->gs[gx].in_place && !s->gs[gx].trivial) return false;
  return !gi->join;
}

static void emit_body(Src *s, IrGraph *g, int ind);

/* Whether g is printed at a module's top level: the module's graph, or
 * a branch printed in place there. */
static bool at_top(Src *s, IrGraph *g) {
  for (; g; g = g->parent) {
    if (g->flags & IRG_MODULE) return g == s->root;
    if (!src_ginfo(s, g) || !src_ginfo(s, g)->in_place) return false;
  }
  return false;
}

/* The tail of g, switch(c, @a, @b)(), as `if c:` a `else:` b; an else
 * that is only another if becomes elif. */
static void emit_if(Src *s, IrGraph *g, const char *kw, int ind) {
  IrNode *sw = src_ginfo(s, g)->tail->in[0];
  IrGraph *a = src_const_graph(s, sw->in[2]), *b = src_const_graph(s, sw->in[3]);
  StrBuf line;
  begin(s, ind, &line);
  sb_printf(&line, "%s ", kw);
  cond_text(s, sw->in[1], &line);
  sb_addc(&line, ':');
  end(s, &line);
  size_t at = s->out->len;
  emit_body(s, a, ind + 1);
  if (s->out->len == at) say(s, ind + 1, "pass");   /* it only falls through */
  if (only_if(s, b)) {
    emit_if(s, b, "elif", ind);
    return;
  }
  at = s->out->len;
  say(s, ind, "else:");
  size_t body = s->out->len;
  emit_body(s, b, ind + 1);
  if (s->out->len == body) s->out->len = at;   /* no else at all */
  s->out->data[s->out->len] = 0;
}

/* A call of a join, loop or the code after a loop: the parameters
 * assigned, then fall through, `continue`, `break`, or at the loop's
 * entry the while.  (An Unbound argument is assigned None: leaving the
 * variable unassigned would make the next copy of it fail, where
 * check_bound alone fails in the IR.) */
/* The parameters of h a jump must assign (in pick): not those nothing
 * reads, nor those already holding the value under the same name. */
static int jump_pairs(Src *s, IrNode *call, IrGraph *h, int *pick) {
  int n = 0;
  for (int i = 0; i < h->nparams; i++) {
    IrNode *a = src_resolve(call->in[i + 1]);
    Info *pi = src_info(s, h->params[i]);
    if (a == h->params[i] || pi->dead) continue;
    if (a->kind != IR_CONST && src_info(s, a)->name && pi->name && strcmp(src_info(s, a)->name, pi->name) == 0)
      continue;
    pick[n++] = i;
  }
  return n;
}

/* Whether falling off the end of graph x reaches the end of loop l's
 * body, where the while starts again: `continue` is not needed there. */
static bool ends_body(Src *s, IrGraph *x, IrGraph *l) {
  for (IrGraph *y = x; y; y = y->parent) {
    if (y == l) return true;
    int m = src_ginfo(s, y) ? src_ginfo(s, y)->mode : M_DEF;
    if (m == M_BRANCH && src_ginfo(s, y->parent)->join) return false;
    if (m != M_BRANCH && m != M_JOIN && m != M_EXIT) return false;
  }
  return false;
}

/* Whether loop l is `while c:`, written so: nothing before its test,
 * and its exit branch only leaving (break, with nothing to assign). */
static bool while_cond(Src *s, IrGraph *l) {
  GInfo *gl = src_ginfo(s, l);
  if (!gl->tail || gl->join || !gl->exit) return false;
  for (int i = 0; i < l->nnodes; i++) {
    int r = src_info(s, l->nodes[i])->role;
    if (l->nodes[i] != gl->tail && (r == R_STMT || r == R_TARGET)) return false;
  }
  IrNode *sw = gl->tail->in[0];
  IrGraph *b = src_const_graph(s, sw->in[3]);
  if (!b || src_jump_of(s, b->ret) != gl->exit) return false;
  for (int i = 0; i < b->nnodes; i++) {
    int r = src_info(s, b->nodes[i])->role;
    if (b->nodes[i] != b->ret && (r == R_STMT || r == R_TARGET)) return false;
  }
  for (int gx = 0; gx < s->ngraphs; gx++)
    if (s->gs[gx].g->parent == b) return false;
  int *pick = lang_alloc_atomic((gl->exit->nparams + 1) * sizeof *pick);
  return jump_pairs(s, b->ret, gl->exit, pick) == 0;
}

static void emit_jump(Src *s, IrNode *call, IrGraph *h, int ind) {
  GInfo *gh = src_ginfo(s, h);
  bool clash = false;
  int *pick = lang_alloc_atomic((h->nparams + 1) * sizeof *pick);
  int n = jump_pairs(s, call, h, pick);
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      clash |= j != k && src_resolve(call->in[pick[k] + 1]) == h->params[pick[j]];
  StrBuf line;
  if (clash) {
    /* a, b = b, a: all at once */
    begin(s, ind, &line);
    for (int k = 0; k < n; k++) sb_printf(&line, "%s%s", k ? ", " : "", src_info(s, h->params[pick[k]])->name);
    sb_adds(&line, " = ");
    for (int k = 0; k < n; k++) {
      if (k) sb_adds(&line, ", ");
      atom(s, call->in[pick[k] + 1], C_FREE, &line);
    }
    end(s, &line);
  } else {
    for (int k = 0; k < n; k++) {
      begin(s, ind, &line);
      sb_printf(&line, "%s = ", src_info(s, h->params[pick[k]])->name);
      atom(s, call->in[pick[k] + 1], C_FREE, &line);
      end(s, &line);
    }
  }
  if (gh->mode == M_EXIT) {
    say(s, ind, "break");
  } else if (gh->mode == M_LOOP && ir_is_ancestor(h, call->graph)) {
    if (!ends_body(s, call->graph, h)) say(s, ind, "continue");
  } else if (gh->mode == M_LOOP && while_cond(s, h)) {
    IrNode *sw = gh->tail->in[0];
    begin(s, ind, &line);
    sb_adds(&line, "while ");
    cond_text(s, sw->in[1], &line);
    sb_addc(&line, ':');
    end(s, &line);
    size_t at = s->out->len;
    emit_body(s, src_const_graph(s, sw->in[2]), ind + 1);
    if (s->out->len == at) say(s, ind + 1, "pass");
    emit_body(s, gh->exit, ind);
  } else if (gh->mode == M_LOOP) {
    say(s, ind, "while True:");
    size_t at = s->out->len;
    emit_body(s, h, ind + 1);
    if (s->out->len == at) say(s, ind + 1, "pass");
    if (gh->exit) emit_body(s, gh->exit, ind);
  }
}

/* Before the end of g: the defs of g that what is printed in place
 * there needs (branches, joins, loops). */
static void need_in_place(Src *s, IrGraph *g, int ind) {
  for (int gx = 0; gx < s->ngraphs; gx++)
    if (s->gs[gx].g->parent == g && s->gs[gx].in_place) need_within(s, g, s->gs[gx].g, ind);
  need_rest(s, g, ind);
}

static void emit_body(Src *s, IrGraph *g, int ind) {
  GInfo *gi = src_ginfo(s, g);
  for (int i = 0; i < g->nnodes; i++) {
    IrNode *n = g->nodes[i];
    if (n == gi->tail) break;
    need_node(s, g, n, ind);
    emit_stmt(s, n, ind);
  }
  StrBuf line;
  if (gi->tail) {
    IrNode *sw = gi->tail->in[0], *c = src_resolve(sw->in[1]);
    need_node(s, g, c, ind);
    need_in_place(s, g, ind);
    int known = !(c->kind == IR_CONST) ? -1 : c->value.tag == V_BOOL ? c->value.b
              : c->value.tag == V_NONE ? 0 : -1;
    if (known >= 0) emit_body(s, src_const_graph(s, sw->in[known ? 2 : 3]), ind);   /* while True */
    else emit_if(s, g, "if", ind);
    if (gi->join) emit_body(s, gi->join, ind);
    return;
  }
  if (g->ret) need_node(s, g, g->ret, ind);
  IrGraph *h = g->ret ? src_jump_target(s, g->ret) : NULL;
  if (h && src_ginfo(s, h)->mode >= M_JOIN) {
    need_in_place(s, g, ind);
    emit_jump(s, g->ret, h, ind);
    return;
  }
  need_rest(s, g, ind);
  if (s->vloop && src_owner_loop(s, g) == s->vloop) {
    begin(s, ind, &line);
    sb_printf(&line, "%s = ", s->vname);
    if (!g->ret) sb_adds(&line, "None");
    else if (g->ret->kind == IR_APPLY && src_info(s, g->ret)->role == R_RETURN) expr(s, g->ret, &line);
    else atom(s, g->ret, C_FREE, &line);
    end(s, &line);
    say(s, ind, "break");
    return;
  }
  if (at_top(s, g)) {
    /* no return at top level: a call there is kept as a statement */
    IrNode *r = g->ret;
    if (r && r->kind == IR_APPLY && src_info(s, r)->role == R_RETURN && src_call_like(r)) {
      begin(s, ind, &line);
      expr(s, r, &line);
      end(s, &line);
    }
    return;
  }
  begin(s, ind, &line);
  sb_adds(&line, "return ");
  if (!g->ret) sb_adds(&line, "None");
  else if (g->ret->kind == IR_APPLY && src_info(s, g->ret)->role == R_RETURN) expr(s, g->ret, &line);
  else atom(s, g->ret, C_FREE, &line);
  end(s, &line);
}

static void write_def(Src *s, IrGraph *g, int ind);

/* g's def, after the defs of its body's owner that it needs. */
static void emit_def(Src *s, IrGraph *g, int ind) {
  src_ginfo(s, g)->emitted = true;
  IrGraph *o = owner(s, g);
  need_within(s, o, g, ind);
  for (int d = 0; d < g->ndefaults; d++) need_node(s, o, g->defaults[d], ind);
  write_def(s, g, ind);
}

static void write_def(Src *s, IrGraph *g, int ind) {
  GInfo *gi = src_ginfo(s, g);
  if (ind == 0 && s->out->len > s->start) sb_addc(s->out, '\n');   /* between top-level defs */
  StrBuf line;
  begin(s, ind, &line);
  sb_printf(&line, "def %s(", gi->name);
  for (int i = 0; i < g->nparams; i++) {
    if (i) sb_adds(&line, ", ");
    sb_adds(&line, src_info(s, g->params[i])->name);
    int d = i - (g->nparams - g->ndefaults);
    if (d >= 0 && g->defaults[d]) {
      sb_addc(&line, '=');
      atom(s, g->defaults[d], C_FREE, &line);
    }
  }
  sb_adds(&line, "):");
  end(s, &line);
  emit_body(s, g, ind + 1);
}

/* Before the defs: the captured values printed by name, as comments
 * (`# k = 3`), then the modules the printout reads imported. */
void src_preamble(Src *s) {
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < s->ninfos; k++) {
      Info *in = s->infos[k];
      Known *kn = src_known(s, in->node);
      if (!in->outer || !in->name || !kn || kn->subst || in->nuses == 0 || kn->v.tag == V_UNBOUND) continue;
      bool own = false;   /* the root's own first, in its fv order */
      for (int i = 0; i < s->nenv && i < s->root->nfv; i++) own |= s->root->fv[i] == in->node;
      if (own != (pass == 0)) continue;
      sb_printf(s->out, "# %s = ", in->name);
      size_t at = s->out->len;
      if (!lang_repr(s->vm, kn->v, s->out)) {
        lang_error_clear(s->vm);
        s->out->len = at;
        sb_printf(s->out, "<%s>", lang_type_name(kn->v));
      }
      sb_addc(s->out, '\n');
    }
  for (int i = 0; i < s->nmods; i++) {
    const char *m = s->mods[i]->name->data;
    sb_printf(s->out, "import %s as %s\n", m, src_module_alias(s, s->mods[i]));
  }
  if (s->nmods) sb_addc(s->out, '\n');
  s->start = s->out->len;
}

/* The printout after its preamble: the graphs the root uses from
 * outside it (a lambda as a default value, the transforms folded in)
 * first, at top level, then the root's def (or a module's body). */
void src_emit_root(Src *s) {
  IrGraph *g = s->root;
  src_ginfo(s, g)->emitted = true;
  need_within(s, NULL, g, 0);
  for (int d = 0; d < g->ndefaults; d++) need_node(s, NULL, g->defaults[d], 0);
  need_rest(s, NULL, 0);
  if (g->flags & IRG_MODULE) emit_body(s, g, 0);
  else write_def(s, g, 0);
}
