/* prims.c: what each primitive of ops.def means, as a C function with
 * the builtin calling convention.  The interpreter (eval.c) calls these
 * on its general path (its fast paths for int and float arithmetic must
 * agree with them), and they are the values of primitives used as
 * functions.  Value semantics come from lang/ops.c.
 */
#include <stdio.h>
#include <string.h>

#include "ir/eval.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/tensor.h"
#include "lang/textfile.h"
#include "ir/prims_sens.h"

#define PRIM_FN(name) static bool name(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out)

static bool arith(MistVM *vm, ArithOp op, const Value *argv, Value *out) {
  return lang_arith(vm, op, argv[0], argv[1], out);
}

PRIM_FN(p_add) { return arith(vm, OP_ADD, argv, out); }
PRIM_FN(p_sub) { return arith(vm, OP_SUB, argv, out); }
PRIM_FN(p_mul) { return arith(vm, OP_MUL, argv, out); }
PRIM_FN(p_truediv) { return arith(vm, OP_TRUEDIV, argv, out); }
PRIM_FN(p_floordiv) { return arith(vm, OP_FLOORDIV, argv, out); }
PRIM_FN(p_mod) { return arith(vm, OP_MOD, argv, out); }
PRIM_FN(p_pow) { return arith(vm, OP_POW, argv, out); }
PRIM_FN(p_matmul) { return arith(vm, OP_MATMUL, argv, out); }
PRIM_FN(p_neg) { return lang_neg(vm, argv[0], out); }
PRIM_FN(p_pos) { return lang_pos(vm, argv[0], out); }

PRIM_FN(p_not) {
  bool t;
  if (!lang_truthy(vm, argv[0], &t)) return false;
  *out = v_bool(!t);
  return true;
}

PRIM_FN(p_truth) {
  bool t;
  if (!lang_truthy(vm, argv[0], &t)) return false;
  *out = v_bool(t);
  return true;
}

static bool cmp(MistVM *vm, CmpOp op, const Value *argv, Value *out) {
  return lang_compare(vm, op, argv[0], argv[1], out);
}

PRIM_FN(p_eq) { return cmp(vm, CMP_EQ, argv, out); }
PRIM_FN(p_ne) { return cmp(vm, CMP_NE, argv, out); }
PRIM_FN(p_lt) { return cmp(vm, CMP_LT, argv, out); }
PRIM_FN(p_le) { return cmp(vm, CMP_LE, argv, out); }
PRIM_FN(p_gt) { return cmp(vm, CMP_GT, argv, out); }
PRIM_FN(p_ge) { return cmp(vm, CMP_GE, argv, out); }

/* Identity.  Scalars have no identity of their own in Mist; equal
 * scalars of the same type are the same value (so `x is None` works). */
static bool identical(Value a, Value b) {
  if (a.tag != b.tag) return false;
  switch (a.tag) {
  case V_NONE:
  case V_UNBOUND: return true;
  case V_BOOL: return a.b == b.b;
  case V_INT: return a.i == b.i;
  case V_FLOAT: return a.f == b.f;
  case V_OBJ: return a.o == b.o;
  }
  return false;
}

PRIM_FN(p_is) { *out = v_bool(identical(argv[0], argv[1])); return true; }
PRIM_FN(p_is_not) { *out = v_bool(!identical(argv[0], argv[1])); return true; }

PRIM_FN(p_contains) {
  bool r;
  if (!lang_contains(vm, argv[0], argv[1], &r)) return false;
  *out = v_bool(r);
  return true;
}

static Value make_seq(bool tuple, int argc, const Value *argv) {
  ObjSeq *s = tuple ? lang_tuple_new(argc) : lang_list_new(argc);
  if (argc) memcpy(s->items, argv, argc * sizeof *argv);
  return v_obj(s);
}

PRIM_FN(p_make_tuple) { *out = make_seq(true, argc, argv); return true; }
PRIM_FN(p_make_list) { *out = make_seq(false, argc, argv); return true; }

PRIM_FN(p_make_dict) {
  ObjDict *d = lang_dict_new();
  for (int i = 0; i + 1 < argc; i += 2) {
    if (!v_is_obj(argv[i], O_STR))
      return lang_raise(vm, "TypeError", "dict keys must be str, not '%s'", lang_type_name(argv[i]));
    lang_dict_put(d, AS_STR(argv[i]), argv[i + 1]);
  }
  *out = v_obj(d);
  return true;
}

PRIM_FN(p_getitem) { return lang_getitem(vm, argv[0], argv[1], out); }
PRIM_FN(p_setitem) { return lang_setitem(vm, argv[0], argv[1], argv[2], out); }

PRIM_FN(p_slice) {
  for (int i = 0; i < 3; i++)
    if (argv[i].tag != V_INT && argv[i].tag != V_NONE && argv[i].tag != V_BOOL)
      return lang_raise(vm, "TypeError",
                        "slice indices must be integers or None, not '%s'", lang_type_name(argv[i]));
  *out = lang_slice_new(argv[0], argv[1], argv[2]);
  return true;
}

/* a, b = x: x as a tuple of exactly n items. */
PRIM_FN(p_unpack) {
  Value x = argv[0];
  int64_t n = argv[1].i, len;
  if (x.tag != V_OBJ || (x.o->kind != O_TUPLE && x.o->kind != O_LIST && x.o->kind != O_STR &&
                         x.o->kind != O_RANGE && x.o->kind != O_DICT && x.o->kind != O_TENSOR))
    return lang_raise(vm, "TypeError", "cannot unpack non-iterable %s object", lang_type_name(x));
  if (!lang_len(vm, x, &len)) return false;
  if (len > n) return lang_raise(vm, "ValueError", "too many values to unpack (expected %lld)", (long long)n);
  if (len < n)
    return lang_raise(vm, "ValueError", "not enough values to unpack (expected %lld, got %lld)",
                      (long long)n, (long long)len);
  if (x.o->kind == O_TUPLE) {
    *out = x;
    return true;
  }
  if (x.o->kind == O_DICT) {
    ObjDict *d = AS_DICT(x);
    ObjSeq *t = lang_tuple_new(len);
    for (int64_t i = 0; i < len; i++) t->items[i] = v_obj(d->entries[i].key);
    *out = v_obj(t);
    return true;
  }
  ObjSeq *t = lang_tuple_new(len);
  for (int64_t i = 0; i < len; i++)
    if (!lang_getitem(vm, x, v_int(i), &t->items[i])) return false;
  *out = v_obj(t);
  return true;
}

PRIM_FN(p_len) {
  int64_t n;
  if (!lang_len(vm, argv[0], &n)) return false;
  *out = v_int(n);
  return true;
}

PRIM_FN(p_iter_seq) {
  Value x = argv[0];
  if (v_is_obj(x, O_DICT)) {
    ObjDict *d = AS_DICT(x);
    ObjSeq *keys = lang_list_new(d->len);
    for (size_t i = 0; i < d->len; i++) keys->items[i] = v_obj(d->entries[i].key);
    *out = v_obj(keys);
    return true;
  }
  if (x.tag == V_OBJ && (x.o->kind == O_TUPLE || x.o->kind == O_LIST || x.o->kind == O_STR ||
                         x.o->kind == O_RANGE)) {
    *out = x;
    return true;
  }
  if (v_is_obj(x, O_NATIVE) && AS_NATIVE(x)->cls->iter) return AS_NATIVE(x)->cls->iter(vm, x, out);
  if (v_is_obj(x, O_ITER)) {   /* its items from its position on */
    ObjIter *it = (ObjIter *)x.o;
    ObjSeq *rest = lang_list_new(it->items->len - it->pos);
    for (size_t i = it->pos; i < it->items->len; i++) rest->items[i - it->pos] = it->items->items[i];
    *out = v_obj(rest);
    return true;
  }
  if (v_is_obj(x, O_FILE)) {   /* its lines, read now */
    ObjSeq *lines;
    if (!lang_textfile_lines(vm, (ObjFile *)x.o, &lines)) return false;
    *out = v_obj(lines);
    return true;
  }
  if (v_is_obj(x, O_TENSOR)) {   /* indexed along its first axis */
    if (((ObjTensor *)x.o)->ndim == 0) return lang_raise(vm, "TypeError", "iteration over a 0-d tensor");
    *out = x;
    return true;
  }
  return lang_raise(vm, "TypeError", "'%s' object is not iterable", lang_type_name(x));
}

PRIM_FN(p_format) {
  if (!v_is_obj(argv[1], O_STR)) return lang_raise(vm, "TypeError", "format spec must be a str");
  StrBuf sb;
  sb_init(&sb);
  if (!lang_format(vm, argv[0], AS_STR(argv[1])->data, AS_STR(argv[1])->len, &sb)) return false;
  *out = v_obj(sb_to_str(&sb));
  return true;
}

PRIM_FN(p_concat_str) {
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < argc; i++) {
    if (!v_is_obj(argv[i], O_STR)) return lang_raise(vm, "TypeError", "concat_str of a non-str");
    sb_add(&sb, AS_STR(argv[i])->data, AS_STR(argv[i])->len);
  }
  *out = v_obj(sb_to_str(&sb));
  return true;
}

PRIM_FN(p_repr) {
  StrBuf sb;
  sb_init(&sb);
  if (!lang_repr(vm, argv[0], &sb)) return false;
  *out = v_obj(sb_to_str(&sb));
  return true;
}

PRIM_FN(p_str) {
  StrBuf sb;
  sb_init(&sb);
  if (!lang_tostr(vm, argv[0], &sb)) return false;
  *out = v_obj(sb_to_str(&sb));
  return true;
}

PRIM_FN(p_switch) {
  bool t;
  if (!lang_truthy(vm, argv[0], &t)) return false;
  *out = t ? argv[1] : argv[2];
  return true;
}

PRIM_FN(p_call_kw) {
  if (argc < 2 || !v_is_obj(argv[1], O_TUPLE)) return lang_raise(vm, "TypeError", "bad call_kw");
  ObjSeq *names = AS_SEQ(argv[1]);
  int nkw = (int)names->len, npos = argc - 2 - nkw;
  if (npos < 0) return lang_raise(vm, "TypeError", "bad call_kw");
  KwArgs k;
  k.n = nkw;
  k.names = lang_alloc((nkw ? nkw : 1) * sizeof *k.names);
  for (int i = 0; i < nkw; i++) k.names[i] = AS_STR(names->items[i]);
  k.values = (Value *)argv + 2 + npos;
  return vm->call(vm, argv[0], npos, argv + 2, &k, out);
}

/* ". Did you mean: 'upper'?" for x.uper, or "". */
static const char *attr_hint(MistVM *vm, Value x, ObjStr *name) {
  LangSuggest s;
  lang_suggest_start(&s, name->data);
  ObjSeq *names = lang_attr_names(vm, x);
  for (size_t i = 0; i < names->len; i++) lang_suggest_offer(&s, AS_STR(names->items[i])->data);
  return lang_suggest_hint(&s);
}

/* str.upper, list.index: a method taken from the type (str, tuple,
 * list or dict, unless the program rebound the name), as Python's
 * unbound method, which takes the object as its first argument: true
 * and the method in *out, or false where x is no such type or name no
 * method. */
bool ev_type_method(MistVM *vm, Value x, ObjStr *name, Value *out) {
  if (!v_is_obj(x, O_BUILTIN) || !vm->methods || !vm->builtins) return false;
  const char *type = AS_BUILTIN(x)->name;
  if (!type || (strcmp(type, "str") != 0 && strcmp(type, "tuple") != 0 && strcmp(type, "list") != 0 && strcmp(type, "dict") != 0))
    return false;
  Value t;
  if (!lang_dict_get(vm->builtins, lang_str(type), &t) || !v_is_obj(t, O_BUILTIN) || t.o != x.o) return false;
  return lang_dict_get(vm->methods, name, out);
}

/* x.name as a function: a module's attribute, a property's value
 * (t.shape: the property's builtin called with x), a method taken from
 * its type (str.upper), else the method or builtin `name` with x bound
 * as its first argument. */
bool ev_lookup_attr(MistVM *vm, Value x, ObjStr *name, Value *out, bool *bound) {
  *bound = false;
  if (ev_type_method(vm, x, name, out)) return true;
  Value prop;
  if (!v_is_obj(x, O_MODULE) && vm->properties && lang_dict_get(vm->properties, name, &prop))
    return vm->call(vm, prop, 1, &x, NULL, out);
  if (v_is_obj(x, O_MODULE)) {
    ObjModule *m = AS_MODULE(x);
    Value slot;
    if (!lang_module_load(vm, m, name)) return false;
    if (m->names && lang_dict_get(m->names, name, &slot) && m->slots[slot.i].tag != V_UNBOUND) {
      *out = m->slots[slot.i];
      return true;
    }
    return lang_raise(vm, "AttributeError", "module '%s' has no attribute '%s'%s", m->name->data,
                      name->data, attr_hint(vm, x, name));
  }
  if ((vm->methods && lang_dict_get(vm->methods, name, out)) ||
      (vm->builtins && lang_dict_get(vm->builtins, name, out))) {
    *bound = true;
    return true;
  }
  return lang_raise(vm, "AttributeError", "'%s' object has no attribute '%s'%s", lang_type_name(x),
                    name->data, attr_hint(vm, x, name));
}

PRIM_FN(p_call_method) {
  Value fn;
  bool bound;
  if (!ev_lookup_attr(vm, argv[0], AS_STR(argv[1]), &fn, &bound)) return false;
  if (!bound) return vm->call(vm, fn, argc - 2, argv + 2, NULL, out);
  /* argv[1] (the name) is replaced by x: fn(x, args...) */
  Value *args = lang_alloc((argc - 1) * sizeof *args);
  args[0] = argv[0];
  memcpy(args + 1, argv + 2, (argc - 2) * sizeof *args);
  return vm->call(vm, fn, argc - 1, args, NULL, out);
}

PRIM_FN(p_getattr) {
  Value fn;
  bool bound;
  if (!ev_lookup_attr(vm, argv[0], AS_STR(argv[1]), &fn, &bound)) return false;
  if (!bound) {
    *out = fn;
    return true;
  }
  ObjBound *b = lang_alloc(sizeof *b);
  b->obj.kind = O_BOUND;
  b->self = argv[0];
  b->fn = fn;
  *out = v_obj(b);
  return true;
}

PRIM_FN(p_needs_context) {
  return lang_raise(vm, "TypeError", "this primitive cannot be called as a value");
}

PRIM_FN(p_assert_fail) {
  if (argv[0].tag == V_NONE) return lang_raise(vm, "AssertionError", "assertion failed");
  StrBuf sb;
  sb_init(&sb);
  if (!lang_tostr(vm, argv[0], &sb)) return false;
  return lang_raise(vm, "AssertionError", "assertion failed: %s", sb.data);
}

PRIM_FN(p_check_bound) {
  if (argv[0].tag != V_UNBOUND) {
    *out = argv[0];
    return true;
  }
  const char *name = v_is_obj(argv[1], O_STR) ? AS_STR(argv[1])->data : "?";
  return lang_raise(vm, "UnboundLocalError",
                    "cannot access local variable '%s' where it is not associated with a value", name);
}


/* ---- automatic differentiation: sensitivities, None being zero ---- */

static bool gadd(MistVM *vm, Value a, Value b, Value *out);

/* Is t the zero tensor zeros_like makes: one zero element spread over
 * its shape by stride-0 axes? */
static bool zero_view(const ObjTensor *t) {
  for (int d = 0; d < t->ndim; d++)
    if (t->strides[d] != 0) return false;
  const char *p = lang_tensor_ptr(t);
  switch (t->dtype) {
  case DT_F32: return *(const float *)p == 0;
  case DT_F64: return *(const double *)p == 0;
  default: return false;
  }
}

/* ---- sensitivities made of parts (ObjSparse, lang/value.h) ----
 *
 * x[i] read in a loop gives x the sensitivity d at i on each turn.  Made
 * whole, each would cost the size of x, and adding them up n times the
 * size of x.  So sens_at of a large tensor, list or tuple gives a part
 * (a leaf), gadd of parts of the same value their sum (a node), and the
 * whole is made once, when something needs it (ir_sens_dense): the
 * primitives that compute with a sensitivity (bp_call, sens_item, the
 * sensitivity primitives, _sens_whole in the Mist definitions) ask for
 * it. */

enum { SPARSE_MIN = 64 };   /* elements below which a part is made whole at once */

static bool sparse_like_ok(Value x) {
  if (v_is_tensor(x)) return lang_dtype_is_float(AS_TENSOR(x)->dtype) && AS_TENSOR(x)->size >= SPARSE_MIN;
  return (v_is_obj(x, O_TUPLE) || v_is_obj(x, O_LIST)) && AS_SEQ(x)->len >= SPARSE_MIN;
}

static ObjSparse *sparse_new(Value like) {
  ObjSparse *s = lang_alloc(sizeof *s);
  s->obj.kind = O_SPARSE;
  s->like = like;
  s->index = v_unbound();
  s->d = v_none();
  s->dense = v_unbound();
  return s;
}

/* Do a and b stand for sensitivities of values of one shape? */
static bool same_like(Value a, Value b) {
  if (a.tag == V_OBJ && b.tag == V_OBJ && a.o == b.o) return true;
  if (v_is_tensor(a) && v_is_tensor(b)) {
    ObjTensor *x = AS_TENSOR(a), *y = AS_TENSOR(b);
    if (x->dtype != y->dtype || x->ndim != y->ndim) return false;
    for (int i = 0; i < x->ndim; i++)
      if (x->shape[i] != y->shape[i]) return false;
    return true;
  }
  return a.tag == V_OBJ && b.tag == V_OBJ && a.o->kind == b.o->kind && (a.o->kind == O_TUPLE || a.o->kind == O_LIST) &&
         AS_SEQ(a)->len == AS_SEQ(b)->len;
}

/* Is v a whole sensitivity for a value like `like`? */
static bool whole_for(Value v, Value like) {
  if (v_is_tensor(like)) return v_is_tensor(v) && same_like(v, like);
  return (v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST)) && AS_SEQ(v)->len == AS_SEQ(like)->len;
}

bool ir_sens_dense(MistVM *vm, Value v, Value *out) {
  if (!v_is_obj(v, O_SPARSE)) {
    *out = v;
    return true;
  }
  ObjSparse *top = AS_SPARSE(v);
  if (top->dense.tag != V_UNBOUND) {
    *out = top->dense;
    return true;
  }
  Value like = top->like, acc = v_none();
  ObjTensor *z = NULL;
  ObjSeq *items = NULL;
  if (v_is_tensor(like)) {
    ObjTensor *t = AS_TENSOR(like);
    if (!(z = lang_tensor_new(vm, t->dtype, t->ndim, t->shape, true))) return false;
  } else {
    ObjSeq *xs = AS_SEQ(like);
    items = v_is_obj(like, O_TUPLE) ? lang_tuple_new(xs->len) : lang_list_new(xs->len);
    for (size_t k = 0; k < xs->len; k++) items->items[k] = v_none();
  }
  /* the leaves, left to right, with a stack (a sum of n parts made by a
   * loop is a chain n deep) */
  size_t cap = 64, n = 0;
  ObjSparse **stack = lang_alloc(cap * sizeof *stack);
  stack[n++] = top;
  while (n) {
    ObjSparse *s = stack[--n];
    if (s->a) {
      if (n + 2 > cap) stack = lang_realloc(stack, (cap *= 2) * sizeof *stack);
      stack[n++] = s->b;
      stack[n++] = s->a;
      continue;
    }
    Value d;
    if (!ir_sens_dense(vm, s->d, &d)) return false;
    if (d.tag == V_NONE) continue;
    if (s->index.tag == V_UNBOUND) {
      /* a whole sensitivity among the parts: added at the end */
      if (!gadd(vm, acc, d, &acc)) return false;
    } else if (z) {
      if (!lang_tensor_add_at(vm, z, s->index, d)) return false;
    } else {
      int64_t k = s->index.tag == V_BOOL ? s->index.b : s->index.i;
      if (k < 0) k += (int64_t)items->len;
      if (!gadd(vm, items->items[k], d, &items->items[k])) return false;
    }
  }
  Value r = z ? v_obj(z) : v_obj(items);
  if (acc.tag != V_NONE && !gadd(vm, r, acc, &r)) return false;
  top->dense = r;
  *out = r;
  return true;
}

/* gadd where a or b is made of parts */
static bool gadd_sparse(MistVM *vm, Value a, Value b, Value *out) {
  ObjSparse *x = v_is_obj(a, O_SPARSE) ? AS_SPARSE(a) : NULL, *y = v_is_obj(b, O_SPARSE) ? AS_SPARSE(b) : NULL;
  Value like = x ? x->like : y->like;
  bool ok = (!x || same_like(x->like, like)) && (!y || same_like(y->like, like)) &&
            (x || (whole_for(a, like) && !(v_is_tensor(a) && zero_view(AS_TENSOR(a))))) &&
            (y || (whole_for(b, like) && !(v_is_tensor(b) && zero_view(AS_TENSOR(b)))));
  if (!ok) {
    /* (grad's zeros_like(x) + dx among them: the whole is wanted) */
    Value da, db;
    return ir_sens_dense(vm, a, &da) && ir_sens_dense(vm, b, &db) && gadd(vm, da, db, out);
  }
  if (!x) {
    x = sparse_new(like);
    x->d = a;
  }
  if (!y) {
    y = sparse_new(like);
    y->d = b;
  }
  ObjSparse *s = sparse_new(like);
  s->a = x;
  s->b = y;
  *out = v_obj(s);
  return true;
}

static bool env_merge(MistVM *vm, ObjEnv *a, ObjEnv *b, Value *out) {
  ObjEnv *e = lang_alloc(sizeof *e + (a->len + b->len) * sizeof(EnvEntry));
  e->obj.kind = O_ENV;
  size_t i = 0, j = 0, n = 0;
  while (i < a->len || j < b->len) {
    if (j == b->len || (i < a->len && a->items[i].key < b->items[j].key)) e->items[n++] = a->items[i++];
    else if (i == a->len || b->items[j].key < a->items[i].key) e->items[n++] = b->items[j++];
    else {
      e->items[n].key = a->items[i].key;
      if (!gadd(vm, a->items[i].value, b->items[j].value, &e->items[n].value)) return false;
      n++, i++, j++;
    }
  }
  e->len = n;
  *out = v_obj(e);
  return true;
}

static bool same_shape(const ObjTensor *a, const ObjTensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

static bool gadd(MistVM *vm, Value a, Value b, Value *out) { return ir_gadd(vm, a, b, 0, out); }

bool ir_gadd(MistVM *vm, Value a, Value b, unsigned dead, Value *out) {
  if (a.tag == V_NONE) { *out = b; return true; }
  if (b.tag == V_NONE) { *out = a; return true; }
  if (v_is_obj(a, O_SPARSE) || v_is_obj(b, O_SPARSE)) return gadd_sparse(vm, a, b, out);
  if (v_is_tensor(a) && v_is_tensor(b) && same_shape(AS_TENSOR(a), AS_TENSOR(b))) {
    /* grad's zeros_like(x) + dx: no need to add the zeros */
    if (AS_TENSOR(a)->size > 0 && zero_view(AS_TENSOR(a))) { *out = b; return true; }
    if (AS_TENSOR(b)->size > 0 && zero_view(AS_TENSOR(b))) { *out = a; return true; }
    /* two small parts of a sensitivity: added directly */
    ObjTensor *r;
    if (lang_tensor_alike_op(vm, TB_ADD, a, b, dead, &r)) {
      *out = r ? v_obj(r) : v_none();
      return r != NULL;
    }
  }
  if (a.tag == V_OBJ && b.tag == V_OBJ && a.o->kind == b.o->kind) {
    switch (a.o->kind) {
    case O_TUPLE:
    case O_LIST: {
      ObjSeq *x = AS_SEQ(a), *y = AS_SEQ(b);
      if (x->len != y->len) break;
      ObjSeq *r = a.o->kind == O_TUPLE ? lang_tuple_new(x->len) : lang_list_new(x->len);
      for (size_t i = 0; i < x->len; i++)
        if (!gadd(vm, x->items[i], y->items[i], &r->items[i])) return false;
      *out = v_obj(r);
      return true;
    }
    case O_DICT: {
      ObjDict *x = AS_DICT(a), *y = AS_DICT(b);
      ObjDict *r = lang_dict_new();
      for (size_t i = 0; i < x->len; i++) {
        Value w, sum = x->entries[i].value;
        if (lang_dict_get(y, x->entries[i].key, &w) && !gadd(vm, sum, w, &sum)) return false;
        lang_dict_put(r, x->entries[i].key, sum);
      }
      for (size_t i = 0; i < y->len; i++) {
        Value w;
        if (!lang_dict_get(x, y->entries[i].key, &w)) lang_dict_put(r, y->entries[i].key, y->entries[i].value);
      }
      *out = v_obj(r);
      return true;
    }
    case O_ENV: return env_merge(vm, AS_ENV(a), AS_ENV(b), out);
    default: break;
    }
  }
  return lang_arith(vm, OP_ADD, a, b, out);
}

bool ir_gadd_sens_at(Value acc, Value x, Value i, Value d, Value *out) {
  if (!v_is_tensor(acc) || !v_is_tensor(x) || !v_is_tensor(d) || sparse_like_ok(x)) return false;
  ObjTensor *A = AS_TENSOR(acc), *X = AS_TENSOR(x);
  /* the kind of operands ir_gadd adds with lang_tensor_alike_op over acc
   * (small: x is under SPARSE_MIN), the sensitivity a scatter of one
   * block (lang_tensor_scatter) */
  if (!lang_dtype_is_float(X->dtype) || !same_shape(A, X) || A->ndim == 0 || A->size == 0 || zero_view(A) ||
      !lang_tensor_reusable(A, A->dtype, A->ndim, A->shape) ||
      !lang_tensor_add_block(A, i, AS_TENSOR(d)))
    return false;
  *out = acc;
  return true;
}

PRIM_FN(p_gadd) { return gadd(vm, argv[0], argv[1], out); }

PRIM_FN(p_env_get) {
  *out = v_none();
  if (!v_is_obj(argv[0], O_ENV) || argv[1].tag != V_INT) return true;
  ObjEnv *e = AS_ENV(argv[0]);
  for (size_t i = 0; i < e->len; i++)
    if (e->items[i].key == argv[1].i) *out = e->items[i].value;
  return true;
}

PRIM_FN(p_env_set) {
  if (argv[2].tag == V_NONE) {
    *out = argv[0];
    return true;
  }
  ObjEnv *one = lang_alloc(sizeof *one + sizeof(EnvEntry));
  one->obj.kind = O_ENV;
  one->len = 1;
  one->items[0].key = argv[1].i;
  one->items[0].value = argv[2];
  if (!v_is_obj(argv[0], O_ENV)) {
    *out = v_obj(one);
    return true;
  }
  return env_merge(vm, AS_ENV(argv[0]), one, out);
}

/* The env a backward pass hands its continuation: one object rather
 * than a chain of env_set, each of which copies the env so far. */
PRIM_FN(p_make_env) {
  if (argc % 2) return lang_raise(vm, "TypeError", "make_env takes keys and values in pairs");
  int n = 0;
  for (int i = 0; i < argc; i += 2) {
    if (argv[i].tag != V_INT) return lang_raise(vm, "TypeError", "make_env: the keys must be ints");
    n += argv[i + 1].tag != V_NONE;
  }
  *out = v_none();
  if (!n) return true;
  ObjEnv *e = lang_alloc(sizeof *e + n * sizeof(EnvEntry));
  e->obj.kind = O_ENV;
  e->len = 0;
  for (int i = 0; i < argc; i += 2) {
    if (argv[i + 1].tag == V_NONE) continue;
    /* insertion in key order, as env_merge expects; a repeated key adds */
    size_t j = e->len;
    while (j > 0 && e->items[j - 1].key > argv[i].i) j--;
    if (j > 0 && e->items[j - 1].key == argv[i].i) {
      if (!gadd(vm, e->items[j - 1].value, argv[i + 1], &e->items[j - 1].value)) return false;
      continue;
    }
    memmove(e->items + j + 1, e->items + j, (e->len - j) * sizeof(EnvEntry));
    e->items[j].key = argv[i].i;
    e->items[j].value = argv[i + 1];
    e->len++;
  }
  *out = v_obj(e);
  return true;
}

PRIM_FN(p_jmask) {
  if (!vm->ad) return lang_raise(vm, "TypeError", "automatic differentiation is not available");
  if (argc < 2 || argv[1].tag != V_INT) return lang_raise(vm, "TypeError", "jmask: the mask must be an int");
  bool floats = argc > 2;
  for (int i = 2; i < argc; i++) floats &= argv[i].tag == V_FLOAT;
  return vm->ad->Jmask(vm, argv[0], argv[1].i, floats, out);
}

PRIM_FN(p_float_arg) {
  if (argv[0].tag != V_FLOAT)
    return lang_raise(vm, "TypeError", "internal error: a transform made for float arguments got %s",
                      lang_type_name(argv[0]));
  *out = argv[0];
  return true;
}

PRIM_FN(p_J) {
  if (!vm->ad) return lang_raise(vm, "TypeError", "automatic differentiation is not available");
  return vm->ad->J(vm, argv[0], out);
}

static Value none_tuple(int64_t n) {
  ObjSeq *t = lang_tuple_new(n > 0 ? (size_t)n : 0);
  for (int64_t i = 0; i < n; i++) t->items[i] = v_none();
  return v_obj(t);
}

PRIM_FN(p_bp_call) {
  if (argv[1].tag == V_NONE || argv[0].tag == V_NONE) {
    *out = none_tuple(argv[2].i);
    return true;
  }
  Value d;
  if (!ir_sens_dense(vm, argv[1], &d)) return false;
  return vm->call(vm, argv[0], 1, &d, NULL, out);
}

PRIM_FN(p_sens_item) {
  Value d, i = argv[1];
  if (!ir_sens_dense(vm, argv[0], &d)) return false;
  *out = v_none();
  if (d.tag == V_NONE) return true;
  if (v_is_obj(d, O_DICT) && v_is_obj(i, O_STR)) {
    lang_dict_get(AS_DICT(d), AS_STR(i), out);
    return true;
  }
  /* a dict's sensitivity at a position: that of its keys, strs, which
   * have none (a derivative of a derivative of `for k in d`, whose
   * iter_seq gave the keys' sensitivity the dict's kind) */
  if (v_is_obj(d, O_DICT) && i.tag == V_INT) return true;
  return lang_getitem(vm, d, i, out);
}

/* The positions a slice selects in a sequence of n items. */
static int64_t slice_positions(MistVM *vm, ObjSlice *s, int64_t n, int64_t *start, int64_t *step) {
  int64_t st = s->step.tag == V_INT ? s->step.i : 1;
  if (st == 0) return -1;
  int64_t lo, hi;
  if (st > 0) {
    lo = s->start.tag == V_INT ? s->start.i : 0;
    hi = s->stop.tag == V_INT ? s->stop.i : n;
    if (lo < 0) lo += n;
    if (hi < 0) hi += n;
    lo = lo < 0 ? 0 : lo > n ? n : lo;
    hi = hi < 0 ? 0 : hi > n ? n : hi;
    *start = lo;
    *step = st;
    return hi > lo ? (hi - lo + st - 1) / st : 0;
  }
  lo = s->start.tag == V_INT ? s->start.i : n - 1;
  hi = s->stop.tag == V_INT ? s->stop.i : -n - 1;
  if (lo < 0) lo += n;
  if (hi < 0) hi += n;
  lo = lo < -1 ? -1 : lo > n - 1 ? n - 1 : lo;
  hi = hi < -1 ? -1 : hi > n - 1 ? n - 1 : hi;
  *start = lo;
  *step = st;
  return lo > hi ? (lo - hi - st - 1) / (-st) : 0;
}

PRIM_FN(p_sens_at) {
  Value x = argv[0], i = argv[1], d;
  if (!ir_sens_dense(vm, argv[2], &d)) return false;
  /* x a sensitivity made of parts (a second derivative differentiates
   * the sens_item of a backward pass): only its shape matters here, and
   * that is the shape of the value it is a sensitivity of */
  if (v_is_obj(x, O_SPARSE)) x = AS_SPARSE(x)->like;
  if (d.tag == V_NONE || x.tag == V_NONE) {
    *out = v_none();
    return true;
  }
  if (sparse_like_ok(x) && (v_is_tensor(x) || i.tag == V_INT || i.tag == V_BOOL)) {
    /* a part of a large value: made whole when needed (see above) */
    ObjSparse *s = sparse_new(x);
    s->index = i;
    s->d = d;
    *out = v_obj(s);
    return true;
  }
  if (v_is_tensor(x)) {
    /* zeros shaped like x with d added at x[i]: repeated positions of an
     * index tensor add up; integer tensors have no derivative */
    ObjTensor *t = AS_TENSOR(x);
    *out = v_none();
    if (!lang_dtype_is_float(t->dtype)) return true;
    return lang_tensor_scatter(vm, t->dtype, t->ndim, t->shape, i, d, out);
  }
  if (x.tag == V_OBJ && (x.o->kind == O_TUPLE || x.o->kind == O_LIST)) {
    ObjSeq *xs = AS_SEQ(x);
    ObjSeq *r = x.o->kind == O_TUPLE ? lang_tuple_new(xs->len) : lang_list_new(xs->len);
    for (size_t k = 0; k < xs->len; k++) r->items[k] = v_none();
    if (i.tag == V_INT || i.tag == V_BOOL) {
      int64_t k = i.tag == V_BOOL ? i.b : i.i;
      if (k < 0) k += (int64_t)xs->len;
      if (k >= 0 && k < (int64_t)xs->len) r->items[k] = d;
    } else if (v_is_obj(i, O_SLICE)) {
      int64_t start, step, n = slice_positions(vm, AS_SLICE(i), (int64_t)xs->len, &start, &step);
      for (int64_t k = 0; k < n; k++) {
        Value dk;
        if (!lang_getitem(vm, d, v_int(k), &dk)) return false;
        r->items[start + k * step] = dk;
      }
    }
    *out = v_obj(r);
    return true;
  }
  if (v_is_obj(x, O_DICT) && v_is_obj(i, O_STR)) {
    ObjDict *r = lang_dict_new();
    lang_dict_put(r, AS_STR(i), d);
    *out = v_obj(r);
    return true;
  }
  if (x.tag == V_OBJ && (x.o->kind == O_STR || x.o->kind == O_RANGE)) {
    *out = v_none();
    return true;
  }
  return lang_raise(vm, "TypeError", "cannot differentiate indexing a %s yet", lang_type_name(x));
}

/* The sensitivity of a tensor x from those of its rows (a tuple or list,
 * None for zero), as `a, b = x` gives them. */
static bool rows_sens(MistVM *vm, ObjTensor *x, ObjSeq *rows, Value *out) {
  *out = v_none();
  if (!lang_dtype_is_float(x->dtype)) return true;
  ObjTensor *r = lang_tensor_new(vm, x->dtype, x->ndim, x->shape, true);
  if (!r) return false;
  Value acc = v_obj(r);
  for (size_t k = 0; k < rows->len; k++)
    if (rows->items[k].tag != V_NONE &&
        !lang_tensor_index_add(vm, AS_TENSOR(acc), v_int((int64_t)k), rows->items[k], &acc))
      return false;
  *out = acc;
  return true;
}

PRIM_FN(p_sens_like) {
  Value x = argv[0], d;
  if (!ir_sens_dense(vm, argv[1], &d)) return false;
  if (v_is_tensor(x) && (v_is_obj(d, O_TUPLE) || v_is_obj(d, O_LIST)))
    return rows_sens(vm, AS_TENSOR(x), AS_SEQ(d), out);
  if (v_is_obj(x, O_LIST) && v_is_obj(d, O_TUPLE)) {
    ObjSeq *t = AS_SEQ(d);
    ObjSeq *l = lang_list_new(t->len);
    memcpy(l->items, t->items, t->len * sizeof(Value));
    *out = v_obj(l);
    return true;
  }
  if (v_is_obj(x, O_LIST) && v_is_obj(d, O_DICT)) {
    /* x is a dict's keys (`for k in d`: iter_seq) and d the dict's
     * tangent: the keys are strs, which have none */
    *out = v_none();
    return true;
  }
  *out = d;
  return true;
}

PRIM_FN(p_seed) {
  Value y = argv[0];
  const char *who = v_is_obj(argv[1], O_STR) ? AS_STR(argv[1])->data : "grad";
  if (y.tag == V_FLOAT) {
    *out = v_float(1.0);
    return true;
  }
  if (y.tag == V_OBJ && y.o->kind != O_STR && y.o->kind != O_TUPLE && y.o->kind != O_LIST &&
      y.o->kind != O_DICT && y.o->kind != O_FUNC) {
    /* a tensor: one element, whose sensitivity is 1 (made, not y * 0 + 1,
     * which is nan where y is inf) */
    /* n: a tensor's elements (not len(y), its first axis, which let a
     * (1, 3) result through, seeded with three ones, and called a (2, 3)
     * one "a tensor of 2 elements"); another object's len() if it has
     * one */
    int64_t n = 1;
    if (v_is_tensor(y)) {
      n = AS_TENSOR(y)->size;
    } else if (!lang_len(vm, y, &n)) {
      n = 1;
      lang_error_clear(vm);
    }
    if (n != 1)
      return lang_raise(vm, "TypeError", "%s: the function must return a float or a one-element tensor; it returned a tensor of %lld elements", who, (long long)n);
    if (v_is_tensor(y)) {
      ObjTensor *t = AS_TENSOR(y), *one;
      DType dt = lang_dtype_is_float(t->dtype) ? t->dtype : DT_F32;
      if (!lang_tensor_scalar(vm, dt, v_float(1.0), &one) ||
          !lang_tensor_broadcast_to(vm, who, one, t->ndim, t->shape, &one))
        return false;
      *out = v_obj(one);
      return true;
    }
    Value zero;
    if (!lang_arith(vm, OP_MUL, y, v_float(0.0), &zero)) return false;
    return lang_arith(vm, OP_ADD, zero, v_float(1.0), out);
  }
  return lang_raise(vm, "TypeError", "%s: the function must return a float or a one-element tensor, not %s", who,
                    lang_type_name(y));
}

static bool zeros_like(MistVM *vm, Value x, Value *out) {
  switch (x.tag) {
  case V_FLOAT: *out = v_float(0.0); return true;
  case V_INT:
  case V_BOOL: *out = v_float(0.0); return true;
  case V_NONE: *out = v_none(); return true;
  case V_OBJ:
    if (x.o->kind == O_TUPLE || x.o->kind == O_LIST) {
      ObjSeq *s = AS_SEQ(x);
      ObjSeq *r = x.o->kind == O_TUPLE ? lang_tuple_new(s->len) : lang_list_new(s->len);
      for (size_t i = 0; i < s->len; i++)
        if (!zeros_like(vm, s->items[i], &r->items[i])) return false;
      *out = v_obj(r);
      return true;
    }
    if (x.o->kind == O_DICT) {
      ObjDict *d = AS_DICT(x), *r = lang_dict_new();
      for (size_t i = 0; i < d->len; i++) {
        Value z;
        if (!zeros_like(vm, d->entries[i].value, &z)) return false;
        lang_dict_put(r, d->entries[i].key, z);
      }
      *out = v_obj(r);
      return true;
    }
    if (x.o->kind == O_STR || x.o->kind == O_FUNC || x.o->kind == O_BUILTIN) {
      *out = v_none();
      return true;
    }
    if (v_is_tensor(x)) {
      /* zeros, not x * 0 (which is NaN where x is inf): one zero
       * element viewed with x's shape, which gadd knows to skip; an
       * integer tensor's zero derivative is an f32 one */
      ObjTensor *t = AS_TENSOR(x);
      ObjTensor *z = lang_tensor_new(vm, lang_dtype_is_float(t->dtype) ? t->dtype : DT_F32, 0, NULL, true);
      if (!z || !lang_tensor_broadcast_to(vm, "zeros_like", z, t->ndim, t->shape, &z)) return false;
      *out = v_obj(z);
      return true;
    }
    return lang_arith(vm, OP_MUL, x, v_float(0.0), out);
  default: *out = v_none(); return true;
  }
}

PRIM_FN(p_zeros_like) { return zeros_like(vm, argv[0], out); }
PRIM_FN(p_stop_gradient) { *out = argv[0]; return true; }

/* Is every leaf of x differentiable (a float, a float tensor; None and
 * functions are let through)?  If not, an error naming the argument and
 * the path to the leaf, so that a forgotten decimal point (an int, an
 * integer tensor) never makes a gradient silently zero. */
static bool check_diff(MistVM *vm, Value x, const char *name, StrBuf *path) {
  const char *what = NULL;
  char dt[64];
  if (x.tag == V_INT || x.tag == V_BOOL || v_is_obj(x, O_STR)) {
    what = x.tag == V_INT ? "an int" : x.tag == V_BOOL ? "a bool" : "a str";
  } else if (v_is_tensor(x) && !lang_dtype_is_float(AS_TENSOR(x)->dtype)) {
    snprintf(dt, sizeof dt, "%s %s tensor", AS_TENSOR(x)->dtype == DT_I32 || AS_TENSOR(x)->dtype == DT_I64 ? "an" : "a",
             dev_dtype_name(AS_TENSOR(x)->dtype));
    what = dt;
  } else if (v_is_obj(x, O_TUPLE) || v_is_obj(x, O_LIST)) {
    ObjSeq *xs = AS_SEQ(x);
    for (size_t i = 0; i < xs->len; i++) {
      size_t at = path->len;
      sb_printf(path, "[%zu]", i);
      if (!check_diff(vm, xs->items[i], name, path)) return false;
      path->len = at;
      path->data[at] = 0;
    }
  } else if (v_is_obj(x, O_DICT)) {
    ObjDict *d = AS_DICT(x);
    for (size_t i = 0; i < d->len; i++) {
      size_t at = path->len;
      sb_printf(path, "['%s']", d->entries[i].key->data);
      if (!check_diff(vm, d->entries[i].value, name, path)) return false;
      path->len = at;
      path->data[at] = 0;
    }
  }
  if (!what) return true;
  const char *tail = v_is_tensor(x) ? "only float tensors (f32, f64) have derivatives" : "not a float, tensor or tree of them";
  if (path->len)
    return lang_raise(vm, "TypeError", "cannot differentiate with respect to argument '%s': %s%s is %s%s %s", name, name,
                      path->data, what, v_is_tensor(x) ? ";" : ",", tail);
  return lang_raise(vm, "TypeError", "cannot differentiate with respect to argument '%s': it is %s%s %s", name, what,
                    v_is_tensor(x) ? ";" : ",", tail);
}

/* check_diff's test alone: no path is formatted (an MLP's parameter
 * dict is checked at every step, and formatting each key's path cost
 * more than the rest of the walk) */
static bool all_diff(Value x) {
  if (x.tag == V_INT || x.tag == V_BOOL || v_is_obj(x, O_STR)) return false;
  if (v_is_tensor(x)) return lang_dtype_is_float(AS_TENSOR(x)->dtype);
  if (v_is_obj(x, O_TUPLE) || v_is_obj(x, O_LIST)) {
    ObjSeq *xs = AS_SEQ(x);
    for (size_t i = 0; i < xs->len; i++)
      if (!all_diff(xs->items[i])) return false;
  } else if (v_is_obj(x, O_DICT)) {
    ObjDict *d = AS_DICT(x);
    for (size_t i = 0; i < d->len; i++)
      if (!all_diff(d->entries[i].value)) return false;
  }
  return true;
}

PRIM_FN(p_check_diff) {
  if (all_diff(argv[0])) {
    *out = argv[0];
    return true;
  }
  /* the walk again, naming the path to the first leaf that fails */
  StrBuf path;
  sb_init(&path);
  if (!check_diff(vm, argv[0], v_is_obj(argv[1], O_STR) ? AS_STR(argv[1])->data : "?", &path)) return false;
  *out = argv[0];
  return true;
}

PRIM_FN(p_sens_without) {
  Value d, i = argv[1];
  if (!ir_sens_dense(vm, argv[0], &d)) return false;
  if (d.tag == V_NONE) {
    *out = d;
    return true;
  }
  if (v_is_obj(d, O_DICT) && v_is_obj(i, O_STR)) {
    ObjDict *r = lang_dict_del(AS_DICT(d), AS_STR(i));
    *out = r ? v_obj(r) : d;
    return true;
  }
  if (d.tag == V_OBJ && (d.o->kind == O_TUPLE || d.o->kind == O_LIST)) {
    ObjSeq *xs = AS_SEQ(d);
    if (d.o->kind == O_LIST && i.tag == V_INT) {
      /* O(1), as the update itself (lang/value.c, "Versions") */
      int64_t k = i.i < 0 ? i.i + (int64_t)xs->len : i.i;
      *out = k >= 0 && k < (int64_t)xs->len ? v_obj(lang_list_set(xs, (size_t)k, v_none(), lang_updates_in_place(vm))) : d;
      return true;
    }
    ObjSeq *r = d.o->kind == O_TUPLE ? lang_tuple_new(xs->len) : lang_list_new(xs->len);
    memcpy(r->items, xs->items, xs->len * sizeof(Value));
    if (i.tag == V_INT) {
      int64_t k = i.i < 0 ? i.i + (int64_t)xs->len : i.i;
      if (k >= 0 && k < (int64_t)xs->len) r->items[k] = v_none();
    } else if (v_is_obj(i, O_SLICE)) {
      int64_t start, step, n = slice_positions(vm, AS_SLICE(i), (int64_t)xs->len, &start, &step);
      for (int64_t k = 0; k < n; k++) r->items[start + k * step] = v_none();
    }
    *out = v_obj(r);
    return true;
  }
  if (v_is_tensor(d)) {
    /* x[i] = v: x keeps the sensitivity of the elements not overwritten */
    ObjTensor *t = AS_TENSOR(d);
    if (!lang_dtype_is_float(t->dtype)) {
      *out = v_none();
      return true;
    }
    return lang_tensor_setitem(vm, t, i, v_float(0.0), out);
  }
  return lang_raise(vm, "TypeError", "cannot differentiate an update of a %s yet", lang_type_name(d));
}

PRIM_FN(p_bp_call_j) {
  int m = argc - 3;
  if (argv[1].tag == V_NONE || argv[0].tag == V_NONE) {
    Value r = none_tuple(argv[2].i);
    for (int i = 0; i < m; i++) r = lang_tuple_of(2, r, v_none());
    *out = r;
    return true;
  }
  Value *args = lang_alloc((m + 1) * sizeof *args);
  memcpy(args, argv + 3, m * sizeof *args);
  if (!ir_sens_dense(vm, argv[1], &args[m])) return false;
  return vm->call(vm, argv[0], m + 1, args, NULL, out);
}

PRIM_FN(p_jinv_env) {
  if (!vm->ad) return lang_raise(vm, "TypeError", "automatic differentiation is not available");
  return vm->ad->rekey_env(vm, argv[0], argv[1], true, out);
}

PRIM_FN(p_jenv) {
  if (!vm->ad) return lang_raise(vm, "TypeError", "automatic differentiation is not available");
  return vm->ad->rekey_env(vm, argv[0], argv[1], false, out);
}

PRIM_FN(p_no_derivative) {
  if (argv[0].tag == V_NONE) {
    *out = v_none();
    return true;
  }
  return lang_raise(vm, "TypeError", "cannot differentiate %s",
                    v_is_obj(argv[1], O_STR) ? AS_STR(argv[1])->data : "this operation");
}

PRIM_FN(p_tan_item) {
  Value t = argv[0];
  *out = v_none();
  if (t.tag == V_NONE) return true;
  if (t.tag == V_OBJ && (t.o->kind == O_TUPLE || t.o->kind == O_LIST) && argv[1].tag == V_INT) {
    ObjSeq *s = AS_SEQ(t);
    int64_t i = argv[1].i;
    if (i >= 0 && i < (int64_t)s->len) *out = s->items[i];
    return true;
  }
  return p_sens_item(vm, argc, argv, kw, out);
}

PRIM_FN(p_tan_tuple) {
  Value t = argv[0];
  if (v_is_obj(t, O_LIST)) {
    ObjSeq *l = AS_SEQ(t), *r = lang_tuple_new(l->len);
    memcpy(r->items, l->items, l->len * sizeof(Value));
    *out = v_obj(r);
    return true;
  }
  *out = t;
  return true;
}

PRIM_FN(p_F) {
  if (!vm->ad) return lang_raise(vm, "TypeError", "forward-mode differentiation is not available");
  return vm->ad->F(vm, argv[0], out);
}

/* cons_list(acc, kind): a comprehension's result from the chain of
 * pairs it built newest first, acc = (e_n, (e_n-1, ... (e_1, None))):
 * the list [e_1, ..., e_n] for kind 0; for kind 1 each e is a pair
 * (key, value) and the result the dict, later keys overwriting earlier
 * ones in the first one's place, as Python's dict comprehensions do. */
PRIM_FN(p_cons_list) {
  size_t n = 0;
  for (Value c = argv[0]; c.tag != V_NONE; c = AS_SEQ(c)->items[1], n++)
    if (!v_is_obj(c, O_TUPLE) || AS_SEQ(c)->len != 2)
      return lang_raise(vm, "TypeError", "cons_list of a malformed chain");
  if (argv[1].tag != V_INT || (argv[1].i != 0 && argv[1].i != 1))
    return lang_raise(vm, "TypeError", "cons_list kind must be 0 or 1");
  ObjSeq *items = lang_list_new(n);
  size_t k = n;
  for (Value c = argv[0]; c.tag != V_NONE; c = AS_SEQ(c)->items[1]) items->items[--k] = AS_SEQ(c)->items[0];
  if (argv[1].i == 0) {
    *out = v_obj(items);
    return true;
  }
  ObjDict *d = lang_dict_new();
  for (size_t i = 0; i < n; i++) {
    Value kv = items->items[i];
    if (!v_is_obj(kv, O_TUPLE) || AS_SEQ(kv)->len != 2)
      return lang_raise(vm, "TypeError", "cons_list of a malformed chain");
    Value key = AS_SEQ(kv)->items[0];
    if (!v_is_obj(key, O_STR))
      return lang_raise(vm, "TypeError", "dict keys must be str, not '%s'", lang_type_name(key));
    lang_dict_put(d, AS_STR(key), AS_SEQ(kv)->items[1]);
  }
  *out = v_obj(d);
  return true;
}

/* The sensitivity (or tangent) d of cons_list(acc, kind), shaped as the
 * chain acc: (d_n, (... (d_1, None))); for a dict, pairs (None, d[key])
 * for the newest occurrence of each key, whose value the dict kept. */
PRIM_FN(p_cons_sens) {
  Value d, acc = argv[1];
  if (!ir_sens_dense(vm, argv[0], &d)) return false;
  bool dict = argv[2].tag == V_INT && argv[2].i == 1;
  if (d.tag == V_NONE) {
    *out = d;
    return true;
  }
  size_t n = 0;
  for (Value c = acc; v_is_obj(c, O_TUPLE) && AS_SEQ(c)->len == 2; c = AS_SEQ(c)->items[1]) n++;
  Value *items = lang_alloc((n ? n : 1) * sizeof *items);
  size_t k = n;
  for (Value c = acc; k > 0; c = AS_SEQ(c)->items[1]) items[--k] = AS_SEQ(c)->items[0];
  ObjDict *seen = dict ? lang_dict_new() : NULL;
  Value chain = v_none();
  for (size_t i = 0; i < n; i++) {
    Value di = v_none();
    if (!dict) {
      if (!ev_prim_fn(IR_P_SENS_ITEM)(vm, 2, (Value[]){d, v_int((int64_t)i)}, NULL, &di)) return false;
    } else {
      Value key = AS_SEQ(items[i])->items[0], dv = v_none(), dummy;
      bool newest = true;
      for (size_t j = i + 1; j < n; j++)
        if (lang_equal(AS_SEQ(items[j])->items[0], key)) newest = false;
      if (newest && v_is_obj(key, O_STR) && v_is_obj(d, O_DICT) && !lang_dict_get(seen, AS_STR(key), &dummy))
        lang_dict_get(AS_DICT(d), AS_STR(key), &dv);
      di = dv.tag == V_NONE ? v_none() : lang_tuple_of(2, v_none(), dv);
    }
    chain = lang_tuple_of(2, di, chain);
  }
  *out = chain;
  return true;
}

PRIM_FN(p_cons_tan) {
  Value t = argv[0], acc = argv[1];
  if (t.tag == V_NONE) {
    *out = t;
    return true;
  }
  /* as long as the chain acc, item i of t with item i of acc: a
   * sensitivity or tangent chain may stop early (None for the rest, its
   * oldest items, all zero) */
  size_t n = 0;
  for (Value c = acc; v_is_obj(c, O_TUPLE) && AS_SEQ(c)->len == 2; c = AS_SEQ(c)->items[1]) n++;
  ObjSeq *items = lang_list_new(n);
  size_t k = n;
  for (Value c = t; k > 0; k--) {
    bool link = v_is_obj(c, O_TUPLE) && AS_SEQ(c)->len == 2;
    items->items[k - 1] = link ? AS_SEQ(c)->items[0] : v_none();
    c = link ? AS_SEQ(c)->items[1] : v_none();
  }
  if (argv[2].tag == V_INT && argv[2].i == 0) {
    *out = v_obj(items);
    return true;
  }
  /* (pairing t's items with acc's from the oldest, as a list of t would,
   * gave a chain that stopped early the keys of the oldest items: a
   * derivative of a dict comprehension to the wrong key) */
  ObjDict *d = lang_dict_new();
  Value l;
  if (!p_cons_list(vm, 2, (Value[]){acc, v_int(0)}, NULL, &l)) return false;
  ObjSeq *keys = AS_SEQ(l);
  for (size_t i = 0; i < keys->len && i < n; i++) {
    Value pair = items->items[i], key = AS_SEQ(keys->items[i])->items[0];
    Value tv = v_is_obj(pair, O_TUPLE) && AS_SEQ(pair)->len == 2 ? AS_SEQ(pair)->items[1] : v_none();
    if (v_is_obj(key, O_STR)) lang_dict_put(d, AS_STR(key), tv);
  }
  *out = v_obj(d);
  return true;
}

#define p_global p_needs_context
#define p_set_global p_needs_context
#define p_import p_needs_context

static const BuiltinFn prim_fns[IR_NPRIMS] = {
#define PRIM(e, name, arity, flags, eval, type, none, rev, fwd, lower, shard, doc) [IR_P_##e] = eval,
#include "ir/ops.def"
#undef PRIM
};

BuiltinFn ev_prim_fn(IrPrim p) { return prim_fns[p]; }
