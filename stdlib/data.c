/* data.c: the C half of the `data` module (stdlib/data.ms): datasets as
 * immutable descriptions of streams of examples, and the background
 * pipeline that runs one when a program iterates it.
 *
 * A dataset is a native value (lang/value.h's ObjNative) holding one
 * step of a description: a source (a tree of tensors whose leaves are
 * sliced along their first axis: what from_tensors, idx, csv and npy
 * make) or a transformation of other datasets (zip, map, shuffle,
 * batch, repeat, prefetch, take).  Making one runs nothing: sources
 * read and check their file at once (so a bad file is an error where it
 * is named), and every length is known from the description.
 *
 * `for x in ds` asks the dataset for its stream (NativeClass.iter),
 * which starts the pipeline: the description becomes a tree of
 * iterators (It), pulled by a background thread (a Prefetcher) that
 * fills a small ring the loop takes from in order; prefetch(n) puts
 * another such thread and ring inside the pipeline, and map(f,
 * workers=N) hands examples to N threads, putting their results back
 * in order.  So loading, shuffling and batching run while the training
 * step runs.
 *
 * Threads and the interpreter.  C work (slicing, stacking, shuffling)
 * needs no lock: each thread has its own helper VM (lang_vm_for_thread)
 * for the tensor allocator and its errors.  Mist code (map's function)
 * runs under the VM's interpreter lock, which the loop's thread gives
 * up while it waits for an example (lang_unlock).  An error anywhere
 * travels in order, as an item of the rings, and the loop raises it
 * where it asks for that example.  Everything a pipeline holds hangs
 * off one Pipe in uncollectable (scanned) memory; its threads wait on
 * one mutex and condition; it stops when the loop's stream is garbage
 * (a finaliser), when its last example has been made, or when the VM is
 * freed (vm->stop_threads waits for every thread).
 *
 * Determinism: every stage runs in the order of its input, map keeps
 * order, and shuffle draws from Philox keyed by its seed, so a pipeline
 * gives the same examples on every machine and for any number of
 * workers. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "lang/gc.h"
#include "stdlib/builtins.h"
#include "stdlib/files.h"
#include "stdlib/tensor.h"

#define INFINITE (-1)                 /* the length of repeat() forever */
#define STREAM_AHEAD 2                /* examples the loop's stream prepares ahead */
#define THREAD_STACK ((size_t)64 << 20)   /* reserved; touched only as used */

/* ---- descriptions ---- */

typedef enum { DS_TREE, DS_ZIP, DS_MAP, DS_SHUFFLE, DS_BATCH, DS_REPEAT, DS_PREFETCH, DS_TAKE } DsKind;

typedef struct Dataset {
  ObjNative base;
  DsKind kind;
  int64_t len;              /* examples, or INFINITE */
  struct Dataset **in;      /* inputs: one, several for zip, none for a source */
  int nin;
  Value tree;               /* DS_TREE: the tree whose leaves are sliced */
  Value fn;                 /* DS_MAP */
  int64_t n;                /* map: workers; shuffle: buffer; batch, prefetch, take: n;
                               repeat: the count (INFINITE: forever) */
  bool drop_remainder;      /* DS_BATCH */
  uint64_t seed;            /* DS_SHUFFLE */
} Dataset;

static const NativeClass dataset_class;

static bool is_dataset(Value v) { return v_is_obj(v, O_NATIVE) && AS_NATIVE(v)->cls == &dataset_class; }
#define AS_DS(v) ((Dataset *)(v).o)

static Dataset *ds_new(DsKind kind, int nin) {
  Dataset *d = lang_alloc(sizeof *d);
  d->base.obj.kind = O_NATIVE;
  d->base.cls = &dataset_class;
  d->kind = kind;
  d->nin = nin;
  d->in = nin ? lang_alloc((size_t)nin * sizeof *d->in) : NULL;
  d->tree = v_none();
  d->fn = v_none();
  return d;
}

static bool ds_len(MistVM *vm, Value self, int64_t *out) {
  if (AS_DS(self)->len == INFINITE)
    return lang_raise(vm, "TypeError", "the dataset is infinite (repeat() without a count) and has no len()");
  *out = AS_DS(self)->len;
  return true;
}

static void ds_repr(MistVM *vm, Value self, StrBuf *out) {
  Dataset *d = AS_DS(self);
  if (d->len == INFINITE) sb_adds(out, "<dataset, infinite>");
  else sb_printf(out, "<dataset of %lld examples>", (long long)d->len);
}

static bool ds_iter(MistVM *vm, Value self, Value *out);

static const NativeClass dataset_class = {"dataset", ds_repr, ds_len, ds_iter, NULL};

/* ---- sources ---- */

/* Cut a path being built back to its first mark bytes. */
static void cut(StrBuf *path, size_t mark) {
  path->len = mark;
  if (path->cap) path->data[mark] = 0;   /* an empty StrBuf shares a constant "" */
}


/* The leaves of a source tree: tensors with a first axis, all of one
 * length (into *n; -1 before the first). */
static bool check_leaves(MistVM *vm, Value v, StrBuf *path, int64_t *n) {
  if (!lang_check_stack(vm)) return false;
  size_t mark = path->len;
  if (v_is_tensor(v)) {
    ObjTensor *t = AS_TENSOR(v);
    if (t->ndim == 0)
      return lang_raise(vm, "ValueError", "data.from_tensors: the leaf at '%s' is a 0-d tensor; "
                        "every leaf needs a first axis to slice", path->data);
    if (*n >= 0 && t->shape[0] != *n)
      return lang_raise(vm, "ValueError", "data.from_tensors: the leaf at '%s' has %lld rows, "
                        "an earlier leaf %lld: every leaf needs the same first axis",
                        path->data, (long long)t->shape[0], (long long)*n);
    *n = t->shape[0];
    return true;
  }
  if (v_is_obj(v, O_DICT)) {
    ObjDict *d = AS_DICT(v);
    for (size_t i = 0; i < d->len; i++) {
      cut(path, mark);
      sb_printf(path, "%s%s", mark ? "." : "", d->entries[i].key->data);
      if (!check_leaves(vm, d->entries[i].value, path, n)) return false;
    }
    cut(path, mark);
    return true;
  }
  if (v_is_obj(v, O_LIST) || v_is_obj(v, O_TUPLE)) {
    ObjSeq *q = AS_SEQ(v);
    for (size_t i = 0; i < q->len; i++) {
      cut(path, mark);
      sb_printf(path, "%s%zu", mark ? "." : "", i);
      if (!check_leaves(vm, q->items[i], path, n)) return false;
    }
    cut(path, mark);
    return true;
  }
  return lang_raise(vm, "TypeError", "data.from_tensors: the leaf at '%s' is a '%s'; "
                    "the leaves of the tree must be tensors", mark ? path->data : "", lang_type_name(v));
}

static Dataset *tree_source(Value tree, int64_t n) {
  Dataset *d = ds_new(DS_TREE, 0);
  d->tree = tree;
  d->len = n;
  return d;
}

static bool bi_from_tensors(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"tree"};
  Value a[1];
  if (!std_parse_args(vm, "from_tensors", ARGS_CLINIC, argc, argv, kw, names, 1, 1, 1, true, a))
    return false;
  StrBuf path;
  sb_init(&path);
  int64_t n = -1;
  if (!check_leaves(vm, a[0], &path, &n)) return false;
  if (n < 0) return lang_raise(vm, "ValueError", "data.from_tensors: the tree has no tensors");
  *out = v_obj(tree_source(a[0], n));
  return true;
}

/* idx(path), npy(path), csv(path, header=True): the file read whole and
 * checked now, a source over its first axis. */
typedef enum { FILE_IDX, FILE_NPY, FILE_CSV } FileKind;

static bool file_source(MistVM *vm, FileKind kind, int argc, const Value *argv, const KwArgs *kw,
                        Value *out) {
  static const char *const names[] = {"path", "header"};
  static const char *const fnames[] = {"idx", "npy", "csv"};
  Value a[2];
  if (!std_parse_args(vm, fnames[kind], ARGS_CLINIC, argc, argv, kw, names, kind == FILE_CSV ? 2 : 1,
                      kind == FILE_CSV ? 2 : 1, 1, true, a))
    return false;
  if (!v_is_obj(a[0], O_STR))
    return lang_raise(vm, "TypeError", "data.%s: path must be a str, not '%s'", fnames[kind],
                      lang_type_name(a[0]));
  bool header = true;
  if (kind == FILE_CSV && !std_bool_arg(vm, a[1], true, &header)) return false;
  const char *path = AS_STR(a[0])->data;
  char fname[16];
  snprintf(fname, sizeof fname, "data.%s", fnames[kind]);
  unsigned char *raw, *data;
  size_t rawlen, len;
  bool owned;
  if (!std_read_file(vm, fname, path, &raw, &rawlen)) return false;
  if (!std_gunzip(vm, path, raw, rawlen, STD_GUNZIP_MAX, &data, &len, &owned)) {
    free(raw);
    return false;
  }
  ObjTensor *t = NULL;
  bool ok = kind == FILE_IDX ? std_read_idx(vm, path, data, len, &t)
            : kind == FILE_NPY ? std_read_npy(vm, path, data, len, &t)
            : std_read_csv(vm, path, (const char *)data, len, header, &t);
  if (owned) free(data);
  free(raw);
  if (!ok) return false;
  if (t->ndim == 0)
    return lang_raise(vm, "ValueError", "'%s' holds a 0-d array: a dataset needs a first axis", path);
  *out = v_obj(tree_source(v_obj(t), t->shape[0]));
  return true;
}

static bool bi_idx(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return file_source(vm, FILE_IDX, argc, argv, kw, out);
}
static bool bi_npy(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return file_source(vm, FILE_NPY, argc, argv, kw, out);
}
static bool bi_csv(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return file_source(vm, FILE_CSV, argc, argv, kw, out);
}

static bool bi_zip(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (!std_no_kw(vm, "zip", kw)) return false;
  if (argc == 0) return lang_raise(vm, "TypeError", "data.zip() needs at least one dataset");
  Dataset *d = ds_new(DS_ZIP, argc);
  d->len = INFINITE;
  for (int i = 0; i < argc; i++) {
    if (!is_dataset(argv[i]))
      return lang_raise(vm, "TypeError", "data.zip: argument %d is a '%s', not a dataset", i + 1,
                        lang_type_name(argv[i]));
    d->in[i] = AS_DS(argv[i]);
    int64_t n = d->in[i]->len;
    if (n != INFINITE && (d->len == INFINITE || n < d->len)) d->len = n;
  }
  *out = v_obj(d);
  return true;
}

/* ---- transformations: the methods of a dataset ---- */

static bool self_dataset(MistVM *vm, const char *name, int argc, const Value *argv, Dataset **out) {
  if (argc < 1 || !is_dataset(argv[0]))
    return lang_raise(vm, "AttributeError", "'%s' object has no attribute '%s'",
                      argc ? lang_type_name(argv[0]) : "NoneType", name);
  *out = AS_DS(argv[0]);
  return true;
}

/* An int argument at least lo (None allowed when none_ok: *out = dflt). */
static bool int_arg(MistVM *vm, const char *fname, const char *what, Value v, int64_t lo, bool none_ok,
                    int64_t dflt, int64_t *out) {
  if (v.tag == V_UNBOUND || (none_ok && v.tag == V_NONE)) {
    *out = dflt;
    return true;
  }
  if (v.tag != V_INT && v.tag != V_BOOL)
    return lang_raise(vm, "TypeError", "%s: %s must be an int, not '%s'", fname, what, lang_type_name(v));
  int64_t n = v.tag == V_BOOL ? v.b : v.i;
  if (n < lo) return lang_raise(vm, "ValueError", "%s: %s must be at least %lld, not %lld", fname, what,
                                (long long)lo, (long long)n);
  *out = n;
  return true;
}

static Dataset *derive(DsKind kind, Dataset *in) {
  Dataset *d = ds_new(kind, 1);
  d->in[0] = in;
  d->len = in->len;
  return d;
}

/* The arguments of ds.NAME(...) (names[0] is self's ""), and the new
 * dataset of that kind over ds; what every method shares. */
static bool method_args(MistVM *vm, const char *name, DsKind kind, const char *const *names,
                        int nnames, int nreq, int argc, const Value *argv, const KwArgs *kw,
                        Value *a, Dataset **out) {
  Dataset *in = NULL;
  if (!self_dataset(vm, name, argc, argv, &in) ||
      !std_parse_args(vm, name, ARGS_CLINIC, argc, argv, kw, names, nnames, nnames, nreq, true, a))
    return false;
  *out = derive(kind, in);
  return true;
}

static bool m_map(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"", "f", "workers"};
  Value a[3];
  Dataset *d;
  if (!method_args(vm, "map", DS_MAP, names, 3, 2, argc, argv, kw, a, &d)) return false;
  if (!(v_is_obj(a[1], O_FUNC) || v_is_obj(a[1], O_BUILTIN) || v_is_obj(a[1], O_BOUND)))
    return lang_raise(vm, "TypeError", "map: f must be a function, not '%s'", lang_type_name(a[1]));
  d->fn = a[1];
  if (!int_arg(vm, "map", "workers", a[2], 1, false, 1, &d->n)) return false;
  if (d->n > 256) return lang_raise(vm, "ValueError", "map: at most 256 workers, not %lld", (long long)d->n);
  *out = v_obj(d);
  return true;
}

static bool m_shuffle(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"", "buffer", "seed"};
  Value a[3];
  Dataset *d;
  int64_t seed;
  if (!method_args(vm, "shuffle", DS_SHUFFLE, names, 3, 2, argc, argv, kw, a, &d) ||
      !int_arg(vm, "shuffle", "buffer", a[1], 1, false, 1, &d->n) ||
      !int_arg(vm, "shuffle", "seed", a[2], INT64_MIN, false, 0, &seed))
    return false;
  if (d->n > ((int64_t)1 << 32)) return lang_raise(vm, "ValueError", "shuffle: buffer is too large");
  d->seed = (uint64_t)seed;
  *out = v_obj(d);
  return true;
}

static bool m_batch(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"", "n", "drop_remainder"};
  Value a[3];
  Dataset *d;
  if (!method_args(vm, "batch", DS_BATCH, names, 3, 2, argc, argv, kw, a, &d) ||
      !int_arg(vm, "batch", "n", a[1], 1, false, 1, &d->n) ||
      !std_bool_arg(vm, a[2], false, &d->drop_remainder))
    return false;
  int64_t in = d->in[0]->len;
  if (in != INFINITE) d->len = d->drop_remainder ? in / d->n : (in + d->n - 1) / d->n;
  *out = v_obj(d);
  return true;
}

/* ds.NAME(n): what repeat, prefetch and take share: the arguments
 * parsed, n checked against lo (None allowed when none_ok: dflt) */
static bool n_method(MistVM *vm, const char *name, DsKind kind, int argc, const Value *argv,
                     const KwArgs *kw, int64_t lo, bool none_ok, int64_t dflt, Dataset **out) {
  static const char *const names[] = {"", "n"};
  Value a[2];
  return method_args(vm, name, kind, names, 2, none_ok ? 1 : 2, argc, argv, kw, a, out) &&
         int_arg(vm, name, "n", a[1], lo, none_ok, dflt, &(*out)->n);
}

static bool m_repeat(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Dataset *d;
  if (!n_method(vm, "repeat", DS_REPEAT, argc, argv, kw, -1, true, INFINITE, &d)) return false;
  Dataset *in = d->in[0];
  if (in->len == 0 || d->n == 0) d->len = 0;
  else if (d->n == INFINITE || in->len == INFINITE) d->len = INFINITE;
  else if (__builtin_mul_overflow(in->len, d->n, &d->len))
    return lang_raise(vm, "OverflowError", "repeat: %lld repetitions of %lld examples are too many",
                      (long long)d->n, (long long)in->len);
  *out = v_obj(d);
  return true;
}

static bool m_prefetch(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Dataset *d;
  if (!n_method(vm, "prefetch", DS_PREFETCH, argc, argv, kw, -1, false, 0, &d)) return false;
  if (d->n == -1) d->n = STREAM_AHEAD;   /* tf.data's AUTOTUNE: a small buffer */
  if (d->n > 1 << 20) return lang_raise(vm, "ValueError", "prefetch: n is too large");
  *out = v_obj(d);
  return true;
}

static bool m_take(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  Dataset *d;
  if (!n_method(vm, "take", DS_TAKE, argc, argv, kw, -1, false, 0, &d)) return false;
  Dataset *in = d->in[0];
  if (d->n >= 0 && (in->len == INFINITE || d->n < in->len)) d->len = d->n;
  *out = v_obj(d);
  return true;
}

/* ======================================================================
 * The pipeline
 * ====================================================================== */

typedef struct Pipe Pipe;
typedef struct It It;

/* What a thread of a pipeline carries: the VM (for the lock and Mist
 * calls), its helper VM (C work and errors), and its stack's end. */
typedef struct Worker {
  MistVM *vm;
  MistVM *hvm;
  Pipe *pipe;
  char *stack_low;
  bool is_loop;   /* the loop's own thread: gives up the VM lock to wait */
} Worker;

typedef enum { IT_OK, IT_END, IT_ERR } ItStatus;

/* An item of a ring: an example, or the error that ends the stream. */
typedef struct Item {
  Value v;
  bool err;
  MistError e;
} Item;

/* A background thread pulling `from` into a ring (prefetch, and the
 * stream a loop reads). */
typedef struct Prefetcher {
  It *from;
  Item *ring;
  int64_t cap, head, count;
  bool done;          /* the producer has pushed its last item */
} Prefetcher;

/* map(f, workers=N) with N > 1: examples handed to N threads, results
 * taken back in order from a ring of slots. */
typedef struct MapSlot {
  Value in, out;
  int state;          /* 0 free, 1 waiting, 2 running, 3 done */
  bool err;
  MistError e;
} MapSlot;

typedef struct MapPool {
  Dataset *ds;
  MapSlot *slots;
  int64_t cap, head, count;   /* slots in flight, oldest at head */
  int64_t next_job;           /* the oldest slot not yet taken by a worker */
} MapPool;

struct It {
  Dataset *ds;
  It **in;
  uint64_t run;       /* which run of this stage (repeat makes several): shuffle's stream */
  int64_t pos;        /* TREE: next index; TAKE: taken; REPEAT: repetitions done */
  bool in_done;
  Value *buf;         /* SHUFFLE: the buffer of examples */
  int64_t *ibuf;      /* SHUFFLE over an indexable input: the buffer of indices */
  int64_t nbuf;
  uint64_t draws;
  Prefetcher *pf;     /* PREFETCH */
  MapPool *mp;        /* MAP with workers > 1 */
};

/* Every thread of a pipeline waits on mu/cv; refs counts the stream and
 * the threads still running, and the last one out frees the Pipe. */
struct Pipe {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_bool stop;
  int refs;
  MistVM *vm;
  Prefetcher *top;
  struct Registry *reg;                 /* the VM's, which outlives it */
  struct Pipe *next_live, *prev_live;   /* the VM's list of live pipelines */
};

/* The VM's registry of pipelines (vm->threads), for lang_vm_free.  It is
 * never freed (a few dozen bytes per VM that ran a pipeline): a stream
 * may be finalised after its VM is gone, and must still find it. */
typedef struct Registry {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  Pipe *live;
  int nthreads;
} Registry;


static void pipe_release(Pipe *p) {
  /* called with p->mu held */
  if (--p->refs > 0) {
    pthread_mutex_unlock(&p->mu);
    return;
  }
  pthread_mutex_unlock(&p->mu);
  Registry *r = p->reg;
  pthread_mutex_lock(&r->mu);
  if (p->prev_live) p->prev_live->next_live = p->next_live;
  else if (r->live == p) r->live = p->next_live;
  if (p->next_live) p->next_live->prev_live = p->prev_live;
  pthread_mutex_unlock(&r->mu);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  lang_free(p);
}

static void pipe_stop(Pipe *p) {
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, true);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

static bool stopped(Pipe *p) { return atomic_load_explicit(&p->stop, memory_order_relaxed); }

/* Wait on the pipe's condition.  The loop's thread gives up the VM lock
 * first (map's workers may need it) and wakes now and then to see ^C. */
static void pipe_wait(Worker *w) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += 100 * 1000 * 1000;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  pthread_cond_timedwait(&w->pipe->cv, &w->pipe->mu, &ts);
}

/* ---- the error of a helper VM, as an item ---- */

static void take_error(Worker *w, MistError *e) {
  *e = w->hvm->err;
  lang_error_clear(w->hvm);
  w->hvm->err.trace = NULL;
  w->hvm->err.captrace = 0;
}

static bool put_error(Worker *w, const MistError *e) {
  w->hvm->err = *e;
  return false;
}

/* ---- indices ----
 *
 * The i-th example of a source, of a zip of sources or of the first n of
 * one can be made directly.  Such datasets are indexable, and shuffle
 * and batch over them work on indices: shuffle keeps indices in its
 * buffer (no examples, nothing for the collector to scan), and batch
 * copies the rows of a batch straight from the source's tensors into
 * the batch's, making no example at all.  The result is the same as
 * shuffling and stacking the examples. */

static bool indexable(const Dataset *d) {
  if (d->kind == DS_TREE) return true;
  if (d->kind == DS_TAKE) return indexable(d->in[0]);
  if (d->kind != DS_ZIP) return false;
  for (int i = 0; i < d->nin; i++)
    if (!indexable(d->in[i])) return false;
  return true;
}

/* Iterators over these hand out indices into index_src(d). */
static bool yields_index(const Dataset *d) {
  if (indexable(d)) return true;
  if (d->kind == DS_SHUFFLE) return indexable(d->in[0]);
  if (d->kind == DS_TAKE || d->kind == DS_REPEAT) return yields_index(d->in[0]);
  return false;
}

static const Dataset *index_src(const Dataset *d) {
  if (indexable(d)) return d;
  if (d->kind == DS_SHUFFLE) return d->in[0];
  return index_src(d->in[0]);
}

static bool tree_at(MistVM *hvm, Value v, int64_t i, Value *out);

/* Example i of an indexable dataset. */
static bool example_at(MistVM *hvm, const Dataset *d, int64_t i, Value *out) {
  if (d->kind == DS_TREE) return tree_at(hvm, d->tree, i, out);
  if (d->kind == DS_TAKE) return example_at(hvm, d->in[0], i, out);
  ObjSeq *t = lang_tuple_new((size_t)d->nin);
  for (int k = 0; k < d->nin; k++)
    if (!example_at(hvm, d->in[k], i, &t->items[k])) return false;
  *out = v_obj(t);
  return true;
}

/* The examples idx[0..k) of a source tree, stacked: each leaf's rows
 * copied into a new tensor. */
static bool gather_tree(MistVM *hvm, Value v, const int64_t *idx, int64_t k, Value *out) {
  if (v_is_tensor(v)) {
    ObjTensor *t = AS_TENSOR(v);
    if (t->ndim + 1 > LANG_TENSOR_MAX_DIMS)
      return lang_raise(hvm, "ValueError", "batch: examples of %d dimensions cannot be stacked", t->ndim - 1);
    int64_t shape[LANG_TENSOR_MAX_DIMS];
    shape[0] = k;
    memcpy(shape + 1, t->shape + 1, (size_t)(t->ndim - 1) * sizeof *shape);
    ObjTensor *r = lang_tensor_new(hvm, t->dtype, t->ndim, shape, false);
    if (!r) return false;
    size_t row = (size_t)(t->shape[0] ? t->size / t->shape[0] : 0) * dev_dtype_size(t->dtype);
    char *dst = lang_tensor_ptr(r);
    if (lang_tensor_is_contiguous(t)) {
      const char *src = lang_tensor_ptr(t);
      for (int64_t i = 0; i < k; i++) memcpy(dst + (size_t)i * row, src + (size_t)idx[i] * row, row);
    } else {
      for (int64_t i = 0; i < k; i++) {
        Value rv, sv;
        if (!lang_tensor_getitem(hvm, r, v_int(i), &rv) || !lang_tensor_getitem(hvm, t, v_int(idx[i]), &sv) ||
            !lang_tensor_copy_into(hvm, "batch", AS_TENSOR(rv), AS_TENSOR(sv)))
          return false;
      }
    }
    LANG_KEEP(t);
    *out = v_obj(r);
    return true;
  }
  if (v_is_obj(v, O_DICT)) {
    ObjDict *d = AS_DICT(v), *r = lang_dict_new();
    for (size_t j = 0; j < d->len; j++) {
      Value x;
      if (!gather_tree(hvm, d->entries[j].value, idx, k, &x)) return false;
      lang_dict_put(r, d->entries[j].key, x);
    }
    *out = v_obj(r);
    return true;
  }
  ObjSeq *q = AS_SEQ(v);
  ObjSeq *r = v_is_obj(v, O_LIST) ? lang_list_new(q->len) : lang_tuple_new(q->len);
  for (size_t j = 0; j < q->len; j++)
    if (!gather_tree(hvm, q->items[j], idx, k, &r->items[j])) return false;
  *out = v_obj(r);
  return true;
}

static bool gather(MistVM *hvm, const Dataset *d, const int64_t *idx, int64_t k, Value *out) {
  if (d->kind == DS_TREE) return gather_tree(hvm, d->tree, idx, k, out);
  if (d->kind == DS_TAKE) return gather(hvm, d->in[0], idx, k, out);
  ObjSeq *t = lang_tuple_new((size_t)d->nin);
  for (int i = 0; i < d->nin; i++)
    if (!gather(hvm, d->in[i], idx, k, &t->items[i])) return false;
  *out = v_obj(t);
  return true;
}

/* ---- making iterators ---- */

static It *it_new(Worker *w, Dataset *ds, uint64_t run);
static bool prefetcher_start(Worker *w, Prefetcher *pf);

static Prefetcher *prefetcher_new(It *from, int64_t cap) {
  Prefetcher *pf = lang_alloc(sizeof *pf);
  pf->from = from;
  pf->cap = cap;
  pf->ring = lang_alloc((size_t)cap * sizeof *pf->ring);
  return pf;
}

static It *it_new(Worker *w, Dataset *ds, uint64_t run) {
  It *it = lang_alloc(sizeof *it);
  it->ds = ds;
  it->run = run;
  if (ds->nin) it->in = lang_alloc((size_t)ds->nin * sizeof *it->in);
  /* repeat makes its input afresh for each repetition; an indexable
   * dataset, or a shuffle of one, counts indices and needs none */
  if (ds->kind != DS_REPEAT && !indexable(ds) && !(ds->kind == DS_SHUFFLE && yields_index(ds)))
    for (int i = 0; i < ds->nin; i++)
      if (!(it->in[i] = it_new(w, ds->in[i], run))) return NULL;
  if (ds->kind == DS_PREFETCH && ds->n > 0) {
    it->pf = prefetcher_new(it->in[0], ds->n);
    if (!prefetcher_start(w, it->pf)) return NULL;
  }
  if (ds->kind == DS_MAP && ds->n > 1) {
    MapPool *mp = lang_alloc(sizeof *mp);
    mp->ds = ds;
    mp->cap = 2 * ds->n;
    mp->slots = lang_alloc((size_t)mp->cap * sizeof *mp->slots);
    it->mp = mp;
  }
  return it;
}

/* ---- the stages ---- */

static ItStatus it_next(Worker *w, It *it, Value *out);

/* element i of a source tree: the same tree, each leaf indexed by i */
static bool tree_at(MistVM *hvm, Value v, int64_t i, Value *out) {
  if (v_is_tensor(v)) return lang_tensor_getitem(hvm, AS_TENSOR(v), v_int(i), out);
  if (v_is_obj(v, O_DICT)) {
    ObjDict *d = AS_DICT(v), *r = lang_dict_new();
    for (size_t k = 0; k < d->len; k++) {
      Value x;
      if (!tree_at(hvm, d->entries[k].value, i, &x)) return false;
      lang_dict_put(r, d->entries[k].key, x);
    }
    *out = v_obj(r);
    return true;
  }
  ObjSeq *q = AS_SEQ(v);
  ObjSeq *r = v_is_obj(v, O_LIST) ? lang_list_new(q->len) : lang_tuple_new(q->len);
  for (size_t k = 0; k < q->len; k++)
    if (!tree_at(hvm, q->items[k], i, &r->items[k])) return false;
  *out = v_obj(r);
  return true;
}

/* Call f on an example under the interpreter lock.  A tuple is passed
 * as separate arguments when f takes that many (map(lambda x, y: ...)
 * over a zip, as tf.data does), else whole. */
static bool call_mist(Worker *w, Value fn, Value x, Value *out) {
  int argc = 1;
  const Value *argv = &x;
  if (v_is_obj(x, O_TUPLE) && v_is_obj(fn, O_FUNC) && AS_SEQ(x)->len >= 2) {
    IrGraph *g = AS_FUNC(fn)->graph;
    int k = (int)AS_SEQ(x)->len;
    if (k <= g->nparams && k >= g->nparams - lang_func_ndefaults(AS_FUNC(fn))) {
      argc = k;
      argv = AS_SEQ(x)->items;
    }
  }
  MistVM *vm = w->vm;
  LangThreadState st;
  lang_thread_state_init(&st, w->stack_low);
  lang_lock(vm, &st);
  if (stopped(w->pipe)) {
    lang_unlock(vm, &st);
    return lang_raise(w->hvm, "RuntimeError", "the pipeline was stopped");
  }
  bool ok = vm->call(vm, fn, argc, argv, NULL, out);
  lang_unlock(vm, &st);
  if (!ok) put_error(w, &st.err);
  return ok;
}

/* One example of each input, as a tuple. */
static ItStatus zip_next(Worker *w, It *it, Value *out) {
  int n = it->ds->nin;
  ObjSeq *t = lang_tuple_new((size_t)n);
  for (int i = 0; i < n; i++) {
    ItStatus s = it_next(w, it->in[i], &t->items[i]);
    if (s != IT_OK) return s;
  }
  *out = v_obj(t);
  return IT_OK;
}

/* A uniform integer in [0, n), the draw-th of this shuffle's run. */
static uint64_t draw(It *it, uint64_t n) {
  uint64_t seed = it->ds->seed, d = it->draws++;
  uint32_t ctr[4] = {(uint32_t)d, (uint32_t)(d >> 32), (uint32_t)it->run, (uint32_t)(it->run >> 32)};
  uint32_t key[2] = {(uint32_t)(seed >> 32), (uint32_t)seed};
  uint32_t r[4];
  lang_philox(ctr, key, r);
  uint64_t u = (uint64_t)r[0] << 32 | r[1];
  return (uint64_t)(((unsigned __int128)u * n) >> 64);
}

/* Fill a buffer of `buffer` examples; then hand out a random one and put
 * the next example in its place, until the input ends and the buffer is
 * empty (tf.data's shuffle). */
static ItStatus shuffle_next(Worker *w, It *it, Value *out) {
  int64_t cap = it->ds->n;
  if (!it->buf) {
    int64_t want = it->ds->in[0]->len;
    it->buf = lang_alloc((size_t)(want != INFINITE && want < cap ? (want ? want : 1) : cap) * sizeof(Value));
    while (it->nbuf < cap) {
      ItStatus s = it_next(w, it->in[0], &it->buf[it->nbuf]);
      if (s == IT_ERR) return s;
      if (s == IT_END) {
        it->in_done = true;
        break;
      }
      it->nbuf++;
    }
  }
  if (it->nbuf == 0) return IT_END;
  uint64_t j = draw(it, (uint64_t)it->nbuf);
  *out = it->buf[j];
  if (!it->in_done) {
    ItStatus s = it_next(w, it->in[0], &it->buf[j]);
    if (s == IT_ERR) return s;
    if (s == IT_OK) return IT_OK;
    it->in_done = true;
  }
  it->buf[j] = it->buf[--it->nbuf];
  it->buf[it->nbuf] = v_none();
  return IT_OK;
}

static ItStatus it_next_index(Worker *w, It *it, int64_t *out);

/* shuffle_next over the indices 0..n-1 of an indexable input */
static ItStatus shuffle_next_index(Worker *w, It *it, int64_t *out) {
  int64_t cap = it->ds->n, n = it->ds->in[0]->len;
  if (!it->ibuf) {
    int64_t fill = n < cap ? n : cap;
    it->ibuf = lang_alloc_atomic((size_t)(fill ? fill : 1) * sizeof *it->ibuf);
    for (it->nbuf = 0; it->nbuf < fill; it->nbuf++) it->ibuf[it->nbuf] = it->nbuf;
    it->pos = fill;
  }
  if (it->nbuf == 0) return IT_END;
  uint64_t j = draw(it, (uint64_t)it->nbuf);
  *out = it->ibuf[j];
  if (it->pos < n) it->ibuf[j] = it->pos++;
  else it->ibuf[j] = it->ibuf[--it->nbuf];
  return IT_OK;
}

static ItStatus repeat_next_index(Worker *w, It *it, int64_t *out);

/* The next index of an iterator whose dataset yields_index. */
static ItStatus it_next_index(Worker *w, It *it, int64_t *out) {
  Dataset *ds = it->ds;
  if (indexable(ds)) {
    if (it->pos >= ds->len) return IT_END;
    *out = it->pos++;
    return IT_OK;
  }
  if (ds->kind == DS_SHUFFLE) return shuffle_next_index(w, it, out);
  if (ds->kind == DS_REPEAT) return repeat_next_index(w, it, out);
  /* DS_TAKE */
  if (ds->n >= 0 && it->pos >= ds->n) return IT_END;
  it->pos++;
  return it_next_index(w, it->in[0], out);
}

/* ---- batch: k examples of one structure, each leaf stacked ---- */

static bool stack_leaves(Worker *w, Value *xs, int64_t k, const char *path, Value *out);

static bool stack_tensors(Worker *w, Value *xs, int64_t k, const char *path, Value *out) {
  MistVM *hvm = w->hvm;
  ObjTensor *t0 = AS_TENSOR(xs[0]);
  if (t0->ndim + 1 > LANG_TENSOR_MAX_DIMS)
    return lang_raise(hvm, "ValueError", "batch: examples of %d dimensions cannot be stacked", t0->ndim);
  for (int64_t i = 1; i < k; i++) {
    ObjTensor *t = AS_TENSOR(xs[i]);
    if (t->dtype != t0->dtype || t->ndim != t0->ndim ||
        memcmp(t->shape, t0->shape, (size_t)t0->ndim * sizeof *t0->shape) != 0)
      return lang_raise(hvm, "ValueError",
                        "batch: the examples of a batch differ%s%s: %s %s and %s %s", *path ? " at " : "",
                        path, std_shape_str(t0), dev_dtype_name(t0->dtype), std_shape_str(t),
                        dev_dtype_name(t->dtype));
  }
  int64_t shape[LANG_TENSOR_MAX_DIMS];
  shape[0] = k;
  memcpy(shape + 1, t0->shape, (size_t)t0->ndim * sizeof *shape);
  ObjTensor *r = lang_tensor_new(hvm, t0->dtype, t0->ndim + 1, shape, false);
  if (!r) return false;
  size_t row = (size_t)t0->size * dev_dtype_size(t0->dtype);
  char *dst = lang_tensor_ptr(r);
  for (int64_t i = 0; i < k; i++) {
    ObjTensor *t = AS_TENSOR(xs[i]);
    if (lang_tensor_is_contiguous(t)) {
      memcpy(dst + (size_t)i * row, lang_tensor_ptr(t), row);
    } else {
      Value rv;
      if (!lang_tensor_getitem(hvm, r, v_int(i), &rv) || !lang_tensor_copy_into(hvm, "batch", AS_TENSOR(rv), t))
        return false;
    }
  }
  LANG_KEEP(xs);
  *out = v_obj(r);
  return true;
}

static bool stack_leaves(Worker *w, Value *xs, int64_t k, const char *path, Value *out) {
  MistVM *hvm = w->hvm;
  if (!lang_check_stack(hvm)) return false;
  Value x0 = xs[0];
  const char *t0 = lang_type_name(x0);
  for (int64_t i = 1; i < k; i++)
    if (xs[i].tag != x0.tag || (x0.tag == V_OBJ && xs[i].o->kind != x0.o->kind))
      return lang_raise(hvm, "TypeError", "batch: the examples of a batch differ%s%s: a '%s' and a '%s'",
                        *path ? " at " : "", path, t0, lang_type_name(xs[i]));
  if (v_is_tensor(x0)) return stack_tensors(w, xs, k, path, out);
  if (x0.tag == V_FLOAT || x0.tag == V_INT || x0.tag == V_BOOL) {
    DType dt = x0.tag == V_FLOAT ? DT_F32 : x0.tag == V_INT ? DT_I64 : DT_BOOL;
    int64_t shape[1] = {k};
    ObjTensor *r = lang_tensor_new(hvm, dt, 1, shape, false);
    if (!r) return false;
    size_t es = dev_dtype_size(dt);
    for (int64_t i = 0; i < k; i++)
      if (!lang_tensor_store(hvm, dt, lang_tensor_ptr(r) + (size_t)i * es, xs[i])) return false;
    *out = v_obj(r);
    return true;
  }
  Value *col = lang_alloc((size_t)k * sizeof *col);
  StrBuf p;
  sb_init(&p);
  if (v_is_obj(x0, O_DICT)) {
    ObjDict *d0 = AS_DICT(x0), *r = lang_dict_new();
    for (size_t j = 0; j < d0->len; j++) {
      ObjStr *key = d0->entries[j].key;
      for (int64_t i = 0; i < k; i++)
        if (AS_DICT(xs[i])->len != d0->len || !lang_dict_get(AS_DICT(xs[i]), key, &col[i]))
          return lang_raise(hvm, "ValueError", "batch: the examples of a batch have different keys%s%s",
                            *path ? " at " : "", path);
      p.len = 0;
      sb_printf(&p, "%s%s%s", path, *path ? "." : "", key->data);
      Value s;
      if (!stack_leaves(w, col, k, p.data, &s)) return false;
      lang_dict_put(r, key, s);
    }
    *out = v_obj(r);
    return true;
  }
  if (v_is_obj(x0, O_TUPLE) || v_is_obj(x0, O_LIST)) {
    size_t n = AS_SEQ(x0)->len;
    ObjSeq *r = v_is_obj(x0, O_LIST) ? lang_list_new(n) : lang_tuple_new(n);
    for (size_t j = 0; j < n; j++) {
      for (int64_t i = 0; i < k; i++) {
        if (AS_SEQ(xs[i])->len != n)
          return lang_raise(hvm, "ValueError", "batch: the examples of a batch have %ss of different lengths",
                            t0);
        col[i] = AS_SEQ(xs[i])->items[j];
      }
      p.len = 0;
      sb_printf(&p, "%s%s%zu", path, *path ? "." : "", j);
      if (!stack_leaves(w, col, k, p.data, &r->items[j])) return false;
    }
    *out = v_obj(r);
    return true;
  }
  return lang_raise(hvm, "TypeError", "batch: cannot stack examples of type '%s'", t0);
}

static ItStatus batch_next(Worker *w, It *it, Value *out) {
  int64_t n = it->ds->n, k = 0;
  if (it->in_done) return IT_END;
  if (yields_index(it->ds->in[0])) {
    int64_t *idx = lang_alloc_atomic((size_t)n * sizeof *idx);
    while (k < n) {
      ItStatus s = it_next_index(w, it->in[0], &idx[k]);
      if (s == IT_ERR) return s;
      if (s == IT_END) {
        it->in_done = true;
        break;
      }
      k++;
    }
    if (k == 0 || (k < n && it->ds->drop_remainder)) return IT_END;
    return gather(w->hvm, index_src(it->ds->in[0]), idx, k, out) ? IT_OK : IT_ERR;
  }
  Value *xs = lang_alloc((size_t)n * sizeof *xs);
  while (k < n) {
    ItStatus s = it_next(w, it->in[0], &xs[k]);
    if (s == IT_ERR) return s;
    if (s == IT_END) {
      it->in_done = true;
      break;
    }
    k++;
  }
  if (k == 0 || (k < n && it->ds->drop_remainder)) return IT_END;
  return stack_leaves(w, xs, k, "", out) ? IT_OK : IT_ERR;
}

static ItStatus repeat_next_index(Worker *w, It *it, int64_t *out) {
  for (;;) {
    if (it->ds->n != INFINITE && it->pos >= it->ds->n) return IT_END;
    if (!it->in[0]) {
      it->in[0] = it_new(w, it->ds->in[0], it->run * 1000003u + (uint64_t)it->pos + 1);
      if (!it->in[0]) return IT_ERR;
    }
    ItStatus s = it_next_index(w, it->in[0], out);
    if (s != IT_END) return s;
    it->in[0] = NULL;
    it->pos++;
    if (it->ds->in[0]->len == 0) return IT_END;
    if (stopped(w->pipe)) return IT_END;
  }
}

static ItStatus repeat_next(Worker *w, It *it, Value *out) {
  for (;;) {
    if (it->ds->n != INFINITE && it->pos >= it->ds->n) return IT_END;
    if (!it->in[0]) {
      /* each repetition is a run of its own: shuffles inside draw anew */
      it->in[0] = it_new(w, it->ds->in[0], it->run * 1000003u + (uint64_t)it->pos + 1);
      if (!it->in[0]) return IT_ERR;
    }
    ItStatus s = it_next(w, it->in[0], out);
    if (s != IT_END) return s;
    it->in[0] = NULL;
    it->pos++;
    if (it->ds->in[0]->len == 0) return IT_END;   /* nothing to repeat */
    if (stopped(w->pipe)) return IT_END;
  }
}

/* ---- prefetch: a thread filling a ring ---- */

/* Take the next item of pf's ring, waiting for it. */
static ItStatus ring_take(Worker *w, Prefetcher *pf, Value *out) {
  Pipe *p = w->pipe;
  pthread_mutex_lock(&p->mu);
  while (pf->count == 0 && !pf->done && !(stopped(p) && !w->is_loop)) pipe_wait(w);
  if (pf->count == 0) {
    bool done = pf->done;
    pthread_mutex_unlock(&p->mu);
    if (done) return IT_END;
    lang_raise(w->hvm, "RuntimeError", "the pipeline was stopped");
    return IT_ERR;
  }
  Item it = pf->ring[pf->head];
  pf->ring[pf->head] = (Item){0};
  pf->head = (pf->head + 1) % pf->cap;
  pf->count--;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  if (it.err) {
    put_error(w, &it.e);
    return IT_ERR;
  }
  *out = it.v;
  return IT_OK;
}

typedef struct ThreadStart {
  Pipe *pipe;
  Prefetcher *pf;
  MapPool *mp;
  MistVM *hvm;
} ThreadStart;

static char *stack_low_of_thread(void) {
  pthread_attr_t attr;
  void *addr = NULL;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return NULL;
  if (pthread_attr_getstack(&attr, &addr, &size) != 0) addr = NULL;
  pthread_attr_destroy(&attr);
  return addr;
}

static void thread_exit(Pipe *p) {
  Registry *r = p->reg;
  MistVM *vm = p->vm;
  pthread_mutex_lock(&p->mu);
  pipe_release(p);   /* unlocks */
  __atomic_sub_fetch(&vm->background, 1, __ATOMIC_RELEASE);
  pthread_mutex_lock(&r->mu);
  r->nthreads--;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static void *prefetch_main(void *arg) {
  ThreadStart *ts = arg;
  Worker w = {ts->pipe->vm, ts->hvm, ts->pipe, stack_low_of_thread(), false};
  Prefetcher *pf = ts->pf;
  Pipe *p = ts->pipe;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (pf->count == pf->cap && !stopped(p)) pipe_wait(&w);
    bool stop = stopped(p);
    pthread_mutex_unlock(&p->mu);
    if (stop) break;
    Item item = {0};
    ItStatus s = it_next(&w, pf->from, &item.v);
    if (s == IT_ERR) {
      item.err = true;
      take_error(&w, &item.e);
    }
    pthread_mutex_lock(&p->mu);
    if (s != IT_END) {
      pf->ring[(pf->head + pf->count) % pf->cap] = item;
      pf->count++;
    }
    if (s != IT_OK) pf->done = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (s != IT_OK) {
      /* the stream's producer is finished: nothing inside is needed */
      if (pf == p->top) pipe_stop(p);
      break;
    }
  }
  thread_exit(p);
  return NULL;
}

/* Start a thread of the pipeline: counted in the pipe and the VM. */
static bool start_thread(Worker *w, void *(*fn)(void *), ThreadStart *ts) {
  Pipe *p = w->pipe;
  Registry *r = p->reg;
  ts->hvm = lang_vm_for_thread(p->vm);
  pthread_mutex_lock(&p->mu);
  p->refs++;
  pthread_mutex_unlock(&p->mu);
  pthread_mutex_lock(&r->mu);
  r->nthreads++;
  pthread_mutex_unlock(&r->mu);
  /* the thread reads values: no more updates in place until it is done */
  __atomic_add_fetch(&p->vm->background, 1, __ATOMIC_SEQ_CST);
  if (!lang_gc_thread_start(THREAD_STACK, fn, ts)) {
    __atomic_sub_fetch(&p->vm->background, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&r->mu);
    r->nthreads--;
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_lock(&p->mu);
    p->refs--;
    pthread_mutex_unlock(&p->mu);
    return lang_raise(w->hvm, "RuntimeError", "the data pipeline could not start a thread");
  }
  return true;
}

static bool prefetcher_start(Worker *w, Prefetcher *pf) {
  ThreadStart *ts = lang_alloc(sizeof *ts);
  ts->pipe = w->pipe;
  ts->pf = pf;
  /* the collector keeps ts alive: GC_pthread_create holds the argument
   * in its own (scanned) memory until the thread has it on its stack */
  return start_thread(w, prefetch_main, ts);
}

/* ---- map ---- */

static void *map_worker_main(void *arg) {
  ThreadStart *ts = arg;
  Worker w = {ts->pipe->vm, ts->hvm, ts->pipe, stack_low_of_thread(), false};
  MapPool *mp = ts->mp;
  Pipe *p = ts->pipe;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (!stopped(p) && (mp->next_job >= mp->head + mp->count ||
                           mp->slots[mp->next_job % mp->cap].state != 1))
      pipe_wait(&w);
    if (stopped(p)) {
      pthread_mutex_unlock(&p->mu);
      break;
    }
    MapSlot *s = &mp->slots[mp->next_job % mp->cap];
    mp->next_job++;
    s->state = 2;
    Value in = s->in;
    pthread_mutex_unlock(&p->mu);
    Value out = v_none();
    MistError e = {0};
    bool ok = call_mist(&w, mp->ds->fn, in, &out);
    if (!ok) take_error(&w, &e);
    pthread_mutex_lock(&p->mu);
    s->out = out;
    s->err = !ok;
    s->e = e;
    s->state = 3;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
  thread_exit(p);
  return NULL;
}

static ItStatus map_next(Worker *w, It *it, Value *out) {
  MapPool *mp = it->mp;
  Pipe *p = w->pipe;
  if (!mp) {   /* one worker: this thread calls f itself */
    Value x;
    ItStatus s = it_next(w, it->in[0], &x);
    if (s != IT_OK) return s;
    return call_mist(w, it->ds->fn, x, out) ? IT_OK : IT_ERR;
  }
  if (!it->pos) {   /* the workers start with the first example asked for */
    it->pos = 1;
    for (int64_t i = 0; i < it->ds->n; i++) {
      ThreadStart *ts = lang_alloc(sizeof *ts);
      ts->pipe = p;
      ts->mp = mp;
      if (!start_thread(w, map_worker_main, ts)) return IT_ERR;
    }
  }
  /* keep the slots full: examples pulled here, in order */
  while (!it->in_done && mp->count < mp->cap) {
    Value x;
    ItStatus s = it_next(w, it->in[0], &x);
    if (s == IT_END) {
      it->in_done = true;
      break;
    }
    MistError e = {0};
    if (s == IT_ERR) take_error(w, &e);
    pthread_mutex_lock(&p->mu);
    MapSlot *slot = &mp->slots[(mp->head + mp->count) % mp->cap];
    slot->in = x;
    slot->out = v_none();
    slot->err = s == IT_ERR;
    slot->e = e;
    slot->state = s == IT_ERR ? 3 : 1;
    mp->count++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (s == IT_ERR) {
      it->in_done = true;   /* nothing after an error */
      break;
    }
  }
  if (mp->count == 0) return IT_END;
  pthread_mutex_lock(&p->mu);
  MapSlot *slot = &mp->slots[mp->head % mp->cap];
  while (slot->state != 3 && !stopped(p)) pipe_wait(w);
  if (slot->state != 3) {
    pthread_mutex_unlock(&p->mu);
    lang_raise(w->hvm, "RuntimeError", "the pipeline was stopped");
    return IT_ERR;
  }
  MapSlot done = *slot;
  *slot = (MapSlot){0};
  mp->head++;
  mp->count--;
  if (mp->next_job < mp->head) mp->next_job = mp->head;
  pthread_mutex_unlock(&p->mu);
  if (done.err) return put_error(w, &done.e), IT_ERR;
  *out = done.out;
  return IT_OK;
}

static ItStatus it_next(Worker *w, It *it, Value *out) {
  if (stopped(w->pipe) && !w->is_loop) {
    lang_raise(w->hvm, "RuntimeError", "the pipeline was stopped");
    return IT_ERR;
  }
  Dataset *ds = it->ds;
  if (yields_index(ds)) {
    int64_t i;
    ItStatus s = it_next_index(w, it, &i);
    if (s != IT_OK) return s;
    return example_at(w->hvm, index_src(ds), i, out) ? IT_OK : IT_ERR;
  }
  switch (ds->kind) {
  case DS_TREE: return IT_END;   /* indexable: handled above */
  case DS_ZIP: return zip_next(w, it, out);
  case DS_MAP: return map_next(w, it, out);
  case DS_SHUFFLE: return shuffle_next(w, it, out);
  case DS_BATCH: return batch_next(w, it, out);
  case DS_REPEAT: return repeat_next(w, it, out);
  case DS_PREFETCH: return it->pf ? ring_take(w, it->pf, out) : it_next(w, it->in[0], out);
  case DS_TAKE:
    if (ds->n >= 0 && it->pos >= ds->n) return IT_END;
    it->pos++;
    return it_next(w, it->in[0], out);
  }
  return IT_END;
}

/* ---- the stream a loop reads ---- */

typedef struct Stream {
  ObjNative base;
  Pipe *pipe;
  int64_t len;        /* INT64_MAX for an infinite dataset */
  int64_t next;       /* the index the loop asks for next */
  Worker *w;
} Stream;

static bool stream_len(MistVM *vm, Value self, int64_t *out) {
  *out = ((Stream *)self.o)->len;
  return true;
}

static bool stream_getitem(MistVM *vm, Value self, Value index, Value *out) {
  Stream *s = (Stream *)self.o;
  if (index.tag != V_INT || index.i != s->next)
    return lang_raise(vm, "TypeError", "a dataset's stream is read in order, one example at a time");
  Worker *w = s->w;
  Pipe *p = s->pipe;
  Prefetcher *pf = p->top;
  /* wait without the VM lock: map's workers may need it */
  pthread_mutex_lock(&p->mu);
  bool ready = pf->count > 0 || pf->done;
  pthread_mutex_unlock(&p->mu);
  LangThreadState st;
  if (!ready) lang_unlock(vm, &st);
  pthread_mutex_lock(&p->mu);
  while (pf->count == 0 && !pf->done && !vm->interrupt) pipe_wait(w);
  pthread_mutex_unlock(&p->mu);
  if (!ready) lang_lock(vm, &st);
  if (vm->interrupt) {
    vm->interrupt = 0;
    return lang_raise(vm, "KeyboardInterrupt", "interrupted");
  }
  Value v;
  ItStatus r = ring_take(w, pf, &v);
  if (r == IT_OK) {
    s->next++;
    *out = v;
    return true;
  }
  if (r == IT_END)
    return lang_raise(vm, "RuntimeError", "the dataset ended after %lld of its %lld examples",
                      (long long)s->next, (long long)s->len);
  take_error(w, &vm->err);   /* the error, with its span and traceback, as made */
  return false;
}

static void stream_repr(MistVM *vm, Value self, StrBuf *out) { sb_adds(out, "<dataset stream>"); }

static const NativeClass stream_class = {"dataset_stream", stream_repr, stream_len, NULL, stream_getitem};

static void stream_finalize(void *obj, void *data) {
  Pipe *p = data;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, true);
  pthread_cond_broadcast(&p->cv);
  pipe_release(p);   /* unlocks */
}

/* lang_vm_free: stop every pipeline and wait for its threads. */
static void stop_all(MistVM *vm) {
  Registry *r = vm->threads;
  pthread_mutex_lock(&r->mu);
  for (Pipe *p = r->live; p; p = p->next_live) {
    atomic_store(&p->stop, true);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_unlock(&r->mu);
  /* let threads waiting for the VM lock have it, see the stop and go;
   * Mist code still running in one is interrupted */
  vm->interrupt = 1;
  LangThreadState st;
  lang_unlock(vm, &st);
  pthread_mutex_lock(&r->mu);
  while (r->nthreads > 0) pthread_cond_wait(&r->cv, &r->mu);
  pthread_mutex_unlock(&r->mu);
  vm->threads = NULL;
  vm->stop_threads = NULL;
}

static bool ds_iter(MistVM *vm, Value self, Value *out) {
  Dataset *ds = AS_DS(self);
  if (vm->sandbox) return lang_raise(vm, "RuntimeError", "datasets cannot run threads in the sandbox");
  if (!vm->threads) {
    Registry *r = lang_alloc_uncollectable(sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    vm->threads = r;
    vm->stop_threads = stop_all;
  }
  if (!lang_lock_init(vm)) return lang_raise(vm, "MemoryError", "out of memory");
  Registry *r = vm->threads;
  Pipe *p = lang_alloc_uncollectable(sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  atomic_init(&p->stop, false);
  p->refs = 1;   /* the stream's */
  p->vm = vm;
  p->reg = r;
  pthread_mutex_lock(&r->mu);
  p->next_live = r->live;
  if (r->live) r->live->prev_live = p;
  r->live = p;
  pthread_mutex_unlock(&r->mu);
  Worker *w = lang_alloc(sizeof *w);
  w->vm = vm;
  w->hvm = lang_vm_for_thread(vm);
  w->pipe = p;
  w->is_loop = true;
  Stream *s = lang_alloc(sizeof *s);
  s->base.obj.kind = O_NATIVE;
  s->base.cls = &stream_class;
  s->pipe = p;
  s->len = ds->len == INFINITE ? INT64_MAX : ds->len;
  s->w = w;
  lang_gc_finalize(s, stream_finalize, p);
  /* the iterators are made here, on the loop's thread; the stream's
   * ring is an implicit prefetch (a bigger one when the dataset ends
   * in prefetch(n)) */
  Dataset *top = ds->kind == DS_PREFETCH && ds->n > 0 ? ds->in[0] : ds;
  It *root = it_new(w, top, 0);
  if (root) {
    p->top = prefetcher_new(root, ds->kind == DS_PREFETCH && ds->n > 0 ? ds->n : STREAM_AHEAD);
    if (prefetcher_start(w, p->top)) {
      *out = v_obj(s);
      return true;
    }
  }
  pipe_stop(p);
  vm->err = w->hvm->err;
  return false;
}

void std_register_data(MistVM *vm) {
  std_def_hidden(vm, "_data_from_tensors", "from_tensors", bi_from_tensors);
  std_def_hidden(vm, "_data_idx", "idx", bi_idx);
  std_def_hidden(vm, "_data_npy", "npy", bi_npy);
  std_def_hidden(vm, "_data_csv", "csv", bi_csv);
  std_def_hidden(vm, "_data_zip", "zip", bi_zip);
  lang_def_method(vm, "map", m_map, -1, -1);
  lang_def_method(vm, "shuffle", m_shuffle, -1, -1);
  lang_def_method(vm, "batch", m_batch, -1, -1);
  lang_def_method(vm, "repeat", m_repeat, -1, -1);
  lang_def_method(vm, "prefetch", m_prefetch, -1, -1);
  lang_def_method(vm, "take", m_take, -1, -1);
}
