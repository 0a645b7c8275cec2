/* test_updates.c: value semantics of updates on random programs, through
 * the public API (include/mist.h).
 *
 * Lists, dicts and big tensors update in place through versions
 * (lang/value.c, lang/tensor.c): an update must never be visible through
 * any other holder of the old value.  A seeded generator writes programs
 * that do little else than alias, update and print: lists (flat, and a
 * list of lists updated as n[i][j] = c), dicts, f64 tensors of 300
 * elements (one element, a slice, a slice copied from a view), aliases
 * `a = b`, updates through helper functions (one that returns the
 * updated argument, one that updates a copy and returns the argument
 * unchanged, one with a loop), values captured by closures and tuples,
 * views taken before later updates, growth by `xs + [v]` and `+=`, and
 * `for` loops repeating a block of such statements (loop-carried
 * versions).  All of it runs inside a function, where the interpreter's
 * frames and loops are.
 *
 * The independent truth is a model here in C that copies on every
 * update: each program is also run on the model, which prints what
 * Python would print for values that never alias; the outputs must be
 * equal byte for byte.
 *
 * A second generator writes functions of a float x that build lists and
 * tensors from x through the same kinds of updates and aliases, and
 * return a sum over every value, old and new: grad, and grad of grad,
 * are checked against central differences in Mist, jvp against grad and
 * jvp of grad (forward over reverse) against grad of grad.
 *
 * MIST_UPD_PROGRAMS (default 600), MIST_UPD_SEED (default 1) and
 * MIST_UPD_DUMP=1 in the environment as in test_autodiff.c.
 */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mist.h"

#include "adgen.h"   /* adgen_printf */
#include "capture.h"

static MistVM *vm;
static Buf out;

static void setup(void) { vm = capture_vm_new(&out); }

static void teardown(void) {
  capture_vm_free(vm, &out);
  vm = NULL;
}

/* Run src; it must succeed.  `context` (the program src belongs to, or
 * "") goes into the failure message. */
static const char *run_in(const char *context, const char *src) {
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", src, false);
  ck_assert_msg(s == MIST_OK, "failed (status %d):\n%s%s\n--- error:\n%s", (int)s, context, src, mist_error(vm));
  return out.data;
}

static const char *run(const char *src) { return run_in("", src); }

static long env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  return s && *s ? strtol(s, NULL, 10) : dflt;
}

typedef struct Rng {
  uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r) {   /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int rnd(Rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }
static int rnd_in(Rng *r, int lo, int hi) { return lo + rnd(r, hi - lo + 1); }

/* ---- the model: values that are copied on every update ---- */

typedef enum { M_INT, M_LIST, M_DICT, M_TENSOR } MKind;

#define TLEN 300
#define NKEYS 8

typedef struct MVal {
  MKind kind;
  int n;                   /* items of a list, entries of a dict, elements of a tensor */
  int64_t i;
  struct MVal **items;
  int keys[NKEYS];         /* dict: key numbers (letters) in insertion order */
  int64_t vals[NKEYS];
  double *t;
  struct MVal *next;       /* every value made, to free them */
} MVal;

static MVal *made;

static MVal *mval(MKind k, int n) {
  MVal *v = calloc(1, sizeof *v);
  v->kind = k;
  v->n = n;
  if (k == M_LIST) v->items = calloc((size_t)n + 1, sizeof *v->items);
  if (k == M_TENSOR) v->t = calloc((size_t)n + 1, sizeof *v->t);
  v->next = made;
  made = v;
  return v;
}

static void free_all(void) {
  while (made) {
    MVal *n = made->next;
    free(made->items);
    free(made->t);
    free(made);
    made = n;
  }
}

static MVal *mint(int64_t i) {
  MVal *v = mval(M_INT, 0);
  v->i = i;
  return v;
}

static MVal *mcopy(const MVal *v, int extra) {
  MVal *c = mval(v->kind, v->n + extra);
  c->n = v->n;
  c->i = v->i;
  if (v->kind == M_LIST) memcpy(c->items, v->items, sizeof *c->items * (size_t)v->n);
  if (v->kind == M_TENSOR) memcpy(c->t, v->t, sizeof *c->t * (size_t)v->n);
  memcpy(c->keys, v->keys, sizeof c->keys);
  memcpy(c->vals, v->vals, sizeof c->vals);
  return c;
}

static int64_t pymod(int64_t a, int64_t n) { return ((a % n) + n) % n; }

static void mprint(const MVal *v, Buf *b) {
  switch (v->kind) {
  case M_INT: adgen_printf(b, "%" PRId64, v->i); break;
  case M_LIST:
    buf_add(b, "[", 1);
    for (int k = 0; k < v->n; k++) {
      if (k) buf_add(b, ", ", 2);
      mprint(v->items[k], b);
    }
    buf_add(b, "]", 1);
    break;
  case M_DICT:
    buf_add(b, "{", 1);
    for (int k = 0; k < v->n; k++) adgen_printf(b, "%s'%c': %" PRId64, k ? ", " : "", 'a' + v->keys[k], v->vals[k]);
    buf_add(b, "}", 1);
    break;
  case M_TENSOR: ck_abort_msg("tensors are printed through their sum and elements"); break;
  }
}

static double msum(const MVal *t) {
  double s = 0;
  for (int k = 0; k < t->n; k++) s += t->t[k];
  return s;
}

static void pfloat(Buf *b, double x) { adgen_printf(b, "%.1f", x); }   /* integers in floats, as Python prints them */

/* ---- programs: statements over named variables ---- */

/* Variables: L0..L2 flat int lists, N a list of two lists, D0 D1 dicts,
 * T0 T1 tensors, V a view of five elements, F a closure, P a tuple. */
enum { V_L0, V_L1, V_L2, V_N, V_D0, V_D1, V_T0, V_T1, V_V, V_F, V_P, NVARS };
static const char *NAMES[NVARS] = {"l0", "l1", "l2", "n", "d0", "d1", "t0", "t1", "v", "f", "p"};

typedef enum {
  S_ALIAS,        /* x = y (same kind) */
  S_LSET,         /* lx[i % len(lx)] = c */
  S_LGROW,        /* lx = lx + [c, c2] */
  S_LAUG,         /* lx += [c] */
  S_LSETF,        /* lx = setl(ly, i, c) */
  S_LKEEP,        /* lx = keepl(ly, i, c): returns ly unchanged */
  S_LLOOP,        /* lx = loopset(ly, k, c) */
  S_LFOR,         /* for e in lx[0:3]: ly = ly + [e] */
  S_NMAKE,        /* n = [lx, ly] */
  S_NSET,         /* n[i][j % len(n[i])] = c */
  S_NGET,         /* lx = n[i] */
  S_DSET,         /* dx['k'] = c */
  S_DSETF,        /* dx = setd(dy, 'k', c) */
  S_TSET,         /* tx[i] = c */
  S_TSLICE,       /* tx[a:b] = c */
  S_TSETF,        /* tx = sett(ty, i, c) */
  S_VIEW,         /* v = tx[a:a + 5] */
  S_TFROMV,       /* tx[a:a + 5] = v */
  S_CLOSE,        /* f = lambda: x (any variable but f and p) */
  S_TUPLE,        /* p = (lx, dy, tz) */
  S_PRINT,        /* print one variable */
  S_LOOP,         /* for r in range(reps): block */
  NSTMTS
} SKind;

typedef struct Stmt {
  SKind kind;
  int x, y, z;
  int64_t i, j, c, c2;
  int a, b;
  struct Stmt *body;
  int nbody;
} Stmt;

static int list_var(Rng *r) { return V_L0 + rnd(r, 3); }
static int dict_var(Rng *r) { return V_D0 + rnd(r, 2); }
static int tensor_var(Rng *r) { return V_T0 + rnd(r, 2); }

static void gen_stmt(Rng *r, Stmt *s, int depth) {
  memset(s, 0, sizeof *s);
  s->kind = (SKind)rnd(r, NSTMTS);
  if (s->kind == S_LOOP && depth > 0) s->kind = S_PRINT;
  s->i = rnd_in(r, -40, 40);
  s->j = rnd_in(r, -40, 40);
  s->c = rnd_in(r, -50, 50);
  s->c2 = rnd_in(r, -50, 50);
  s->a = rnd(r, TLEN - 5);
  s->b = rnd(r, TLEN + 1);
  switch (s->kind) {
  case S_ALIAS: {
    int k = rnd(r, 3);
    if (k == 0) { s->x = list_var(r); s->y = list_var(r); }
    else if (k == 1) { s->x = dict_var(r); s->y = dict_var(r); }
    else { s->x = tensor_var(r); s->y = tensor_var(r); }
    break;
  }
  case S_LSET: case S_LGROW: case S_LAUG: case S_LSETF: case S_LKEEP: case S_LLOOP: case S_LFOR: case S_NMAKE:
  case S_NGET:
    s->x = list_var(r);
    s->y = list_var(r);
    s->i = s->kind == S_LLOOP ? rnd_in(r, 1, 6) : s->kind == S_NGET ? rnd(r, 2) : s->i;
    break;
  case S_NSET: s->i = rnd(r, 2); break;
  case S_DSET: case S_DSETF: s->x = dict_var(r); s->y = dict_var(r); s->i = rnd(r, NKEYS); break;
  case S_TSET: case S_TSLICE: case S_TSETF: case S_VIEW: case S_TFROMV:
    s->x = tensor_var(r);
    s->y = tensor_var(r);
    s->i = rnd_in(r, -TLEN, TLEN - 1);
    break;
  case S_CLOSE: s->x = rnd(r, V_V + 1); break;
  case S_TUPLE: s->x = list_var(r); s->y = dict_var(r); s->z = tensor_var(r); break;
  case S_PRINT: s->x = rnd(r, NVARS); break;
  case S_LOOP:
    s->i = rnd_in(r, 1, 3);
    s->nbody = rnd_in(r, 1, 5);
    s->body = calloc((size_t)s->nbody, sizeof *s->body);
    for (int k = 0; k < s->nbody; k++) gen_stmt(r, &s->body[k], depth + 1);
    break;
  default: break;
  }
}

static void free_stmts(Stmt *s, int n) {
  for (int k = 0; k < n; k++)
    if (s[k].body) {
      free_stmts(s[k].body, s[k].nbody);
      free(s[k].body);
    }
}

static void indent(Buf *b, int depth) {
  for (int k = 0; k < depth + 1; k++) buf_add(b, "    ", 4);
}

static void write_print(Buf *b, int x, int depth, const char *fkind) {
  indent(b, depth);
  const char *nm = NAMES[x];
  if (x == V_T0 || x == V_T1) adgen_printf(b, "print(%s.sum().item(), %s[7].item(), %s[-1].item())\n", nm, nm, nm);
  else if (x == V_V) adgen_printf(b, "print(v.tolist())\n");
  else if (x == V_P) adgen_printf(b, "print(p[0], p[1], p[2].sum().item())\n");
  else if (x == V_F && strcmp(fkind, "tensor") == 0) adgen_printf(b, "print(f().sum().item())\n");
  else if (x == V_F) adgen_printf(b, "print(f())\n");
  else adgen_printf(b, "print(%s)\n", nm);
}

/* The closure f's kind decides how it prints; the generator knows it
 * from the last S_CLOSE written (a loop body's f may differ per turn
 * only when two S_CLOSE of different kinds sit in one loop: the model
 * and the program then agree turn by turn, so the text is chosen from
 * the kind at run time, `type(f())`). */
static void write_stmt(const Stmt *s, Buf *b, int depth) {
  const char *x = NAMES[s->x], *y = NAMES[s->y], *z = NAMES[s->z];
  if (s->kind != S_LOOP && s->kind != S_PRINT) indent(b, depth);
  switch (s->kind) {
  case S_ALIAS: adgen_printf(b, "%s = %s\n", x, y); break;
  case S_LSET: adgen_printf(b, "%s[%" PRId64 " %% len(%s)] = %" PRId64 "\n", x, s->i, x, s->c); break;
  case S_LGROW: adgen_printf(b, "%s = %s + [%" PRId64 ", %" PRId64 "]\n", x, x, s->c, s->c2); break;
  case S_LAUG: adgen_printf(b, "%s += [%" PRId64 "]\n", x, s->c); break;
  case S_LSETF: adgen_printf(b, "%s = setl(%s, %" PRId64 ", %" PRId64 ")\n", x, y, s->i, s->c); break;
  case S_LKEEP: adgen_printf(b, "%s = keepl(%s, %" PRId64 ", %" PRId64 ")\n", x, y, s->i, s->c); break;
  case S_LLOOP: adgen_printf(b, "%s = loopset(%s, %" PRId64 ", %" PRId64 ")\n", x, y, s->i, s->c); break;
  case S_LFOR:
    adgen_printf(b, "for e in %s[0:3]:\n", x);
    indent(b, depth + 1);
    adgen_printf(b, "%s = %s + [e]\n", y, y);
    break;
  case S_NMAKE: adgen_printf(b, "n = [%s, %s]\n", x, y); break;
  case S_NSET: adgen_printf(b, "n[%" PRId64 "][%" PRId64 " %% len(n[%" PRId64 "])] = %" PRId64 "\n", s->i, s->j, s->i, s->c); break;
  case S_NGET: adgen_printf(b, "%s = n[%" PRId64 "]\n", x, s->i); break;
  case S_DSET: adgen_printf(b, "%s['%c'] = %" PRId64 "\n", x, (char)('a' + s->i), s->c); break;
  case S_DSETF: adgen_printf(b, "%s = setd(%s, '%c', %" PRId64 ")\n", x, y, (char)('a' + s->i), s->c); break;
  case S_TSET: adgen_printf(b, "%s[%" PRId64 "] = %" PRId64 ".0\n", x, s->i, s->c); break;
  case S_TSLICE: adgen_printf(b, "%s[%d:%d] = %" PRId64 ".0\n", x, s->a, s->b, s->c); break;
  case S_TSETF: adgen_printf(b, "%s = sett(%s, %" PRId64 ", %" PRId64 ".0)\n", x, y, s->i, s->c); break;
  case S_VIEW: adgen_printf(b, "v = %s[%d:%d]\n", x, s->a, s->a + 5); break;
  case S_TFROMV: adgen_printf(b, "%s[%d:%d] = v\n", x, s->a, s->a + 5); break;
  case S_CLOSE: adgen_printf(b, "f = lambda: %s\n", x); break;
  case S_TUPLE: adgen_printf(b, "p = (%s, %s, %s)\n", x, y, z); break;
  case S_PRINT:
    if (s->x == V_F) {
      indent(b, depth);
      adgen_printf(b, "if type(f()) == 'tensor':\n");
      write_print(b, V_F, depth + 1, "tensor");
      indent(b, depth);
      adgen_printf(b, "else:\n");
      write_print(b, V_F, depth + 1, "");
    } else {
      write_print(b, s->x, depth, "");
    }
    break;
  case S_LOOP:
    indent(b, depth);
    adgen_printf(b, "for r in range(%" PRId64 "):\n", s->i);
    for (int k = 0; k < s->nbody; k++) write_stmt(&s->body[k], b, depth + 1);
    break;
  default: break;
  }
}

static const char *PRELUDE =
    "def setl(xs, i, c):\n"
    "    xs[i % len(xs)] = c\n"
    "    return xs\n"
    "\n"
    "def keepl(xs, i, c):\n"
    "    ys = xs\n"
    "    ys[i % len(ys)] = c\n"
    "    return xs\n"
    "\n"
    "def loopset(xs, k, c):\n"
    "    for i in range(k):\n"
    "        xs[i % len(xs)] = c + i\n"
    "    return xs\n"
    "\n"
    "def setd(d, k, c):\n"
    "    d[k] = c\n"
    "    return d\n"
    "\n"
    "def sett(t, i, c):\n"
    "    t[i] = c\n"
    "    return t\n";

/* The variables' first values, written and modelled alike. */
static const char *INIT =
    "    l0 = [0, 1, 2]\n"
    "    l1 = [10, 11, 12, 13]\n"
    "    l2 = [20]\n"
    "    n = [l0, l1]\n"
    "    d0 = {'a': 1}\n"
    "    d1 = {}\n"
    "    t0 = zeros(300, dtype='f64')\n"
    "    t1 = arange(300, dtype='f64')\n"
    "    v = t1[0:5]\n"
    "    f = lambda: l0\n"
    "    p = (l0, d0, t0)\n";

typedef struct Env {
  MVal *v[NVARS];
  MVal *p[3];
} Env;

static void init_env(Env *e) {
  static const int lens[3] = {3, 4, 1}, starts[3] = {0, 10, 20};
  for (int k = 0; k < 3; k++) {
    MVal *l = mval(M_LIST, lens[k]);
    for (int q = 0; q < lens[k]; q++) l->items[q] = mint(starts[k] + q);
    e->v[V_L0 + k] = l;
  }
  e->v[V_N] = mval(M_LIST, 2);
  e->v[V_N]->items[0] = e->v[V_L0];
  e->v[V_N]->items[1] = e->v[V_L1];
  e->v[V_D0] = mval(M_DICT, 1);
  e->v[V_D0]->keys[0] = 0;
  e->v[V_D0]->vals[0] = 1;
  e->v[V_D1] = mval(M_DICT, 0);
  e->v[V_T0] = mval(M_TENSOR, TLEN);
  e->v[V_T1] = mval(M_TENSOR, TLEN);
  for (int q = 0; q < TLEN; q++) e->v[V_T1]->t[q] = q;
  e->v[V_V] = mval(M_TENSOR, 5);
  for (int q = 0; q < 5; q++) e->v[V_V]->t[q] = q;
  e->v[V_F] = e->v[V_L0];
  e->p[0] = e->v[V_L0];
  e->p[1] = e->v[V_D0];
  e->p[2] = e->v[V_T0];
}

static MVal *lset(const MVal *l, int64_t i, MVal *x) {
  MVal *c = mcopy(l, 0);
  c->items[pymod(i, l->n)] = x;
  return c;
}

static MVal *lappend(const MVal *l, MVal *x) {
  MVal *c = mcopy(l, 1);
  c->items[c->n++] = x;
  return c;
}

static MVal *dset(const MVal *d, int k, int64_t x) {
  MVal *c = mcopy(d, 0);
  for (int q = 0; q < c->n; q++)
    if (c->keys[q] == k) {
      c->vals[q] = x;
      return c;
    }
  c->keys[c->n] = k;
  c->vals[c->n++] = x;
  return c;
}

static MVal *tset(const MVal *t, int64_t i, double x) {
  MVal *c = mcopy(t, 0);
  c->t[i < 0 ? i + t->n : i] = x;
  return c;
}

static void exec_print(Env *e, int x, Buf *b) {
  MVal *v = e->v[x];
  if (x == V_T0 || x == V_T1 || (x == V_F && v->kind == M_TENSOR)) {
    pfloat(b, msum(v));
    if (x != V_F) {
      buf_add(b, " ", 1);
      pfloat(b, v->t[7]);
      buf_add(b, " ", 1);
      pfloat(b, v->t[v->n - 1]);
    }
  } else if (x == V_V) {
    buf_add(b, "[", 1);
    for (int q = 0; q < 5; q++) {
      if (q) buf_add(b, ", ", 2);
      pfloat(b, v->t[q]);
    }
    buf_add(b, "]", 1);
  } else if (x == V_P) {
    mprint(e->p[0], b);
    buf_add(b, " ", 1);
    mprint(e->p[1], b);
    buf_add(b, " ", 1);
    pfloat(b, msum(e->p[2]));
  } else {
    mprint(v, b);
  }
  buf_add(b, "\n", 1);
}

static void exec_stmt(Env *e, const Stmt *s, Buf *b) {
  MVal **V = e->v;
  switch (s->kind) {
  case S_ALIAS: V[s->x] = V[s->y]; break;
  case S_LSET: V[s->x] = lset(V[s->x], s->i, mint(s->c)); break;
  case S_LGROW: V[s->x] = lappend(lappend(V[s->x], mint(s->c)), mint(s->c2)); break;
  case S_LAUG: V[s->x] = lappend(V[s->x], mint(s->c)); break;
  case S_LSETF: V[s->x] = lset(V[s->y], s->i, mint(s->c)); break;
  case S_LKEEP: V[s->x] = V[s->y]; break;
  case S_LLOOP: {
    MVal *l = V[s->y];
    for (int64_t q = 0; q < s->i; q++) l = lset(l, q, mint(s->c + q));
    V[s->x] = l;
    break;
  }
  case S_LFOR: {
    MVal *src = V[s->x];
    int k = src->n < 3 ? src->n : 3;
    for (int q = 0; q < k; q++) V[s->y] = lappend(V[s->y], src->items[q]);
    break;
  }
  case S_NMAKE:
    V[V_N] = mval(M_LIST, 2);
    V[V_N]->items[0] = V[s->x];
    V[V_N]->items[1] = V[s->y];
    break;
  case S_NSET: {
    MVal *inner = V[V_N]->items[s->i];
    V[V_N] = lset(V[V_N], s->i, lset(inner, s->j, mint(s->c)));
    break;
  }
  case S_NGET: V[s->x] = V[V_N]->items[s->i]; break;
  case S_DSET: V[s->x] = dset(V[s->x], (int)s->i, s->c); break;
  case S_DSETF: V[s->x] = dset(V[s->y], (int)s->i, s->c); break;
  case S_TSET: V[s->x] = tset(V[s->x], s->i, (double)s->c); break;
  case S_TSLICE: {
    MVal *c = mcopy(V[s->x], 0);
    for (int q = s->a; q < s->b; q++) c->t[q] = (double)s->c;
    V[s->x] = c;
    break;
  }
  case S_TSETF: V[s->x] = tset(V[s->y], s->i, (double)s->c); break;
  case S_VIEW: {
    MVal *v = mval(M_TENSOR, 5);
    memcpy(v->t, V[s->x]->t + s->a, 5 * sizeof(double));
    V[V_V] = v;
    break;
  }
  case S_TFROMV: {
    MVal *c = mcopy(V[s->x], 0);
    memcpy(c->t + s->a, V[V_V]->t, 5 * sizeof(double));
    V[s->x] = c;
    break;
  }
  case S_CLOSE: V[V_F] = V[s->x]; break;
  case S_TUPLE:
    e->p[0] = V[s->x];
    e->p[1] = V[s->y];
    e->p[2] = V[s->z];
    break;
  case S_PRINT: exec_print(e, s->x, b); break;
  case S_LOOP:
    for (int64_t r = 0; r < s->i; r++)
      for (int k = 0; k < s->nbody; k++) exec_stmt(e, &s->body[k], b);
    break;
  default: break;
  }
}

/* Program number `seed`: its text into prog, the model's output into want. */
static void program(uint64_t seed, Buf *prog, Buf *want) {
  Rng r = {seed};
  int n = rnd_in(&r, 10, 40);
  Stmt *ss = calloc((size_t)n, sizeof *ss);
  for (int k = 0; k < n; k++) gen_stmt(&r, &ss[k], 0);
  buf_clear(prog);
  buf_clear(want);
  adgen_printf(prog, "def main():\n%s", INIT);
  for (int k = 0; k < n; k++) write_stmt(&ss[k], prog, 0);
  for (int x = 0; x < NVARS; x++) {
    Stmt p = {.kind = S_PRINT, .x = x};
    write_stmt(&p, prog, 0);
  }
  adgen_printf(prog, "main()\n");
  Env e;
  init_env(&e);
  for (int k = 0; k < n; k++) exec_stmt(&e, &ss[k], want);
  for (int x = 0; x < NVARS; x++) exec_print(&e, x, want);
  free_stmts(ss, n);
  free(ss);
  free_all();
}

enum { BATCHES = 6 };

START_TEST(t_random_values) {
  long total = env_long("MIST_UPD_PROGRAMS", 600);
  long seed0 = env_long("MIST_UPD_SEED", 1);
  bool dump = env_long("MIST_UPD_DUMP", 0) != 0;
  long per = (total + BATCHES - 1) / BATCHES;
  run(PRELUDE);
  Buf prog = {0}, want = {0};
  for (long p = _i * per; p < (_i + 1) * per && p < total; p++) {
    uint64_t seed = (uint64_t)(seed0 * 1000003L + p);
    program(seed, &prog, &want);
    const char *got = run(prog.data);
    if (dump) fprintf(stderr, "# program %ld (seed %" PRIu64 ")\n%s--> %s", p, seed, prog.data, got);
    ck_assert_msg(strcmp(got, want.data) == 0, "program %ld (seed %" PRIu64 "):\n%s\n--> %s\nexpected:\n%s", p,
                  seed, prog.data, got, want.data);
  }
  free(prog.data);
  free(want.data);
}
END_TEST

/* The generator writes every kind of statement, and is deterministic. */
START_TEST(t_values_generator_covers) {
  Buf b = {0}, w = {0}, all = {0};
  buf_clear(&all);
  for (uint64_t s = 1; s <= 100; s++) {
    program(s, &b, &w);
    buf_add(&all, b.data, b.len);
  }
  static const char *want[] = {"setl(", "keepl(", "loopset(", "setd(", "sett(", "for r in range(", "for e in ",
                               "+= [", "n = [", "] = v", "v = t", "f = lambda", "p = (", "[0:3]", "['"};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
    ck_assert_msg(strstr(all.data, want[k]), "no generated program contains \"%s\"", want[k]);
  Buf again = {0}, w2 = {0};
  program(77, &b, &w);
  program(77, &again, &w2);
  ck_assert_str_eq(b.data, again.data);
  ck_assert_str_eq(w.data, w2.data);
  free(b.data);
  free(w.data);
  free(again.data);
  free(w2.data);
  free(all.data);
}
END_TEST

/* ---- gradients through updates ---- */

static const char *GRAD_CHECK =
    "def _near(a, b):\n"
    "    return abs(a - b) <= 1e-4 * max(1.0, abs(a), abs(b))\n"
    "\n"
    "def _num(f, x, h):\n"
    "    return (f(x + h) - f(x - h)) / (2.0 * h)\n"
    "\n"
    "def _check(f, x):\n"
    "    g = grad(f)(x)\n"
    "    num = _num(f, x, 1e-6)\n"
    "    if not _near(g, num):\n"
    "        return f'FAIL grad {g} but central differences {num}'\n"
    "    t = jvp(f, (x,), (1.0,))[1]\n"
    "    if not _near(t, g):\n"
    "        return f'FAIL jvp {t} but grad {g}'\n"
    "    gg = grad(grad(f))(x)\n"
    "    num2 = _num(grad(f), x, 1e-5)\n"
    "    if not _near(gg, num2):\n"
    "        return f'FAIL second derivative {gg} but central differences of grad {num2}'\n"
    "    fr = jvp(grad(f), (x,), (1.0,))[1]\n"
    "    if not _near(fr, gg):\n"
    "        return f'FAIL jvp of grad {fr} but grad of grad {gg}'\n"
    "    return 'ok'\n";

/* def f(x): float lists a b (a list of three, b of two) and a tensor t of
 * 600 f64 elements, updated from x and from each other, aliased, grown,
 * in loops, and read from tuples of 60 or 90 items (large enough for
 * sensitivities made of parts, ir/prims.c); the result sums every value
 * made, old versions included. */
static void grad_program(uint64_t seed, Buf *b) {
  Rng r = {seed};
  buf_clear(b);
  adgen_printf(b, "def f(x):\n"
             "    a = [x, 1.0, x * 0.5]\n"
             "    b = [0.5, x]\n"
             "    t = arange(600, dtype='f64') * 0.0 + 1.0\n"
             "    kept = []\n"
             "    acc = 0.0\n");
  int n = rnd_in(&r, 4, 12);
  bool tensors = rnd(&r, 2);   /* else lists only */
  static const int list_cases[] = {0, 1, 2, 3, 8, 9};
  for (int k = 0; k < n; k++) {
    bool loop = rnd(&r, 4) == 0;
    const char *in = loop ? "        " : "    ";
    if (loop) adgen_printf(b, "    for i in range(%d):\n", rnd_in(&r, 1, 3));
    int m = loop ? rnd_in(&r, 1, 3) : 1;
    for (int q = 0; q < m; q++) {
      const char *l = rnd(&r, 2) ? "a" : "b", *o = rnd(&r, 2) ? "a" : "b";
      int i = rnd_in(&r, -2, 1), j = rnd_in(&r, -2, 1), ti = rnd(&r, 600), tj = rnd(&r, 600), ta = rnd(&r, 590);
      switch (tensors ? rnd(&r, 10) : list_cases[rnd(&r, 6)]) {
      case 0: adgen_printf(b, "%s%s[%d] = %s[%d] * x * 0.5 + 0.25\n", in, l, i, o, j); break;
      case 1: adgen_printf(b, "%s%s = %s\n", in, l, o); break;
      case 2: adgen_printf(b, "%skept = kept + [%s]\n", in, l); break;
      case 3: adgen_printf(b, "%s%s = %s[0:2] + [%s[%d] * x]\n", in, l, l, o, j); break;
      case 4: adgen_printf(b, "%st[%d] = t[%d] * x + %s[%d]\n", in, ti, tj, l, i); break;
      case 5: adgen_printf(b, "%st[%d:%d] = t[%d:%d] * x * 0.5\n", in, ta, ta + 10, tj < 590 ? tj : 0, (tj < 590 ? tj : 0) + 10); break;
      case 6: adgen_printf(b, "%sacc += t.sum().item() * 0.001 + %s[%d]\n", in, l, i); break;
      case 7: adgen_printf(b, "%sold = t\n%st[%d] = x * x\n%sacc += old[%d].item()\n", in, in, ti, in, ti); break;
      case 9: adgen_printf(b, "%sacc += tuple(%s * 30)[%d] * x\n", in, l, rnd(&r, 60)); break;
      default: adgen_printf(b, "%s%s[%d] = x\n", in, l, i); break;
      }
    }
  }
  adgen_printf(b, "    for k in kept:\n"
             "        acc += sum(k)\n"
             "    return acc + sum(a) + sum(b) + t.sum().item() * 0.01\n");
}

START_TEST(t_random_grads) {
  long total = env_long("MIST_UPD_PROGRAMS", 600) / 4;
  long seed0 = env_long("MIST_UPD_SEED", 1);
  bool dump = env_long("MIST_UPD_DUMP", 0) != 0;
  run(GRAD_CHECK);
  Buf prog = {0};
  for (long p = 0; p < total; p++) {
    uint64_t seed = (uint64_t)(seed0 * 7919L + p);
    grad_program(seed, &prog);
    run(prog.data);
    double x = 0.6 + 0.1 * (double)(p % 5);
    char call[64];
    snprintf(call, sizeof call, "print(_check(f, %.1f))\n", x);
    const char *got = run_in(prog.data, call);
    if (dump) fprintf(stderr, "# grad program %ld (seed %" PRIu64 ")\n%s%s--> %s", p, seed, prog.data, call, got);
    ck_assert_msg(strcmp(got, "ok\n") == 0, "grad program %ld (seed %" PRIu64 "):\n%s%s--> %s", p, seed, prog.data,
                  call, got);
  }
  free(prog.data);
}
END_TEST

static Suite *updates_suite(void) {
  Suite *s = suite_create("updates");
  TCase *tc = tcase_create("values");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, t_values_generator_covers);
  tcase_add_loop_test(tc, t_random_values, 0, BATCHES);
  suite_add_tcase(s, tc);
  tc = tcase_create("grads");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, t_random_grads);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(updates_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
