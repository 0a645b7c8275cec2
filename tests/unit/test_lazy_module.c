/* test_lazy_module.c: the Check suite of the modules loaded a definition
 * at a time (autodiff's rules: api/mist.c's start_lazily, the cut of
 * parser/toplevel.c and lower_statement in parser/lower.c).
 *
 *  - the cut of a text into top-level statements and the names they
 *    bind, on the shapes that could fool it (brackets, strings and
 *    continued lines reaching column 1, decorators, else);
 *  - the rules' code is the whole file's: every function of
 *    stdlib/ad_rules.ms and stdlib/ad.ms, loaded lazily, prints the same
 *    IR as when the file is lowered whole;
 *  - a lookup loads what it needs and no more;
 *  - names not loaded yet are seen from outside: an attribute, the
 *    completion of `ad_rules.`;
 *  - an error inside a rule keeps its FILE:LINE:COL and traceback (and
 *    is shown at the code that called into the rules).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "ir/ir.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "mist.h"
#include "parser/lower.h"
#include "parser/parse.h"
#include "parser/toplevel.h"

#include "capture.h"

static MistVM *vm;
static Buf output;

static void setup(void) { vm = capture_vm_new(&output); }

static void teardown(void) {
  capture_vm_free(vm, &output);
  vm = NULL;
}

START_TEST(t_cut) {
  static const char src[] =
      "# a comment\n"                  /* 1 */
      "import a\n"                     /* 2 */
      "import b as c  # note\n"        /* 3 */
      "x = 1\n"                        /* 4 */
      "x == 2\n"                       /* 5: no name */
      "def f(a,\n"                     /* 6 */
      "b):\n"                          /* 7: inside brackets */
      "    s = \"\"\"\n"               /* 8 */
      "def g():\n"                     /* 9: inside a string */
      "\"\"\"\n"                       /* 10 */
      "    return s\n"                 /* 11 */
      "@deco\n"                        /* 12 */
      "@deco2(1)\n"                    /* 13 */
      "def h():\n"                     /* 14 */
      "    pass\n"                     /* 15 */
      "if x:\n"                        /* 16: no name */
      "    pass\n"                     /* 17 */
      "else:\n"                        /* 18 */
      "    pass\n"                     /* 19 */
      "w = 'a\\'b' \\\n"               /* 20 */
      "+ \"c#\"\n"                     /* 21: a continued line */
      "\n"                             /* 22 */
      "def k(): return 1\n"            /* 23 */
      "import d.e\n";                  /* 24: binds d, not read as a name */
  struct { int line; const char *name; } want[] = {
      {2, "a"}, {3, "c"}, {4, "x"}, {5, NULL}, {6, "f"}, {12, "h"}, {16, NULL}, {20, "w"}, {23, "k"}, {24, NULL},
  };
  TopStmt *s;
  int n = parse_top_statements(vm, src, strlen(src), &s);
  int nwant = (int)(sizeof want / sizeof want[0]);
  ck_assert_int_eq(n, nwant);
  for (int i = 0; i < n; i++) {
    ck_assert_int_eq(s[i].line, want[i].line);
    if (want[i].name) ck_assert_msg(s[i].name && strcmp(s[i].name->data, want[i].name) == 0, "statement %d", i);
    else ck_assert_msg(!s[i].name, "statement %d binds %s", i, s[i].name->data);
    ck_assert_uint_eq(s[i].end, i + 1 < n ? s[i + 1].start : strlen(src));
    /* each piece starts its line */
    ck_assert(s[i].start == 0 || src[s[i].start - 1] == '\n');
  }
}
END_TEST

/* The IR of every function global of m, by name, one text. */
static const char *functions_ir(ObjModule *m, ObjDict *names) {
  StrBuf sb;
  sb_init(&sb);
  for (size_t i = 0; i < names->len; i++) {
    ObjStr *name = names->entries[i].key;
    if (!name) continue;
    Value slot;
    if (!lang_dict_get(m->names, name, &slot) || !v_is_obj(m->slots[slot.i], O_FUNC)) continue;
    sb_printf(&sb, "---- %s\n", name->data);
    ir_print_graph(vm, AS_FUNC(m->slots[slot.i])->graph, &sb);
  }
  return sb.data;
}

/* The first line where a and b differ, with a few around it. */
static const char *first_difference(const char *a, const char *b) {
  size_t i = 0, line = 0;
  while (a[i] && a[i] == b[i]) {
    if (a[i] == '\n') line = i + 1;
    i++;
  }
  static char buf[600];
  snprintf(buf, sizeof buf, "whole:\n%.250s\nlazily:\n%.250s", a + line, b + line);
  return buf;
}

static void same_ir_as_whole(const char *module) {
  /* lazily, as autodiff loads it, then every name asked for */
  ObjModule *lazy = ad_stdlib_module(vm, module);
  ck_assert_msg(lazy && lazy->lazy, "%s: %s", module, mist_error(vm));
  ObjDict *index = lazy->lazy->index;
  for (size_t i = 0; i < index->len; i++)
    if (index->entries[i].key) ck_assert(lang_module_load(vm, lazy, index->entries[i].key));
  /* whole, into a module of its own */
  ObjModule *whole = lang_alloc(sizeof *whole);
  whole->obj.kind = O_MODULE;
  whole->name = lang_str(module);
  whole->path = lazy->path;
  whole->names = lang_dict_new();
  SourceFile *f = &vm->files[lazy->file_id];
  whole->file_id = lazy->file_id;
  Ast *ast = parse_module(vm, lazy->file_id, f->text->data, f->text->len);
  ck_assert_ptr_nonnull(ast);
  LowerResult lr;
  ck_assert(lower_module(vm, ast, whole, false, &lr));
  Value r;
  ck_assert_msg(ev_run_main(vm, lr.main, &r), "%s", mist_error(vm));
  const char *a = functions_ir(whole, index), *b = functions_ir(lazy, index);
  ck_assert_msg(strlen(a) > 1000, "%s: no functions printed", module);
  ck_assert_msg(strcmp(a, b) == 0, "%s: %s", module, first_difference(a, b));
}

START_TEST(t_same_ir_ad_rules) { same_ir_as_whole("ad_rules"); }
END_TEST

START_TEST(t_same_ir_ad) { same_ir_as_whole("ad"); }
END_TEST

static int count_loaded(ObjModule *m) {
  int n = 0;
  for (int i = 0; i < m->lazy->n; i++) n += m->lazy->state[i] == LAZY_LOADED;
  return n;
}

static bool loaded(ObjModule *m, const char *name) {
  Value i;
  return lang_dict_get(m->lazy->index, lang_str(name), &i) && m->lazy->state[i.i] == LAZY_LOADED;
}

START_TEST(t_loads_what_is_needed) {
  ObjModule *m = ad_stdlib_module(vm, "ad_rules");
  ck_assert_ptr_nonnull(m);
  int before = count_loaded(m);
  Value rule = ad_builtin_rule(vm, "mod");   /* J_mod reads unbroadcast */
  ck_assert(v_is_obj(rule, O_FUNC));
  ck_assert(loaded(m, "J_mod") && loaded(m, "unbroadcast"));
  ck_assert(!loaded(m, "J_softmax") && !loaded(m, "J_T"));
  ck_assert_int_le(count_loaded(m) - before, 3);
  ck_assert_int_gt(m->lazy->n, 200);
  /* a name the file does not bind: nothing loaded, no error */
  ck_assert_int_eq(ad_builtin_rule(vm, "no_such_builtin").tag, V_UNBOUND);
  ck_assert(!vm->err.set);
}
END_TEST

START_TEST(t_seen_from_outside) {
  ck_assert_int_eq(mist_eval(vm, "<t>", "import ad_rules\nprint(ad_rules.J_mod(7.0, 4.0)[0])\n", false), MIST_OK);
  ck_assert_str_eq(output.data, "3.0\n");
  char **words = mist_complete(vm, "ad_rules.J_soft");
  ck_assert_ptr_nonnull(words);
  ck_assert_ptr_nonnull(words[0]);
  ck_assert_str_eq(words[0], "ad_rules.J_softmax");
  ck_assert_int_eq(mist_eval(vm, "<t>", "print(ad_rules.J_nothing)\n", false), MIST_ERROR);
  ck_assert_msg(strstr(mist_error(vm), "has no attribute 'J_nothing'"), "%s", mist_error(vm));
}
END_TEST

START_TEST(t_error_keeps_its_place) {
  /* the line of _pow_dx's float case in the file as it is */
  ObjModule *m = ad_stdlib_module(vm, "ad_rules");
  ck_assert_ptr_nonnull(m);
  const char *text = vm->files[m->file_id].text->data;
  const char *at = strstr(text, "    return d * y * _fpow(x, y - 1)\n");
  ck_assert_ptr_nonnull(at);
  int line = 1;
  for (const char *p = text; p < at; p++) line += *p == '\n';
  ck_assert_int_eq(mist_eval(vm, "<t>", "import ad_rules\nad_rules._pow_dx(1.0, 2.0, [1])\n", false), MIST_ERROR);
  /* the error's place and frames as raised ... */
  ck_assert_int_eq(vm->err.span.file, m->file_id);
  ck_assert_int_eq(vm->err.span.line, line);
  ck_assert_int_eq(vm->err.span.col, 12);
  ck_assert_int_ge(vm->err.ntrace, 2);
  ck_assert_str_eq(vm->err.trace[0].name, "_pow_dx");
  ck_assert_int_eq(vm->err.trace[0].span.line, line);
  ck_assert_int_eq(vm->err.trace[0].span.col, 12);
  /* ... shown at the code that called into the rules, which are internal
   * (lang_error_render) */
  const char *e = mist_error(vm);
  ck_assert_msg(strncmp(e, "<t>:2:1: error: ", 16) == 0, "%s", e);
  ck_assert_msg(strstr(e, "Traceback (innermost last):\n  <t>:2:1 in <module>\n") && !strstr(e, "in _pow_dx"), "%s", e);
}
END_TEST

static Suite *lazy_suite(void) {
  Suite *s = suite_create("lazy_module");
  TCase *tc = tcase_create("cases");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, t_cut);
  tcase_add_test(tc, t_same_ir_ad_rules);
  tcase_add_test(tc, t_same_ir_ad);
  tcase_add_test(tc, t_loads_what_is_needed);
  tcase_add_test(tc, t_seen_from_outside);
  tcase_add_test(tc, t_error_keeps_its_place);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(lazy_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
