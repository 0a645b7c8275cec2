/* test_grad_source.c: derivatives printed as Mist source run and give
 * the derivative's numbers (docs/autodiff.md, "Reading a derivative").
 *
 * For each case, a program defines f (and what it needs) and a
 * derivative of it, such as grad(f) or grad(grad(f)):
 *
 *  - run as written, it prints the derivative at some arguments: the
 *    numbers wanted;
 *  - show_source(derivative) prints the derived program: the transforms
 *    (J_f and its backward defs), the wrapper, which is the last
 *    top-level def;
 *  - in a fresh interpreter, the definitions, then the printout, then a
 *    call of the wrapper at the same arguments must print the same;
 *  - where the derivative is grad(f) of a top-level f, the same for the
 *    printout of `mist ir --source --grad FILE f` (mist_print_file_ir,
 *    which lowers the file without running it).
 *
 * Derived programs call the primitives of autodiff by their builtin
 * names (_gadd, _bp_call, _J...), which autodiff/names.c registers, and
 * the rules through `import ad_rules as _ad_rules`; a printout that
 * left any of them unreachable, or a J unfolded that should have been
 * folded, fails here.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "mist.h"

typedef struct Case {
  const char *name;
  const char *defs;     /* the program: defines f */
  const char *deriv;    /* the derivative to print and run */
  const char *args;     /* the arguments it is called with */
  bool cli;             /* also through mist_print_file_ir (deriv is grad(f)) */
  const char *expect;   /* in the printout (NULL: a transform, "def J_") */
} Case;

static const Case cases[] = {
  {"arithmetic",
   "def f(x, y):\n"
   "    z = x * y + sin(x)\n"
   "    return z * z - x / y + y ** 3.0\n",
   "grad(f)", "1.5, 2.0", true},
  {"math_builtins",
   "def f(x):\n"
   "    a = exp(x) + log(x) + sqrt(x) + cos(x) + tanh(x)\n"
   "    return a + sigmoid(x) + relu(x - 1.0) + maximum(x, 2.0) + pow(x, 2.5) + abs(-x)\n",
   "grad(f)", "1.5", true},
  {"if_else",
   "def f(x):\n"
   "    if x > 1.0:\n"
   "        y = x * x\n"
   "    elif x > 0.0:\n"
   "        y = sin(x)\n"
   "    else:\n"
   "        y = -x\n"
   "    return y * 3.0\n",
   "grad(f)", "1.5", true},
  {"while_loop",
   "def f(x):\n"
   "    n = 0\n"
   "    while x < 10.0:\n"
   "        x = x * 1.5 + 0.25\n"
   "        n += 1\n"
   "    return x * n\n",
   "grad(f)", "1.5", true},
  {"for_loop",
   "def f(x, n):\n"
   "    s = 0.0\n"
   "    for i in range(n):\n"
   "        if i % 2 == 0:\n"
   "            s = s + x ** i\n"
   "        else:\n"
   "            s = s * x\n"
   "    return s\n",
   "grad(f)", "1.5, 5", true},
  {"closure",
   "def f(x):\n"
   "    a = x * x\n"
   "    def g(y):\n"
   "        return a * y + x\n"
   "    h = lambda t: g(t) * a\n"
   "    return h(3.0) + g(x)\n",
   "grad(f)", "1.5", true},
  {"closure_value",
   "def make(a, b):\n"
   "    return lambda x: a * x * x + b * sin(x)\n"
   "f = make(2.0, 0.5)\n",
   "grad(f)", "1.5", false},
  {"recursion",
   "def f(x, n):\n"
   "    if n == 0:\n"
   "        return x\n"
   "    return sin(f(x, n - 1)) * x\n",
   "grad(f)", "1.5, 4", true},
  {"tree_argument",
   "def f(p):\n"
   "    w, b = p[\"w\"], p[\"b\"]\n"
   "    return w * b[0] + b[1] ** 2 + p[\"c\"][0]\n",
   "grad(f)", "{\"w\": 2.0, \"b\": (3.0, 4.0), \"c\": [5.0, 6.0]}", true},
  {"helpers_and_comprehension",
   "W = 3.0\n"
   "def sq(x):\n"
   "    return x * x\n"
   "def f(x):\n"
   "    xs = [sq(x) * i for i in range(4)]\n"
   "    return xs[1] + xs[3] * W + stop_gradient(x) * x\n",
   "grad(f)", "1.5", true},
  {"value_and_grad_argnums",
   "def f(x, y):\n"
   "    return x / y - x ** 3.0 + abs(x - y)\n",
   "value_and_grad(f, argnums=(0, 1))", "1.5, 2.5", false},
  {"grad_of_grad",
   "def f(x):\n"
   "    s = 0.0\n"
   "    for i in range(3):\n"
   "        s = s + x * sin(x) if x > 1.0 else s - x\n"
   "    return s * exp(x)\n",
   "grad(grad(f))", "1.5", false},
  {"third_derivative",
   "def f(x):\n"
   "    return x * x * sin(x)\n",
   "grad(grad(grad(f)))", "0.5", false},
  /* a builtin is differentiated as the function lambda x: sin(x) */
  {"builtin",
   "f = 1.0\n",
   "grad(sin)", "0.5", false, "_sin_sens(dout, x"},
  {"builtin, third",
   "f = 1.0\n",
   "grad(grad(grad(sin)))", "0.5", false},
};

enum { NCASES = sizeof cases / sizeof cases[0] };

/* The output of running the parts in order in a fresh VM ("ERROR: ..."
 * ends it where one fails). */
static char *run(const char *const *parts, int n) {
  Buf out = {0};
  MistVM *vm = capture_vm_new(&out);
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "part%d.ms", i);
    if (mist_eval(vm, name, parts[i], false) != MIST_OK) {
      const char *e = mist_error(vm);
      buf_add(&out, "ERROR: ", 7);
      buf_add(&out, e, strlen(e));
      break;
    }
  }
  mist_free(vm);
  return out.data;
}

static char *fmt(const char *f, const char *a, const char *b) {
  size_t n = strlen(f) + strlen(a) + strlen(b) + 1;
  char *s = malloc(n);
  ck_assert_ptr_nonnull(s);
  snprintf(s, n, f, a, b);
  return s;
}

/* The name of the last top-level def of a printout: its wrapper. */
static char *root_name(const char *text) {
  const char *last = NULL;
  for (const char *p = text; (p = strstr(p, "def ")); p += 4)
    if (p == text || p[-1] == '\n') last = p + 4;
  ck_assert_msg(last != NULL, "no def in the printout:\n%s", text);
  size_t n = strcspn(last, "(");
  char *name = malloc(n + 1);
  memcpy(name, last, n);
  name[n] = 0;
  return name;
}

/* Run defs, the printout and a call of its wrapper; compare with want. */
static void check_printout(const Case *c, const char *how, const char *printed, const char *want) {
  ck_assert_msg(strstr(printed, "ERROR") == NULL, "%s, %s: printing failed:\n%.4000s", c->name, how, printed);
  const char *expect = c->expect ? c->expect : "def J_";
  ck_assert_msg(strstr(printed, expect), "%s, %s: the printout has no %s in it:\n%.4000s", c->name, how, expect,
                printed);
  char *root = root_name(printed);
  char *call = fmt("print(%s(%s))\n", root, c->args);
  const char *parts[] = {c->defs, printed, call};
  char *got = run(parts, 3);
  ck_assert_msg(strcmp(got, want) == 0, "%s, %s: the printout prints\n%s\ninstead of\n%s\nprintout:\n%.4000s",
                c->name, how, got, want, printed);
  free(got);
  free(call);
  free(root);
}

START_TEST(t_show_source) {
  const Case *c = &cases[_i];
  char *call = fmt("print(%s(%s))\n", c->deriv, c->args);
  const char *orig[] = {c->defs, call};
  char *want = run(orig, 2);
  ck_assert_msg(strstr(want, "ERROR") == NULL, "%s: the derivative fails: %s", c->name, want);
  char *show = fmt("show_source(%s)%s\n", c->deriv, "");
  const char *sp[] = {c->defs, show};
  char *printed = run(sp, 2);
  check_printout(c, "show_source", printed, want);
  free(printed);
  free(show);
  free(want);
  free(call);
}
END_TEST

START_TEST(t_mist_ir) {
  const Case *c = &cases[_i];
  if (!c->cli) return;
  char *call = fmt("print(%s(%s))\n", c->deriv, c->args);
  const char *orig[] = {c->defs, call};
  char *want = run(orig, 2);
  char path[] = "/tmp/mist-grad-source-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, c->defs, strlen(c->defs)), (ssize_t)strlen(c->defs));
  close(fd);
  Buf out = {0};
  MistVM *vm = capture_vm_new(&out);
  MistStatus st = mist_print_file_ir(vm, path, "f", MIST_IR_SOURCE | MIST_IR_GRAD);
  unlink(path);
  ck_assert_msg(st == MIST_OK, "%s: mist ir --source --grad failed: %s", c->name, mist_error(vm));
  mist_free(vm);
  check_printout(c, "mist ir --source --grad", out.data, want);
  free(out.data);
  free(want);
  free(call);
}
END_TEST

/* The primitives are builtins under their underscored names, and the
 * printout shows env keys as small numbers, so it reads the same on
 * every run. */
START_TEST(t_names) {
  const char *prog[] = {
    "print(_gadd(None, 2.0), _gadd((1.0, None), (2.0, 3.0)), _sens_item(None, 0))\n"
    "print(_J(2.0), _zeros_like({\"a\": (1.0, 2)}), _ad_kid(5))\n"
    "print(stop_gradient(3.0), _env_get(_env_set(None, 1, 4.0), 1))\n",
  };
  char *got = run(prog, 1);
  ck_assert_str_eq(got, "2.0 (3.0, 3.0) None\n2.0 {'a': (0.0, 0.0)} 5\n3.0 4.0\n");
  free(got);
  const char *clo[] = {
    "def f(x):\n"
    "    a = x * x\n"
    "    return sum(map(lambda y: a * y, [1.0, 2.0]))\n",
    "show_source(grad(f))\n",
  };
  char *a = run(clo, 2), *b = run(clo, 2);
  ck_assert_str_eq(a, b);
  ck_assert_msg(strstr(a, "_make_env(1, "), "%s", a);
  free(a);
  free(b);
}
END_TEST

/* The derivative of a loop is simplified (ir_optimize on the transform):
 * the loop header's backward pass is folded into the body's and the
 * exit's, so one backward closure is made per iteration, and the env
 * and select the header passed on are gone. */
START_TEST(t_loop_simplified) {
  const char *prog[] = {
    "def f(a):\n"
    "    x = 1.0\n"
    "    i = 0\n"
    "    while i < 10:\n"
    "        x = x * a + 0.5\n"
    "        i += 1\n"
    "    return x\n",
    "show_source(grad(f))\n",
  };
  char *got = run(prog, 2);
  int defs = 0;
  for (const char *p = got; (p = strstr(p, "def ")); p += 4) defs++;
  /* J_f, its own backward pass, the body's, the exit's, and grad_f */
  ck_assert_msg(defs == 5, "%d defs in\n%s", defs, got);
  ck_assert_msg(!strstr(got, " else None)") && !strstr(got, "(None if ") && !strstr(got, "_make_env(1, None)"), "%s", got);
  free(got);
}
END_TEST

static Suite *grad_source_suite(void) {
  Suite *s = suite_create("grad_source");
  TCase *tc = tcase_create("round_trip");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, t_show_source, 0, NCASES);
  tcase_add_loop_test(tc, t_mist_ir, 0, NCASES);
  tcase_add_test(tc, t_names);
  tcase_add_test(tc, t_loop_simplified);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(grad_source_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
