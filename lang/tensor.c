/* tensor.c: the tensor object of lang/tensor.h and everything that
 * moves its elements without computing on them: buffers and where they
 * live, dtypes, the strided n-d loop with its casts, views (reshape,
 * transpose, broadcast), indexing (basic, integer and boolean) and its
 * functional update, and the conversions between tensors and nested
 * lists of numbers.
 *
 * Memory.  A buffer under LANG_TENSOR_INLINE_MAX bytes is allocated
 * inside its TensorBuf, in GC memory that is not scanned.  A bigger one
 * comes from the VM's caching allocator (devices/alloc.h), owned by a
 * TensorStore whose finaliser gives it back; its bytes are counted by
 * lang_gc_external_alloc, which collects when they have grown by 64 MiB
 * or when LANG_GC_MIN_STEP bytes of them have been allocated since the
 * last collection (lang/gc.h), so a loop making big temporaries stays
 * within a bounded footprint and reuses the allocator's buffers.
 * The allocator is shared by the VM and every live buffer through a
 * reference count, so a buffer that outlives its VM is still given back
 * to a live allocator.
 *
 * Values are immutable, so a tensor's buffer is written only while the
 * tensor is being made, before any program sees it, except by t[i] = v,
 * which writes in place and keeps the old contents as an old version of
 * the buffer (the section "Versions" below).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "devices/alloc.h"
#include "devices/pool.h"
#include "lang/gc.h"
#include "lang/tensor_impl.h"

/* ---- the VM's pool and allocator ---- */

typedef struct TensorHeap {
  DevAllocator *alloc;
  atomic_long refs;     /* the VM's hold, plus one per live external buffer */
  _Atomic uint64_t made;   /* buffers made: their stamps (dev_buf_free_stamped) */
} TensorHeap;

static void heap_release(TensorHeap *h) {
  if (h && atomic_fetch_sub(&h->refs, 1) == 1) {
    dev_allocator_free(h->alloc);
    free(h);
  }
}

static TensorHeap *heap_of(MistVM *vm) {
  if (!vm->tensor_heap) {
    TensorHeap *h = malloc(sizeof *h);
    if (!h) return NULL;
    h->alloc = dev_allocator_new();
    if (!h->alloc) {
      free(h);
      return NULL;
    }
    atomic_init(&h->refs, 1);
    atomic_init(&h->made, 0);
    vm->tensor_heap = h;
  }
  return vm->tensor_heap;
}

DevAllocator *lang_tensor_allocator(MistVM *vm) {
  TensorHeap *h = heap_of(vm);
  return h ? h->alloc : NULL;
}

/* The pool has MIST_NUM_THREADS workers when that is set (tests use it
 * to check that results do not depend on it), else one per core. */
DevPool *lang_tensor_pool(MistVM *vm) {
  if (!vm->pool) {
    const char *env = getenv("MIST_NUM_THREADS");
    int n = env ? atoi(env) : 0;
    vm->pool = dev_pool_new(n > 0 && n <= 1024 ? n : 0);
  }
  return vm->pool;
}

void lang_tensor_vm_free(MistVM *vm) {
  if (vm->pool) dev_pool_free(vm->pool);
  vm->pool = NULL;
  heap_release(vm->tensor_heap);
  vm->tensor_heap = NULL;
}

/* ---- buffers ---- */

/* The owner of a big buffer's bytes: a GC object that is not scanned,
 * whose finaliser gives the bytes back to the allocator. */
typedef struct TensorStore {
  void *data;
  size_t bytes;
  TensorHeap *heap;
  uint64_t stamp;   /* buffers made before this one: the allocator hands the newest out first */
} TensorStore;

/* A big buffer, as a version of its bytes (the section "Versions"). */
typedef struct TensorVersion {
  TensorBuf buf;
  size_t history;                /* current version: bytes its old versions take (the budget) */
  /* an old version: newer's bytes, except the element at byte `at`,
   * which was `old`, or (at < 0) the elements of region (a view's
   * geometry only), which were `saved` (contiguous) */
  struct TensorVersion *newer;
  int64_t at;
  uint64_t old;
  ObjTensor *region, *saved;
} TensorVersion;

static void store_finalize(void *obj, void *data) {
  (void)data;
  TensorStore *s = obj;
  dev_buf_free_stamped(s->heap->alloc, s->data, s->bytes, s->stamp);
  lang_gc_external_free(s->bytes);
  heap_release(s->heap);
}

static bool out_of_memory(MistVM *vm, size_t bytes) {
  return lang_raise(vm, "MemoryError", "cannot allocate a tensor buffer of %zu bytes", bytes);
}

/* Bytes from heap h, owned by a new store; NULL when there are none.
 * With h NULL, the bytes are GC memory inside the store. */
static TensorStore *store_new(TensorHeap *h, size_t bytes, bool zero) {
  if (!h) {
    TensorStore *s = lang_alloc_atomic(sizeof *s + bytes + 64);
    s->data = (void *)(((uintptr_t)(s + 1) + 63) & ~(uintptr_t)63);
    s->bytes = bytes;
    s->heap = NULL;
    if (zero) memset(s->data, 0, bytes);
    return s;
  }
  lang_gc_external_alloc(bytes);
  void *data = zero ? dev_buf_calloc(h->alloc, bytes) : dev_buf_alloc(h->alloc, bytes);
  if (!data) {   /* garbage may be holding what we need */
    lang_gc_collect();
    data = zero ? dev_buf_calloc(h->alloc, bytes) : dev_buf_alloc(h->alloc, bytes);
  }
  if (!data) {
    lang_gc_external_free(bytes);
    return NULL;
  }
  TensorStore *s = lang_alloc_atomic(sizeof *s);
  s->data = data;
  s->bytes = bytes;
  s->heap = h;
  s->stamp = atomic_fetch_add(&h->made, 1);
  atomic_fetch_add(&h->refs, 1);
  lang_gc_finalize(s, store_finalize, NULL);
  return s;
}

/* A small buffer's bytes follow its TensorBuf at the first multiple of
 * 16 bytes (lang_alloc_atomic's alignment; the kernels load vectors
 * unaligned, so nothing assumes more and no result depends on it).  Aligning
 * them to 64 as big buffers are cost 48 bytes more a tensor, 15% of the
 * heap a reverse pass over small tensors allocates (ADBench's LSTM). */
#define SMALL_DATA_AT ((sizeof(TensorBuf) + 15) & ~(size_t)15)

static TensorBuf *buf_new(MistVM *vm, size_t bytes, bool zero) {
  if (bytes < LANG_TENSOR_INLINE_MAX) {
    TensorBuf *b = lang_alloc_atomic(SMALL_DATA_AT + bytes);
    b->data = (char *)b + SMALL_DATA_AT;
    b->bytes = bytes;
    b->store = NULL;
    if (zero) memset(b->data, 0, bytes);
    return b;
  }
  TensorHeap *h = heap_of(vm);
  TensorStore *s = h ? store_new(h, bytes, zero) : NULL;
  if (!s) {
    out_of_memory(vm, bytes);
    return NULL;
  }
  TensorBuf *b = lang_alloc(sizeof(TensorVersion));
  b->data = s->data;
  b->bytes = bytes;
  b->store = s;
  return b;
}

/* ---- shapes ---- */

void lang_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d] > 0 ? shape[d] : 1;
  }
}

int64_t lang_shape_size(int ndim, const int64_t *shape) {
  int64_t n = 1;
  bool zero = false;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 0) zero = true;
    else if (shape[d] < 0 || __builtin_mul_overflow(n, shape[d], &n) || n > LANG_TENSOR_MAX_SIZE)
      return -1;
  }
  return zero ? 0 : n;
}

void lang_shape_repr(int ndim, const int64_t *shape, StrBuf *out) {
  sb_addc(out, '(');
  for (int d = 0; d < ndim; d++) sb_printf(out, d ? ", %lld" : "%lld", (long long)shape[d]);
  if (ndim == 1) sb_addc(out, ',');
  sb_addc(out, ')');
}

static const char *shape_str(int ndim, const int64_t *shape) {
  StrBuf sb;
  sb_init(&sb);
  lang_shape_repr(ndim, shape, &sb);
  return sb.data;
}

Value lang_shape_tuple(const ObjTensor *t) {
  ObjSeq *s = lang_tuple_new((size_t)t->ndim);
  for (int d = 0; d < t->ndim; d++) s->items[d] = v_int(t->shape[d]);
  return v_obj(s);
}

bool lang_broadcast_shapes(MistVM *vm, const char *fname, int na, const int64_t *sa, int nb,
                           const int64_t *sb, int *nout, int64_t *out) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int64_t x = i < n - na ? 1 : sa[i - (n - na)];
    int64_t y = i < n - nb ? 1 : sb[i - (n - nb)];
    if (x != y && x != 1 && y != 1)
      return lang_raise(vm, "ValueError", "%s: shapes %s and %s cannot be broadcast", fname,
                        shape_str(na, sa), shape_str(nb, sb));
    out[i] = x == 1 ? y : x;
  }
  *nout = n;
  return true;
}

bool lang_tensor_axis(MistVM *vm, int64_t axis, int ndim, int *out) {
  if (axis < -(int64_t)ndim || axis >= ndim) {
    if (ndim == 0)
      return lang_raise(vm, "IndexError", "axis %lld is out of bounds for a 0-d tensor",
                        (long long)axis);
    return lang_raise(vm, "IndexError", "axis %lld is out of bounds for a tensor of %d dimension%s",
                      (long long)axis, ndim, ndim == 1 ? "" : "s");
  }
  *out = (int)(axis < 0 ? axis + ndim : axis);
  return true;
}

bool lang_shape_from_value(MistVM *vm, const char *fname, Value v, bool allow_infer, int *ndim,
                           int64_t *shape) {
  const Value *items = &v;
  size_t n = 1;
  if (v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST)) {
    items = AS_SEQ(v)->items;
    n = AS_SEQ(v)->len;
  } else if (v.tag != V_INT && v.tag != V_BOOL) {
    return lang_raise(vm, "TypeError", "%s: a shape must be an int or a tuple of ints, not %s",
                      fname, lang_type_name(v));
  }
  if (n > LANG_TENSOR_MAX_DIMS)
    return lang_raise(vm, "ValueError", "%s: a tensor has at most %d dimensions, not %zu", fname,
                      LANG_TENSOR_MAX_DIMS, n);
  for (size_t i = 0; i < n; i++) {
    Value x = items[i];
    if (v_is_tensor(x) && AS_TENSOR(x)->ndim == 0 && !lang_dtype_is_float(AS_TENSOR(x)->dtype))
      x = lang_tensor_load(AS_TENSOR(x)->dtype, lang_tensor_ptr(AS_TENSOR(x)));
    if (x.tag != V_INT && x.tag != V_BOOL)
      return lang_raise(vm, "TypeError", "%s: a shape must hold ints, not %s", fname,
                        lang_type_name(x));
    int64_t d = x.tag == V_BOOL ? x.b : x.i;
    if (d < 0 && !(allow_infer && d == -1))
      return lang_raise(vm, "ValueError", "%s: negative dimension %lld in shape", fname,
                        (long long)d);
    shape[i] = d;
  }
  *ndim = (int)n;
  return true;
}

/* ---- dtypes ---- */

bool lang_dtype_from_value(MistVM *vm, const char *fname, Value v, DType *out) {
  if (v_is_obj(v, O_STR)) {
    for (int t = 0; t < DT_COUNT; t++)
      if (strcmp(AS_STR(v)->data, dev_dtype_name((DType)t)) == 0) {
        *out = (DType)t;
        return true;
      }
    return lang_raise(vm, "TypeError",
                      "%s: unknown dtype '%s': expected \"f32\", \"f64\", \"i32\", \"i64\" or \"bool\"",
                      fname, AS_STR(v)->data);
  }
  return lang_raise(vm, "TypeError",
                    "%s: dtype must be a str (\"f32\", \"f64\", \"i32\", \"i64\" or \"bool\"), not %s",
                    fname, lang_type_name(v));
}

DType lang_dtype_promote(DType a, DType b) { return a > b ? a : b; }

int32_t lang_f2i32(double x) {
  if (isnan(x)) return 0;
  if (x >= 2147483647.0) return INT32_MAX;
  if (x <= -2147483648.0) return INT32_MIN;
  return (int32_t)x;
}

int64_t lang_f2i64(double x) {
  if (isnan(x)) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

/* ---- the object ---- */

static ObjTensor *tensor_alloc(int ndim) {
  ObjTensor *t = lang_alloc(sizeof(ObjTensor) + 2 * (size_t)ndim * sizeof(int64_t));
  t->obj.kind = O_TENSOR;
  t->device = LANG_DEVICE_CPU;
  t->ndim = ndim;
  t->shape = t->dims;
  t->strides = t->dims + ndim;
  return t;
}

ObjTensor *lang_tensor_new(MistVM *vm, DType dt, int ndim, const int64_t *shape, bool zero) {
  if (ndim > LANG_TENSOR_MAX_DIMS) {
    lang_raise(vm, "ValueError", "a tensor has at most %d dimensions, not %d",
               LANG_TENSOR_MAX_DIMS, ndim);
    return NULL;
  }
  int64_t size = lang_shape_size(ndim, shape);
  if (size < 0) {
    lang_raise(vm, "MemoryError", "a tensor of shape %s is too large", shape_str(ndim, shape));
    return NULL;
  }
  TensorBuf *b = buf_new(vm, (size_t)size * dev_dtype_size(dt), zero);
  if (!b) return NULL;
  ObjTensor *t = tensor_alloc(ndim);
  t->dtype = dt;
  t->size = size;
  t->offset = 0;
  t->buf = b;
  if (ndim) memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
  lang_contiguous_strides(ndim, shape, t->strides);
  return t;
}

ObjTensor *lang_tensor_view(const ObjTensor *t, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset) {
  ObjTensor *v = tensor_alloc(ndim);
  v->dtype = t->dtype;
  v->device = t->device;
  v->buf = t->buf;
  v->offset = offset;
  if (ndim) {
    memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
    memcpy(v->strides, strides, (size_t)ndim * sizeof *strides);
  }
  v->size = lang_shape_size(ndim, shape);
  return v;
}

bool lang_tensor_is_contiguous(const ObjTensor *t) {
  int64_t s = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] == 1) continue;
    if (t->shape[d] == 0) return true;
    if (t->strides[d] != s) return false;
    s *= t->shape[d];
  }
  return true;
}

bool lang_tensor_reusable(const ObjTensor *t, DType dt, int ndim, const int64_t *shape) {
  if (t->dtype != dt || t->ndim != ndim || t->offset != 0 || !t->buf->data ||
      (size_t)t->size * dev_dtype_size(dt) != t->buf->bytes || !lang_tensor_is_contiguous(t))
    return false;
  for (int d = 0; d < ndim; d++)
    if (t->shape[d] != shape[d]) return false;
  /* a small buffer has no versions (an update copies it); a big one's
   * update leaves history behind */
  return !t->buf->store || ((const TensorVersion *)t->buf)->history == 0;
}

/* ---- elements ---- */

Value lang_tensor_load(DType dt, const char *p) {
  switch (dt) {
  case DT_BOOL: return v_bool(*(const uint8_t *)p != 0);
  case DT_I32: return v_int(*(const int32_t *)p);
  case DT_I64: return v_int(*(const int64_t *)p);
  case DT_F32: return v_float(*(const float *)p);
  case DT_F64: return v_float(*(const double *)p);
  }
  return v_none();
}

bool lang_tensor_store(MistVM *vm, DType dt, char *p, Value v) {
  if (v.tag == V_BOOL) v = v_int(v.b);
  if (v.tag == V_INT) {
    switch (dt) {
    case DT_BOOL: *(uint8_t *)p = v.i != 0; return true;
    case DT_I32:
      if (v.i < INT32_MIN || v.i > INT32_MAX)
        return lang_raise(vm, "OverflowError", "Python int %lld is out of range for i32",
                          (long long)v.i);
      *(int32_t *)p = (int32_t)v.i;
      return true;
    case DT_I64: *(int64_t *)p = v.i; return true;
    case DT_F32: *(float *)p = (float)v.i; return true;
    case DT_F64: *(double *)p = (double)v.i; return true;
    }
  }
  if (v.tag == V_FLOAT) {
    switch (dt) {
    case DT_BOOL: *(uint8_t *)p = v.f != 0; return true;
    case DT_I32: *(int32_t *)p = lang_f2i32(v.f); return true;
    case DT_I64: *(int64_t *)p = lang_f2i64(v.f); return true;
    case DT_F32: *(float *)p = (float)v.f; return true;
    case DT_F64: *(double *)p = v.f; return true;
    }
  }
  return lang_raise(vm, "TypeError", "a tensor element must be a number or a bool, not %s",
                    lang_type_name(v));
}

bool lang_tensor_scalar(MistVM *vm, DType dt, Value v, ObjTensor **out) {
  ObjTensor *t = lang_tensor_new(vm, dt, 0, NULL, false);
  if (!t || !lang_tensor_store(vm, dt, lang_tensor_ptr(t), v)) return false;
  *out = t;
  return true;
}

bool lang_tensor_item(MistVM *vm, const char *fname, ObjTensor *t, Value *out) {
  if (t->size != 1)
    return lang_raise(vm, "ValueError",
                      "%s: only a tensor of one element converts to a Python scalar, not one of "
                      "shape %s", fname, shape_str(t->ndim, t->shape));
  *out = lang_tensor_load(t->dtype, lang_tensor_ptr(t));
  return true;
}

static Value tolist_at(const ObjTensor *t, int d, const char *p) {
  if (d == t->ndim) return lang_tensor_load(t->dtype, p);
  ObjSeq *l = lang_list_new((size_t)t->shape[d]);
  int64_t step = t->strides[d] * (int64_t)dev_dtype_size(t->dtype);
  for (int64_t i = 0; i < t->shape[d]; i++) l->items[i] = tolist_at(t, d + 1, p + i * step);
  return v_obj(l);
}

bool lang_tensor_tolist(MistVM *vm, ObjTensor *t, Value *out) {
  if ((uint64_t)t->size > ((uint64_t)1 << 34) / sizeof(Value))
    return lang_raise(vm, "MemoryError", "tolist: the tensor is too large for a list");
  *out = tolist_at(t, 0, lang_tensor_ptr(t));
  LANG_KEEP(t);
  return true;
}

/* ---- the n-d loop ---- */

void lang_nd_init(LangNdLoop *l, int nops, int ndim, const int64_t *shape) {
  l->nops = nops;
  l->ndim = ndim;
  if (ndim) memcpy(l->shape, shape, (size_t)ndim * sizeof *shape);
}

void lang_nd_operand(LangNdLoop *l, int k, const ObjTensor *t) {
  int64_t es = (int64_t)dev_dtype_size(t->dtype);
  int lead = l->ndim - t->ndim;
  for (int d = 0; d < l->ndim; d++) {
    int td = d - lead;
    l->strides[k][d] = td < 0 || t->shape[td] == 1 ? 0 : t->strides[td] * es;
  }
  l->base[k] = lang_tensor_ptr(t);
}

/* Drop axes of size 1; merge neighbours that are contiguous in every
 * operand.  Leaves at least one axis. */
static void coalesce(LangNdLoop *l) {
  int n = 0;
  for (int d = 0; d < l->ndim; d++) {
    if (l->shape[d] == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < l->nops; k++)
        if (l->strides[k][n - 1] != l->strides[k][d] * l->shape[d]) merge = false;
      if (merge) {
        l->shape[n - 1] *= l->shape[d];
        for (int k = 0; k < l->nops; k++) l->strides[k][n - 1] = l->strides[k][d];
        continue;
      }
    }
    l->shape[n] = l->shape[d];
    for (int k = 0; k < l->nops; k++) l->strides[k][n] = l->strides[k][d];
    n++;
  }
  if (n == 0) {
    l->shape[0] = 1;
    for (int k = 0; k < l->nops; k++) l->strides[k][0] = 0;
    n = 1;
  }
  l->ndim = n;
}

typedef struct RunCtx {
  const LangNdLoop *l;
  LangRowFn fn;
  void *ctx;
  int64_t row;         /* split_row: the row being split */
} RunCtx;

/* Rows [begin, end) of the outer axes. */
static void run_rows(void *vctx, int64_t begin, int64_t end) {
  const RunCtx *r = vctx;
  const LangNdLoop *l = r->l;
  int od = l->ndim - 1, nops = l->nops;
  int64_t idx[LANG_TENSOR_MAX_DIMS];
  char *p[LANG_ND_MAXOPS];
  int64_t s[LANG_ND_MAXOPS];
  int64_t rem = begin;
  for (int d = od - 1; d >= 0; d--) {
    idx[d] = rem % l->shape[d];
    rem /= l->shape[d];
  }
  for (int k = 0; k < nops; k++) {
    p[k] = l->base[k];
    for (int d = 0; d < od; d++) p[k] += idx[d] * l->strides[k][d];
    s[k] = l->strides[k][od];
  }
  int64_t inner = l->shape[od];
  for (int64_t row = begin; row < end; row++) {
    r->fn(r->ctx, p, s, inner);
    for (int d = od - 1; d >= 0; d--) {
      idx[d]++;
      for (int k = 0; k < nops; k++) p[k] += l->strides[k][d];
      if (idx[d] < l->shape[d]) break;
      for (int k = 0; k < nops; k++) p[k] -= l->strides[k][d] * l->shape[d];
      idx[d] = 0;
    }
  }
}

/* Elements [begin, end) of one row. */
static void run_split_row(void *vctx, int64_t begin, int64_t end) {
  const RunCtx *r = vctx;
  const LangNdLoop *l = r->l;
  int od = l->ndim - 1;
  int64_t idx[LANG_TENSOR_MAX_DIMS];
  int64_t rem = r->row;
  for (int d = od - 1; d >= 0; d--) {
    idx[d] = rem % l->shape[d];
    rem /= l->shape[d];
  }
  char *p[LANG_ND_MAXOPS];
  int64_t s[LANG_ND_MAXOPS];
  for (int k = 0; k < l->nops; k++) {
    p[k] = l->base[k] + begin * l->strides[k][od];
    for (int d = 0; d < od; d++) p[k] += idx[d] * l->strides[k][d];
    s[k] = l->strides[k][od];
  }
  r->fn(r->ctx, p, s, end - begin);
}

void lang_nd_run(DevPool *pool, LangNdLoop *l, LangRowFn fn, void *ctx) {
  for (int d = 0; d < l->ndim; d++)
    if (l->shape[d] == 0) return;
  coalesce(l);
  int64_t inner = l->shape[l->ndim - 1], rows = 1;
  for (int d = 0; d < l->ndim - 1; d++) rows *= l->shape[d];
  RunCtx r = {l, fn, ctx, 0};
  if (!pool || dev_pool_size(pool) < 2 || rows * inner < LANG_ND_PAR_MIN) {
    run_rows(&r, 0, rows);
    return;
  }
  if (rows >= 4 * (int64_t)dev_pool_size(pool)) {
    int64_t grain = LANG_ND_PAR_MIN / 4 / inner;
    dev_parallel_for(pool, rows, grain > 0 ? grain : 1, run_rows, &r);
    return;
  }
  for (int64_t row = 0; row < rows; row++) {
    r.row = row;
    dev_parallel_for(pool, inner, LANG_ND_PAR_MIN / 4, run_split_row, &r);
  }
}

/* ---- casts ---- */

#define CV_SAME(x) (x)
#define CV_BOOL(x) ((uint8_t)((x) != 0))
#define CV_I32I(x) ((int32_t)(uint32_t)(uint64_t)(x))
#define CV_I32F(x) lang_f2i32((double)(x))
#define CV_I64F(x) lang_f2i64((double)(x))

#define CAST_ROW(name, ST, DT, CV)                                                   \
  static void name(void *ctx, char *const *p, const int64_t *s, int64_t n) {         \
    (void)ctx;                                                                       \
    char *d = p[0];                                                                  \
    const char *x = p[1];                                                            \
    if (s[0] == (int64_t)sizeof(DT) && s[1] == (int64_t)sizeof(ST)) {                \
      DT *dd = (DT *)d;                                                              \
      const ST *xx = (const ST *)x;                                                  \
      for (int64_t i = 0; i < n; i++) dd[i] = (DT)CV(xx[i]);                         \
      return;                                                                        \
    }                                                                                \
    for (int64_t i = 0; i < n; i++, d += s[0], x += s[1])                            \
      *(DT *)d = (DT)CV(*(const ST *)x);                                             \
  }

CAST_ROW(c_b_b, uint8_t, uint8_t, CV_SAME)
CAST_ROW(c_b_i32, uint8_t, int32_t, CV_SAME)
CAST_ROW(c_b_i64, uint8_t, int64_t, CV_SAME)
CAST_ROW(c_b_f32, uint8_t, float, CV_SAME)
CAST_ROW(c_b_f64, uint8_t, double, CV_SAME)
CAST_ROW(c_i32_b, int32_t, uint8_t, CV_BOOL)
CAST_ROW(c_i32_i32, int32_t, int32_t, CV_SAME)
CAST_ROW(c_i32_i64, int32_t, int64_t, CV_SAME)
CAST_ROW(c_i32_f32, int32_t, float, CV_SAME)
CAST_ROW(c_i32_f64, int32_t, double, CV_SAME)
CAST_ROW(c_i64_b, int64_t, uint8_t, CV_BOOL)
CAST_ROW(c_i64_i32, int64_t, int32_t, CV_I32I)
CAST_ROW(c_i64_i64, int64_t, int64_t, CV_SAME)
CAST_ROW(c_i64_f32, int64_t, float, CV_SAME)
CAST_ROW(c_i64_f64, int64_t, double, CV_SAME)
CAST_ROW(c_f32_b, float, uint8_t, CV_BOOL)
CAST_ROW(c_f32_i32, float, int32_t, CV_I32F)
CAST_ROW(c_f32_i64, float, int64_t, CV_I64F)
CAST_ROW(c_f32_f32, float, float, CV_SAME)
CAST_ROW(c_f32_f64, float, double, CV_SAME)
CAST_ROW(c_f64_b, double, uint8_t, CV_BOOL)
CAST_ROW(c_f64_i32, double, int32_t, CV_I32F)
CAST_ROW(c_f64_i64, double, int64_t, CV_I64F)
CAST_ROW(c_f64_f32, double, float, CV_SAME)
CAST_ROW(c_f64_f64, double, double, CV_SAME)

#define COPY_ROW(T)                                                                  \
  for (int64_t i = 0; i < n; i++) *(T *)(p[0] + i * s[0]) = *(const T *)(p[1] + i * s[1]);

static void copy_row_bytes(void *ctx, char *const *p, const int64_t *s, int64_t n) {
  size_t es = *(const size_t *)ctx;
  if (s[0] == (int64_t)es && s[1] == (int64_t)es) {
    memcpy(p[0], p[1], (size_t)n * es);
    return;
  }
  switch (es) {
  case 1: COPY_ROW(uint8_t) break;
  case 4: COPY_ROW(uint32_t) break;
  default: COPY_ROW(uint64_t) break;
  }
}

LangRowFn lang_cast_row(DType from, DType to) {
  static const LangRowFn table[DT_COUNT][DT_COUNT] = {
    [DT_BOOL] = {c_b_b, c_b_i32, c_b_i64, c_b_f32, c_b_f64},
    [DT_I32] = {c_i32_b, c_i32_i32, c_i32_i64, c_i32_f32, c_i32_f64},
    [DT_I64] = {c_i64_b, c_i64_i32, c_i64_i64, c_i64_f32, c_i64_f64},
    [DT_F32] = {c_f32_b, c_f32_i32, c_f32_i64, c_f32_f32, c_f32_f64},
    [DT_F64] = {c_f64_b, c_f64_i32, c_f64_i64, c_f64_f32, c_f64_f64},
  };
  return table[from][to];
}

/* Copy src (already of dst's shape, or broadcastable to it) into dst;
 * no checks. */
static void copy_raw(DevPool *pool, ObjTensor *dst, const ObjTensor *src) {
  LangNdLoop l;
  lang_nd_init(&l, 2, dst->ndim, dst->shape);
  lang_nd_operand(&l, 0, dst);
  lang_nd_operand(&l, 1, src);
  if (src->dtype == dst->dtype) {
    size_t es = dev_dtype_size(src->dtype);
    lang_nd_run(pool, &l, copy_row_bytes, &es);
  } else {
    lang_nd_run(pool, &l, lang_cast_row(src->dtype, dst->dtype), NULL);
  }
  LANG_KEEP(src);
  LANG_KEEP(dst);
}

static bool broadcasts_to(const ObjTensor *t, int ndim, const int64_t *shape) {
  if (t->ndim > ndim) return false;
  for (int d = 0; d < t->ndim; d++) {
    int64_t x = t->shape[d], y = shape[ndim - t->ndim + d];
    if (x != y && x != 1) return false;
  }
  return true;
}

bool lang_tensor_copy_into(MistVM *vm, const char *fname, ObjTensor *dst, const ObjTensor *src) {
  if (!broadcasts_to(src, dst->ndim, dst->shape))
    return lang_raise(vm, "ValueError", "%s: cannot broadcast shape %s to %s", fname,
                      shape_str(src->ndim, src->shape), shape_str(dst->ndim, dst->shape));
  copy_raw(dst->size >= LANG_ND_PAR_MIN ? lang_tensor_pool(vm) : NULL, dst, src);
  return true;
}

static ObjTensor *copy_as(MistVM *vm, ObjTensor *t, DType dt) {
  ObjTensor *c = lang_tensor_new(vm, dt, t->ndim, t->shape, false);
  if (!c) return NULL;
  copy_raw(t->size >= LANG_ND_PAR_MIN ? lang_tensor_pool(vm) : NULL, c, t);
  return c;
}

ObjTensor *lang_tensor_contiguous(MistVM *vm, ObjTensor *t) {
  if (lang_tensor_is_contiguous(t)) return t;
  return copy_as(vm, t, t->dtype);
}

bool lang_tensor_astype(MistVM *vm, ObjTensor *t, DType dt, ObjTensor **out) {
  if (t->dtype == dt) {
    *out = t;
    return true;
  }
  *out = copy_as(vm, t, dt);
  return *out != NULL;
}

/* ---- views ---- */

bool lang_tensor_reshape(MistVM *vm, ObjTensor *t, int ndim, const int64_t *shape,
                         ObjTensor **out) {
  int64_t sh[LANG_TENSOR_MAX_DIMS];
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < ndim; d++) {
    sh[d] = shape[d];
    if (shape[d] == -1) {
      if (infer >= 0) return lang_raise(vm, "ValueError", "reshape: can only infer one dimension (-1)");
      infer = d;
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {
      known = -1;
    }
  }
  /* with a 0 among the known sizes any -1 would fit: NumPy refuses */
  if (infer >= 0 && known == 0)
    return lang_raise(vm, "ValueError",
                      "reshape: cannot reshape a tensor of shape %s into shape %s: "
                      "the size of -1 is ambiguous beside a 0", shape_str(t->ndim, t->shape),
                      shape_str(ndim, shape));
  if (infer >= 0 && known > 0 && t->size % known == 0) sh[infer] = t->size / known;
  if ((infer >= 0 && sh[infer] == -1) || lang_shape_size(ndim, sh) != t->size)
    return lang_raise(vm, "ValueError", "reshape: cannot reshape a tensor of shape %s into shape %s",
                      shape_str(t->ndim, t->shape), shape_str(ndim, shape));
  ObjTensor *c = lang_tensor_contiguous(vm, t);
  if (!c) return false;
  int64_t st[LANG_TENSOR_MAX_DIMS];
  lang_contiguous_strides(ndim, sh, st);
  *out = lang_tensor_view(c, ndim, sh, st, c->offset);
  return true;
}

bool lang_tensor_transpose(MistVM *vm, ObjTensor *t, const int *perm, ObjTensor **out) {
  int64_t sh[LANG_TENSOR_MAX_DIMS], st[LANG_TENSOR_MAX_DIMS];
  bool seen[LANG_TENSOR_MAX_DIMS] = {false};
  for (int d = 0; d < t->ndim; d++) {
    int p = perm ? perm[d] : t->ndim - 1 - d;
    if (p < 0 || p >= t->ndim || seen[p])
      return lang_raise(vm, "ValueError", "transpose: axes must be a permutation of 0..%d",
                        t->ndim - 1);
    seen[p] = true;
    sh[d] = t->shape[p];
    st[d] = t->strides[p];
  }
  *out = lang_tensor_view(t, t->ndim, sh, st, t->offset);
  return true;
}

bool lang_tensor_broadcast_to(MistVM *vm, const char *fname, ObjTensor *t, int ndim,
                              const int64_t *shape, ObjTensor **out) {
  if (!broadcasts_to(t, ndim, shape))
    return lang_raise(vm, "ValueError", "%s: cannot broadcast shape %s to %s", fname,
                      shape_str(t->ndim, t->shape), shape_str(ndim, shape));
  if (lang_shape_size(ndim, shape) < 0)
    return lang_raise(vm, "MemoryError", "%s: a tensor of shape %s is too large", fname,
                      shape_str(ndim, shape));
  int64_t st[LANG_TENSOR_MAX_DIMS];
  for (int d = 0; d < ndim; d++) {
    int td = d - (ndim - t->ndim);
    st[d] = td < 0 || t->shape[td] != shape[d] ? 0 : t->strides[td];
  }
  *out = lang_tensor_view(t, ndim, shape, st, t->offset);
  return true;
}

/* ---- tensors from nested lists ---- */

typedef struct DataScan {
  const char *fname;
  int ndim;                 /* dimensions found so far */
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  int leaf_depth;           /* depth of the numbers, -1 until the first */
  int dtype;                /* widest element type so far, -1 = none */
} DataScan;

static bool inhomogeneous(MistVM *vm, const DataScan *s, int depth) {
  return lang_raise(vm, "ValueError",
                    "%s: the data is not rectangular: its items differ in shape at depth %d",
                    s->fname, depth);
}

static bool scan_leaf_depth(MistVM *vm, DataScan *s, int depth, int nd, const int64_t *shape) {
  if (s->leaf_depth < 0) {
    if (depth != s->ndim) return inhomogeneous(vm, s, depth);
    if (depth + nd > LANG_TENSOR_MAX_DIMS)
      return lang_raise(vm, "ValueError", "%s: more than %d dimensions", s->fname,
                        LANG_TENSOR_MAX_DIMS);
    for (int d = 0; d < nd; d++) s->shape[depth + d] = shape[d];
    s->ndim = depth + nd;
    s->leaf_depth = depth + nd;
    return true;
  }
  if (s->leaf_depth != depth + nd) return inhomogeneous(vm, s, depth);
  for (int d = 0; d < nd; d++)
    if (s->shape[depth + d] != shape[d]) return inhomogeneous(vm, s, depth + d);
  return true;
}

static bool scan(MistVM *vm, DataScan *s, Value v, int depth) {
  DType dt;
  switch (v.tag) {
  case V_BOOL: dt = DT_BOOL; break;
  case V_INT: dt = DT_I64; break;
  case V_FLOAT: dt = DT_F32; break;
  case V_OBJ:
    if (v.o->kind == O_TUPLE || v.o->kind == O_LIST) {
      ObjSeq *q = AS_SEQ(v);
      if (depth >= LANG_TENSOR_MAX_DIMS)
        return lang_raise(vm, "ValueError", "%s: more than %d dimensions", s->fname,
                          LANG_TENSOR_MAX_DIMS);
      if (s->leaf_depth >= 0 && depth >= s->leaf_depth) return inhomogeneous(vm, s, depth);
      if (depth == s->ndim) {
        s->shape[depth] = (int64_t)q->len;
        s->ndim++;
      } else if (s->shape[depth] != (int64_t)q->len) {
        return inhomogeneous(vm, s, depth);
      }
      if (!lang_check_stack(vm)) return false;
      for (size_t i = 0; i < q->len; i++)
        if (!scan(vm, s, q->items[i], depth + 1)) return false;
      return true;
    }
    if (v.o->kind == O_TENSOR) {
      ObjTensor *t = AS_TENSOR(v);
      if (!scan_leaf_depth(vm, s, depth, t->ndim, t->shape)) return false;
      s->dtype = s->dtype < 0 ? (int)t->dtype : (int)lang_dtype_promote((DType)s->dtype, t->dtype);
      return true;
    }
    /* fall through */
  default:
    return lang_raise(vm, "TypeError", "%s: cannot make a tensor of %s values", s->fname,
                      lang_type_name(v));
  }
  if (!scan_leaf_depth(vm, s, depth, 0, NULL)) return false;
  s->dtype = s->dtype < 0 ? (int)dt : (int)lang_dtype_promote((DType)s->dtype, dt);
  return true;
}

/* Fill t's elements from position *pos on, in row-major order. */
static bool fill(MistVM *vm, ObjTensor *t, Value v, int depth, int64_t *pos) {
  if (v_is_obj(v, O_TUPLE) || v_is_obj(v, O_LIST)) {
    ObjSeq *q = AS_SEQ(v);
    for (size_t i = 0; i < q->len; i++)
      if (!fill(vm, t, q->items[i], depth + 1, pos)) return false;
    return true;
  }
  if (v_is_tensor(v)) {
    ObjTensor *src = AS_TENSOR(v);
    int nd = t->ndim - depth;
    ObjTensor *dst = lang_tensor_view(t, nd, t->shape + depth, t->strides + depth, *pos);
    copy_raw(NULL, dst, src);
    *pos += src->size;
    return true;
  }
  if (!lang_tensor_store(vm, t->dtype, (char *)t->buf->data + *pos * (int64_t)dev_dtype_size(t->dtype), v))
    return false;
  (*pos)++;
  return true;
}

bool lang_tensor_from_value(MistVM *vm, const char *fname, Value data, int dtype,
                            ObjTensor **out) {
  if (v_is_tensor(data)) {
    if (dtype < 0) {
      *out = AS_TENSOR(data);
      return true;
    }
    return lang_tensor_astype(vm, AS_TENSOR(data), (DType)dtype, out);
  }
  DataScan s = {fname, 0, {0}, -1, -1};
  if (!scan(vm, &s, data, 0)) return false;
  DType dt = dtype >= 0 ? (DType)dtype : s.dtype >= 0 ? (DType)s.dtype : DT_F32;
  ObjTensor *t = lang_tensor_new(vm, dt, s.ndim, s.shape, false);
  if (!t) return false;
  int64_t pos = 0;
  if (!fill(vm, t, data, 0, &pos)) return false;
  *out = t;
  return true;
}

bool lang_tensor_full(MistVM *vm, DType dt, int ndim, const int64_t *shape, Value v,
                      ObjTensor **out) {
  ObjTensor *one;
  if (!lang_tensor_scalar(vm, dt, v, &one)) return false;
  bool zero = false;
  switch (dt) {
  case DT_BOOL: zero = *(uint8_t *)lang_tensor_ptr(one) == 0; break;
  case DT_I32: zero = *(int32_t *)lang_tensor_ptr(one) == 0; break;
  case DT_I64: zero = *(int64_t *)lang_tensor_ptr(one) == 0; break;
  case DT_F32: {
    float f = *(float *)lang_tensor_ptr(one);
    zero = f == 0 && !signbit(f);
    break;
  }
  case DT_F64: {
    double f = *(double *)lang_tensor_ptr(one);
    zero = f == 0 && !signbit(f);
    break;
  }
  }
  ObjTensor *t = lang_tensor_new(vm, dt, ndim, shape, zero);
  if (!t) return false;
  if (!zero) copy_raw(t->size >= LANG_ND_PAR_MIN ? lang_tensor_pool(vm) : NULL, t, one);
  *out = t;
  return true;
}

bool lang_tensor_of_value(MistVM *vm, const char *fname, Value v, DType dt, ObjTensor **out) {
  if (v_is_tensor(v)) {
    *out = AS_TENSOR(v);
    return true;
  }
  if (v.tag == V_INT || v.tag == V_FLOAT || v.tag == V_BOOL) return lang_tensor_scalar(vm, dt, v, out);
  if (v_is_obj(v, O_LIST) || v_is_obj(v, O_TUPLE)) return lang_tensor_from_value(vm, fname, v, -1, out);
  return lang_raise(vm, "TypeError", "%s: expected a tensor or a number, not %s", fname,
                    lang_type_name(v));
}

/* ---- indexing ---- */

/* What an index selects: a view V of the tensor (basic indexing done),
 * and at most one block of advanced-index axes of V, [adv, adv + adv_nd):
 * a list of positions (npos of them, each adv_nd indices, already
 * bounds-checked and non-negative) whose result axes have shape
 * res_shape.  Several advanced indices (int tensors or lists, bool
 * tensors as the positions of their true elements, and ints beside
 * them) are broadcast together, as NumPy does: their result axes stand
 * where the first one was when they are side by side in the index, and
 * first otherwise, so V's advanced axes are moved to the front then. */
typedef struct Selection {
  ObjTensor *view;
  int adv;                  /* -1: basic indexing only */
  int adv_nd;
  int64_t npos;
  int64_t *pos;             /* npos * adv_nd indices */
  int res_nd;
  int64_t res_shape[LANG_TENSOR_MAX_DIMS];
} Selection;

static bool index_error(MistVM *vm, int64_t i, int axis, int64_t size) {
  return lang_raise(vm, "IndexError", "index %lld is out of bounds for axis %d with size %lld",
                    (long long)i, axis, (long long)size);
}

/* Python's slice clamping (PySlice_AdjustIndices). */
static bool slice_range(MistVM *vm, const ObjSlice *sl, int64_t len, int64_t *start, int64_t *step,
                        int64_t *count) {
  const Value parts[3] = {sl->start, sl->stop, sl->step};
  for (int i = 0; i < 3; i++)
    if (parts[i].tag != V_NONE && parts[i].tag != V_INT && parts[i].tag != V_BOOL)
      return lang_raise(vm, "TypeError", "slice indices must be integers or None, not %s",
                        lang_type_name(parts[i]));
#define AS_I(v) ((v).tag == V_BOOL ? (int64_t)(v).b : (v).i)
  int64_t st = sl->step.tag == V_NONE ? 1 : AS_I(sl->step);
  if (st == 0) return lang_raise(vm, "ValueError", "slice step cannot be zero");
  if (st < -INT64_MAX) st = -INT64_MAX;
  int64_t a, b;
  if (sl->start.tag == V_NONE) {
    a = st < 0 ? len - 1 : 0;
  } else {
    a = AS_I(sl->start);
    if (a < 0) {
      a = a < -len ? (st < 0 ? -1 : 0) : a + len;
    } else if (a >= len) {
      a = st < 0 ? len - 1 : len;
    }
  }
  if (sl->stop.tag == V_NONE) {
    b = st < 0 ? -1 : len;
  } else {
    b = AS_I(sl->stop);
    if (b < 0) {
      b = b < -len ? (st < 0 ? -1 : 0) : b + len;
    } else if (b >= len) {
      b = st < 0 ? len - 1 : len;
    }
  }
#undef AS_I
  if (st < 0) *count = b < a ? (a - b - 1) / (-st) + 1 : 0;
  else *count = a < b ? (b - a - 1) / st + 1 : 0;
  *start = a;
  *step = st;
  return true;
}

typedef enum { IX_INT, IX_SLICE, IX_NONE, IX_ADV, IX_ELLIPSIS } IxKind;

static bool classify(MistVM *vm, Value v, IxKind *k, Value *adv) {
  if (v.tag == V_INT) {
    *k = IX_INT;
    return true;
  }
  if (v.tag == V_NONE) {
    *k = IX_NONE;
    return true;
  }
  if (v_is_obj(v, O_SLICE)) {
    *k = IX_SLICE;
    return true;
  }
  if (v_is_obj(v, O_ELLIPSIS)) {
    *k = IX_ELLIPSIS;
    return true;
  }
  if (v_is_tensor(v)) {
    ObjTensor *t = AS_TENSOR(v);
    if (lang_dtype_is_float(t->dtype))
      return lang_raise(vm, "IndexError",
                        "tensors used as indices must hold ints or bools, not %s",
                        dev_dtype_name(t->dtype));
    *k = IX_ADV;
    *adv = v;
    return true;
  }
  if (v_is_obj(v, O_LIST)) {
    ObjTensor *t;
    if (AS_SEQ(v)->len == 0) {
      int64_t zero = 0;
      t = lang_tensor_new(vm, DT_I64, 1, &zero, false);
      if (!t) return false;
    } else if (!lang_tensor_from_value(vm, "index", v, -1, &t)) {
      return false;
    }
    if (lang_dtype_is_float(t->dtype))
      return lang_raise(vm, "IndexError", "a list used as an index must hold ints or bools");
    *k = IX_ADV;
    *adv = v_obj(t);
    return true;
  }
  return lang_raise(vm, "TypeError",
                    "tensor indices must be ints, slices, None, ..., or int or bool tensors, not %s",
                    lang_type_name(v));
}

/* One advanced index after bool tensors are split: an i64 tensor whose
 * values index view axis `axis` (original axis `orig`). */
typedef struct AdvIndex {
  ObjTensor *ix;
  int axis, orig;
} AdvIndex;

/* The positions of the true elements of a bool tensor, one i64 tensor
 * per axis (NumPy's nonzero), each 1-d of the count. */
static bool nonzero(MistVM *vm, ObjTensor *mask, ObjTensor **out) {
  mask = lang_tensor_contiguous(vm, mask);
  if (!mask) return false;
  const uint8_t *mb = (const uint8_t *)lang_tensor_ptr(mask);
  int64_t count = 0;
  for (int64_t i = 0; i < mask->size; i++) count += mb[i] != 0;
  int m = mask->ndim;
  int64_t *cols[LANG_TENSOR_MAX_DIMS];
  for (int k = 0; k < m; k++) {
    out[k] = lang_tensor_new(vm, DT_I64, 1, &count, false);
    if (!out[k]) return false;
    cols[k] = (int64_t *)lang_tensor_ptr(out[k]);
  }
  int64_t idx[LANG_TENSOR_MAX_DIMS] = {0}, q = 0;
  for (int64_t i = 0; i < mask->size; i++) {
    if (mb[i]) {
      for (int k = 0; k < m; k++) cols[k][q] = idx[k];
      q++;
    }
    for (int k = m - 1; k >= 0; k--) {
      if (++idx[k] < mask->shape[k]) break;
      idx[k] = 0;
    }
  }
  LANG_KEEP(mask);
  return true;
}

static bool select_index(MistVM *vm, ObjTensor *t, Value index, Selection *sel) {
  const Value *items = &index;
  size_t n = 1;
  if (v_is_obj(index, O_TUPLE)) {
    items = AS_SEQ(index)->items;
    n = AS_SEQ(index)->len;
  }
  IxKind kinds[64];
  Value vals[64];
  if (n > 64) return lang_raise(vm, "IndexError", "too many indices for a tensor");
  int consumed = 0, narrays = 0, ellipsis = -1;
  for (size_t i = 0; i < n; i++) {
    Value v = items[i];
    if (v_is_tensor(v) && AS_TENSOR(v)->ndim == 0 && AS_TENSOR(v)->dtype != DT_BOOL &&
        !lang_dtype_is_float(AS_TENSOR(v)->dtype))
      v = lang_tensor_load(AS_TENSOR(v)->dtype, lang_tensor_ptr(AS_TENSOR(v)));
    if (v.tag == V_BOOL)
      return lang_raise(vm, "TypeError", "tensor indices must be ints, slices, None, ..., or int or "
                                         "bool tensors, not bool");
    vals[i] = v;
    if (!classify(vm, v, &kinds[i], &vals[i])) return false;
    switch (kinds[i]) {
    case IX_INT: case IX_SLICE: consumed++; break;
    case IX_NONE: break;
    case IX_ELLIPSIS:
      if (ellipsis >= 0) return lang_raise(vm, "IndexError", "an index can only have a single ellipsis ('...')");
      ellipsis = (int)i;
      break;
    case IX_ADV: {
      ObjTensor *a = AS_TENSOR(vals[i]);
      consumed += a->dtype == DT_BOOL ? a->ndim : 1;
      narrays++;
      break;
    }
    }
  }
  if (consumed > t->ndim)
    return lang_raise(vm, "IndexError",
                      "too many indices for tensor: tensor is %d-dimensional, but %d were indexed",
                      t->ndim, consumed);
  int fill = t->ndim - consumed;   /* the axes `...` stands for, or that follow the index */

  /* basic indexing: the view, keeping the axes that advanced indices
   * (and ints beside them) index; then those indices, per view axis */
  int64_t sh[LANG_TENSOR_MAX_DIMS + 64], st[LANG_TENSOR_MAX_DIMS + 64];
  int64_t off = t->offset;
  int d = 0, o = 0, nadv = 0, first_item = -1, last_item = -1;
  AdvIndex adv[LANG_TENSOR_MAX_DIMS];
  bool adjacent = true;
  for (size_t i = 0; i < n; i++) {
    IxKind k = kinds[i];
    if (k == IX_INT && narrays == 0) {
      int64_t j = vals[i].i, q = j < 0 ? j + t->shape[d] : j;
      if (q < 0 || q >= t->shape[d]) return index_error(vm, j, d, t->shape[d]);
      off += q * t->strides[d];
      d++;
      continue;
    }
    if (k == IX_INT || k == IX_ADV) {
      /* an advanced index: each array (or bool axis) keeps its view axis */
      if (first_item >= 0 && last_item != (int)i - 1) adjacent = false;
      if (first_item < 0) first_item = (int)i;
      last_item = (int)i;
      ObjTensor *parts[LANG_TENSOR_MAX_DIMS];
      int m = 1;
      if (k == IX_INT) {
        if (!lang_tensor_scalar(vm, DT_I64, vals[i], &parts[0])) return false;
      } else if (AS_TENSOR(vals[i])->dtype == DT_BOOL) {
        ObjTensor *mask = AS_TENSOR(vals[i]);
        m = mask->ndim;
        for (int q = 0; q < m; q++)
          if (mask->shape[q] != t->shape[d + q])
            return lang_raise(vm, "IndexError",
                              "boolean index did not match indexed tensor along axis %d; size of axis "
                              "is %lld but size of corresponding boolean axis is %lld",
                              d + q, (long long)t->shape[d + q], (long long)mask->shape[q]);
        if (m == 0) return lang_raise(vm, "IndexError", "a 0-d bool tensor cannot be used as an index");
        if (!nonzero(vm, mask, parts)) return false;
      } else {
        if (!lang_tensor_astype(vm, AS_TENSOR(vals[i]), DT_I64, &parts[0])) return false;
      }
      for (int q = 0; q < m; q++) {
        if (nadv == LANG_TENSOR_MAX_DIMS) return lang_raise(vm, "IndexError", "too many indices for a tensor");
        adv[nadv].ix = parts[q];
        adv[nadv].axis = o;
        adv[nadv].orig = d;
        nadv++;
        sh[o] = t->shape[d];
        st[o] = t->strides[d];
        o++;
        d++;
      }
      continue;
    }
    switch (k) {
    case IX_SLICE: {
      int64_t start = 0, step = 1, count = 0;
      if (!slice_range(vm, AS_SLICE(vals[i]), t->shape[d], &start, &step, &count)) return false;
      if (count > 0) off += start * t->strides[d];
      sh[o] = count;
      st[o] = t->strides[d] * step;
      o++;
      d++;
      break;
    }
    case IX_NONE:
      sh[o] = 1;
      st[o] = 0;
      o++;
      break;
    case IX_ELLIPSIS:
      for (int q = 0; q < fill; q++, d++, o++) {
        sh[o] = t->shape[d];
        st[o] = t->strides[d];
      }
      break;
    default: break;
    }
  }
  for (; d < t->ndim; d++, o++) {
    sh[o] = t->shape[d];
    st[o] = t->strides[d];
  }
  sel->adv = -1;
  if (nadv == 0) {
    if (o > LANG_TENSOR_MAX_DIMS)
      return lang_raise(vm, "IndexError", "the result would have more than %d dimensions", LANG_TENSOR_MAX_DIMS);
    sel->view = lang_tensor_view(t, o, sh, st, off);
    return true;
  }

  /* the indices broadcast together */
  int bnd = 0;
  int64_t bshape[LANG_TENSOR_MAX_DIMS];
  for (int k = 0; k < nadv; k++) {
    int nd2;
    int64_t s2[LANG_TENSOR_MAX_DIMS];
    if (!lang_broadcast_shapes(vm, "index", bnd, bshape, adv[k].ix->ndim, adv[k].ix->shape, &nd2, s2)) {
      StrBuf sb;
      sb_init(&sb);
      for (int q = 0; q < nadv; q++) {
        lang_shape_repr(adv[q].ix->ndim, adv[q].ix->shape, &sb);
        sb_addc(&sb, ' ');
      }
      lang_error_clear(vm);
      return lang_raise(vm, "IndexError", "shape mismatch: indexing arrays could not be broadcast together with shapes %s",
                        sb.data);
    }
    bnd = nd2;
    memcpy(bshape, s2, (size_t)nd2 * sizeof *s2);
  }
  int out_nd = o - nadv + bnd;
  if (out_nd > LANG_TENSOR_MAX_DIMS)
    return lang_raise(vm, "IndexError", "the result would have more than %d dimensions", LANG_TENSOR_MAX_DIMS);
  int64_t npos = 1;
  for (int q = 0; q < bnd; q++) npos *= bshape[q];

  /* the view, with the advanced axes together: where they are when the
   * indices were side by side, else first */
  int p = adjacent ? adv[0].axis : 0;
  int64_t vsh[LANG_TENSOR_MAX_DIMS + 64], vst[LANG_TENSOR_MAX_DIMS + 64];
  int v = 0;
  bool is_adv[LANG_TENSOR_MAX_DIMS + 64] = {false};
  for (int k = 0; k < nadv; k++) is_adv[adv[k].axis] = true;
  for (int q = 0; q < o && v < p; q++)
    if (!is_adv[q]) vsh[v] = sh[q], vst[v] = st[q], v++;
  for (int k = 0; k < nadv; k++) vsh[v] = sh[adv[k].axis], vst[v] = st[adv[k].axis], v++;
  for (int q = 0, skipped = 0; q < o; q++) {
    if (is_adv[q]) continue;
    if (skipped < p) {
      skipped++;
      continue;
    }
    vsh[v] = sh[q], vst[v] = st[q], v++;
  }
  if (v > LANG_TENSOR_MAX_DIMS)
    return lang_raise(vm, "IndexError", "the result would have more than %d dimensions", LANG_TENSOR_MAX_DIMS);
  sel->view = lang_tensor_view(t, v, vsh, vst, off);
  sel->adv = p;
  sel->adv_nd = nadv;
  sel->npos = npos;
  sel->res_nd = bnd;
  if (bnd) memcpy(sel->res_shape, bshape, (size_t)bnd * sizeof(int64_t));
  sel->pos = lang_alloc_atomic((size_t)(npos * nadv + 1) * sizeof(int64_t));
  /* With no broadcast position (an empty index beside others) the loop
   * below reads no index, yet an index out of bounds is still an error,
   * as an int beside an empty array is in NumPy. */
  for (int k = 0; k < nadv && npos == 0; k++) {
    ObjTensor *ix = lang_tensor_contiguous(vm, adv[k].ix);
    if (!ix) return false;
    const int64_t *base = (const int64_t *)lang_tensor_ptr(ix);
    int64_t size = vsh[p + k];
    for (int64_t i = 0; i < ix->size; i++)
      if (base[i] < -size || base[i] >= size) return index_error(vm, base[i], adv[k].orig, size);
    LANG_KEEP(ix);
  }
  /* each index read at every broadcast position */
  for (int k = 0; k < nadv; k++) {
    ObjTensor *ix = adv[k].ix;
    int64_t bst[LANG_TENSOR_MAX_DIMS] = {0};
    for (int q = 0; q < ix->ndim; q++) {
      int bq = bnd - ix->ndim + q;
      bst[bq] = ix->shape[q] == 1 ? 0 : ix->strides[q];
    }
    const int64_t *base = (const int64_t *)lang_tensor_ptr(ix);
    int64_t size = vsh[p + k], idx[LANG_TENSOR_MAX_DIMS] = {0};
    for (int64_t i = 0; i < npos; i++) {
      int64_t at = 0;
      for (int q = 0; q < bnd; q++) at += idx[q] * bst[q];
      int64_t j = base[at], jj = j < 0 ? j + size : j;
      if (jj < 0 || jj >= size) return index_error(vm, j, adv[k].orig, size);
      sel->pos[i * nadv + k] = jj;
      for (int q = bnd - 1; q >= 0; q--) {
        if (++idx[q] < bshape[q]) break;
        idx[q] = 0;
      }
    }
    LANG_KEEP(ix);
  }
  return true;
}

/* V with its advanced axes fixed at position number i (a view). */
static ObjTensor *at_position(const Selection *sel, int64_t i) {
  const ObjTensor *v = sel->view;
  int p = sel->adv, m = sel->adv_nd;
  int64_t sh[LANG_TENSOR_MAX_DIMS], st[LANG_TENSOR_MAX_DIMS], off = v->offset;
  int o = 0;
  for (int d = 0; d < v->ndim; d++) {
    if (d >= p && d < p + m) {
      off += sel->pos[i * m + (d - p)] * v->strides[d];
      continue;
    }
    sh[o] = v->shape[d];
    st[o] = v->strides[d];
    o++;
  }
  return lang_tensor_view(v, o, sh, st, off);
}

/* The shape of an advanced selection's result, with its axes in the
 * order of the view: before the index, the index's, after it. */
static int result_shape(const Selection *sel, int64_t *shape, bool flat) {
  const ObjTensor *v = sel->view;
  int p = sel->adv, m = sel->adv_nd, o = 0;
  for (int d = 0; d < p; d++) shape[o++] = v->shape[d];
  if (flat) {
    shape[o++] = sel->npos;
  } else {
    for (int k = 0; k < sel->res_nd; k++) shape[o++] = sel->res_shape[k];
  }
  for (int d = p + m; d < v->ndim; d++) shape[o++] = v->shape[d];
  return o;
}

/* The result's slot for position i, in a tensor of the flat result shape. */
static ObjTensor *slot(const Selection *sel, ObjTensor *flat, int64_t i) {
  int p = sel->adv;
  int64_t sh[LANG_TENSOR_MAX_DIMS], st[LANG_TENSOR_MAX_DIMS];
  int o = 0;
  for (int d = 0; d < flat->ndim; d++) {
    if (d == p) continue;
    sh[o] = flat->shape[d];
    st[o] = flat->strides[d];
    o++;
  }
  return lang_tensor_view(flat, o, sh, st, flat->offset + i * flat->strides[p]);
}

bool lang_tensor_getitem(MistVM *vm, ObjTensor *t, Value index, Value *out) {
  Selection sel;
  if (!select_index(vm, t, index, &sel)) return false;
  if (sel.adv < 0) {
    *out = v_obj(sel.view);
    return true;
  }
  int64_t fsh[LANG_TENSOR_MAX_DIMS], rsh[LANG_TENSOR_MAX_DIMS];
  int fnd = result_shape(&sel, fsh, true), rnd = result_shape(&sel, rsh, false);
  ObjTensor *flat = lang_tensor_new(vm, t->dtype, fnd, fsh, false);
  if (!flat) return false;
  for (int64_t i = 0; i < sel.npos; i++) {
    ObjTensor *dst = slot(&sel, flat, i), *src = at_position(&sel, i);
    if (dst->size == 1) {
      size_t es = dev_dtype_size(t->dtype);
      memcpy(lang_tensor_ptr(dst), lang_tensor_ptr(src), es);
    } else {
      copy_raw(NULL, dst, src);
    }
  }
  LANG_KEEP(t);
  int64_t st[LANG_TENSOR_MAX_DIMS];
  lang_contiguous_strides(rnd, rsh, st);
  *out = v_obj(lang_tensor_view(flat, rnd, rsh, st, 0));
  return true;
}

/* ---- versions: t[index] = v in place ----
 *
 * As lists are (lang/value.c, "Versions"), but on a buffer, so that
 * every view of it is covered: the update writes into the bytes, a new
 * TensorBuf takes them over for the new tensor, and the old TensorBuf
 * notes the element or region it had there; reading it through any view
 * (lang_tensor_ptr) first copies the current bytes into a store of its
 * own and undoes the differences, newest first.  Only a big buffer
 * (one with a store) is updated in place, through a tensor whose
 * elements lie at distinct addresses (a broadcast view's do not), by
 * basic indexing (an advanced index may repeat a position), and not
 * while other threads read values (lang_updates_in_place; bringing an
 * old version back takes lang_versions_lock, as lists do).  A buffer's
 * old versions may take about as many bytes as the buffer (history, at
 * DIFF_BYTES an update plus the region's bytes); past that, an update
 * copies, which bounds the work of reading an old version by O(size). */

#define DIFF_BYTES 192

void lang_tensor_buf_current(TensorBuf *buf) {
  TensorVersion *v = (TensorVersion *)buf;   /* only a big buffer is ever an old version */
  lang_versions_lock();
  if (buf->data) {   /* another thread brought it back meanwhile */
    lang_versions_unlock();
    return;
  }
  size_t n = 1;
  for (TensorVersion *c = v; !c->buf.data; c = c->newer) n++;
  TensorVersion **chain = lang_alloc_atomic(n * sizeof *chain);   /* all reachable from v */
  TensorVersion *c = v;
  for (size_t i = 0; i < n; i++, c = c->newer) chain[i] = c;
  TensorBuf *cur = &chain[n - 1]->buf;
  TensorStore *s = store_new(cur->store->heap, buf->bytes, false);
  if (!s) s = store_new(NULL, buf->bytes, false);
  memcpy(s->data, cur->data, buf->bytes);
  for (size_t k = n - 1; k-- > 0;) {
    c = chain[k];
    if (c->at >= 0) {
      memcpy((char *)s->data + c->at, &c->old, dev_dtype_size(c->region->dtype));
    } else {
      TensorBuf at = {.data = s->data, .bytes = buf->bytes};
      ObjTensor *dst = lang_tensor_view(c->region, c->region->ndim, c->region->shape,
                                        c->region->strides, c->region->offset);
      dst->buf = &at;
      copy_raw(NULL, dst, c->saved);
    }
  }
  v->history = 0;
  v->newer = NULL;
  v->region = v->saved = NULL;
  buf->store = s;
  __atomic_store_n(&buf->data, s->data, __ATOMIC_RELEASE);
  lang_versions_unlock();
}

/* Do t's elements lie at distinct addresses?  Sorted by stride, each
 * axis must step past everything the axes before it reach. */
static bool elements_distinct(const ObjTensor *t) {
  int64_t st[LANG_TENSOR_MAX_DIMS], sh[LANG_TENSOR_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 0) return true;
    if (t->shape[d] == 1) continue;
    int64_t x = t->strides[d] < 0 ? -t->strides[d] : t->strides[d];
    int k = n++;
    for (; k > 0 && st[k - 1] > x; k--) {
      st[k] = st[k - 1];
      sh[k] = sh[k - 1];
    }
    st[k] = x;
    sh[k] = t->shape[d];
  }
  int64_t reach = 0;
  for (int k = 0; k < n; k++) {
    if (st[k] <= reach) return false;
    reach += st[k] * (sh[k] - 1);
  }
  return true;
}

/* The bytes of b, a big buffer's current version, move to a new
 * version, which is returned; b becomes its old version (the caller
 * notes the difference). */
static TensorVersion *buf_take_over(TensorVersion *b, size_t cost) {
  TensorVersion *r = lang_alloc(sizeof *r);
  r->buf = b->buf;
  r->history = b->history + cost;
  b->newer = r;
  b->history = 0;
  b->buf.store = NULL;
  b->buf.data = NULL;
  return r;
}

/* t's view of buffer r: the new tensor. */
static ObjTensor *view_on(const ObjTensor *t, TensorBuf *r) {
  ObjTensor *v = lang_tensor_view(t, t->ndim, t->shape, t->strides, t->offset);
  v->buf = r;
  return v;
}

/* NumPy lets the value written have more axes than the place it goes to
 * when the extra leading ones have size 1 (`x[0] = [[5]]`): v without
 * them, as a view. */
static ObjTensor *without_leading_ones(ObjTensor *v, int ndim) {
  int k = 0;
  while (v->ndim - k > ndim && v->shape[k] == 1) k++;
  return k ? lang_tensor_view(v, v->ndim - k, v->shape + k, v->strides + k, v->offset) : v;
}

/* t[sel] = v in place, when t's buffer allows it; *done false when it
 * does not (nothing has changed then).  The checks that can fail come
 * before anything is written. */
static bool set_in_place(MistVM *vm, ObjTensor *t, const Selection *sel, Value v, Value *out,
                         bool *done) {
  *done = false;
  TensorVersion *b = (TensorVersion *)t->buf;   /* big: it has a store */
  ObjTensor *region = sel->view;
  size_t es = dev_dtype_size(t->dtype);
  size_t cost = DIFF_BYTES + (size_t)region->size * es;
  if (b->history + cost > b->buf.bytes) return true;
  if (region->size == 1 && (v.tag == V_INT || v.tag == V_FLOAT || v.tag == V_BOOL)) {
    uint64_t bits = 0;
    if (!lang_tensor_store(vm, t->dtype, (char *)&bits, v)) return false;
    char *p = lang_tensor_ptr(region);
    TensorVersion *r = buf_take_over(b, cost);
    b->at = p - (char *)r->buf.data;
    memcpy(&b->old, p, es);
    b->region = region;   /* for its dtype */
    memcpy(p, &bits, es);
    *out = v_obj(view_on(t, &r->buf));
    *done = true;
    return true;
  }
  ObjTensor *val;
  if (v.tag == V_INT || v.tag == V_FLOAT || v.tag == V_BOOL) {
    if (!lang_tensor_scalar(vm, t->dtype, v, &val)) return false;
  } else if (!lang_tensor_of_value(vm, "setitem", v, t->dtype, &val)) {
    return false;
  }
  lang_tensor_ptr(val);   /* val's bytes current, so a copy if they are b's */
  if (val->buf == &b->buf && !(val = copy_as(vm, val, val->dtype))) return false;
  val = without_leading_ones(val, region->ndim);
  if (!broadcasts_to(val, region->ndim, region->shape))
    return lang_raise(vm, "ValueError", "setitem: cannot broadcast shape %s to %s",
                      shape_str(val->ndim, val->shape), shape_str(region->ndim, region->shape));
  ObjTensor *saved = copy_as(vm, region, t->dtype);
  if (!saved) return false;
  TensorVersion *r = buf_take_over(b, cost);
  b->at = -1;
  b->region = region;
  b->saved = saved;
  copy_raw(region->size >= LANG_ND_PAR_MIN ? lang_tensor_pool(vm) : NULL, view_on(region, &r->buf), val);
  *out = v_obj(view_on(t, &r->buf));
  *done = true;
  return true;
}

bool lang_tensor_setitem(MistVM *vm, ObjTensor *t, Value index, Value v, Value *out) {
  lang_tensor_ptr(t);
  if (t->buf->store && elements_distinct(t) && lang_updates_in_place(vm)) {
    Selection sel;
    bool done;
    if (!select_index(vm, t, index, &sel)) return false;
    if (sel.adv < 0 && (!set_in_place(vm, t, &sel, v, out, &done) || done)) return done;
  }
  ObjTensor *copy = copy_as(vm, t, t->dtype);
  if (!copy) return false;
  Selection sel;
  if (!select_index(vm, copy, index, &sel)) return false;
  ObjTensor *val;
  if (v.tag == V_INT || v.tag == V_FLOAT || v.tag == V_BOOL) {
    if (!lang_tensor_scalar(vm, t->dtype, v, &val)) return false;
  } else if (!lang_tensor_of_value(vm, "setitem", v, t->dtype, &val)) {
    return false;
  }
  if (sel.adv < 0) {
    val = without_leading_ones(val, sel.view->ndim);
    if (!lang_tensor_copy_into(vm, "setitem", sel.view, val)) return false;
    *out = v_obj(copy);
    return true;
  }
  int64_t rsh[LANG_TENSOR_MAX_DIMS], fsh[LANG_TENSOR_MAX_DIMS];
  int rnd = result_shape(&sel, rsh, false), fnd = result_shape(&sel, fsh, true);
  ObjTensor *b, *flat;
  val = without_leading_ones(val, rnd);
  if (!lang_tensor_broadcast_to(vm, "setitem", val, rnd, rsh, &b)) return false;
  if (!lang_tensor_reshape(vm, b, fnd, fsh, &flat)) return false;
  for (int64_t i = 0; i < sel.npos; i++) copy_raw(NULL, at_position(&sel, i), slot(&sel, flat, i));
  LANG_KEEP(flat);
  *out = v_obj(copy);
  return true;
}

/* ---- adding at an index (the sensitivity of t[index]) ---- */

#define ADD_ROW(name, T)                                                              \
  static void name(void *ctx, char *const *p, const int64_t *s, int64_t n) {          \
    (void)ctx;                                                                        \
    for (int64_t i = 0; i < n; i++) *(T *)(p[0] + i * s[0]) += *(const T *)(p[1] + i * s[1]); \
  }
ADD_ROW(add_row_f32, float)
ADD_ROW(add_row_f64, double)
ADD_ROW(add_row_i32, int32_t)
ADD_ROW(add_row_i64, int64_t)
#undef ADD_ROW

/* dst += src, src broadcast to dst's shape and already of dst's dtype.
 * dst is a view of a fresh buffer whose elements do not overlap. */
static void add_raw(MistVM *vm, ObjTensor *dst, const ObjTensor *src) {
  LangRowFn fn = dst->dtype == DT_F32 ? add_row_f32 : dst->dtype == DT_F64 ? add_row_f64
               : dst->dtype == DT_I32 ? add_row_i32 : add_row_i64;
  LangNdLoop l;
  lang_nd_init(&l, 2, dst->ndim, dst->shape);
  lang_nd_operand(&l, 0, dst);
  lang_nd_operand(&l, 1, src);
  lang_nd_run(dst->size >= LANG_ND_PAR_MIN ? lang_tensor_pool(vm) : NULL, &l, fn, NULL);
  LANG_KEEP(src);
  LANG_KEEP(dst);
}

/* fresh[index] += v, in place: fresh has not been handed to a program. */
bool lang_tensor_add_at(MistVM *vm, ObjTensor *fresh, Value index, Value v) {
  if (fresh->dtype == DT_BOOL)
    return lang_raise(vm, "TypeError", "index_add: cannot add into a bool tensor");
  Selection sel;
  if (!select_index(vm, fresh, index, &sel)) return false;
  ObjTensor *val;
  if (!lang_tensor_of_value(vm, "index_add", v, fresh->dtype, &val) ||
      !lang_tensor_astype(vm, val, fresh->dtype, &val))
    return false;
  if (sel.adv < 0) {
    if (!broadcasts_to(val, sel.view->ndim, sel.view->shape))
      return lang_raise(vm, "ValueError", "index_add: cannot broadcast shape %s to %s",
                        shape_str(val->ndim, val->shape), shape_str(sel.view->ndim, sel.view->shape));
    add_raw(vm, sel.view, val);
    return true;
  }
  int64_t rsh[LANG_TENSOR_MAX_DIMS], fsh[LANG_TENSOR_MAX_DIMS];
  int rnd = result_shape(&sel, rsh, false), fnd = result_shape(&sel, fsh, true);
  ObjTensor *b, *flat;
  if (!lang_tensor_broadcast_to(vm, "index_add", val, rnd, rsh, &b) ||
      !lang_tensor_reshape(vm, b, fnd, fsh, &flat))
    return false;
  /* one position at a time, so repeated positions add up */
  for (int64_t i = 0; i < sel.npos; i++) add_raw(vm, at_position(&sel, i), slot(&sel, flat, i));
  LANG_KEEP(flat);
  return true;
}

bool lang_tensor_index_add(MistVM *vm, ObjTensor *t, Value index, Value v, Value *out) {
  ObjTensor *copy = copy_as(vm, t, t->dtype);
  if (!copy || !lang_tensor_add_at(vm, copy, index, v)) return false;
  *out = v_obj(copy);
  return true;
}

/* Rows [*lo, *lo + *n) of axis 0 that index selects, when it is an int
 * or a slice of step 1 and v is a contiguous tensor of dtype dt shaped
 * like them: the scatter is then a copy into one block of the zeros. */
static bool scatter_block(const ObjTensor *v, DType dt, int ndim, const int64_t *shape, Value index,
                          int64_t *lo, int64_t *n) {
  if (ndim < 1 || shape[0] == 0 || v->dtype != dt || !lang_dtype_is_float(dt) || !lang_tensor_is_contiguous(v))
    return false;
  int vd;   /* v's axes: the selected rows' (int: axis 0 dropped) */
  if (index.tag == V_INT) {
    *lo = index.i < 0 ? index.i + shape[0] : index.i;
    if (*lo < 0 || *lo >= shape[0]) return false;
    *n = 1;
    vd = ndim - 1;
    if (v->ndim != vd) return false;
  } else if (v_is_obj(index, O_SLICE)) {
    const ObjSlice *sl = AS_SLICE(index);
    int64_t step;
    if ((sl->step.tag != V_NONE && !(sl->step.tag == V_INT && sl->step.i == 1)) ||
        (sl->start.tag != V_NONE && sl->start.tag != V_INT) || (sl->stop.tag != V_NONE && sl->stop.tag != V_INT) ||
        !slice_range(NULL, sl, shape[0], lo, &step, n) || v->ndim != ndim || v->shape[0] != *n)
      return false;
    vd = ndim;
  } else {
    return false;
  }
  for (int d = 1; d < ndim; d++)
    if (v->shape[d - (ndim - vd)] != shape[d]) return false;
  return true;
}

#define ADD_BLOCK(T)                                                                    \
  do {                                                                                  \
    T *a = (T *)lang_tensor_ptr(acc);                                                   \
    const T *s = (const T *)lang_tensor_ptr(v);                                         \
    for (int64_t i = 0; i < at; i++) a[i] = a[i] + (T)0;                                \
    for (int64_t i = 0; i < len; i++) a[at + i] = a[at + i] + ((T)0 + s[i]);            \
    for (int64_t i = at + len; i < acc->size; i++) a[i] = a[i] + (T)0;                  \
  } while (0)

bool lang_tensor_add_block(ObjTensor *acc, Value index, const ObjTensor *v) {
  int64_t lo, n;
  if (!lang_tensor_is_contiguous(acc) || !scatter_block(v, acc->dtype, acc->ndim, acc->shape, index, &lo, &n))
    return false;
  int64_t row = acc->size / acc->shape[0], at = lo * row, len = n * row;
  if (acc->dtype == DT_F64) ADD_BLOCK(double);
  else ADD_BLOCK(float);
  return true;
}

bool lang_tensor_scatter(MistVM *vm, DType dt, int ndim, const int64_t *shape, Value index,
                         Value v, Value *out) {
  ObjTensor *z = lang_tensor_new(vm, dt, ndim, shape, true);
  if (!z) return false;
  int64_t lo, n;
  if (v_is_tensor(v) && scatter_block(AS_TENSOR(v), dt, ndim, shape, index, &lo, &n)) {
    /* 0 + v, not a copy: the sum's bits (0 + -0 is +0) */
    int64_t row = z->size / shape[0], at = lo * row, len = n * row;
    const char *src = lang_tensor_ptr(AS_TENSOR(v));
    if (dt == DT_F64) {
      double *d = (double *)lang_tensor_ptr(z) + at;
      for (int64_t i = 0; i < len; i++) d[i] += ((const double *)src)[i];
    } else {
      float *d = (float *)lang_tensor_ptr(z) + at;
      for (int64_t i = 0; i < len; i++) d[i] += ((const float *)src)[i];
    }
    LANG_KEEP(v.o);
    *out = v_obj(z);
    return true;
  }
  if (!lang_tensor_add_at(vm, z, index, v)) return false;
  *out = v_obj(z);
  return true;
}
