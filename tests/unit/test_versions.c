/* test_versions.c: Check suite of the versioned lists, dicts and tensor
 * buffers (lang/value.c and lang/tensor.c, "Versions"), which update in
 * place and keep every older value readable.
 *
 * Random operation sequences (seeded) run on a pool of values, each
 * paired with a plain reference model written here (a C array, an array
 * of key-value pairs in insertion order, an array of doubles): an
 * operation takes any value of the pool, old or new, and adds its result
 * to the pool; every so often each value is checked against its model
 * through every way of reading it: indexing, length, slicing, iteration,
 * membership, equality with the other values, printing, and for tensors
 * views taken before later updates.  Collections run in between, so a
 * storage still in use that the collector could free would show.
 *
 * Lists and dicts have no hash in Mist (dict keys are str), so hashing
 * is not tested here.  MIST_VERSIONS_SEED (default 1) and
 * MIST_VERSIONS_OPS (default 4000 per sequence) in the environment run
 * other or longer sequences.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "lang/tensor.h"
#include "lang/vm.h"

static MistVM *vm;

static void setup(void) { vm = lang_vm_new(); }
static void teardown(void) {
  lang_vm_free(vm);
  vm = NULL;
}

/* ---- helpers ---- */

static uint64_t rng;
static uint32_t rnd(uint32_t n) {   /* uniform in [0, n) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng % n);
}

static int env_int(const char *name, int dflt) {
  const char *s = getenv(name);
  return s && *s ? atoi(s) : dflt;
}

static void seed(int salt) { rng = 0x9E3779B97F4A7C15ull * (uint64_t)(env_int("MIST_VERSIONS_SEED", 1) + salt) | 1; }

static int nops(void) { return env_int("MIST_VERSIONS_OPS", 4000); }

static const char *err(void) {
  ck_assert(vm->err.set);
  const char *r = lang_str_fmt("%s: %s", vm->err.kind, vm->err.message->data)->data;
  lang_error_clear(vm);
  return r;
}

static const char *repr(Value v) {
  StrBuf sb;
  sb_init(&sb);
  ck_assert(lang_repr(vm, v, &sb));
  return sb.data;
}

/* ---- lists ---- */

#define POOL 12
#define MAXLEN 400

typedef struct ListModel {
  int n;
  int64_t *items;
} ListModel;

static ListModel lm_copy(const ListModel *m, int extra) {
  ListModel c = {m->n, malloc(sizeof(int64_t) * (size_t)(m->n + extra + 1))};
  memcpy(c.items, m->items, sizeof(int64_t) * (size_t)m->n);
  return c;
}

static const char *lm_repr(const ListModel *m) {
  StrBuf sb;
  sb_init(&sb);
  sb_adds(&sb, "[");
  for (int i = 0; i < m->n; i++) sb_printf(&sb, "%s%lld", i ? ", " : "", (long long)m->items[i]);
  sb_adds(&sb, "]");
  return sb.data;
}

static bool lm_equal(const ListModel *a, const ListModel *b) {
  return a->n == b->n && memcmp(a->items, b->items, sizeof(int64_t) * (size_t)a->n) == 0;
}

static void check_list(Value v, const ListModel *m, Value *pool, ListModel *models, int npool) {
  int64_t len;
  ck_assert(lang_len(vm, v, &len));
  ck_assert_int_eq(len, m->n);
  /* indexing, from both ends */
  for (int k = 0; k < 8 && m->n; k++) {
    int i = (int)rnd((uint32_t)m->n);
    Value r;
    ck_assert(lang_getitem(vm, v, v_int(rnd(2) ? i : i - m->n), &r));
    ck_assert_int_eq(r.i, m->items[i]);
  }
  Value r;
  ck_assert(!lang_getitem(vm, v, v_int(m->n), &r));
  err();
  /* printing, iteration, membership */
  ck_assert_str_eq(repr(v), lm_repr(m));
  ObjSeq *items;
  ck_assert(lang_iter_items(vm, v, &items));
  ck_assert_int_eq((int)items->len, m->n);
  for (int i = 0; i < m->n; i++) ck_assert_int_eq(items->items[i].i, m->items[i]);
  if (m->n) {
    bool in;
    ck_assert(lang_contains(vm, v, v_int(m->items[rnd((uint32_t)m->n)]), &in));
    ck_assert(in);
  }
  /* a slice a:b:s */
  int a = (int)rnd((uint32_t)m->n + 1), b = (int)rnd((uint32_t)m->n + 1), s = (int)rnd(3) + 1;
  if (rnd(2)) s = -s;
  ck_assert(lang_getitem(vm, v, lang_slice_new(v_int(a), v_int(b), v_int(s)), &r));
  ListModel sl = {0, malloc(sizeof(int64_t) * (size_t)(m->n + 1))};
  if (s < 0 && a >= m->n) a = m->n - 1;   /* Python's clamping of a and b in [0, n] */
  if (s < 0 && b >= m->n) b = m->n - 1;
  for (int i = a; s > 0 ? i < b : i > b; i += s) sl.items[sl.n++] = m->items[i];
  ck_assert_str_eq(repr(r), lm_repr(&sl));
  free(sl.items);
  /* equality with every value of the pool */
  for (int j = 0; j < npool; j++) ck_assert_int_eq(lang_equal(v, pool[j]), lm_equal(m, &models[j]));
}

/* A random list operation on the pool: an update, a concatenation, or
 * an alias kept as it is; the result goes into the pool. */
static void list_step(Value *pool, ListModel *models, int *npool) {
  int p = (int)rnd((uint32_t)*npool);
  ListModel *m = &models[p];
  Value r;
  ListModel nm;
  uint32_t op = rnd(10);
  if (op < 6 && m->n > 0) {
    int i = (int)rnd((uint32_t)m->n);
    int64_t x = rnd(1000);
    ck_assert(lang_setitem(vm, pool[p], v_int(rnd(2) ? i : i - m->n), v_int(x), &r));
    nm = lm_copy(m, 0);
    nm.items[i] = x;
  } else if (op < 9 && m->n < MAXLEN) {
    int q = (int)rnd((uint32_t)*npool);
    Value other;
    ListModel om;
    bool made = false;
    if (rnd(2) && models[q].n + m->n <= MAXLEN) {
      other = pool[q];
      om = models[q];
    } else {
      made = true;
      int k = (int)rnd(3) + 1;
      ObjSeq *t = lang_list_new((size_t)k);
      om.n = k;
      om.items = malloc(sizeof(int64_t) * (size_t)k);
      for (int i = 0; i < k; i++) t->items[i] = v_int(om.items[i] = rnd(1000));
      other = v_obj(t);
    }
    ck_assert(lang_arith(vm, OP_ADD, pool[p], other, &r));
    nm = lm_copy(m, om.n);
    memcpy(nm.items + m->n, om.items, sizeof(int64_t) * (size_t)om.n);
    nm.n += om.n;
    if (made) free(om.items);
  } else {
    ck_assert(lang_setitem(vm, pool[p], v_int(m->n + 5), v_int(0), &r) == false);
    ck_assert_str_eq(err(), "IndexError: list assignment index out of range");
    r = pool[p];
    nm = lm_copy(m, 0);
  }
  bool fresh = *npool < POOL;
  int slot = fresh ? (*npool)++ : (int)rnd(POOL);
  if (!fresh) free(models[slot].items);
  pool[slot] = r;
  models[slot] = nm;
}

START_TEST(t_list_random) {
  seed(_i);
  Value pool[POOL];
  ListModel models[POOL];
  int npool = 1;
  int n0 = (int)rnd(80);
  ObjSeq *l0 = lang_list_new((size_t)n0);
  models[0].n = n0;
  models[0].items = malloc(sizeof(int64_t) * (size_t)(n0 + 1));
  for (int i = 0; i < n0; i++) l0->items[i] = v_int(models[0].items[i] = i);
  pool[0] = v_obj(l0);
  int n = nops();
  for (int step = 0; step < n; step++) {
    list_step(pool, models, &npool);
    if (step % 97 == 0) {
      if (step % 3 == 0) lang_gc_collect();
      for (int j = 0; j < npool; j++) check_list(pool[j], &models[j], pool, models, npool);
    }
  }
  for (int j = 0; j < npool; j++) check_list(pool[j], &models[j], pool, models, npool);
  for (int j = 0; j < npool; j++) free(models[j].items);
}
END_TEST

/* One list updated many times while its first version is kept: every
 * version kept reads right, and the work to bring one back stays
 * bounded (the chain from any version to the current one is no longer
 * than the budget, about its length, lang/value.c). */
START_TEST(t_list_chain_bound) {
  int n = 50;
  Value v = v_obj(lang_list_new((size_t)n));
  for (int i = 0; i < n; i++) AS_SEQ(v)->items[i] = v_int(0);
  Value first = v, kept[100];
  for (int k = 0; k < 5000; k++) {
    Value r;
    ck_assert(lang_setitem(vm, v, v_int(k % n), v_int(k + 1), &r));
    if (k % 50 == 0) kept[k / 50] = v;
    v = r;
    size_t chain = 0;
    for (ObjList *c = (ObjList *)first.o; !c->seq.items; c = c->newer) chain++;
    ck_assert_uint_le(chain, (size_t)n + 16);
  }
  for (int k = 0; k < 100; k++) {
    ObjSeq *s = AS_SEQ(kept[k]);
    for (int i = 0; i < n; i++) {
      /* item i was last set by update number k*50 - 1 - ((k*50 - 1 - i) mod n) */
      int last = k * 50 - 1;
      int64_t want = 0;
      for (int j = last; j >= 0; j--)
        if (j % n == i) {
          want = j + 1;
          break;
        }
      ck_assert_int_eq(s->items[i].i, want);
    }
  }
  ListModel zeros = {n, calloc((size_t)n, sizeof(int64_t))};
  ck_assert_str_eq(repr(first), lm_repr(&zeros));
  free(zeros.items);
}
END_TEST

/* Appending in a loop grows in place: the storage is shared by the
 * versions, and it is copied only O(log n) times. */
START_TEST(t_list_append_amortised) {
  Value v = v_obj(lang_list_new(0));
  int moves = 0;
  Value *last_items = NULL;
  for (int i = 0; i < 100000; i++) {
    ObjSeq *one = lang_list_new(1);
    one->items[0] = v_int(i);
    Value r;
    ck_assert(lang_arith(vm, OP_ADD, v, v_obj(one), &r));
    if (AS_SEQ(r)->items != last_items) moves++;
    last_items = AS_SEQ(r)->items;
    v = r;
  }
  ck_assert_int_lt(moves, 60);
  ObjSeq *s = AS_SEQ(v);
  ck_assert_int_eq((int)s->len, 100000);
  for (int i = 0; i < 100000; i += 997) ck_assert_int_eq(s->items[i].i, i);
}
END_TEST

/* ---- dicts ---- */

#define NKEYS 24

typedef struct DictModel {
  int n;
  int keys[NKEYS];      /* key numbers, in insertion order */
  int64_t vals[NKEYS];
} DictModel;

static ObjStr *key(int k) { return lang_intern(vm, lang_str_fmt("k%d", k)->data, strlen(lang_str_fmt("k%d", k)->data)); }

static int dm_find(const DictModel *m, int k) {
  for (int i = 0; i < m->n; i++)
    if (m->keys[i] == k) return i;
  return -1;
}

static const char *dm_repr(const DictModel *m) {
  StrBuf sb;
  sb_init(&sb);
  sb_adds(&sb, "{");
  for (int i = 0; i < m->n; i++) sb_printf(&sb, "%s'k%d': %lld", i ? ", " : "", m->keys[i], (long long)m->vals[i]);
  sb_adds(&sb, "}");
  return sb.data;
}

/* Python's dict equality: the same keys and values, in any order. */
static bool dm_equal(const DictModel *a, const DictModel *b) {
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++) {
    int j = dm_find(b, a->keys[i]);
    if (j < 0 || b->vals[j] != a->vals[i]) return false;
  }
  return true;
}

static void check_dict(Value v, const DictModel *m, Value *pool, DictModel *models, int npool) {
  int64_t len;
  ck_assert(lang_len(vm, v, &len));
  ck_assert_int_eq(len, m->n);
  ck_assert_str_eq(repr(v), dm_repr(m));
  for (int k = 0; k < NKEYS; k++) {
    Value r;
    int i = dm_find(m, k);
    /* a key made afresh, not the interned one, half the time */
    ObjStr *ks = rnd(2) ? key(k) : lang_str_fmt("k%d", k);
    ck_assert_int_eq(lang_dict_get(AS_DICT(v), ks, &r), i >= 0);
    if (i >= 0) ck_assert_int_eq(r.i, m->vals[i]);
    bool in;
    ck_assert(lang_contains(vm, v, v_obj(ks), &in));
    ck_assert_int_eq(in, i >= 0);
  }
  /* iteration: the keys in insertion order */
  ObjSeq *items;
  ck_assert(lang_iter_items(vm, v, &items));
  ck_assert_int_eq((int)items->len, m->n);
  for (int i = 0; i < m->n; i++) ck_assert_str_eq(AS_STR(items->items[i])->data, key(m->keys[i])->data);
  for (int j = 0; j < npool; j++) ck_assert_int_eq(lang_equal(v, pool[j]), dm_equal(m, &models[j]));
}

static void dict_step(Value *pool, DictModel *models, int *npool) {
  int p = (int)rnd((uint32_t)*npool);
  DictModel nm = models[p];
  Value r;
  int k = (int)rnd(NKEYS);
  uint32_t op = rnd(10);
  if (op < 8) {
    int64_t x = rnd(1000);
    ck_assert(lang_setitem(vm, pool[p], v_obj(rnd(2) ? key(k) : lang_str_fmt("k%d", k)), v_int(x), &r));
    int i = dm_find(&nm, k);
    if (i < 0) {
      i = nm.n++;
      nm.keys[i] = k;
    }
    nm.vals[i] = x;
  } else {
    ObjDict *d = lang_dict_del(AS_DICT(pool[p]), key(k));
    int i = dm_find(&nm, k);
    ck_assert_int_eq(d != NULL, i >= 0);
    if (!d) return;
    r = v_obj(d);
    memmove(&nm.keys[i], &nm.keys[i + 1], sizeof(int) * (size_t)(nm.n - i - 1));
    memmove(&nm.vals[i], &nm.vals[i + 1], sizeof(int64_t) * (size_t)(nm.n - i - 1));
    nm.n--;
  }
  int slot = *npool < POOL ? (*npool)++ : (int)rnd(POOL);
  pool[slot] = r;
  models[slot] = nm;
}

START_TEST(t_dict_random) {
  seed(100 + _i);
  Value pool[POOL];
  DictModel models[POOL];
  int npool = 1;
  pool[0] = v_obj(lang_dict_new());
  models[0].n = 0;
  int n = nops();
  for (int step = 0; step < n; step++) {
    dict_step(pool, models, &npool);
    if (step % 61 == 0) {
      if (step % 3 == 0) lang_gc_collect();
      for (int j = 0; j < npool; j++) check_dict(pool[j], &models[j], pool, models, npool);
    }
  }
  for (int j = 0; j < npool; j++) check_dict(pool[j], &models[j], pool, models, npool);
}
END_TEST

START_TEST(t_dict_errors) {
  Value d = v_obj(lang_dict_new()), r;
  ck_assert(lang_setitem(vm, d, v_obj(key(1)), v_int(1), &r));
  ck_assert(!lang_setitem(vm, r, v_int(1), v_int(2), &r));
  ck_assert_str_eq(err(), "TypeError: dict keys must be str, not 'int'");
  ck_assert_str_eq(repr(d), "{}");
}
END_TEST

/* ---- tensors ---- */

#define TROWS 20
#define TCOLS 30

/* Read t (2-d, f64) into out[TROWS * TCOLS] through tolist: a read
 * through the same path a program takes. */
static void tensor_read(ObjTensor *t, double *out) {
  Value l;
  ck_assert(lang_tensor_tolist(vm, t, &l));
  ObjSeq *rows = AS_SEQ(l);
  ck_assert_int_eq((int)rows->len, (int)t->shape[0]);
  for (size_t i = 0; i < rows->len; i++) {
    ObjSeq *row = AS_SEQ(rows->items[i]);
    for (size_t j = 0; j < row->len; j++) out[i * row->len + j] = row->items[j].f;
  }
}

typedef struct TensorModel {
  double v[TROWS * TCOLS];
} TensorModel;

/* A view kept across updates: a row or a column of one version. */
typedef struct ViewCheck {
  ObjTensor *view;
  double want[TROWS > TCOLS ? TROWS : TCOLS];
  int n;
} ViewCheck;

START_TEST(t_tensor_random) {
  seed(200 + _i);
  int64_t shape[2] = {TROWS, TCOLS};
  ObjTensor *pool[POOL];
  static TensorModel models[POOL];
  static ViewCheck views[16];
  int npool = 1, nviews = 0;
  pool[0] = lang_tensor_new(vm, DT_F64, 2, shape, true);
  memset(&models[0], 0, sizeof models[0]);
  int n = nops() / 2;
  for (int step = 0; step < n; step++) {
    int p = (int)rnd((uint32_t)npool);
    TensorModel nm = models[p];
    Value r, index;
    int i = (int)rnd(TROWS), j = (int)rnd(TCOLS);
    double x = (double)rnd(1000) - 500.0;
    uint32_t op = rnd(8);
    if (op < 4) {            /* one element: t[i, j] = x (an int or a float) */
      index = lang_tuple_of(2, v_int(i), v_int(rnd(2) ? j : j - TCOLS));
      ck_assert(lang_tensor_setitem(vm, pool[p], index, rnd(2) ? v_float(x) : v_int((int64_t)x), &r));
      nm.v[i * TCOLS + j] = x;
    } else if (op < 5) {     /* a row: t[i] = x */
      ck_assert(lang_tensor_setitem(vm, pool[p], v_int(i), v_float(x), &r));
      for (int c = 0; c < TCOLS; c++) nm.v[i * TCOLS + c] = x;
    } else if (op < 6) {     /* a strided column slice: t[a:b:s, j] = x */
      int a = (int)rnd(TROWS), b = (int)rnd(TROWS + 1), s = (int)rnd(3) + 1;
      index = lang_tuple_of(2, lang_slice_new(v_int(a), v_int(b), v_int(s)), v_int(j));
      ck_assert(lang_tensor_setitem(vm, pool[p], index, v_float(x), &r));
      for (int q = a; q < b; q += s) nm.v[q * TCOLS + j] = x;
    } else if (op < 7) {     /* a block from another version: t[a:a+2, c:c+3] = u[...] */
      int q = (int)rnd((uint32_t)npool), a = (int)rnd(TROWS - 2), c = (int)rnd(TCOLS - 3);
      Value src;
      index = lang_tuple_of(2, lang_slice_new(v_int(a), v_int(a + 2), v_none()),
                            lang_slice_new(v_int(c), v_int(c + 3), v_none()));
      ck_assert(lang_tensor_getitem(vm, pool[q], index, &src));
      ck_assert(lang_tensor_setitem(vm, pool[p], index, src, &r));
      for (int y = a; y < a + 2; y++)
        for (int z = c; z < c + 3; z++) nm.v[y * TCOLS + z] = models[q].v[y * TCOLS + z];
    } else {                 /* keep a view of this version to check later */
      ViewCheck *vc = &views[nviews < 16 ? nviews++ : (int)rnd(16)];
      bool row = rnd(2);
      ck_assert(lang_tensor_getitem(vm, pool[p], row ? v_int(i) : lang_tuple_of(2, lang_slice_new(v_none(), v_none(), v_none()), v_int(j)), &r));
      vc->view = AS_TENSOR(r);
      vc->n = row ? TCOLS : TROWS;
      for (int k = 0; k < vc->n; k++) vc->want[k] = row ? models[p].v[i * TCOLS + k] : models[p].v[k * TCOLS + j];
      continue;
    }
    int slot = npool < POOL ? npool++ : (int)rnd(POOL);
    pool[slot] = AS_TENSOR(r);
    models[slot] = nm;
    if (step % 53 == 0) {
      if (step % 3 == 0) lang_gc_collect();
      double got[TROWS * TCOLS];
      for (int k = 0; k < npool; k++) {
        tensor_read(pool[k], got);
        for (int e = 0; e < TROWS * TCOLS; e++) ck_assert_double_eq(got[e], models[k].v[e]);
      }
      for (int k = 0; k < nviews; k++) {
        Value l;
        ck_assert(lang_tensor_tolist(vm, views[k].view, &l));
        for (int e = 0; e < views[k].n; e++) ck_assert_double_eq(AS_SEQ(l)->items[e].f, views[k].want[e]);
      }
    }
  }
}
END_TEST

/* Updates go in place where they may: a big buffer's bytes move to the
 * new tensor; a small buffer, a broadcast view, an advanced index and a
 * value that does not fit (an error) take the copying way, and a failed
 * update leaves the old tensor as it was. */
START_TEST(t_tensor_in_place) {
  int64_t n = 1000;
  ObjTensor *t = lang_tensor_new(vm, DT_F32, 1, &n, true);
  void *bytes = t->buf->data;
  Value r;
  ck_assert(lang_tensor_setitem(vm, t, v_int(3), v_float(2.5), &r));
  ck_assert_ptr_eq(AS_TENSOR(r)->buf->data, bytes);
  ck_assert_ptr_null(t->buf->data);
  ck_assert(*(float *)lang_tensor_ptr(AS_TENSOR(r)) == 0.0f);
  ck_assert(((float *)lang_tensor_ptr(AS_TENSOR(r)))[3] == 2.5f);
  ck_assert(((float *)lang_tensor_ptr(t))[3] == 0.0f);   /* brought back, in bytes of its own */
  ck_assert_ptr_ne(t->buf->data, bytes);

  int64_t small = 4;
  ObjTensor *s = lang_tensor_new(vm, DT_F32, 1, &small, true);
  ck_assert(lang_tensor_setitem(vm, s, v_int(0), v_float(1.0), &r));
  ck_assert_ptr_nonnull(s->buf->data);
  ck_assert_ptr_ne(AS_TENSOR(r)->buf, s->buf);

  int64_t shape[2] = {4, 1000};
  ObjTensor *b;
  ck_assert(lang_tensor_broadcast_to(vm, "t", t, 2, shape, &b));
  ck_assert(lang_tensor_setitem(vm, b, lang_tuple_of(2, v_int(0), v_int(3)), v_float(7.0), &r));
  ck_assert_ptr_nonnull(t->buf->data);
  ck_assert(((float *)lang_tensor_ptr(AS_TENSOR(r)))[3] == 7.0f);
  ck_assert(((float *)lang_tensor_ptr(AS_TENSOR(r)))[1003] == 0.0f);

  ObjTensor *i32 = lang_tensor_new(vm, DT_I32, 1, &n, true);
  ck_assert(!lang_tensor_setitem(vm, i32, v_int(0), v_int((int64_t)1 << 40), &r));
  ck_assert_str_eq(err(), "OverflowError: Python int 1099511627776 is out of range for i32");
  ck_assert_ptr_nonnull(i32->buf->data);
  int64_t three = 3;
  ObjTensor *wrong = lang_tensor_new(vm, DT_F32, 1, &three, true);
  ck_assert(!lang_tensor_setitem(vm, t, lang_slice_new(v_int(0), v_int(2), v_none()), v_obj(wrong), &r));
  ck_assert_str_eq(err(), "ValueError: setitem: cannot broadcast shape (3,) to (2,)");
  ck_assert_ptr_nonnull(t->buf->data);
}
END_TEST

/* ---- threads ---- */

/* While another thread may read values (vm->background, the data
 * pipeline's count), no update writes in place: the old list, dict and
 * tensor stay current versions, with their own storage. */
START_TEST(t_no_update_in_place_beside_threads) {
  Value l = v_obj(lang_list_new(100)), d = v_obj(lang_dict_new()), r;
  for (int i = 0; i < 100; i++) AS_SEQ(l)->items[i] = v_int(i);
  int64_t n = 1000;
  ObjTensor *t = lang_tensor_new(vm, DT_F64, 1, &n, true);
  __atomic_add_fetch(&vm->background, 1, __ATOMIC_SEQ_CST);
  ck_assert(lang_setitem(vm, l, v_int(3), v_int(-3), &r));
  ck_assert_ptr_nonnull(AS_SEQ(l)->items);
  ck_assert_ptr_ne(AS_SEQ(r)->items, AS_SEQ(l)->items);
  ck_assert(lang_arith(vm, OP_ADD, l, l, &r));
  ck_assert_ptr_nonnull(((ObjSeq *)l.o)->items);
  ck_assert(lang_setitem(vm, d, v_obj(key(1)), v_int(1), &r));
  ck_assert_ptr_null(((ObjDict *)d.o)->newer);
  ck_assert(lang_tensor_setitem(vm, t, v_int(0), v_float(1.0), &r));
  ck_assert_ptr_nonnull(t->buf->data);
  ck_assert_ptr_ne(AS_TENSOR(r)->buf, t->buf);
  __atomic_sub_fetch(&vm->background, 1, __ATOMIC_SEQ_CST);
  ck_assert(lang_setitem(vm, l, v_int(3), v_int(-3), &r));
  ck_assert_ptr_null(((ObjSeq *)l.o)->items);   /* in place again */
}
END_TEST

/* Several threads read the same old versions at once: each is brought
 * back once, under the versions lock, and every thread reads it right. */
typedef struct Readers {
  Value list, dict;
  ObjTensor *tensor;
  int64_t want_list, want_dict;
  double want_tensor;
  atomic_int go, done, bad;
} Readers;

static void *reader(void *arg) {
  Readers *rd = arg;
  while (!atomic_load(&rd->go)) {}
  ObjSeq *s = AS_SEQ(rd->list);
  int64_t sl = 0;
  for (size_t i = 0; i < s->len; i++) sl += s->items[i].i;
  ObjDict *d = AS_DICT(rd->dict);
  int64_t sd = 0;
  for (size_t i = 0; i < d->len; i++) sd += d->entries[i].value.i;
  const double *p = (const double *)lang_tensor_ptr(rd->tensor);
  double st = 0;
  for (int64_t i = 0; i < rd->tensor->size; i++) st += p[i];
  if (sl != rd->want_list || sd != rd->want_dict || st != rd->want_tensor) atomic_fetch_add(&rd->bad, 1);
  atomic_fetch_add(&rd->done, 1);
  return NULL;
}

START_TEST(t_threads_read_old_versions) {
  enum { THREADS = 4 };
  for (int round = 0; round < 20; round++) {
    Readers *rd = lang_alloc_uncollectable(sizeof *rd);
    Value l = v_obj(lang_list_new(1000)), d = v_obj(lang_dict_new()), r;
    for (int i = 0; i < 1000; i++) AS_SEQ(l)->items[i] = v_int(i);
    for (int k = 0; k < NKEYS; k++) lang_dict_put(AS_DICT(d), key(k), v_int(32 + k));
    int64_t n = 1000;
    ObjTensor *t = lang_tensor_new(vm, DT_F64, 1, &n, true);
    rd->list = l;
    rd->dict = d;
    rd->tensor = t;
    rd->want_list = 999 * 1000 / 2;
    rd->want_dict = 32 * NKEYS + NKEYS * (NKEYS - 1) / 2;
    rd->want_tensor = 0.0;
    /* now make them old versions, with chains to walk */
    Value lv = l, dv = d, tv = v_obj(t);
    for (int k = 0; k < 300; k++) {
      ck_assert(lang_setitem(vm, lv, v_int(k), v_int(-1), &r));
      lv = r;
      ck_assert(lang_setitem(vm, dv, v_obj(key(k % NKEYS)), v_int(-1), &r));
      dv = r;
      ck_assert(lang_setitem(vm, tv, v_int(k), v_float(-1.0), &r));
      tv = r;
    }
    ck_assert_ptr_null(((ObjSeq *)l.o)->items);
    ck_assert_ptr_nonnull(((ObjDict *)d.o)->newer);
    ck_assert_ptr_null(t->buf->data);
    for (int k = 0; k < THREADS; k++) ck_assert(lang_gc_thread_start(0, reader, rd));
    atomic_store(&rd->go, 1);
    while (atomic_load(&rd->done) < THREADS) {}
    ck_assert_int_eq(atomic_load(&rd->bad), 0);
    lang_free(rd);
  }
}
END_TEST

/* A test case of the suite, each test with a fresh VM. */
static TCase *test_case(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return tc;
}

Suite *versions_suite(void) {
  Suite *s = suite_create("versions");
  TCase *tc = test_case(s, "lists");
  tcase_add_loop_test(tc, t_list_random, 0, 4);
  tcase_add_test(tc, t_list_chain_bound);
  tcase_add_test(tc, t_list_append_amortised);
  tc = test_case(s, "dicts");
  tcase_add_loop_test(tc, t_dict_random, 0, 4);
  tcase_add_test(tc, t_dict_errors);
  tc = test_case(s, "tensors");
  tcase_add_loop_test(tc, t_tensor_random, 0, 4);
  tcase_add_test(tc, t_tensor_in_place);
  tc = test_case(s, "threads");
  tcase_add_test(tc, t_no_update_in_place_beside_threads);
  tcase_add_test(tc, t_threads_read_old_versions);
  return s;
}

int main(void) {
  lang_gc_init();
  SRunner *sr = srunner_create(versions_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
