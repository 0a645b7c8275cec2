/* adgen.c: a seeded generator of random Mist programs, for checking
 * derivatives against an independent truth (test_autodiff.c,
 * test_ad_nested.c).
 *
 * A program is a few helpers and a function f of one to three float
 * parameters built from + - * / and unary minus, constants, `if`/`elif`/
 * `else` and conditional expressions on comparisons of intermediate
 * values, `for range` and `while` loops with small trip counts (with
 * `break` and `continue`), closures capturing intermediate values and
 * applied later (also through a higher-order helper), tuples built and
 * unpacked, calls of helpers, and a recursive helper with a depth
 * argument.  Divisions are by 1 + v*v and loops squash their carried
 * value, so nothing divides by zero or overflows.
 *
 * Options add the cases that no earlier generator produced, each of which
 * once hid a wrong or failing derivative:
 *  - containers: lists and tuples of floats indexed by constant, negative
 *    and computed indices (a loop counter), updated (xs[i] = v), iterated
 *    and summed; lists, tuples and dicts of functions (closures, helpers,
 *    builtins, lambdas) made in f or at the top level, indexed and called;
 *    list and dict comprehensions;
 *  - modules: functions of _adgen_lib.ms called, passed as values and
 *    kept in containers;
 *  - methods: method calls and keyword calls (tensor(..., dtype=),
 *    .sum(), .item(), dict.get, a module's function with a keyword);
 *  - inner: derivative calls inside f, nested up to that depth: grad of
 *    a lambda over the values in scope, of a closure or helper,
 *    value_and_grad, grad with argnums, jvp (of one argument or two),
 *    vjp, hessian.  With check
 *    set, each is written _cmp(c, c1, c2, c3) with its numeric twins (grad
 *    written _ngrad, _mgrad and _ograd: central differences of two steps
 *    and a one-sided one, in the checker's prelude), so that each inner
 *    derivative is checked when f runs;
 *  - extras: what none of the above writes (extra_expr, extra_statement),
 *    max and min of several floats, items of concatenations, filter, zip
 *    and map of three sequences, key=, default= and reverse=.
 */
#include "adgen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* (not ck_assert, which needs a running test: MIST_AD_SHOW prints a
 * program outside one) */
static void need(bool ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "adgen: %s\n", what);
    abort();
  }
}

void adgen_printf(Buf *b, const char *fmt, ...) {
  char tmp[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  need(n < (int)sizeof tmp, "a line too long");
  buf_add(b, tmp, (size_t)n);
}

typedef struct Rng {
  uint64_t s;
} Rng;

/* splitmix64: deterministic on every platform */
static uint64_t rng_next(Rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int rnd(Rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

static double rnd_unit(Rng *r) { return (double)(rng_next(r) >> 11) / 9007199254740992.0; }

enum { MAXV = 64, MAXC = 8, MAXT = 8, MAXH = 3, MAXF = 6, NAME = 24 };

/* a container of three functions of one float: a list, a tuple or a dict
 * with keys "a", "b", "c" */
typedef struct FCont {
  char name[NAME];
  int kind;   /* 0 list, 1 tuple, 2 dict */
} FCont;

typedef struct Gen {
  Rng rng;
  Buf *b;
  const AdGenOpts *o;
  int indent;
  /* float variables in scope */
  char vars[MAXV][NAME];
  int nvars;
  /* closures of one argument, sequences of three floats, helpers */
  char clos[MAXC][NAME];
  int nclos;
  char tups[MAXT][NAME];
  bool tup_list[MAXT];
  int ntups;
  FCont fconts[MAXF];
  int nfconts;
  int helper_arity[MAXH];
  int nhelpers;
  bool has_rec;
  const char *loopvar;   /* an int loop counter usable in expressions, or NULL */
  int inner_left;        /* how many more derivative calls may nest here */
  const char *twin;      /* the prefix of the numeric twins being written, or NULL */
  bool plain;            /* writing real calls in a twin: no _cmp, no twins */
  /* the next inner_call differentiates this function value, by this
   * case of inner_call1 (NULL, -1: its own choice) */
  const char *fn_first;
  int force_case;
  int fresh;
  /* strings made by ex(), freed with the program */
  char **arena;
  int narena, caparena;
} Gen;

static void line(Gen *g, const char *fmt, ...) {
  char tmp[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  need(n < (int)sizeof tmp, "a line too long");
  for (int i = 0; i < g->indent; i++) buf_add(g->b, "    ", 4);
  buf_add(g->b, tmp, (size_t)n);
  buf_add(g->b, "\n", 1);
}

static const char *CONSTS[] = {"0.5", "1.5", "2.0", "0.25", "(-0.75)", "(-1.25)", "3.0", "0.1"};

/* the name of a derivative builtin, or of its numeric twin */
static const char *dname(Gen *g, const char *name) {
  if (!g->twin) return name;
  static char twin[4][NAME];
  static int next;
  char *t = twin[next++ % 4];
  snprintf(t, NAME, "%s%s", g->twin, name);
  return t;
}

static const char *fresh_name(Gen *g, const char *prefix) {
  static char names[4][NAME];
  static int next;
  char *n = names[next++ % 4];
  snprintf(n, NAME, "%s%d", prefix, g->fresh++);
  return n;
}

static void push_var(Gen *g, const char *name) {
  if (g->nvars < MAXV) snprintf(g->vars[g->nvars++], NAME, "%.23s", name);
}

static void expr(Gen *g, Buf *b, int depth);

/* a function of one float, as text: a closure, a helper, a module's
 * function, a builtin, or an element of a container of functions */
static void fn_value(Gen *g, Buf *b) {
  Rng *r = &g->rng;
  for (;;) {
    /* closures made in f most often: one called in f and passed to a
     * derivative as well is where the optimiser's sharing of what they
     * compute with f's own code has to keep the sensitivities whole */
    switch (rnd(r, 7)) {
    case 0: case 5: case 6:
      if (g->nclos) {
        adgen_printf(b, "%s", g->clos[rnd(r, g->nclos)]);
        return;
      }
      break;
    case 1:
      for (int h = 0; h < g->nhelpers; h++)
        if (g->helper_arity[h] == 1) {
          adgen_printf(b, "h%d", h);
          return;
        }
      break;
    case 2:
      if (g->o->modules) {
        adgen_printf(b, rnd(r, 2) ? "L.sq" : "L.smooth");
        return;
      }
      break;
    case 3:
      adgen_printf(b, rnd(r, 2) ? "tanh" : "sin");
      return;
    default:
      adgen_printf(b, "half");
      return;
    }
  }
}

/* an index into a sequence of three: constant, negative or computed */
static void index3(Gen *g, Buf *b) {
  Rng *r = &g->rng;
  int k = rnd(r, 4);
  if (k == 0 && g->loopvar) adgen_printf(b, "%s %% 3", g->loopvar);
  else if (k == 1) adgen_printf(b, "%d", -1 - rnd(r, 3));
  else adgen_printf(b, "%d", rnd(r, 3));
}

static void inner_call1(Gen *g, Buf *b, int depth);

/* fmt into b, each @ an expression of the given depth, made in order */
static void form(Gen *g, Buf *b, int depth, const char *fmt) {
  for (const char *c = fmt; *c; c++) {
    const char *at = strchr(c, '@');
    size_t n = at ? (size_t)(at - c) : strlen(c);
    buf_add(b, c, n);
    if (!at) break;
    expr(g, b, depth);
    c = at;
  }
}

/* NAME(lambda t: BODY)TAIL: a derivative of a lambda over t and what is
 * in scope, its body an expression of the given depth, TAIL's @s filled
 * by form() */
static void lambda_of_t(Gen *g, Buf *b, int depth, const char *t, const char *name, const char *tail) {
  int saved = g->nvars;
  adgen_printf(b, "%s(lambda %s: ", dname(g, name), t);
  push_var(g, t);
  expr(g, b, depth);
  g->nvars = saved;
  form(g, b, depth - 1, tail);
}

/* NAME(lambda t, s: HEAD BODY)TAIL: as lambda_of_t, of two */
static void lambda_of_ts(Gen *g, Buf *b, int depth, const char *t, const char *s, const char *name, const char *head,
                         const char *tail) {
  int saved = g->nvars;
  adgen_printf(b, "%s(lambda %s, %s: %s", dname(g, name), t, s, head);
  push_var(g, t);
  push_var(g, s);
  expr(g, b, depth);
  g->nvars = saved;
  form(g, b, depth - 1, tail);
}

/* a derivative call inside f: a float computed by grad, jvp, vjp... of a
 * function of the values in scope; with check, the same call written
 * four times (the generator's state rewound for each): the call and its
 * three numeric twins, under _cmp */
static void inner_call(Gen *g, Buf *b, int depth) {
  if (!g->o->check) {
    inner_call1(g, b, depth);
    return;
  }
  if (g->twin) {
    /* a derivative call inside a twin is the real call, not its own
     * twin: the twin checks the outer derivative at the point the
     * program computes (which the real copy's _cmp checks), where
     * differences of differences would step across any `if` the inner
     * point sits on (jvp(c, (jvp(c, (x,), ...)[1],), ...) with x on
     * c's boundary: numeric inner points of 1e4, an outer derivative
     * of ~0 against the right 0.11) */
    const char *twin = g->twin;
    g->twin = NULL;
    g->plain = true;
    inner_call1(g, b, depth);
    g->plain = false;
    g->twin = twin;
    return;
  }
  if (g->plain) {
    inner_call1(g, b, depth);
    return;
  }
  Rng rng = g->rng;
  int fresh = g->fresh;
  const char *first = g->fn_first;
  int force = g->force_case;
  adgen_printf(b, "_cmp(");
  inner_call1(g, b, depth);
  static const char *twins[] = {"_n", "_m", "_o"};
  for (int i = 0; i < 3; i++) {
    g->rng = rng;
    g->fresh = fresh;
    g->fn_first = first;
    g->force_case = force;
    g->twin = twins[i];
    adgen_printf(b, ", ");
    inner_call1(g, b, depth);
    g->twin = NULL;
  }
  adgen_printf(b, ")");
}

/* ---- builtins as values, and derivatives of containers ----
 *
 * (the builtin_values option) A derivative of a builtin passed as a
 * value: grad(exp)(x), value_and_grad, jvp, vjp and hessian of one of
 * one argument, grad(pow, argnums=1)(x, y) (argnums 0, 1 or a tuple) and
 * jvp of one of two; max and min of three or four items (or of a list
 * or tuple of them) under grad; and
 * jacobian of a function returning a dict, tuple or list, hessian and
 * jacobian with argnums tuples, one item of the result taken.  Each
 * builtin's argument is put in its domain by a wrapper (log of
 * 1 + v**2).  A twin writes the same derivative as one its numeric
 * twins know: jacobian(lambda t: {...})(x)["b"] as the grad of
 * lambda t: {...}["b"], an item (i, j) of a hessian as the second
 * derivative along one argument, the other fixed. */

static const struct {
  const char *name, *arg;
} UNARY_BUILTINS[] = {
  {"sin", "%s"}, {"cos", "%s"}, {"tanh", "%s"}, {"sigmoid", "%s"}, {"atan", "%s"}, {"erf", "%s"},
  {"exp", "tanh(%s)"}, {"log", "(1.0 + (%s) ** 2)"}, {"sqrt", "(1.0 + (%s) ** 2)"}, {"log2", "(1.0 + (%s) ** 2)"},
  {"log10", "(1.0 + (%s) ** 2)"}, {"lgamma", "(1.5 + sigmoid(%s))"}, {"asin", "(0.9 * tanh(%s))"},
  {"acos", "(0.9 * tanh(%s))"}, {"tan", "(0.5 * tanh(%s))"}, {"abs", "%s"}, {"relu", "%s"},
};

static const struct {
  const char *name, *arg0, *arg1;
} BINARY_BUILTINS[] = {
  {"pow", "(1.0 + sigmoid(%s))", "(2.0 * tanh(%s))"}, {"maximum", "%s", "%s"}, {"minimum", "%s", "%s"},
  {"atan2", "%s", "(1.0 + (%s) ** 2)"}, {"max", "%s", "%s"}, {"min", "%s", "%s"},
};


static const char *ex(Gen *g, int depth);

/* an argument: an expression of the given depth in the wrapper fmt,
 * kept with the program's strings */
static const char *wrapped(Gen *g, const char *fmt, int depth) {
  Buf w = {0};
  buf_clear(&w);
  adgen_printf(&w, fmt, ex(g, depth));
  if (g->narena == g->caparena) {
    g->caparena = g->caparena ? 2 * g->caparena : 64;
    g->arena = realloc(g->arena, g->caparena * sizeof *g->arena);
    need(g->arena != NULL, "out of memory");
  }
  g->arena[g->narena++] = w.data;
  return w.data;
}

/* a lambda's body over t (and s), what is in scope too */
static const char *body_of(Gen *g, int depth, const char *t, const char *s) {
  int saved = g->nvars;
  push_var(g, t);
  if (s) push_var(g, s);
  const char *e = ex(g, depth);
  g->nvars = saved;
  return e;
}

static void builtin_value_call(Gen *g, Buf *b, int depth, const char *t, const char *s) {
  Rng *r = &g->rng;
  const char *tw = g->twin;
  int nu = (int)(sizeof UNARY_BUILTINS / sizeof *UNARY_BUILTINS), nb = (int)(sizeof BINARY_BUILTINS / sizeof *BINARY_BUILTINS);
  int u = rnd(r, nu), k = rnd(r, nb), form = rnd(r, 12);
  const char *un = UNARY_BUILTINS[u].name, *bn = BINARY_BUILTINS[k].name;
  switch (form) {
  case 0:
    adgen_printf(b, "%s(%s)(%s)", dname(g, "grad"), un, wrapped(g, UNARY_BUILTINS[u].arg, depth - 1));
    break;
  case 1: {
    const char *x = wrapped(g, UNARY_BUILTINS[u].arg, depth - 1);
    adgen_printf(b, "%s(%s)(%s)[%d]", dname(g, "value_and_grad"), un, x, rnd(r, 2));
    break;
  }
  case 2: {
    const char *x = wrapped(g, UNARY_BUILTINS[u].arg, depth - 1), *dx = ex(g, depth - 1);
    adgen_printf(b, "%s(%s, (%s,), (%s,))[1]", dname(g, "jvp"), un, x, dx);
    break;
  }
  case 3: {
    const char *x = wrapped(g, UNARY_BUILTINS[u].arg, depth - 1), *ct = ex(g, depth - 1);
    adgen_printf(b, "%s(%s, %s)[1](%s)[0]", dname(g, "vjp"), un, x, ct);
    break;
  }
  case 4:
    adgen_printf(b, "%s(%s)(%s)", dname(g, "hessian"), un, wrapped(g, UNARY_BUILTINS[u].arg, depth - 1));
    break;
  case 5: {
    /* d/dy of a builtin of two: argnums=1, or item 1 of argnums=(0, 1) */
    /* (every choice made in the twins too: they rewind to the same
     * state, and what follows must be the same program) */
    const char *x = wrapped(g, BINARY_BUILTINS[k].arg0, depth - 1), *y = wrapped(g, BINARY_BUILTINS[k].arg1, depth - 1);
    int how = rnd(r, 4);
    if (how == 0) adgen_printf(b, tw ? "%s(lambda u: %s(u, %s))(%s)" : "%s(%s)(%s, %s)", dname(g, "grad"), bn, tw ? y : x, tw ? x : y);
    else if (tw) adgen_printf(b, "%s(%s, argnums=1)(%s, %s)", dname(g, "grad2"), bn, x, y);
    else if (how == 1) adgen_printf(b, "grad(%s, argnums=1)(%s, %s)", bn, x, y);
    else if (how == 2) adgen_printf(b, "grad(%s, argnums=(0, 1))(%s, %s)[1]", bn, x, y);
    else adgen_printf(b, "grad(%s, argnums=(1, 0))(%s, %s)[0]", bn, x, y);
    break;
  }
  case 11: {
    /* max or min of three or four items over t, called or as a value */
    int n = 3 + rnd(r, 2), mx = rnd(r, 2), list = rnd(r, 3);
    const char *e[4];
    for (int i = 0; i < n; i++) e[i] = body_of(g, depth, t, NULL);
    const char *x = ex(g, depth - 1);
    adgen_printf(b, "%s(lambda %s: %s(%s%s, %s, %s", dname(g, "grad"), t, mx ? "max" : "min", list == 1 ? "[" : list == 2 ? "(" : "", e[0], e[1], e[2]);
    if (n == 4) adgen_printf(b, ", %s", e[3]);
    adgen_printf(b, "%s))(%s)", list == 1 ? "]" : list == 2 ? ")" : "", x);
    break;
  }
  case 6: {
    const char *x = wrapped(g, BINARY_BUILTINS[k].arg0, depth - 1), *y = wrapped(g, BINARY_BUILTINS[k].arg1, depth - 1);
    const char *dx = ex(g, depth - 1);
    adgen_printf(b, "%s(%s, (%s, %s), (%s, 0.5))[1]", dname(g, tw ? "jvp2" : "jvp"), bn, x, y, dx);
    break;
  }
  case 7: case 8: {
    /* jacobian of a dict, tuple or list of three over t, one item */
    int kind = rnd(r, 3), item = rnd(r, 3);
    const char *e[3];
    for (int i = 0; i < 3; i++) e[i] = body_of(g, depth, t, NULL);
    const char *x = ex(g, depth - 1);
    Buf c = {0};
    buf_clear(&c);
    if (kind == 0) adgen_printf(&c, "{\"a\": %s, \"b\": %s, \"c\": %s}", e[0], e[1], e[2]);
    else adgen_printf(&c, kind == 1 ? "(%s, %s, %s)" : "[%s, %s, %s]", e[0], e[1], e[2]);
    char key[8];
    snprintf(key, sizeof key, kind == 0 ? "\"%c\"" : "%d", kind == 0 ? 'a' + item : item);
    if (tw) adgen_printf(b, "%s(lambda %s: %s[%s])(%s)", dname(g, "grad"), t, c.data, key, x);
    else adgen_printf(b, "jacobian(lambda %s: %s)(%s)[%s]", t, c.data, x, key);
    buf_free(&c);
    break;
  }
  case 9: {
    /* hessian over (t, s), a diagonal item */
    const char *e = body_of(g, depth, t, s), *x = ex(g, depth - 1), *y = ex(g, depth - 1);
    int i = rnd(r, 2);
    if (!tw) adgen_printf(b, "hessian(lambda %s, %s: %s, argnums=(0, 1))(%s, %s)[%d][%d]", t, s, e, x, y, i, i);
    else if (i == 0) adgen_printf(b, "%s(lambda u: (lambda %s, %s: %s)(u, %s))(%s)", dname(g, "hessian"), t, s, e, y, x);
    else adgen_printf(b, "%s(lambda u: (lambda %s, %s: %s)(%s, u))(%s)", dname(g, "hessian"), t, s, e, x, y);
    break;
  }
  default: {
    /* jacobian over (t, s) of a tuple of two, item [i][j] */
    const char *e0 = body_of(g, depth, t, s), *e1 = body_of(g, depth, t, s), *x = ex(g, depth - 1), *y = ex(g, depth - 1);
    int i = rnd(r, 2), j = rnd(r, 2);
    if (!tw)
      adgen_printf(b, "jacobian(lambda %s, %s: (%s, %s), argnums=(0, 1))(%s, %s)[%d][%d]", t, s, e0, e1, x, y, i, j);
    else if (j == 0)
      adgen_printf(b, "%s(lambda u: (lambda %s, %s: (%s, %s))(u, %s)[%d])(%s)", dname(g, "grad"), t, s, e0, e1, y, i, x);
    else
      adgen_printf(b, "%s(lambda u: (lambda %s, %s: (%s, %s))(%s, u)[%d])(%s)", dname(g, "grad"), t, s, e0, e1, x, i, y);
    break;
  }
  }
}

static void inner_call1(Gen *g, Buf *b, int depth) {
  Rng *r = &g->rng;
  g->inner_left--;
  char t[NAME], s[NAME];
  snprintf(t, NAME, "%s", fresh_name(g, "t"));
  snprintf(s, NAME, "%s", fresh_name(g, "s"));
  int saved = g->nvars;
  const char *first = g->fn_first;
  int force = g->force_case;
  g->fn_first = NULL;
  g->force_case = -1;
  if (g->o->builtin_values && force < 0 && !first && rnd(r, 2) == 0) builtin_value_call(g, b, depth, t, s);
  else switch (force >= 0 ? force : rnd(r, 14)) {
  case 9: case 10:
    if (g->ntups) {
      /* grad of a lambda reading a sequence made in f by a constant
       * index: the optimiser may read the item where the sequence was
       * made, and its sensitivity must still reach it */
      adgen_printf(b, "%s(lambda %s: %s * %s[%d] + ", dname(g, "grad"), t, t, g->tups[rnd(r, g->ntups)],
                   rnd(r, 2) ? rnd(r, 3) : -1 - rnd(r, 3));
      push_var(g, t);
      expr(g, b, depth - 1);
      g->nvars = saved;
      form(g, b, depth - 1, ")(@)");
      break;
    }
    /* fall through */
  case 0: case 1:
    /* grad of a lambda over t and what is in scope */
    lambda_of_t(g, b, depth, t, "grad", ")(@)");
    break;
  case 2:
    /* grad of a function value */
    adgen_printf(b, "%s(", dname(g, "grad"));
    if (first) adgen_printf(b, "%s", first);
    else fn_value(g, b);
    form(g, b, depth - 1, ")(@)");
    break;
  case 3:
    adgen_printf(b, "%s(lambda %s: ", dname(g, "value_and_grad"), t);
    push_var(g, t);
    expr(g, b, depth);
    g->nvars = saved;
    adgen_printf(b, ")(");
    expr(g, b, depth - 1);
    adgen_printf(b, ")[%d]", rnd(r, 2));
    break;
  case 4:
    /* with respect to the second of two */
    lambda_of_ts(g, b, depth, t, s, g->twin ? "grad2" : "grad", "", ", argnums=1)(@, @)");
    break;
  case 5:
    lambda_of_t(g, b, depth, t, "jvp", ", (@,), (@,))[1]");
    break;
  case 13: {
    /* jvp of a function of two (a derivative around it passes them to
     * f's transform as they are, stdlib/ad.ms), which reads both: each
     * argument's tangent must reach the other's place */
    char ts[2 * NAME + 8];
    snprintf(ts, sizeof ts, "%s * %s + ", t, s);
    lambda_of_ts(g, b, depth, t, s, g->twin ? "jvp2" : "jvp", ts, ", (@, @), (@, 0.5))[1]");
    break;
  }
  case 6:
    lambda_of_t(g, b, depth, t, "vjp", ", @)[1](@)[0]");
    break;
  case 7:
    lambda_of_t(g, b, depth, t, "hessian", ")(@)");
    break;
  case 11:
    /* vjp of a function value */
    adgen_printf(b, "%s(", dname(g, "vjp"));
    if (first) adgen_printf(b, "%s", first);
    else fn_value(g, b);
    form(g, b, depth - 1, ", @)[1](@)[0]");
    break;
  default:
    /* jvp of a function value */
    adgen_printf(b, "%s(", dname(g, "jvp"));
    if (first) adgen_printf(b, "%s", first);
    else fn_value(g, b);
    form(g, b, depth - 1, ", (@,), (0.5,))[1]");
    break;
  }
  g->inner_left++;
}

/* With extras: an expression of what the other options never write
 * (each smooth in the floats it reads). */
static void extra_expr(Gen *g, Buf *b, int depth) {
  Rng *r = &g->rng;
  switch (rnd(r, 12)) {
  case 11: {
    /* max and min with key= or default=, sorted with key= and reverse=
     * (their rules took none of these) */
    static const char *fmts[] = {"max([@, @, 0.5], key=abs)", "min(@, @, key=lambda u: -u)", "max([], default=@)",
                                 "min([@], default=@)", "sorted([@, @, 0.5], key=abs, reverse=True)[0]",
                                 "sorted((@, 1.0, @), reverse=True)[1]"};
    form(g, b, depth - 1, fmts[rnd(r, 6)]);
    return;
  }
  case 10:
    /* zip and map over three sequences (their rules took two) */
    form(g, b, depth - 1, rnd(r, 2) ? "sum([a * b - c for a, b, c in zip([@, 0.5], (@, @), [@, 1.5])])"
                                     : "sum(map(lambda a, b, c: a * b - c, [@, 0.5], [@, @], (@, 1.0)))");
    return;
  case 9:
    /* filter with a lambda (grad passed it the transformed function
     * until filter had a rule), or None */
    form(g, b, depth - 1, rnd(r, 2) ? "sum(filter(lambda u: u > -5.0, [@, @, 0.5]))" : "sum(filter(None, (@, 0.0, @)))");
    return;
  case 8:
    /* an item of a concatenation whose first part has no tangent (a
     * jvp of grad once read the tangents of its second part shifted) */
    if (rnd(r, 2)) form(g, b, depth - 1, "((None, 0.5) + (@, @))[");
    else form(g, b, depth - 1, "([0.25] + [@, @])[");
    adgen_printf(b, "%d]", 1 + rnd(r, 2));
    return;
  case 7:
    /* max and min of three or four floats (whose rules once read only
     * two): smooth but where two tie */
    form(g, b, depth - 1, rnd(r, 2) ? "max(@, @, @)" : "min(@, @, @, @)");
    return;
  case 0: {
    /* the helper with defaults, its arguments by position and keyword */
    static const char *calls[] = {"kw(@)", "kw(@, b=@)", "kw(b=@, v=@)", "kw(@, @, @)", "kw(@, a=@)"};
    form(g, b, depth - 1, calls[rnd(r, 5)]);
    return;
  }
  case 1:
    /* mutual recursion, 0 to 3 calls deep */
    form(g, b, depth - 1, rnd(r, 2) ? "ev(@" : "od(@");
    adgen_printf(b, ", %d)", rnd(r, 4));
    return;
  case 2: {
    /* floats in a tensor times an int tensor (the product is f64) */
    static const char *ints[] = {"i64", "i32"};
    form(g, b, depth - 1, "(tensor([@, @], dtype=\"f64\") * ");
    adgen_printf(b, "tensor([%d, %d], dtype=\"%s\")).sum().item()", rnd(r, 5) - 2, 1 + rnd(r, 3), ints[rnd(r, 2)]);
    return;
  }
  case 3:
    /* an int from an int tensor, times a float */
    adgen_printf(b, "(tensor([%d, %d], dtype=\"i32\").sum().item() * ", 1 + rnd(r, 3), rnd(r, 3));
    form(g, b, depth - 1, "@)");
    return;
  case 4: {
    /* a dict comprehension keyed by f-strings, read by a built key */
    int k = rnd(r, 3);
    form(g, b, depth - 1, "{f\"k{n}\": @ * (n + 1) for n in range(3)}");
    if (rnd(r, 2)) adgen_printf(b, "[\"k\" + str(%d)]", k);
    else adgen_printf(b, "[f\"k{%d}\"]", k);
    return;
  }
  case 5:
    /* a key built by +, missing half the time: .get's default */
    form(g, b, depth - 1, "{\"a\" + \"b\": @, \"c\": @}");
    form(g, b, depth - 1, rnd(r, 2) ? ".get(\"a\" + \"b\", @)" : ".get(\"b\" + \"a\", @)");
    return;
  default:
    /* the values of a dict whose keys are made by str() in a loop */
    form(g, b, depth - 1, "sum({str(n) + \"_\": @ * n for n in range(1, 3)}.values())");
    return;
  }
}

/* An expression over the variables in scope, into b.  Bounded depth. */
/* builtins that pick or rearrange items: max and min of three or four
 * values, filter (keeping every item: f stays smooth), sorted with key=
 * and reverse=, a tensor's rows by list(), dict of pairs, divmod's
 * remainder (away from its jumps); each once had no derivative or a
 * wrong one (n-ary max took its third value for keepdims, dict and
 * divmod passed none) */
static void seq_builtin_expr(Gen *g, Buf *b, int depth) {
  static const char *forms[] = {
    "max(@, @, @)", "min(@, @, @, @)", "sum(filter(lambda fq: fq > -1000000.0, [@, @]))",
    "sorted([@, @, @], key=lambda sq: -sq)[0]", "sum(sorted((@, @), reverse=True))",
    "list(tensor([@, @], dtype=\"f64\"))[1].item()", "dict(zip([\"p\", \"q\"], [@, @]))[\"q\"]",
    "divmod(@ + 1000.5, 2000.0)[1]",
  };
  form(g, b, depth, forms[rnd(&g->rng, (int)(sizeof forms / sizeof *forms))]);
}

static void expr(Gen *g, Buf *b, int depth) {
  Rng *r = &g->rng;
  if (depth <= 0 || rnd(r, 10) < 2) {
    int k = rnd(r, 10);
    if (k < 2 || g->nvars == 0) adgen_printf(b, "%s", CONSTS[rnd(r, 8)]);
    else if (k == 2 && g->loopvar) adgen_printf(b, "(%s * 0.25)", g->loopvar);
    else if (k == 3 && g->ntups) {
      adgen_printf(b, "%s[", g->tups[rnd(r, g->ntups)]);
      if (g->o->containers) index3(g, b);
      else adgen_printf(b, "%d", rnd(r, 3));
      adgen_printf(b, "]");
    } else adgen_printf(b, "%s", g->vars[rnd(r, g->nvars)]);
    return;
  }
  int k = rnd(r, 21);
  switch (k) {
  case 0: case 1:
    adgen_printf(b, "("); expr(g, b, depth - 1); adgen_printf(b, " + "); expr(g, b, depth - 1); adgen_printf(b, ")");
    return;
  case 2: case 3:
    adgen_printf(b, "("); expr(g, b, depth - 1); adgen_printf(b, " - "); expr(g, b, depth - 1); adgen_printf(b, ")");
    return;
  case 6: {
    /* a / (1 + v*v): never a division by zero; v is a variable so that
     * the text is written once */
    adgen_printf(b, "(");
    expr(g, b, depth - 1);
    const char *v = g->nvars ? g->vars[rnd(r, g->nvars)] : "1.5";
    adgen_printf(b, " / (1.0 + %s * %s))", v, v);
    return;
  }
  case 7:
    adgen_printf(b, "(-"); expr(g, b, depth - 1); adgen_printf(b, ")");
    return;
  case 8:
    if (g->nhelpers) {
      int h = rnd(r, g->nhelpers);
      adgen_printf(b, "h%d(", h);
      expr(g, b, depth - 1);
      if (g->helper_arity[h] == 2) {
        adgen_printf(b, ", ");
        expr(g, b, depth - 1);
      }
      adgen_printf(b, ")");
      return;
    }
    break;
  case 9:
    if (g->nclos) {
      /* a closure applied directly, or passed to the higher-order ap */
      const char *c = g->clos[rnd(r, g->nclos)];
      if (rnd(r, 3) == 0) adgen_printf(b, "ap(%s, ", c);
      else adgen_printf(b, "%s(", c);
      expr(g, b, depth - 1);
      adgen_printf(b, ")");
      return;
    }
    break;
  case 10:
    if (g->has_rec) {
      adgen_printf(b, "rec(");
      expr(g, b, depth - 1);
      adgen_printf(b, ", %d)", rnd(r, 4));
      return;
    }
    break;
  case 11:
    /* a conditional expression on a comparison of values */
    form(g, b, depth - 1, "(@ if @");
    adgen_printf(b, "%s", rnd(r, 2) ? " < " : " >= ");
    expr(g, b, depth - 1);
    form(g, b, depth - 1, " else @)");
    return;
  case 12:
    if (g->o->containers && g->nfconts) {
      /* a function taken out of a container and called */
      FCont *c = &g->fconts[rnd(r, g->nfconts)];
      if (c->kind == 2) adgen_printf(b, "%s[\"%c\"](", c->name, 'a' + rnd(r, 3));
      else {
        adgen_printf(b, "%s[", c->name);
        index3(g, b);
        adgen_printf(b, "](");
      }
      expr(g, b, depth - 1);
      adgen_printf(b, ")");
      return;
    }
    break;
  case 13:
    if (g->o->containers && rnd(r, 4) == 0) {
      seq_builtin_expr(g, b, depth - 1);
      return;
    }
    if (g->o->containers) {
      /* a comprehension, summed */
      char q[NAME];
      snprintf(q, NAME, "%s", fresh_name(g, "q"));
      int saved = g->nvars;
      if (g->ntups && rnd(r, 2)) {
        const char *tp = g->tups[rnd(r, g->ntups)];
        adgen_printf(b, "sum([");
        push_var(g, q);
        expr(g, b, depth - 1);
        g->nvars = saved;
        /* (a filter, when written, keeps every item: f stays smooth) */
        if (rnd(r, 2)) adgen_printf(b, " for %s in %s])", q, tp);
        else adgen_printf(b, " for %s in %s if %s == %s])", q, tp, q, q);
        return;
      }
      if (g->nfconts) {
        FCont *c = &g->fconts[rnd(r, g->nfconts)];
        adgen_printf(b, "sum([%s(", q);
        expr(g, b, depth - 1);
        adgen_printf(b, c->kind == 2 ? ") for %s in %s.values()])" : ") for %s in %s])", q, c->name);
        return;
      }
      /* a dict comprehension (whose third derivative once paired a
       * tangent chain that stopped early with the wrong keys), or a
       * list over a range */
      if (rnd(r, 2)) {
        /* its first pair constant: the tangent chain stops early */
        adgen_printf(b, "sum({k: v for k, v in [(\"c\", 0.5), (\"e\", ");
        expr(g, b, depth - 1);
        adgen_printf(b, ")]}.values())");
        return;
      }
      adgen_printf(b, "sum([%s * ", q);
      expr(g, b, depth - 1);
      adgen_printf(b, " for %s in range(2)])", q);
      return;
    }
    break;
  case 14:
    if (g->o->modules) {
      switch (rnd(r, 4)) {
      case 0:
        form(g, b, depth - 1, "L.sq(@)");
        return;
      case 1:
        form(g, b, depth - 1, "L.mix(@, @)");
        return;
      case 2:
        adgen_printf(b, "ap(%s, ", rnd(r, 2) ? "L.sq" : "L.smooth");
        expr(g, b, depth - 1);
        adgen_printf(b, ")");
        return;
      default:
        if (g->o->methods) {
          form(g, b, depth - 1, "L.scale(@, k=@)");
        } else {
          form(g, b, depth - 1, "L.scale(@)");
        }
        return;
      }
    }
    break;
  case 15:
    if (g->o->methods) {
      switch (rnd(r, 3)) {
      case 0:
        /* tensors in f64, so the checks keep their precision */
        form(g, b, depth - 1, "tensor([@, @], dtype=\"f64\").sum().item()");
        return;
      case 1:
        form(g, b, depth - 1, "{\"a\": @, \"b\": @");
        adgen_printf(b, "}.get(\"%c\")", 'a' + rnd(r, 2));
        return;
      default:
        form(g, b, depth - 1, "half(@, s=@)");
        return;
      }
    }
    break;
  case 18:
    if (g->o->containers) {
      /* a math builtin, on an argument in its domain, or an int power
       * (** 0 too: its derivative is None, not a float) */
      static const char *fmts[] = {"sin(%s)", "exp(-(%s) * 0.25)", "tanh(%s)", "atan(%s)", "erf(%s)",
                                   "sqrt(1.0 + (%s) ** 2)", "log(1.0 + (%s) ** 2)", "sigmoid(%s)",
                                   "(%s) ** 0", "(%s) ** 3 * 0.1"};
      Buf a = {0};
      buf_clear(&a);
      expr(g, &a, depth - 1);
      adgen_printf(b, fmts[rnd(r, (int)(sizeof fmts / sizeof *fmts))], a.data);
      buf_free(&a);
      return;
    }
    break;
  case 16: case 17:
    if (g->inner_left > 0) {
      inner_call(g, b, depth - 1);
      return;
    }
    break;
  case 19:
    if (g->o->extras) {
      extra_expr(g, b, depth);
      return;
    }
    break;
  default:
    break;
  }
  adgen_printf(b, "("); expr(g, b, depth - 1); adgen_printf(b, " * "); expr(g, b, depth - 1); adgen_printf(b, ")");
}

/* The text of a fresh expression, freed with the program. */
static const char *ex(Gen *g, int depth) {
  Buf b = {0};
  buf_clear(&b);
  expr(g, &b, depth);
  if (g->narena == g->caparena) {
    g->caparena = g->caparena ? 2 * g->caparena : 64;
    g->arena = realloc(g->arena, g->caparena * sizeof *g->arena);
    need(g->arena != NULL, "out of memory");
  }
  g->arena[g->narena++] = b.data;
  return b.data;
}

/* A loop's number of turns: 1 to 3, or with long_loops, half the time
 * 60 to 139 (past a tape's first buffer). */
static int trips(Gen *g) {
  if (g->o->long_loops && rnd(&g->rng, 2)) return 60 + rnd(&g->rng, 80);
  return 1 + rnd(&g->rng, 3);
}

/* v = e / (1 + e*e) by way of a temporary: bounded, smooth */
static void squash_into(Gen *g, const char *v, const char *e) {
  char t[NAME];
  snprintf(t, sizeof t, "%s", fresh_name(g, "s"));
  line(g, "%s = %s", t, e);
  line(g, "%s = %s / (1.0 + %s * %s)", v, t, t, t);
}

/* "if A op B:" with two fresh expressions, made in order (a call's
 * arguments are evaluated in no fixed order) */
/* Sometimes (with loop_bodies) an else block after the loop just
 * written: it runs when no break left the loop, and changes v. */
static void maybe_loop_else(Gen *g, const char *v, const char *sign) {
  if (!g->o->loop_bodies || rnd(&g->rng, 3) != 0) return;
  line(g, "else:");
  g->indent++;
  line(g, "# a loop's else block");
  char e[4096];
  snprintf(e, sizeof e, "%s * 0.75 %s %s", v, sign, ex(g, 2));
  squash_into(g, v, e);
  g->indent--;
}

static void if_line(Gen *g, const char *op) {
  const char *a = ex(g, 1);
  const char *b = ex(g, 1);
  line(g, "if %s %s %s:", a, op, b);
}

static void statement(Gen *g, int depth);

/* if/else squashing v in each branch, the else's expression of depth
 * edepth */
static void squash_if_else(Gen *g, const char *v, const char *op, int edepth) {
  char e[4096];
  if_line(g, op);
  g->indent++;
  snprintf(e, sizeof e, "%s * 0.5 + %s", v, ex(g, 2));
  squash_into(g, v, e);
  g->indent--;
  line(g, "else:");
  g->indent++;
  snprintf(e, sizeof e, "%s * 0.25 - %s", v, ex(g, edepth));
  squash_into(g, v, e);
  g->indent--;
}

static void statements(Gen *g, int n, int depth) {
  for (int i = 0; i < n; i++) statement(g, depth);
}

/* containers: a dict of floats walked by its keys (`for k in d`, one
 * carried value) or unpacked into its keys (`a, b = d`) and read through
 * them: a dict's keys are strs, with no tangent and no sensitivity (forward
 * mode and second derivatives once raised "KeyError: 0" there). */
static void dict_statement(Gen *g) {
  Rng *r = &g->rng;
  if (!g->nvars) return;
  char d[NAME], v[NAME], q[NAME];
  snprintf(d, NAME, "%s", fresh_name(g, "dd"));
  const char *a = ex(g, 1), *b = ex(g, 1);
  line(g, "%s = {\"p\": %s, \"q\": %s}", d, a, b);
  snprintf(v, NAME, "%s", g->vars[rnd(r, g->nvars)]);
  char e[4096];
  if (rnd(r, 2)) {
    snprintf(q, NAME, "%s", fresh_name(g, "k"));
    line(g, "for %s in %s:", q, d);
    g->indent++;
    snprintf(e, sizeof e, "%s * 0.5 + %s[%s] * %s", v, d, q, ex(g, 1));
    squash_into(g, v, e);
    g->indent--;
  } else {
    char k1[NAME], k2[NAME];
    snprintf(k1, NAME, "%s", fresh_name(g, "k"));
    snprintf(k2, NAME, "%s", fresh_name(g, "k"));
    line(g, "%s, %s = %s", k1, k2, d);
    snprintf(e, sizeof e, "%s * 0.5 + %s[%s] * %s[%s]", v, d, k1, d, k2);
    squash_into(g, v, e);
  }
}

/* containers: a sequence of floats, updated or iterated; a container of
 * functions; a comprehension kept as a list */
static void container_statement(Gen *g) {
  Rng *r = &g->rng;
  char v[NAME];
  if (rnd(r, 6) == 0) {
    dict_statement(g);
    return;
  }
  switch (rnd(r, 5)) {
  case 0: case 1: {
    if (g->ntups >= MAXT) return;
    snprintf(v, NAME, "%s", fresh_name(g, "ls"));
    bool list = rnd(r, 2);
    const char *a = ex(g, 1), *b = ex(g, 1), *c = ex(g, 1);
    line(g, list ? "%s = [%s, %s, %s]" : "%s = (%s, %s, %s)", v, a, b, c);
    if (list && rnd(r, 2)) {
      /* a functional update, at a constant or computed index */
      Buf i = {0};
      buf_clear(&i);
      index3(g, &i);
      line(g, "%s[%s] = %s", v, i.data, ex(g, 2));
      buf_free(&i);
    }
    g->tup_list[g->ntups] = list;
    snprintf(g->tups[g->ntups++], NAME, "%s", v);
    return;
  }
  case 2: {
    if (g->nfconts >= MAXF) return;
    FCont *c = &g->fconts[g->nfconts];
    snprintf(c->name, NAME, "%s", fresh_name(g, "fs"));
    c->kind = rnd(r, 3);
    Buf items[3];
    for (int k = 0; k < 3; k++) {
      items[k] = (Buf){0};
      buf_clear(&items[k]);
      if (rnd(r, 3) == 0) {
        /* a lambda over what is in scope */
        char t[NAME];
        snprintf(t, NAME, "%s", fresh_name(g, "u"));
        int saved = g->nvars;
        adgen_printf(&items[k], "lambda %s: ", t);
        push_var(g, t);
        expr(g, &items[k], 2);
        g->nvars = saved;
      } else {
        fn_value(g, &items[k]);
      }
    }
    if (c->kind == 2) line(g, "%s = {\"a\": %s, \"b\": %s, \"c\": %s}", c->name, items[0].data, items[1].data, items[2].data);
    else line(g, c->kind == 0 ? "%s = [%s, %s, %s]" : "%s = (%s, %s, %s)", c->name, items[0].data, items[1].data, items[2].data);
    for (int k = 0; k < 3; k++) buf_free(&items[k]);
    g->nfconts++;
    return;
  }
  case 3: {
    /* a loop over a sequence: a carried value */
    if (!g->ntups || !g->nvars) return;
    const char *tp = g->tups[rnd(r, g->ntups)];
    snprintf(v, NAME, "%s", g->vars[rnd(r, g->nvars)]);
    char q[NAME];
    snprintf(q, NAME, "%s", fresh_name(g, "q"));
    line(g, "for %s in %s:", q, tp);
    g->indent++;
    int saved = g->nvars;
    push_var(g, q);
    char e[4096];
    snprintf(e, sizeof e, "%s * 0.5 + %s", v, ex(g, 2));
    squash_into(g, v, e);
    g->nvars = saved;
    g->indent--;
    return;
  }
  default: {
    /* a list comprehension over a sequence or a range, kept */
    if (g->ntups >= MAXT) return;
    snprintf(v, NAME, "%s", fresh_name(g, "cv"));
    char q[NAME];
    snprintf(q, NAME, "%s", fresh_name(g, "q"));
    int saved = g->nvars;
    push_var(g, q);
    const char *e = ex(g, 2);
    g->nvars = saved;
    if (g->ntups && rnd(r, 2)) line(g, "%s = [%s for %s in %s]", v, e, q, g->tups[rnd(r, g->ntups)]);
    else line(g, "%s = [%s * %s for %s in [0.5, 1.0, 1.5]]", v, e, q, q);
    g->tup_list[g->ntups] = true;
    snprintf(g->tups[g->ntups++], NAME, "%s", v);
    return;
  }
  }
}

/* With extras: `while True` left by a break, or a string built in a
 * loop and used as a dict's key. */
static void extra_statement(Gen *g) {
  Rng *r = &g->rng;
  char e[4096];
  if (!g->nvars) return;
  if (rnd(r, 2)) {
    char v[NAME], j[NAME];
    snprintf(v, sizeof v, "%s", g->vars[rnd(r, g->nvars)]);
    snprintf(j, sizeof j, "%s", fresh_name(g, "j"));
    line(g, "%s = 0", j);
    line(g, "while True:");
    g->indent++;
    const char *saved = g->loopvar;
    g->loopvar = j;
    snprintf(e, sizeof e, "%s * 0.5 + %s", v, ex(g, 2));
    squash_into(g, v, e);
    line(g, "%s += 1", j);
    line(g, "if %s >= %d:", j, trips(g));
    g->indent++;
    line(g, "break");
    g->indent--;
    g->loopvar = saved;
    g->indent--;
    return;
  }
  char nm[NAME], v[NAME];
  snprintf(nm, sizeof nm, "%s", fresh_name(g, "nm"));
  snprintf(v, sizeof v, "%s", fresh_name(g, "v"));
  int n = 1 + rnd(r, 3);
  line(g, "%s = \"k\"", nm);
  char q[NAME];
  snprintf(q, sizeof q, "%s", fresh_name(g, "q"));
  line(g, "for %s in range(%d):", q, n);
  line(g, "    %s = %s + str(%s)", nm, nm, q);
  const char *a = ex(g, 2), *c = ex(g, 2);
  /* the built key is the first, "k0", "k01" or "k012" */
  line(g, "%s = {%s: %s, \"z\": %s}[\"k%.*s\"]", v, nm, a, c, n, "012");
  push_var(g, v);
}

static void statement(Gen *g, int depth) {
  Rng *r = &g->rng;
  if (g->o->extras && rnd(r, 6) == 0) {
    extra_statement(g);
    return;
  }
  int k = rnd(r, depth > 0 ? (g->o->containers ? 16 : 13) : 4);
  char v[NAME];
  switch (k) {
  case 0: case 1:
    snprintf(v, sizeof v, "%s", fresh_name(g, "v"));
    line(g, "%s = %s", v, ex(g, 2));
    push_var(g, v);
    break;
  case 2: case 3:
    snprintf(v, sizeof v, "%s", fresh_name(g, "v"));
    squash_into(g, v, ex(g, 3));
    push_var(g, v);
    break;
  case 4: case 5: {
    /* if / elif / else assigning the same new variable in each branch */
    snprintf(v, sizeof v, "%s", fresh_name(g, "v"));
    if_line(g, rnd(r, 2) ? "<" : ">");
    g->indent++;
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    if (rnd(r, 2)) {
      const char *a = ex(g, 1);
      const char *b = ex(g, 1);
      line(g, "elif %s <= %s:", a, b);
      g->indent++;
      line(g, "%s = %s", v, ex(g, 2));
      g->indent--;
    }
    line(g, "else:");
    g->indent++;
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    push_var(g, v);
    break;
  }
  case 6: case 7: {
    /* for over a range: a loop-carried value, squashed each time */
    if (!g->nvars) break;
    snprintf(v, sizeof v, "%s", g->vars[rnd(r, g->nvars)]);
    char i[NAME];
    snprintf(i, sizeof i, "%s", fresh_name(g, "i"));
    line(g, "for %s in range(%d):", i, trips(g));
    g->indent++;
    const char *saved = g->loopvar;
    g->loopvar = i;
    if (rnd(r, 3) == 0) {
      if_line(g, "<");
      g->indent++;
      line(g, rnd(r, 2) ? "continue" : "break");
      g->indent--;
    }
    char e[4096];
    int body = g->o->loop_bodies ? rnd(r, 6) : 0;
    if (g->o->loop_bodies && g->o->nested_loops) body = body % 2 ? 2 : 5;
    if (body == 3) {
      /* an if without else: the turn's value changed or not */
      line(g, "# an if without else in a loop's body");
      if_line(g, rnd(r, 2) ? "<" : ">");
      g->indent++;
      snprintf(e, sizeof e, "%s * 0.75 + %s", v, ex(g, 2));
      squash_into(g, v, e);
      g->indent--;
      snprintf(e, sizeof e, "%s * 0.5 + %s", v, ex(g, 1));
      squash_into(g, v, e);
    } else if (body == 4) {
      /* if/elif/else, one branch keeping more values than the others,
       * and nothing after it: each branch goes back to the loop */
      line(g, "# an if/elif/else in a loop's body");
      if_line(g, "<");
      g->indent++;
      snprintf(e, sizeof e, "sin(%s) * %s + %s", v, ex(g, 1), ex(g, 2));
      squash_into(g, v, e);
      g->indent--;
      const char *a = ex(g, 1);
      const char *b = ex(g, 1);
      line(g, "elif %s <= %s:", a, b);
      g->indent++;
      snprintf(e, sizeof e, "%s * 0.25 - %s", v, ex(g, 1));
      squash_into(g, v, e);
      g->indent--;
      line(g, "else:");
      g->indent++;
      line(g, "%s = %s * 0.5", v, v);
      g->indent--;
    } else if (body == 1) {
      /* the turn's value through an if/else */
      line(g, "# an if in a loop's body");
      squash_if_else(g, v, "<", 2);
    } else if (body == 2 || body == 5) {
      /* a loop in the turn of another (5: an if in its own turn) */
      char i2[NAME];
      snprintf(i2, sizeof i2, "%s", fresh_name(g, "i"));
      line(g, body == 2 ? "# a loop in a loop's body" : "# a loop with an if in a loop's body");
      /* (with long_loops, the inner loop long too at times: its tape
       * grows in each entry of the outer one's) */
      line(g, "for %s in range(%d):", i2, g->o->long_loops && rnd(r, 3) == 0 ? trips(g) : 1 + rnd(r, 4));
      g->indent++;
      g->loopvar = i2;
      if (body == 5) {
        squash_if_else(g, v, ">", 1);
      } else {
        snprintf(e, sizeof e, "%s * 0.5 + %s", v, ex(g, 2));
        squash_into(g, v, e);
      }
      int deeper = rnd(r, 4);
      if (deeper == 0) {
        /* a third loop, in the inner loop's turn (its tape inside the
         * middle loop's, inside the outer loop's) */
        char i3[NAME];
        snprintf(i3, sizeof i3, "%s", fresh_name(g, "i"));
        line(g, "# a loop in a loop in a loop's body");
        line(g, "for %s in range(%d):", i3, 1 + rnd(r, 3));
        g->indent++;
        g->loopvar = i3;
        snprintf(e, sizeof e, "%s * 0.75 + %s", v, ex(g, 1));
        squash_into(g, v, e);
        g->loopvar = i2;
        g->indent--;
      } else if (deeper == 1) {
        /* the inner loop left by a break (the outer turn goes on from
         * the break's branch or from the loop's end) */
        line(g, "# a break out of a loop in a loop's body");
        if_line(g, rnd(r, 2) ? "<" : ">");
        g->indent++;
        line(g, "break");
        g->indent--;
      }
      g->loopvar = i;
      g->indent--;
      if (g->o->loop_bodies && rnd(r, 2)) {
        if (rnd(r, 2)) {
          /* code after the inner loop in the outer turn */
          line(g, "# code after a loop in a loop's body");
          snprintf(e, sizeof e, "%s * 0.75 - %s", v, ex(g, 1));
          squash_into(g, v, e);
        } else {
          /* an if after the inner loop in the outer turn */
          line(g, "# an if after a loop in a loop's body");
          squash_if_else(g, v, "<", 1);
        }
      }
    } else {
      snprintf(e, sizeof e, "%s * 0.5 + %s", v, ex(g, 2));
      squash_into(g, v, e);
    }
    g->loopvar = saved;
    g->indent--;
    maybe_loop_else(g, v, "-");
    break;
  }
  case 8: {
    /* while with a counter, maybe leaving early */
    if (!g->nvars) break;
    snprintf(v, sizeof v, "%s", g->vars[rnd(r, g->nvars)]);
    char j[NAME];
    snprintf(j, sizeof j, "%s", fresh_name(g, "j"));
    line(g, "%s = 0", j);
    line(g, "while %s < %d:", j, trips(g));
    g->indent++;
    const char *saved = g->loopvar;
    g->loopvar = j;
    char e[4096];
    snprintf(e, sizeof e, "%s - %s * 0.25", ex(g, 2), v);
    squash_into(g, v, e);
    if (rnd(r, 2)) {
      if_line(g, ">");
      g->indent++;
      line(g, "break");
      g->indent--;
    }
    line(g, "%s += 1", j);
    g->loopvar = saved;
    g->indent--;
    maybe_loop_else(g, v, "+");
    break;
  }
  case 9: case 12: {
    /* a closure capturing intermediate values, applied later */
    if (g->nclos >= MAXC) break;
    char c[NAME];
    snprintf(c, sizeof c, "%s", fresh_name(g, "c"));
    if (rnd(r, 2)) {
      const char *a = ex(g, 1);
      const char *b = ex(g, 1);
      line(g, "%s = lambda t: t * %s + %s", c, a, b);
    } else {
      line(g, "def %s(t):", c);
      g->indent++;
      line(g, "if t > %s:", ex(g, 1));
      g->indent++;
      line(g, "return t * %s", ex(g, 1));
      g->indent--;
      line(g, "return t / (1.0 + t * t) - %s", ex(g, 1));
      g->indent--;
    }
    snprintf(g->clos[g->nclos++], NAME, "%s", c);
    if (rnd(r, 2)) {
      /* applied at once as well as (maybe) later */
      snprintf(v, sizeof v, "%s", fresh_name(g, "v"));
      const char *a = ex(g, 1);
      line(g, rnd(r, 2) ? "%s = %s(%s)" : "%s = ap(%s, %s)", v, c, a);
      push_var(g, v);
      if (g->inner_left > 0 && rnd(r, 2)) {
        /* and differentiated in f: what the closure computes from its
         * captures is now computed in f too, and the optimiser may
         * share it between them; the sensitivities that reach the
         * closure must still reach what it captured */
        static const int by[] = {2, 11, 12};   /* grad, vjp, jvp */
        char w[NAME];
        snprintf(w, sizeof w, "%s", fresh_name(g, "v"));
        Buf e = {0};
        g->fn_first = c;
        g->force_case = by[rnd(r, 3)];
        inner_call(g, &e, 2);
        line(g, "%s = %s", w, e.data);
        buf_free(&e);
        push_var(g, w);
      }
    }
    break;
  }
  case 10: {
    /* a tuple built, later indexed or unpacked */
    if (g->ntups >= MAXT) break;
    char t[NAME];
    snprintf(t, sizeof t, "%s", fresh_name(g, "tp"));
    const char *a = ex(g, 1);
    const char *b = ex(g, 1);
    const char *c = ex(g, 1);
    line(g, "%s = (%s, %s, %s)", t, a, b, c);
    g->tup_list[g->ntups] = false;
    snprintf(g->tups[g->ntups++], NAME, "%s", t);
    if (rnd(r, 2)) {
      char u[3][NAME];
      for (int q = 0; q < 3; q++) snprintf(u[q], sizeof u[q], "%s", fresh_name(g, "v"));
      line(g, "%s, %s, %s = %s", u[0], u[1], u[2], t);
      for (int q = 0; q < 3; q++) push_var(g, u[q]);
    }
    break;
  }
  case 13: case 14: case 15:
    container_statement(g);
    break;
  default: {
    /* a nested block: statements inside a branch, joined afterwards */
    snprintf(v, sizeof v, "%s", fresh_name(g, "v"));
    if_line(g, "<");
    int saved = g->nvars, savedc = g->nclos, savedt = g->ntups, savedf = g->nfconts;
    g->indent++;
    statements(g, 1 + rnd(r, 2), depth - 1);
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    /* names made in one branch are not bound on the other path */
    g->nvars = saved;
    g->nclos = savedc;
    g->ntups = savedt;
    g->nfconts = savedf;
    line(g, "else:");
    g->indent++;
    line(g, "%s = %s", v, ex(g, 2));
    g->indent--;
    push_var(g, v);
    break;
  }
  }
}

int adgen_program(uint64_t seed, const AdGenOpts *o, Buf *b) {
  Gen g = {0};
  g.rng.s = seed * 0x2545f4914f6cdd1dULL + 12345;
  g.b = b;
  g.o = o;
  buf_clear(b);
  Rng *r = &g.rng;

  if (o->modules) line(&g, "import _adgen_lib as L");
  /* a higher-order helper that closures are passed to, and a function
   * of one float with a keyword parameter */
  line(&g, "def ap(fn, v):");
  line(&g, "    return fn(v) * 0.5 + fn(v * 0.5)");
  line(&g, "");
  line(&g, "def half(v, s=0.5):");
  line(&g, "    return v * s + v * v * 0.125");
  line(&g, "");
  if (o->extras) {
    line(&g, "def kw(v, a=1.5, b=0.5):");
    line(&g, "    return v * a + b * v / (1.0 + v * v)");
    line(&g, "");
    line(&g, "def ev(v, n):");
    line(&g, "    if n <= 0:");
    line(&g, "        return v * 0.5");
    line(&g, "    return od(v * 0.75 + 0.25, n - 1) + v * 0.125");
    line(&g, "");
    line(&g, "def od(v, n):");
    line(&g, "    return ev(v / (1.0 + v * v), n - 1) * 1.5 if n > 0 else tanh(v)");
    line(&g, "");
  }

  /* helpers of one or two parameters, over their parameters only */
  int nh = rnd(r, MAXH + 1);
  for (int h = 0; h < nh; h++) {
    int ar = 1 + rnd(r, 2);
    g.nvars = 0;
    push_var(&g, "a");
    if (ar == 2) push_var(&g, "b");
    line(&g, ar == 2 ? "def h%d(a, b):" : "def h%d(a):", h);
    g.indent++;
    if (rnd(r, 2)) {
      if_line(&g, "<");
      g.indent++;
      line(&g, "return %s", ex(&g, 2));
      g.indent--;
      if (g.o->containers && rnd(r, 2)) {
        /* a comprehension after the if: the else runs on into code of
         * its own (a join), whose backward pass the branch's hands on
         * as a continuation; over a constant half the time, so that
         * nothing flows back through it (jvp of grad once called that
         * parameterless backward pass with tangents it does not take) */
        line(&g, "w = sum([q * %s for q in range(2)])", rnd(r, 2) ? "2.0" : ex(&g, 1));
        push_var(&g, "w");
      }
    }
    line(&g, "return %s", ex(&g, 2));
    g.indent--;
    line(&g, "");
    g.helper_arity[g.nhelpers++] = ar;
  }

  /* the recursive helper: depth argument n, tail or not */
  if (rnd(r, 2)) {
    g.nvars = 0;
    push_var(&g, "v");
    line(&g, "def rec(v, n):");
    g.indent++;
    line(&g, "if n <= 0:");
    g.indent++;
    line(&g, "return %s", ex(&g, 1));
    g.indent--;
    if (rnd(r, 2))
      line(&g, "return rec(v * 0.5 + %s / (1.0 + v * v), n - 1)", ex(&g, 1));
    else
      line(&g, "return %s * 0.5 + rec(v / (1.0 + v * v), n - 1) * v", ex(&g, 1));
    g.indent--;
    line(&g, "");
    g.has_rec = true;
  }

  /* a container of functions at the top level, read from f */
  g.nvars = 0;
  if (o->containers && rnd(r, 2)) {
    FCont *c = &g.fconts[g.nfconts++];
    snprintf(c->name, NAME, "GF");
    c->kind = rnd(r, 3);
    Buf items[3];
    for (int k = 0; k < 3; k++) {
      items[k] = (Buf){0};
      buf_clear(&items[k]);
      fn_value(&g, &items[k]);
    }
    if (c->kind == 2) line(&g, "GF = {\"a\": %s, \"b\": %s, \"c\": %s}", items[0].data, items[1].data, items[2].data);
    else line(&g, c->kind == 0 ? "GF = [%s, %s, %s]" : "GF = (%s, %s, %s)", items[0].data, items[1].data, items[2].data);
    for (int k = 0; k < 3; k++) buf_free(&items[k]);
    line(&g, "");
  }

  g.inner_left = o->inner;
  g.force_case = -1;
  int np = 1 + rnd(r, 3);
  static const char *params[] = {"x", "y", "z"};
  for (int i = 0; i < np; i++) push_var(&g, params[i]);
  line(&g, np == 1 ? "def f(x):" : np == 2 ? "def f(x, y):" : "def f(x, y, z):");
  g.indent++;
  statements(&g, 2 + rnd(r, 5), 1);
  /* the result uses the newest values and one of the parameters */
  char ret[4096];
  int n = snprintf(ret, sizeof ret, "return %s", ex(&g, 2));
  for (int i = 0; i < 2 && g.nvars > np; i++)
    n += snprintf(ret + n, sizeof ret - n, " + %s", g.vars[g.nvars - 1 - i]);
  line(&g, "%s", ret);
  g.indent--;
  for (int i = 0; i < g.narena; i++) free(g.arena[i]);
  free(g.arena);
  return np;
}

void adgen_point(uint64_t seed, int np, Buf *b) {
  Rng r = {seed ^ 0x5deece66dULL};
  buf_add(b, "(", 1);
  for (int i = 0; i < np; i++) adgen_printf(b, "%.17e, ", 4.0 * rnd_unit(&r) - 2.0);
  buf_add(b, ")", 1);
}
