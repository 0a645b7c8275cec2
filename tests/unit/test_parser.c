/* test_parser.c: Check suite for the front end: the lexer (tokens, the
 * indentation layer, literals, positions in code points), the parser
 * (every construct's AST shape through ast_dump, operator precedence,
 * source spans) and its errors (Python 3.11's messages and line:col,
 * the REPL's "incomplete input" flag, the nesting limits that keep any
 * input from exhausting the stack).
 *
 * Expected error messages and positions were checked against python3.11
 * `compile()` on the same inputs where Python has the construct; columns
 * are 1-based.  Where Python's column is odd (it points past a token),
 * we point at the token and the test says so.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/strbuf.h"
#include "lang/vm.h"
#include "parser/ast.h"
#include "parser/lex.h"
#include "parser/parse.h"

static MistVM *vm;

static void setup(void) { vm = lang_vm_new(); }
static void teardown(void) {
  lang_vm_free(vm);
  vm = NULL;
}

/* ---- helpers ---- */

static int add_file(const char *src) { return lang_file_add(vm, "t.ms", src, strlen(src)); }

/* The module's dump, or "L:C: message" after an error. */
static const char *parse_str(const char *src, bool spans) {
  int f = add_file(src);
  lang_error_clear(vm);
  Ast *a = parse_module(vm, f, src, strlen(src));
  StrBuf sb;
  sb_init(&sb);
  if (!a) {
    ck_assert(vm->err.set);
    sb_printf(&sb, "%d:%d: %s", vm->err.span.line, vm->err.span.col, vm->err.message->data);
    return sb.data;
  }
  ck_assert(!vm->err.set);
  ast_dump(a, spans, &sb);
  return sb.data;
}

/* The dump of the statements only: "(Module X)" -> "X". */
static const char *stmts(const char *src) {
  const char *d = parse_str(src, false);
  if (strncmp(d, "(Module ", 8) != 0) return d;
  size_t n = strlen(d);
  char *s = lang_alloc_atomic(n);
  memcpy(s, d + 8, n - 9);
  s[n - 9] = 0;
  return s;
}

/* One expression through parse_expression. */
static const char *ex(const char *src) {
  int f = add_file(src);
  lang_error_clear(vm);
  Ast *a = parse_expression(vm, f, src, strlen(src));
  StrBuf sb;
  sb_init(&sb);
  if (!a) {
    sb_printf(&sb, "%d:%d: %s", vm->err.span.line, vm->err.span.col, vm->err.message->data);
    return sb.data;
  }
  ast_dump(a, false, &sb);
  return sb.data;
}

/* The error of a parse that must fail, as "L:C: message". */
static const char *err(const char *src) {
  int f = add_file(src);
  lang_error_clear(vm);
  Ast *a = parse_module(vm, f, src, strlen(src));
  ck_assert_msg(a == NULL, "expected a syntax error for %s", src);
  ck_assert_str_eq(vm->err.kind, "SyntaxError");
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "%d:%d: %s", vm->err.span.line, vm->err.span.col, vm->err.message->data);
  return sb.data;
}

static bool incomplete(const char *src) {
  int f = add_file(src);
  lang_error_clear(vm);
  Ast *a = parse_module(vm, f, src, strlen(src));
  return a == NULL && vm->err.incomplete;
}

/* Tokens of src, as their names joined by spaces ("name = integer newline"). */
static const char *toks(const char *src) {
  int f = add_file(src);
  Lexer L;
  lex_init(&L, vm, f, src, strlen(src));
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < 1000; i++) {
    Token t = lex_next(&L);
    if (i) sb_addc(&sb, ' ');
    if (t.kind == TK_ERROR) {
      sb_printf(&sb, "ERROR(%d:%d: %s)", vm->err.span.line, vm->err.span.col, vm->err.message->data);
      break;
    }
    sb_adds(&sb, lex_token_name(t.kind));
    if (t.kind == TK_EOF) break;
  }
  return sb.data;
}

/* The first token of src. */
static Token tok1(const char *src) {
  int f = add_file(src);
  Lexer L;
  lex_init(&L, vm, f, src, strlen(src));
  return lex_next(&L);
}

/* The first statement of src, which must parse. */
static Ast *first_stmt(const char *src) {
  int f = add_file(src);
  lang_error_clear(vm);
  Ast *m = parse_module(vm, f, src, strlen(src));
  ck_assert_msg(m != NULL, "parse failed: %s", vm->err.message ? vm->err.message->data : "?");
  ck_assert_int_ge(m->module.nbody, 1);
  return m->module.body[0];
}

/* src repeated n times, then tail. */
static char *rep(const char *head, const char *unit, int n, const char *tail) {
  size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
  char *s = lang_alloc_atomic(hl + ul * (size_t)n + tl + 1);
  memcpy(s, head, hl);
  for (int i = 0; i < n; i++) memcpy(s + hl + ul * (size_t)i, unit, ul);
  memcpy(s + hl + ul * (size_t)n, tail, tl + 1);
  return s;
}

/* ---- lexer ---- */

START_TEST(lex_simple) {
  ck_assert_str_eq(toks("x = 1\n"), "name = integer newline end of input");
  ck_assert_str_eq(toks("x = 1"), "name = integer newline end of input");   /* NEWLINE supplied at EOF */
  ck_assert_str_eq(toks(""), "end of input");
  ck_assert_str_eq(toks("\n\n  # only a comment\n"), "end of input");
  ck_assert_str_eq(toks("a//=b**c->d"), "name //= name ** name -> name newline end of input");
  ck_assert_str_eq(toks("a<=b!=c>=d==e<<f>>=g"), "name <= name != name >= name == name << name >>= name newline end of input");
  ck_assert_str_eq(toks("def lambda if elif else while for in is break continue and or not"),
                   "def lambda if elif else while for in is break continue and or not newline end of input");
  ck_assert_str_eq(toks("True False None import as pass assert return"),
                   "True False None import as pass assert return newline end of input");
  ck_assert_str_eq(toks("x # comment\ny"), "name newline name newline end of input");
}
END_TEST

START_TEST(lex_indentation) {
  ck_assert_str_eq(toks("if x:\n    y\n\n  # c\n    z\nw\n"),
                   "if name : newline indent name newline name newline dedent name newline end of input");
  ck_assert_str_eq(toks("a:\n b:\n  c\nd\n"),
                   "name : newline indent name : newline indent name newline dedent dedent name newline end of input");
  /* end of input closes every level, with or without a final newline */
  ck_assert_str_eq(toks("a:\n b:\n  c"),
                   "name : newline indent name : newline indent name newline dedent dedent end of input");
  /* brackets and backslashes join lines; indentation inside is ignored */
  ck_assert_str_eq(toks("f(1,\n        2)\n"), "name ( integer , integer ) newline end of input");
  ck_assert_str_eq(toks("x = 1 + \\\n  2\n"), "name = integer + integer newline end of input");
  ck_assert_str_eq(toks("[\n]\n{\n}\n"), "[ ] newline { } newline end of input");
  /* blank lines with other indentation, comment lines and CRLF don't count */
  ck_assert_str_eq(toks("if x:\r\n  y\r\n      \r\n# c\r\n  z\r\n"),
                   "if name : newline indent name newline name newline dedent end of input");
  ck_assert_str_eq(toks("if x:\n  a\n b\n"),
                   "if name : newline indent name newline ERROR(3:2: unindent does not match any outer indentation level)");
  ck_assert_str_eq(toks("if x:\n\ty\n"), "if name : newline ERROR(2:1: tab in indentation: indent with spaces)");
  /* a tab after the indentation is plain white space */
  ck_assert_str_eq(toks("x =\t1\n"), "name = integer newline end of input");
}
END_TEST

START_TEST(lex_numbers) {
  struct { const char *src; uint64_t v; } ints[] = {
    {"42", 42}, {"0x2a", 42}, {"0X2A", 42}, {"0o17", 15}, {"0b101", 5}, {"1_000", 1000}, {"0", 0},
    {"00", 0}, {"0x_ff", 255}, {"9223372036854775807", 9223372036854775807ull},
    {"9223372036854775808", 9223372036854775808ull},
  };
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    Token t = tok1(ints[i].src);
    ck_assert_int_eq(t.kind, TK_INT);
    ck_assert_msg(t.uval == ints[i].v, "%s", ints[i].src);
  }
  struct { const char *src; double v; } floats[] = {
    {"1.0", 1.0}, {".5", 0.5}, {"1e-3", 1e-3}, {"2.5E+4", 2.5e4}, {"1_000.5", 1000.5}, {"1.", 1.0},
    {"1e5", 1e5}, {"0.1", 0.1}, {"09.5", 9.5},
  };
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
    Token t = tok1(floats[i].src);
    ck_assert_int_eq(t.kind, TK_FLOAT);
    ck_assert_msg(t.fval == floats[i].v, "%s", floats[i].src);
  }
  ck_assert_str_eq(toks("1abc"), "ERROR(1:1: invalid decimal literal)");
  ck_assert_str_eq(toks("1_"), "ERROR(1:1: invalid decimal literal)");
  ck_assert_str_eq(toks("1__0"), "ERROR(1:1: invalid decimal literal)");
  ck_assert_str_eq(toks("1e"), "ERROR(1:1: invalid decimal literal)");
  ck_assert_str_eq(toks("0b12"), "ERROR(1:4: invalid digit '2' in binary literal)");
  ck_assert_str_eq(toks("0o8"), "ERROR(1:3: invalid digit '8' in octal literal)");
  ck_assert_str_eq(toks("0x"), "ERROR(1:3: invalid hexadecimal literal)");
  ck_assert_str_eq(toks("012"), "ERROR(1:1: leading zeros in decimal integer literals are not permitted; "
                                "use an 0o prefix for octal integers)");
  ck_assert_str_eq(toks("x.y"), "name . name newline end of input");
  ck_assert_str_eq(toks("1 .5"), "integer float newline end of input");
}
END_TEST

START_TEST(lex_strings) {
  struct { const char *src, *want; } strs[] = {
    {"'abc'", "abc"}, {"\"a'b\"", "a'b"}, {"'a\\'b'", "a'b"}, {"'\\n\\t\\\\\\\"\\r'", "\n\t\\\"\r"},
    {"'\\x41\\u00e9\\U0001F600'", "A\xc3\xa9\xf0\x9f\x98\x80"}, {"'\\101'", "A"},
    {"'\\q'", "\\q"},               /* unknown escapes keep the backslash */
    {"'a\\\nb'", "ab"},             /* backslash-newline continues the string */
    {"r'\\n\\''", "\\n\\'"}, {"u'x'", "x"}, {"'''a\n'b'''", "a\n'b"}, {"\"\"", ""},
    {"'\xc3\xa9'", "\xc3\xa9"},
  };
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
    Token t = tok1(strs[i].src);
    ck_assert_msg(t.kind == TK_STR, "%s", strs[i].src);
    ck_assert_str_eq(t.str->data, strs[i].want);
  }
  Token z = tok1("'a\\0b'");
  ck_assert_int_eq(z.str->len, 3);
  ck_assert_int_eq(z.str->data[1], 0);
  ck_assert_int_eq(tok1("f'x{y}'").kind, TK_FSTR);
  ck_assert_int_eq(tok1("rf'x{y}'").kind, TK_FSTR);
  ck_assert_int_eq(tok1("F'x'").kind, TK_FSTR);
  ck_assert_str_eq(toks("'abc"), "ERROR(1:1: unterminated string literal (detected at line 1))");
  ck_assert_str_eq(toks("x = 'abc\ny'\n"), "name = ERROR(1:5: unterminated string literal (detected at line 1))");
  ck_assert_str_eq(toks("'\\xZ'"), "ERROR(1:2: (unicode error) truncated \\xXX escape)");
  ck_assert_str_eq(toks("'\\ud800'"), "ERROR(1:2: (unicode error) surrogate code point U+D800 is not allowed in Mist strings)");
  ck_assert_str_eq(toks("b'x'"), "ERROR(1:1: bytes literals are not supported in Mist)");
}
END_TEST

START_TEST(lex_positions) {
  /* columns count code points, not bytes */
  const char *src = "s = '\xc3\xa9\xc3\xa9' + x\n";
  int f = add_file(src);
  Lexer L;
  lex_init(&L, vm, f, src, strlen(src));
  int cols[] = {1, 3, 5, 10, 12, 13};
  int lens[] = {1, 1, 4, 1, 1, 1};
  for (int i = 0; i < 6; i++) {
    Token t = lex_next(&L);
    ck_assert_int_eq(t.span.line, 1);
    ck_assert_int_eq(t.span.col, cols[i]);
    ck_assert_int_eq(t.span.len, lens[i]);
  }
  ck_assert_str_eq(toks("x = \xe2\x82\xac\n"), "name = ERROR(1:5: invalid character '\xe2\x82\xac' (U+20AC))");
  ck_assert_str_eq(toks("x = $\n"), "name = ERROR(1:5: invalid syntax)");
  ck_assert_str_eq(toks("x = 1)\n"), "name = integer ERROR(1:6: unmatched ')')");
  ck_assert_str_eq(toks("(1]\n"), "( integer ERROR(1:3: closing parenthesis ']' does not match opening parenthesis '(')");
  ck_assert_str_eq(toks("(1\n]\n"),
                   "( integer ERROR(2:1: closing parenthesis ']' does not match opening parenthesis '(' on line 1)");
  ck_assert_str_eq(toks("class"), "ERROR(1:1: 'class' is not supported in Mist)");
}
END_TEST

/* ---- parser: shapes ---- */

START_TEST(parse_statements) {
  ck_assert_str_eq(stmts("x = 1\n"), "(Assign (Name x) = (Int 1))");
  ck_assert_str_eq(stmts("a = b = 2"), "(Assign (Name a) (Name b) = (Int 2))");
  ck_assert_str_eq(stmts("a, b = b, a"), "(Assign (Tuple (Name a) (Name b)) = (Tuple (Name b) (Name a)))");
  ck_assert_str_eq(stmts("(a, [b, c]), = x"),
                   "(Assign (Tuple (Tuple (Name a) (List (Name b) (Name c)))) = (Name x))");
  ck_assert_str_eq(stmts("x[i] = v"), "(Assign (Subscript (Name x) (Name i)) = (Name v))");
  ck_assert_str_eq(stmts("x.f = v"), "(Assign (Attribute (Name x) f) = (Name v))");
  ck_assert_str_eq(stmts("x += 1; y -= 2; z *= 3; w /= 4"),
                   "(AugAssign += (Name x) (Int 1)) (AugAssign -= (Name y) (Int 2)) "
                   "(AugAssign *= (Name z) (Int 3)) (AugAssign /= (Name w) (Int 4))");
  ck_assert_str_eq(stmts("a //= 1\nb %= 2\nc **= 3\nd @= e\nt[0] += 1\n"),
                   "(AugAssign //= (Name a) (Int 1)) (AugAssign %= (Name b) (Int 2)) (AugAssign **= (Name c) (Int 3)) "
                   "(AugAssign @= (Name d) (Name e)) (AugAssign += (Subscript (Name t) (Int 0)) (Int 1))");
  ck_assert_str_eq(stmts("f(x)\n"), "(Expr (Call (Name f) (Name x)))");
  ck_assert_str_eq(stmts("pass"), "(Pass)");
  ck_assert_str_eq(stmts("assert x"), "(Assert (Name x))");
  ck_assert_str_eq(stmts("assert x > 0, \"msg\""), "(Assert (Compare (Name x) > (Int 0)) (Str \"msg\"))");
  ck_assert_str_eq(stmts("import nn\nimport optim as o\nimport a, b as c"),
                   "(Import nn) (Import optim as o) (Import a) (Import b as c)");
  ck_assert_str_eq(stmts("x = 1;"), "(Assign (Name x) = (Int 1))");
}
END_TEST

START_TEST(parse_compound) {
  ck_assert_str_eq(stmts("if a:\n    x\nelif b:\n    y\nelif c:\n    z\nelse:\n    w\n"),
                   "(If (Name a) (then (Expr (Name x))) (else (If (Name b) (then (Expr (Name y))) "
                   "(else (If (Name c) (then (Expr (Name z))) (else (Expr (Name w))))))))");
  ck_assert_str_eq(stmts("if a: x = 1; y = 2\n"),
                   "(If (Name a) (then (Assign (Name x) = (Int 1)) (Assign (Name y) = (Int 2))))");
  ck_assert_str_eq(stmts("while i < n:\n    i += 1\n    if i: break\n    continue\n"),
                   "(While (Compare (Name i) < (Name n)) (do (AugAssign += (Name i) (Int 1)) "
                   "(If (Name i) (then (Break))) (Continue)))");
  ck_assert_str_eq(stmts("for i in range(10):\n    pass\n"),
                   "(For (Name i) (Call (Name range) (Int 10)) (do (Pass)))");
  ck_assert_str_eq(stmts("for i, x in enumerate(xs):\n    pass\n"),
                   "(For (Tuple (Name i) (Name x)) (Call (Name enumerate) (Name xs)) (do (Pass)))");
  ck_assert_str_eq(stmts("for (a, b), c in 1, 2:\n  pass"),
                   "(For (Tuple (Tuple (Name a) (Name b)) (Name c)) (Tuple (Int 1) (Int 2)) (do (Pass)))");
  ck_assert_str_eq(stmts("def f(a, b=1, c=-2,):\n    return a, b\n"),
                   "(Def f (a b=(Int 1) c=(Unary - (Int 2))) (body (Return (Tuple (Name a) (Name b)))))");
  ck_assert_str_eq(stmts("def f():\n    return\n"), "(Def f () (body (Return)))");
  ck_assert_str_eq(stmts("@jit\n@nn.wrap\n@cache(3, k=2)\ndef g(x):\n  def h(): return x\n  return h\n"),
                   "(Def g (x) (decorators (Name jit) (Attribute (Name nn) wrap) (Call (Name cache) (Int 3) k=(Int 2))) "
                   "(body (Def h () (body (Return (Name x)))) (Return (Name h))))");
  /* a docstring is just an expression statement */
  ck_assert_str_eq(stmts("def f():\n    \"\"\"Doc.\n    more\"\"\"\n    pass\n"),
                   "(Def f () (body (Expr (Str \"Doc.\\n    more\")) (Pass)))");
  /* comments and blank lines anywhere */
  ck_assert_str_eq(stmts("# top\n\ndef f(x):  # c\n\n    # inner\n    return x  # r\n\n# end\n"),
                   "(Def f (x) (body (Return (Name x))))");
}
END_TEST

START_TEST(parse_expressions) {
  ck_assert_str_eq(ex("x"), "(Name x)");
  ck_assert_str_eq(ex("1.5"), "(Float 1.5)");
  ck_assert_str_eq(ex("None, True, False"), "(Tuple (None) (True) (False))");
  ck_assert_str_eq(ex("()"), "(Tuple)");
  ck_assert_str_eq(ex("(1,)"), "(Tuple (Int 1))");
  ck_assert_str_eq(ex("(1)"), "(Int 1)");
  ck_assert_str_eq(ex("[]"), "(List)");
  ck_assert_str_eq(ex("[1, 2,]"), "(List (Int 1) (Int 2))");
  ck_assert_str_eq(ex("{}"), "(Dict)");
  ck_assert_str_eq(ex("{\"w\": w, \"b\": 1,}"), "(Dict ((Str \"w\"): (Name w)) ((Str \"b\"): (Int 1)))");
  ck_assert_str_eq(ex("f(a, b, c=1, d=2,)"), "(Call (Name f) (Name a) (Name b) c=(Int 1) d=(Int 2))");
  ck_assert_str_eq(ex("f()"), "(Call (Name f))");
  ck_assert_str_eq(ex("x.f(1).g"), "(Attribute (Call (Attribute (Name x) f) (Int 1)) g)");
  ck_assert_str_eq(ex("t.T.shape[0]"), "(Subscript (Attribute (Attribute (Name t) T) shape) (Int 0))");
  ck_assert_str_eq(ex("x[1:2]"), "(Subscript (Name x) (Slice (Int 1) (Int 2) _))");
  ck_assert_str_eq(ex("x[::2]"), "(Subscript (Name x) (Slice _ _ (Int 2)))");
  ck_assert_str_eq(ex("x[a:b:c]"), "(Subscript (Name x) (Slice (Name a) (Name b) (Name c)))");
  ck_assert_str_eq(ex("x[:]"), "(Subscript (Name x) (Slice _ _ _))");
  ck_assert_str_eq(ex("x[:, 0]"), "(Subscript (Name x) (Tuple (Slice _ _ _) (Int 0)))");
  ck_assert_str_eq(ex("x[i, j]"), "(Subscript (Name x) (Tuple (Name i) (Name j)))");
  ck_assert_str_eq(ex("x[i,]"), "(Subscript (Name x) (Tuple (Name i)))");
  ck_assert_str_eq(ex("x[1:, ::-1, :2]"),
                   "(Subscript (Name x) (Tuple (Slice (Int 1) _ _) (Slice _ _ (Unary - (Int 1))) (Slice _ (Int 2) _)))");
  ck_assert_str_eq(ex("lambda: 0"), "(Lambda () (Int 0))");
  ck_assert_str_eq(ex("lambda x, y=2: x + y"), "(Lambda (x y=(Int 2)) (BinOp + (Name x) (Name y)))");
  ck_assert_str_eq(ex("a if c else b"), "(IfExp (Name c) (Name a) (Name b))");
  ck_assert_str_eq(ex("x in xs"), "(Compare (Name x) in (Name xs))");
  ck_assert_str_eq(ex("x not in xs"), "(Compare (Name x) not in (Name xs))");
  ck_assert_str_eq(ex("x is None"), "(Compare (Name x) is (None))");
  ck_assert_str_eq(ex("x is not None"), "(Compare (Name x) is not (None))");
  ck_assert_str_eq(ex("a < b <= c == d != e > f >= g"),
                   "(Compare (Name a) < (Name b) <= (Name c) == (Name d) != (Name e) > (Name f) >= (Name g))");
  ck_assert_str_eq(ex("-9223372036854775808"), "(Int -9223372036854775808)");
  ck_assert_str_eq(ex("9223372036854775807"), "(Int 9223372036854775807)");
  ck_assert_str_eq(ex("(\n  1 +\n  2\n)"), "(BinOp + (Int 1) (Int 2))");
}
END_TEST

START_TEST(parse_precedence) {
  ck_assert_str_eq(ex("1 + 2 * 3"), "(BinOp + (Int 1) (BinOp * (Int 2) (Int 3)))");
  ck_assert_str_eq(ex("1 - 2 - 3"), "(BinOp - (BinOp - (Int 1) (Int 2)) (Int 3))");
  ck_assert_str_eq(ex("a * b / c // d % e @ f"),
                   "(BinOp @ (BinOp % (BinOp // (BinOp / (BinOp * (Name a) (Name b)) (Name c)) (Name d)) (Name e)) (Name f))");
  ck_assert_str_eq(ex("2 ** 3 ** 2"), "(BinOp ** (Int 2) (BinOp ** (Int 3) (Int 2)))");
  ck_assert_str_eq(ex("-2 ** 2"), "(Unary - (BinOp ** (Int 2) (Int 2)))");
  ck_assert_str_eq(ex("2 ** -1"), "(BinOp ** (Int 2) (Unary - (Int 1)))");
  ck_assert_str_eq(ex("-x.y ** 2"), "(Unary - (BinOp ** (Attribute (Name x) y) (Int 2)))");
  ck_assert_str_eq(ex("- - +x"), "(Unary - (Unary - (Unary + (Name x))))");
  ck_assert_str_eq(ex("-a * b"), "(BinOp * (Unary - (Name a)) (Name b))");
  ck_assert_str_eq(ex("a + b < c * d"), "(Compare (BinOp + (Name a) (Name b)) < (BinOp * (Name c) (Name d)))");
  ck_assert_str_eq(ex("not a == b"), "(Unary not (Compare (Name a) == (Name b)))");
  ck_assert_str_eq(ex("not a and b"), "(BoolOp and (Unary not (Name a)) (Name b))");
  ck_assert_str_eq(ex("a or b and c"), "(BoolOp or (Name a) (BoolOp and (Name b) (Name c)))");
  ck_assert_str_eq(ex("a or b or c"), "(BoolOp or (BoolOp or (Name a) (Name b)) (Name c))");
  ck_assert_str_eq(ex("a and b and c"), "(BoolOp and (BoolOp and (Name a) (Name b)) (Name c))");
  ck_assert_str_eq(ex("a if b or c else d and e"),
                   "(IfExp (BoolOp or (Name b) (Name c)) (Name a) (BoolOp and (Name d) (Name e)))");
  ck_assert_str_eq(ex("a if b else c if d else e"), "(IfExp (Name b) (Name a) (IfExp (Name d) (Name c) (Name e)))");
  ck_assert_str_eq(ex("lambda x: x if x else y"), "(Lambda (x) (IfExp (Name x) (Name x) (Name y)))");
  ck_assert_str_eq(ex("(a + b) * c"), "(BinOp * (BinOp + (Name a) (Name b)) (Name c))");
  ck_assert_str_eq(ex("f(x)[0] ** 2"), "(BinOp ** (Subscript (Call (Name f) (Name x)) (Int 0)) (Int 2))");
  ck_assert_str_eq(ex("a @ b + c"), "(BinOp + (BinOp @ (Name a) (Name b)) (Name c))");
  ck_assert_str_eq(ex("x in a + b"), "(Compare (Name x) in (BinOp + (Name a) (Name b)))");
}
END_TEST

START_TEST(parse_strings) {
  ck_assert_str_eq(ex("'a' \"b\""), "(Str \"ab\")");
  ck_assert_str_eq(ex("f'loss {l:.4f} at {i}'"),
                   "(FString (Str \"loss \") (Formatted (Name l) (spec (Str \".4f\"))) (Str \" at \") (Formatted (Name i)))");
  ck_assert_str_eq(ex("f'{x!r}{y!s:>10}'"),
                   "(FString (Formatted (Name x) !r) (Formatted (Name y) !s (spec (Str \">10\"))))");
  ck_assert_str_eq(ex("f'{{a}} {{'"), "(FString (Str \"{a} {\"))");
  ck_assert_str_eq(ex("f'{x:{w}.{p}f}'"),
                   "(FString (Formatted (Name x) (spec (Formatted (Name w)) (Str \".\") (Formatted (Name p)) (Str \"f\"))))");
  ck_assert_str_eq(ex("'a' f'b{c}' 'd{'"), "(FString (Str \"ab\") (Formatted (Name c)) (Str \"d{\"))");
  ck_assert_str_eq(ex("f'{a + b * 2}'"), "(FString (Formatted (BinOp + (Name a) (BinOp * (Name b) (Int 2)))))");
  ck_assert_str_eq(ex("f'{d[\"k\"]}'"), "(FString (Formatted (Subscript (Name d) (Str \"k\"))))");
  ck_assert_str_eq(ex("f'{a, b}'"), "(FString (Formatted (Tuple (Name a) (Name b))))");
  ck_assert_str_eq(ex("f'{a != b}'"), "(FString (Formatted (Compare (Name a) != (Name b))))");
  ck_assert_str_eq(ex("f'{x=}'"), "(FString (Str \"x=\") (Formatted (Name x) !r))");
  ck_assert_str_eq(ex("f'\\n{x}\\t'"), "(FString (Str \"\\n\") (Formatted (Name x)) (Str \"\\t\"))");
  ck_assert_str_eq(ex("f'{x:}'"), "(FString (Formatted (Name x)))");
  ck_assert_str_eq(ex("f''"), "(FString)");
  ck_assert_str_eq(ex("f'{f\"{x}\"}'"), "(FString (Formatted (FString (Formatted (Name x)))))");
  /* spans inside f-strings point into the file */
  Ast *a = first_stmt("y = f'ab{ x + 1 }'\n");
  Ast *fs = a->assign.value;
  ck_assert_int_eq(fs->kind, AST_FSTRING);
  ck_assert_int_eq(fs->span.col, 5);
  Ast *fld = fs->fstr.parts[1];
  ck_assert_int_eq(fld->kind, AST_FORMATTED);
  ck_assert_int_eq(fld->span.col, 9);
  ck_assert_int_eq(fld->fmt.value->span.col, 11);
  ck_assert_int_eq(fld->fmt.value->binop.right->span.col, 15);
  a = first_stmt("z = f'''\n  {q}'''\n");
  ck_assert_int_eq(a->assign.value->fstr.parts[1]->fmt.value->span.line, 2);
  ck_assert_int_eq(a->assign.value->fstr.parts[1]->fmt.value->span.col, 4);
}
END_TEST

START_TEST(parse_spans) {
  ck_assert_str_eq(parse_str("x = a + b * c\n", true),
                   "(Module@1:1 (Assign@1:1 (Name@1:1 x) = (BinOp@1:5 + (Name@1:5 a) (BinOp@1:9 * (Name@1:9 b) (Name@1:13 c)))))");
  ck_assert_str_eq(parse_str("f(x).y[i]\n", true),
                   "(Module@1:1 (Expr@1:1 (Subscript@1:1 (Attribute@1:1 (Call@1:1 (Name@1:1 f) (Name@1:3 x)) y) (Name@1:8 i))))");
  ck_assert_str_eq(parse_str("if a:\n  pass\nelif b:\n  return\n", true),
                   "4:3: 'return' outside function");
  ck_assert_str_eq(parse_str("if a:\n  pass\nelif b:\n  pass\n", true),
                   "(Module@1:1 (If@1:1 (Name@1:4 a) (then (Pass@2:3)) (else (If@3:1 (Name@3:6 b) (then (Pass@4:3))))))");
  ck_assert_str_eq(parse_str("@d\ndef f(x=1): return -x\n", true),
                   "(Module@1:1 (Def@2:1 f (x=(Int@2:9 1)) (decorators (Name@1:2 d)) (body (Return@2:13 (Unary@2:20 - (Name@2:21 x))))))");
  /* lengths: a node covers its tokens on its first line */
  Ast *s = first_stmt("total = alpha + beta\n");
  ck_assert_int_eq(s->span.len, 20);
  ck_assert_int_eq(s->assign.value->span.col, 9);
  ck_assert_int_eq(s->assign.value->span.len, 12);
  s = first_stmt("(a +\n b)\n");
  ck_assert_int_eq(s->expr.value->span.line, 1);
  ck_assert_int_eq(s->expr.value->span.col, 2);
  /* a parenthesised left operand starts the binary expression at its '(' */
  s = first_stmt("(a + b) * c\n");
  ck_assert_int_eq(s->expr.value->span.col, 1);
  ck_assert_int_eq(s->expr.value->binop.left->span.col, 2);
  /* names are interned: equal names, equal pointers */
  s = first_stmt("x = x\n");
  ck_assert_ptr_eq(s->assign.targets[0]->name, s->assign.value->name);
  s = first_stmt("def f(a): pass\n");
  ck_assert_int_eq(s->def.name_span.col, 5);
  ck_assert_int_eq(s->def.params[0].span.col, 7);
  /* heights */
  s = first_stmt("1 + (2 * 3)\n");
  ck_assert_int_eq(s->expr.value->height, 3);
  ck_assert_int_eq(s->height, 4);
}
END_TEST

START_TEST(parse_comprehensions) {
  ck_assert_str_eq(ex("[x * x for x in xs]"),
                   "(ListComp (BinOp * (Name x) (Name x)) (for (Name x) (Name xs)))");
  ck_assert_str_eq(ex("[x for x in xs if x if not y for y in x]"),
                   "(ListComp (Name x) (for (Name x) (Name xs) (if (Name x)) (if (Unary not (Name y)))) "
                   "(for (Name y) (Name x)))");
  ck_assert_str_eq(ex("[(i, x) for i, x in enumerate(xs)]"),
                   "(ListComp (Tuple (Name i) (Name x)) (for (Tuple (Name i) (Name x)) (Call (Name enumerate) (Name xs))))");
  ck_assert_str_eq(ex("[a for (a, [b, c]), in d]"),
                   "(ListComp (Name a) (for (Tuple (Tuple (Name a) (List (Name b) (Name c)))) (Name d)))");
  ck_assert_str_eq(ex("{k: v + 1 for k, v in d.items() if v}"),
                   "(DictComp (Name k) (BinOp + (Name v) (Int 1)) (for (Tuple (Name k) (Name v)) "
                   "(Call (Attribute (Name d) items)) (if (Name v))))");
  ck_assert_str_eq(ex("(x for x in y)"), "(GeneratorExp (Name x) (for (Name x) (Name y)))");
  ck_assert_str_eq(ex("sum(x * x for x in xs)"),
                   "(Call (Name sum) (GeneratorExp (BinOp * (Name x) (Name x)) (for (Name x) (Name xs))))");
  ck_assert_str_eq(ex("f((x for x in y), 1)"),
                   "(Call (Name f) (GeneratorExp (Name x) (for (Name x) (Name y))) (Int 1))");
  /* the element is a full expression; iterables and filters are disjunctions */
  ck_assert_str_eq(ex("[a if b else c for x in y or z if p and q]"),
                   "(ListComp (IfExp (Name b) (Name a) (Name c)) (for (Name x) (BoolOp or (Name y) (Name z)) "
                   "(if (BoolOp and (Name p) (Name q)))))");
  ck_assert_str_eq(ex("[lambda: x for x in y]"), "(ListComp (Lambda () (Name x)) (for (Name x) (Name y)))");
  ck_assert_str_eq(ex("[[y for y in x] for x in z]"),
                   "(ListComp (ListComp (Name y) (for (Name y) (Name x))) (for (Name x) (Name z)))");
  ck_assert_str_eq(ex("[x for x in (1, 2)]"), "(ListComp (Name x) (for (Name x) (Tuple (Int 1) (Int 2))))");
  ck_assert_str_eq(ex("[\n  x\n  for x in y\n]"), "(ListComp (Name x) (for (Name x) (Name y)))");
  /* spans: the opening bracket; a call's sole argument starts at its '(' */
  ck_assert_str_eq(parse_str("y = [x for x in z]\n", true),
                   "(Module@1:1 (Assign@1:1 (Name@1:1 y) = (ListComp@1:5 (Name@1:6 x) (for (Name@1:12 x) (Name@1:17 z)))))");
  Ast *s = first_stmt("t = f(x for x in z)\n");
  Ast *g = s->assign.value->call.args[0];
  ck_assert_int_eq(g->kind, AST_GENEXP);
  ck_assert_int_eq(g->span.col, 6);
  ck_assert_int_eq(g->span.len, 14);
  s = first_stmt("d = {k: 1 for k in z}\n");
  ck_assert_int_eq(s->assign.value->kind, AST_DICTCOMP);
  ck_assert_int_eq(s->assign.value->span.col, 5);
  ck_assert_int_eq(s->assign.value->span.len, 17);
  ck_assert_ptr_null(first_stmt("[x for x in y]\n")->expr.value->comp.key);
  /* each clause and filter counts toward the height: lowering nests a graph for each */
  s = first_stmt("[x for x in y if a if b for z in w]\n");
  ck_assert_int_eq(s->expr.value->height, 2 + 4);
  ck_assert_int_eq(s->expr.value->comp.nfors, 2);
  ck_assert_int_eq(s->expr.value->comp.fors[0].nifs, 2);
  ck_assert_int_eq(s->expr.value->comp.fors[1].nifs, 0);

  struct { const char *src, *want; } cases[] = {
    {"f(1, x for x in y)\n", "1:6: Generator expression must be parenthesized"},
    {"f(a=1, x for x in y)\n", "1:8: Generator expression must be parenthesized"},
    {"f(x for x in y, a=1)\n", "1:3: Generator expression must be parenthesized"},
    {"f(x for x in y,)\n", "1:3: Generator expression must be parenthesized"},
    {"f(x=y for y in z)\n", "1:3: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
    {"[x, y for x in z]\n", "1:2: did you forget parentheses around the comprehension target?"},
    {"(x, y for x in z)\n", "1:7: invalid syntax"},
    {"{1: 2, k: v for k in y}\n", "1:13: invalid syntax"},
    {"{k: v for k in y, 1: 2}\n", "1:17: invalid syntax"},
    {"[x for x in y, z]\n", "1:14: invalid syntax"},
    {"(x for x in y, z)\n", "1:14: invalid syntax"},
    {"[x for x in a if b else c]\n", "1:20: invalid syntax"},
    {"[x for x in lambda: y]\n", "1:13: invalid syntax"},
    {"[x for x in y if lambda: z]\n", "1:18: invalid syntax"},
    {"[x for 1 in y]\n", "1:8: cannot assign to literal"},
    {"[x for f() in y]\n", "1:8: cannot assign to function call"},
    {"[x for x in]\n", "1:12: invalid syntax"},
    {"[x for]\n", "1:7: invalid syntax"},
    {"[x for x in y if z for]\n", "1:23: invalid syntax"},
    {"[x if c for x in z]\n", "1:2: expected 'else' after 'if' expression"},
    {"[x for x in *a]\n", "1:13: starred expressions are not supported in Mist"},
    {"[x for x[0] in y]\n", "1:8: subscript and attribute targets in comprehensions are not supported in Mist"},
    {"[x for a, b.c in y]\n", "1:11: subscript and attribute targets in comprehensions are not supported in Mist"},
    {"{x for x in y}\n", "1:1: sets are not supported in Mist"},
    {"[x for x in y] = 1\n", "1:1: cannot assign to list comprehension here. Maybe you meant '==' instead of '='?"},
    {"{x: y for x in z} = 1\n", "1:1: cannot assign to dict comprehension here. Maybe you meant '==' instead of '='?"},
    {"for (x for x in y) in z: pass\n", "1:5: cannot assign to generator expression"},
    {"(x for x in y) += 1\n", "1:1: 'generator expression' is an illegal expression for augmented assignment"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ck_assert_msg(strcmp(err(cases[i].src), cases[i].want) == 0, "case %zu: %s\n  got:  %s\n  want: %s", i,
                  cases[i].src, err(cases[i].src), cases[i].want);
  ck_assert(incomplete("x = [i for i in\n"));
  ck_assert(incomplete("x = {k: v for k in y\n"));
  ck_assert(incomplete("sum(x for x in y\n"));
  /* many clauses or filters: the height limit, never a crash */
  ck_assert_str_eq(err(rep("x = [x", " for x in y", 4000, "]\n")), "1:5: expression too deeply nested");
  ck_assert_str_eq(err(rep("x = (x for x in y", " if x", 4000, ")\n")), "1:5: expression too deeply nested");
  s = first_stmt(rep("x = [x", " for x in y", 400, "]\n"));
  ck_assert_int_eq(s->assign.value->comp.nfors, 400);
  ck_assert_int_le(s->height, PARSE_MAX_HEIGHT);
}
END_TEST

/* ---- errors ---- */

START_TEST(parse_errors) {
  struct { const char *src, *want; } cases[] = {
    {"x = 1 2\n", "1:7: invalid syntax"},
    {"x = 1 +\n", "1:8: invalid syntax"},
    {"else:\n  pass\n", "1:1: invalid syntax"},
    {"if x\n  y\n", "1:5: expected ':'"},
    {"def f(x)\n  pass\n", "1:9: expected ':'"},
    {"  x = 1\n", "1:3: unexpected indent"},            /* Python says 1:2 */
    {"x = 1\n    y = 2\n", "2:5: unexpected indent"},
    {"if x:\n    a\n  b\n", "3:3: unindent does not match any outer indentation level"},
    {"if x:\ny = 1\n", "2:1: expected an indented block after 'if' statement on line 1"},
    {"while x:\npass\n", "2:1: expected an indented block after 'while' statement on line 1"},
    {"def f():\nreturn 1\n", "2:1: expected an indented block after function definition on line 1"},
    {"if a:\n  pass\nelif b:\nx\n", "4:1: expected an indented block after 'elif' statement on line 3"},
    {"if a:\n  pass\nelse:\nx\n", "4:1: expected an indented block after 'else' statement on line 3"},
    {"x = 'abc\ny\n", "1:5: unterminated string literal (detected at line 1)"},
    {"x = (1,\n", "1:5: '(' was never closed"},
    {"x = [1, 2\ny = 3\n", "1:5: '[' was never closed"},     /* the lexer's error wins, as in Python */
    {"x = 1)\n", "1:6: unmatched ')'"},
    {"x = 1abc\n", "1:5: invalid decimal literal"},
    {"x = 99999999999999999999\n", "1:5: integer literal too large"},
    {"x = 9223372036854775808\n", "1:5: integer literal too large"},
    {"x = -9223372036854775808 ** 2\n", "1:6: integer literal too large"},
    {"1 = x\n", "1:1: cannot assign to literal here. Maybe you meant '==' instead of '='?"},
    {"'a' = x\n", "1:1: cannot assign to literal here. Maybe you meant '==' instead of '='?"},
    {"f() = 1\n", "1:1: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
    {"x + 1 = 2\n", "1:1: cannot assign to expression here. Maybe you meant '==' instead of '='?"},
    {"a, 1 = b\n", "1:4: cannot assign to literal here. Maybe you meant '==' instead of '='?"},
    {"None = 1\n", "1:1: cannot assign to None"},
    {"if x = 1: pass\n", "1:4: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
    {"while f() = 1: pass\n", "1:7: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
    {"if a:\n  pass\nelif x.y = 2: pass\n", "3:6: cannot assign to attribute here. Maybe you meant '==' instead of '='?"},
    {"if x = 1 = 2: pass\n", "1:6: invalid syntax"},
    {"if x = not y: pass\n", "1:6: invalid syntax"},
    {"if a < b = 1: pass\n", "1:10: invalid syntax"},
    {"x = [y = 1]\n", "1:6: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
    {"x = (y = 1)\n", "1:6: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
    {"x = {y = 1}\n", "1:6: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
    {"1, x = 1, 2\n", "1:4: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
    {"x = 1, f() = 1\n", "1:1: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
    {"1, x[0] = 1, 2\n", "1:4: cannot assign to subscript here. Maybe you meant '==' instead of '='?"},
    {"f() = 1 = 2\n", "1:1: cannot assign to function call"},
    {"x = f() = 1\n", "1:5: cannot assign to function call"},
    {"[f()] = 1\n", "1:2: cannot assign to function call"},
    {"f() = not a\n", "1:1: cannot assign to function call"},
    {"f() = a < b\n", "1:1: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
    {"(f()) = 1\n", "1:2: cannot assign to function call here. Maybe you meant '==' instead of '='?"},
    {"if x y:\n  pass\n", "1:6: invalid syntax"},
    {"for x in y z:\n  pass\n", "1:12: invalid syntax"},
    {"while x\n  pass\n", "1:8: expected ':'"},
    {"print \"a\", 1\n", "1:1: Missing parentheses in call to 'print'. Did you mean print(...)?"},
    {"x = \"\"\"abc\ndef\n", "1:5: unterminated triple-quoted string literal (detected at line 2)"},
    {"x = True = 1\n", "1:5: cannot assign to True"},
    {"a < b = 1\n", "1:1: cannot assign to comparison"},
    {"(a if b else c) = 1\n", "1:2: cannot assign to conditional expression here. Maybe you meant '==' instead of '='?"},
    {"lambda: 1 = 1\n", "1:1: cannot assign to lambda"},
    {"for f() in x: pass\n", "1:5: cannot assign to function call"},
    {"(a, b) += 1\n", "1:1: 'tuple' is an illegal expression for augmented assignment"},
    {"f(a=1, b)\n", "1:8: positional argument follows keyword argument"},   /* Python: 1:9 */
    {"f(a=1, a=2)\n", "1:8: keyword argument repeated: a"},
    {"f(x+1=2)\n", "1:3: expression cannot contain assignment, perhaps you meant \"==\"?"},
    {"def f(a=1, b): pass\n", "1:12: non-default argument follows default argument"},
    {"def f(a, a): pass\n", "1:10: duplicate argument 'a' in function definition"},
    {"x = 1 if y\n", "1:5: expected 'else' after 'if' expression"},
    {"f(a b)\n", "1:3: invalid syntax. Perhaps you forgot a comma?"},
    {"x = [1 2]\n", "1:6: invalid syntax. Perhaps you forgot a comma?"},
    {"x = (1 2)\n", "1:6: invalid syntax. Perhaps you forgot a comma?"},
    {"x = {1: 2, 3}\n", "1:12: ':' expected after dictionary key"},
    {"x = a[1:2:3:4]\n", "1:12: invalid syntax"},
    {"for x range(3): pass\n", "1:7: invalid syntax"},
    {"f = lambda x 1\n", "1:14: invalid syntax"},
    {"x = {\"a\": 1 \"b\": 2}\n", "1:11: invalid syntax. Perhaps you forgot a comma?"},
    {"x = [1 if 2 else 3 4]\n", "1:18: invalid syntax. Perhaps you forgot a comma?"},
    {"x = f(a=1 2)\n", "1:9: invalid syntax. Perhaps you forgot a comma?"},
    {"x = {\"a\" 1}\n", "1:6: invalid syntax. Perhaps you forgot a comma?"},
    {"x = [v for v 2 in y]\n", "1:12: invalid syntax. Perhaps you forgot a comma?"},
    {"x = $\n", "1:5: invalid syntax"},
    {"x = \\ y\n", "1:5: unexpected character after line continuation character"},
    {"if x:\n\tpass\n", "2:1: tab in indentation: indent with spaces"},
    {"return 1\n", "1:1: 'return' outside function"},
    {"break\n", "1:1: 'break' outside loop"},
    {"while x:\n  def f():\n    continue\n", "3:5: 'continue' not properly in loop"},
    {"class A: pass\n", "1:1: 'class' is not supported in Mist"},
    {"global x\n", "1:1: 'global' is not supported in Mist"},
    {"try:\n  pass\n", "1:1: 'try' is not supported in Mist"},
    {"with a: pass\n", "1:1: 'with' is not supported in Mist"},
    {"def f():\n  yield 1\n", "2:3: 'yield' is not supported in Mist"},
    {"del x\n", "1:1: 'del' is not supported in Mist"},
    {"from a import b\n", "1:1: 'from' is not supported in Mist"},
    {"x = a | b\n", "1:7: '|' is not supported in Mist"},
    {"x = a & b\n", "1:7: '&' is not supported in Mist"},
    {"x = ~a\n", "1:5: '~' is not supported in Mist"},
    {"x = a << 2\n", "1:7: '<<' is not supported in Mist"},
    {"x |= 1\n", "1:3: '|=' is not supported in Mist"},
    {"(x := 1)\n", "1:4: ':=' is not supported in Mist"},
    {"x = [i, j for i in y]\n", "1:6: did you forget parentheses around the comprehension target?"},
    {"f(i for i in y, 1)\n", "1:3: Generator expression must be parenthesized"},
    {"x = {1, 2}\n", "1:5: sets are not supported in Mist"},
    {"f(*a)\n", "1:3: '*' and '**' arguments are not supported in Mist"},
    {"def f(*a): pass\n", "1:7: '*' and '**' parameters are not supported in Mist"},
    {"def f(x: int): pass\n", "1:8: parameter annotations are not supported in Mist"},
    {"def f(x) -> int: pass\n", "1:10: return annotations are not supported in Mist"},
    {"x: int = 1\n", "1:2: type annotations are not supported in Mist"},
    {"while x:\n  pass\nelse:\nx\n", "4:1: expected an indented block after 'else' statement on line 3"},
    {"for x in y:\n  pass\nelse\n  pass\n", "3:5: expected ':'"},
    {"for x in y:\n  pass\nelse:\n  break\n", "4:3: 'break' outside loop"},
    {"import a.b\n", "1:9: dotted module names are not supported in Mist"},
    {"x = f'{}'\n", "1:8: f-string: empty expression not allowed"},
    {"x = f'{a'\n", "1:7: f-string: expecting '}'"},
    {"x = f'a}'\n", "1:8: f-string: single '}' is not allowed"},
    {"x = f'{a!x}'\n", "1:10: f-string: invalid conversion character: expected 's' or 'r'"},
    {"x = f'{a +}'\n", "1:11: f-string: invalid syntax"},
    {"x = f'{a b}'\n", "1:10: f-string: invalid syntax"},
    {"x = f'{\"\\n\"}'\n", "1:9: f-string expression part cannot include a backslash"},
    {"x = f'{a:{b:{c}}}'\n", "1:10: f-string: expressions nested too deeply"},
    {"x = \"\\xZZ\"\n", "1:6: (unicode error) truncated \\xXX escape"},
    {"x = 'a\0'\n", "1:7: source code cannot contain null bytes"},
    {"x = '\xff'\n", "1:6: invalid UTF-8 byte 0xff in source"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *src = cases[i].src;
    size_t len = strlen(src);
    if (strstr(cases[i].want, "null bytes")) len = 9;   /* the NUL is inside the literal */
    int f = lang_file_add(vm, "t.ms", src, len);
    lang_error_clear(vm);
    Ast *a = parse_module(vm, f, src, len);
    ck_assert_msg(a == NULL, "no error for case %zu: %s", i, src);
    char got[600];
    snprintf(got, sizeof got, "%d:%d: %s", vm->err.span.line, vm->err.span.col, vm->err.message->data);
    ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: %s\n  got:  %s\n  want: %s", i, src, got,
                  cases[i].want);
    ck_assert_int_eq(vm->err.span.file, f);
  }
}
END_TEST

START_TEST(parse_error_render) {
  const char *src = "x = 1\ny = (2 +\n     3))\n";
  ck_assert_ptr_null(parse_module(vm, add_file(src), src, strlen(src)));
  ObjStr *r = lang_error_render(vm);
  ck_assert_msg(strstr(r->data, "t.ms:3:8: error: unmatched ')'") != NULL, "%s", r->data);
}
END_TEST

START_TEST(parse_incomplete) {
  /* the REPL reads another line for these */
  ck_assert(incomplete("if x:\n"));
  ck_assert(incomplete("if x:"));
  ck_assert(incomplete("def f(a, b):\n"));
  ck_assert(incomplete("if a:\n  if b:\n"));
  ck_assert(incomplete("for i in range(3):\n  # comment\n"));
  ck_assert(incomplete("if x:\n  pass\nelse:\n"));
  ck_assert(incomplete("f(1,\n"));
  ck_assert(incomplete("x = [\n  1,\n"));
  ck_assert(incomplete("d = {'a':\n"));
  ck_assert(incomplete("x = 'abc\\\n"));
  ck_assert(incomplete("x = 1 + \\\n"));
  ck_assert(incomplete("s = '''abc\n"));
  ck_assert(incomplete("@jit\n"));
  ck_assert_str_eq(err("if x:\n"), "1:6: expected an indented block after 'if' statement on line 1");
  /* ...and not for these, which are complete or wrong whatever follows */
  ck_assert(!incomplete("x = 1\n"));
  ck_assert(!incomplete("if x:\n  y = 1\n"));
  ck_assert(!incomplete("x = 'abc\n"));
  ck_assert(!incomplete("x = 1 +\n"));
  ck_assert(!incomplete("x = (1 2\n"));
  ck_assert(!incomplete("if x:\ny\n"));
  ck_assert(!incomplete("x = )\n"));
  ck_assert(!incomplete("f(a b\n"));
  ck_assert(!incomplete("x = [y = 1\n"));      /* the parser reads on for Python's guess */
  ck_assert(!incomplete("print 'a' + (\n"));
}
END_TEST

START_TEST(parse_limits) {
  /* deep nesting is an error, never a crash */
  ck_assert_str_eq(ex(rep("", "(", 199, rep("1", ")", 199, ""))), "(Int 1)");
  ck_assert_str_eq(err(rep("x = ", "(", 250, "1")), "1:205: too many nested parentheses");
  ck_assert_str_eq(err(rep("x = ", "-", 100000, "1\n")), "1:304: expression too deeply nested");
  ck_assert_str_eq(err(rep("x = ", "not ", 10000, "1\n")), "1:1201: expression too deeply nested");
  ck_assert_str_eq(err(rep("x = ", "lambda: ", 10000, "1\n")), "1:2405: expression too deeply nested");
  ck_assert_str_eq(err(rep("x = ", "2**", 10000, "1\n")), "1:905: expression too deeply nested");
  ck_assert_str_eq(err(rep("x = ", "1+", 100000, "1\n")),
                   "1:5: expression too long: more than 2900 operators in a row");
  ck_assert_str_eq(err(rep("x = a", ".b", 5000, "\n")), "1:5: expression too deeply nested");
  ck_assert_str_eq(err(rep("x = f", "()", 5000, "\n")), "1:5: expression too deeply nested");
  ck_assert_str_eq(err(rep("x = f", "[0]", 5000, "\n")), "1:5: expression too deeply nested");
  char *deep = rep("", "", 0, "");
  for (int i = 0; i < 110; i++) deep = rep(deep, " ", i, "if x:\n");
  ck_assert_str_eq(err(rep(deep, " ", 110, "pass\n")), "102:102: too many levels of indentation");
  char *elifs = rep("if a:\n  pass\n", "elif b:\n  pass\n", 5000, "");
  ck_assert(strstr(err(elifs), "too many statically nested blocks") != NULL);
  /* long but flat inputs are fine */
  Ast *s = first_stmt(rep("x = [", "1, ", 100000, "1]\n"));
  ck_assert_int_eq(s->assign.value->seq.nitems, 100001);
  s = first_stmt(rep("x = a", " < a", 10000, "\n"));
  ck_assert_int_eq(s->assign.value->cmp.nops, 10000);
  s = first_stmt(rep("x = 0", "+1", 900, "\n"));
  ck_assert_int_le(s->height, PARSE_MAX_HEIGHT);
  ck_assert_int_eq(s->assign.value->height, 901);
  /* a chain as long as Python compiles (999 terms, issue 12), inside a call */
  s = first_stmt(rep("print(0", "+1", 2900, ")\n"));
  ck_assert_int_le(s->height, PARSE_MAX_HEIGHT);
  ck_assert_str_eq(err(rep("print(0", "+1", 2901, ")\n")), "1:7: expression too long: more than 2900 operators in a row");
}
END_TEST

/* Random bytes and random cuts of a real program must never crash (the
 * fuzz target does this at scale; this is a smoke test). */
START_TEST(parse_garbage) {
  const char *prog =
    "import nn as n\n@jit\ndef f(x, y=2.5e-3):\n    \"\"\"doc\"\"\"\n    for i, v in enumerate(x[1:, ::2]):\n"
    "        if v > 0 and not i in (1, 2): y += v ** -2\n        elif v: break\n        else:\n"
    "            continue\n    return {'a': [y, f'{y!r:>{w}}'], 'b': lambda q=1: q if q else -q}\n"
    "while x < 10:\n    x = x + 1 \\\n        - 2\n";
  size_t n = strlen(prog);
  unsigned seed = 12345;
  char buf[1024];
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(buf, prog, n);
    size_t len = n;
    int muts = 1 + iter % 4;
    for (int m = 0; m < muts; m++) {
      seed = seed * 1103515245 + 12345;
      size_t at = (seed >> 8) % len;
      seed = seed * 1103515245 + 12345;
      static const char alphabet[] = "()[]{}:,.'\"\\\n #=+-*/fx0129e_@!<>";
      switch ((seed >> 8) % 3) {
      case 0: buf[at] = alphabet[(seed >> 12) % (sizeof alphabet - 1)]; break;
      case 1: len = at; break;
      default:
        if (len + 1 < sizeof buf) {
          memmove(buf + at + 1, buf + at, len - at);
          buf[at] = alphabet[(seed >> 12) % (sizeof alphabet - 1)];
          len++;
        }
      }
      if (len == 0) break;
    }
    int f = lang_file_add(vm, "g.ms", buf, len);
    lang_error_clear(vm);
    Ast *a = parse_module(vm, f, buf, len);
    if (!a) {
      ck_assert(vm->err.set);
      ck_assert_int_ge(vm->err.span.line, 1);
      ck_assert_int_ge(vm->err.span.col, 1);
    }
  }
}
END_TEST

static Suite *parser_suite(void) {
  Suite *s = suite_create("parser");
  TCase *lex = tcase_create("lex");
  tcase_add_checked_fixture(lex, setup, teardown);
  tcase_add_test(lex, lex_simple);
  tcase_add_test(lex, lex_indentation);
  tcase_add_test(lex, lex_numbers);
  tcase_add_test(lex, lex_strings);
  tcase_add_test(lex, lex_positions);
  suite_add_tcase(s, lex);

  TCase *parse = tcase_create("parse");
  tcase_add_checked_fixture(parse, setup, teardown);
  tcase_set_timeout(parse, 60);
  tcase_add_test(parse, parse_statements);
  tcase_add_test(parse, parse_compound);
  tcase_add_test(parse, parse_expressions);
  tcase_add_test(parse, parse_precedence);
  tcase_add_test(parse, parse_strings);
  tcase_add_test(parse, parse_spans);
  tcase_add_test(parse, parse_comprehensions);
  tcase_add_test(parse, parse_errors);
  tcase_add_test(parse, parse_error_render);
  tcase_add_test(parse, parse_incomplete);
  tcase_add_test(parse, parse_limits);
  tcase_add_test(parse, parse_garbage);
  suite_add_tcase(s, parse);
  return s;
}

int main(void) {
  lang_gc_init();
  SRunner *sr = srunner_create(parser_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
