/* io.c: the C half of the `io` module (stdlib/io.ms): trees of tensors
 * saved to and loaded from safetensors files, single tensors to and from
 * .npy files, and text written atomically (for `plot`).
 *
 * A safetensors file is an 8-byte little-endian header length N, N
 * bytes of JSON, then the tensors' raw little-endian bytes.  The JSON
 * maps each tensor's name to {"dtype", "shape", "data_offsets": [begin,
 * end]} (offsets into the bytes after the header), plus an optional
 * "__metadata__" map of strings.  A tree is saved with one tensor per
 * leaf, named by the leaf's path ("layers.0.w": dict keys and list or
 * tuple positions joined by dots), and its shape, the kinds of its
 * containers and of its non-tensor leaves, in __metadata__["mist.tree"]
 * as JSON:
 *
 *   a tensor "T", a float "F", an int "I", a bool "B" (each a tensor of
 *   the file: the numbers as 0-d f64, i64 and bool tensors), None null,
 *   {"dict": [[key, sub], ...]}, {"list": [sub, ...]}, {"tuple": [...]}.
 *
 * so load gives back the same tree, containers and all.  A file another
 * tool wrote (no "mist.tree") loads as a dict from name to tensor, in
 * the order of the data.  The JSON goes through jansson; every offset
 * and size is checked before any byte is read: the data must be exactly
 * covered by the tensors, without holes or overlaps, as the format's
 * reference reader requires. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lang/gc.h"
#include "stdlib/builtins.h"
#include "stdlib/files.h"
#include "stdlib/tensor.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "io.c writes tensors' bytes as they are in memory: little-endian hosts only"
#endif

/* A safetensors header larger than this is refused (the reference
 * reader's limit is 100 MB). */
#define HEADER_MAX ((uint64_t)100 << 20)

static bool path_arg(MistVM *vm, const char *fname, Value v, const char **out) {
  if (!v_is_obj(v, O_STR))
    return lang_raise(vm, "TypeError", "%s: path must be a str, not '%s'", fname, lang_type_name(v));
  *out = AS_STR(v)->data;
  return true;
}

/* ---- save ---- */

/* Cut a path being built back to its first mark bytes. */
static void cut(StrBuf *path, size_t mark) {
  path->len = mark;
  if (path->cap) path->data[mark] = 0;   /* an empty StrBuf shares a constant "" */
}


static const char *st_dtype(DType dt) {
  switch (dt) {
  case DT_F32: return "F32";
  case DT_F64: return "F64";
  case DT_I32: return "I32";
  case DT_I64: return "I64";
  case DT_BOOL: return "BOOL";
  }
  return "?";
}

typedef struct Leaf {
  ObjStr *name;
  ObjTensor *t;   /* contiguous */
} Leaf;

typedef struct Saver {
  MistVM *vm;
  Leaf *leaves;
  int n, cap;
  json_t *names;   /* name -> true, to refuse two leaves with one path */
} Saver;

static bool add_leaf(Saver *s, StrBuf *path, ObjTensor *t) {
  if (json_object_get(s->names, path->data))
    return lang_raise(s->vm, "ValueError", "io.save: two leaves of the tree have the path '%s'",
                      path->data);
  json_object_set_new(s->names, path->data, json_true());
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->leaves = lang_realloc(s->leaves, (size_t)s->cap * sizeof *s->leaves);
  }
  ObjTensor *c = lang_tensor_contiguous(s->vm, t);
  if (!c) return false;
  s->leaves[s->n].name = lang_str_new(path->data, path->len);
  s->leaves[s->n].t = c;
  s->n++;
  return true;
}

static bool scalar_leaf(Saver *s, StrBuf *path, DType dt, Value v) {
  ObjTensor *t;
  return lang_tensor_scalar(s->vm, dt, v, &t) && add_leaf(s, path, t);
}

/* The skeleton of v (see the top of the file), adding its leaves. */
static bool walk(Saver *s, Value v, StrBuf *path, json_t **out) {
  if (!lang_check_stack(s->vm)) return false;
  size_t mark = path->len;
  if (v.tag == V_NONE) {
    *out = json_null();
    return true;
  }
  if (v.tag == V_FLOAT || v.tag == V_INT || v.tag == V_BOOL) {
    DType dt = v.tag == V_FLOAT ? DT_F64 : v.tag == V_INT ? DT_I64 : DT_BOOL;
    *out = json_string(v.tag == V_FLOAT ? "F" : v.tag == V_INT ? "I" : "B");
    return scalar_leaf(s, path, dt, v);
  }
  if (v_is_tensor(v)) {
    *out = json_string("T");
    return add_leaf(s, path, AS_TENSOR(v));
  }
  if (v_is_obj(v, O_DICT)) {
    ObjDict *d = AS_DICT(v);
    json_t *items = json_array();
    for (size_t i = 0; i < d->len; i++) {
      cut(path, mark);
      if (mark) sb_addc(path, '.');
      sb_add(path, d->entries[i].key->data, d->entries[i].key->len);
      json_t *sub;
      if (!walk(s, d->entries[i].value, path, &sub)) return false;
      json_t *pair = json_array();
      json_array_append_new(pair, json_stringn(d->entries[i].key->data, d->entries[i].key->len));
      json_array_append_new(pair, sub);
      json_array_append_new(items, pair);
    }
    cut(path, mark);
    *out = json_pack("{so}", "dict", items);
    return true;
  }
  if (v_is_obj(v, O_LIST) || v_is_obj(v, O_TUPLE)) {
    ObjSeq *q = AS_SEQ(v);
    json_t *items = json_array();
    for (size_t i = 0; i < q->len; i++) {
      cut(path, mark);
      sb_printf(path, "%s%zu", mark ? "." : "", i);
      json_t *sub;
      if (!walk(s, q->items[i], path, &sub)) return false;
      json_array_append_new(items, sub);
    }
    cut(path, mark);
    *out = json_pack("{so}", v_is_obj(v, O_LIST) ? "list" : "tuple", items);
    return true;
  }
  return lang_raise(s->vm, "TypeError",
                    "io.save: a tree's leaves must be tensors, floats, ints, bools or None, "
                    "not '%s' (at '%s')",
                    lang_type_name(v), path->data);
}

static int align_rank(DType dt) { return dev_dtype_size(dt) >= 8 ? 0 : dev_dtype_size(dt) >= 4 ? 1 : 2; }

static bool bi_save(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"path", "tree"};
  Value a[2];
  const char *path = NULL;
  if (!std_parse_args(vm, "save", ARGS_CLINIC, argc, argv, kw, names, 2, 2, 2, true, a) ||
      !path_arg(vm, "io.save", a[0], &path))
    return false;
  Saver s = {vm, NULL, 0, 0, json_object()};
  StrBuf p;
  sb_init(&p);
  json_t *skel = NULL;
  bool ok = walk(&s, a[1], &p, &skel);
  json_decref(s.names);
  if (!ok) {
    json_decref(skel);
    return false;
  }
  /* data: widest elements first, so each tensor starts aligned to its
   * element size (the header is padded to 8 bytes); the header lists
   * the leaves in tree order */
  size_t *offset = lang_alloc_atomic((size_t)(s.n ? s.n : 1) * sizeof *offset), total = 0;
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < s.n; i++)
      if (align_rank(s.leaves[i].t->dtype) == r) {
        offset[i] = total;
        total += (size_t)s.leaves[i].t->size * dev_dtype_size(s.leaves[i].t->dtype);
      }
  json_t *head = json_object();
  char *skel_text = json_dumps(skel, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
  json_decref(skel);
  json_object_set_new(head, "__metadata__",
                      json_pack("{ssss}", "format", "mist", "mist.tree", skel_text ? skel_text : ""));
  free(skel_text);
  for (int i = 0; i < s.n; i++) {
    ObjTensor *t = s.leaves[i].t;
    json_t *shape = json_array();
    for (int d = 0; d < t->ndim; d++) json_array_append_new(shape, json_integer(t->shape[d]));
    size_t bytes = (size_t)t->size * dev_dtype_size(t->dtype);
    json_object_set_new(head, s.leaves[i].name->data,
                        json_pack("{sssos[II]}", "dtype", st_dtype(t->dtype), "shape", shape,
                                  "data_offsets", (json_int_t)offset[i],
                                  (json_int_t)(offset[i] + bytes)));
  }
  char *text = json_dumps(head, JSON_COMPACT | JSON_ENSURE_ASCII);
  json_decref(head);
  if (!text) return lang_raise(vm, "MemoryError", "io.save: out of memory");
  StrBuf h;
  sb_init(&h);
  sb_adds(&h, text);
  free(text);
  while ((8 + h.len) % 8) sb_addc(&h, ' ');
  unsigned char len8[8];
  for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
  StdBytes *parts = lang_alloc((size_t)(s.n + 2) * sizeof *parts);
  parts[0] = (StdBytes){len8, 8};
  parts[1] = (StdBytes){h.data, h.len};
  int np = 2;
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < s.n; i++)
      if (align_rank(s.leaves[i].t->dtype) == r)
        parts[np++] = (StdBytes){lang_tensor_ptr(s.leaves[i].t),
                                 (size_t)s.leaves[i].t->size * dev_dtype_size(s.leaves[i].t->dtype)};
  ok = std_write_atomic(vm, path, parts, np);
  LANG_KEEP(s.leaves);
  if (ok) *out = v_none();
  return ok;
}

/* ---- load ---- */

typedef struct Entry {
  const char *name;
  DType dt;         /* what it becomes */
  const char *st;   /* its dtype in the file */
  int esize;        /* bytes per element in the file */
  int ndim;
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  int64_t size;
  uint64_t begin, end;
} Entry;

static bool st_dtype_of(const char *s, DType *dt, int *esize) {
  static const struct {
    const char *name;
    DType dt;
    int esize;
  } table[] = {
      {"F32", DT_F32, 4}, {"F64", DT_F64, 8}, {"I32", DT_I32, 4}, {"I64", DT_I64, 8},
      {"BOOL", DT_BOOL, 1}, {"U8", DT_I32, 1}, {"I8", DT_I32, 1}, {"I16", DT_I32, 2},
      {"U16", DT_I32, 2}, {"U32", DT_I64, 4}, {"F16", DT_F32, 2}, {"BF16", DT_F32, 2},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(s, table[i].name)) {
      *dt = table[i].dt;
      *esize = table[i].esize;
      return true;
    }
  return false;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
  if (exp == 0x1f) u = sign | 0x7f800000u | man << 13;          /* inf, nan */
  else if (exp) u = sign | (exp + 112) << 23 | man << 13;       /* normal */
  else if (!man) u = sign;                                      /* zero */
  else {                                                        /* subnormal */
    int e = 113;
    while (!(man & 0x400)) man <<= 1, e--;
    u = sign | (uint32_t)e << 23 | (man & 0x3ff) << 13;
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The entry's bytes (all checked to lie in the data) as a tensor. */
static ObjTensor *entry_tensor(MistVM *vm, const Entry *e, const unsigned char *p) {
  ObjTensor *t = lang_tensor_new(vm, e->dt, e->ndim, e->shape, false);
  if (!t) return NULL;
  char *dst = lang_tensor_ptr(t);
  int64_t n = e->size;
  const char *st = e->st;
  if (e->esize == (int)dev_dtype_size(e->dt) && strcmp(st, "U32") != 0 && strcmp(st, "BOOL") != 0) {
    memcpy(dst, p, (size_t)n * (size_t)e->esize);
  } else if (!strcmp(st, "BOOL")) {
    for (int64_t i = 0; i < n; i++) dst[i] = p[i] != 0;
  } else if (!strcmp(st, "U8")) {
    for (int64_t i = 0; i < n; i++) ((int32_t *)dst)[i] = p[i];
  } else if (!strcmp(st, "I8")) {
    for (int64_t i = 0; i < n; i++) ((int32_t *)dst)[i] = (int8_t)p[i];
  } else if (!strcmp(st, "I16") || !strcmp(st, "U16")) {
    bool sgn = st[0] == 'I';
    for (int64_t i = 0; i < n; i++) {
      uint16_t u = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
      ((int32_t *)dst)[i] = sgn ? (int16_t)u : u;
    }
  } else if (!strcmp(st, "U32")) {
    for (int64_t i = 0; i < n; i++) {
      uint32_t u;
      memcpy(&u, p + 4 * i, 4);
      ((int64_t *)dst)[i] = u;
    }
  } else {   /* F16, BF16 */
    bool bf = st[0] == 'B';
    for (int64_t i = 0; i < n; i++) {
      uint16_t u = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
      float f;
      if (bf) {
        uint32_t w = (uint32_t)u << 16;
        memcpy(&f, &w, 4);
      } else {
        f = half_to_float(u);
      }
      ((float *)dst)[i] = f;
    }
  }
  return t;
}

static int by_begin(const void *a, const void *b) {
  const Entry *x = *(Entry *const *)a, *y = *(Entry *const *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

typedef struct Loader {
  MistVM *vm;
  const char *path;
  json_t *tensors;   /* name -> tensor as a Value boxed in a json integer index */
  Value *values;
  Entry **entries;
  int n;
  bool *used;
} Loader;

static bool corrupt(Loader *L, const char *what) {
  return lang_raise(L->vm, "ValueError", "'%s' is not a valid Mist checkpoint: %s", L->path, what);
}

static int find_entry(Loader *L, const char *name) {
  json_t *i = json_object_get(L->tensors, name);
  return i ? (int)json_integer_value(i) : -1;
}

/* The tree the skeleton describes, taking each leaf's tensor by path. */
static bool rebuild(Loader *L, json_t *sk, StrBuf *path, Value *out) {
  if (!lang_check_stack(L->vm)) return false;
  size_t mark = path->len;
  if (json_is_null(sk)) {
    *out = v_none();
    return true;
  }
  if (json_is_string(sk)) {
    const char *k = json_string_value(sk);
    int i = find_entry(L, path->data);
    if (i < 0) {
      StrBuf m;
      sb_init(&m);
      sb_printf(&m, "the tree has a leaf '%s' that the file does not hold", path->data);
      return corrupt(L, m.data);
    }
    if (L->used[i]) return corrupt(L, "a leaf is named twice");
    L->used[i] = true;
    Value v = L->values[i];
    ObjTensor *t = AS_TENSOR(v);
    if (!strcmp(k, "T")) {
      *out = v;
      return true;
    }
    DType want = !strcmp(k, "F") ? DT_F64 : !strcmp(k, "I") ? DT_I64 : !strcmp(k, "B") ? DT_BOOL : -1;
    if ((int)want < 0) return corrupt(L, "the tree names an unknown kind of leaf");
    if (t->ndim != 0 || t->dtype != want) return corrupt(L, "a number leaf is not a 0-d tensor of its kind");
    *out = lang_tensor_load(t->dtype, lang_tensor_ptr(t));
    return true;
  }
  json_t *items;
  const char *kind = NULL;
  if (!json_is_object(sk) || json_object_size(sk) != 1) return corrupt(L, "the tree is malformed");
  json_object_foreach(sk, kind, items) break;
  if (!json_is_array(items)) return corrupt(L, "the tree is malformed");
  size_t n = json_array_size(items);
  if (!strcmp(kind, "dict")) {
    ObjDict *d = lang_dict_new();
    for (size_t i = 0; i < n; i++) {
      json_t *pair = json_array_get(items, i);
      json_t *key = json_array_get(pair, 0);
      if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_string(key))
        return corrupt(L, "the tree is malformed");
      cut(path, mark);
      if (mark) sb_addc(path, '.');
      sb_add(path, json_string_value(key), json_string_length(key));
      if (!lang_utf8_valid(json_string_value(key), json_string_length(key)))
        return corrupt(L, "a key is not valid UTF-8");
      Value sub;
      if (!rebuild(L, json_array_get(pair, 1), path, &sub)) return false;
      lang_dict_put(d, lang_str_new(json_string_value(key), json_string_length(key)), sub);
    }
    *out = v_obj(d);
  } else if (!strcmp(kind, "list") || !strcmp(kind, "tuple")) {
    ObjSeq *q = kind[0] == 'l' ? lang_list_new(n) : lang_tuple_new(n);
    for (size_t i = 0; i < n; i++) {
      cut(path, mark);
      sb_printf(path, "%s%zu", mark ? "." : "", i);
      if (!rebuild(L, json_array_get(items, i), path, &q->items[i])) return false;
    }
    *out = v_obj(q);
  } else {
    return corrupt(L, "the tree names an unknown kind of container");
  }
  cut(path, mark);
  return true;
}

/* Check the header against the file and read every tensor into
 * L->values (in L->entries' order). */
static bool read_safetensors(MistVM *vm, const char *path, const unsigned char *data, size_t len,
                             Value *out) {
  if (len < 8)
    return lang_raise(vm, "ValueError", "'%s' is truncated: %zu bytes, shorter than the header length",
                      path, len);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | data[i];
  if (n > HEADER_MAX)
    return lang_raise(vm, "ValueError", "'%s' is not a safetensors file: a header of %llu bytes",
                      path, (unsigned long long)n);
  if (n > len - 8)
    return lang_raise(vm, "ValueError",
                      "'%s' is truncated: the header is %llu bytes, the file has %zu after its length",
                      path, (unsigned long long)n, len - 8);
  json_error_t jerr;
  json_t *head = json_loadb((const char *)data + 8, (size_t)n, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
  if (!head)
    return lang_raise(vm, "ValueError", "'%s' is not a safetensors file: bad JSON header (%s)", path,
                      jerr.text);
  /* after the JSON value, only spaces may pad the header */
  for (size_t i = jerr.position; i < n; i++)
    if (data[8 + i] != ' ' && data[8 + i] != '\n' && data[8 + i] != '\t' && data[8 + i] != '\r') {
      json_decref(head);
      return lang_raise(vm, "ValueError", "'%s' is not a safetensors file: bad JSON header (text after it)",
                        path);
    }
  const unsigned char *base = data + 8 + n;
  uint64_t dlen = len - 8 - n;
  Loader L = {vm, path, json_object(), NULL, NULL, 0, NULL};
  bool ok = false;
  json_t *tree = NULL;
  const char *err = NULL;
  char msg[320];
  if (!json_is_object(head)) {
    err = "the header is not a JSON object";
    goto done;
  }
  size_t cap = json_object_size(head);
  L.entries = lang_alloc((cap ? cap : 1) * sizeof *L.entries);
  const char *name;
  json_t *v;
  json_object_foreach(head, name, v) {
    if (!strcmp(name, "__metadata__")) {
      if (!json_is_object(v)) {
        err = "__metadata__ is not an object";
        goto done;
      }
      tree = json_object_get(v, "mist.tree");
      if (tree && !json_is_string(tree)) {
        err = "__metadata__ holds a value that is not a string";
        goto done;
      }
      continue;
    }
    Entry *e = lang_alloc(sizeof *e);
    e->name = name;
    json_t *dt = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape"),
           *offs = json_object_get(v, "data_offsets");
    if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(shape) || !json_is_array(offs) ||
        json_array_size(offs) != 2) {
      snprintf(msg, sizeof msg, "tensor '%.200s' lacks a dtype, shape or data_offsets", name);
      err = msg;
      goto done;
    }
    e->st = json_string_value(dt);
    if (!st_dtype_of(e->st, &e->dt, &e->esize)) {
      snprintf(msg, sizeof msg, "tensor '%.200s' has dtype '%.20s', which Mist does not read", name, e->st);
      err = msg;
      goto done;
    }
    if (json_array_size(shape) > LANG_TENSOR_MAX_DIMS) {
      snprintf(msg, sizeof msg, "tensor '%.200s' has too many dimensions", name);
      err = msg;
      goto done;
    }
    e->ndim = (int)json_array_size(shape);
    e->size = 1;
    for (int d = 0; d < e->ndim; d++) {
      json_t *x = json_array_get(shape, (size_t)d);
      json_int_t k = json_is_integer(x) ? json_integer_value(x) : -1;
      if (k < 0 || (k && e->size > LANG_TENSOR_MAX_SIZE / k)) {
        snprintf(msg, sizeof msg, "tensor '%.200s' has a bad shape", name);
        err = msg;
        goto done;
      }
      e->shape[d] = k;
      e->size *= k;
    }
    json_t *b = json_array_get(offs, 0), *en = json_array_get(offs, 1);
    json_int_t bi = json_is_integer(b) ? json_integer_value(b) : -1;
    json_int_t ei = json_is_integer(en) ? json_integer_value(en) : -1;
    if (bi >= 0 && ei >= bi && (uint64_t)ei > dlen) {
      ok = lang_raise(vm, "ValueError",
                      "'%s' is truncated: tensor '%.200s' ends at byte %lld of the data, the file has %llu",
                      path, name, (long long)ei, (unsigned long long)dlen);
      goto done;
    }
    if (bi < 0 || ei < bi) {
      snprintf(msg, sizeof msg, "tensor '%.200s' has data offsets [%lld, %lld] outside the %llu bytes of data",
               name, (long long)bi, (long long)ei, (unsigned long long)dlen);
      err = msg;
      goto done;
    }
    e->begin = (uint64_t)bi;
    e->end = (uint64_t)ei;
    if (e->end - e->begin != (uint64_t)e->size * (uint64_t)e->esize) {
      snprintf(msg, sizeof msg, "tensor '%.200s' has %llu bytes of data, its shape and dtype need %llu",
               name, (unsigned long long)(e->end - e->begin), (unsigned long long)e->size * e->esize);
      err = msg;
      goto done;
    }
    json_object_set_new(L.tensors, name, json_integer(L.n));
    L.entries[L.n++] = e;
  }
  /* the data must be covered exactly: no holes, no overlaps */
  Entry **sorted = lang_alloc((size_t)(L.n ? L.n : 1) * sizeof *sorted);
  memcpy(sorted, L.entries, (size_t)L.n * sizeof *sorted);
  qsort(sorted, (size_t)L.n, sizeof *sorted, by_begin);
  uint64_t at = 0;
  for (int i = 0; i < L.n; i++) {
    if (sorted[i]->begin != at) {
      snprintf(msg, sizeof msg, "tensor '%.200s' %s the one before it", sorted[i]->name,
               sorted[i]->begin < at ? "overlaps" : "leaves a hole after");
      err = msg;
      goto done;
    }
    at = sorted[i]->end;
  }
  if (at != dlen) {
    snprintf(msg, sizeof msg, "%llu bytes after the last tensor's data", (unsigned long long)(dlen - at));
    err = msg;
    goto done;
  }
  L.values = lang_alloc((size_t)(L.n ? L.n : 1) * sizeof *L.values);
  for (int i = 0; i < L.n; i++) {
    ObjTensor *t = entry_tensor(vm, L.entries[i], base + L.entries[i]->begin);
    if (!t) goto done;
    L.values[i] = v_obj(t);
  }
  if (tree) {
    json_t *sk = json_loads(json_string_value(tree), JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!sk) {
      err = "its tree (__metadata__ 'mist.tree') is not valid JSON";
      goto done;
    }
    L.used = lang_alloc_atomic((size_t)(L.n ? L.n : 1));
    memset(L.used, 0, (size_t)(L.n ? L.n : 1));
    StrBuf p;
    sb_init(&p);
    ok = rebuild(&L, sk, &p, out);
    json_decref(sk);
    for (int i = 0; ok && i < L.n; i++)
      if (!L.used[i]) {
        snprintf(msg, sizeof msg, "tensor '%.200s' is not in its tree", L.entries[i]->name);
        ok = corrupt(&L, msg);
      }
    goto done;
  }
  /* another tool's file: a dict in the order of the data */
  ObjDict *d = lang_dict_new();
  for (int i = 0; i < L.n; i++) {
    int k = (int)json_integer_value(json_object_get(L.tensors, sorted[i]->name));
    if (!lang_utf8_valid(sorted[i]->name, strlen(sorted[i]->name))) {
      err = "a tensor's name is not valid UTF-8";
      goto done;
    }
    lang_dict_put(d, lang_str(sorted[i]->name), L.values[k]);
  }
  *out = v_obj(d);
  ok = true;
done:
  if (err) ok = lang_raise(vm, "ValueError", "'%s' is not a valid safetensors file: %s", path, err);
  json_decref(L.tensors);
  json_decref(head);
  return ok;
}

bool std_read_safetensors(MistVM *vm, const char *what, const unsigned char *data, size_t len,
                          Value *out) {
  return read_safetensors(vm, what, data, len, out);
}

static bool bi_load(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"path"};
  Value a[1];
  const char *path = NULL;
  unsigned char *data;
  size_t len;
  if (!std_parse_args(vm, "load", ARGS_CLINIC, argc, argv, kw, names, 1, 1, 1, true, a) ||
      !path_arg(vm, "io.load", a[0], &path) || !std_read_file(vm, "io.load", path, &data, &len))
    return false;
  bool ok = read_safetensors(vm, path, data, len, out);
  free(data);
  return ok;
}

/* ---- npy ---- */

static bool bi_save_npy(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"path", "t"};
  Value a[2];
  const char *path = NULL;
  ObjTensor *t;
  if (!std_parse_args(vm, "save_npy", ARGS_CLINIC, argc, argv, kw, names, 2, 2, 2, true, a) ||
      !path_arg(vm, "io.save_npy", a[0], &path) || !std_tensor_arg(vm, "io.save_npy", a[1], &t))
    return false;
  StrBuf sb;
  sb_init(&sb);
  if (!std_write_npy(vm, t, &sb)) return false;
  StdBytes part = {sb.data, sb.len};
  if (!std_write_atomic(vm, path, &part, 1)) return false;
  *out = v_none();
  return true;
}

static bool bi_load_npy(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"path"};
  Value a[1];
  const char *path = NULL;
  unsigned char *data;
  size_t len;
  if (!std_parse_args(vm, "load_npy", ARGS_CLINIC, argc, argv, kw, names, 1, 1, 1, true, a) ||
      !path_arg(vm, "io.load_npy", a[0], &path) || !std_read_file(vm, "io.load_npy", path, &data, &len))
    return false;
  ObjTensor *t;
  bool ok = std_read_npy(vm, path, data, len, &t);
  free(data);
  if (ok) *out = v_obj(t);
  return ok;
}

/* _write_text(path, text): for plot.lines, atomically too. */
static bool bi_write_text(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"path", "text"};
  Value a[2];
  const char *path = NULL;
  if (!std_parse_args(vm, "write_text", ARGS_CLINIC, argc, argv, kw, names, 2, 2, 2, true, a) ||
      !path_arg(vm, "write_text", a[0], &path))
    return false;
  if (!v_is_obj(a[1], O_STR)) return lang_raise(vm, "TypeError", "write_text: text must be a str");
  StdBytes part = {AS_STR(a[1])->data, AS_STR(a[1])->len};
  if (!std_write_atomic(vm, path, &part, 1)) return false;
  *out = v_none();
  return true;
}

/* makedirs(path): path and its missing parents made as folders, as
 * Python's os.makedirs(path, exist_ok=True). */
static bool bi_makedirs(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"path"};
  Value a[1];
  const char *path = NULL;
  if (!std_parse_args(vm, "makedirs", ARGS_CLINIC, argc, argv, kw, names, 1, 1, 1, true, a) ||
      !path_arg(vm, "io.makedirs", a[0], &path) || !std_makedirs(vm, path))
    return false;
  *out = v_none();
  return true;
}

void std_register_io(MistVM *vm) {
  std_def_hidden(vm, "_io_makedirs", "makedirs", bi_makedirs);
  std_def_hidden(vm, "_io_save", "save", bi_save);
  std_def_hidden(vm, "_io_load", "load", bi_load);
  std_def_hidden(vm, "_io_save_npy", "save_npy", bi_save_npy);
  std_def_hidden(vm, "_io_load_npy", "load_npy", bi_load_npy);
  std_def_hidden(vm, "_io_write_text", "write_text", bi_write_text);
}
