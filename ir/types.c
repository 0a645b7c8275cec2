/* types.c: the type lattice of inference (types.h): making types,
 * equality, join, the type of a value, and the text form (printed and
 * parsed; docs/types.md).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/types.h"
#include "lang/gc.h"
#include "lang/tensor.h"

/* Joins deeper than this give `any`, so that a loop building nested
 * structure (a chain of closures or tuples) reaches its fixed point. */
enum { MAX_DEPTH = 8, MAX_FNSET = 4 };

IrType ir_t_never = {.kind = IT_NEVER}, ir_t_any = {.kind = IT_ANY}, ir_t_none = {.kind = IT_NONE},
       ir_t_bool = {.kind = IT_BOOL}, ir_t_int = {.kind = IT_INT}, ir_t_float = {.kind = IT_FLOAT},
       ir_t_str = {.kind = IT_STR}, ir_t_slice = {.kind = IT_SLICE},
       ir_t_unbound = {.kind = IT_UNBOUND}, ir_t_module = {.kind = IT_MODULE},
       ir_t_range = {.kind = IT_RANGE};

static IrType *type_new(IrTypeKind k) {
  IrType *t = lang_alloc(sizeof *t);
  t->kind = k;
  t->dtype = -1;
  return t;
}

IrType *ir_type_int_val(int64_t v) {
  IrType *t = type_new(IT_INT);
  t->has_val = true;
  t->ival = v;
  return t;
}

IrType *ir_type_bool_val(bool b) {
  IrType *t = type_new(IT_BOOL);
  t->has_val = true;
  t->ival = b;
  return t;
}

IrType *ir_type_tensor(int dt, int ndim, const int64_t *dims) {
  IrType *t = type_new(IT_TENSOR);
  t->dtype = dt;
  t->n = ndim;
  if (ndim > 0) {
    t->dims = lang_alloc_atomic((size_t)ndim * sizeof *t->dims);
    for (int i = 0; i < ndim; i++) t->dims[i] = dims ? dims[i] : -1;
  }
  return t;
}

static IrType *with_items(IrTypeKind k, int n, IrType **items) {
  IrType *t = type_new(k);
  t->n = n;
  int m = n < 0 ? 1 : n;
  if (m > 0) {
    t->items = lang_alloc((size_t)m * sizeof *t->items);
    memcpy(t->items, items, (size_t)m * sizeof *items);
  }
  return t;
}

IrType *ir_type_tuple(int n, IrType **items) { return with_items(IT_TUPLE, n, items); }
IrType *ir_type_list(int n, IrType **items) { return with_items(IT_LIST, n, items); }

IrType *ir_type_dict(int n, ObjStr **keys, IrType **values) {
  IrType *t = with_items(IT_DICT, n, values);
  if (n > 0) {
    t->keys = lang_alloc((size_t)n * sizeof *t->keys);
    memcpy(t->keys, keys, (size_t)n * sizeof *keys);
  }
  return t;
}

IrType *ir_type_env(int n, const int64_t *keys, IrType **values) {
  IrType *t = with_items(IT_ENV, n, values);
  if (n > 0) {
    t->ekeys = lang_alloc_atomic((size_t)n * sizeof *t->ekeys);
    memcpy(t->ekeys, keys, (size_t)n * sizeof *keys);
  }
  return t;
}

IrType *ir_type_builtin(ObjBuiltin *b) {
  IrType *t = type_new(IT_BUILTIN);
  t->builtin = b;
  return t;
}

IrType *ir_type_bound(ObjBuiltin *b, IrType *self) {
  IrType *t = with_items(IT_BUILTIN, 1, &self);
  t->builtin = b;
  return t;
}

IrType *ir_type_str_val(ObjStr *s) {
  IrType *t = type_new(IT_STR);
  t->sval = s;
  return t;
}

IrType *ir_type_slice_val(int64_t start, int64_t stop, int64_t step) {
  IrType *t = type_new(IT_SLICE);
  int64_t d[3] = {start, stop, step};
  t->n = 3;
  t->dims = lang_alloc_atomic(sizeof d);
  memcpy(t->dims, d, sizeof d);
  return t;
}

/* Python's slice.indices, then the count */
int64_t ir_type_slice_count(const IrType *t, int64_t len, int64_t *first, int64_t *step) {
  if (t->kind != IT_SLICE || t->n != 3 || len < 0) return -1;
  int64_t st = t->dims[2] == IR_SLICE_NONE ? 1 : t->dims[2];
  if (st == 0 || st == INT64_MIN) return -1;
  int64_t lo, hi;
  int64_t a = t->dims[0], b = t->dims[1];
  if (st > 0) {
    lo = a == IR_SLICE_NONE ? 0 : a < 0 ? (a + len < 0 ? 0 : a + len) : (a > len ? len : a);
    hi = b == IR_SLICE_NONE ? len : b < 0 ? (b + len < 0 ? 0 : b + len) : (b > len ? len : b);
    *first = lo;
    *step = st;
    return hi > lo ? (hi - lo + st - 1) / st : 0;
  }
  lo = a == IR_SLICE_NONE ? len - 1 : a < 0 ? (a + len < 0 ? -1 : a + len) : (a >= len ? len - 1 : a);
  hi = b == IR_SLICE_NONE ? -1 : b < 0 ? (b + len < 0 ? -1 : b + len) : (b >= len ? len - 1 : b);
  *first = lo;
  *step = st;
  return lo > hi ? (lo - hi - st - 1) / -st : 0;
}

IrType *ir_type_closure(IrGraph *g, struct InferSpec *ctx) {
  IrType *t = type_new(IT_CLOSURE);
  t->graph = g;
  t->ctx = ctx;
  return t;
}

static IrType *flagged(const IrType *t, bool none, bool unbound) {
  if (t->or_none == none && t->or_unbound == unbound) return (IrType *)t;
  IrType *r = lang_alloc(sizeof *r);
  *r = *t;
  r->or_none = none;
  r->or_unbound = unbound;
  return r;
}

IrType *ir_type_or_none(const IrType *t) {
  if (t->kind == IT_NONE || t->kind == IT_ANY) return (IrType *)t;
  if (t->kind == IT_NEVER) return &ir_t_none;
  if (t->kind == IT_UNBOUND) return flagged(&ir_t_none, false, true);
  return flagged(t, true, t->or_unbound);
}

IrType *ir_type_or_unbound(const IrType *t) {
  if (t->kind == IT_UNBOUND || t->kind == IT_ANY) return (IrType *)t;
  if (t->kind == IT_NEVER) return &ir_t_unbound;
  return flagged(t, t->or_none, true);
}

IrType *ir_type_strip_none(const IrType *t) { return flagged(t, false, t->or_unbound); }

IrType *ir_type_strip_unbound(const IrType *t) { return flagged(t, t->or_none, false); }

bool ir_type_is_number(const IrType *t) {
  return t->kind == IT_BOOL || t->kind == IT_INT || t->kind == IT_FLOAT;
}

/* Two builtins are the same when they are one object or the same
 * primitive (the reader and the lowering make their own placeholders). */
static bool same_builtin(const ObjBuiltin *a, const ObjBuiltin *b) {
  return a == b || (a->prim >= 0 && a->prim == b->prim);
}

bool ir_type_eq(const IrType *a, const IrType *b) {
  if (a == b) return true;
  if (a->kind != b->kind || a->n != b->n || a->or_none != b->or_none || a->or_unbound != b->or_unbound)
    return false;
  switch (a->kind) {
  case IT_INT: case IT_BOOL:
    return a->has_val == b->has_val && (!a->has_val || a->ival == b->ival);
  case IT_TENSOR: case IT_SLICE:
    if (a->dtype != b->dtype) return false;
    for (int i = 0; i < a->n; i++)
      if (a->dims[i] != b->dims[i]) return false;
    return true;
  case IT_STR: return a->sval == b->sval || (a->sval && b->sval && lang_str_eq(a->sval, b->sval));
  case IT_BUILTIN:
    return same_builtin(a->builtin, b->builtin) && (a->n == 0 || ir_type_eq(a->items[0], b->items[0]));
  case IT_CLOSURE: return a->graph == b->graph && a->ctx == b->ctx;
  case IT_TUPLE: case IT_LIST: case IT_DICT: case IT_ENV: case IT_FNSET: {
    int m = a->kind == IT_LIST && a->n < 0 ? 1 : a->n;
    for (int i = 0; i < m; i++) {
      if (a->kind == IT_DICT && !lang_str_eq(a->keys[i], b->keys[i])) return false;
      if (a->kind == IT_ENV && a->ekeys[i] != b->ekeys[i]) return false;
      if (!ir_type_eq(a->items[i], b->items[i])) return false;
    }
    return true;
  }
  default: return true;
  }
}

static int depth(const IrType *t) {
  int d = 0, m = t->kind == IT_LIST && t->n < 0 ? 1 : t->n;
  if (t->kind == IT_TUPLE || t->kind == IT_LIST || t->kind == IT_DICT || t->kind == IT_ENV)
    for (int i = 0; i < m; i++) {
      int k = depth(t->items[i]);
      if (k > d) d = k;
    }
  return d + 1;
}

/* The closures of a closure or closure set, for joining sets. */
static int closures_of(const IrType *t, const IrType **out) {
  if (t->kind == IT_CLOSURE) {
    out[0] = t;
    return 1;
  }
  for (int i = 0; i < t->n; i++) out[i] = t->items[i];
  return t->n;
}

static IrType *join_fns(const IrType *a, const IrType *b) {
  const IrType *all[2 * MAX_FNSET];
  int n = closures_of(a, all);
  const IrType *more[MAX_FNSET];
  int m = closures_of(b, more);
  for (int i = 0; i < m; i++) {
    bool seen = false;
    for (int j = 0; j < n && !seen; j++) seen = ir_type_eq(all[j], more[i]);
    if (!seen) all[n++] = more[i];
  }
  if (n > MAX_FNSET) return &ir_t_any;
  if (n == 1) return (IrType *)all[0];
  return with_items(IT_FNSET, n, (IrType **)all);
}

static IrType *join_some(const IrType *a, const IrType *b);

static IrType *join(const IrType *a, const IrType *b) {
  if (ir_type_eq(a, b)) return (IrType *)a;
  if (a->kind == IT_NEVER) return (IrType *)b;
  if (b->kind == IT_NEVER) return (IrType *)a;
  if (a->kind == IT_ANY || b->kind == IT_ANY) return &ir_t_any;
  /* None and Unbound join as flags of the other type */
  bool none = a->or_none || b->or_none || a->kind == IT_NONE || b->kind == IT_NONE;
  bool unbound = a->or_unbound || b->or_unbound || a->kind == IT_UNBOUND || b->kind == IT_UNBOUND;
  IrType *x = flagged(a, false, false), *y = flagged(b, false, false);
  IrType *r;
  if (x->kind == IT_NONE || x->kind == IT_UNBOUND) r = y;
  else if (y->kind == IT_NONE || y->kind == IT_UNBOUND) r = x;
  else r = join_some(x, y);
  if (r->kind == IT_NONE || r->kind == IT_UNBOUND) {
    /* both sides were None or Unbound */
    if (none && unbound) return flagged(&ir_t_none, false, true);
    return none ? &ir_t_none : &ir_t_unbound;
  }
  if (none) r = ir_type_or_none(r);
  if (unbound) r = ir_type_or_unbound(r);
  return r;
}

/* the join of two types that are not None, never or any */
static IrType *join_some(const IrType *a, const IrType *b) {
  if (ir_type_eq(a, b)) return (IrType *)a;
  bool afn = a->kind == IT_CLOSURE || a->kind == IT_FNSET;
  bool bfn = b->kind == IT_CLOSURE || b->kind == IT_FNSET;
  if (afn && bfn) return join_fns(a, b);
  if (a->kind != b->kind) return &ir_t_any;
  switch (a->kind) {
  case IT_INT: return &ir_t_int;
  case IT_BOOL: return &ir_t_bool;
  case IT_STR: return &ir_t_str;
  case IT_SLICE: return &ir_t_slice;
  case IT_BUILTIN: return &ir_t_any;
  case IT_TENSOR: {
    int dt = a->dtype == b->dtype ? a->dtype : -1;
    if (a->n != b->n) return ir_type_tensor(dt, -1, NULL);
    IrType *t = ir_type_tensor(dt, a->n, NULL);
    for (int i = 0; i < a->n; i++) t->dims[i] = a->dims[i] == b->dims[i] ? a->dims[i] : -1;
    return t;
  }
  case IT_LIST:
    if (a->n != b->n) {
      /* lists of other lengths: a list of any length of the items' join */
      IrType *item = &ir_t_never;
      for (int i = 0; i < (a->n < 0 ? 1 : a->n); i++) item = join(item, a->items[i]);
      for (int i = 0; i < (b->n < 0 ? 1 : b->n); i++) item = join(item, b->items[i]);
      return ir_type_list(-1, &item);
    }
    /* fall through */
  case IT_TUPLE: case IT_DICT: case IT_ENV: {
    bool same_keys = a->kind == IT_ENV && a->n == b->n;
    for (int i = 0; same_keys && i < a->n; i++) same_keys = a->ekeys[i] == b->ekeys[i];
    if (a->kind == IT_ENV && !same_keys) {
      /* envs with other keys: the union of the keys, a missing one None */
      int64_t keys[64];
      IrType *vals[64];
      int n = 0, i = 0, j = 0;
      while (i < a->n || j < b->n) {
        if (n == 64) return &ir_t_any;
        if (j >= b->n || (i < a->n && a->ekeys[i] < b->ekeys[j])) {
          keys[n] = a->ekeys[i];
          vals[n++] = join(a->items[i++], &ir_t_none);
        } else if (i >= a->n || b->ekeys[j] < a->ekeys[i]) {
          keys[n] = b->ekeys[j];
          vals[n++] = join(b->items[j++], &ir_t_none);
        } else {
          keys[n] = a->ekeys[i];
          vals[n++] = join(a->items[i++], b->items[j++]);
        }
      }
      return ir_type_env(n, keys, vals);
    }
    if (a->n != b->n) return &ir_t_any;
    int m = a->n < 0 ? 1 : a->n;
    IrType **items = lang_alloc((size_t)(m ? m : 1) * sizeof *items);
    for (int i = 0; i < m; i++) {
      if (a->kind == IT_DICT && !lang_str_eq(a->keys[i], b->keys[i])) return &ir_t_any;
      if (a->kind == IT_ENV && a->ekeys[i] != b->ekeys[i]) return &ir_t_any;
      items[i] = join(a->items[i], b->items[i]);
    }
    if (a->kind == IT_DICT) return ir_type_dict(m, a->keys, items);
    if (a->kind == IT_ENV) return ir_type_env(m, a->ekeys, items);
    return with_items(a->kind, a->n, items);
  }
  default: return &ir_t_any;
  }
}

IrType *ir_type_join(const IrType *a, const IrType *b) {
  IrType *t = join(a, b);
  if (t != a && t != b && depth(t) > MAX_DEPTH) return &ir_t_any;
  return t;
}

/* ---- values ---- */

enum { MAX_LIST_ITEMS = 32 };

typedef struct ValueTyper {
  IrType *(*fn_type)(void *ud, ObjFunc *f, int depth);
  void *ud;
  int depth;
} ValueTyper;

static IrType *value_type(ValueTyper *vt, Value v);
static IrType *value_type_at(ValueTyper *vt, Value v);

IrType *ir_type_of_value(Value v) {
  ValueTyper vt = {NULL, NULL, 0};
  return value_type(&vt, v);
}

IrType *ir_type_of_value_with(Value v, IrType *(*fn_type)(void *ud, ObjFunc *f, int depth),
                              void *ud, int depth) {
  ValueTyper vt = {fn_type, ud, depth};
  return value_type(&vt, v);
}

static IrType *value_type(ValueTyper *vt, Value v) {
  if (vt->depth > MAX_DEPTH) return &ir_t_any;
  vt->depth++;
  IrType *t = value_type_at(vt, v);
  vt->depth--;
  return t;
}

static IrType *value_type_at(ValueTyper *vt, Value v) {
  switch (v.tag) {
  case V_NONE: return &ir_t_none;
  case V_BOOL: return ir_type_bool_val(v.b);
  case V_INT: return ir_type_int_val(v.i);
  case V_FLOAT: return &ir_t_float;
  case V_UNBOUND: return &ir_t_unbound;
  case V_OBJ: break;
  }
  switch (v.o->kind) {
  case O_STR: return ir_type_str_val(AS_STR(v));
  case O_SLICE: {
    ObjSlice *sl = AS_SLICE(v);
    Value parts[3] = {sl->start, sl->stop, sl->step};
    int64_t d[3];
    for (int i = 0; i < 3; i++) {
      if (parts[i].tag == V_NONE) d[i] = IR_SLICE_NONE;
      else if (parts[i].tag == V_INT && parts[i].i != IR_SLICE_NONE) d[i] = parts[i].i;
      else return &ir_t_slice;
    }
    return ir_type_slice_val(d[0], d[1], d[2]);
  }
  case O_MODULE: return &ir_t_module;
  case O_RANGE: return &ir_t_range;
  case O_TENSOR: {
    ObjTensor *t = AS_TENSOR(v);
    return ir_type_tensor(t->dtype, t->ndim, t->shape);
  }
  case O_TUPLE: case O_LIST: {
    ObjSeq *s = AS_SEQ(v);
    size_t n = s->len;
    if (v.o->kind == O_LIST && n > MAX_LIST_ITEMS) {
      IrType *item = &ir_t_never;
      for (size_t i = 0; i < n && item->kind != IT_ANY; i++)
        item = ir_type_join(item, value_type(vt, AS_SEQ(v)->items[i]));
      return ir_type_list(-1, &item);
    }
    if (n > 64) return &ir_t_any;
    IrType *items[64];
    for (size_t i = 0; i < n; i++) items[i] = value_type(vt, AS_SEQ(v)->items[i]);
    return v.o->kind == O_TUPLE ? ir_type_tuple((int)n, items) : ir_type_list((int)n, items);
  }
  case O_DICT: {
    ObjDict *d = AS_DICT(v);
    if (d->len > 64) return &ir_t_any;
    ObjStr *keys[64];
    IrType *vals[64];
    for (size_t i = 0; i < d->len; i++) {
      keys[i] = d->entries[i].key;
      vals[i] = value_type(vt, AS_DICT(v)->entries[i].value);
    }
    return ir_type_dict((int)d->len, keys, vals);
  }
  case O_ENV: {
    ObjEnv *e = AS_ENV(v);
    if (e->len > 64) return &ir_t_any;
    int64_t keys[64];
    IrType *vals[64];
    for (size_t i = 0; i < e->len; i++) {
      keys[i] = e->items[i].key;
      vals[i] = value_type(vt, e->items[i].value);
    }
    return ir_type_env((int)e->len, keys, vals);
  }
  case O_BUILTIN: return ir_type_builtin(AS_BUILTIN(v));
  case O_FUNC:
    /* defaults are the graph's own nodes' values: constants, or free
     * variables (then nenv > 0) */
    if (AS_FUNC(v)->nenv == 0) return ir_type_closure(AS_FUNC(v)->graph, NULL);
    return vt->fn_type ? vt->fn_type(vt->ud, AS_FUNC(v), vt->depth) : &ir_t_any;
  default: return &ir_t_any;
  }
}

bool ir_type_has_value(const IrType *t, Value v) {
  if (t->or_none && v.tag == V_NONE) return true;
  if (t->or_unbound && v.tag == V_UNBOUND) return true;
  switch (t->kind) {
  case IT_ANY: return true;
  case IT_NEVER: return false;
  case IT_NONE: return v.tag == V_NONE;
  case IT_BOOL: return v.tag == V_BOOL && (!t->has_val || v.b == (t->ival != 0));
  case IT_INT: return v.tag == V_INT && (!t->has_val || v.i == t->ival);
  case IT_FLOAT: return v.tag == V_FLOAT;
  case IT_UNBOUND: return v.tag == V_UNBOUND;
  default: break;
  }
  if (v.tag != V_OBJ) return false;
  if (v.o->kind == O_SPARSE) {
    /* a sensitivity kept in parts (ir/prims.c): it has the structure of
     * the value it is the sensitivity of */
    Value like = AS_SPARSE(v)->like;
    return (t->kind == IT_TENSOR && v_is_tensor(like)) ||
           ((t->kind == IT_LIST || t->kind == IT_TUPLE) && like.tag == V_OBJ &&
            like.o->kind == (t->kind == IT_LIST ? O_LIST : O_TUPLE));
  }
  switch (t->kind) {
  case IT_STR: return v.o->kind == O_STR && (!t->sval || lang_str_eq(t->sval, AS_STR(v)));
  case IT_SLICE: {
    if (v.o->kind != O_SLICE) return false;
    if (t->n != 3) return true;
    Value parts[3] = {AS_SLICE(v)->start, AS_SLICE(v)->stop, AS_SLICE(v)->step};
    for (int i = 0; i < 3; i++)
      if (t->dims[i] == IR_SLICE_NONE ? parts[i].tag != V_NONE : parts[i].tag != V_INT || parts[i].i != t->dims[i])
        return false;
    return true;
  }
  case IT_MODULE: return v.o->kind == O_MODULE;
  case IT_RANGE: return v.o->kind == O_RANGE;
  case IT_TENSOR: {
    if (v.o->kind != O_TENSOR) return false;
    ObjTensor *x = AS_TENSOR(v);
    if (t->dtype >= 0 && (int)x->dtype != t->dtype) return false;
    if (t->n < 0) return true;
    if (x->ndim != t->n) return false;
    for (int i = 0; i < t->n; i++)
      if (t->dims[i] >= 0 && t->dims[i] != x->shape[i]) return false;
    return true;
  }
  case IT_TUPLE: case IT_LIST: {
    if (v.o->kind != (t->kind == IT_TUPLE ? O_TUPLE : O_LIST)) return false;
    size_t n = AS_SEQ(v)->len;
    if (t->n >= 0 && n != (size_t)t->n) return false;
    for (size_t i = 0; i < n; i++)
      if (!ir_type_has_value(t->n < 0 ? t->items[0] : t->items[i], AS_SEQ(v)->items[i]))
        return false;
    return true;
  }
  case IT_DICT: {
    if (v.o->kind != O_DICT || AS_DICT(v)->len != (size_t)t->n) return false;
    for (int i = 0; i < t->n; i++) {
      DictEntry *e = &AS_DICT(v)->entries[i];
      if (!lang_str_eq(e->key, t->keys[i]) || !ir_type_has_value(t->items[i], e->value))
        return false;
    }
    return true;
  }
  case IT_ENV: {
    if (v.o->kind != O_ENV) return false;
    ObjEnv *e = AS_ENV(v);
    /* each entry under a key the type has; keys it lacks are None (zero) */
    for (size_t i = 0; i < e->len; i++) {
      int j = 0;
      while (j < t->n && t->ekeys[j] != e->items[i].key) j++;
      if (j == t->n || !ir_type_has_value(t->items[j], e->items[i].value)) return false;
    }
    return true;
  }
  case IT_BUILTIN:
    if (t->n == 1) return v.o->kind == O_BOUND || v.o->kind == O_BUILTIN;
    return v.o->kind == O_BUILTIN && same_builtin(AS_BUILTIN(v), t->builtin);
  case IT_CLOSURE: return v.o->kind == O_FUNC && AS_FUNC(v)->graph == t->graph;
  case IT_FNSET:
    for (int i = 0; i < t->n; i++)
      if (ir_type_has_value(t->items[i], v)) return true;
    return false;
  default: return false;
  }
}

/* ---- printing ---- */

static const char *dtype_names[] = {"bool", "i32", "i64", "f32", "f64"};

static void print_some(const IrType *t, StrBuf *out,
                       const char *(*graph_name)(void *ud, IrGraph *g), void *ud);

void ir_type_print(const IrType *t, StrBuf *out, const char *(*graph_name)(void *ud, IrGraph *g),
                   void *ud) {
  print_some(t, out, graph_name, ud);
  if (t->or_none) sb_adds(out, " | None");
  if (t->or_unbound) sb_adds(out, " | Unbound");
}

static void print_some(const IrType *t, StrBuf *out,
                       const char *(*graph_name)(void *ud, IrGraph *g), void *ud) {
  switch (t->kind) {
  case IT_NEVER: sb_adds(out, "never"); return;
  case IT_ANY: sb_adds(out, "any"); return;
  case IT_NONE: sb_adds(out, "None"); return;
  case IT_BOOL: sb_adds(out, "bool"); return;
  case IT_INT: sb_adds(out, "int"); return;
  case IT_FLOAT: sb_adds(out, "float"); return;
  case IT_STR: sb_adds(out, "str"); return;
  case IT_SLICE: sb_adds(out, "slice"); return;
  case IT_UNBOUND: sb_adds(out, "Unbound"); return;
  case IT_MODULE: sb_adds(out, "module"); return;
  case IT_RANGE: sb_adds(out, "range"); return;
  case IT_TENSOR:
    sb_adds(out, t->dtype >= 0 ? dtype_names[t->dtype] : "tensor");
    sb_addc(out, '[');
    if (t->n < 0) sb_adds(out, "...");
    for (int i = 0; i < t->n; i++) {
      if (i) sb_addc(out, ',');
      if (t->dims[i] < 0) sb_addc(out, '?');
      else sb_printf(out, "%lld", (long long)t->dims[i]);
    }
    sb_addc(out, ']');
    return;
  case IT_TUPLE:
    sb_addc(out, '(');
    for (int i = 0; i < t->n; i++) {
      if (i) sb_adds(out, ", ");
      ir_type_print(t->items[i], out, graph_name, ud);
    }
    if (t->n == 1) sb_addc(out, ',');
    sb_addc(out, ')');
    return;
  case IT_LIST:
    sb_addc(out, '[');
    for (int i = 0; i < (t->n < 0 ? 1 : t->n); i++) {
      if (i) sb_adds(out, ", ");
      ir_type_print(t->items[i], out, graph_name, ud);
    }
    if (t->n < 0) sb_adds(out, ", ...");
    sb_addc(out, ']');
    return;
  case IT_DICT:
    sb_addc(out, '{');
    for (int i = 0; i < t->n; i++) {
      if (i) sb_adds(out, ", ");
      ir_str_literal(out, t->keys[i]->data, t->keys[i]->len, false);
      sb_adds(out, ": ");
      ir_type_print(t->items[i], out, graph_name, ud);
    }
    sb_addc(out, '}');
    return;
  case IT_ENV:
    sb_adds(out, "env{");
    for (int i = 0; i < t->n; i++) {
      if (i) sb_adds(out, ", ");
      sb_printf(out, "%lld: ", (long long)t->ekeys[i]);
      ir_type_print(t->items[i], out, graph_name, ud);
    }
    sb_addc(out, '}');
    return;
  case IT_BUILTIN:
    if (t->builtin->prim >= 0) sb_printf(out, "prim.%s", ir_prims[t->builtin->prim].name);
    else sb_printf(out, "$%s", t->builtin->name);
    return;
  case IT_CLOSURE: {
    const char *name = graph_name ? graph_name(ud, t->graph) : t->graph->name->data;
    sb_printf(out, name ? "@%s" : "any", name);
    return;
  }
  case IT_FNSET:
    for (int i = 0; i < t->n && graph_name; i++)
      if (!graph_name(ud, t->items[i]->graph)) {
        sb_adds(out, "any");
        return;
      }
    for (int i = 0; i < t->n; i++) {
      if (i) sb_adds(out, " | ");
      ir_type_print(t->items[i], out, graph_name, ud);
    }
    return;
  }
}

const char *ir_type_str(const IrType *t) {
  StrBuf sb;
  sb_init(&sb);
  ir_type_print(t, &sb, NULL, NULL);
  return sb.data;
}

/* ---- parsing ---- */

typedef struct TParser {
  MistVM *vm;
  const char *s, *p, *end;
  const char *err;
  IrGraph *(*find_graph)(void *ud, const char *name, size_t n);
  void *ud;
} TParser;

static void skip_ws(TParser *tp) {
  while (tp->p < tp->end && (*tp->p == ' ' || *tp->p == '\t')) tp->p++;
}

static bool eat(TParser *tp, char c) {
  skip_ws(tp);
  if (tp->p < tp->end && *tp->p == c) {
    tp->p++;
    return true;
  }
  return false;
}

static IrType *fail(TParser *tp, const char *msg) {
  if (!tp->err) tp->err = msg;
  return NULL;
}

static bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

static size_t word(TParser *tp, const char **w) {
  skip_ws(tp);
  *w = tp->p;
  while (tp->p < tp->end && word_char(*tp->p) && !(*tp->p == '.' && tp->p == *w)) tp->p++;
  return (size_t)(tp->p - *w);
}

static bool is_word(const char *w, size_t n, const char *kw) {
  return strlen(kw) == n && memcmp(w, kw, n) == 0;
}

static bool parse_int(TParser *tp, int64_t *out) {
  skip_ws(tp);
  bool neg = eat(tp, '-');
  if (tp->p >= tp->end || *tp->p < '0' || *tp->p > '9') return false;
  int64_t v = 0;
  while (tp->p < tp->end && *tp->p >= '0' && *tp->p <= '9') {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*tp->p++ - '0');
  }
  *out = neg ? -v : v;
  return true;
}

static IrType *ptype(TParser *tp, int depth);

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A list of types up to the closing character; for [..., ...] the
 * trailing `, ...` of a list of any length sets *rest. */
static int ptypes(TParser *tp, int depth, char close, IrType ***items, bool *rest) {
  int n = 0, cap = 0;
  *items = NULL;
  if (eat(tp, close)) return 0;
  for (;;) {
    skip_ws(tp);
    if (rest && tp->end - tp->p >= 3 && memcmp(tp->p, "...", 3) == 0 && n == 1) {
      tp->p += 3;
      *rest = true;
      if (!eat(tp, close)) return fail(tp, "expected ']' after '...'"), -1;
      return n;
    }
    IrType *t = ptype(tp, depth + 1);
    if (!t) return -1;
    if (n == cap) {
      cap = cap ? 2 * cap : 4;
      *items = lang_realloc(*items, (size_t)cap * sizeof **items);
    }
    (*items)[n++] = t;
    if (eat(tp, close)) return n;
    if (!eat(tp, ',')) return fail(tp, "expected ',' or a closing bracket"), -1;
    if (close == ')' && eat(tp, ')')) return n;
  }
}

static IrType *ptensor(TParser *tp, int dt) {
  if (!eat(tp, '[')) return fail(tp, "expected '[' after a dtype");
  skip_ws(tp);
  if (tp->end - tp->p >= 3 && memcmp(tp->p, "...", 3) == 0) {
    tp->p += 3;
    if (!eat(tp, ']')) return fail(tp, "expected ']'");
    return ir_type_tensor(dt, -1, NULL);
  }
  int64_t dims[LANG_TENSOR_MAX_DIMS];
  int n = 0;
  if (eat(tp, ']')) return ir_type_tensor(dt, 0, NULL);
  for (;;) {
    if (n == LANG_TENSOR_MAX_DIMS) return fail(tp, "too many dimensions");
    if (eat(tp, '?')) dims[n++] = -1;
    else if (parse_int(tp, &dims[n]) && dims[n] >= 0) n++;
    else return fail(tp, "expected a dimension (a number or ?)");
    if (eat(tp, ']')) return ir_type_tensor(dt, n, dims);
    if (!eat(tp, ',')) return fail(tp, "expected ',' or ']'");
  }
}

static IrType *pclosure(TParser *tp) {
  const char *w = ++tp->p, *q = tp->p;
  while (q < tp->end && word_char(*q)) q++;
  tp->p = q;
  if (q == w) return fail(tp, "expected a graph name after '@'");
  IrGraph *g = tp->find_graph ? tp->find_graph(tp->ud, w, (size_t)(q - w)) : NULL;
  if (!g) return tp->p = w - 1, fail(tp, "unknown graph");
  return ir_type_closure(g, NULL);
}

static IrType *pone(TParser *tp, int depth) {
  if (depth > 64) return fail(tp, "type nested too deeply");
  skip_ws(tp);
  if (tp->p >= tp->end) return fail(tp, "expected a type");
  char c = *tp->p;
  if (c == '(') {
    tp->p++;
    IrType **items;
    const char *open = tp->p;
    int n = ptypes(tp, depth, ')', &items, NULL);
    if (n < 0) return NULL;
    if (n == 1 && tp->p[-1] == ')' && tp->p - 2 >= open) {
      /* (t) without the comma is not a tuple */
      const char *q = tp->p - 2;
      while (q > open && (*q == ' ' || *q == '\t')) q--;
      if (*q != ',') return fail(tp, "a one-item tuple type needs a trailing comma: (t,)");
    }
    return ir_type_tuple(n, items);
  }
  if (c == '[') {
    tp->p++;
    IrType **items;
    bool rest = false;
    int n = ptypes(tp, depth, ']', &items, &rest);
    if (n < 0) return NULL;
    return rest ? ir_type_list(-1, items) : ir_type_list(n, items);
  }
  if (c == '{') {
    tp->p++;
    ObjStr **keys = NULL;
    IrType **vals = NULL;
    int n = 0;
    if (eat(tp, '}')) return ir_type_dict(0, NULL, NULL);
    for (;;) {
      skip_ws(tp);
      if (tp->p >= tp->end || *tp->p != '"') return fail(tp, "expected a str key");
      StrBuf sb;
      sb_init(&sb);
      tp->p++;
      while (tp->p < tp->end && *tp->p != '"') {
        if (*tp->p == '\\' && tp->p + 1 < tp->end) {
          tp->p++;
          char e = *tp->p;
          int hi, lo;
          if (e == 'x' && tp->end - tp->p >= 3 && (hi = hexval(tp->p[1])) >= 0 &&
              (lo = hexval(tp->p[2])) >= 0) {
            sb_addc(&sb, (char)(hi * 16 + lo));
            tp->p += 2;
          } else {
            sb_addc(&sb, e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e);
          }
        } else {
          sb_addc(&sb, *tp->p);
        }
        tp->p++;
      }
      if (tp->p >= tp->end) return fail(tp, "unterminated str key");
      tp->p++;
      if (!lang_utf8_valid(sb.data ? sb.data : "", sb.len)) return fail(tp, "invalid UTF-8 in a key");
      if (!eat(tp, ':')) return fail(tp, "expected ':' after a key");
      IrType *v = ptype(tp, depth + 1);
      if (!v) return NULL;
      keys = lang_realloc(keys, (size_t)(n + 1) * sizeof *keys);
      vals = lang_realloc(vals, (size_t)(n + 1) * sizeof *vals);
      keys[n] = lang_str_new(sb.data ? sb.data : "", sb.len);
      vals[n++] = v;
      if (eat(tp, '}')) return ir_type_dict(n, keys, vals);
      if (!eat(tp, ',')) return fail(tp, "expected ',' or '}'");
    }
  }
  if (c == '@') return pclosure(tp);
  if (c == '$') {
    tp->p++;
    const char *w;
    size_t n = word(tp, &w);
    Value b;
    if (!n || !tp->vm || !tp->vm->builtins ||
        !lang_dict_get(tp->vm->builtins, lang_str_new(w, n), &b) || !v_is_obj(b, O_BUILTIN))
      return tp->p = w - 1, fail(tp, "unknown builtin");
    return ir_type_builtin(AS_BUILTIN(b));
  }
  const char *w;
  size_t n = word(tp, &w);
  if (n == 0) return fail(tp, "expected a type");
  if (n > 5 && memcmp(w, "prim.", 5) == 0) {
    int p = ir_prim_lookup(w + 5, n - 5);
    if (p < 0) return tp->p = w, fail(tp, "unknown primitive");
    ObjBuiltin *b = lang_builtin_new(ir_prims[p].name, NULL, -1, -1);
    b->prim = p;
    return ir_type_builtin(b);
  }
  static IrType *const simple[] = {&ir_t_never, &ir_t_any, &ir_t_none, &ir_t_bool, &ir_t_int,
                                   &ir_t_float, &ir_t_str, &ir_t_slice, &ir_t_unbound, &ir_t_module,
                                   &ir_t_range};
  static const char *const simple_names[] = {"never", "any", "None", "bool", "int",
                                             "float", "str", "slice", "Unbound", "module",
                                             "range"};
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
    if (is_word(w, n, simple_names[i])) {
      /* bool, unless it is the dtype bool[...] */
      if (i == 3 && tp->p < tp->end && *tp->p == '[') break;
      return simple[i];
    }
  for (int d = 0; d < 5; d++)
    if (is_word(w, n, dtype_names[d])) return ptensor(tp, d);
  if (is_word(w, n, "tensor")) return ptensor(tp, -1);
  if (is_word(w, n, "env")) {
    if (!eat(tp, '{')) return fail(tp, "expected '{' after env");
    int64_t keys[64];
    IrType *vals[64];
    int k = 0;
    if (eat(tp, '}')) return fail(tp, "an empty env is None");
    for (;;) {
      if (k == 64) return fail(tp, "too many env keys");
      if (!parse_int(tp, &keys[k])) return fail(tp, "expected an int key");
      if (k > 0 && keys[k] <= keys[k - 1]) return fail(tp, "env keys must ascend");
      if (!eat(tp, ':')) return fail(tp, "expected ':' after a key");
      if (!(vals[k++] = ptype(tp, depth + 1))) return NULL;
      if (eat(tp, '}')) return ir_type_env(k, keys, vals);
      if (!eat(tp, ',')) return fail(tp, "expected ',' or '}'");
    }
  }
  tp->p = w;
  return fail(tp, "unknown type");
}

/* type -> one { '|' ( closure | 'None' | 'Unbound' ) }: '|' joins
 * closures, or adds None or Unbound to a type, in that order */
static IrType *ptype(TParser *tp, int depth) {
  IrType *t = pone(tp, depth);
  if (!t) return NULL;
  while (eat(tp, '|')) {
    skip_ws(tp);
    const char *at = tp->p;
    if (tp->p < tp->end && *tp->p == '@') {
      if ((t->kind != IT_CLOSURE && t->kind != IT_FNSET) || t->or_none || t->or_unbound)
        return fail(tp, "'|' joins closures, then None, then Unbound");
      IrType *u = pclosure(tp);
      if (!u) return NULL;
      IrType *j = ir_type_join(t, u);
      if (j->kind == IT_ANY) return fail(tp, "too many closures joined");
      if (j == t) return fail(tp, "a closure joined twice");
      t = j;
      continue;
    }
    const char *w;
    size_t n = word(tp, &w);
    if (is_word(w, n, "None") && !t->or_none && !t->or_unbound && t->kind != IT_NONE &&
        t->kind != IT_UNBOUND && t->kind != IT_ANY && t->kind != IT_NEVER) {
      t = ir_type_or_none(t);
    } else if (is_word(w, n, "Unbound") && !t->or_unbound && t->kind != IT_UNBOUND &&
               t->kind != IT_ANY && t->kind != IT_NEVER) {
      t = ir_type_or_unbound(t);
    } else {
      tp->p = at;
      return fail(tp, "'|' joins closures, then None, then Unbound");
    }
  }
  return t;
}

IrType *ir_type_parse(MistVM *vm, const char *text, size_t len, size_t *used, const char **err,
                      IrGraph *(*find_graph)(void *ud, const char *name, size_t n), void *ud) {
  TParser tp = {vm, text, text, text + len, NULL, find_graph, ud};
  IrType *t = ptype(&tp, 0);
  *used = (size_t)(tp.p - text);
  *err = t ? NULL : tp.err ? tp.err : "bad type";
  return t;
}
