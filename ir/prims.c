/* prims.c: what each primitive of ops.def means, as a C function with
 * the builtin calling convention.  The interpreter (eval.c) calls these
 * on its general path (its fast paths for int and float arithmetic must
 * agree with them), and they are the values of primitives used as
 * functions.  Value semantics come from lang/ops.c.
 */
#include <string.h>

#include "ir/eval.h"
#include "lang/gc.h"
#include "lang/ops.h"

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
                         x.o->kind != O_RANGE && x.o->kind != O_DICT))
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

/* x.name as a function: a module's attribute, else the method or
 * builtin `name` with x bound as its first argument. */
static bool lookup_attr(MistVM *vm, Value x, ObjStr *name, Value *out, bool *bound) {
  *bound = false;
  if (v_is_obj(x, O_MODULE)) {
    ObjModule *m = AS_MODULE(x);
    Value slot;
    if (m->names && lang_dict_get(m->names, name, &slot) && m->slots[slot.i].tag != V_UNBOUND) {
      *out = m->slots[slot.i];
      return true;
    }
    return lang_raise(vm, "AttributeError", "module '%s' has no attribute '%s'", m->name->data,
                      name->data);
  }
  if ((vm->methods && lang_dict_get(vm->methods, name, out)) ||
      (vm->builtins && lang_dict_get(vm->builtins, name, out))) {
    *bound = true;
    return true;
  }
  return lang_raise(vm, "AttributeError", "'%s' object has no attribute '%s'", lang_type_name(x),
                    name->data);
}

PRIM_FN(p_call_method) {
  Value fn;
  bool bound;
  if (!lookup_attr(vm, argv[0], AS_STR(argv[1]), &fn, &bound)) return false;
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
  if (!lookup_attr(vm, argv[0], AS_STR(argv[1]), &fn, &bound)) return false;
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

#define p_global p_needs_context
#define p_set_global p_needs_context
#define p_import p_needs_context

static const BuiltinFn prim_fns[IR_NPRIMS] = {
  [IR_P_ADD] = p_add, [IR_P_SUB] = p_sub, [IR_P_MUL] = p_mul, [IR_P_TRUEDIV] = p_truediv,
  [IR_P_FLOORDIV] = p_floordiv, [IR_P_MOD] = p_mod, [IR_P_POW] = p_pow, [IR_P_MATMUL] = p_matmul,
  [IR_P_NEG] = p_neg, [IR_P_POS] = p_pos, [IR_P_NOT] = p_not, [IR_P_TRUTH] = p_truth,
  [IR_P_EQ] = p_eq, [IR_P_NE] = p_ne, [IR_P_LT] = p_lt, [IR_P_LE] = p_le, [IR_P_GT] = p_gt,
  [IR_P_GE] = p_ge, [IR_P_IS] = p_is, [IR_P_IS_NOT] = p_is_not, [IR_P_CONTAINS] = p_contains,
  [IR_P_MAKE_TUPLE] = p_make_tuple, [IR_P_MAKE_LIST] = p_make_list, [IR_P_MAKE_DICT] = p_make_dict,
  [IR_P_GETITEM] = p_getitem, [IR_P_SETITEM] = p_setitem, [IR_P_SLICE] = p_slice,
  [IR_P_UNPACK] = p_unpack, [IR_P_LEN] = p_len, [IR_P_ITER_SEQ] = p_iter_seq,
  [IR_P_FORMAT] = p_format, [IR_P_CONCAT_STR] = p_concat_str, [IR_P_REPR] = p_repr,
  [IR_P_STR] = p_str, [IR_P_SWITCH] = p_switch, [IR_P_CALL_KW] = p_call_kw,
  [IR_P_CALL_METHOD] = p_call_method, [IR_P_GETATTR] = p_getattr, [IR_P_GLOBAL] = p_global,
  [IR_P_SET_GLOBAL] = p_set_global, [IR_P_IMPORT] = p_import, [IR_P_ASSERT_FAIL] = p_assert_fail,
  [IR_P_CHECK_BOUND] = p_check_bound,
};

BuiltinFn ev_prim_fn(IrPrim p) { return prim_fns[p]; }
