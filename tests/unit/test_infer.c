/* test_infer.c: type and shape inference (ir/infer.c, docs/types.md).
 *
 * - The IR-text tests of tests/ir/infer (NAME.ir): an input unit, a line
 *   `# infer: @NAME(TYPE, ...)` (the graph and its signature), then
 *   `# expect:` and the typed printout of the specialised copies, or
 *   `# expect-error: MSG` when inference must prove an error.  The
 *   printout must read back (ir_read_typed) and print the same.
 * - The type text: each form parses and prints back; bad texts fail
 *   with a message and never crash (a mutation sweep).
 * - The lattice: join is commutative, idempotent and an upper bound.
 * - A property test on random programs (tests/unit/adgen.c): for f and
 *   for grad(f), at random float points, the interpreter's result is a
 *   value of the inferred result type; the specialised copy, run by the
 *   interpreter, gives the same result as f; and each node of the
 *   copy's own schedule, made its output, computes a value of the type
 *   inferred for it.
 * - The interpreter's shape errors, proven before running, with its
 *   message and position (mist ir --types is the CLI of the same).
 */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adgen.h"
#include "testfiles.h"
#include "ir/eval.h"
#include "ir/infer.h"
#include "ir/passes.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "mist.h"

static MistVM *vm;
static Buf out;

static void setup(void) { vm = capture_vm_new(&out); }

static void teardown(void) {
  capture_vm_free(vm, &out);
  vm = NULL;
}

static const char *err_msg(void) {
  return vm->err.set && vm->err.message ? vm->err.message->data : "(no error)";
}

static void put_type(void *ud, IrNode *n, IrType *t) { ir_map_put(ud, n, t); }
static IrType *map_type(void *ud, const IrNode *n) { return ir_map_get(ud, n); }

static IrType *ty(const char *text) {
  IrType *t = ir_parse_argtype(vm, text);
  ck_assert_msg(t != NULL, "cannot parse '%s': %s", text, err_msg());
  return t;
}

/* ---- the type text ---- */

START_TEST(t_type_text) {
  static const char *forms[] = {
    "never", "any", "None", "bool", "int", "float", "str", "slice", "Unbound", "module",
    "f32[64,784]", "f64[?,3]", "i64[]", "bool[2]", "f32[...]", "tensor[...]", "tensor[2,?]",
    "(int, float)", "()", "(int,)", "((float, None), f32[3])", "[int, float]", "[float, ...]",
    "[]", "{\"a\": int, \"b\\n\": [float, ...]}", "{}", "env{3: float, 7: f32[3]}",
    "float | None", "f32[3] | None", "(None, float | None) | None", "$exp", "prim.add",
    "float | Unbound", "float | None | Unbound", "None | Unbound", "range",
  };
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    IrType *t = ty(forms[i]);
    ck_assert_str_eq(ir_type_str(t), forms[i]);
    ck_assert(ir_type_eq(t, ty(ir_type_str(t))));
  }
  static const char *bad[] = {
    "", "f32[", "f32[-1]", "f33[2]", "(int", "(int)", "[float, ...", "{1: int}", "env{}",
    "env{3: int, 2: int}", "None | None", "any | None", "int | float", "$no_such_builtin",
    "prim.nope", "float]", "@h", "float | Unbound | None", "Unbound | Unbound", "f32[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33]",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lang_error_clear(vm);
    ck_assert_msg(ir_parse_argtype(vm, bad[i]) == NULL, "'%s' parsed", bad[i]);
    ck_assert(vm->err.set);
  }
}
END_TEST

/* Mutations of valid type texts: each parses or fails cleanly. */
START_TEST(t_type_text_fuzz) {
  static const char *seeds[] = {
    "{\"a\": (int, [float, ...]), \"b\": env{1: f32[?,3] | None}}", "((f64[2,3], None | Unbound), $exp, prim.add)",
    "[bool[...], tensor[4], (int,)]",
  };
  const char alphabet[] = "()[]{},:?.|$@\"\\ 0123456789-abcdefintlosuNA\n";
  uint64_t r = 12345;
  int parsed = 0;
  for (int round = 0; round < 3000; round++) {
    const char *seed = seeds[round % 3];
    char buf[256];
    size_t n = strlen(seed);
    memcpy(buf, seed, n + 1);
    for (int k = 0; k < 1; k++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      size_t at = (size_t)(r >> 33) % n;
      int op = (int)((r >> 20) % 3);
      char c = alphabet[(r >> 40) % (sizeof alphabet - 1)];
      if (op == 0) buf[at] = c;
      else if (op == 1 && n > 1) memmove(buf + at, buf + at + 1, n - at), n--;
      else if (n < sizeof buf - 2) memmove(buf + at + 1, buf + at, n - at + 1), buf[at] = c, n++;
    }
    buf[n] = 0;
    lang_error_clear(vm);
    IrType *t = ir_parse_argtype(vm, buf);
    if (t) {
      parsed++;
      ck_assert(ir_type_eq(t, ty(ir_type_str(t))));
    } else {
      ck_assert(vm->err.set);
    }
  }
  ck_assert_int_gt(parsed, 100);
}
END_TEST

/* Mutations of typed printouts: the typed reader fails cleanly or reads
 * a unit whose typed printout reads back the same. */
START_TEST(t_typed_reader_fuzz) {
  static const char *seed =
    "# file m.ms\n"
    "graph @f(%x: f32[2,?] | None, %y: {\"a\\x01\": (int, [float, ...])}) : function {  # 1:1\n"
    "  %1 = switch(%x, @f.a, @f.b) : @f.a | @f.b  # 2:3\n"
    "  %2 = %1() : env{1: float, 4: f64[]} | Unbound  # 2:3+4\n"
    "  return %2 : (range, $exp, prim.add, any, never)\n"
    "}\n\n"
    "graph @f.a() in @f : branch {\n  return %x : float\n}\n\n"
    "graph @f.b() in @f : branch {\n  return %y\n}\n";
  const char alphabet[] = "()[]{},:?.|$@%\"\\ 0123456789-abefilnortxN\n#=";
  uint64_t r = 99;
  int read = 0;
  size_t n0 = strlen(seed);
  char *buf = lang_alloc(n0 + 64);
  for (int round = 0; round < 2000; round++) {
    size_t n = n0;
    memcpy(buf, seed, n + 1);
    for (int k = 0; k < 1 + round % 3; k++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      size_t at = (size_t)(r >> 33) % n;
      int op = (int)((r >> 20) % 3);
      char c = alphabet[(r >> 40) % (sizeof alphabet - 1)];
      if (op == 0) buf[at] = c;
      else if (op == 1 && n > 1) memmove(buf + at, buf + at + 1, n - at), n--;
      else if (n < n0 + 60) memmove(buf + at + 1, buf + at, n - at + 1), buf[at] = c, n++;
    }
    buf[n] = 0;
    lang_error_clear(vm);
    NodeMap types = {0};
    IrUnit *u = ir_read_typed(vm, "m.ir", buf, n, put_type, &types);
    if (!u) {
      ck_assert(vm->err.set);
      continue;
    }
    read++;
    StrBuf a, b;
    sb_init(&a);
    sb_init(&b);
    ir_print_unit_typed(vm, u, &a, map_type, &types);
    NodeMap types2 = {0};
    IrUnit *u2 = ir_read_typed(vm, "m.ir", a.data, a.len, put_type, &types2);
    ck_assert_msg(u2 != NULL, "the printout does not read back: %s\n%s", err_msg(), a.data);
    ir_print_unit_typed(vm, u2, &b, map_type, &types2);
    ck_assert_str_eq(a.data, b.data);
  }
  ck_assert_int_gt(read, 100);
}
END_TEST

/* ---- the lattice ---- */

START_TEST(t_lattice) {
  static const char *ts[] = {
    "never", "any", "None", "bool", "int", "float", "str", "f32[3,4]", "f32[3,5]", "f32[4]",
    "f64[3,4]", "tensor[...]", "(int, float)", "(int, None)", "(float,)", "[float, float]",
    "[float, ...]", "[int]", "{\"a\": int}", "env{1: float}", "env{2: f32[3]}", "float | None",
    "f32[3,4] | None", "$exp", "$log", "Unbound", "float | Unbound", "None | Unbound", "range",
  };
  int n = sizeof ts / sizeof ts[0];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      IrType *a = ty(ts[i]), *b = ty(ts[j]);
      IrType *ab = ir_type_join(a, b), *ba = ir_type_join(b, a);
      ck_assert_msg(ir_type_eq(ab, ba), "%s | %s: %s vs %s", ts[i], ts[j], ir_type_str(ab), ir_type_str(ba));
      ck_assert(ir_type_eq(ir_type_join(ab, a), ab));   /* an upper bound */
      ck_assert(ir_type_eq(ir_type_join(ab, b), ab));
      ck_assert(ir_type_eq(ir_type_join(a, a), a));
    }
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("f32[3,4]"), ty("f32[3,5]"))), "f32[3,?]");
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("f32[3,4]"), ty("f32[4]"))), "f32[...]");
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("int"), ty("float"))), "any");
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("None"), ty("float"))), "float | None");
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("Unbound"), ty("float | None"))), "float | None | Unbound");
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("(int, None)"), ty("(int, float)"))), "(int, float | None)");
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("[float, float]"), ty("[float]"))), "[float, ...]");
  ck_assert_str_eq(ir_type_str(ir_type_join(ty("env{1: float}"), ty("env{2: f32[3]}"))),
                   "env{1: float | None, 2: f32[3] | None}");
}
END_TEST

/* ---- IR-text tests of inference: tests/ir/infer ---- */

/* `@name(T1, T2, ...)`: the graph and the argument types */
static const char *parse_signature(IrUnit *u, char *sig, IrGraph **g, int *nargs, IrType ***args) {
  while (*sig == ' ') sig++;
  if (*sig != '@') return "the signature must start with @NAME";
  char *open = strchr(sig, '(');
  char *close = strrchr(sig, ')');
  if (!open || !close || close < open) return "the signature needs (...)";
  *open = 0;
  *g = NULL;
  for (int i = 0; i < u->ngraphs; i++)
    if (strcmp(u->graphs[i]->name->data, sig + 1) == 0) *g = u->graphs[i];
  if (!*g) return "no such graph";
  *close = 0;
  *nargs = 0;
  *args = lang_alloc(64 * sizeof **args);
  char *p = open + 1;
  int depth = 0;
  char *start = p;
  for (;; p++) {
    if (*p == '(' || *p == '[' || *p == '{') depth++;
    else if (*p == ')' || *p == ']' || *p == '}') depth--;
    if ((*p == ',' && depth == 0) || *p == 0) {
      char save = *p;
      *p = 0;
      while (*start == ' ') start++;
      if (*start) {
        IrType *t = ir_parse_argtype(vm, start);
        if (!t || *nargs == 64) return "bad argument type";
        (*args)[(*nargs)++] = t;
      }
      if (!save) break;
      start = p + 1;
    }
  }
  return NULL;
}

static const char *run_infer_test(const char *path) {
  char *text = testfiles_read(path);
  if (!text) return "cannot read the file";
  char *sigl = testfiles_find_line(text, "# infer:");
  if (!sigl) return "no '# infer:' line";
  char *expect = testfiles_find_line(sigl, "# expect:");
  char *expect_err = testfiles_find_line(sigl, "# expect-error:");
  if (!expect && !expect_err) return "no '# expect:' or '# expect-error:' line";
  *sigl = 0;
  char *sig = sigl + strlen("# infer:");
  char *eol = strchr(sig, '\n');
  if (eol) *eol = 0;
  lang_error_clear(vm);
  IrUnit *u = ir_read(vm, path, text, strlen(text));
  if (!u || !ir_verify_unit(vm, u)) return lang_str_fmt("reading: %s", err_msg())->data;
  IrGraph *g;
  int nargs;
  IrType **args;
  const char *why = parse_signature(u, sig, &g, &nargs, &args);
  if (why) return why;
  IrTyped *t = ir_infer(vm, g, nargs, args, NULL);
  if (expect_err) {
    const char *want = expect_err + strlen("# expect-error:");
    while (*want == ' ') want++;
    char *e = strchr(want, '\n');
    if (e) *e = 0;
    if (t) return "expected an error, but inference passed";
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%d:%d: %s", vm->err.span.line, vm->err.span.col, err_msg());
    if (strcmp(sb.data, want) != 0) return lang_str_fmt("expected the error\n  %s\ngot\n  %s", want, sb.data)->data;
    return "";
  }
  if (!t) return lang_str_fmt("inference failed: %s", err_msg())->data;
  expect = strchr(expect, '\n') ? strchr(expect, '\n') + 1 : expect + strlen(expect);
  testfiles_trim_end(expect);
  StrBuf sb;
  sb_init(&sb);
  ir_print_typed(vm, t, &sb);
  char *got = sb.data;
  testfiles_trim_end(got);
  if (strcmp(got, expect) != 0) return lang_str_fmt("expected:\n%s\n--- got:\n%s", expect, got)->data;
  if (!ir_verify_unit(vm, t->unit)) return lang_str_fmt("the copies do not verify: %s", err_msg())->data;
  /* the typed text reads back and prints the same */
  NodeMap types = {0};
  IrUnit *u2 = ir_read_typed(vm, path, got, strlen(got), put_type, &types);
  if (!u2) return lang_str_fmt("the output does not read back: %s", err_msg())->data;
  StrBuf again;
  sb_init(&again);
  ir_print_unit_typed(vm, u2, &again, map_type, &types);
  testfiles_trim_end(again.data);
  if (strcmp(again.data, got) != 0)
    return lang_str_fmt("the output does not round-trip:\n%s", again.data)->data;
  /* a second call with the signature is the cached result */
  if (ir_infer(vm, g, nargs, args, NULL) != t) return "the second inference was not cached";
  return "";
}

START_TEST(t_infer_files) {
#ifndef MIST_SOURCE_DIR
#define MIST_SOURCE_DIR NULL
#endif
  const char *dir = testfiles_dir("tests/ir/infer", MIST_SOURCE_DIR);
  ck_assert_msg(dir != NULL, "cannot find tests/ir/infer (set MIST_SOURCE_DIR)");
  int failed, n = testfiles_each(dir, ".ir", run_infer_test, &failed);
  ck_assert_msg(n >= 5, "only %d inference tests in %s", n, dir);
  ck_assert_msg(failed == 0, "%d of %d inference tests failed (see stderr)", failed, n);
}
END_TEST

/* ---- errors proven before running ---- */

static const char *run(const char *src) {
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", src, false);
  ck_assert_msg(s == MIST_OK, "failed:\n%s\n--- error:\n%s", src, mist_error(vm));
  return out.data;
}

static ObjFunc *global_fn(const char *name) {
  Value slot;
  ck_assert(lang_dict_get(vm->main->names, lang_str(name), &slot));
  Value v = vm->main->slots[slot.i];
  ck_assert_msg(v_is_obj(v, O_FUNC), "%s is not a function", name);
  return AS_FUNC(v);
}

START_TEST(t_shape_errors) {
  static const struct {
    const char *def;
    const char *sig[2];
    const char *call;
  } cases[] = {
    {"def f(x, y):\n    z = x * 2.0\n    return z + y\n", {"f32[3]", "f32[4]"},
     "f(zeros(3), zeros(4))"},
    {"def f(x, y):\n    return (x @ y).sum()\n", {"f32[2,3]", "f32[2,3]"},
     "f(zeros((2, 3)), zeros((2, 3)))"},
    {"def f(x, y):\n    return x.sum(axis=2) + y\n", {"f32[2,3]", "float"},
     "f(zeros((2, 3)), 1.0)"},
    {"def f(x, y):\n    for i in range(2):\n        x = x + 1.0\n    return x @ y\n", {"f64[5]", "f64[4,1]"},
     "f(zeros(5, dtype='f64'), zeros((4, 1), dtype='f64'))"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run(cases[i].def);
    ObjFunc *f = global_fn("f");
    IrType *args[2] = {ty(cases[i].sig[0]), ty(cases[i].sig[1])};
    lang_error_clear(vm);
    ck_assert_msg(ir_infer(vm, f->graph, 2, args, NULL) == NULL, "case %zu inferred", i);
    Span span = vm->err.span;
    char *msg = strdup(err_msg());
    lang_error_clear(vm);
    ck_assert(mist_eval(vm, "<t>", cases[i].call, false) == MIST_ERROR);
    ck_assert_str_eq(msg, vm->err.message->data);
    ck_assert_int_eq(span.line, vm->err.span.line);
    ck_assert_int_eq(span.col, vm->err.span.col);
    ck_assert_int_eq(span.file, vm->err.span.file);
    free(msg);
  }
  /* an error on a branch that may not run is not reported */
  run("def g(x, y, c):\n    if c:\n        return x + y\n    return x\n");
  IrType *args[3] = {ty("f32[3]"), ty("f32[4]"), ty("bool")};
  IrTyped *t = ir_infer(vm, global_fn("g")->graph, 3, args, NULL);
  ck_assert_msg(t != NULL, "%s", err_msg());
  ck_assert_str_eq(ir_type_str(t->ret), "f32[3]");
}
END_TEST

/* the conversions are typed by their result, whatever they are given */
START_TEST(t_conversions) {
  static const struct {
    const char *body, *arg, *ret;
  } cases[] = {
      {"bool(x)", "int", "bool"},      {"bool(x)", "str", "bool"},      {"bool(x)", "f32[2]", "bool"},
      {"bool(x)", "[int, ...]", "bool"}, {"bool()", "int", "bool"},     {"bool(x) and x > 1", "int", "bool"},
      {"int(x)", "float", "int"},      {"float(x)", "int", "float"},    {"len(x)", "f32[4,2]", "int"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[128];
    snprintf(src, sizeof src, "def f(x):\n    return %s\n", cases[i].body);
    run(src);
    IrType *args[1] = {ty(cases[i].arg)};
    IrTyped *t = ir_infer(vm, global_fn("f")->graph, 1, args, NULL);
    ck_assert_msg(t != NULL, "%s: %s", cases[i].body, err_msg());
    ck_assert_msg(strcmp(ir_type_str(t->ret), cases[i].ret) == 0, "%s of %s: %s, not %s", cases[i].body,
                  cases[i].arg, ir_type_str(t->ret), cases[i].ret);
  }
}
END_TEST

/* ---- the property test ---- */

static const AdGenOpts PROGRAMS = {.containers = true, .modules = false, .methods = true};

typedef struct Tally {
  int programs, results, precise, nodes, checked_nodes;
} Tally;

static Value call_fn(Value f, int n, const Value *args, bool *ok) {
  Value r;
  *ok = vm->call(vm, f, n, args, NULL, &r);
  if (!*ok) lang_error_clear(vm);
  return r;
}

/* ir_type_has_value, but a closure type takes a closure of any graph:
 * the probes below run copies of the graphs the types name. */
static bool fits(const IrType *t, Value v) {
  if (t->or_none && v.tag == V_NONE) return true;
  if (t->kind == IT_CLOSURE || t->kind == IT_FNSET) return v_is_obj(v, O_FUNC);
  if ((t->kind == IT_TUPLE && v_is_obj(v, O_TUPLE)) || (t->kind == IT_LIST && v_is_obj(v, O_LIST))) {
    ObjSeq *s = AS_SEQ(v);
    if (t->n >= 0 && s->len != (size_t)t->n) return false;
    for (size_t i = 0; i < s->len; i++)
      if (!fits(t->n < 0 ? t->items[0] : t->items[i], AS_SEQ(v)->items[i])) return false;
    return true;
  }
  if (t->kind == IT_DICT && v_is_obj(v, O_DICT)) {
    ObjDict *d = AS_DICT(v);
    if (d->len != (size_t)t->n) return false;
    for (int i = 0; i < t->n; i++)
      if (!lang_str_eq(AS_DICT(v)->entries[i].key, t->keys[i]) || !fits(t->items[i], AS_DICT(v)->entries[i].value))
        return false;
    return true;
  }
  return ir_type_has_value(t, v);
}

/* The values of g's free variables, which are among fn's graph's */
static Value *env_for(IrGraph *g, ObjFunc *fn) {
  ir_free_vars(g);
  ir_free_vars(fn->graph);
  Value *env = lang_alloc((size_t)(g->nfv + 1) * sizeof *env);
  for (int i = 0; i < g->nfv; i++) {
    int j = 0;
    while (j < fn->graph->nfv && fn->graph->fv[j] != g->fv[i]) j++;
    ck_assert_msg(j < fn->graph->nfv && j < fn->nenv, "a free variable of the copy is not f's");
    env[i] = fn->env[j];
  }
  return env;
}

/* Each node of the schedule of r's graph, made the output of a copy of
 * that graph, gives a value of its inferred type. */
static void check_nodes(const IrTyped *r, ObjFunc *fn, int n, const Value *args, const char *prog,
                        Tally *tally) {
  IrGraph *g = r->graph;
  for (int k = 0; k < g->nnodes; k++) {
    IrNode *x = g->nodes[k];
    IrType *t = ir_infer_type(r, x);
    ck_assert_msg(t != NULL, "a node of a copy has no type");
    if (t->kind == IT_ANY) continue;
    NodeMap m = {0};
    IrUnit *u = ir_unit_new();
    IrGraph *probe = ir_clone_graph(u, g, g->parent, &m);
    probe->ret = ir_map_get(&m, x);
    ir_forget_free_vars(probe);
    Value pf = v_obj(ev_closure(vm, probe, env_for(probe, fn)));
    bool ok;
    Value v = call_fn(pf, n, args, &ok);
    tally->nodes++;
    if (!ok) continue;   /* a later node was never reached */
    tally->checked_nodes++;
    ck_assert_msg(fits(t, v), "node %%%u of @%s: inferred %s, computed %s\n%s", x->id,
                  g->name->data, ir_type_str(t), ir_type_str(ir_type_of_value(v)), prog);
  }
}

static void check_value(Value f, int np, const Value *args, const char *what, const char *prog,
                        Tally *tally) {
  ObjFunc *fn = AS_FUNC(f);
  ir_free_vars(fn->graph);
  IrType **fv = lang_alloc((size_t)(fn->nenv + 1) * sizeof *fv);
  for (int i = 0; i < fn->nenv; i++) fv[i] = ir_infer_value_type(vm, fn->env[i]);
  IrType *targs[3];
  for (int i = 0; i < np; i++) targs[i] = ir_type_of_value(args[i]);
  IrInferOpts opts = {NULL, fv};
  lang_error_clear(vm);
  IrTyped *t = ir_infer(vm, fn->graph, np, targs, &opts);
  bool ok;
  Value r = call_fn(f, np, args, &ok);
  if (!t) {
    /* inference proved an error: the interpreter must fail too */
    ck_assert_msg(!ok, "%s: inference failed (%s) but the program ran\n%s", what, err_msg(), prog);
    return;
  }
  ck_assert_msg(ir_verify_unit(vm, t->unit), "%s: the copies do not verify: %s\n%s", what, err_msg(), prog);
  if (!ok) return;
  tally->results++;
  if (t->ret->kind != IT_ANY) tally->precise++;
  else if (getenv("MIST_INFER_SHOW_ANY")) {
    StrBuf sb;
    sb_init(&sb);
    ir_print_typed(vm, t, &sb);
    fprintf(stderr, "=== %s typed any:\n%s\n%s\n", what, prog, sb.data);
  }
  ck_assert_msg(ir_type_has_value(t->ret, r), "%s: inferred %s, computed %s\n%s", what,
                ir_type_str(t->ret), ir_type_str(ir_type_of_value(r)), prog);
  /* the specialised copy computes what f does */
  Value cf = v_obj(ev_closure(vm, t->graph, env_for(t->graph, fn)));
  Value r2 = call_fn(cf, np, args, &ok);
  ck_assert_msg(ok, "%s: the copy failed where f ran\n%s", what, prog);
  StrBuf a, b;
  sb_init(&a);
  sb_init(&b);
  lang_repr(vm, r, &a);
  lang_repr(vm, r2, &b);
  ck_assert_msg(strcmp(a.data, b.data) == 0, "%s: f gave %s, its copy %s\n%s", what, a.data, b.data, prog);
  check_nodes(t, fn, np, args, prog, tally);
}

START_TEST(t_random_programs) {
  const char *env = getenv("MIST_INFER_PROGRAMS");
  int nprog = env ? atoi(env) : 120;
  Tally tally = {0};
  Value grad;
  ck_assert(lang_dict_get(vm->builtins, lang_str("grad"), &grad));
  for (int s = 1; s <= nprog; s++) {
    Buf prog = {0};
    int np = adgen_program((uint64_t)s, &PROGRAMS, &prog);
    buf_clear(&out);
    if (mist_eval(vm, "<prog>", prog.data, false) != MIST_OK) {
      buf_free(&prog);
      continue;
    }
    tally.programs++;
    Value f = v_obj(global_fn("f"));
    uint64_t r = (uint64_t)s * 2654435761u;
    for (int point = 0; point < 2; point++) {
      Value args[3];
      for (int i = 0; i < np; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        args[i] = v_float(-2.0 + 4.0 * (double)(r >> 11) / 9007199254740992.0);
      }
      check_value(f, np, args, "f", prog.data, &tally);
      Value gf;
      if (vm->call(vm, grad, 1, &f, NULL, &gf) && v_is_obj(gf, O_FUNC))
        check_value(gf, np, args, "grad(f)", prog.data, &tally);
      lang_error_clear(vm);
    }
    buf_free(&prog);
  }
  fprintf(stderr, "test_infer: %d programs, %d results checked, %d of them typed more precisely than any; "
                  "%d of %d probed nodes ran and were checked\n",
          tally.programs, tally.results, tally.precise, tally.checked_nodes, tally.nodes);
  ck_assert_int_gt(tally.programs, nprog / 2);
  /* the test says something only if many results have a type (42% of
   * the 480 results of the default 120 programs, 40% of 16000 with
   * 4000): more than 35% */
  ck_assert_int_gt(tally.precise * 20, tally.results * 7);
  ck_assert_int_gt(tally.checked_nodes, tally.programs);
}
END_TEST

/* ---- random tensor programs ---- */

typedef struct TRng {
  uint64_t s;
} TRng;

static int trnd(TRng *r, int n) {
  r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((r->s >> 33) % (uint64_t)n);
}

/* A tensor expression over the variables v0..v(nv-1) (v0 and v1 are
 * the arguments): elementwise arithmetic with broadcasting, math
 * functions, matmul, reductions with axis and keepdims, reshape with
 * -1, transposes and indexing; shapes often do not fit, so errors are
 * made too. */
static void texpr(TRng *r, StrBuf *b, int nv, int depth) {
  const char *v = lang_str_fmt("v%d", trnd(r, nv))->data;
  if (depth <= 0) {
    sb_adds(b, v);
    return;
  }
  switch (trnd(r, 12)) {
  case 0: case 1: {
    static const char *ops[] = {" + ", " - ", " * ", " / "};
    sb_addc(b, '(');
    texpr(r, b, nv, depth - 1);
    sb_adds(b, ops[trnd(r, 4)]);
    if (trnd(r, 3) == 0) sb_adds(b, "1.5");
    else texpr(r, b, nv, depth - 1);
    sb_addc(b, ')');
    return;
  }
  case 2: {
    static const char *fns[] = {"exp", "tanh", "relu", "sigmoid", "sin"};
    sb_printf(b, "%s(", fns[trnd(r, 5)]);
    texpr(r, b, nv, depth - 1);
    sb_addc(b, ')');
    return;
  }
  case 3:
    sb_addc(b, '(');
    texpr(r, b, nv, depth - 1);
    sb_adds(b, " @ ");
    texpr(r, b, nv, depth - 1);
    sb_addc(b, ')');
    return;
  case 4:
    sb_printf(b, "%s.%s(axis=%d, keepdims=%s)", v, trnd(r, 2) ? "sum" : "mean", trnd(r, 4) - 1,
              trnd(r, 2) ? "True" : "False");
    return;
  case 5: sb_printf(b, "%s.reshape((-1,))", v); return;
  case 6: sb_printf(b, "%s.reshape((%d, -1))", v, 1 + trnd(r, 3)); return;
  case 7: sb_printf(b, "%s.T", v); return;
  case 8: sb_printf(b, "%s[%d]", v, trnd(r, 3) - 1); return;
  case 9: {
    static const char *slices[] = {"[1:]", "[::-1]", "[-2:]", "[:, 1:3]", "[0, ::2]", "[5:]"};
    sb_printf(b, "%s%s", v, slices[trnd(r, 6)]);
    return;
  }
  case 10: sb_printf(b, "maximum(%s, 0.5)", v); return;
  default: sb_printf(b, "%s.sum()", v); return;
  }
}

static void tensor_program(TRng *r, StrBuf *b) {
  sb_adds(b, "def f(v0, v1):\n");
  int nv = 2;
  int n = 2 + trnd(r, 4);
  for (int k = 0; k < n; k++) {
    if (trnd(r, 4) == 0) {
      /* a branch: the two sides may give other shapes */
      sb_printf(b, "    if v0.sum().item() > 0.0:\n        v%d = ", nv);
      texpr(r, b, nv, 1 + trnd(r, 2));
      sb_printf(b, "\n    else:\n        v%d = ", nv);
      texpr(r, b, nv, 1 + trnd(r, 2));
      sb_addc(b, '\n');
    } else {
      sb_printf(b, "    v%d = ", nv);
      texpr(r, b, nv, 1 + trnd(r, 2));
      sb_addc(b, '\n');
    }
    nv++;
  }
  sb_adds(b, "    return (");
  for (int k = 2; k < nv; k++) sb_printf(b, "v%d, ", k);
  sb_adds(b, ")\n");
}

static Value random_tensor(TRng *r) {
  int nd = trnd(r, 4);
  StrBuf b;
  sb_init(&b);
  sb_adds(&b, "randn((");
  for (int d = 0; d < nd; d++) sb_printf(&b, "%d, ", 1 + trnd(r, 3));
  sb_printf(&b, "), seed=%d)", trnd(r, 1000));
  Value v;
  buf_clear(&out);
  ck_assert(mist_eval(vm, "<t>", lang_str_fmt("_rt = %s", b.data)->data, false) == MIST_OK);
  Value slot;
  ck_assert(lang_dict_get(vm->main->names, lang_str("_rt"), &slot));
  v = vm->main->slots[slot.i];
  return v;
}

/* The pullback of f at args, given cotangents of each result's dtype or
 * of another float dtype, with args cast to f32 or f64 (chosen by r):
 * inference of its specialised copy is sound too, node by node
 * (check_value).  Backpropagators are where a sensitivity meets values
 * of another dtype; an f64 cotangent of an f32 value was once given the
 * value's dtype (sens_like_arg). */
static const char PULLBACK_PROBE[] =
    "def _pullback_probe(f, a, b, adt, cdt):\n"
    "    y, pb = vjp(f, astype(a, adt), astype(b, adt))\n"
    "    return pb, tuple([astype(ones(t.shape) * 0.5, t.dtype if cdt == \"same\" else cdt) for t in y])\n";

static bool check_pullback(TRng *r, ObjFunc *f, const Value *args, const char *prog, Tally *tally) {
  static const char *adts[] = {"f32", "f64"}, *cdts[] = {"same", "f32", "f64"};
  Value probe = v_obj(global_fn("_pullback_probe"));
  Value in[5] = {v_obj(f), args[0], args[1], v_obj(lang_str(adts[trnd(r, 2)])), v_obj(lang_str(cdts[trnd(r, 3)]))};
  Value pair;
  bool ok;
  pair = call_fn(probe, 5, in, &ok);
  if (!ok) return false;   /* a result that is not a float tensor, say */
  Value pb = AS_SEQ(pair)->items[0], ct = AS_SEQ(pair)->items[1];
  check_value(pb, 1, &ct, "the pullback", prog, tally);
  return true;
}

/* On random tensor programs: a value the interpreter computes is of the
 * inferred type; an error inference proves is the interpreter's, at the
 * same place; where the interpreter fails, inference may not know. */
START_TEST(t_random_tensor_programs) {
  const char *env = getenv("MIST_INFER_PROGRAMS");
  int nprog = env ? atoi(env) : 300;
  TRng r = {7};
  int ran = 0, proven = 0, precise = 0, agreed_errors = 0, pullbacks = 0;
  Tally tally = {0};
  buf_clear(&out);
  ck_assert_msg(mist_eval(vm, "<probe>", PULLBACK_PROBE, false) == MIST_OK, "%s", mist_error(vm));
  for (int p = 0; p < nprog; p++) {
    StrBuf prog;
    sb_init(&prog);
    tensor_program(&r, &prog);
    buf_clear(&out);
    ck_assert_msg(mist_eval(vm, "<prog>", prog.data, false) == MIST_OK, "%s\n%s", prog.data, mist_error(vm));
    ObjFunc *f = global_fn("f");
    Value args[2] = {random_tensor(&r), random_tensor(&r)};
    IrType *targs[2] = {ir_type_of_value(args[0]), ir_type_of_value(args[1])};
    lang_error_clear(vm);
    IrTyped *t = ir_infer(vm, f->graph, 2, targs, NULL);
    char *ierr = t ? NULL : strdup(err_msg());
    Span ispan = vm->err.span;
    lang_error_clear(vm);
    Value res;
    bool ok = vm->call(vm, v_obj(f), 2, args, NULL, &res);
    if (!t) {
      ck_assert_msg(!ok, "inference proved '%s' but the program ran:\n%s\nwith %s, %s", ierr, prog.data,
                    ir_type_str(targs[0]), ir_type_str(targs[1]));
      ck_assert_msg(strcmp(ierr, err_msg()) == 0, "inference: %s\ninterpreter: %s\n%s", ierr, err_msg(), prog.data);
      ck_assert_int_eq(ispan.line, vm->err.span.line);
      ck_assert_int_eq(ispan.col, vm->err.span.col);
      proven++;
      free(ierr);
      lang_error_clear(vm);
      continue;
    }
    if (!ok) {
      lang_error_clear(vm);
      continue;
    }
    ran++;
    ck_assert_msg(ir_type_has_value(t->ret, res), "inferred %s, computed %s\n%s\nwith %s, %s",
                  ir_type_str(t->ret), ir_type_str(ir_type_of_value(res)), prog.data,
                  ir_type_str(targs[0]), ir_type_str(targs[1]));
    bool all_shapes = true;
    for (int i = 0; i < t->ret->n; i++) {
      IrType *it = t->ret->items[i];
      for (int d = 0; d < it->n; d++) all_shapes &= it->dims[d] >= 0;
      all_shapes &= it->kind == IT_TENSOR && it->n >= 0;
    }
    precise += all_shapes;
    pullbacks += check_pullback(&r, f, args, prog.data, &tally);
  }
  (void)agreed_errors;
  fprintf(stderr, "test_infer: %d tensor programs, %d ran (%d with every shape inferred exactly), "
                  "%d errors proven before running, as the interpreter reports them; %d pullbacks "
                  "checked (%d of %d probed nodes ran)\n",
          nprog, ran, precise, proven, pullbacks, tally.checked_nodes, tally.nodes);
  ck_assert_int_gt(ran, nprog / 4);
  ck_assert_int_gt(pullbacks, ran / 2);
  ck_assert_int_gt(tally.checked_nodes, pullbacks);
  ck_assert_int_gt(proven, nprog / 20);
  ck_assert_int_gt(precise, ran / 3);
}
END_TEST

static Suite *infer_suite(void) {
  Suite *s = suite_create("infer");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, t_type_text);
  tcase_add_test(tc, t_type_text_fuzz);
  tcase_add_test(tc, t_typed_reader_fuzz);
  tcase_add_test(tc, t_lattice);
  tcase_add_test(tc, t_infer_files);
  tcase_add_test(tc, t_shape_errors);
  tcase_add_test(tc, t_conversions);
  tcase_add_test(tc, t_random_programs);
  tcase_add_test(tc, t_random_tensor_programs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(infer_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
