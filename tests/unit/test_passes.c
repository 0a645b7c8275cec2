/* test_passes.c: the Check suite of the IR optimisation passes
 * (ir/passes.h: inline, simplify, cse, dce, optimize).
 *
 * The passes must not change what a program does.  Each case is a Mist
 * program, lowered (parse_module + lower_module, as api/mist.c does) and
 * run three ways, each in a VM of its own: as lowered; after
 * ir_optimize_unit; and after ir_optimize on every graph of the unit in
 * turn.  The optimised runs must verify and print exactly what the plain
 * run prints, and fail (or not) the same way: the same error kind,
 * message, file, line and column (the traceback may be shorter: an
 * inlined function has no frame of its own).  Besides the programs
 * written here, which aim at what the passes rewrite (constant folding
 * next to operations that must still fail, tuples, closures, loops,
 * recursion, unbound variables, effects in order), every golden script
 * of tests/scripts goes through the same comparison (but for those that
 * run longer than a few seconds, which their own tests cover, and those
 * that write files).
 *
 * A second group checks that the passes do their job on a few programs
 * whose optimised shape is known, and that the cloner copies a closure
 * with its nested graphs.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ir/eval.h"
#include "ir/ir.h"
#include "ir/passes.h"
#include "lang/gc.h"
#include "lang/strbuf.h"
#include "mist.h"
#include "parser/lower.h"
#include "parser/parse.h"
#include "testfiles.h"

typedef struct Prog {
  const char *name;
  const char *src;
  bool fails;        /* the program ends with an error */
} Prog;

static const Prog progs[] = {
  {"fold.ms",
   "x = 2 * 3 + 1\n"
   "y = 10 / 4\n"
   "print(x, y, 7 // 2, -7 % 3, 2 ** 10, 2.0 ** -1, -(-5), +True, not 0, not \"\")\n"
   "print(1 < 2, 2 <= 1, 1 == 1.0, \"a\" < \"b\", 3 != 3, None is None, 1 in (1, 2))\n", false},
  {"identities.ms",
   "def f(x):\n"
   "    return x * 1, 1 * x, x + 0, x - 0, x / 1, x ** 1\n"
   "print(f(3), f(2.5), f(-0.0), f(True))\n"
   "print(\"ab\" * 1, True * 1, (1, 2) * 1, [0] * 1)\n"
   "z = -0.0\n"
   "print(z + 0, z - 0, z * 1, 0 + z, z * 1.0, 3 * 1.0, 3 // 1, 2.5 // 1)\n", false},
  {"div_zero_const.ms",
   "print(\"start\")\n"
   "def g():\n"
   "    return 1 / 0\n"
   "x = g\n"
   "print(x())\n", true},
  {"overflow_const.ms",
   "a = 2 ** 62\n"
   "print(a)\n"
   "b = 2 ** 63\n"
   "print(b)\n", true},
  {"unused_error.ms",
   "def helper(x):\n"
   "    y = x + \"a\"\n"
   "    return 1\n"
   "print(\"before\")\n"
   "print(helper(1))\n", true},
  {"unused_pure_ok.ms",
   "def helper(x):\n"
   "    t = (x, x + 1)\n"
   "    u = [x, t]\n"
   "    s = len(t)\n"
   "    return x\n"
   "print(helper(4))\n", false},
  {"tuples.ms",
   "def f(a, b):\n"
   "    t = (a, b)\n"
   "    u = (t[0], t[1])\n"
   "    return t[0] * t[1] + u[1] - t[-1]\n"
   "a, b = 3, 4\n"
   "a, b = b, a\n"
   "p = (1, (2, 3))\n"
   "print(f(2, 5), a, b, p[1][0], len(p), p[-1])\n", false},
  {"index_error.ms",
   "t = (1, 2)\n"
   "print(t[0])\n"
   "print(t[2])\n", true},
  {"unpack_error.ms",
   "def f(x):\n"
   "    a, b = x\n"
   "    return a + b\n"
   "print(f((1, 2)))\n"
   "print(f((1, 2, 3)))\n", true},
  {"closures.ms",
   "def make_adder(n):\n"
   "    def add(x):\n"
   "        return x + n\n"
   "    return add\n"
   "def compose(f, g):\n"
   "    return lambda x: f(g(x))\n"
   "add3 = make_adder(3)\n"
   "print(add3(1), make_adder(0.5)(1))\n"
   "h = compose(lambda x: x * 2, add3)\n"
   "print(h(4), (lambda x: x + 1)(2))\n"
   "def outer(a):\n"
   "    def middle(b):\n"
   "        def inner(c):\n"
   "            return a * 100 + b * 10 + c\n"
   "        return inner\n"
   "    return middle\n"
   "print(outer(1)(2)(3))\n"
   "def curry(f):\n"
   "    return lambda a: lambda b: f(a, b)\n"
   "print(curry(lambda a, b: a - b)(10)(3))\n", false},
  {"closure_pair.ms",
   "def fwd(x):\n"
   "    y = x * x\n"
   "    return y, lambda d: (None, 2 * x * d)\n"
   "v, back = fwd(3.0)\n"
   "print(v, back(1.0), back(1.0)[1])\n"
   "r = fwd(2.0)\n"
   "print(r[0], r[1](0.5)[1])\n", false},
  {"loops.ms",
   "def run(n):\n"
   "    total = 0\n"
   "    for i in range(n):\n"
   "        total += i\n"
   "    return total\n"
   "print(run(5), run(0))\n"
   "i = 0\n"
   "s = 0\n"
   "while True:\n"
   "    i += 1\n"
   "    if i % 3 == 0:\n"
   "        continue\n"
   "    if i > 10:\n"
   "        break\n"
   "    s += i\n"
   "print(i, s)\n"
   "for c in \"abc\":\n"
   "    print(c)\n"
   "for k in {\"x\": 1, \"y\": 2}:\n"
   "    print(k)\n"
   "for a, b in [(1, 2), (3, 4)]:\n"
   "    print(a + b)\n", false},
  {"nested_loops.ms",
   "i = 0\n"
   "while i < 3:\n"
   "    j = 0\n"
   "    while j < 3:\n"
   "        if j == i:\n"
   "            break\n"
   "        print(i, j)\n"
   "        j += 1\n"
   "    i += 1\n"
   "def table(n):\n"
   "    rows = []\n"
   "    for r in range(1, n + 1):\n"
   "        row = []\n"
   "        for c in range(1, n + 1):\n"
   "            row = row + [r * c]\n"
   "        rows = rows + [row]\n"
   "    return rows\n"
   "print(table(3))\n", false},
  {"recursion.ms",
   "def fib(n):\n"
   "    if n < 2:\n"
   "        return n\n"
   "    return fib(n - 1) + fib(n - 2)\n"
   "def fact(n):\n"
   "    return 1 if n <= 1 else n * fact(n - 1)\n"
   "def even(n):\n"
   "    return True if n == 0 else odd(n - 1)\n"
   "def odd(n):\n"
   "    return False if n == 0 else even(n - 1)\n"
   "print(fib(15), fact(10), even(10), odd(7))\n", false},
  {"recursion_depth.ms",
   "def down(n):\n"
   "    return 1 + down(n + 1)\n"
   "print(\"go\")\n"
   "down(0)\n", true},
  {"if_join.ms",
   "def f(x):\n"
   "    if x > 0:\n"
   "        y = 1\n"
   "    elif x == 0:\n"
   "        y = 0\n"
   "    else:\n"
   "        y = -1\n"
   "    return y * 10\n"
   "print(f(3), f(0), f(-3))\n"
   "def classify(n):\n"
   "    if n < 0:\n"
   "        return \"negative\"\n"
   "    elif n < 10:\n"
   "        return \"small\"\n"
   "    return \"large\"\n"
   "for n in [-5, 3, 10]:\n"
   "    print(n, classify(n))\n", false},
  {"const_cond.ms",
   "DEBUG = False\n"
   "if DEBUG:\n"
   "    print(\"debug\")\n"
   "else:\n"
   "    print(\"quiet\")\n"
   "if 1 < 2:\n"
   "    x = \"yes\"\n"
   "else:\n"
   "    x = \"no\"\n"
   "print(x, \"a\" if 0 else \"b\", 1 and 2, 0 or \"z\", None or 0)\n"
   "while False:\n"
   "    print(\"never\")\n"
   "print(not not 3)\n", false},
  {"unbound.ms",
   "def f(c):\n"
   "    if c:\n"
   "        y = 1\n"
   "    return y\n"
   "print(f(True))\n"
   "print(f(False))\n", true},
  {"unbound_const.ms",
   "def f():\n"
   "    if False:\n"
   "        y = 1\n"
   "    return y\n"
   "print(\"before\")\n"
   "print(f())\n", true},
  {"effects_order.ms",
   "def a():\n"
   "    print(\"a\")\n"
   "    return 1\n"
   "def b():\n"
   "    print(\"b\")\n"
   "    return 2\n"
   "print(a() + b(), b() - a())\n"
   "t = (a(), b(), a())\n"
   "print(t[1])\n"
   "x = a() or b()\n"
   "y = 0 and b()\n"
   "print(x, y, [a(), b()][0])\n", false},
  {"cse.ms",
   "def f(x, y):\n"
   "    a = x * y + 1\n"
   "    b = x * y + 1\n"
   "    if a > 3:\n"
   "        c = x * y\n"
   "    else:\n"
   "        c = x * y - 1\n"
   "    return a + b + c\n"
   "print(f(1, 2), f(2, 3), f(1.5, 2))\n"
   "def g(s):\n"
   "    return len(s) + len(s), s[0] + s[0]\n"
   "print(g(\"xy\"), g([5, 6]))\n", false},
  {"cse_error.ms",
   "def f(x):\n"
   "    a = x + 1\n"
   "    print(\"mid\")\n"
   "    b = x + 1\n"
   "    return a * b\n"
   "print(f(2))\n"
   "print(f(\"s\"))\n", true},
  {"globals.ms",
   "n = 1\n"
   "def get():\n"
   "    return n\n"
   "print(get(), n)\n"
   "n = 2\n"
   "print(get(), n)\n"
   "def later():\n"
   "    return defined_later(3)\n"
   "def defined_later(k):\n"
   "    return k * 2\n"
   "print(later())\n", false},
  {"undefined.ms",
   "def f():\n"
   "    return missing + 1\n"
   "print(\"one\")\n"
   "f()\n", true},
  {"defaults_kw.ms",
   "def greet(name, greeting=\"hello\", punct=\"!\"):\n"
   "    return greeting + \", \" + name + punct\n"
   "print(greet(\"ann\"), greet(\"bob\", \"hi\"), greet(\"cy\", punct=\"?\"))\n"
   "add = lambda a, b=10: a + b\n"
   "print(add(1), add(1, 2))\n"
   "def mk(k):\n"
   "    return lambda x, y=k * 2: x + y\n"
   "print(mk(3)(1), mk(3)(1, 1))\n", false},
  {"arity.ms",
   "def f(x):\n"
   "    return x\n"
   "print(f(1))\n"
   "print(f(1, 2))\n", true},
  {"assert.ms",
   "def check(x):\n"
   "    assert x > 0, \"x must be positive\"\n"
   "    return x\n"
   "assert True\n"
   "print(check(2))\n"
   "print(check(-1))\n", true},
  {"strings.ms",
   "name = \"mist\"\n"
   "n = 3\n"
   "print(f\"{name}!\", f\"{n:>4}|{2.5:.2f}|{name!r}\", \"a,b\".split(\",\"), name.upper())\n"
   "s = \"\"\n"
   "for i in range(3):\n"
   "    s = s + str(i)\n"
   "print(s, s[1:], \"x\" in s, len(s))\n", false},
  {"containers.ms",
   "d = {\"a\": 1, \"b\": 2}\n"
   "d[\"c\"] = 3\n"
   "xs = [1, 2, 3]\n"
   "xs[0] = 10\n"
   "ys = xs\n"
   "ys[1] = 20\n"
   "print(d, xs, ys, xs[1:], xs[::-1], d[\"a\"] + d[\"c\"])\n"
   "m = [[0, 0], [0, 0]]\n"
   "m[1][0] = 5\n"
   "print(m, [] is [], () == ())\n", false},
  {"higher_order.ms",
   "sq = lambda x: x * x\n"
   "print(list(map(sq, [1, 2, 3])), sorted([3, 1, 2], key=lambda v: -v))\n"
   "def apply_twice(f, x):\n"
   "    return f(f(x))\n"
   "print(apply_twice(sq, 3), apply_twice(lambda s: s + \"!\", \"hey\"))\n"
   "acc = []\n"
   "for p in range(3):\n"
   "    acc = acc + [(lambda q: lambda x: x ** q)(p)]\n"
   "print(acc[0](2), acc[1](2), acc[2](2))\n", false},
  {"float_math.ms",
   "def poly(x):\n"
   "    return 3.0 * x * x - 2.0 * x + 1.0\n"
   "def deriv(f, x):\n"
   "    h = 1e-6\n"
   "    return (f(x + h) - f(x - h)) / (2 * h)\n"
   "print(poly(2.0), round(deriv(poly, 2.0), 4))\n"
   "x = 0.1 + 0.2\n"
   "print(x, x == 0.3, 1e308 * 10, -1e308 * 10)\n", false},
  {"type_error_late.ms",
   "def f(a, b):\n"
   "    c = a * b\n"
   "    d = c * 1\n"
   "    return d\n"
   "print(f(2, 3), f(\"ab\", 2))\n"
   "print(f(None, 2))\n", true},
  {"gadd_like.ms",
   "def acc(xs):\n"
   "    total = None\n"
   "    for x in xs:\n"
   "        total = x if total is None else total + x\n"
   "    return total\n"
   "print(acc([1, 2, 3]), acc([]), acc([0.5]))\n", false},
  {"module_branch.ms",
   "x = 3\n"
   "if x > 2:\n"
   "    y = x * 2\n"
   "    z = (y, y)\n"
   "else:\n"
   "    y = 0\n"
   "    z = ()\n"
   "print(y, z)\n"
   "for i in range(2):\n"
   "    if i:\n"
   "        print(\"odd\", i)\n"
   "    else:\n"
   "        print(\"even\", i)\n", false},
  {"check_bound_loop.ms",
   "def last(xs):\n"
   "    for x in xs:\n"
   "        pass\n"
   "    return x\n"
   "print(last([1, 2]))\n"
   "print(last([]))\n", true},
};

enum { NPROGS = (int)(sizeof progs / sizeof progs[0]) };

/* ---- running a program ---- */

typedef enum { RUN_PLAIN, RUN_UNIT, RUN_EACH } Mode;

typedef struct Outcome {
  bool lowered;        /* parse and lowering succeeded */
  bool ok;             /* the run succeeded */
  char *out;           /* what it printed */
  const char *kind, *message, *error;
  Span span;
  int nodes;           /* scheduled nodes in the unit when it ran */
} Outcome;

static StrBuf output;

static void capture(void *user, const char *text, size_t len) {
  (void)user;
  sb_add(&output, text, len);
}

typedef struct Job {
  MistVM *vm;
  IrGraph *main;
  bool ok;
} Job;

static void *run_job(void *arg) {
  Job *job = arg;
  lang_set_stack_budget(job->vm, 48u << 20);
  Value r;
  job->ok = ev_run_main(job->vm, job->main, &r);
  return NULL;
}

static int count_nodes(IrUnit *u) {
  int n = 0;
  for (int i = 0; i < u->ngraphs; i++) n += u->graphs[i]->nnodes;
  return n;
}

/* Run src as file path; budget > 0: stop it (TimeoutError) after that
 * many seconds. */
static Outcome run_prog(const char *path, const char *src, Mode mode, double budget) {
  Outcome o;
  memset(&o, 0, sizeof o);
  MistVM *vm = mist_new(0, NULL);
  ck_assert_ptr_nonnull(vm);
  vm->max_depth = 3000;
  sb_init(&output);
  mist_set_write(vm, capture, NULL);
  vm->main->path = lang_str(path);
  size_t len = strlen(src);
  int fid = lang_file_add(vm, path, src, len);
  vm->main->file_id = fid;
  Ast *ast = parse_module(vm, fid, src, len);
  LowerResult lr;
  if (!ast || !lower_module(vm, ast, vm->main, false, &lr)) {
    o.error = lang_str(mist_error(vm))->data;
    mist_free(vm);
    return o;
  }
  o.lowered = true;
  ck_assert_msg(ir_verify_unit(vm, lr.unit), "%s: lowered unit does not verify: %s", path,
                mist_error(vm));
  if (mode == RUN_UNIT) {
    ck_assert_msg(ir_optimize_unit(vm, lr.unit), "%s: ir_optimize_unit failed: %s", path,
                  mist_error(vm));
  } else if (mode == RUN_EACH) {
    int n = lr.unit->ngraphs;
    IrGraph **all = lang_alloc((size_t)n * sizeof *all);
    memcpy(all, lr.unit->graphs, (size_t)n * sizeof *all);
    for (int i = 0; i < n; i++) {
      bool still = false;
      for (int k = 0; k < lr.unit->ngraphs; k++) still |= lr.unit->graphs[k] == all[i];
      if (!still) continue;   /* pruned by an earlier call: garbage */
      ck_assert_msg(ir_optimize(vm, lr.unit, all[i]), "%s: ir_optimize(@%s) failed: %s", path,
                    all[i]->name->data, mist_error(vm));
    }
  }
  if (mode != RUN_PLAIN) {
    ck_assert_msg(ir_verify_unit(vm, lr.unit), "%s: optimised unit does not verify: %s", path,
                  mist_error(vm));
    /* and it prints and reads back */
    StrBuf sb;
    sb_init(&sb);
    ir_print_unit(vm, lr.unit, &sb);
    IrUnit *again = ir_read(vm, path, sb.data, sb.len);
    ck_assert_msg(again != NULL, "%s: optimised IR does not read back: %s\n%s", path,
                  mist_error(vm), sb.data);
  }
  o.nodes = count_nodes(lr.unit);
  Job job = {vm, lr.main, false};
  if (budget > 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    vm->deadline = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + budget;
  }
  ck_assert(lang_run_on_stack(64u << 20, run_job, &job));
  o.ok = job.ok;
  o.out = lang_str_new(output.data ? output.data : "", output.len)->data;
  if (!o.ok) {
    o.kind = vm->err.kind ? vm->err.kind : "";
    o.message = vm->err.message ? vm->err.message->data : "";
    o.span = vm->err.span;
    o.error = lang_str(mist_error(vm))->data;
  }
  mist_free(vm);
  return o;
}

/* The first line of a rendered error: "file:line:col: error: message". */
static const char *first_line(const char *s) {
  const char *nl = s ? strchr(s, '\n') : NULL;
  return nl ? lang_str_new(s, (size_t)(nl - s))->data : s ? s : "";
}

/* Messages equal but for a NameError's "did you mean": the local names
 * it suggests are those of the graph holding the failing read, which
 * inlining changes (docs/contributing.md, deliberate simplifications). */
static bool same_message(const char *a, const char *b) {
  const char *hint = " is not defined. Did you mean: '";
  const char *ha = strstr(a, hint), *hb = strstr(b, " is not defined");
  if (!ha || !hb) return strcmp(a, b) == 0;
  return ha - a == hb - b && memcmp(a, b, (size_t)(ha - a)) == 0;
}

static void same_behaviour(const char *path, const Outcome *plain, const Outcome *opt,
                           const char *how) {
  ck_assert_msg(plain->lowered == opt->lowered, "%s (%s): lowering differs", path, how);
  if (!plain->lowered) return;
  ck_assert_msg(strcmp(plain->out, opt->out) == 0, "%s (%s): output differs\n--- plain:\n%s--- %s:\n%s",
                path, how, plain->out, how, opt->out);
  ck_assert_msg(plain->ok == opt->ok, "%s (%s): plain %s, optimised %s (%s)", path, how,
                plain->ok ? "succeeds" : "fails", opt->ok ? "succeeds" : "fails",
                opt->ok ? first_line(plain->error) : first_line(opt->error));
  if (plain->ok) return;
  ck_assert_msg(strcmp(plain->kind, opt->kind) == 0 && same_message(plain->message, opt->message),
                "%s (%s): error differs\n  plain: %s: %s\n  %s: %s: %s", path, how, plain->kind,
                plain->message, how, opt->kind, opt->message);
  ck_assert_msg(plain->span.file == opt->span.file && plain->span.line == opt->span.line &&
                    plain->span.col == opt->span.col,
                "%s (%s): error place differs\n  plain: %s\n  %s: %s", path, how,
                first_line(plain->error), how, first_line(opt->error));
  ck_assert_msg(same_message(first_line(plain->error), first_line(opt->error)), "%s (%s): %s\n  plain: %s",
                path, how, first_line(opt->error), first_line(plain->error));
}

/* Compare the three runs of a program; expect_fail < 0: a script, whose
 * plain run gets SCRIPT_BUDGET seconds (false when it needs more: too
 * slow to run three times here; the script's own test runs it). */
enum { SCRIPT_BUDGET = 3 };

static bool check_program(const char *path, const char *src, int expect_fail) {
  Outcome plain = run_prog(path, src, RUN_PLAIN, expect_fail < 0 ? SCRIPT_BUDGET : 0);
  if (!plain.ok && plain.kind && strcmp(plain.kind, "TimeoutError") == 0) return false;
  if (expect_fail >= 0) {
    ck_assert_msg(plain.lowered, "%s: does not lower: %s", path, plain.error);
    ck_assert_msg(plain.ok == !expect_fail, "%s: plain run %s: %s", path,
                  plain.ok ? "succeeded" : "failed", first_line(plain.error));
  }
  Outcome unit = run_prog(path, src, RUN_UNIT, 0);
  same_behaviour(path, &plain, &unit, "ir_optimize_unit");
  Outcome each = run_prog(path, src, RUN_EACH, 0);
  same_behaviour(path, &plain, &each, "ir_optimize on each graph");
  return true;
}

START_TEST(t_program) {
  check_program(progs[_i].name, progs[_i].src, progs[_i].fails);
}
END_TEST

/* ---- the golden scripts ---- */

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int walk_scripts(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.' || de->d_name[0] == '_') continue;
    const char *path = lang_str_fmt("%s/%s", dir, de->d_name)->data;
    if (is_dir(path)) {
      n += walk_scripts(path);
      continue;
    }
    size_t k = strlen(de->d_name);
    if (k < 4 || strcmp(de->d_name + k - 3, ".ms") != 0) continue;
    char *src = testfiles_read(path);
    /* (a script that writes files does so beside itself, which here
     * would be the test's folder: run_script.sh gives it a copy) */
    if (!src || strstr(src, "time(") || strstr(src, "input(") || strstr(src, "# test: writes files")) continue;
    if (check_program(path, src, -1)) n++;
  }
  closedir(d);
  return n;
}

START_TEST(t_scripts) {
#ifndef MIST_SOURCE_DIR
#define MIST_SOURCE_DIR NULL
#endif
  const char *dir = testfiles_dir("tests/scripts", MIST_SOURCE_DIR);
  ck_assert_msg(dir != NULL, "cannot find tests/scripts (set MIST_SOURCE_DIR)");
  int n = walk_scripts(dir);
  ck_assert_int_ge(n, 10);
}
END_TEST

/* ---- what the passes make of a few programs ---- */

static MistVM *vm;

static void setup(void) {
  vm = mist_new(0, NULL);
  sb_init(&output);
  mist_set_write(vm, capture, NULL);
}

static void teardown(void) {
  mist_free(vm);
  vm = NULL;
}

static LowerResult lower_opt(const char *src) {
  size_t len = strlen(src);
  int fid = lang_file_add(vm, "shape.ms", src, len);
  Ast *ast = parse_module(vm, fid, src, len);
  ck_assert_msg(ast != NULL, "%s", mist_error(vm));
  LowerResult lr;
  ck_assert_msg(lower_module(vm, ast, vm->main, false, &lr), "%s", mist_error(vm));
  ck_assert_msg(ir_optimize_unit(vm, lr.unit), "%s", mist_error(vm));
  ck_assert_msg(ir_verify_unit(vm, lr.unit), "%s", mist_error(vm));
  return lr;
}

static IrGraph *graph_named(IrUnit *u, const char *name) {
  for (int i = 0; i < u->ngraphs; i++)
    if (strcmp(u->graphs[i]->name->data, name) == 0) return u->graphs[i];
  ck_abort_msg("no graph @%s", name);
  return NULL;
}

static char *print_graph(IrGraph *g) {
  StrBuf sb;
  sb_init(&sb);
  ir_print_graph(vm, g, &sb);
  return sb.data;
}

START_TEST(t_shape_folded) {
  /* everything is known: main is its prints of constants */
  LowerResult lr = lower_opt(
    "def sq(x):\n"
    "    return x * x\n"
    "def f(a, b):\n"
    "    t = (a, b)\n"
    "    return sq(t[0]) + sq(t[1])\n"
    "print(f(3, 4), (lambda x: x + 1)(2))\n");
  const char *expect =
    "# file shape.ms\n"
    "graph @__main__() : module {  # 1:1\n"
    "  %1 = set_global(\"sq\", @sq)  # 1:1+3\n"
    "  %2 = set_global(\"f\", @f)  # 3:1+3\n"
    "  %3 = $print(25, 3)  # 6:1+36\n"
    "  return None\n"
    "}\n"
    "\n"
    "graph @sq(%x) in @__main__ : function {  # 1:1+3\n"
    "  %4 = mul(%x, %x)  # 2:12+5\n"
    "  return %4\n"
    "}\n"
    "\n"
    "graph @f(%a, %b) in @__main__ : function {  # 3:1+3\n"
    "  %5 = mul(%a, %a)  # 2:12+5\n"
    "  %6 = mul(%b, %b)  # 2:12+5\n"
    "  %7 = add(%5, %6)  # 5:12+19\n"
    "  return %7\n"
    "}\n";
  StrBuf sb;
  sb_init(&sb);
  ir_print_unit(vm, lr.unit, &sb);
  ck_assert_str_eq(sb.data, expect);
}
END_TEST

START_TEST(t_shape_closure_pair) {
  /* the pattern of a derivative: a value and a closure, built and taken
   * apart at once, the closure called in place */
  LowerResult lr = lower_opt(
    "def fwd(x):\n"
    "    return x * x, lambda d: (None, 2 * x * d)\n"
    "def grad(x):\n"
    "    v, back = fwd(x)\n"
    "    return back(1.0)[1]\n");
  char *text = print_graph(graph_named(lr.unit, "grad"));
  /* x * x stays, unused: it may raise (x could be a str); and d * 1.0
   * is not d for an x of unknown type */
  const char *expect =
    "# file shape.ms\n"
    "graph @grad(%x) : function {  # 3:1+3\n"
    "  %1 = mul(%x, %x)  # 2:12+5\n"
    "  %2 = mul(2, %x)  # 2:36+5\n"
    "  %3 = mul(%2, 1.0)  # 2:36+9\n"
    "  return %3\n"
    "}\n";
  ck_assert_str_eq(text, expect);
}
END_TEST

START_TEST(t_shape_if_join) {
  /* a constant condition leaves the chosen branch's code in place, and
   * its join, called from one place, moves there too */
  LowerResult lr = lower_opt(
    "def f(x):\n"
    "    if 2 > 1:\n"
    "        y = x + 1\n"
    "    else:\n"
    "        y = x - 1\n"
    "    return y * 2\n");
  const char *expect =
    "# file shape.ms\n"
    "graph @f(%x) : function {  # 1:1+3\n"
    "  %y = add(%x, 1)  # 3:13+5\n"
    "  %1 = mul(%y, 2)  # 6:12+5\n"
    "  return %1\n"
    "}\n";
  ck_assert_str_eq(print_graph(graph_named(lr.unit, "f")), expect);
}
END_TEST

START_TEST(t_clone_closure) {
  /* ir_clone_graph copies a function with its nested graphs; the copy
   * runs like the original and shares nothing it must not */
  const char *src =
    "def make(n):\n"
    "    def add(x):\n"
    "        if x > n:\n"
    "            return x + n\n"
    "        return n\n"
    "    return add\n";
  size_t len = strlen(src);
  int fid = lang_file_add(vm, "clone.ms", src, len);
  Ast *ast = parse_module(vm, fid, src, len);
  LowerResult lr;
  ck_assert(lower_module(vm, ast, vm->main, false, &lr));
  IrGraph *make = graph_named(lr.unit, "make");
  int before = lr.unit->ngraphs;
  NodeMap m = {0};
  IrGraph *copy = ir_clone_graph(lr.unit, make, make->parent, &m);
  ck_assert_msg(ir_verify_unit(vm, lr.unit), "%s", mist_error(vm));
  ck_assert_int_eq(lr.unit->ngraphs, 2 * before - 1);   /* everything but __main__ */
  ck_assert_str_eq(copy->name->data, "__main__.make");
  ck_assert_ptr_eq(copy->parent, make->parent);
  ck_assert_ptr_eq(ir_map_get(&m, make), copy);
  ck_assert_ptr_eq(ir_map_get(&m, make->params[0]), copy->params[0]);
  /* the copied nested graphs are nested in the copy and use its nodes */
  IrGraph *add = ir_node_graph(copy->ret);
  ck_assert_ptr_nonnull(add);
  ck_assert_ptr_eq(add->parent, copy);
  ir_free_vars(add);
  ck_assert_int_eq(add->nfv, 1);
  ck_assert_ptr_eq(add->fv[0], copy->params[0]);
  /* run the copy: make(5)(7) + make(5)(1) */
  Value f, args[1] = {v_int(5)}, adder, r1, r2, x7 = v_int(7), x1 = v_int(1);
  f = ir_const_graph(lr.unit, copy, span_none())->value;
  ck_assert_msg(ev_call(vm, f, 1, args, NULL, &adder), "%s", mist_error(vm));
  ck_assert(ev_call(vm, adder, 1, &x7, NULL, &r1));
  ck_assert(ev_call(vm, adder, 1, &x1, NULL, &r2));
  ck_assert_int_eq(r1.i, 12);
  ck_assert_int_eq(r2.i, 5);
}
END_TEST

static Suite *passes_suite(void) {
  Suite *s = suite_create("passes");
  TCase *tc = tcase_create("programs");
#ifdef MIST_ASAN
  tcase_set_timeout(tc, 600);   /* every script three ways: ~10 s, past 120 s under sanitizers */
#else
  tcase_set_timeout(tc, 300);   /* ~30 s of CPU: past 120 s of wall clock beside other suites on two cores */
#endif
  tcase_add_loop_test(tc, t_program, 0, NPROGS);
  tcase_add_test(tc, t_scripts);
  suite_add_tcase(s, tc);
  TCase *shape = tcase_create("shape");
  tcase_add_checked_fixture(shape, setup, teardown);
  tcase_set_timeout(shape, 60);
  tcase_add_test(shape, t_shape_folded);
  tcase_add_test(shape, t_shape_closure_pair);
  tcase_add_test(shape, t_shape_if_join);
  tcase_add_test(shape, t_clone_closure);
  suite_add_tcase(s, shape);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(passes_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
