/* test_tensor_grad.c: derivatives of the tensor builtins (reverse mode,
 * forward mode, and reverse over reverse), through the public API.
 *
 * Every rule of stdlib/ad_rules.ms for tensors, and the tensor cases of
 * the structural primitives (indexing, x[i] = v, for, unpacking), is
 * checked in Mist itself by the CHECK prelude below: the gradient of
 * <f(args), W> for a random W against central differences in float64
 * (step 1e-6 relative; agreement within 1e-5 relative to 1 + |value|),
 * the gradient's shape and dtype against its argument's, and jvp
 * against vjp (<W, J u> both ways, for random u).  The C side draws
 * the shapes: random ranks and sizes, broadcasting partners (leading
 * axes dropped, axes set to 1), random axes (negative, tuples) and
 * keepdims, batch axes for matmul, convolution and pooling settings.
 * Each check prints "ok NAME" or "FAIL NAME [...]"; a test passes when
 * all its checks print ok.
 *
 * MIST_TENSOR_GRAD_ROUNDS (default 3) runs more rounds of random
 * shapes; MIST_TENSOR_GRAD_DUMP=1 prints each program to stderr.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mist.h"

#include "capture.h"

static const char *CHECK =
    "def _call(f, a):\n"
    "    n = len(a)\n"
    "    if n == 1:\n"
    "        return f(a[0])\n"
    "    if n == 2:\n"
    "        return f(a[0], a[1])\n"
    "    return f(a[0], a[1], a[2])\n"
    "\n"
    "\n"
    "def _vjp(f, a):\n"
    "    n = len(a)\n"
    "    if n == 1:\n"
    "        return vjp(f, a[0])\n"
    "    if n == 2:\n"
    "        return vjp(f, a[0], a[1])\n"
    "    return vjp(f, a[0], a[1], a[2])\n"
    "\n"
    "\n"
    "def _grads(f, a, W):\n"
    "    n = len(a)\n"
    "    if n == 1:\n"
    "        return (grad(lambda x: _dot(f(x), W))(a[0]),)\n"
    "    if n == 2:\n"
    "        return grad(lambda x, y: _dot(f(x, y), W), argnums=(0, 1))(a[0], a[1])\n"
    "    return grad(lambda x, y, z: _dot(f(x, y, z), W), argnums=(0, 1, 2))(a[0], a[1], a[2])\n"
    "\n"
    "\n"
    "def _with(a, i, v):\n"
    "    return tuple([v if j == i else a[j] for j in range(len(a))])\n"
    "\n"
    "\n"
    "def _dot(a, b):\n"
    "    # the sum of the products of two trees of floats and tensors\n"
    "    if a is None or b is None:\n"
    "        return 0.0\n"
    "    if type(a) == \"tuple\" or type(a) == \"list\":\n"
    "        s = 0.0\n"
    "        for i in range(len(a)):\n"
    "            s = s + _dot(a[i], b[i])\n"
    "        return s\n"
    "    if type(a) == \"tensor\" or type(b) == \"tensor\":\n"
    "        return float(sum(a * b))\n"
    "    return a * b\n"
    "\n"
    "\n"
    "def _numeric(L, a, i):\n"
    "    # dL/da[i] by central differences, in float64, element by element\n"
    "    x = a[i]\n"
    "    if type(x) == \"float\":\n"
    "        s = 1e-6 * max(1.0, abs(x))\n"
    "        return (L(_with(a, i, x + s)) - L(_with(a, i, x - s))) / (2.0 * s)\n"
    "    n = x.size\n"
    "    flat = reshape(x, (n,))\n"
    "    out = []\n"
    "    for k in range(n):\n"
    "        s = 1e-6 * max(1.0, abs(float(flat[k])))\n"
    "        e = zeros(n, \"f64\")\n"
    "        e[k] = s\n"
    "        fp = L(_with(a, i, reshape(flat + e, x.shape)))\n"
    "        fm = L(_with(a, i, reshape(flat - e, x.shape)))\n"
    "        out = out + [(fp - fm) / (2.0 * s)]\n"
    "    return reshape(tensor(out, \"f64\"), x.shape)\n"
    "\n"
    "\n"
    "def _rand_like(y, seed):\n"
    "    if type(y) == \"tensor\":\n"
    "        return randn(y.shape, seed=seed, dtype=\"f64\")\n"
    "    return 0.5 + 0.1 * seed\n"
    "\n"
    "\n"
    "def _close(a, b, tol):\n"
    "    if type(a) == \"tensor\" or type(b) == \"tensor\":\n"
    "        if type(a) == \"tensor\" and type(b) == \"tensor\" and a.shape != b.shape:\n"
    "            return False\n"
    "        if type(b) == \"tensor\" and b.size == 0:\n"
    "            return True\n"
    "        return float(max(abs(a - b) - tol * (1.0 + abs(b)))) <= 0.0\n"
    "    return abs(a - b) <= tol * (1.0 + abs(b))\n"
    "\n"
    "\n"
    "# check(name, f, args): f's reverse-mode derivative against central\n"
    "# differences (of <f(args), W> for a random W), the gradient's shape and\n"
    "# dtype against each argument's, and, unless fwd is False, forward mode\n"
    "# against reverse mode: <W, J u> from jvp and from vjp, for random u.\n"
    "def check(name, f, a, fwd=True, tol=1e-5):\n"
    "    a = tuple(a)\n"
    "    n = len(a)\n"
    "    W = _rand_like(_call(f, a), 7)\n"
    "    L = lambda args: _dot(_call(f, args), W)\n"
    "    gs = _grads(f, a, W)\n"
    "    bad = []\n"
    "    for i in range(n):\n"
    "        g = gs[i]\n"
    "        if type(a[i]) == \"tensor\" and (type(g) != \"tensor\" or g.shape != a[i].shape or g.dtype != a[i].dtype):\n"
    "            bad = bad + [f\"argument {i}: gradient {g} for shape {a[i].shape} {a[i].dtype}\"]\n"
    "        elif type(a[i]) == \"float\" and type(g) != \"float\":\n"
    "            bad = bad + [f\"argument {i}: gradient {g} for a float\"]\n"
    "        else:\n"
    "            num = _numeric(L, a, i)\n"
    "            if not _close(g, num, tol):\n"
    "                bad = bad + [f\"argument {i}: gradient {g}, central differences {num}\"]\n"
    "    if fwd:\n"
    "        us = tuple([_rand_like(a[i], 11 + i) for i in range(n)])\n"
    "        t = jvp(f, a, us)[1]\n"
    "        lhs = _dot(W, t)\n"
    "        rhs = _dot(_vjp(f, a)[1](W), us)\n"
    "        if not _close(lhs, rhs, 1e-8):\n"
    "            bad = bad + [f\"<W, J u>: {lhs} by jvp, {rhs} by vjp\"]\n"
    "        if not _close(_dot(gs, us), lhs, 1e-8):\n"
    "            bad = bad + [f\"<grad, u>: {_dot(gs, us)} by grad, {lhs} by jvp\"]\n"
    "    if len(bad) == 0:\n"
    "        print(\"ok\", name)\n"
    "    else:\n"
    "        print(\"FAIL\", name, bad)\n"
    "\n"
    "\n"
    "def rn(shape, seed):\n"
    "    return randn(shape, seed=seed, dtype=\"f64\")\n"
    "\n"
    ;

static MistVM *vm;
static Buf out, prog;
static int nchecks;

static void setup(void) {
  vm = capture_vm_new(&out);
  buf_clear(&prog);
  nchecks = 0;
}

static void teardown(void) {
  capture_vm_free(vm, &out);
  vm = NULL;
  buf_free(&prog);
}

/* ---- the program under test ---- */

static void line(const char *fmt, ...) {
  char tmp[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  ck_assert_int_lt(n, (int)sizeof tmp - 1);
  buf_add(&prog, tmp, (size_t)n);
  buf_add(&prog, "\n", 1);
}

/* name as the text of a Mist string: its double quotes made single */
static const char *label(const char *name) {
  static char ring[16][512];
  static int next;
  char *b = ring[next++ % 16];
  snprintf(b, sizeof ring[0], "%s", name);
  for (char *p = b; *p; p++)
    if (*p == '"') *p = '\'';
  return b;
}

/* check(NAME, lambda ARGS: BODY, (VALUES,)), one more check to pass */
static void check(const char *name, const char *params, const char *body, const char *values) {
  line("check(\"%s\", lambda %s: %s, (%s,))", label(name), params, body, values);
  nchecks++;
}

/* Run the prelude and the program: every check must print ok. */
static void run_checks(void) {
  Buf src = {0};
  buf_add(&src, CHECK, strlen(CHECK));
  buf_add(&src, prog.data, prog.len);
  if (getenv("MIST_TENSOR_GRAD_DUMP")) fprintf(stderr, "%s\n", prog.data);
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<tensor_grad>", src.data, false);
  if (s != MIST_OK || strstr(out.data, "FAIL")) fprintf(stderr, "--- program:\n%s\n--- output:\n%s\n", prog.data, out.data);
  ck_assert_msg(s == MIST_OK, "failed (status %d): %.2000s", (int)s, mist_error(vm));
  int ok = 0;
  for (const char *p = out.data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
    if (strncmp(p, "ok ", 3) == 0) ok++;
  const char *fail = strstr(out.data, "FAIL");
  ck_assert_msg(!fail, "%.2000s", fail);
  ck_assert_msg(ok == nchecks, "%d of %d checks passed", ok, nchecks);
  free(src.data);
}

/* ---- random shapes ---- */

static uint64_t rng;

static void seed_rng(uint64_t s) { rng = s * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; }

static int rnd(int n) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (int)((rng * 0x2545F4914F6CDD1Dull >> 33) % (uint64_t)n);
}

typedef struct Shape {
  int nd;
  int d[6];
} Shape;

/* Text that lives until the test ends (the GC-free way: a ring). */
static char *text(const char *fmt, ...) {
  static char ring[2048][256];
  static int next;
  char *b = ring[next++ % 2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof ring[0], fmt, ap);
  va_end(ap);
  return b;
}

static const char *shape_text(Shape s) {
  char b[128] = "(";
  for (int i = 0; i < s.nd; i++) {
    char t[16];
    snprintf(t, sizeof t, i ? ", %d" : "%d", s.d[i]);
    strcat(b, t);
  }
  strcat(b, s.nd == 1 ? ",)" : ")");
  return text("%s", b);
}

static Shape rand_shape(int minnd, int maxnd) {
  Shape s;
  s.nd = minnd + rnd(maxnd - minnd + 1);
  for (int i = 0; i < s.nd; i++) s.d[i] = 1 + rnd(4);
  return s;
}

/* A shape that broadcasts with s: some leading axes dropped, some axes 1. */
static Shape partner(Shape s) {
  Shape p;
  int drop = rnd(s.nd + 1);
  p.nd = s.nd - drop;
  for (int i = 0; i < p.nd; i++) p.d[i] = rnd(3) == 0 ? 1 : s.d[i + drop];
  return p;
}

static int seeds;

/* A random f64 tensor of shape s, as Mist source. */
static const char *rn(Shape s) { return text("rn(%s, %d)", shape_text(s), ++seeds); }

/* An axis argument for a tensor of nd dimensions: None, an int
 * (sometimes negative) or a tuple of distinct axes. */
static const char *axis_text(int nd) {
  if (nd == 0) return "None";
  switch (rnd(4)) {
  case 0: return "None";
  case 1: return text("%d", rnd(nd));
  case 2: return text("%d", rnd(nd) - nd);
  default: {
    int a = rnd(nd), b = rnd(nd);
    if (a == b) return text("(%d,)", a);
    return text("(%d, %d)", a, b - nd);
  }
  }
}

static int rounds(void) {
  const char *e = getenv("MIST_TENSOR_GRAD_ROUNDS");
  int n = e ? atoi(e) : 3;
  return n > 0 ? n : 3;
}

/* ---- the tests ---- */

/* Arithmetic and math with broadcasting, tensors with floats. */
START_TEST(t_elementwise) {
  for (int r = 0; r < rounds(); r++) {
    seed_rng(100 + _i * 1000 + r);
    Shape a = rand_shape(0, 3), b = partner(a);
    const char *xa = rn(a), *xb = rn(b);
    static const char *const binary[] = {
      "x + y", "x - y", "x * y", "x / (y * y + 1.0)", "maximum(x, y)", "minimum(x, y)",
      "where(x > y, x * y, y)", "x * y + x / (1.0 + y * y) - y", "exp(x) ** 2 * y", "(x * x + 0.5) ** y",
    };
    for (size_t i = 0; i < sizeof binary / sizeof *binary; i++) {
      check(text("%s %s %s", binary[i], shape_text(a), shape_text(b)), "x, y", binary[i], text("%s, %s", xa, xb));
      check(text("%s %s %s", binary[i], shape_text(b), shape_text(a)), "x, y", binary[i], text("%s, %s", xb, xa));
      check(text("%s %s float", binary[i], shape_text(a)), "x, y", binary[i], text("%s, 1.3", xa));
      check(text("%s float %s", binary[i], shape_text(a)), "x, y", binary[i], text("-0.7, %s", xa));
    }
    static const char *const unary[] = {
      "exp(x)", "log(x * x + 0.5)", "sqrt(x * x + 0.5)", "sin(x)", "cos(x)", "tanh(x)",
      "sigmoid(x)", "relu(x)", "abs(x)", "-x", "+x", "x ** 3", "x ** 2.0", "pow(x * x + 0.5, 1.5)",
      "clip(x, -0.5, 0.5)", "clip(x, None, 0.3)", "clip(x, -0.2, None)", "float(sum(x)) * x",
    };
    for (size_t i = 0; i < sizeof unary / sizeof *unary; i++)
      check(text("%s %s", unary[i], shape_text(a)), "x", unary[i], xa);
    check(text("clip tensor bounds %s", shape_text(a)), "x, lo, hi", "clip(x, lo, hi)",
          text("%s, %s - 1.0, %s + 0.5", xa, xb, xb));
  }
  run_checks();
}
END_TEST

/* matmul: matrices, batches with broadcast batch axes, vectors. */
START_TEST(t_matmul) {
  for (int r = 0; r < rounds(); r++) {
    seed_rng(200 + r);
    int m = 1 + rnd(4), k = 1 + rnd(4), n = 1 + rnd(4), b = 2 + rnd(2);
    static const char *const forms[][2] = {
      {"(%1$d, %2$d)", "(%2$d, %3$d)"},       {"(%4$d, %1$d, %2$d)", "(%2$d, %3$d)"},
      {"(%1$d, %2$d)", "(%4$d, %2$d, %3$d)"}, {"(%4$d, 1, %1$d, %2$d)", "(2, %2$d, %3$d)"},
      {"(%2$d,)", "(%2$d, %3$d)"},            {"(%1$d, %2$d)", "(%2$d,)"},
      {"(%2$d,)", "(%2$d,)"},                 {"(%2$d,)", "(%4$d, %2$d, %3$d)"},
      {"(%4$d, %1$d, %2$d)", "(%2$d,)"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
      char sa[64], sb[64];
      snprintf(sa, sizeof sa, forms[i][0], m, k, n, b);
      snprintf(sb, sizeof sb, forms[i][1], m, k, n, b);
      const char *va = text("rn(%s, %d)", sa, ++seeds), *vb = text("rn(%s, %d)", sb, ++seeds);
      check(text("%s @ %s", sa, sb), "x, y", "x @ y", text("%s, %s", va, vb));
      check(text("matmul(%s, %s)", sa, sb), "x, y", "matmul(x, y)", text("%s, %s", va, vb));
    }
    /* a layer: x @ W + b, the bias broadcast over the batch */
    line("X = rn((%d, %d), %d)", m, k, ++seeds);
    int sw = ++seeds, sb = ++seeds;
    check("layer", "W, bias", "log_softmax(tanh(X @ W + bias))", text("rn((%d, %d), %d), rn((%d,), %d)", k, n, sw, n, sb));
  }
  run_checks();
}
END_TEST

/* Reductions with axis= and keepdims=, by position, keyword and method. */
START_TEST(t_reductions) {
  for (int r = 0; r < rounds(); r++) {
    seed_rng(300 + r);
    static const char *const fns[] = {"sum", "mean", "max", "min", "prod"};
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
      Shape s = rand_shape(1, 4);
      const char *x = rn(s), *ax = axis_text(s.nd), *keep = rnd(2) ? "True" : "False";
      check(text("%s(%s, axis=%s, keepdims=%s)", fns[i], shape_text(s), ax, keep), "x",
            text("%s(x, axis=%s, keepdims=%s)", fns[i], ax, keep), x);
      check(text("%s.%s(axis=%s)", shape_text(s), fns[i], ax), "x", text("x.%s(axis=%s)", fns[i], ax), x);
      check(text("%s(%s)", fns[i], shape_text(s)), "x", text("%s(x)", fns[i]), x);
    }
    Shape s = rand_shape(1, 3);
    int ax = rnd(s.nd);
    check(text("sum(x, %d) %s", ax, shape_text(s)), "x", text("sum(x, %d)", ax), rn(s));
    check(text("mean(x, %d, True) %s", ax, shape_text(s)), "x", text("mean(x, %d, True)", ax), rn(s));
    check(text("max(x, %d) %s", ax, shape_text(s)), "x", text("max(x, %d)", ax), rn(s));
  }
  /* prod with zeros: one zero in a row, two zeros in a row */
  check("prod with zeros", "x", "prod(x * tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]], \"f64\"), 1)",
        "rn((3, 3), 1)");
  run_checks();
}
END_TEST

/* Shapes and conversions. */
START_TEST(t_shapes) {
  for (int r = 0; r < rounds(); r++) {
    seed_rng(400 + r);
    Shape s = rand_shape(2, 4);
    const char *x = rn(s);
    int n = 1;
    for (int i = 0; i < s.nd; i++) n *= s.d[i];
    check(text("reshape %s", shape_text(s)), "x", text("reshape(x, (%d, 1)) * 2.0", n), x);
    check(text("reshape -1 %s", shape_text(s)), "x", text("reshape(x, (-1, %d))", s.d[s.nd - 1]), x);
    check(text("reshape varargs %s", shape_text(s)), "x", text("reshape(x, 1, %d)", n), x);
    check(text("x.reshape %s", shape_text(s)), "x", text("x.reshape(%d, -1)", s.d[0]), x);
    /* a random permutation */
    int perm[6];
    for (int i = 0; i < s.nd; i++) perm[i] = i;
    for (int i = s.nd - 1; i > 0; i--) {
      int j = rnd(i + 1), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    char pt[64] = "", pv[64] = "";
    for (int i = 0; i < s.nd; i++) {
      char t[16];
      snprintf(t, sizeof t, i ? ", %d" : "%d", perm[i] - (rnd(2) ? s.nd : 0));
      strcat(pt, t);
    }
    strcpy(pv, pt);
    check(text("transpose %s (%s)", shape_text(s), pt), "x", text("transpose(x, (%s))", pt), x);
    check(text("transpose varargs %s", shape_text(s)), "x", text("transpose(x, %s)", pv), x);
    check(text("x.transpose %s", shape_text(s)), "x", text("x.transpose(%s)", pv), x);
    check(text("transpose %s", shape_text(s)), "x", "transpose(x)", x);
    check(text("x.T %s", shape_text(s)), "x", "x.T", x);
    check(text("broadcast_to %s", shape_text(s)), "x", text("broadcast_to(x, (2,) + x.shape)"), x);
    Shape p = partner(s);
    check(text("broadcast_to %s to %s", shape_text(p), shape_text(s)), "x", text("broadcast_to(x, %s)", shape_text(s)),
          rn(p));
    check(text("flatten %s", shape_text(s)), "x", "flatten(x)", x);
    int ax = rnd(s.nd + 1);
    check(text("expand_dims %s %d", shape_text(s), ax), "x", text("expand_dims(x, %d)", ax), x);
    check(text("squeeze %s", shape_text(s)), "x", text("squeeze(expand_dims(x, %d))", ax), x);
    check(text("squeeze axis %s", shape_text(s)), "x", text("squeeze(expand_dims(x, %d), %d)", ax, ax), x);
    check(text("astype %s", shape_text(s)), "x", "astype(x, \"f64\") * x", x);
    check(text("astype int %s", shape_text(s)), "x", "astype(x, \"i64\") * x", x);
    check(text("item %s", shape_text(s)), "x", "item(reshape(x, (-1,))[1]) * x", x);
    check(text("tolist %s", shape_text(s)), "x", "tensor(tolist(x), \"f64\") * x[0]", x);
    char path[64] = "";
    for (int i = 0; i < s.nd; i++) strcat(path, i + 1 < s.nd ? "[0]" : "[-1]");
    check(text("tolist item %s", shape_text(s)), "x", text("tolist(x)%s * x", path), x);
  }
  run_checks();
}
END_TEST

/* concat, stack, the softmax family, tensors made from floats. */
START_TEST(t_combine) {
  for (int r = 0; r < rounds(); r++) {
    seed_rng(500 + r);
    Shape s = rand_shape(1, 3), t = s;
    int ax = rnd(s.nd);
    t.d[ax] = 1 + rnd(3);
    const char *x = rn(s), *y = rn(t);
    check(text("concat %s %s axis %d", shape_text(s), shape_text(t), ax), "x, y",
          text("concat([x, y, x * y[0:1] if %d == 0 else x], %d)", ax, ax - (rnd(2) ? s.nd : 0)), text("%s, %s", x, y));
    check(text("concat tuple %s", shape_text(s)), "x, y", text("concat((x, y), axis=%d)", ax), text("%s, %s", x, y));
    int sx = rnd(s.nd + 1);
    check(text("stack %s axis %d", shape_text(s), sx), "x, y", text("stack([x, y * 2.0, x], %d)", sx),
          text("%s, %s", x, rn(s)));
    check(text("stack negative %s", shape_text(s)), "x", "stack((x, x * x), -1)", x);
    static const char *const sm[] = {"softmax", "log_softmax"};
    for (int i = 0; i < 2; i++) {
      Shape u = rand_shape(1, 3);
      const char *a = axis_text(u.nd);
      check(text("%s %s axis %s", sm[i], shape_text(u), a), "x", text("%s(x, %s)", sm[i], a), rn(u));
      check(text("%s %s", sm[i], shape_text(u)), "x", text("%s(x)", sm[i]), rn(u));
      check(text("%s %s axis= keyword", sm[i], shape_text(u)), "x", text("%s(x, axis=0)", sm[i]), rn(u));
    }
    Shape u = rand_shape(1, 3);
    const char *a = axis_text(u.nd), *keep = rnd(2) ? "True" : "False";
    check(text("logsumexp %s axis %s keepdims %s", shape_text(u), a, keep), "x",
          text("logsumexp(x, axis=%s, keepdims=%s)", a, keep), rn(u));
    check(text("logsumexp %s", shape_text(u)), "x", "logsumexp(x)", rn(u));
    check(text("tensor of floats"), "a, b", "tensor([[a, b * a], [b, 2.0]], \"f64\")", "1.5, -0.25");
    check(text("full"), "a", "full((2, 3), a, \"f64\")", "0.75");
    check(text("linspace"), "a, b", "linspace(a, b, 5, True, \"f64\") ** 2", "0.5, 2.5");
    check(text("arange"), "a, h", "arange(a, 3.0, h, dtype=\"f64\") ** 2", "0.3, 0.7");
    check(text("linspace without endpoint"), "a, b", "linspace(a, b, 4, endpoint=False, dtype=\"f64\") ** 2", "0.5, 2.5");
  }
  run_checks();
}
END_TEST

/* conv2d and max_pool2d, against central differences. */
START_TEST(t_nn) {
  for (int r = 0; r < rounds(); r++) {
    seed_rng(600 + r);
    int n = 1 + rnd(2), cin = 1 + rnd(3), cout = 1 + rnd(3), h = 4 + rnd(3), w = 4 + rnd(3);
    int kh = 1 + rnd(3), kw = 1 + rnd(3), sh = 1 + rnd(2), sw = 1 + rnd(2), ph = rnd(2), pw = rnd(2);
    const char *x = text("rn((%d, %d, %d, %d), %d)", n, cin, h, w, ++seeds);
    const char *wt = text("rn((%d, %d, %d, %d), %d)", cout, cin, kh, kw, ++seeds);
    const char *b = text("rn((%d,), %d)", cout, ++seeds);
    check(text("conv2d x %d,%d,%d,%d w %d,%d,%d,%d", n, cin, h, w, cout, cin, kh, kw), "x, w", "conv2d(x, w)",
          text("%s, %s", x, wt));
    check(text("conv2d bias stride (%d, %d) padding (%d, %d)", sh, sw, ph, pw), "x, w, b",
          text("conv2d(x, w, b, (%d, %d), (%d, %d))", sh, sw, ph, pw), text("%s, %s, %s", x, wt, b));
    check("conv2d one image", "x, w, b", text("conv2d(x[0], w, bias=b, stride=%d, padding=%d)", sh, ph),
          text("%s, %s, %s", x, wt, b));
    int k = 1 + rnd(3), ks = 1 + rnd(2), kp = rnd((k < kh ? k : kh) / 2 + 1);
    check(text("max_pool2d %d", k), "x", text("max_pool2d(x, %d)", k), x);
    check(text("max_pool2d (%d, %d) stride %d padding %d", k, kh, ks, kp), "x",
          text("max_pool2d(x, (%d, %d), %d, %d)", k, kh, ks, kp), x);
    check("max_pool2d one image", "x", text("max_pool2d(x[0], kernel=2, stride=1)"), x);
    check("conv, relu, pool", "x, w", "max_pool2d(relu(conv2d(x, w, None, 1, 1)), 2, 1)", text("%s, %s", x, wt));
  }
  run_checks();
}
END_TEST

/* Indexing, updates, loops and unpacking over tensors. */
START_TEST(t_indexing) {
  line("A = rn((3, 4, 2), 1)");
  static const char *const idx[] = {
    "x[1]", "x[-1]", "x[1:3]", "x[:, 0]", "x[:, ::-2]", "x[1, 2]", "x[1, 2, 0] * x", "x[None, 0]",
    "x[tensor([0, 2, 2, 0])]", "x[:, tensor([3, 3, 1])]", "x[[2, 0, 2]]", "x[A > 0]", "x[:, 1:, 1]",
    "x[tensor([[0, 1], [1, 1]])]", "float(x[0, 0, 0]) * x[1]",
  };
  for (size_t i = 0; i < sizeof idx / sizeof *idx; i++) check(idx[i], "x", idx[i], "A");
  line("def set_row(x, v):\n    x[1] = v\n    return x * x");
  line("def set_slice(x, v):\n    x[0, 1:3] = v * 2.0\n    return x * x");
  line("def set_column(x, v):\n    x[:, 0] = v\n    return x * exp(x)");
  line("def set_index(x, v):\n    x[tensor([0, 2])] = v\n    return x * x");
  check("x[1] = v", "x, v", "set_row(x, v)", "A, rn((4, 2), 2)");
  check("x[0, 1:3] = v", "x, v", "set_slice(x, v)", "A, rn((2, 2), 3)");
  check("x[:, 0] = v", "x, v", "set_column(x, v)", "A, rn((3, 2), 4)");
  check("x[idx] = v", "x, v", "set_index(x, v)", "A, rn((2, 4, 2), 5)");
  line("def rows(x):\n    s = 0.0\n    for row in x:\n        s = s + sum(row * row) * float(row[0, 0])\n    return s");
  line("def pairs(x):\n    a, b, c = x\n    return a * b + c");
  line("def loop(x):\n    acc = x[0] * 0.0\n    i = 0\n    while i < 5:\n        acc = acc + x[i %% 3] * float(i)\n        i = i + 1\n    return acc");
  check("for row in x", "x", "rows(x)", "A");
  check("a, b, c = x", "x", "pairs(x)", "A");
  check("while with indexing", "x", "loop(x)", "A");
  check("sum of a list of tensors", "x, y", "sum([x, y, x * y])", "A, rn((4, 2), 6)");
  check("sum of a list, start", "x, y", "sum([x, y], y)", "A, rn((2,), 7)");
  check("list comprehension of rows", "x", "stack([r * r for r in x])", "A");
  run_checks();
}
END_TEST

/* An f32 argument gets an f32 gradient of its shape, whatever dtype its
 * uses compute in, and the numbers agree with the f64 computation. */
START_TEST(t_dtypes) {
  line("def same32(name, f, x):\n"
       "    g32 = grad(f)(astype(x, \"f32\"))\n"
       "    g64 = grad(f)(x)\n"
       "    if g32.dtype == \"f32\" and g32.shape == x.shape and allclose(g32, g64, 1e-3, 1e-4):\n"
       "        print(\"ok\", name)\n"
       "    else:\n"
       "        print(\"FAIL\", name, g32, g64)");
  line("W = rn((3, 4), 1)\nb = rn((4,), 2)\nv = rn((2, 3), 3)");
  static const char *const fns[] = {
    "sum(x * v)", "sum(exp(x) * v)", "sum(tanh(x @ W + b))", "sum(log_softmax(x @ W) * 2.0)", "sum(x[0] * v[1])",
    "mean(softmax(x, 0) * v)", "logsumexp(x * v, None)", "sum(relu(x) * v) + sum(x)", "sum(astype(x, \"f64\") * v)",
    "max(x * v)", "sum(concat([x, v], 0) ** 2)", "sum(where(v > 0, x, 2.0 * x))", "sum(x.T @ v)",
  };
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
    line("same32(\"%s\", lambda x: %s, rn((2, 3), %d))", label(fns[i]), fns[i], 10 + (int)i);
    nchecks++;
  }
  /* an integer tensor that is not differentiated is used as it is (asking
   * for its derivative is an error: tests/scripts/autodiff/err_int_tensor) */
  line("gi = grad(lambda x, i: sum(x * i))(rn((3,), 4), tensor([1, 2, 3]))\n"
       "print(\"ok int\" if tolist(gi) == [1.0, 2.0, 3.0] else \"FAIL int\")");
  nchecks++;
  run_checks();
}
END_TEST

/* Reverse over reverse: the rules' own rules (sum_to, _unreduce,
 * _broadcast_like, the convolution's backward kernels...). */
START_TEST(t_second_order) {
  line("W = rn((3, 4), 1)\nb = rn((4,), 2)\nK = rn((2, 1, 2, 2), 3)");
  static const char *const fns[] = {
    "sum(tanh(x @ W + b) ** 2)", "sum(x * x * b[0:3])", "logsumexp(x * x)", "sum(softmax(x * x, 0) * x)",
    "sum(log_softmax(x @ W) ** 2)", "sum(mean(x * x, 0) * x[0])", "max(x * x)", "sum(broadcast_to(x, (2, 3)) ** 3)",
    "sum(reshape(x * x, (3, 1)) @ reshape(x, (1, 3)))", "sum(x[1:] ** 3)", "sum(conv2d(reshape(x * x, (1, 1, 1, 3)), K, None, 1, 1) ** 2)",
    "sum(max_pool2d(reshape(x, (1, 1, 1, 3)) ** 3, (1, 2), 1))", "prod(x * x + 1.0)", "sum(concat([x, x * x]) ** 2)",
  };
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
    line("check(\"d2 %s\", lambda x: grad(lambda x: %s)(x), (rn((3,), %d),), False, 1e-4)", label(fns[i]), fns[i], 20 + (int)i),
        nchecks++;
  run_checks();
}
END_TEST

static Suite *tensor_grad_suite(void) {
  Suite *s = suite_create("tensor_grad");
  TCase *tc = tcase_create("rules");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, t_elementwise, 0, 2);
  tcase_add_test(tc, t_matmul);
  tcase_add_test(tc, t_reductions);
  tcase_add_test(tc, t_shapes);
  tcase_add_test(tc, t_combine);
  tcase_add_test(tc, t_nn);
  tcase_add_test(tc, t_indexing);
  tcase_add_test(tc, t_dtypes);
  tcase_add_test(tc, t_second_order);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(tensor_grad_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
