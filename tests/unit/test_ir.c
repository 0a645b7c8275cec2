/* test_ir.c: the IR's Check suite: building graphs, the text form
 * (print, read back, print again: the texts must be equal), hand-written
 * IR, free variables, the verifier (good graphs pass, each kind of bad
 * one fails with its message), read errors with their positions, a
 * mutation fuzz of the reader, a pass's marks per node (never shared by
 * two nodes, even of two units with the same ids, as dce meets them),
 * and the IR pass tests of tests/ir/.
 *
 * A pass test is a file NAME.ir: an input unit, a line `# pass: P...`
 * (passes run in order: dce (ir_dce_unit), inline, simplify, cse,
 * dce-scope (ir_dce_scope), optimize (ir_optimize_unit), none; all but
 * dce and none run on each top-level graph and then prune the unit),
 * a line `# expect:` and the expected
 * printout after the passes, or instead a line `# expect-error: MSG`
 * when reading, verifying or a pass must fail with that message.  The
 * folder is found through $MIST_SOURCE_DIR or the MIST_SOURCE_DIR macro
 * (set by CMake), or from the working directory (testfiles.c).
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir.h"
#include "ir/marks.h"
#include "ir/passes.h"
#include "lang/gc.h"
#include "lang/strbuf.h"
#include "testfiles.h"

static MistVM *vm;

static bool dummy_builtin(MistVM *v, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  *out = v_none();
  return true;
}

static void setup(void) {
  vm = lang_vm_new();
  lang_def_builtin(vm, "print", dummy_builtin, 0, -1);
  lang_def_builtin(vm, "range", dummy_builtin, 1, 3);
}

static void teardown(void) {
  lang_vm_free(vm);
  vm = NULL;
}

static const char *err_msg(void) {
  return vm->err.set && vm->err.message ? vm->err.message->data : "(no error)";
}

static char *print_unit(IrUnit *u) {
  StrBuf sb;
  sb_init(&sb);
  ir_print_unit(vm, u, &sb);
  return sb.data;
}

static IrUnit *read_ok(const char *text) {
  IrUnit *u = ir_read(vm, "test.ir", text, strlen(text));
  ck_assert_msg(u != NULL, "ir_read failed: %s\n--- text:\n%s", err_msg(), text);
  return u;
}

/* print u, read it back, print again: the texts must be equal */
static char *round_trip(IrUnit *u) {
  char *t1 = print_unit(u);
  IrUnit *u2 = read_ok(t1);
  char *t2 = print_unit(u2);
  ck_assert_str_eq(t1, t2);
  ck_assert_msg(ir_verify_unit(vm, u2), "re-read unit does not verify: %s", err_msg());
  return t1;
}

static IrGraph *graph_named(IrUnit *u, const char *name) {
  for (int i = 0; i < u->ngraphs; i++)
    if (strcmp(u->graphs[i]->name->data, name) == 0) return u->graphs[i];
  ck_abort_msg("no graph @%s", name);
  return NULL;
}

static Span at(int file, int line, int col, int len) {
  Span s = {file, line, col, len};
  return s;
}

/* ---- building, printing, reading back ---- */

START_TEST(t_build_print_read) {
  const char *src = "def f(x, y):\n    s = x + y\n";
  int fid = lang_file_add(vm, "demo.ms", src, strlen(src));
  IrUnit *u = ir_unit_new();
  IrGraph *f = ir_graph_new(u, "f", NULL, IRG_FUNCTION, at(fid, 1, 1, 0));
  IrNode *x = ir_param(u, f, lang_str("x"), at(fid, 1, 7, 0));
  IrNode *y = ir_param(u, f, lang_str("y"), at(fid, 1, 10, 0));
  IrNode *s = ir_prim_apply(u, f, IR_P_ADD, at(fid, 2, 9, 5), 2, x, y);
  s->name = lang_str("s");
  IrNode *c = ir_prim_apply(u, f, IR_P_LT, at(fid, 3, 8, 6), 2, s,
                            ir_const(u, v_int(10), at(fid, 3, 12, 2)));
  /* a branch that uses the parent's %s: a free variable */
  IrGraph *t = ir_graph_new(u, "f.if1", f, IRG_BRANCH, at(fid, 3, 5, 0));
  t->ret = ir_prim_apply(u, t, IR_P_MUL, at(fid, 4, 16, 0), 2, s,
                         ir_const(u, v_float(0.5), at(fid, 4, 20, 0)));
  IrGraph *e = ir_graph_new(u, "f.else2", f, IRG_BRANCH, at(fid, 3, 5, 0));
  Value inner = lang_tuple_of(2, v_float(2.5), v_none());
  Value tup = lang_tuple_of(3, v_int(1), v_obj(lang_str("a")), inner);
  Value one = lang_tuple_of(1, v_int(1));
  Value empty = v_obj(lang_tuple_new(0));
  Value pr;
  ck_assert(lang_dict_get(vm->builtins, lang_str("print"), &pr));
  IrNode *args[] = {
    ir_const(u, v_int(-5), span_none()),
    ir_const(u, v_float(1e-05), span_none()),
    ir_const(u, v_float(INFINITY), span_none()),
    ir_const(u, v_float(-INFINITY), span_none()),
    ir_const(u, v_float(NAN), span_none()),
    ir_const(u, v_obj(lang_str("a\n\"b\\\x01\xc3\xa9")), span_none()),
    ir_const(u, v_none(), span_none()),
    ir_const(u, v_bool(true), span_none()),
    ir_const(u, v_bool(false), span_none()),
    ir_const(u, empty, span_none()),
    ir_const(u, one, span_none()),
    ir_const(u, tup, span_none()),
    ir_const_prim(u, IR_P_ADD, span_none()),
    ir_const(u, pr, span_none()),
    ir_const_graph(u, f, span_none()),
    x,
  };
  int nargs = (int)(sizeof args / sizeof *args);
  IrNode *mt = ir_prim_applyv(u, e, IR_P_MAKE_TUPLE, at(fid, 6, 12, 0), nargs, args);
  IrNode *call_in[] = {ir_const(u, pr, span_none()), mt};
  e->ret = ir_apply(u, e, 2, call_in, at(fid, 6, 5, 0));
  IrNode *sw = ir_prim_apply(u, f, IR_P_SWITCH, at(fid, 3, 5, 0), 3, c,
                             ir_const_graph(u, t, span_none()),
                             ir_const_graph(u, e, span_none()));
  sw->name = lang_str("s");   /* a second %s: both print with suffixes */
  f->ret = ir_apply(u, f, 1, &sw, at(fid, 3, 5, 0));
  ck_assert_msg(ir_verify_unit(vm, u), "%s", err_msg());

  char *text = round_trip(u);
  const char *expect =
    "# file demo.ms\n"
    "graph @f(%x, %y) : function {  # 1:1\n"
    "  %s.2 = add(%x, %y)  # 2:9+5\n"
    "  %1 = lt(%s.2, 10)  # 3:8+6\n"
    "  %s.3 = switch(%1, @f.if1, @f.else2)  # 3:5\n"
    "  %2 = %s.3()  # 3:5\n"
    "  return %2\n"
    "}\n"
    "\n"
    "graph @f.if1() in @f : branch {  # 3:5\n"
    "  %3 = mul(%s.2, 0.5)  # 4:16\n"
    "  return %3\n"
    "}\n"
    "\n"
    "graph @f.else2() in @f : branch {  # 3:5\n"
    "  %4 = make_tuple(-5, 1e-05, inf, -inf, nan, \"a\\n\\\"b\\\\\\x01\xc3\xa9\", None, True, "
    "False, (), (1,), (1, \"a\", (2.5, None)), prim.add, $print, @f, %x)  # 6:12\n"
    "  %5 = $print(%4)  # 6:5\n"
    "  return %5\n"
    "}\n";
  ck_assert_str_eq(text, expect);

  /* what came back has the same shape */
  IrUnit *u2 = read_ok(text);
  ck_assert_int_eq(u2->ngraphs, 3);
  IrGraph *f2 = graph_named(u2, "f"), *t2 = graph_named(u2, "f.if1");
  ck_assert_ptr_eq(t2->parent, f2);
  ck_assert_ptr_null(f2->parent);
  ck_assert_ptr_null(f2->module);
  ck_assert_uint_eq(t2->flags, IRG_BRANCH);
  ck_assert_int_eq(f2->nparams, 2);
  ck_assert_int_eq(f2->nnodes, 4);
  ck_assert_str_eq(f2->nodes[0]->name->data, "s");
  ck_assert_ptr_null(f2->nodes[1]->name);
  ck_assert_int_eq(ir_node_prim(f2->nodes[0]), IR_P_ADD);
  ck_assert_ptr_eq(f2->nodes[0]->in[1], f2->params[0]);
  ck_assert_ptr_eq(t2->nodes[0]->in[1], f2->nodes[0]);   /* the free variable */
  ck_assert_int_eq(f2->nodes[0]->span.line, 2);
  ck_assert_int_eq(f2->nodes[0]->span.col, 9);
  ck_assert_int_eq(f2->nodes[0]->span.len, 5);
  ck_assert_int_eq(f2->nodes[0]->span.file, fid);    /* "# file demo.ms" reuses the entry */
  ck_assert_ptr_eq(ir_node_graph(f2->nodes[2]->in[2]), t2);
  IrGraph *e2 = graph_named(u2, "f.else2");
  IrNode *mt2 = e2->nodes[0];
  ck_assert_int_eq(mt2->nin, nargs + 1);
  ck_assert(isnan(mt2->in[5]->value.f));
  ck_assert(mt2->in[4]->value.f < 0 && isinf(mt2->in[4]->value.f));
  ObjStr *str = AS_STR(mt2->in[6]->value);
  ck_assert_uint_eq(str->len, 8);
  ck_assert_mem_eq(str->data, "a\n\"b\\\x01\xc3\xa9", 8);
  ck_assert_ptr_eq(mt2->in[14]->value.o, pr.o);
  ck_assert_int_eq(AS_BUILTIN(mt2->in[13]->value)->prim, IR_P_ADD);
  ck_assert_ptr_eq(ir_node_graph(mt2->in[15]), f2);
  ck_assert_ptr_eq(mt2->in[16], f2->params[0]);
  ck_assert_uint_eq(AS_SEQ(mt2->in[12]->value)->len, 3);
  ck_assert_int_eq(e2->span.line, 3);
  ck_assert_int_eq(e2->span.file, fid);
}
END_TEST

static const char *fib_text =
  "# file fib.ms\n"
  "graph @fib(%n) : function {  # 1:1\n"
  "  %1 = lt(%n, 2)  # 2:8\n"
  "  %2 = switch(%1, @fib.if1, @fib.else2)  # 2:5\n"
  "  %3 = %2()  # 2:5\n"
  "  return %3\n"
  "}\n"
  "\n"
  "graph @fib.if1() in @fib : branch {  # 2:5\n"
  "  return %n\n"
  "}\n"
  "\n"
  "graph @fib.else2() in @fib : branch {  # 2:5\n"
  "  %4 = global(\"fib\")  # 4:12\n"
  "  %5 = sub(%n, 1)  # 4:16\n"
  "  %6 = %4(%5)  # 4:12+8\n"
  "  %7 = global(\"fib\")  # 4:23\n"
  "  %8 = sub(%n, 2)  # 4:27\n"
  "  %9 = %7(%8)  # 4:23+8\n"
  "  %10 = add(%6, %9)  # 4:12+19\n"
  "  return %10\n"
  "}\n";

START_TEST(t_read_handwritten) {
  IrUnit *u = read_ok(fib_text);
  ck_assert_str_eq(print_unit(u), fib_text);
  ck_assert(ir_verify_unit(vm, u));
  IrGraph *fib = graph_named(u, "fib"), *els = graph_named(u, "fib.else2");
  ck_assert_uint_eq(fib->flags, IRG_FUNCTION);
  ck_assert_ptr_eq(els->parent, fib);
  ck_assert_int_eq(els->nnodes, 7);
  ck_assert_int_eq(ir_node_prim(els->nodes[0]), IR_P_GLOBAL);
  ck_assert_str_eq(AS_STR(els->nodes[0]->in[1]->value)->data, "fib");
  ck_assert_ptr_eq(els->nodes[2]->in[0], els->nodes[0]);   /* %4 as the callee */
  ck_assert_ptr_eq(els->nodes[1]->in[1], fib->params[0]);
  ck_assert_int_eq(els->nodes[6]->span.len, 19);
  int file = fib->span.file;
  ck_assert_int_ge(file, 0);
  ck_assert_str_eq(vm->files[file].path->data, "fib.ms");
  ck_assert_int_eq(els->nodes[2]->span.file, file);
  /* a second read reuses the file entry */
  int nfiles = vm->nfiles;
  IrUnit *again = read_ok(fib_text);
  ck_assert_int_eq(again->graphs[0]->span.file, file);
  ck_assert_int_eq(vm->nfiles, nfiles);

  /* a loose hand-written form: comments, blank lines, names out of
   * order, a graph printed after its user, prim.NAME as callee */
  const char *loose =
    "# a comment line\n"
    "\n"
    "graph @main(%a, %b) : function, module {\n"
    "  # a comment inside\n"
    "  %acc = prim.add(%a, %b)   # not a span: a remark\n"
    "  %acc.7 = mul(%acc, -3)\n"
    "  %k = @helper(%acc.7, \"s\", (), ((1,), -0.0, 1.50, -nan))  # 9:2+3\n"
    "  return %k\n"
    "}\n"
    "graph @helper(%p, %q=%acc, %r=(1, -2)) in @main : join {\n"
    "  %z = make_list(%p, %acc, Unbound)\n"
    "  %l = @main.lambda3.2()\n"
    "  return %z\n"
    "}\n"
    "graph @main.lambda3.2(%v=@helper) in @main : function {\n"
    "  return %v\n"
    "}\n"
    "graph @main.if4() in @main.lambda3.2 : branch {\n"
    "  return 1\n"
    "}";
  u = read_ok(loose);
  ck_assert_msg(ir_verify_unit(vm, u), "%s", err_msg());
  const char *canon =
    "graph @main(%a, %b) : function, module {\n"
    "  %acc.2 = add(%a, %b)\n"
    "  %acc.3 = mul(%acc.2, -3)\n"
    "  %k = @helper(%acc.3, \"s\", (), ((1,), -0.0, 1.5, nan))  # 9:2+3\n"
    "  return %k\n"
    "}\n"
    "\n"
    "graph @helper(%p, %q=%acc.2, %r=(1, -2)) in @main : join {\n"
    "  %z = make_list(%p, %acc.2, Unbound)\n"
    "  %l = @main.lambda3.2()\n"
    "  return %z\n"
    "}\n"
    "\n"
    "graph @main.lambda3.2(%v=@helper) in @main : function {\n"
    "  return %v\n"
    "}\n"
    "\n"
    "graph @main.if4() in @main.lambda3.2 : branch {\n"
    "  return 1\n"
    "}\n";
  ck_assert_str_eq(round_trip(u), canon);
  IrGraph *main_g = graph_named(u, "main");
  ck_assert_uint_eq(main_g->flags, IRG_FUNCTION | IRG_MODULE);
  ck_assert_int_eq(main_g->span.file, -1);    /* no header: no file */
  ck_assert_int_eq(main_g->nodes[2]->span.file, -1);
  ck_assert_int_eq(main_g->nodes[2]->span.line, 9);
  ck_assert_str_eq(main_g->nodes[1]->name->data, "acc");
  IrGraph *helper = graph_named(u, "helper");
  ck_assert_int_eq(helper->ndefaults, 2);
  ck_assert_ptr_eq(helper->defaults[0], main_g->nodes[0]);
  ck_assert_int_eq(helper->defaults[1]->value.tag, V_OBJ);
  ck_assert_int_eq(helper->nodes[0]->in[3]->value.tag, V_UNBOUND);
  ck_assert_ptr_eq(ir_node_graph(graph_named(u, "main.lambda3.2")->defaults[0]), helper);
  /* display names, as the lowering gives them */
  ck_assert_str_eq(main_g->display->data, "<module>");
  ck_assert_str_eq(helper->display->data, "<module>");
  ck_assert_str_eq(graph_named(u, "main.lambda3.2")->display->data, "<lambda>");
  ck_assert_str_eq(graph_named(u, "main.if4")->display->data, "<lambda>");
  u = read_ok(fib_text);
  ck_assert_str_eq(u->graphs[0]->display->data, "fib");
  ck_assert_str_eq(u->graphs[2]->display->data, "fib");
  u = read_ok("graph @f.g.2() : function {\n  return 1\n}\n");
  ck_assert_str_eq(u->graphs[0]->display->data, "g");
}
END_TEST

/* ir_print_graph: one function and what belongs to it, readable alone */
START_TEST(t_print_graph) {
  IrUnit *u = read_ok(
    "graph @__main__() : module {\n"
    "  %1 = set_global(\"f\", @f)\n"
    "  return None\n"
    "}\n"
    "graph @f(%n) in @__main__ : function {\n"
    "  %2 = @f.run(%n)\n"
    "  return %2\n"
    "}\n"
    "graph @f.step(%k) in @f : function {\n"
    "  %3 = add(%n, %k)\n"
    "  return %3\n"
    "}\n"
    "graph @f.run(%m) in @f : function {\n"
    "  %4 = switch(%m, @f.run.if1, @f.run.else2)\n"
    "  %5 = %4()\n"
    "  return %5\n"
    "}\n"
    "graph @f.run.if1() in @f.run : branch {\n"
    "  %6 = @f.step(%m)\n"
    "  return %6\n"
    "}\n"
    "graph @f.run.else2() in @f.run : branch {\n"
    "  return 0\n"
    "}\n");
  StrBuf sb;
  sb_init(&sb);
  ir_print_graph(vm, graph_named(u, "f"), &sb);
  /* no "in @__main__" (not printed), and @f.step, used only from a
   * branch of @f.run, is printed too */
  const char *expect =
    "graph @f(%n) : function {\n"
    "  %1 = @f.run(%n)\n"
    "  return %1\n"
    "}\n"
    "\n"
    "graph @f.step(%k) in @f : function {\n"
    "  %2 = add(%n, %k)\n"
    "  return %2\n"
    "}\n"
    "\n"
    "graph @f.run(%m) in @f : function {\n"
    "  %3 = switch(%m, @f.run.if1, @f.run.else2)\n"
    "  %4 = %3()\n"
    "  return %4\n"
    "}\n"
    "\n"
    "graph @f.run.if1() in @f.run : branch {\n"
    "  %5 = @f.step(%m)\n"
    "  return %5\n"
    "}\n"
    "\n"
    "graph @f.run.else2() in @f.run : branch {\n"
    "  return 0\n"
    "}\n";
  ck_assert_str_eq(sb.data, expect);
  IrUnit *alone = read_ok(sb.data);
  ck_assert_msg(ir_verify_unit(vm, alone), "%s", err_msg());
  ck_assert_str_eq(print_unit(alone), expect);
}
END_TEST

/* ---- free variables ---- */

static const char *loop_text =
  "graph @f(%n, %k) : function {\n"
  "  %1 = @f.while1(0, 0)\n"
  "  return %1\n"
  "}\n"
  "\n"
  "graph @f.while1(%i, %acc) in @f : loop {\n"
  "  %2 = lt(%i, %n)\n"
  "  %3 = switch(%2, @f.while1.body, @f.while1.exit)\n"
  "  %4 = %3()\n"
  "  return %4\n"
  "}\n"
  "\n"
  "graph @f.while1.body() in @f.while1 : body {\n"
  "  %5 = add(%i, 1)\n"
  "  %6 = add(%acc, %i)\n"
  "  %7 = @f.while1(%5, %6)\n"
  "  return %7\n"
  "}\n"
  "\n"
  "graph @f.while1.exit() in @f.while1 : branch {\n"
  "  %8 = @f.after2(%acc)\n"
  "  return %8\n"
  "}\n"
  "\n"
  "graph @f.after2(%r) in @f : join {\n"
  "  %9 = mul(%r, %k)\n"
  "  return %9\n"
  "}\n";

/* g's free variables are exactly the named nodes (any order) */
static void expect_fv(IrGraph *g, const char *names) {
  ir_free_vars(g);
  char buf[256];
  snprintf(buf, sizeof buf, "%s", names);
  int n = 0;
  for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
    bool found = false;
    for (int i = 0; i < g->nfv; i++)
      if (g->fv[i]->name && strcmp(g->fv[i]->name->data, tok) == 0) found = true;
    ck_assert_msg(found, "@%s: %%%s is not a free variable", g->name->data, tok);
    n++;
  }
  ck_assert_msg(g->nfv == n, "@%s has %d free variables, expected %d (%s)", g->name->data,
                g->nfv, n, names);
}

START_TEST(t_free_vars) {
  /* from the top graph first, then from the innermost first */
  for (int order = 0; order < 2; order++) {
    IrUnit *u = read_ok(loop_text);
    ck_assert_msg(ir_verify_unit(vm, u), "%s", err_msg());
    if (order == 1) ir_free_vars(graph_named(u, "f.while1.body"));
    expect_fv(graph_named(u, "f"), "");
    expect_fv(graph_named(u, "f.while1"), "n k");
    expect_fv(graph_named(u, "f.while1.body"), "i acc n k");
    expect_fv(graph_named(u, "f.while1.exit"), "acc k");
    expect_fv(graph_named(u, "f.after2"), "k");
    round_trip(u);
  }
  /* the builder: a nested graph using a parent's node */
  IrUnit *u = ir_unit_new();
  IrGraph *f = ir_graph_new(u, "f", NULL, IRG_FUNCTION, span_none());
  IrNode *x = ir_param(u, f, lang_str("x"), span_none());
  IrNode *y = ir_prim_apply(u, f, IR_P_NEG, span_none(), 1, x);
  y->name = lang_str("y");
  IrGraph *g = ir_graph_new(u, "f.g", f, IRG_FUNCTION, span_none());
  IrNode *z = ir_param(u, g, lang_str("z"), span_none());
  g->ret = ir_prim_apply(u, g, IR_P_ADD, span_none(), 2, y, z);
  IrGraph *h = ir_graph_new(u, "f.g.h", g, IRG_FUNCTION, span_none());
  h->ret = ir_prim_apply(u, h, IR_P_MUL, span_none(), 2, x, z);
  f->ret = ir_const_graph(u, g, span_none());
  ck_assert(ir_verify_unit(vm, u));
  expect_fv(h, "x z");
  expect_fv(g, "y");        /* h is not referenced from g: only g's own use */
  expect_fv(f, "");
  round_trip(u);
}
END_TEST

/* ---- the verifier ---- */

static void expect_verify_error(IrUnit *u, const char *msg) {
  lang_error_clear(vm);
  ck_assert_msg(!ir_verify_unit(vm, u), "expected the verifier to fail with: %s", msg);
  ck_assert_str_eq(vm->err.kind, "IRError");
  ck_assert_str_eq(err_msg(), msg);
}

START_TEST(t_verify_good) {
  ck_assert_msg(ir_verify_unit(vm, read_ok(fib_text)), "%s", err_msg());
  ck_assert_msg(ir_verify_unit(vm, read_ok(loop_text)), "%s", err_msg());
  IrUnit *u = ir_unit_new();
  IrGraph *g = ir_graph_new(u, "g", NULL, 0, span_none());
  g->ret = ir_const(u, v_none(), span_none());
  ck_assert(ir_verify_graph(vm, g));
}
END_TEST

START_TEST(t_verify_bad_text) {
  static const struct { const char *text, *msg; int line, col; } cases[] = {
    {"graph @f(%x) {\n  %a = add(%b, 1)  # 2:3\n  %b = add(%x, 1)\n  return %a\n}\n",
     "graph @f: node %a uses %b before it is computed", 2, 3},
    {"graph @f(%x) {\n  %a = add(%a, 1)  # 2:3+7\n  return %a\n}\n",
     "graph @f: node %a uses %a before it is computed", 2, 3},
    {"graph @f(%x) {\n  return %x\n}\ngraph @g(%y) {\n  %a = add(%x, 1)  # 5:3\n  return %a\n}\n",
     "graph @g: node %a uses %x of graph @f, which is not in scope", 5, 3},
    {"graph @f(%x) {\n  %c = @f.in()\n  %r = add(%t, 1)  # 3:3\n  return %r\n}\n"
     "graph @f.in() in @f {\n  %t = add(%x, 1)\n  return %t\n}\n",
     "graph @f: node %r uses %t of graph @f.in, which is not in scope", 3, 3},
    {"graph @f(%x) {  # 1:1\n  return %y\n}\ngraph @g(%y) {\n  return %y\n}\n",
     "graph @f: the return value uses %y of graph @g, which is not in scope", 1, 1},
    {"graph @f(%x) {\n  %a = add(%x)  # 2:3\n  return %a\n}\n",
     "graph @f: node %a: add takes 2 arguments, got 1", 2, 3},
    {"graph @f(%x) {\n  %a = switch(%x, 1)  # 2:3\n  return %a\n}\n",
     "graph @f: node %a: switch takes 3 arguments, got 2", 2, 3},
    {"graph @f(%x) {\n  %a = neg(%x, %x)  # 2:3\n  return %a\n}\n",
     "graph @f: node %a: neg takes 1 argument, got 2", 2, 3},
    {"graph @f(%x) {\n  %a = %x(prim.neg)  # 2:3\n  %b = make_tuple()\n  return %b\n}\n", NULL, 0, 0},
    {"graph @f(%x) {\n  %a = neg(%x)\n  return @f.g\n}\n"
     "graph @f.g(%y, %z=%a) in @f {  # 4:1\n  return %z\n}\n", NULL, 0, 0},
    {"graph @f(%x) {\n  return @f.g\n}\n"
     "graph @f.g(%y, %z=%y) in @f {  # 4:1\n  return %z\n}\n",
     "graph @f.g: the default of parameter %z uses %y of the graph itself", 4, 1},
    {"graph @f(%x) {\n  return @f.g\n}\n"
     "graph @f.g(%y, %z=%w) in @f {  # 4:1\n  return %z\n}\n"
     "graph @h() {\n  %w = neg(1)\n  return %w\n}\n",
     "graph @f.g: the default of parameter %z uses %w of graph @h, which is not in scope", 4, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    IrUnit *u = read_ok(cases[i].text);
    lang_error_clear(vm);
    bool ok = ir_verify_unit(vm, u);
    if (!cases[i].msg) {
      ck_assert_msg(ok, "case %zu: %s", i, err_msg());
      continue;
    }
    ck_assert_msg(!ok, "case %zu verified", i);
    ck_assert_str_eq(err_msg(), cases[i].msg);
    ck_assert_int_eq(vm->err.span.line, cases[i].line);
    ck_assert_int_eq(vm->err.span.col, cases[i].col);
  }
}
END_TEST

/* a fresh small unit: @f(%x) { %a = neg(%x); %b = add(%a, 1); return %b }
 * and @g(%y) { %c = neg(%y); return %c } */
static IrUnit *small_unit(void) {
  return read_ok("graph @f(%x) {\n  %a = neg(%x)\n  %b = add(%a, 1)\n  return %b\n}\n"
                 "graph @g(%y) {\n  %c = neg(%y)\n  return %c\n}\n");
}

static void push_node(IrGraph *g, IrNode *n) {
  g->nodes = lang_realloc(g->nodes, (size_t)(g->nnodes + 1) * sizeof *g->nodes);
  g->capnodes = g->nnodes + 1;
  g->nodes[g->nnodes++] = n;
}

START_TEST(t_verify_bad_built) {
  IrUnit *u;
  IrGraph *f, *g;

  u = small_unit(), f = u->graphs[0], g = u->graphs[1];
  ck_assert(ir_verify_unit(vm, u));
  push_node(f, f->params[0]);
  expect_verify_error(u, "graph @f: scheduled node %x is not an application");

  u = small_unit(), f = u->graphs[0], g = u->graphs[1];
  push_node(f, g->nodes[0]);
  expect_verify_error(u, "graph @f: scheduled node %c belongs to graph @g");

  u = small_unit(), f = u->graphs[0];
  push_node(f, f->nodes[0]);
  expect_verify_error(u, "graph @f: node %a is scheduled twice");

  u = small_unit(), f = u->graphs[0];
  f->nodes[0]->nin = 0;
  expect_verify_error(u, "graph @f: node %a has no callee");

  u = small_unit(), f = u->graphs[0];
  f->nodes[1]->in[2] = NULL;
  expect_verify_error(u, "graph @f: input 2 of node %b is NULL");

  u = small_unit(), f = u->graphs[0];
  f->nodes[0] = f->nodes[1];   /* %a dropped from the schedule but still used */
  f->nnodes = 1;
  expect_verify_error(u, "graph @f: node %b uses %a, which is not scheduled in graph @f");

  u = small_unit(), f = u->graphs[0], g = u->graphs[1];
  f->params[0]->graph = g;
  expect_verify_error(u, "graph @f: parameter %x belongs to graph @g");

  u = small_unit(), f = u->graphs[0], g = u->graphs[1];
  f->params[0] = g->nodes[0];
  expect_verify_error(u, "graph @f: parameter 0 (%c) is not a parameter node");

  u = small_unit(), f = u->graphs[0];
  f->ret = NULL;
  expect_verify_error(u, "graph @f has no return node");

  u = small_unit(), f = u->graphs[0], g = u->graphs[1];
  f->parent = g;
  g->parent = f;
  expect_verify_error(u, "graph @f: its chain of enclosing graphs has a cycle");
  f->parent = f;
  g->parent = NULL;
  expect_verify_error(u, "graph @f: its chain of enclosing graphs has a cycle");

  u = small_unit(), f = u->graphs[0], g = u->graphs[1];
  g->nodes[0]->id = f->nodes[1]->id;
  char msg[128];
  snprintf(msg, sizeof msg, "node id %u is used twice: %%b in graph @f and %%c in graph @g",
           (unsigned)f->nodes[1]->id);
  expect_verify_error(u, msg);

  /* an unnamed node is named by its id; a node's span is the error's */
  u = small_unit(), f = u->graphs[0];
  f->nodes[1]->name = NULL;
  f->nodes[1]->span = at(-1, 7, 3, 0);
  f->nodes[1]->in[0] = ir_const_prim(u, IR_P_NOT, span_none());
  snprintf(msg, sizeof msg, "graph @f: node #%u: not takes 1 argument, got 2",
           (unsigned)f->nodes[1]->id);
  expect_verify_error(u, msg);
  ck_assert_int_eq(vm->err.span.line, 7);

  /* a graph's node used from a graph nested in a sibling */
  u = small_unit(), f = u->graphs[0], g = u->graphs[1];
  IrGraph *h = ir_graph_new(u, "g.h", g, IRG_BRANCH, span_none());
  h->ret = f->nodes[0];
  expect_verify_error(u, "graph @g.h: the return value uses %a of graph @f, which is not in scope");
  h->ret = g->nodes[0];
  ck_assert_msg(ir_verify_unit(vm, u), "%s", err_msg());
}
END_TEST

/* ---- read errors ---- */

START_TEST(t_read_errors) {
  char deep[200];
  strcpy(deep, "graph @f() {\n  return ");
  for (int i = 0; i < 100; i++) strcat(deep, "(");
  const struct { const char *text, *msg; int line, col; } cases[] = {
    {"graph @f() {\n  return $nope\n}\n", "unknown builtin $nope", 2, 10},
    {"graph @f() {\n  %a = frob(1)\n  return %a\n}\n", "unknown primitive 'frob'", 2, 8},
    {"graph @f() {\n  %a = add(prim.nope, 1)\n  return %a\n}\n", "unknown primitive 'nope'", 2, 12},
    {"graph @f() {\n  return %b\n}\n", "unknown node %b", 2, 10},
    {"graph @f() in @g {\n  return 1\n}\n", "unknown graph @g", 1, 15},
    {"graph @f() {\n  %a = @h(1)\n  return %a\n}\n", "unknown graph @h", 2, 8},
    {"graph @f() {\n  return 1\n}\ngraph @f() {\n  return 2\n}\n", "duplicate graph @f", 4, 7},
    {"graph @f(%x) {\n  %x = add(1, 2)\n  return %x\n}\n", "duplicate node %x", 2, 3},
    {"graph @f(%x, %x) {\n  return %x\n}\n", "duplicate node %x", 1, 14},
    {"graph @f() : loop, fun {\n  return 1\n}\n", "unknown graph flag 'fun'", 1, 20},
    {"graph @f() {\n}\n", "graph @f has no return line", 2, 1},
    {"graph @f() {\n  return \"abc\n}\n", "unterminated string", 2, 10},
    {"graph @f() {\n  return \"a\\q\"\n}\n", "bad escape '\\q' in string", 2, 12},
    {"graph @f() {\n  return \"a\\x4\"\n}\n", "bad \\x escape in string", 2, 12},
    {"graph @f() {\n  return \"\\xff\"\n}\n", "string constant is not valid UTF-8", 2, 10},
    {"graph @f() {\n  return 99999999999999999999\n}\n",
     "integer constant 99999999999999999999 out of range", 2, 10},
    {"graph @f() {\n  return 1.2.3\n}\n", "bad number '1.2.3'", 2, 10},
    {"graph @f() {\n  return -in\n}\n", "bad number '-in'", 2, 10},
    {deep, "tuple constant nested too deeply", 2, 10 + 64},
    {"graph @f(%x) {\n  %a = add(%x,", "expected an argument, found end of input", 2, 15},
    {"graph @f(%x) {\n  %a = add(%x, )\n", "expected an argument, found ')'", 2, 16},
    {"graph @f(%x) {\n  %a = add(%x, 1)\n", "expected a node definition or 'return', found end of input", 3, 1},
    {"graph @f(%x) {\n  return %x\n  %a = neg(%x)\n}\n", "expected '}' after the return line, found '%a'", 3, 3},
    {"graph @a() in @b {\n  return 1\n}\ngraph @b() in @a {\n  return 2\n}\n",
     "graph @a is nested in itself", 1, 15},
    {"graph @a() in @a {\n  return 1\n}\n", "graph @a is nested in itself", 1, 15},
    {"graph @f() {\n  return ?\n}\n", "unexpected character '?'", 2, 10},
    {"graph @f() {\n  return \xc3\xa9\n}\n", "unexpected character '\xc3\xa9'", 2, 10},
    {"graph @f() {\n  return \x01\n}\n", "unexpected byte 0x01", 2, 10},
    {"graph @f() {\n  return \"\xff\"\n}\n", "invalid UTF-8 byte 0xff", 2, 11},
    {"graph @f() {\n  return (1)\n}\n", "a one-item tuple needs a trailing comma: (x,)", 2, 10},
    {"graph @f(%x) {\n  return (%x,)\n}\n", "a tuple constant cannot hold the node %x", 2, 11},
    {"graph @f(%x) {\n  return (1, @f)\n}\n", "a tuple constant cannot hold the graph @f", 2, 14},
    {"graph @f(%x) {\n  return (1, 2\n}\n", "expected ',' or ')', found end of line", 2, 15},
    {"%x = add(1, 2)\n", "expected 'graph', found '%x'", 1, 1},
    {"graph f() {\n  return 1\n}\n", "expected a graph name, found 'f'", 1, 7},
    {"graph @f() { return 1 }\n", "expected end of line, found 'return'", 1, 14},
    {"graph @f() {\n  return 1 2\n}\n", "expected end of line, found '2'", 2, 12},
    {"graph @f() {\n  return @\n}\n", "expected a name after '@'", 2, 10},
    {"graph @f() {\n  return foo\n}\n", "unknown name 'foo'", 2, 10},
    {"# file a.ms\n# file b.ms\ngraph @f() {\n  return 1\n}\n", "a second '# file' header", 2, 1},
    {"graph @f() {\n  return 1\n} }\n", "expected end of line after '}', found '}'", 3, 3},
    {"graph @f(%a=1, %b) {\n  return 1\n}\n",
     "parameter %b without a default follows one with a default", 1, 16},
    {"graph @f(%a=) {\n  return 1\n}\n", "expected an argument, found ')'", 1, 13},
    {"graph @f(%a=%q) {\n  return 1\n}\n", "unknown node %q", 1, 13},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    lang_error_clear(vm);
    IrUnit *u = ir_read(vm, "bad.ir", cases[i].text, strlen(cases[i].text));
    ck_assert_msg(u == NULL, "case %zu was read", i);
    ck_assert_str_eq(vm->err.kind, "SyntaxError");
    ck_assert_msg(strcmp(err_msg(), cases[i].msg) == 0, "case %zu: got '%s', expected '%s'", i,
                  err_msg(), cases[i].msg);
    ck_assert_msg(vm->err.span.line == cases[i].line && vm->err.span.col == cases[i].col,
                  "case %zu (%s): at %d:%d, expected %d:%d", i, cases[i].msg,
                  vm->err.span.line, vm->err.span.col, cases[i].line, cases[i].col);
    ck_assert_int_ge(vm->err.span.file, 0);
    ck_assert_str_eq(vm->files[vm->err.span.file].path->data, "bad.ir");
  }
  /* the rendered error quotes the IR line */
  lang_error_clear(vm);
  const char *text = "graph @f() {\n  return $nope\n}\n";
  ck_assert_ptr_null(ir_read(vm, "bad.ir", text, strlen(text)));
  const char *r = lang_error_render(vm)->data;
  ck_assert_msg(strstr(r, "bad.ir:2:10: error: unknown builtin $nope\n      return $nope\n") == r,
                "%s", r);
  /* a NULL name and empty input */
  ck_assert_ptr_nonnull(ir_read(vm, NULL, "", 0));
  ck_assert_int_eq(ir_read(vm, NULL, "\n\n# only comments\n", 18)->ngraphs, 0);
  ck_assert_ptr_null(ir_read(vm, NULL, "graph", 5));
  ck_assert_str_eq(vm->files[vm->err.span.file].path->data, "<ir>");
}
END_TEST

/* ---- a mutation fuzz of the reader ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state % n);
}

START_TEST(t_fuzz_reader) {
  static const char *tokens[] = {
    "(", ")", ",", "{", "}", "=", ":", "\n", "#", "# 1:2+3", "%a", "%1", "%acc.2", "@f",
    "@fib", "@f.while1", "$print", "prim.add", "\"", "\"x\\n\"", "\\x", "-", "inf", "-nan",
    "1e5", "1.5", "-7", "((((", "(1,)", "in @fib", " : loop", "return ", "graph @z() {\n",
    "None", "Unbound", "=%a", "=1", "\xc3\xa9", "\xff", "\0", "# file x.ms\n", "switch", "make_tuple",
  };
  const char *seeds[] = {fib_text, loop_text,
                         "graph @g(%x) : function {  # 1:1\n  %t = make_tuple(%x, (1, \"a\"), "
                         "-2.5e-07, $print)  # 2:3\n  return %t\n}\n"};
  int ntok = (int)(sizeof tokens / sizeof *tokens);
  int nread = 0;
  for (int iter = 0; iter < 4000; iter++) {
    const char *seed = seeds[rnd(3)];
    size_t len = strlen(seed);
    size_t cap = len * 2 + 256;
    char *buf = lang_alloc_atomic(cap);
    memcpy(buf, seed, len);
    int nmut = 1 + (int)rnd(4);
    for (int m = 0; m < nmut; m++) {
      size_t pos = len ? rnd((uint32_t)len + 1) : 0;
      switch (rnd(4)) {
      case 0:   /* delete a range */
        if (pos < len) {
          size_t k = 1 + rnd(8);
          if (k > len - pos) k = len - pos;
          memmove(buf + pos, buf + pos + k, len - pos - k);
          len -= k;
        }
        break;
      case 1:   /* change a byte */
        if (pos < len) buf[pos] = (char)(" \n(),%@$#\"-.:0123456789abz{}\\"[rnd(30)]);
        break;
      default: {   /* insert a token */
        const char *t = tokens[rnd((uint32_t)ntok)];
        size_t k = t[0] ? strlen(t) : 1;
        if (len + k >= cap) break;
        memmove(buf + pos + k, buf + pos, len - pos);
        memcpy(buf + pos, t, k);
        len += k;
      }
      }
    }
    /* an exact-size malloc'd copy, so a sanitizer sees any read past the end */
    char *exact = malloc(len ? len : 1);
    memcpy(exact, buf, len);
    lang_error_clear(vm);
    IrUnit *u = ir_read(vm, "fuzz.ir", exact, len);
    free(exact);
    if (!u) {
      ck_assert(vm->err.set);
      continue;
    }
    nread++;
    lang_error_clear(vm);
    bool ok = ir_verify_unit(vm, u);
    char *t1 = print_unit(u);
    IrUnit *u2 = ir_read(vm, "fuzz2.ir", t1, strlen(t1));
    ck_assert_msg(u2 != NULL, "printout does not read back: %s\n%s", err_msg(), t1);
    ck_assert_str_eq(print_unit(u2), t1);
    if (ok) {
      for (int i = 0; i < u->ngraphs; i++) ir_free_vars(u->graphs[i]);
      ir_dce_unit(u);
      ck_assert_msg(ir_verify_unit(vm, u), "dce broke the unit: %s\n%s", err_msg(), t1);
    }
  }
  ck_assert_int_gt(nread, 100);
}
END_TEST

/* ---- IR pass tests: the .ir files of tests/ir ---- */

/* The passes of passes.h that work on a graph and what it reaches: run
 * on each top-level graph of u, then drop the graphs left unreachable.
 * False when p names none of them. */
static bool run_graph_pass(IrUnit *u, const char *p, bool *ok) {
  *ok = true;
  if (strcmp(p, "optimize") == 0) {
    *ok = ir_optimize_unit(vm, u);
    return true;
  }
  int which = strcmp(p, "inline") == 0 ? 0 : strcmp(p, "simplify") == 0 ? 1
            : strcmp(p, "cse") == 0 ? 2 : strcmp(p, "dce-scope") == 0 ? 3 : -1;
  if (which < 0) return false;
  int n = 0;
  IrGraph **roots = lang_alloc((size_t)(u->ngraphs + 1) * sizeof *roots);
  for (int i = 0; i < u->ngraphs; i++)
    if (!u->graphs[i]->parent) roots[n++] = u->graphs[i];
  for (int i = 0; i < n; i++) {
    if (which == 0) ir_inline(vm, u, roots[i]);
    else if (which == 1) ir_simplify(vm, u, roots[i]);
    else if (which == 2) ir_cse(vm, u, roots[i]);
    else ir_dce_scope(u, roots[i]);
  }
  ir_prune_unit(u, NULL);
  return true;
}

/* Run one pass test; "" when it passes, else what went wrong. */
static const char *run_pass_test(const char *path) {
  char *text = testfiles_read(path);
  if (!text) return "cannot read the file";
  char *pass = testfiles_find_line(text, "# pass:");
  if (!pass) return "no '# pass:' line";
  char *expect = testfiles_find_line(pass, "# expect:");
  char *expect_err = testfiles_find_line(pass, "# expect-error:");
  if (!expect && !expect_err) return "no '# expect:' or '# expect-error:' line";
  *pass = '\0';
  pass += strlen("# pass:");
  char *eol = strchr(pass, '\n');
  if (eol) *eol = '\0';
  const char *want_err = NULL;
  if (expect_err) {
    want_err = expect_err + strlen("# expect-error:");
    while (*want_err == ' ') want_err++;
    char *e = strchr(want_err, '\n');
    if (e) *e = '\0';
    testfiles_trim_end((char *)want_err);
  } else {
    expect = strchr(expect, '\n') ? strchr(expect, '\n') + 1 : expect + strlen(expect);
    testfiles_trim_end(expect);
  }

  lang_error_clear(vm);
  bool ok = false;
  IrUnit *u = ir_read(vm, path, text, strlen(text));
  if (u && ir_verify_unit(vm, u)) {
    ok = true;
    for (char *p = strtok(pass, " ,\t\r"); p && ok; p = strtok(NULL, " ,\t\r")) {
      if (strcmp(p, "dce") == 0) ir_dce_unit(u);
      else if (strcmp(p, "none") == 0 || strcmp(p, "verify") == 0) {}
      else if (!run_graph_pass(u, p, &ok)) return lang_str_fmt("unknown pass '%s'", p)->data;
      ok = ok && ir_verify_unit(vm, u);
    }
  }
  if (want_err) {
    if (ok) return "expected an error, but everything passed";
    if (strcmp(err_msg(), want_err) != 0)
      return lang_str_fmt("expected the error\n  %s\ngot\n  %s", want_err, err_msg())->data;
    return "";
  }
  if (!ok) return lang_str_fmt("failed: %s", lang_error_render(vm)->data)->data;
  char *got = print_unit(u);
  testfiles_trim_end(got);
  if (strcmp(got, expect) != 0)
    return lang_str_fmt("expected:\n%s\n--- got:\n%s", expect, got)->data;
  /* and the result reads back to the same text */
  IrUnit *u2 = ir_read(vm, path, got, strlen(got));
  if (!u2) return lang_str_fmt("the output does not read back: %s", err_msg())->data;
  char *again = print_unit(u2);
  testfiles_trim_end(again);
  if (strcmp(again, got) != 0) return "the output does not round-trip";
  return "";
}

START_TEST(t_pass_files) {
#ifndef MIST_SOURCE_DIR
#define MIST_SOURCE_DIR NULL
#endif
  const char *dir = testfiles_dir("tests/ir", MIST_SOURCE_DIR);
  ck_assert_msg(dir != NULL, "cannot find tests/ir (set MIST_SOURCE_DIR)");
  int failed, n = testfiles_each(dir, ".ir", run_pass_test, &failed);
  ck_assert_msg(n >= 3, "only %d pass tests in %s", n, dir);
  ck_assert_msg(failed == 0, "%d of %d IR pass tests failed (see stderr)", failed, n);
}
END_TEST

/* ---- marks: a pass's int per node (marks.h) ---- */

static const char *const twin_text =
  "graph @f(%x) : function {\n"
  "  %t = make_tuple(%x, 1)\n"
  "  %d = make_tuple(%x, 2)\n"
  "  return %t\n"
  "}\n";

START_TEST(t_marks_own_nodes) {
  /* two units read from one text: their nodes have the same ids, and
   * each node still has a mark of its own, in the array or past it */
  IrUnit *a = read_ok(twin_text), *b = read_ok(twin_text);
  IrGraph *fa = a->graphs[0], *fb = b->graphs[0];
  ck_assert_uint_eq(fa->nodes[1]->id, fb->nodes[1]->id);
  IrMarks m;
  ir_marks_for_unit(&m, a);
  *ir_mark(&m, fb->nodes[1]) = 7;   /* b's takes the slot first */
  ++*ir_mark(&m, fa->nodes[1]);
  ++*ir_mark(&m, fa->nodes[1]);
  *ir_mark(&m, fa->nodes[0]) = -1;
  ck_assert_int_eq(*ir_mark(&m, fa->nodes[1]), 2);
  ck_assert_int_eq(*ir_mark(&m, fb->nodes[1]), 7);
  ck_assert_int_eq(*ir_mark(&m, fa->nodes[0]), -1);
  ck_assert_int_eq(*ir_mark(&m, fb->nodes[0]), 0);
  IrMarks small;
  ir_marks_init(&small, 1);   /* every id past the array */
  *ir_mark(&small, fa->nodes[1]) = 3;
  ck_assert_int_eq(*ir_mark(&small, fa->nodes[1]), 3);
  ck_assert_int_eq(*ir_mark(&small, fb->nodes[1]), 0);
  ir_marks_free(&m);
  ir_marks_free(&small);
}
END_TEST

START_TEST(t_dce_other_unit) {
  /* f calls h of another unit, whose %d has the id of f's dead %d and
   * is used there: counting h's uses must not keep f's %d */
  IrUnit *a = read_ok(twin_text);
  IrUnit *b = read_ok(
    "graph @h(%x) : function {\n"
    "  %t = make_tuple(%x, 1)\n"
    "  %d = make_tuple(%x, 2)\n"
    "  %e = make_tuple(%d, %t)\n"
    "  return %e\n"
    "}\n");
  IrGraph *f = a->graphs[0], *h = b->graphs[0];
  ck_assert_uint_eq(f->nodes[1]->id, h->nodes[1]->id);
  IrNode *t = f->nodes[0];
  IrNode *call = ir_apply(a, f, 2, (IrNode *[]){ir_const_graph(a, h, span_none()), t}, span_none());
  f->ret = call;
  ck_assert(ir_dce_scope(a, f));
  ck_assert_int_eq(f->nnodes, 2);
  ck_assert_ptr_eq(f->nodes[0], t);
  ck_assert_ptr_eq(f->nodes[1], call);
  ck_assert_int_eq(h->nnodes, 3);
}
END_TEST

/* ---- dce on built graphs ---- */

START_TEST(t_dce_nested_use) {
  /* a tuple used only by a nested graph stays; one used by nothing goes */
  IrUnit *u = read_ok(
    "graph @f(%x) : function {\n"
    "  %t = make_tuple(%x, 1)\n"
    "  %u = make_list(%x)\n"
    "  %v = make_tuple(%u)\n"
    "  %s = slice(1, None, None)\n"
    "  %g = @f.g()\n"
    "  return %g\n"
    "}\n"
    "\n"
    "graph @f.g() in @f : function {\n"
    "  %w = make_tuple(%t)\n"
    "  return %x\n"
    "}\n");
  IrGraph *f = u->graphs[0], *g = u->graphs[1];
  ir_free_vars(f);
  ir_dce(f);
  ck_assert_int_eq(f->nnodes, 2);
  ck_assert_str_eq(f->nodes[0]->name->data, "t");
  ck_assert(!f->fv_done);
  ir_dce(g);
  ck_assert_int_eq(g->nnodes, 0);
  ir_dce(f);
  ck_assert_int_eq(f->nnodes, 1);
  ck_assert(ir_verify_unit(vm, u));
}
END_TEST

static Suite *ir_suite(void) {
  Suite *s = suite_create("ir");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, t_build_print_read);
  tcase_add_test(tc, t_read_handwritten);
  tcase_add_test(tc, t_print_graph);
  tcase_add_test(tc, t_free_vars);
  tcase_add_test(tc, t_verify_good);
  tcase_add_test(tc, t_verify_bad_text);
  tcase_add_test(tc, t_verify_bad_built);
  tcase_add_test(tc, t_read_errors);
  tcase_add_test(tc, t_fuzz_reader);
  tcase_add_test(tc, t_dce_nested_use);
  tcase_add_test(tc, t_marks_own_nodes);
  tcase_add_test(tc, t_dce_other_unit);
  tcase_add_test(tc, t_pass_files);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(ir_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
