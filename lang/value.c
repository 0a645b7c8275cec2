/* value.c: the heap objects of Mist and their constructors: UTF-8
 * strings (validation, decoding, hashing, interning), tuples and lists,
 * string-keyed dicts, ranges, builtins, and type names.
 *
 * Dicts keep their entries in insertion order in one array; a dict of
 * more than DICT_LINEAR entries also has an open-addressing index
 * (linear probing over entry numbers), small ones are searched
 * linearly, which is faster than hashing for the handful of keys a
 * typical parameter tree has.  All objects are immutable once a program
 * can see them; lists and dicts are updated in O(1) all the same, by
 * keeping versions (the section "Versions" below).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/value.h"
#include "lang/vm.h"

/* ---- UTF-8 ---- */

size_t lang_utf8_check(const char *str, size_t len) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0;
  while (i < len) {
    unsigned c = s[i];
    if (c < 0x80) { i++; continue; }
    size_t n;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1f; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0f; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07; min = 0x10000; }
    else return i;
    if (len - i <= n) return i;
    for (size_t k = 1; k <= n; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return len;
}

bool lang_utf8_valid(const char *s, size_t len) { return lang_utf8_check(s, len) == len; }

size_t lang_utf8_decode(const char *str, size_t len, uint32_t *cp) {
  const unsigned char *s = (const unsigned char *)str;
  if (len == 0) { *cp = 0; return 0; }
  unsigned c = s[0];
  size_t n;
  uint32_t v;
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xf0) { n = 3; v = c & 0x07; }
  else if (c >= 0xe0) { n = 2; v = c & 0x0f; }
  else if (c >= 0xc0) { n = 1; v = c & 0x1f; }
  else { *cp = 0xfffd; return 1; }
  if (n >= len) { *cp = 0xfffd; return 1; }
  for (size_t k = 1; k <= n; k++) {
    if ((s[k] & 0xc0) != 0x80) { *cp = 0xfffd; return 1; }
    v = (v << 6) | (s[k] & 0x3f);
  }
  *cp = v;
  return n + 1;
}

size_t lang_utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

size_t lang_str_offset(const ObjStr *s, size_t charidx) {
  if (s->ascii) return charidx < s->len ? charidx : s->len;
  size_t i = 0;
  while (i < s->len && charidx > 0) {
    i++;
    while (i < s->len && ((unsigned char)s->data[i] & 0xc0) == 0x80) i++;
    charidx--;
  }
  return i;
}

/* ---- strings ---- */

ObjStr *lang_str_new(const char *s, size_t len) {
  ObjStr *o = lang_alloc_atomic(sizeof(ObjStr) + len + 1);
  o->obj.kind = O_STR;
  o->hash = 0;
  o->len = len;
  if (len) memcpy(o->data, s, len);
  o->data[len] = '\0';
  size_t cont = 0;
  bool ascii = true;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)o->data[i];
    if (c >= 0x80) {
      ascii = false;
      if ((c & 0xc0) == 0x80) cont++;
    }
  }
  o->ascii = ascii;
  o->nchars = len - cont;
  return o;
}

ObjStr *lang_str(const char *cstr) {
  return lang_str_new(cstr, strlen(cstr));
}

ObjStr *lang_str_fmt(const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return lang_str_new("", 0);
  if ((size_t)n < sizeof small) return lang_str_new(small, (size_t)n);
  char *buf = lang_alloc_atomic((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(buf, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return lang_str_new(buf, (size_t)n);
}

/* FNV-1a; 0 is reserved for "not computed yet". */
static uint32_t hash_bytes(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)s[i];
    h *= 16777619u;
  }
  return h ? h : 1;
}

uint32_t lang_str_hash(ObjStr *s) {
  if (s->hash == 0) s->hash = hash_bytes(s->data, s->len);
  return s->hash;
}

bool lang_str_eq(const ObjStr *a, const ObjStr *b) {
  if (a == b) return true;
  if (a->len != b->len) return false;
  if (a->hash && b->hash && a->hash != b->hash) return false;
  return memcmp(a->data, b->data, a->len) == 0;
}

/* ---- tuples and lists ---- */

ObjSeq *lang_tuple_new(size_t len) {
  ObjSeq *s = lang_alloc(sizeof(ObjSeq) + len * sizeof(Value));
  s->obj.kind = O_TUPLE;
  s->len = len;
  s->items = (Value *)(s + 1);
  return s;
}

ObjFuncExtra *lang_func_extra(ObjFunc *f) {
  if (!f->x) f->x = lang_alloc(sizeof *f->x);
  return f->x;
}

void lang_func_share_defaults(ObjFunc *to, const ObjFunc *from) {
  if (!lang_func_ndefaults(from)) return;
  lang_func_extra(to)->ndefaults = from->x->ndefaults;
  to->x->defaults = from->x->defaults;
}

/* Lists of fewer than LIST_INLINE items keep them right after the
 * header, in one allocation; bigger ones in an array of their own.
 * Storage that versions share is always an array of its own
 * (take_over): inside an old version's object, it would keep that
 * object, and through `newer` every version after it, alive. */
#define LIST_INLINE 64

static ObjList *list_alloc(size_t len, size_t cap) {
  bool inline_items = cap < LIST_INLINE;
  ObjList *l = lang_alloc(sizeof(ObjList) + (inline_items ? cap * sizeof(Value) : 0));
  l->seq.obj.kind = O_LIST;
  l->seq.len = len;
  l->seq.items = inline_items ? (Value *)(l + 1) : lang_alloc(cap * sizeof(Value));
  l->cap = cap;
  return l;
}

ObjSeq *lang_list_new(size_t len) { return &list_alloc(len, len)->seq; }

Value lang_ellipsis(void) {
  static Obj ellipsis = {O_ELLIPSIS};
  return v_obj(&ellipsis);
}

Value lang_tuple_of(int n, ...) {
  ObjSeq *t = lang_tuple_new(n > 0 ? (size_t)n : 0);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) t->items[i] = va_arg(ap, Value);
  va_end(ap);
  return v_obj(t);
}

/* ---- versions: lists and dicts updated in O(1) ----
 *
 * Values are immutable, but copying a whole list to change one item
 * makes every loop that fills a list quadratic.  So lists and dicts are
 * versioned, after Baker's "shallow binding" of functional arrays: one
 * object of a storage's versions, the current one, holds the storage;
 * every other one (an old version) holds only how it differs from the
 * next newer version: one item or entry value, or a shorter length.  An
 * update of the current version s writes into the storage, hands it to
 * a new object (the new current version) and turns s into an old
 * version: O(1), and s still reads as the value it was, because reading
 * an old version (AS_SEQ, AS_DICT) first brings its contents back: it
 * copies the current version's items and undoes the differences on the
 * way, and becomes the current version of that new copy.
 *
 * So no update is ever visible through another name, whoever holds the
 * old value (a closure, a tuple, a backpropagator, another list), and
 * the common case, where nobody does, costs O(1).  Reading an old
 * version costs what the copy would have cost.  Each storage allows
 * VERSION_BUDGET(len) old versions; past that, an update copies into
 * fresh storage, which bounds the differences to undo, and so the cost
 * of reading any old version, by O(len): updates stay O(1) amortised.
 *
 * An old version must never be read through a pointer taken before the
 * update (value.h, AS_SEQ).  Threads: the data pipeline's threads read
 * values while the program runs.  While they do, updates copy instead
 * (the caller passes in_place false, lang_updates_in_place), so nothing
 * a thread reads is written; and old versions are brought back under
 * one process-wide lock (the only state versions share), publishing
 * the contents before the pointer that says they are there, so two
 * threads reading one old version do not both rebuild it at once.
 */

#define VERSION_BUDGET(len) ((len) + 16)
_Static_assert(sizeof(ObjList) == 48, "a list made on every update stays at 48 bytes");

static pthread_mutex_t versions_mutex = PTHREAD_MUTEX_INITIALIZER;
void lang_versions_lock(void) { pthread_mutex_lock(&versions_mutex); }
void lang_versions_unlock(void) { pthread_mutex_unlock(&versions_mutex); }

/* The current version of l's storage is about to move to a new object
 * of length len, which is returned; l becomes an old version whose
 * newer one that is (the caller says how they differ). */
static ObjList *take_over(ObjList *l, size_t len) {
  Value *items = l->seq.items;
  if (items == (Value *)(l + 1)) {
    items = lang_alloc((l->cap ? l->cap : 1) * sizeof(Value));
    memcpy(items, l->seq.items, l->seq.len * sizeof(Value));
  }
  ObjList *r = lang_alloc(sizeof(ObjList));
  r->seq.obj.kind = O_LIST;
  r->seq.len = len;
  r->seq.items = items;
  r->cap = l->cap;
  r->ndiffs = l->ndiffs + 1;
  l->seq.items = NULL;
  l->newer = r;   /* over cap and ndiffs, no longer l's */
  return r;
}

ObjSeq *lang_list_set(ObjSeq *s, size_t i, Value v, bool in_place) {
  ObjList *l = (ObjList *)s;
  if (!in_place || l->ndiffs >= VERSION_BUDGET(s->len) || i >= LANG_LIST_PREFIX) {
    ObjSeq *r = lang_list_new(s->len);
    memcpy(r->items, s->items, s->len * sizeof(Value));
    r->items[i] = v;
    return r;
  }
  ObjList *r = take_over(l, s->len);
  l->seq.at = (uint32_t)i;
  l->old = r->seq.items[i];
  r->seq.items[i] = v;
  return &r->seq;
}

ObjSeq *lang_list_concat(ObjSeq *a, const ObjSeq *b, bool in_place) {
  ObjList *l = (ObjList *)a;
  size_t n = a->len, m = b->len, need = n + m;
  const Value *tail = b->items;   /* read before take_over: b may be a */
  if (in_place && need <= l->cap && l->ndiffs < VERSION_BUDGET(need)) {
    ObjList *r = take_over(l, need);
    l->seq.at = LANG_LIST_PREFIX;
    memcpy(r->seq.items + n, tail, m * sizeof(Value));
    return &r->seq;
  }
  /* growing a list by a smaller part, as `xs = xs + [v]` does: room to
   * grow in place next time, so that appending is O(1) amortised */
  ObjList *r = list_alloc(need, m < n ? need + need / 2 : need);
  memcpy(r->seq.items, a->items, n * sizeof(Value));
  memcpy(r->seq.items + n, tail, m * sizeof(Value));
  return &r->seq;
}

/* The versions from old version v to the current one, in an array
 * (*n of them, v first, the current one last). */
static void **version_chain(void *v, void *(*newer)(void *), bool (*current)(void *), size_t *n) {
  size_t k = 1;
  for (void *c = v; !current(c); c = newer(c)) k++;
  void **chain = lang_alloc_atomic(k * sizeof *chain);   /* all reachable from v */
  void *c = v;
  for (size_t i = 0; i < k; i++, c = newer(c)) chain[i] = c;
  *n = k;
  return chain;
}

static void *list_newer(void *v) { return ((ObjList *)v)->newer; }
static bool list_is_current(void *v) { return ((ObjList *)v)->seq.items != NULL; }

ObjSeq *lang_list_current(ObjSeq *s) {
  ObjList *l = (ObjList *)s;
  lang_versions_lock();
  if (l->seq.items) {   /* another thread brought it back meanwhile */
    lang_versions_unlock();
    return s;
  }
  size_t n, len = s->len;
  void **chain = version_chain(l, list_newer, list_is_current, &n);
  ObjList *cur = chain[n - 1];
  Value *items = lang_alloc((len ? len : 1) * sizeof(Value));
  memcpy(items, cur->seq.items, len * sizeof(Value));
  /* undo the differences, newest first */
  for (size_t k = n - 1; k-- > 0;) {
    ObjList *c = chain[k];
    if (c->seq.at != LANG_LIST_PREFIX && c->seq.at < len) items[c->seq.at] = c->old;
  }
  l->old = v_none();
  l->cap = len;      /* over newer, which lets the chain go */
  l->ndiffs = 0;
  __atomic_store_n(&l->seq.items, items, __ATOMIC_RELEASE);
  lang_versions_unlock();
  return s;
}

/* ---- dicts ---- */

#define DICT_LINEAR 8

/* Entries are allocated with room for a power of two (at least 4), so
 * the room can be derived from len alone. */
static size_t entries_room(size_t len) {
  size_t r = 4;
  while (r < len) r *= 2;
  return r;
}

static ptrdiff_t find_linear(const ObjDict *d, const char *s, size_t len) {
  for (size_t i = 0; i < d->len; i++) {
    const ObjStr *k = d->entries[i].key;
    if (k->len == len && memcmp(k->data, s, len) == 0) return (ptrdiff_t)i;
  }
  return -1;
}

/* The entry number for the text, or -1; *slot receives the index slot
 * where it is or would go (for dicts with an index). */
static ptrdiff_t find(const ObjDict *d, const char *s, size_t len, uint32_t h, size_t *slot) {
  if (!d->index) return find_linear(d, s, len);
  size_t mask = d->cap - 1, i = h & mask;
  for (;;) {
    int32_t e = d->index[i];
    if (e < 0) { if (slot) *slot = i; return -1; }
    const ObjStr *k = d->entries[e].key;
    if (k->hash == h && k->len == len && memcmp(k->data, s, len) == 0) {
      if (slot) *slot = i;
      return e;
    }
    i = (i + 1) & mask;
  }
}

static void rebuild_index(ObjDict *d, size_t cap) {
  d->cap = cap;
  d->index = lang_alloc_atomic(cap * sizeof(int32_t));
  memset(d->index, 0xff, cap * sizeof(int32_t));
  size_t mask = cap - 1;
  for (size_t e = 0; e < d->len; e++) {
    size_t i = lang_str_hash(d->entries[e].key) & mask;
    while (d->index[i] >= 0) i = (i + 1) & mask;
    d->index[i] = (int32_t)e;
  }
}

ObjDict *lang_dict_new(void) {
  ObjDict *d = lang_alloc(sizeof(ObjDict));
  d->obj.kind = O_DICT;
  return d;
}

static void *dict_newer(void *v) { return ((ObjDict *)v)->newer; }
static bool dict_is_current(void *v) { return ((ObjDict *)v)->newer == NULL; }

ObjDict *lang_dict_current(ObjDict *d) {
  lang_versions_lock();
  if (!d->newer) {   /* another thread brought it back meanwhile */
    lang_versions_unlock();
    return d;
  }
  size_t n, len = d->len;
  void **chain = version_chain(d, dict_newer, dict_is_current, &n);
  ObjDict *cur = chain[n - 1];
  DictEntry *entries = lang_alloc(entries_room(len) * sizeof(DictEntry));
  if (len) memcpy(entries, cur->entries, len * sizeof(DictEntry));
  for (size_t k = n - 1; k-- > 0;) {
    ObjDict *c = chain[k];
    if (c->at != LANG_VERSION_PREFIX && c->at < len) entries[c->at].value = c->old;
  }
  d->entries = entries;
  d->index = NULL;
  d->cap = 0;
  d->ndiffs = 0;
  d->old = v_none();
  if (len > DICT_LINEAR) {
    size_t cap = 16;
    while (cap < 2 * len) cap *= 2;
    rebuild_index(d, cap);
  }
  __atomic_store_n(&d->newer, NULL, __ATOMIC_RELEASE);
  lang_versions_unlock();
  return d;
}

/* d, or for an old version its contents brought back. */
static ObjDict *current(const ObjDict *d) {
  return __atomic_load_n(&d->newer, __ATOMIC_ACQUIRE) ? lang_dict_current((ObjDict *)d) : (ObjDict *)d;
}

bool lang_dict_get(const ObjDict *d, ObjStr *key, Value *out) {
  ptrdiff_t e;
  d = current(d);
  if (!d->index) {
    for (size_t i = 0; i < d->len; i++) {
      const ObjStr *k = d->entries[i].key;
      if (k == key || (k->len == key->len && memcmp(k->data, key->data, k->len) == 0)) {
        *out = d->entries[i].value;
        return true;
      }
    }
    return false;
  } else {
    e = find(d, key->data, key->len, lang_str_hash(key), NULL);
  }
  if (e < 0) return false;
  *out = d->entries[e].value;
  return true;
}

void lang_dict_put(ObjDict *d, ObjStr *key, Value value) {
  d = current(d);
  uint32_t h = lang_str_hash(key);
  size_t slot = 0;
  ptrdiff_t e = find(d, key->data, key->len, h, &slot);
  if (e >= 0) {
    d->entries[e].value = value;
    return;
  }
  if (d->entries == NULL) {
    d->entries = lang_alloc(entries_room(0) * sizeof(DictEntry));
  } else if (d->len == entries_room(d->len)) {
    d->entries = lang_realloc(d->entries, 2 * d->len * sizeof(DictEntry));
  }
  size_t n = d->len++;
  d->entries[n].key = key;
  d->entries[n].value = value;
  if (d->index && 2 * d->len <= d->cap) {
    d->index[slot] = (int32_t)n;
  } else if (d->len > DICT_LINEAR) {
    size_t cap = 16;
    while (cap < 2 * d->len) cap *= 2;
    rebuild_index(d, cap);
  }
}

static ObjDict *dict_copy(const ObjDict *d, size_t extra) {
  d = current(d);
  ObjDict *c = lang_dict_new();
  c->len = d->len;
  if (d->len + extra > 0) {
    c->entries = lang_alloc(entries_room(d->len + extra) * sizeof(DictEntry));
    if (d->len) memcpy(c->entries, d->entries, d->len * sizeof(DictEntry));
  }
  if (d->index) {
    c->cap = d->cap;
    c->index = lang_alloc_atomic(d->cap * sizeof(int32_t));
    memcpy(c->index, d->index, d->cap * sizeof(int32_t));
  }
  return c;
}

/* A versioned update (see "Versions" above): the new current version
 * takes d's storage, and d notes the value it had, or its length. */
ObjDict *lang_dict_set(const ObjDict *dc, ObjStr *key, Value value, bool in_place) {
  ObjDict *d = current(dc);
  if (!in_place || d->ndiffs >= VERSION_BUDGET(d->len)) {
    ObjDict *c = dict_copy(d, 1);
    lang_dict_put(c, key, value);
    return c;
  }
  ptrdiff_t e = find(d, key->data, key->len, lang_str_hash(key), NULL);
  ObjDict *r = lang_dict_new();
  r->len = d->len;
  r->cap = d->cap;
  r->index = d->index;
  r->entries = d->entries;
  r->ndiffs = d->ndiffs + 1;
  d->entries = NULL;
  d->index = NULL;
  d->newer = r;
  if (e >= 0) {
    d->at = (size_t)e;
    d->old = r->entries[e].value;
    r->entries[e].value = value;
  } else {
    d->at = LANG_VERSION_PREFIX;
    lang_dict_put(r, key, value);
  }
  return r;
}

ObjDict *lang_dict_del(const ObjDict *d, ObjStr *key) {
  d = current(d);
  ptrdiff_t e = find(d, key->data, key->len, lang_str_hash(key), NULL);
  if (e < 0) return NULL;
  ObjDict *c = lang_dict_new();
  if (d->len > 1) c->entries = lang_alloc(entries_room(d->len - 1) * sizeof(DictEntry));
  for (size_t i = 0; i < d->len; i++)
    if ((ptrdiff_t)i != e) c->entries[c->len++] = d->entries[i];
  if (c->len > DICT_LINEAR) {
    size_t cap = 16;
    while (cap < 2 * c->len) cap *= 2;
    rebuild_index(c, cap);
  }
  return c;
}

/* ---- interning ---- */

ObjStr *lang_intern(MistVM *vm, const char *s, size_t len) {
  if (!vm->interned) vm->interned = lang_dict_new();
  ObjDict *d = current(vm->interned);
  ptrdiff_t e = find(d, s, len, hash_bytes(s, len), NULL);
  if (e >= 0) return d->entries[e].key;
  ObjStr *k = lang_str_new(s, len);
  lang_dict_put(d, k, v_none());
  return k;
}

/* ---- ranges, builtins ---- */

ObjRange *lang_range_new(int64_t start, int64_t stop, int64_t step) {
  ObjRange *r = lang_alloc_atomic(sizeof(ObjRange));
  r->obj.kind = O_RANGE;
  r->start = start;
  r->stop = stop;
  r->step = step;
  return r;
}

uint64_t lang_range_count(const ObjRange *r) {
  if (r->step > 0 && r->start < r->stop) {
    uint64_t span = (uint64_t)r->stop - (uint64_t)r->start - 1;
    return span / (uint64_t)r->step + 1;
  }
  if (r->step < 0 && r->start > r->stop) {
    uint64_t span = (uint64_t)r->start - (uint64_t)r->stop - 1;
    uint64_t st = (uint64_t)0 - (uint64_t)r->step;
    return span / st + 1;
  }
  return 0;
}

ObjBuiltin *lang_builtin_new(const char *name, BuiltinFn fn, int min_args, int max_args) {
  ObjBuiltin *b = lang_alloc(sizeof(ObjBuiltin));
  b->obj.kind = O_BUILTIN;
  b->name = name;
  b->fn = fn;
  b->prim = -1;
  b->op = -1;
  b->min_args = min_args;
  b->max_args = max_args;
  return b;
}

bool lang_holds_function(Value v) {
  if (v.tag != V_OBJ) return false;
  Obj *o = v.o;
  switch (o->kind) {
  case O_FUNC: case O_BUILTIN: case O_BOUND: return true;
  case O_TUPLE: case O_LIST: case O_DICT: break;
  default: return false;
  }
  if (o->flags & OBJ_FN_KNOWN) return o->flags & OBJ_FN_HELD;
  bool held = false;
  if (o->kind == O_DICT) {
    ObjDict *d = AS_DICT(v);
    for (size_t i = 0; i < d->len && !held; i++) held = lang_holds_function(d->entries[i].value);
  } else {
    ObjSeq *s = AS_SEQ(v);
    for (size_t i = 0; i < s->len && !held; i++) held = lang_holds_function(s->items[i]);
  }
  o->flags |= OBJ_FN_KNOWN | (held ? OBJ_FN_HELD : 0);
  return held;
}

const char *lang_type_name(Value v) {
  switch (v.tag) {
  case V_UNBOUND: return "unbound";
  case V_NONE: return "NoneType";
  case V_BOOL: return "bool";
  case V_INT: return "int";
  case V_FLOAT: return "float";
  case V_OBJ: break;
  }
  switch (v.o->kind) {
  case O_STR: return "str";
  case O_TUPLE: return "tuple";
  case O_LIST: return "list";
  case O_DICT: return "dict";
  case O_RANGE: return "range";
  case O_FUNC: return "function";
  case O_BUILTIN: return "builtin_function_or_method";
  case O_MODULE: return "module";
  case O_GRAPH: return "graph";
  case O_SLICE: return "slice";
  case O_BOUND: return "builtin_function_or_method";
  case O_ENV: return "env";
  case O_SPARSE: return "sensitivity";
  case O_TENSOR: return "tensor";
  case O_FILE: return "file";
  case O_ELLIPSIS: return "ellipsis";
  case O_ITER: return "iterator";
  case O_NATIVE: return AS_NATIVE(v)->cls->name;
  }
  return "object";
}
