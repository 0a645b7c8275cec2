/* value.h: the shared vocabulary of Mist values.
 *
 * A Value is a small tagged union passed by value: None, bool, int and
 * float live inside it; everything else is a pointer to a heap object
 * owned by the Boehm GC (see gc.c, the only user of <gc.h>).  All values
 * are immutable, so objects are shared freely and never copied to be
 * safe; "updates" (lang_list_set, lang_dict_set...) return new objects.
 * Lists and dicts are *versioned* (value.c, "Versions"): an update
 * writes into the storage that the old object and the new one share and
 * turns the old object into a note of what it had there, so it costs
 * O(1) and every object still reads as the value it always was.  Read
 * them through AS_SEQ and AS_DICT, which bring an old version's
 * contents back first.
 *
 * The object kinds and their layouts are declared here; the Python
 * semantics of operations on them (arithmetic, comparison, printing)
 * live in ops.c and print.c.
 */
#ifndef MIST_LANG_VALUE_H
#define MIST_LANG_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct MistVM MistVM;   /* the interpreter state, lang/vm.h */
struct IrGraph;                 /* ir/ir.h: graphs are opaque down here */
struct EvCode;                  /* ir/eval.c: a graph compiled for the interpreter */

typedef enum {
  V_UNBOUND,   /* no value: an unassigned slot or global; never visible to programs */
  V_NONE,
  V_BOOL,
  V_INT,
  V_FLOAT,
  V_OBJ,
} VTag;

typedef struct Value {
  VTag tag;
  uint32_t pad;   /* 0: see the constructors */
  union {
    bool b;
    int64_t i;
    double f;
    struct Obj *o;
  };
} Value;

typedef enum {
  O_STR,
  O_TUPLE,
  O_LIST,
  O_DICT,
  O_RANGE,
  O_FUNC,      /* a closure: a graph and the values of its free variables */
  O_BUILTIN,   /* a function written in C: IR primitive or stdlib builtin */
  O_MODULE,
  O_GRAPH,     /* an IR graph as a constant (becomes an O_FUNC when evaluated) */
  O_SLICE,     /* a[b:c:d] index object */
  O_BOUND,     /* a builtin with its first argument bound: x.f for non-modules */
  O_ENV,       /* sensitivities of a closure's free variables (autodiff) */
  O_TENSOR,    /* an n-d array (lang/tensor.h) */
  O_SPARSE,    /* a sensitivity made of parts of a value's (autodiff) */
  O_FILE,      /* a text file named by open(path, mode) (lang/textfile.c) */
  O_ELLIPSIS,  /* ..., the one Ellipsis (lang_ellipsis), for tensor indices */
  O_ITER,      /* iter(x): the items of x from a position on (ObjIter) */
  O_NATIVE,    /* a value of a type defined above lang/ (stdlib's datasets): see NativeClass */
} OKind;

/* flags: facts about an immutable object computed once (lang_holds_function) */
enum { OBJ_FN_KNOWN = 1, OBJ_FN_HELD = 2 };

typedef struct Obj {
  OKind kind : 8;
  unsigned flags : 8;
} Obj;

/* UTF-8 text.  len counts bytes, nchars code points (== len for ASCII,
 * which makes indexing O(1) in the common case).  data is NUL-terminated. */
typedef struct ObjStr {
  Obj obj;
  uint32_t hash;       /* 0 = not computed yet */
  bool ascii;
  size_t len;
  size_t nchars;
  char data[];
} ObjStr;

/* Tuples and lists share a layout: len values at items.  A tuple's
 * items follow the header.  A list is an ObjList: items is NULL while it
 * is an old version (see below), so read lists through AS_SEQ. */
typedef struct ObjSeq {
  Obj obj;
  uint32_t at;      /* a list's old version: see ObjList */
  size_t len;
  Value *items;
} ObjSeq;

/* A list.  The current version of its storage has items (room for cap
 * values) and counts the old versions made from that storage (ndiffs,
 * which bounds the work of bringing one back).  An old version has items
 * NULL and says how it differs from the newer version `newer`: item
 * seq.at was `old`, or, when seq.at is LANG_LIST_PREFIX, it is newer's
 * first len items (newer was made by appending to it).  A list is made
 * on every update, so it is kept to 48 bytes: a union, and the index
 * (below 2^32: lists are shorter than 2^30) in ObjSeq's padding. */
#define LANG_LIST_PREFIX UINT32_MAX
typedef struct ObjList {
  ObjSeq seq;
  union {
    struct { size_t cap, ndiffs; };                 /* the current version */
    struct { struct ObjList *newer; Value old; };   /* an old version */
  };
} ObjList;

/* Dicts map str keys to values, keeping insertion order.  Entries are
 * stored in order; index is an open-addressing table of entry numbers
 * (-1 = empty) of size cap (a power of two, at least 2 * len), or NULL
 * for small dicts, which are searched linearly.  Versioned like lists:
 * an old version has newer set and entries and index NULL; it differs
 * from newer in the value of entry `at` (old), or is newer's first len
 * entries (at == LANG_VERSION_PREFIX). */
#define LANG_VERSION_PREFIX SIZE_MAX
typedef struct DictEntry {
  ObjStr *key;
  Value value;
} DictEntry;

typedef struct ObjDict {
  Obj obj;
  size_t len;
  size_t cap;
  int32_t *index;
  DictEntry *entries;
  size_t ndiffs;
  struct ObjDict *newer;
  size_t at;
  Value old;
} ObjDict;

typedef struct ObjRange {
  Obj obj;
  int64_t start, stop, step;
} ObjRange;

typedef struct ObjSlice {
  Obj obj;
  Value start, stop, step;    /* each an int or None */
} ObjSlice;

/* What few closures carry, allocated when first needed
 * (lang_func_extra), so that the others are 24 bytes before their
 * captured values: a differentiated loop makes one per iteration. */
typedef struct ObjFuncExtra {
  int ndefaults;            /* values for the last ndefaults parameters */
  Value *defaults;
  /* autodiff's caches (autodiff/api.c) */
  struct ObjFunc *primal;   /* for J(f), the closure f; else NULL */
  struct ObjFunc *jform;    /* J(f), made the first time it is asked for */
  struct ObjFunc *jmform[2]; /* the last J(f) made for a mask of parameters, */
  uint64_t jmbits[2];        /* and that mask: [1] for float arguments (jmask) */
  bool jit;                  /* made by jit(f): calls go through graph mode's path (jit/) */
} ObjFuncExtra;

/* A closure.  env holds the values of the graph's free variables, in the
 * order of the graph's free-variable list (computed by ir/eval.c).  Its
 * code and module are its graph's; default values and autodiff's caches
 * are in x (NULL when it has none). */
typedef struct ObjFunc {
  Obj obj;
  int nenv;
  struct IrGraph *graph;
  ObjFuncExtra *x;
  Value env[];
} ObjFunc;

/* Keyword arguments passed to a C function: names[i] = values[i]. */
typedef struct KwArgs {
  int n;
  ObjStr **names;
  Value *values;
} KwArgs;

/* A C function.  Returns false after raising an error (lang_raise), true
 * after storing the result in *out.  kw is NULL when no keyword
 * arguments were given. */
typedef bool (*BuiltinFn)(MistVM *vm, int argc, const Value *argv,
                          const KwArgs *kw, Value *out);

typedef struct ObjBuiltin {
  Obj obj;
  const char *name;
  BuiltinFn fn;
  int prim;         /* IR primitive number (ir/ops.def), or -1 for a builtin */
  int op;           /* its row in ir/builtin_ops.def (IR_B_...), where its
                       type rule and derivative rules are found; -1: none */
  bool nondiff;     /* its results carry no derivative: autodiff computes it
                       without a rule (from its row's flags, or set by
                       ad_register for builtins that are not ops) */
  int min_args;     /* positional arguments accepted, -1 = unchecked */
  int max_args;
  void *data;       /* for builtins registered by a host: its pointer */
  unsigned self_kinds;  /* the kinds of value it is a method of (SELF_STR...,
                           lang/vm.h): what `x.` suggests and completes */
} ObjBuiltin;

/* open(path, mode): a text file, by name.  It holds no open descriptor:
 * each read or write opens the file, does its work and closes it
 * (lang/textfile.c). */
typedef struct ObjFile {
  Obj obj;
  ObjStr *path;
  char mode;        /* 'r', 'w', 'a' or 'x' */
} ObjFile;

/* iter(x): an immutable position in a list of items.  next(it) gives
 * the item there, and `x = next(it)` also rebinds `it` to the iterator
 * one step on (parser/lower.c). */
typedef struct ObjIter {
  Obj obj;
  struct ObjSeq *items;
  size_t pos;
} ObjIter;

/* x.f where x is not a module: f called with x first. */
typedef struct ObjBound {
  Obj obj;
  Value self;
  Value fn;
} ObjBound;

/* A module: a file's top-level names.  Globals are a dict from name to
 * slot number plus an array of slots, so compiled code can refer to a
 * global by slot; an unassigned slot holds V_UNBOUND. */
typedef struct ObjModule {
  Obj obj;
  ObjStr *name;
  ObjStr *path;             /* file it came from, or "<string>" */
  ObjDict *names;           /* name -> int slot number */
  Value *slots;
  size_t nslots, capslots;
  int file_id;              /* in the VM's table of source files */
  struct ModuleLazy *lazy;  /* its definitions not all loaded yet, or NULL */
} ObjModule;

/* A module whose top-level statements are loaded when one of the names
 * they bind is first asked for (lang_module_load; api/mist.c loads
 * them): autodiff's rules, of which a program uses a few. */
typedef struct ModuleLazy {
  ObjDict *index;           /* name -> int: the statement that binds it */
  int n;
  struct TopStmt *stmts;    /* parser/toplevel.h */
  unsigned char *state;     /* per statement: LAZY_NOT_LOADED... */
  /* per statement, once lowered: what the module's environment binds
   * its name to after it (an IrNode, NULL if nothing) */
  struct IrNode **bound;
  bool *bound_known;
  void *batch;              /* the statements being loaded (api/mist.c) */
} ModuleLazy;

enum { LAZY_NOT_LOADED, LAZY_LOADING, LAZY_LOADED };

/* An env maps keys (free-variable nodes, as ints) to sensitivities; a
 * small immutable association list, sorted by key. */
typedef struct EnvEntry {
  int64_t key;
  Value value;
} EnvEntry;

typedef struct ObjEnv {
  Obj obj;
  size_t len;
  EnvEntry items[];
} ObjEnv;
#define AS_ENV(v) ((ObjEnv *)(v).o)

/* A sensitivity of `like` (a tensor, a list or a tuple) made of a few
 * parts (autodiff, ir/prims.c): d added at like[index], a whole
 * sensitivity (index Unbound), or the sum of two such (a and b), kept
 * apart until something needs the whole, so that reading row t of a
 * table in a loop costs a row backwards, not the table.  `dense` keeps
 * the whole once made. */
typedef struct ObjSparse {
  Obj obj;
  Value like;
  Value index, d;
  struct ObjSparse *a, *b;
  Value dense;
} ObjSparse;
#define AS_SPARSE(v) ((ObjSparse *)(v).o)

/* A value whose type is defined outside lang/ by a table of C functions
 * (stdlib/data.c's datasets and the streams that iterate them), so that
 * len(), indexing and `for x in v` reach it without lang/ knowing it.
 * Any hook may be NULL: the operation is then a TypeError, as for a
 * Python object without that method.  A type embeds ObjNative first. */
struct StrBuf;
typedef struct NativeClass {
  const char *name;                                        /* what type() says */
  void (*repr)(MistVM *vm, Value self, struct StrBuf *out);  /* NULL: <name object> */
  bool (*len)(MistVM *vm, Value self, int64_t *out);
  /* what `for x in self` indexes from 0 to its len (ir/prims.c's
   * iter_seq): a sequence, or a native whose getitem hands out items in
   * order (a dataset's stream) */
  bool (*iter)(MistVM *vm, Value self, Value *out);
  bool (*getitem)(MistVM *vm, Value self, Value index, Value *out);
} NativeClass;

typedef struct ObjNative {
  Obj obj;
  const NativeClass *cls;
} ObjNative;
#define AS_NATIVE(v) ((ObjNative *)(v).o)

typedef struct ObjGraph {
  Obj obj;
  struct IrGraph *graph;
} ObjGraph;

/* ---- constructors and accessors ---- */

/* The constructors write tag and pad together, one 8-byte store, so
 * that copying a Value just made (8 bytes at a time) reads it straight
 * from the store buffer: a 4-byte tag store cannot be forwarded to an
 * 8-byte load, which then waits for the store to reach the cache, a
 * stall on every interpreter instruction that reads the result of the
 * one before (up to a third of the time of a scalar loop). */

static inline Value v_none(void) { Value v; v.tag = V_NONE; v.pad = 0; v.i = 0; return v; }
static inline Value v_unbound(void) { Value v; v.tag = V_UNBOUND; v.pad = 0; v.i = 0; return v; }
static inline Value v_bool(bool b) { Value v; v.tag = V_BOOL; v.pad = 0; v.i = 0; v.b = b; return v; }
static inline Value v_int(int64_t i) { Value v; v.tag = V_INT; v.pad = 0; v.i = i; return v; }
static inline Value v_float(double f) { Value v; v.tag = V_FLOAT; v.pad = 0; v.f = f; return v; }
static inline Value v_obj(void *o) { Value v; v.tag = V_OBJ; v.pad = 0; v.o = (Obj *)o; return v; }

static inline bool v_is_obj(Value v, OKind k) { return v.tag == V_OBJ && v.o->kind == k; }
#define AS_STR(v) ((ObjStr *)(v).o)
/* A tuple or list, and a dict, with an old version's contents brought
 * back first (lang_list_current, lang_dict_current).  The pointer and
 * its items stay valid until the next update of a list or dict, which
 * may take over the storage: C code must not keep them across a call to
 * Mist code or an update (lang_setitem, list concatenation).  Safe on
 * any thread: bringing a version back is done under one lock, and no
 * update writes in place while other threads read values
 * (lang_updates_in_place, lang/vm.h). */
ObjSeq *lang_list_current(ObjSeq *s);
ObjDict *lang_dict_current(ObjDict *d);
static inline ObjSeq *lang_as_seq(Value v) {
  ObjSeq *s = (ObjSeq *)v.o;
  return __builtin_expect(__atomic_load_n(&s->items, __ATOMIC_ACQUIRE) != NULL, 1) ? s : lang_list_current(s);
}
static inline ObjDict *lang_as_dict(Value v) {
  ObjDict *d = (ObjDict *)v.o;
  return __builtin_expect(__atomic_load_n(&d->newer, __ATOMIC_ACQUIRE) == NULL, 1) ? d : lang_dict_current(d);
}
/* The lock under which old versions of lists, dicts and tensor buffers
 * are brought back (value.c). */
void lang_versions_lock(void);
void lang_versions_unlock(void);
#define AS_SEQ(v) lang_as_seq(v)
#define AS_DICT(v) lang_as_dict(v)
#define AS_RANGE(v) ((ObjRange *)(v).o)
#define AS_SLICE(v) ((ObjSlice *)(v).o)
#define AS_FUNC(v) ((ObjFunc *)(v).o)
#define AS_BUILTIN(v) ((ObjBuiltin *)(v).o)
#define AS_BOUND(v) ((ObjBound *)(v).o)
#define AS_MODULE(v) ((ObjModule *)(v).o)
#define AS_GRAPH(v) ((ObjGraph *)(v).o)

/* Strings.  lang_str_new copies len bytes (which must be valid UTF-8:
 * callers that take outside text validate it with lang_utf8_valid). */
ObjStr *lang_str_new(const char *s, size_t len);
ObjStr *lang_str(const char *cstr);
ObjStr *lang_str_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
ObjStr *lang_intern(MistVM *vm, const char *s, size_t len);   /* one object per text */
uint32_t lang_str_hash(ObjStr *s);
bool lang_str_eq(const ObjStr *a, const ObjStr *b);
bool lang_utf8_valid(const char *s, size_t len);
/* The byte offset of the first malformed sequence in s, or len if none. */
size_t lang_utf8_check(const char *s, size_t len);
/* Decode one code point from s (len > 0 bytes); returns the bytes used
 * (1 with U+FFFD for a malformed sequence).  Encode writes 1-4 bytes. */
size_t lang_utf8_decode(const char *s, size_t len, uint32_t *cp);
size_t lang_utf8_encode(uint32_t cp, char *out);
/* Byte offset of code point number charidx (s->len if past the end). */
size_t lang_str_offset(const ObjStr *s, size_t charidx);

/* Closures: f's extra part, made on first use; its default values;
 * giving to a closure the default values of another (shared). */
ObjFuncExtra *lang_func_extra(ObjFunc *f);
void lang_func_share_defaults(ObjFunc *to, const ObjFunc *from);
static inline int lang_func_ndefaults(const ObjFunc *f) { return f->x ? f->x->ndefaults : 0; }
static inline Value *lang_func_defaults(const ObjFunc *f) { return f->x ? f->x->defaults : NULL; }

/* Tuples and lists: made with room for len items, to be filled in. */
ObjSeq *lang_tuple_new(size_t len);
ObjSeq *lang_list_new(size_t len);
/* Python's Ellipsis, `...`: one object, outside the GC heap. */
Value lang_ellipsis(void);
Value lang_tuple_of(int n, ...);            /* n Values */

/* The list s with item i (< s->len) set to v, and the list a + b (b a
 * tuple or list).  s and a come from AS_SEQ (current versions).  With
 * in_place (lang_updates_in_place), in O(1) amortised: s and a read as
 * before, as old versions; else by copying. */
ObjSeq *lang_list_set(ObjSeq *s, size_t i, Value v, bool in_place);
ObjSeq *lang_list_concat(ObjSeq *a, const ObjSeq *b, bool in_place);

/* Dicts (string keys).  lang_dict_set returns a new dict, with in_place
 * in O(1) amortised (d then reads as it was, as an old version), else
 * by copying; lang_dict_put changes d in place and is only for a dict
 * still being built that no program has seen. */
ObjDict *lang_dict_new(void);
bool lang_dict_get(const ObjDict *d, ObjStr *key, Value *out);
ObjDict *lang_dict_set(const ObjDict *d, ObjStr *key, Value value, bool in_place);
void lang_dict_put(ObjDict *d, ObjStr *key, Value value);
ObjDict *lang_dict_del(const ObjDict *d, ObjStr *key);   /* NULL if absent */

/* Ranges: lang_range_count is the number of elements (which can exceed
 * INT64_MAX, hence unsigned); step must not be 0. */
ObjRange *lang_range_new(int64_t start, int64_t stop, int64_t step);
uint64_t lang_range_count(const ObjRange *r);

ObjBuiltin *lang_builtin_new(const char *name, BuiltinFn fn, int min_args, int max_args);


/* Does v hold a function (a closure, builtin or bound method), itself or
 * as an item of its tuples, lists and dicts, at any depth?  Known once per
 * object (values are immutable), so asking again costs nothing: autodiff
 * transforms the functions inside a container and leaves the others. */
bool lang_holds_function(Value v);

/* The name Python's type() gives: "int", "str", "function"... */
const char *lang_type_name(Value v);

#endif
