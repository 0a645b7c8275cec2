/* types.h: the types of IR values that inference computes (ir/infer.c),
 * their lattice and their text form (docs/types.md).
 *
 * A type says what a node's value can be.  It is a lattice: `never`
 * (no value: the node raises or is not reached) is below everything,
 * `any` above everything, and ir_type_join gives the least type above
 * two (two tensors of one dtype and rank but other dims join to a
 * tensor with those dims unknown; an int and a float join to `any`).
 * Types are immutable and shared, on the GC heap.
 *
 * Closures are typed by their graph and the context they were made in
 * (an inference specialisation of the enclosing graph, opaque here), so
 * the types of what they captured are those of that context's nodes.
 * A node that may hold one of a few closures has a type listing them.
 */
#ifndef MIST_IR_TYPES_H
#define MIST_IR_TYPES_H

#include "ir/ir.h"

typedef enum {
  IT_NEVER,     /* no value */
  IT_ANY,       /* anything */
  IT_NONE,
  IT_BOOL,
  IT_INT,
  IT_FLOAT,
  IT_STR,
  IT_SLICE,     /* n 3 when start, stop and step are known: dims (IR_SLICE_NONE for None) */
  IT_UNBOUND,   /* a variable not assigned yet (check_bound raises) */
  IT_MODULE,
  IT_RANGE,     /* range(...): ints */
  IT_TENSOR,    /* dtype (-1 unknown), ndim (-1 unknown) and dims (-1 unknown) */
  IT_TUPLE,     /* n items */
  IT_LIST,      /* n items, or (n == -1) any number of items of type items[0] */
  IT_DICT,      /* n str keys and their values, in insertion order */
  IT_ENV,       /* sensitivities under n int keys (autodiff's envs), sorted */
  IT_BUILTIN,   /* one builtin or primitive (ObjBuiltin) */
  IT_CLOSURE,   /* closures of graph made in context ctx */
  IT_FNSET,     /* one of n closures (items, each IT_CLOSURE) */
} IrTypeKind;

struct InferSpec;   /* infer.c: one specialisation of a graph */

typedef struct IrType {
  IrTypeKind kind;
  bool or_none;          /* or None (T | None): a sensitivity that is zero at first */
  bool or_unbound;       /* or Unbound (T | Unbound): a variable a loop assigns */
  int n;                 /* tensor: ndim; tuple, list, dict, env, fnset: items */
  int dtype;             /* tensor: a DType, or -1 when unknown */
  bool has_val;          /* int and bool: the value is known (ival) */
  int64_t ival;
  ObjStr *sval;          /* str: the value, when known */
  int64_t *dims;         /* tensor: n dims, each -1 when unknown */
  struct IrType **items;
  ObjStr **keys;         /* dict */
  int64_t *ekeys;        /* env */
  ObjBuiltin *builtin;   /* IT_BUILTIN; bound to a first argument of type items[0] when n is 1 */
  IrGraph *graph;        /* IT_CLOSURE */
  struct InferSpec *ctx; /* IT_CLOSURE: NULL for a graph that captures nothing */
} IrType;

/* The types without parts, one object each. */
extern IrType ir_t_never, ir_t_any, ir_t_none, ir_t_bool, ir_t_int, ir_t_float, ir_t_str,
    ir_t_slice, ir_t_unbound, ir_t_module, ir_t_range;

IrType *ir_type_int_val(int64_t v);
IrType *ir_type_bool_val(bool b);
/* a tensor of dtype dt (-1: unknown) with ndim dims (-1: unknown rank) */
IrType *ir_type_tensor(int dt, int ndim, const int64_t *dims);
IrType *ir_type_tuple(int n, IrType **items);          /* items copied */
IrType *ir_type_list(int n, IrType **items);           /* n == -1: items[0] is the item type */
IrType *ir_type_dict(int n, ObjStr **keys, IrType **values);
IrType *ir_type_env(int n, const int64_t *keys, IrType **values);  /* keys ascending */
IrType *ir_type_builtin(ObjBuiltin *b);
IrType *ir_type_bound(ObjBuiltin *b, IrType *self);   /* x.name of a builtin method */
IrType *ir_type_str_val(ObjStr *s);
#define IR_SLICE_NONE INT64_MIN
IrType *ir_type_slice_val(int64_t start, int64_t stop, int64_t step);
/* How many items a known slice t takes of a sequence of len items, and
 * where it starts and how it steps; -1 when t is not known or its step
 * is 0. */
int64_t ir_type_slice_count(const IrType *t, int64_t len, int64_t *first, int64_t *step);
IrType *ir_type_closure(IrGraph *g, struct InferSpec *ctx);

/* t or None, t or Unbound, and t without them */
IrType *ir_type_or_none(const IrType *t);
IrType *ir_type_or_unbound(const IrType *t);
IrType *ir_type_strip_none(const IrType *t);
IrType *ir_type_strip_unbound(const IrType *t);

bool ir_type_eq(const IrType *a, const IrType *b);
/* The least type above a and b. */
IrType *ir_type_join(const IrType *a, const IrType *b);
bool ir_type_is_number(const IrType *t);   /* bool, int or float */

/* The type of a value (closures of graphs that capture nothing; other
 * closures, files, iterators... are `any`). */
IrType *ir_type_of_value(Value v);
/* The same, with closures that captured values typed by fn_type (depth:
 * how deep in the value f is, for fn_type's own calls). */
IrType *ir_type_of_value_with(Value v, IrType *(*fn_type)(void *ud, ObjFunc *f, int depth),
                              void *ud, int depth);
/* Whether v is one of the values of type t (closures: of t's graph). */
bool ir_type_has_value(const IrType *t, Value v);

/* ---- text form ---- */

/* Write t (docs/types.md).  A closure is written `@NAME`, NAME the
 * graph's name as graph_name gives it (graph_name NULL: the graph's
 * own), or `any` where graph_name gives NULL (a graph not printed). */
void ir_type_print(const IrType *t, StrBuf *out, const char *(*graph_name)(void *ud, IrGraph *g),
                   void *ud);
const char *ir_type_str(const IrType *t);

/* Parse one type from text[0..len): on success *used is the number of
 * bytes read and the type is returned; on failure NULL, with *err a
 * message and *used the offset of the error.  Closures `@NAME` are
 * resolved by find_graph (NULL: closures are an error); dtypes and
 * builtins `$name` through vm (builtins only when vm is not NULL). */
IrType *ir_type_parse(MistVM *vm, const char *text, size_t len, size_t *used, const char **err,
                      IrGraph *(*find_graph)(void *ud, const char *name, size_t n), void *ud);

/* The IR text form with a type on every parameter (`%x: float`), node
 * (`%1 = add(%x, 1) : float`) and return line (print.c), type_of
 * giving each node's type (NULL: any), and the reader of that form
 * (read.c): like ir_read, calling put for each type written (types
 * without `@` closures of graphs not in the text).  ir_read accepts the
 * typed form too and drops the types. */
void ir_print_unit_typed(MistVM *vm, IrUnit *u, StrBuf *out,
                         IrType *(*type_of)(void *ud, const IrNode *n), void *ud);
IrUnit *ir_read_typed(MistVM *vm, const char *name, const char *text, size_t len,
                      void (*put)(void *ud, IrNode *n, IrType *t), void *ud);

#endif
