/* test_jit.c: graph mode against eager mode on random programs, through
 * the public API (docs/jit.md).
 *
 * Eager mode is the reference: every program runs in a VM in eager mode
 * and in one in graph mode, and the two must print the same and fail
 * with the same error, position and traceback.  The programs are
 * adgen.c's (floats, branches, loops, closures, tuples, helpers,
 * recursion; with containers too), and the int programs of intgen below
 * (Python's // and %, overflow into an error, division by zero, int and
 * float mixed, nested ifs, while loops, recursion), whose constants are
 * picked so that some calls overflow or divide by zero, and the matrix
 * programs of matgen (products of f32 and f64 matrices, transposed every
 * way, their temporaries and gradients).  So that graph
 * mode cannot pass by compiling nothing, the log (MIST_JIT_LOG) is read
 * back and a share of the functions must have compiled natively.
 *
 * MIST_JIT_PROGRAMS (default 100) runs more programs of each kind,
 * MIST_JIT_SEED=S others (each generator's seeds moved by S * 1000003), and
 * MIST_JIT_SHOW=SEED prints the int program of that seed (the tensor
 * program with MIST_JIT_SHOW_TENSOR=1 too).  tensorgen's tensor
 * programs (chains of elementwise operations of every dtype, reduced
 * or not) check the fused loops of graph mode against eager mode, bit
 * for bit.  The case "cache" (a ctest of its own, unit/test_jit_cache)
 * runs programs of each generator twice as processes of the mist
 * binary on one compile cache: the second run must be fully cached.
 */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adgen.h"
#include "mist.h"

static long env_long(const char *name, long dflt) {
  const char *s = getenv(name);
  return s && *s ? strtol(s, NULL, 10) : dflt;
}

/* The seed of program p of a generator whose first is `first`:
 * MIST_JIT_SEED=S moves them all by S * 1000003, to run programs that
 * CI never runs. */
static uint64_t seed_at(long first, long p) { return (uint64_t)(first + env_long("MIST_JIT_SEED", 0) * 1000003L + p); }

/* ---- the two modes ---- */

typedef struct Mode {
  MistVM *vm;
  Buf out, log;
} Mode;

static void mode_new(Mode *m, bool graph) {
  /* the log is read when the VM is made */
  setenv("MIST_JIT_LOG", "1", 1);
  m->vm = mist_new(0, NULL);
  unsetenv("MIST_JIT_LOG");
  ck_assert_ptr_nonnull(m->vm);
  buf_clear(&m->out);
  buf_clear(&m->log);
  mist_set_write(m->vm, capture, &m->out);
  mist_set_write_err(m->vm, capture, &m->log, false);
  mist_set_graph_mode(m->vm, graph);
}

static void mode_free(Mode *m) {
  mist_free(m->vm);
  buf_free(&m->out);
  buf_free(&m->log);
}

/* What src prints in m, then its error if it fails. */
static void run_in(Mode *m, const char *src, Buf *result) {
  buf_clear(&m->out);
  MistStatus s = mist_eval(m->vm, "<t>", src, false);
  buf_clear(result);
  buf_add(result, m->out.data, m->out.len);
  if (s != MIST_OK) {
    const char *e = mist_error(m->vm);
    buf_add(result, "--> ", 4);
    buf_add(result, e, strlen(e));
  }
}

static int count_lines(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* Run prog then call in both modes: the same output and errors. */
static void same_in_both(Mode *eager, Mode *graph, const char *prog, const char *call, const char *what) {
  Buf a = {0}, b = {0};
  run_in(eager, prog, &a);
  run_in(graph, prog, &b);
  ck_assert_msg(strcmp(a.data, b.data) == 0, "%s: defining differs:\n%s\neager: %s\ngraph: %s", what, prog, a.data,
                b.data);
  run_in(eager, call, &a);
  run_in(graph, call, &b);
  ck_assert_msg(strcmp(a.data, b.data) == 0, "%s:\n%s%s\neager:\n%s\ngraph:\n%s", what, prog, call, a.data, b.data);
  buf_free(&a);
  buf_free(&b);
}

/* An eager VM and a graph-mode VM, made fresh every 50 programs (each
 * keeps every program's functions), and the compilations the graph-mode
 * ones logged (lines with `counted`) and how many were native. */
typedef struct Pair {
  Mode eager, graph;
  const char *counted;
  int native, all;
  int native_counted;   /* of the lines with `counted` */
  const char *counted2; /* another function counted apart, or NULL */
  int native2, all2;
} Pair;

/* Lines of the log that start with prefix and say the code is native. */
static int count_native(const char *log, const char *prefix) {
  int n = 0;
  for (const char *p = log; (p = strstr(p, prefix)); p += strlen(prefix)) {
    const char *end = strchr(p, '\n');
    const char *c = strstr(p, ": compiled (");
    n += c && (!end || c < end);
  }
  return n;
}

static void pair_tally(Pair *p) {
  /* a function may run in the interpreter, but never because the
   * lowering made code LLVM rejects */
  const char *bad = strstr(p->graph.log.data, "LLVM's verifier");
  ck_assert_msg(!bad, "the lowering made invalid code: %.300s", bad ? bad : "");
  p->native += count_lines(p->graph.log.data, ": compiled (");
  p->native_counted += count_native(p->graph.log.data, p->counted);
  p->all += count_lines(p->graph.log.data, p->counted);
  if (p->counted2) {
    p->native2 += count_native(p->graph.log.data, p->counted2);
    p->all2 += count_lines(p->graph.log.data, p->counted2);
  }
  mode_free(&p->eager);
  mode_free(&p->graph);
}

/* Most compilations of the counted function (what) went native. */
static void assert_mostly_native(int native, int all, const char *what) {
  ck_assert_msg(all > 0 && native * 100 >= 80 * all, "only %d of %d compilations of %s native", native, all, what);
}

static void pair_turn(Pair *p, long k) {
  if (k % 50) return;
  if (k) pair_tally(p);
  mode_new(&p->eager, false);
  mode_new(&p->graph, true);
}

/* ---- adgen's float programs ---- */

static void adgen_both(const AdGenOpts *opts, long total, int min_native_percent) {
  Pair pr = {.counted = "jit: "};
  Buf prog = {0}, call = {0};
  for (long p = 0; p < total; p++) {
    pair_turn(&pr, p);
    uint64_t seed = seed_at(7000003L, p);
    int np = adgen_program(seed, opts, &prog);
    buf_clear(&call);
    buf_add(&call, "print(f", 7);
    adgen_point(seed, np, &call);   /* "(x, y, )": the arguments */
    buf_add(&call, ")\n", 2);
    char what[64];
    snprintf(what, sizeof what, "adgen seed %" PRIu64, seed);
    same_in_both(&pr.eager, &pr.graph, prog.data, call.data, what);
  }
  pair_tally(&pr);
  free(prog.data);
  free(call.data);
  printf("adgen%s: %d of %d compilations native\n", opts->containers ? " (containers)" : "", pr.native, pr.all);
  ck_assert_msg(pr.all > 0, "graph mode compiled nothing");
  ck_assert_msg(pr.native * 100 >= min_native_percent * pr.all, "only %d of %d compilations native", pr.native, pr.all);
}

static const AdGenOpts PLAIN = {false, false, false, 0, false};
static const AdGenOpts CONTAINERS = {true, false, false, 0, false};
static const AdGenOpts NESTED = {false, false, false, 1, false};
/* (adgen's extras: built string keys, keywords and defaults, int
 * tensors, while True, mutual recursion) */
static const AdGenOpts EXTRAS = {.containers = true, .extras = true};

START_TEST(t_adgen_plain) { adgen_both(&PLAIN, env_long("MIST_JIT_PROGRAMS", 100), 80); }
END_TEST

/* (lists and dicts run in the interpreter: only the results are compared) */
START_TEST(t_adgen_containers) { adgen_both(&CONTAINERS, env_long("MIST_JIT_PROGRAMS", 100) / 2, 0); }
END_TEST

/* ---- derivatives of adgen's programs ----
 *
 * grad, value_and_grad (of every argument), grad of jit(f) and jvp of
 * each program's f (and of jit(f), and jit of a function that calls
 * jvp), in both modes: graph mode compiles the programs
 * autodiff makes (docs/jit.md, "Derivatives"), and they must give
 * eager mode's bits.  Eager mode's derivatives are checked against
 * central differences by test_autodiff; here graph mode's grad is also
 * held against them where f is smooth enough for a difference to tell
 * (the share that agrees is printed and must be most of them). */
static void grad_call(Buf *call, uint64_t seed, int np) {
  Buf pt = {0};
  adgen_point(seed, np, &pt);   /* "(x, y, )" */
  const char *args = pt.data;
  /* the same point with the first argument moved by h */
  char moved[2][512];
  const char *rest = strchr(args, ',');
  for (int s = 0; s < 2; s++)
    snprintf(moved[s], sizeof moved[s], "(%.*s %c 1e-6%s", (int)(rest - args - 1), args + 1, s ? '-' : '+', rest);
  buf_clear(call);
  adgen_printf(call, "print(grad(f)%s)\n", args);
  adgen_printf(call, "print(value_and_grad(f, argnums=tuple(range(%d)))%s)\n", np, args);
  adgen_printf(call, "print(grad(jit(f))%s)\n", args);
  adgen_printf(call, "print(jvp(f, %s, (1.0,) * %d))\n", args, np);
  adgen_printf(call, "print(jvp(jit(f), %s, (0.5,) + (None,) * %d))\n", args, np - 1);
  adgen_printf(call, "print(jit(lambda t: jvp(f, %s, t))((-1.0,) * %d))\n", args, np);
  /* central differences of the first argument, beside grad's */
  adgen_printf(call,
               "_d = (f%s - f%s) / 2e-6\n"
               "_g = grad(f)%s\n"
               "print('cdiff', abs(_g - _d) <= 1e-4 * (1 + abs(_g)))\n",
               moved[0], moved[1], args);
  free(pt.data);
}

START_TEST(t_adgen_grad) {
  long total = env_long("MIST_JIT_PROGRAMS", 100) / 2;
  /* (F(f) takes its tangents first: "f((float, ...), float...)") */
  Pair pr = {.counted = "jit: grad(f)(", .counted2 = "jit: f(("};
  Buf prog = {0}, call = {0};
  int agree = 0, compared = 0;
  for (long p = 0; p < total; p++) {
    pair_turn(&pr, p);
    uint64_t seed = seed_at(9100003L, p);
    /* every other program with lists, tuples and dicts too (a fourth
     * with adgen's extras), and every third with derivatives taken
     * inside f (grad of grad, jvp of vjp) */
    int np = adgen_program(seed, p % 3 == 2 ? &NESTED : p % 4 == 3 ? &EXTRAS : p % 2 ? &CONTAINERS : &PLAIN, &prog);
    grad_call(&call, seed, np);
    char what[64];
    snprintf(what, sizeof what, "adgen grad seed %" PRIu64, seed);
    Buf a = {0};
    run_in(&pr.eager, prog.data, &a);
    run_in(&pr.graph, prog.data, &a);
    run_in(&pr.eager, call.data, &a);
    Buf b = {0};
    run_in(&pr.graph, call.data, &b);
    ck_assert_msg(strcmp(a.data, b.data) == 0, "%s:\n%s%s\neager:\n%s\ngraph:\n%s", what, prog.data, call.data, a.data,
                  b.data);
    agree += count_lines(b.data, "cdiff True");
    compared += count_lines(b.data, "cdiff ");
    buf_free(&a);
    buf_free(&b);
  }
  pair_tally(&pr);
  free(prog.data);
  free(call.data);
  printf("adgen grad: %d of %d compilations of grad(f) native, %d of %d of jvp's F(f); central differences agree "
         "on %d of %d\n", pr.native_counted, pr.all, pr.native2, pr.all2, agree, compared);
  assert_mostly_native(pr.native_counted, pr.all, "grad(f)");
  assert_mostly_native(pr.native2, pr.all2, "jvp's F(f)");
  ck_assert_msg(compared > 0 && agree * 100 >= 80 * compared, "central differences agree on only %d of %d", agree,
                compared);
}
END_TEST

/* ---- forward mode's rare cases ----
 *
 * Compiled jvp programs do the tangent rules of floats inline and call
 * the rule where its C would not compute the pair itself (autodiff/
 * tangents.c): each such case, in a loop, gives eager mode's result or
 * error, message and traceback included, and the jvp programs compile
 * natively. */
START_TEST(t_jvp_rare) {
  static const char *const cases[] = {
    "x / (3.0 - i)",            /* division by zero on the 4th turn */
    "exp(x * (200.0 * i))",     /* overflow */
    "log(x - i)",               /* a domain error */
    "sqrt(x - 0.5 * i)",
    "sin(x / (i - 2.0 + 1e-300 * 0.0)) * 0.0 + cos(x * i)",   /* sin of inf */
    "x * 9007199254740993 + (i - 9007199254740993) / x",     /* ints past 2**53 */
    "x * i - i * 3 + -x + tanh(x) * (i // 2)",
    "(x if i % 2 else -x) / 4 - 1 / (x + i)",
  };
  Pair pr = {.counted = "jit: f(("};
  pair_turn(&pr, 0);
  Buf prog = {0};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    buf_clear(&prog);
    adgen_printf(&prog, "def f(x):\n    s = 0.0\n    for i in range(6):\n        s = s + %s\n    return s\n", cases[c]);
    char what[64];
    snprintf(what, sizeof what, "jvp case %zu", c);
    same_in_both(&pr.eager, &pr.graph, prog.data, "print(jvp(f, (2.5,), (1.0,)), jvp(f, (0.75,), (None,)))\n", what);
  }
  pair_tally(&pr);
  free(prog.data);
  ck_assert_msg(pr.native_counted == pr.all && pr.all >= 8, "%d of %d jvp programs native", pr.native_counted, pr.all);
}
END_TEST

/* ---- the tape of a loop's backward pass ----
 *
 * adgen's programs with long loops (60 to 139 turns for half of them),
 * some with an if (with or without else, or if/elif/else) or another
 * loop in a loop's body (which may hold a third loop or a break, and be
 * followed by an if in the outer turn): grad,
 * value_and_grad and a vjp pullback called twice, in both modes.
 * Compiled derivatives keep a loop's turns on a tape (docs/jit.md),
 * whose buffer grows past its first 64 turns here; the log says where
 * one was made, and some must have been, of a loop with an if, of a
 * loop whose turns hold the tape of a loop in its body, of one whose
 * turns hold it in a union (an if after the inner loop, or a break out
 * of it) and of one three loops deep. */
static const AdGenOpts LONG_PLAIN = {false, false, false, 0, false, true, true};
static const AdGenOpts LONG_CONTAINERS = {true, false, false, 0, false, true, true};
/* (every for loop's body another loop: the shapes of loops in loops) */
static const AdGenOpts LONG_NESTED = {false, false, false, 0, false, true, true, true};

START_TEST(t_adgen_tape) {
  long total = env_long("MIST_JIT_PROGRAMS", 100) / 12;   /* (long loops compile slowly) */
  if (total < 1) total = 1;   /* (pair_tally needs the pair that a first program makes) */
  long plain = total;
  total += total / 2 + 2;   /* (then programs whose for loops all hold loops) */
  Pair pr = {.counted = "jit: grad(f)("};
  Buf prog = {0}, call = {0}, pt = {0};
  int taped = 0, ifs = 0, nested = 0, elses = 0, taped_ifs = 0, taped_nested = 0;
  int deep = 0, left = 0, taped_deep = 0, taped_left = 0;
  for (long p = 0; p < total; p++) {
    pair_turn(&pr, p);
    uint64_t seed = seed_at(7300001L, p);
    int np = adgen_program(seed, p >= plain ? &LONG_NESTED : p % 2 ? &LONG_CONTAINERS : &LONG_PLAIN, &prog);
    ifs += count_lines(prog.data, "# an if in a loop's body") + count_lines(prog.data, "# an if without else in a loop's body") +
           count_lines(prog.data, "# an if/elif/else in a loop's body");
    nested += count_lines(prog.data, "# a loop in a loop's body") + count_lines(prog.data, "# a loop with an if in a loop's body");
    elses += count_lines(prog.data, "# a loop's else block");
    deep += count_lines(prog.data, "# a loop in a loop in a loop's body");
    left += count_lines(prog.data, "# an if after a loop in a loop's body") +
            count_lines(prog.data, "# a break out of a loop in a loop's body");
    buf_clear(&pt);
    adgen_point(seed, np, &pt);   /* "(x, y, )" */
    buf_clear(&call);
    adgen_printf(&call, "print(grad(f)%s)\n", pt.data);
    adgen_printf(&call, "print(value_and_grad(f, argnums=tuple(range(%d)))%s)\n", np, pt.data);
    adgen_printf(&call, "_y, _pb = jit(vjp)(f, %s\nprint(_y, _pb(1.0), _pb(-0.5))\n", pt.data + 1);
    char what[64];
    snprintf(what, sizeof what, "adgen tape seed %" PRIu64, seed);
    /* the lowering's notes (a tape made) go to the process's stderr */
    fflush(stderr);
    FILE *notes = tmpfile();
    ck_assert_ptr_nonnull(notes);
    int saved = dup(2);
    dup2(fileno(notes), 2);
    setenv("MIST_JIT_LOG", "1", 1);
    same_in_both(&pr.eager, &pr.graph, prog.data, call.data, what);
    unsetenv("MIST_JIT_LOG");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char line[512];
    rewind(notes);
    while (fgets(line, sizeof line, notes)) {
      bool tape = strstr(line, " on a tape ") != NULL;
      taped += tape;
      /* (a turn that is one of a few closures: an if's branches) */
      taped_ifs += tape && strstr(line, " | ") != NULL;
      /* (a turn that holds the tape of a loop it ran, over this one) */
      const char *over = strstr(line, " over the tape of ");
      taped_nested += tape && over;
      /* (three deep: the middle loop's tape over the inner one's) */
      taped_deep += tape && over && strstr(over + 1, " over the tape of ");
      /* (a union of closures over the inner loop's tape: an if after
       * it, or a break out of it) */
      const char *u = strstr(line, "(@");
      taped_left += tape && u && strstr(u, " over the tape of ");
    }
    fclose(notes);
  }
  pair_tally(&pr);
  free(prog.data);
  free(call.data);
  free(pt.data);
  printf("adgen tape: %d of %d compilations of grad(f) native; %d tapes made in %ld programs, %d of them of a loop "
         "with an if, %d of a loop with a loop's tape in its turns, %d of them in a union, %d three loops deep (%d "
         "loops with an if in the body, %d in another loop's body, %d of them followed by an if or left by a break, "
         "%d three deep, %d with an else block)\n",
         pr.native_counted, pr.all, taped, total, taped_ifs, taped_nested, taped_left, taped_deep, ifs, nested, left,
         deep, elses);
  ck_assert_msg(ifs > 0 && nested > 0, "no loop with an if (%d) or a loop (%d) in its body", ifs, nested);
  ck_assert_msg(left > 0 && deep > 0, "no loop in a loop's body followed by an if or left by a break (%d), or three "
                "deep (%d)", left, deep);
  ck_assert_msg(taped_ifs > 0, "no tape of a loop with an if in its body (%d such loops)", ifs);
  ck_assert_msg(taped_nested > 0, "no tape of a loop whose turns hold a loop's tape (%d loops in a loop's body)", nested);
  ck_assert_msg(taped_left > 0, "no tape of a loop whose turns hold a loop's tape in a union (%d such loops)", left);
  ck_assert_msg(taped_deep > 0, "no tape of a loop three deep (%d such loops)", deep);
  assert_mostly_native(pr.native_counted, pr.all, "grad(f)");
  ck_assert_msg(taped * 4 >= total, "only %d tapes made in %ld programs", taped, total);
}
END_TEST

/* ---- intgen: int programs ---- */

typedef struct Rng {
  uint64_t s;
} Rng;

static uint64_t next(Rng *r) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}

static int rnd(Rng *r, int n) { return (int)(next(r) % (uint64_t)n); }

static void say(Buf *b, const char *fmt, ...) {
  char tmp[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof tmp) abort();   /* (not ck_assert: MIST_JIT_SHOW runs outside a test) */
  buf_add(b, tmp, (size_t)n);
}

/* A constant: small ones mostly, some near the int range's ends (which
 * overflow), zero now and then (which divides by zero), a float rarely. */
static void constant(Rng *r, Buf *b) {
  switch (rnd(r, 12)) {
  case 0: say(b, "%lld", 3037000499LL + rnd(r, 3)); break;   /* its square overflows */
  case 1: say(b, "9223372036854775807"); break;
  case 2: say(b, "0"); break;
  case 3: say(b, "%d.%d", rnd(r, 10), rnd(r, 100)); break;
  default: say(b, "%d", rnd(r, 41) - 20);
  }
}

static void expr(Rng *r, Buf *b, int depth, int nvars) {
  static const char *const ops[] = {"+", "-", "*", "//", "%", "+", "-", "*"};
  static const char *const cmps[] = {"<", "<=", ">", ">=", "==", "!="};
  int k = depth <= 0 ? rnd(r, 2) : rnd(r, 9);
  switch (k) {
  case 0: say(b, "v%d", rnd(r, nvars)); return;
  case 1: constant(r, b); return;
  case 2: case 3: case 4: case 5:
    say(b, "(");
    expr(r, b, depth - 1, nvars);
    say(b, " %s ", ops[rnd(r, 8)]);
    expr(r, b, depth - 1, nvars);
    say(b, ")");
    return;
  case 6:
    say(b, "(");
    expr(r, b, depth - 1, nvars);
    say(b, " if ");
    expr(r, b, depth - 1, nvars);
    say(b, " %s ", cmps[rnd(r, 6)]);
    expr(r, b, depth - 1, nvars);
    say(b, " else ");
    expr(r, b, depth - 1, nvars);
    say(b, ")");
    return;
  case 7:
    say(b, "(-");
    expr(r, b, depth - 1, nvars);
    say(b, ")");
    return;
  default:
    say(b, "h(");
    expr(r, b, depth - 1, nvars);
    say(b, ", %d)", rnd(r, 4));
    return;
  }
}

/* h(x, k): a recursive helper; g(v0, v1, k): one that calls itself
 * twice, with a random base case (graph mode inlines chains of its
 * copies and tests its base case before calling, docs/jit.md
 * "Frames"); f(v0, v1, v2): statements over int variables v0..v4, a
 * call of g, then a tuple of them.  (g's choices come from a generator
 * of their own: f's programs are those made before g was.) */
static void intgen(uint64_t seed, Buf *b) {
  Rng r = {seed * 0x9e3779b97f4a7c15ull + 1}, rg = {seed * 0x2545f4914f6cdd1dull + 3};
  buf_clear(b);
  say(b, "def h(x, k):\n    if k <= 0:\n        return x\n    return h(x * 3 - k, k - 1) // 2\n\n");
  say(b, "def g(v0, v1, k):\n    if k <= %d:\n        return ", rnd(&rg, 2));
  expr(&rg, b, 1, 2);
  say(b, "\n    return g(v0 - 1, v1, k - 1) %s g(v1, v0 // 2, k - 2)\n\n", rnd(&rg, 2) ? "+" : "-");
  say(b, "def f(v0, v1, v2):\n");
  int nvars = 3;
  int nst = 3 + rnd(&r, 5);
  for (int s = 0; s < nst; s++) {
    int target = nvars < 5 && rnd(&r, 2) ? nvars++ : rnd(&r, nvars);
    switch (rnd(&r, 4)) {
    case 0:
      say(b, "    if ");
      expr(&r, b, 1, nvars);
      say(b, " < ");
      expr(&r, b, 1, nvars);
      say(b, ":\n        v%d = ", target);
      expr(&r, b, 2, nvars);
      say(b, "\n    else:\n        v%d = ", target);
      expr(&r, b, 2, nvars);
      say(b, "\n");
      break;
    case 1:
      say(b, "    i = 0\n    while i < %d:\n        v%d = ", 1 + rnd(&r, 6), target);
      expr(&r, b, 2, nvars);
      say(b, "\n        i += 1\n");
      break;
    default:
      say(b, "    v%d = ", target);
      expr(&r, b, 3, nvars);
      say(b, "\n");
    }
  }
  say(b, "    v0 = v0 + g(v%d, v%d, %d)\n", rnd(&rg, nvars), rnd(&rg, nvars), 2 + rnd(&rg, 7));
  say(b, "    return (");
  for (int i = 0; i < nvars; i++) say(b, "v%d, ", i);
  say(b, ")\n");
}

START_TEST(t_intgen) {
  long total = env_long("MIST_JIT_PROGRAMS", 100);
  Pair pr = {.counted = "jit: f(", .counted2 = "jit: f(("};
  Buf prog = {0}, call = {0};
  for (long p = 0; p < total; p++) {
    pair_turn(&pr, p);
    uint64_t seed = seed_at(100, p);
    intgen(seed, &prog);
    static const char *const args[] = {"(3, -7, 11)", "(-2, 5, 0)", "(100, 3, -1)", "(1099511627776, 7, 3)"};
    for (int a = 0; a < 6; a++) {
      /* and jvp of f without tangents (forward mode's rules on ints,
       * their overflow and division by zero), and with a float one */
      buf_clear(&call);
      if (a < 4) say(&call, "print(f%s)\n", args[a]);
      else say(&call, "print(jvp(f, %s, %s))\n", args[a == 4 ? 2 : 3], a == 4 ? "(None, None, None)" : "(1.0, None, None)");
      char what[64];
      snprintf(what, sizeof what, "intgen seed %" PRIu64, seed);
      same_in_both(&pr.eager, &pr.graph, prog.data, call.data, what);
    }
  }
  pair_tally(&pr);
  free(prog.data);
  free(call.data);
  printf("intgen: %d of %d compilations of f native (of them jvp's F(f): %d of %d)\n", pr.native_counted, pr.all,
         pr.native2, pr.all2);
  assert_mostly_native(pr.native_counted, pr.all, "f");
  assert_mostly_native(pr.native2, pr.all2, "jvp's F(f)");
}
END_TEST

/* The generator makes programs that fail too: overflow and division by
 * zero must be compared, not only results. */
START_TEST(t_intgen_fails_sometimes) {
  Mode eager = {0};
  mode_new(&eager, false);
  Buf prog = {0}, out = {0};
  int overflow = 0, zero = 0;
  for (uint64_t seed = 100; seed < 300; seed++) {
    intgen(seed, &prog);
    run_in(&eager, prog.data, &out);
    run_in(&eager, "print(f(1099511627776, 7, 3))\n", &out);
    overflow += strstr(out.data, "integer overflow") != NULL;
    zero += strstr(out.data, "by zero") != NULL;
  }
  mode_free(&eager);
  free(prog.data);
  free(out.data);
  ck_assert_msg(overflow >= 5 && zero >= 5, "overflows %d, divisions by zero %d", overflow, zero);
}
END_TEST

/* ---- matgen: matrix programs ----
 *
 * Products of f32 or f64 matrices of random small shapes (1s among
 * them), with operands transposed in every way, inside + - * (whose
 * temporaries graph mode, as eager mode, may overwrite), x - s * y (one
 * pass) and relu, and the gradient of such an expression with respect
 * to every matrix (matmul_sens): graph mode's direct products
 * (jit/matmul.c) must give eager mode's bits, printed exactly (as
 * f64 lists).  A program now and then multiplies matrices that do not
 * align: the error must be eager mode's. */

/* An expression of shape (m, n) over a (m, k), b (k, n), c (m, n),
 * at (k, m), bt (n, k) and the float s. */
static void matexpr(Rng *r, Buf *b, int depth, bool misalign) {
  static const char *const leaves[] = {"c", "(a @ b)", "(a @ bt.T)", "(at.T @ b)", "(at.T @ bt.T)"};
  if (depth <= 0 || rnd(r, 4) == 0) {
    say(b, "%s", misalign && rnd(r, 3) == 0 ? "(a @ c)" : leaves[rnd(r, 5)]);
    return;
  }
  switch (rnd(r, 7)) {
  case 0: case 1: case 2:
    say(b, "(");
    matexpr(r, b, depth - 1, misalign);
    say(b, " %s ", (const char *[]){"+", "-", "*"}[rnd(r, 3)]);
    matexpr(r, b, depth - 1, misalign);
    say(b, ")");
    break;
  case 3: case 4:
    /* x +- s * y, the product first or second */
    say(b, "(");
    matexpr(r, b, depth - 1, misalign);
    say(b, rnd(r, 2) ? " - s * " : " + ");
    matexpr(r, b, depth - 1, misalign);
    say(b, rnd(r, 2) ? " * s)" : ")");
    break;
  default:
    say(b, "relu(");
    matexpr(r, b, depth - 1, misalign);
    say(b, ")");
  }
}

static void matgen(uint64_t seed, Buf *b, Buf *call) {
  Rng r = {seed * 0x9e3779b97f4a7c15ull + 7};
  buf_clear(b);
  buf_clear(call);
  bool misalign = rnd(&r, 8) == 0;
  say(b, "def f(a, b, c, at, bt, s):\n    return ");
  matexpr(&r, b, 3, misalign);
  say(b, "\n\n\ndef g(a, b, c, at, bt, s):\n    return sum(");
  matexpr(&r, b, 2, false);
  say(b, " * c)\n");
  int m = 1 + rnd(&r, 5), k = 1 + rnd(&r, 5), n = 1 + rnd(&r, 5);
  const char *dt = rnd(&r, 2) ? "f32" : "f64";
  say(call, "def _m(r, c, p):\n    return astype(reshape(sin(arange(r * c) * 0.37 + p), (r, c)), \"%s\")\n", dt);
  const char *args = "(_m(%d, %d, 0.1), _m(%d, %d, 0.2), _m(%d, %d, 0.3), _m(%d, %d, 0.4), _m(%d, %d, 0.5), 0.25)";
  say(call, "print(astype(f");
  say(call, args, m, k, k, n, m, n, k, m, n, k);
  say(call, ", \"f64\").tolist())\nfor _g in grad(g, argnums=(0, 1, 3, 4))");
  say(call, args, m, k, k, n, m, n, k, m, n, k);
  say(call, ":\n    print(astype(_g, \"f64\").tolist())\n");
}

START_TEST(t_matgen) {
  long total = env_long("MIST_JIT_PROGRAMS", 100) / 4;
  Pair pr = {.counted = "jit: f("};
  Buf prog = {0}, call = {0};
  for (long p = 0; p < total; p++) {
    pair_turn(&pr, p);
    uint64_t seed = seed_at(500, p);
    matgen(seed, &prog, &call);
    char what[64];
    snprintf(what, sizeof what, "matgen seed %" PRIu64, seed);
    same_in_both(&pr.eager, &pr.graph, prog.data, call.data, what);
  }
  pair_tally(&pr);
  free(prog.data);
  free(call.data);
  printf("matgen: %d of %d compilations of f native\n", pr.native_counted, pr.all);
  assert_mostly_native(pr.native_counted, pr.all, "f");
}
END_TEST

/* ---- tensorgen: elementwise tensor programs ----
 *
 * Chains of elementwise operations on tensors of every dtype, the way
 * graph mode fuses them into loops (jit/llvm/fuse.c): arithmetic,
 * comparisons, where, clip, casts, powers, transcendentals, with
 * broadcasting (a row, a column) and Python numbers, sometimes reduced
 * (sum, mean, max, min, prod: whole, over the first, a middle or the
 * last axis or a tuple of axes, keepdims or not; argmax, argmin, any,
 * all, and sums of bools and integers).  The results are printed
 * through tolist(), whose floats print every bit, NaN, inf and -0.0
 * included, so any difference from eager mode shows. */

static const char *const tvars[] = {"a", "b", "c", "d", "e", "t0", "t1"};

static void texpr(Rng *r, Buf *b, int depth, int nvars) {
  static const char *const nums[] = {"0.5", "-1.5", "2", "-3", "0", "1e30", "0.0", "7"};
  static const char *const ops[] = {"+", "-", "*", "/"};
  static const char *const cmps[] = {"<", "<=", ">", ">=", "==", "!="};
  static const char *const dts[] = {"f32", "f64", "i32", "i64", "bool"};
  static const char *const un[] = {"-", "abs", "relu", "exp", "tanh", "sigmoid", "sin", "cos"};
  int k = depth <= 0 ? rnd(r, 3) : rnd(r, 16);
  switch (k) {
  case 0: case 1: say(b, "%s", tvars[rnd(r, nvars)]); return;
  case 2: say(b, "%s", nums[rnd(r, 8)]); return;
  case 3: case 4: case 5:
    say(b, "(");
    texpr(r, b, depth - 1, nvars);
    say(b, " %s ", ops[rnd(r, 4)]);
    texpr(r, b, depth - 1, nvars);
    say(b, ")");
    return;
  case 6:
    say(b, rnd(r, 2) ? "maximum(" : "minimum(");
    texpr(r, b, depth - 1, nvars);
    say(b, ", ");
    texpr(r, b, depth - 1, nvars);
    say(b, ")");
    return;
  case 7: case 8:
    if (k == 7) say(b, "where(");
    say(b, "(");
    texpr(r, b, depth - 1, nvars);
    say(b, " %s ", cmps[rnd(r, 6)]);
    texpr(r, b, depth - 1, nvars);
    say(b, ")");
    if (k == 7) {
      say(b, ", ");
      texpr(r, b, depth - 1, nvars);
      say(b, ", ");
      texpr(r, b, depth - 1, nvars);
      say(b, ")");
    }
    return;
  case 9:
    say(b, "clip(");
    texpr(r, b, depth - 1, nvars);
    say(b, ", %s, %s)", rnd(r, 2) ? "-1.0" : "-2", rnd(r, 2) ? "2.5" : "b");
    return;
  case 10:   /* (a tensor: a number has no astype) */
    say(b, "(%s + ", tvars[rnd(r, 5)]);
    texpr(r, b, depth - 1, nvars);
    say(b, ").astype(\"%s\")", dts[rnd(r, 5)]);
    return;
  case 11: case 12: {
    const char *f = un[rnd(r, 8)];
    say(b, "%s(", f);
    texpr(r, b, depth - 1, nvars);
    say(b, ")");
    return;
  }
  case 13:
    say(b, rnd(r, 2) ? "sqrt(abs(" : "log(abs(");
    texpr(r, b, depth - 1, nvars);
    say(b, ") + 0.5)");
    return;
  case 14:
    say(b, "(");
    texpr(r, b, depth - 1, nvars);
    say(b, "%s", rnd(r, 3) == 0 ? " ** 2)" : rnd(r, 2) ? " ** 3)" : " * 1.0) ** 0.5");
    return;
  default:
    say(b, "(%s * ", tvars[rnd(r, 5)]);
    texpr(r, b, depth - 1, nvars);
    say(b, ").astype(\"f32\") * 0.25 + ");
    texpr(r, b, depth - 1, nvars);
    return;
  }
}

/* f(a, b, c, d, e): a f32[R,C], b f32[C], c i64[R,C], d i32[R,1], e
 * f64[R,C]; temporaries t0, t1, then the result, maybe reduced. */
static void tensorgen(uint64_t seed, Buf *b) {
  Rng r = {seed * 0x9e3779b97f4a7c15ull + 7};
  buf_clear(b);
  say(b, "def f(a, b, c, d, e):\n");
  int nvars = 5;
  for (int t = 0; t < 2; t++) {
    say(b, "    t%d = %s - ", t, tvars[rnd(&r, nvars)]);
    texpr(&r, b, 3, nvars);
    say(b, "\n");
    nvars++;
  }
  /* (times ones((2, 1, 1)): a 3-d chain, for reductions over its middle axis) */
  static const char *const red[] = {"%s", "%s", "(%s).sum()", "sum(%s, axis=0)", "(%s).sum(-1)",
                                    "mean(%s, 0)", "(%s).mean(axis=-1, keepdims=True)", "(%s).sum(axis=0, keepdims=True)",
                                    "max(%s, axis=0)", "(%s).min(-1)", "max(%s)", "min(%s, axis=-1, keepdims=True)",
                                    "(%s).prod(axis=0)", "max((%s) * ones((2, 1, 1)), axis=1)",
                                    "sum((%s) * ones((2, 1, 1)), axis=-2, keepdims=True)",
                                    "((%s) * ones((2, 1, 1))).mean(1)", "min((%s) * ones((2, 1, 1)), 1, True)",
                                    "prod((%s) * ones((2, 1, 1)), axis=None)",
                                    /* over a tuple of axes: adjacent (the leading ones, the last
                                     * ones, all), or not (left to eager mode) */
                                    "sum((%s) * ones((2, 1, 1)), axis=(1, 2))",
                                    "((%s) * ones((2, 1, 1))).mean(axis=(0, 1))",
                                    "max((%s) * ones((2, 1, 1)), axis=(-1, -2), keepdims=True)",
                                    "min((%s) * ones((2, 1, 1)), axis=(2, 0))", "sum(%s, axis=(1, 0))",
                                    /* argmax and argmin, any and all, integer sums (counts) */
                                    "argmax(%s, axis=0)", "(%s).argmin(-1)", "argmax(%s)",
                                    "argmin((%s) * ones((2, 1, 1)), axis=1, keepdims=True)", "any(%s)",
                                    "(%s).all(axis=0)", "all((%s) > 0.5, axis=-1, keepdims=True)",
                                    "any((%s) * ones((2, 1, 1)) != 1.0, axis=(1, 2))", "sum((%s) > 0)",
                                    "((%s) < 1.0).sum(axis=0)", "sum((%s).astype(\"i32\"), axis=-1)",
                                    "sum(((%s) * 3.0).astype(\"i64\") * ones((2, 1, 1), dtype=\"i64\"), axis=(0, 1))"};
  Buf e = {0};
  texpr(&r, &e, 3, nvars);
  say(b, "    r = (%s) + t0 - t1 + b\n", e.data);   /* (b has no NaN to hide the others) */
  say(b, "    return ");
  say(b, red[rnd(&r, (int)(sizeof red / sizeof *red))], "r");
  say(b, "\n");
  free(e.data);
}

/* Whether this machine fuses (docs/jit.md: AVX-512F, no MIST_JIT_CPU). */
static bool fuses_here(void) {
  const char *cpu = getenv("MIST_JIT_CPU");
  if (cpu && *cpu) return false;
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool yes = false;
  while (!yes && fgets(line, sizeof line, f)) yes = strstr(line, " avx512f") != NULL;
  fclose(f);
  return yes;
}

START_TEST(t_tensorgen) {
  long total = env_long("MIST_JIT_PROGRAMS", 100) / 2;
  Pair pr = {.counted = "jit: f("};
  Buf prog = {0}, call = {0};
  static const int shapes[][2] = {{3, 5}, {7, 33}, {2, 16}, {5, 1}};
  /* the lowering writes its fused loops' lines to stderr (with
   * MIST_JIT_LOG set when it compiles): into a file, to count them */
  fflush(stderr);
  int saved = dup(2);
  FILE *fusedlog = tmpfile();
  ck_assert(saved >= 0 && fusedlog && dup2(fileno(fusedlog), 2) >= 0);
  for (long p = 0; p < total; p++) {
    pair_turn(&pr, p);
    setenv("MIST_JIT_LOG", "1", 1);
    uint64_t seed = seed_at(1000, p);
    tensorgen(seed, &prog);
    const int *sh = shapes[p % 4];
    buf_clear(&call);
    say(&call,
        "_x = concat([randn((%d,), seed=%d) * 3.0, tensor([0.0, -0.0, float('nan'), float('inf'), -float('inf'), 1e-30, 88.0])])\n"
        "_a = _x[:%d].reshape((%d, %d))\n"
        "_b, _c, _d, _e = randn((%d,), seed=%d), astype(_a * 7.0, \"i64\"), astype(randn((%d, 1), seed=%d) * 4.0, \"i32\"), "
        "astype(_a, \"f64\") * 1.5\n"
        "print(f(_a, _b, _c, _d, _e).tolist())\n",
        sh[0] * sh[1], (int)p, sh[0] * sh[1], sh[0], sh[1], sh[1], (int)p + 1, sh[0], (int)p + 2);
    /* every other program: its pullback in the float arguments, with a
     * cotangent of the result's dtype or of another float dtype (where
     * inference once typed a sensitivity wrongly: sens_like_arg) */
    if (p % 2 == 0) {
      static const char *const cts[] = {"_y.dtype", "\"f32\"", "\"f64\""};
      say(&call,
          "_y, _pb = vjp(lambda a, e: f(a, _b, _c, _d, e), _a, _e)\n"
          "print([t.tolist() for t in _pb(astype(ones(_y.shape) * 0.5, %s))])\n",
          cts[(p / 2) % 3]);
    }
    char what[64];
    snprintf(what, sizeof what, "tensorgen seed %" PRIu64, seed);
    same_in_both(&pr.eager, &pr.graph, prog.data, call.data, what);
  }
  unsetenv("MIST_JIT_LOG");
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  Buf log = {0};
  char chunk[4096];
  size_t got;
  rewind(fusedlog);
  while ((got = fread(chunk, 1, sizeof chunk, fusedlog)) > 0) buf_add(&log, chunk, got);
  fclose(fusedlog);
  int fused = log.data ? count_lines(log.data, ": fused ") : 0;
  buf_free(&log);
  pair_tally(&pr);
  free(prog.data);
  free(call.data);
  printf("tensorgen: %d of %d compilations of f native, %d fused loops\n", pr.native_counted, pr.all, fused);
  assert_mostly_native(pr.native_counted, pr.all, "f");
  if (fuses_here()) ck_assert_msg(fused >= total, "only %d fused loops in %ld programs", fused, total);
}
END_TEST

/* ---- the compile cache: the same program, the same code ----
 *
 * The compile cache (docs/jit.md) hits only when a program lowers to the
 * same module in every process: something of the process that reaches
 * the module (an address, an order by address, a counter) makes every
 * run miss, silently, and was once found only by luck.  So programs of
 * each generator run twice, as separate processes of the mist binary,
 * on one new cache folder: the second run must print what the first
 * printed, and every function it compiles must come from the cache.
 * (Processes, not VMs: what differs between processes, addresses, does
 * not between two VMs of one process in the same way, and counters
 * such as IrNode.serial do the other way round.)  A module that holds
 * an address is never stored, by design, and the log says so: such
 * compilations are counted apart and must stay few.
 * MIST_JIT_CACHE_PROGRAMS (default 6) programs of each kind. */

/* The mist binary: MIST_BIN, else the build folder's, beside tests/. */
static void mist_binary(char *path, size_t size) {
  const char *env = getenv("MIST_BIN");
  if (env && *env) {
    snprintf(path, size, "%s", env);
    return;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert_msg(n > 0, "cannot find the mist binary: set MIST_BIN");
  self[n] = 0;
  char *slash = strrchr(self, '/');
  *slash = 0;   /* build/tests */
  snprintf(path, size, "%s/../mist", self);
}

static void read_into(const char *path, Buf *b) {
  buf_clear(b);
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  char chunk[4096];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(b, chunk, got);
  fclose(f);
  if (!b->data) buf_add(b, "", 0);
}

/* Run dir/p.ms in graph mode on the cache folder dir/cache: what it
 * printed (stdout, stderr without the log's lines, exit status) into
 * out, the log's compilation lines into log.  check: MIST_JIT_CACHE_CHECK
 * (a hit is lowered too and compared with the entry); without it, a
 * hit whose tables were stored does not lower at all. */
static void run_cached(const char *mist, const char *dir, bool check, Buf *out, Buf *log) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && MIST_CACHE_DIR='%s/cache' MIST_JIT_LOG=1 MIST_JIT_CACHE_CHECK=%d '%s' --mode=graph p.ms > p.out 2> p.err; "
           "echo \"exit $?\" >> p.out",
           dir, dir, check, mist);
  ck_assert_msg(system(cmd) == 0, "cannot run %s", cmd);
  char path[4200];
  snprintf(path, sizeof path, "%s/p.out", dir);
  read_into(path, out);
  Buf err = {0};
  snprintf(path, sizeof path, "%s/p.err", dir);
  read_into(path, &err);
  buf_clear(log);
  for (char *line = err.data, *end; *line; line = end + (*end != 0)) {
    end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    size_t len = (size_t)(end - line) + (*end != 0);   /* with its newline */
    const char *compiled = strstr(line, ": compiled (");
    if (strncmp(line, "jit: ", 5) != 0) buf_add(out, line, len);
    else if (compiled && compiled < end) buf_add(log, line, len);
  }
  if (!log->data) buf_add(log, "", 0);
  buf_free(&err);
}

typedef struct CacheTally {
  int programs, compiled, hits, unstorable;
  int unlowered;   /* hits whose tables were read, not lowered */
} CacheTally;

/* prog run twice on a new cache folder: the second run (twice: without
 * and with MIST_JIT_CACHE_CHECK) is the first's output, all of it from
 * the cache. */
static void twice_cached(const char *mist, const char *prog, const char *what, CacheTally *t) {
  char dir[] = "/tmp/mist_jit_cache_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[200];
  snprintf(path, sizeof path, "%s/p.ms", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(prog, f);
  fclose(f);
  Buf out1 = {0}, log1 = {0}, out2 = {0}, log2 = {0};
  run_cached(mist, dir, true, &out1, &log1);
  for (int round = 0; round < 2; round++) {
    /* unchecked, then checked: a hit that does not lower must leave the
     * process as one that lowers would (the serials of what is made
     * after it), or what follows misses */
    buf_clear(&out2);
    run_cached(mist, dir, round == 1, &out2, &log2);
    ck_assert_msg(strcmp(out1.data, out2.data) == 0, "%s: the second run (%s) printed otherwise:\n%s\nfirst:\n%s\nsecond:\n%s",
                  what, round ? "checked" : "unchecked", prog, out1.data, out2.data);
    int n1 = count_lines(log1.data, ": compiled ("), n2 = count_lines(log2.data, ": compiled (");
    ck_assert_msg(n1 == n2, "%s: %d compilations in the first run, %d in the second:\n%s\nfirst:\n%s\nsecond:\n%s", what,
                  n1, n2, prog, log1.data, log2.data);
    /* a hit, or the code of an earlier compilation of the same run */
    int hits = count_lines(log2.data, " ms): cached: ") + count_lines(log2.data, ", the same code as before");
    int unstorable = count_lines(log2.data, "not cached: the module holds an address");
    ck_assert_msg(hits + unstorable == n2, "%s: the second run (%s) on the first's cache compiled %d of %d functions again "
                  "(the same program lowered to another module):\n%s\nfirst:\n%s\nsecond:\n%s",
                  what, round ? "checked" : "unchecked", n2 - hits - unstorable, n2, prog, log1.data, log2.data);
    if (round == 0) {
      t->programs++;
      t->compiled += n2;
      t->hits += hits;
      t->unstorable += unstorable;
      t->unlowered += count_lines(log2.data, ": tables read, ");
    }
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  buf_free(&out1);
  buf_free(&log1);
  buf_free(&out2);
  buf_free(&log2);
}

START_TEST(t_cache_twice) {
  long total = env_long("MIST_JIT_CACHE_PROGRAMS", 6);
  char mist[4200];
  mist_binary(mist, sizeof mist);
  CacheTally t = {0};
  Buf prog = {0}, call = {0}, pt = {0};
  char what[64];
  for (long p = 0; p < total; p++) {
    /* adgen's programs with their derivatives (nested ones among them):
     * the kind that once missed */
    static const AdGenOpts *const kinds[] = {&PLAIN, &CONTAINERS, &NESTED};
    uint64_t seed = seed_at(9100003L, p);
    int np = adgen_program(seed, kinds[p % 3], &prog);
    grad_call(&call, seed, np);
    buf_add(&prog, call.data, call.len);
    snprintf(what, sizeof what, "cache: adgen grad seed %" PRIu64, seed);
    twice_cached(mist, prog.data, what, &t);
    /* a long loop's tape and a pullback */
    seed = seed_at(7300001L, p);
    np = adgen_program(seed, p % 2 ? &LONG_CONTAINERS : &LONG_PLAIN, &prog);
    buf_clear(&pt);
    adgen_point(seed, np, &pt);
    adgen_printf(&prog, "print(grad(f)%s)\n_y, _pb = jit(vjp)(f, %s\nprint(_y, _pb(1.0))\n", pt.data, pt.data + 1);
    snprintf(what, sizeof what, "cache: adgen tape seed %" PRIu64, seed);
    twice_cached(mist, prog.data, what, &t);
    /* ints, matrices and their gradients, fused tensor loops */
    seed = (uint64_t)(100 + p);
    intgen(seed, &prog);
    say(&prog, "print(f(3, -7, 11))\nprint(f(1099511627776, 7, 3))\n");
    snprintf(what, sizeof what, "cache: intgen seed %" PRIu64, seed);
    twice_cached(mist, prog.data, what, &t);
    seed = (uint64_t)(500 + p);
    matgen(seed, &prog, &call);
    buf_add(&prog, call.data, call.len);
    snprintf(what, sizeof what, "cache: matgen seed %" PRIu64, seed);
    twice_cached(mist, prog.data, what, &t);
    seed = (uint64_t)(1000 + p);
    tensorgen(seed, &prog);
    say(&prog, "_a = reshape(randn((35,), seed=%d) * 3.0, (7, 5))\n"
               "print(f(_a, randn((5,), seed=1), astype(_a * 7.0, \"i64\"), astype(randn((7, 1), seed=2) * 4.0, \"i32\"), "
               "astype(_a, \"f64\") * 1.5).tolist())\n", (int)p);
    snprintf(what, sizeof what, "cache: tensorgen seed %" PRIu64, seed);
    twice_cached(mist, prog.data, what, &t);
  }
  free(prog.data);
  free(call.data);
  free(pt.data);
  printf("cache: %d programs run twice; the second runs compiled %d functions, %d from the cache (%d of them not "
         "lowered: their tables were read), %d not storable\n",
         t.programs, t.compiled, t.hits, t.unlowered, t.unstorable);
  ck_assert_msg(t.hits > 0 && t.hits * 100 >= 90 * t.compiled, "only %d of %d compilations from the cache", t.hits,
                t.compiled);
  /* most hits link the object without lowering (jit/key.c's tables) */
  ck_assert_msg(t.unlowered * 2 >= t.hits, "only %d of %d hits without lowering", t.unlowered, t.hits);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("jit");
  TCase *t = tcase_create("modes");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, t_adgen_plain);
  tcase_add_test(t, t_adgen_containers);
  tcase_add_test(t, t_adgen_grad);
  tcase_add_test(t, t_jvp_rare);
  tcase_add_test(t, t_adgen_tape);
  tcase_add_test(t, t_intgen);
  tcase_add_test(t, t_intgen_fails_sometimes);
  tcase_add_test(t, t_matgen);
  tcase_add_test(t, t_tensorgen);
  suite_add_tcase(s, t);
  /* (a ctest of its own: unit/test_jit_cache) */
  TCase *c = tcase_create("cache");
  tcase_set_tags(c, "cache");
  tcase_set_timeout(c, 300);
  tcase_add_test(c, t_cache_twice);
  suite_add_tcase(s, c);
  return s;
}

int main(void) {
  const char *ashow = getenv("MIST_ADGEN_SHOW");
  if (ashow && *ashow) {
    /* an adgen program of this file's tests, with its options by name
     * (MIST_ADGEN_KIND: plain, containers, nested, long_plain,
     * long_containers, long_nested, extras), to run by hand */
    const char *kind = getenv("MIST_ADGEN_KIND");
    const AdGenOpts *o = &PLAIN;
    if (kind && !strcmp(kind, "containers")) o = &CONTAINERS;
    else if (kind && !strcmp(kind, "nested")) o = &NESTED;
    else if (kind && !strcmp(kind, "long_plain")) o = &LONG_PLAIN;
    else if (kind && !strcmp(kind, "long_containers")) o = &LONG_CONTAINERS;
    else if (kind && !strcmp(kind, "long_nested")) o = &LONG_NESTED;
    else if (kind && !strcmp(kind, "extras")) o = &EXTRAS;
    uint64_t seed = (uint64_t)strtoull(ashow, NULL, 10);
    Buf b = {0}, pt = {0};
    int np = adgen_program(seed, o, &b);
    adgen_point(seed, np, &pt);
    fputs(b.data, stdout);
    printf("# point: %s\n", pt.data);
    free(b.data);
    free(pt.data);
    return 0;
  }
  const char *show = getenv("MIST_JIT_SHOW");
  if (show && *show) {
    Buf b = {0};
    const char *tshow = getenv("MIST_JIT_SHOW_TENSOR");
    if (tshow && *tshow) tensorgen((uint64_t)strtoull(show, NULL, 10), &b);
    else intgen((uint64_t)strtoull(show, NULL, 10), &b);
    fputs(b.data, stdout);
    free(b.data);
    return 0;
  }
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
