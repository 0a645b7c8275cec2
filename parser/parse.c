/* parse.c: tokens to AST, by recursive descent.
 *
 * One function per grammar rule, each headed by its rule; the
 * precedence levels of expressions are Python's, one function a level
 * (lambda < if-else < or < and < not < comparisons < + - < * / // % @ <
 * unary < ** < primary).  The parser pulls tokens from the lexer with
 * up to two tokens of lookahead (`not in`, `name=` in calls, the
 * negative 64-bit minimum literal).
 *
 * Errors: the first syntax error ends the parse.  It is raised with
 * lang_raise_at and the parser unwinds with longjmp to parse_module,
 * which returns NULL; all nodes are GC memory, so nothing leaks.  The
 * messages follow Python 3.11's.  "Unexpected end of input" cases (an
 * open bracket, a missing block, an unfinished continued line) set
 * vm->err.incomplete for the REPL.
 *
 * Safety: recursion is bounded (MAX_DEPTH nested rules, brackets and
 * indentation bounded in the lexer) and every node records the height
 * of its subtree, kept under PARSE_MAX_HEIGHT, so no input can exhaust
 * the C stack here or in the passes that walk the tree afterwards.
 *
 * F-strings: the lexer only delimits them; fstring() splits the contents
 * into literal parts and `{...}` fields and parses each field's
 * expression with a second lexer over that slice of the same text, so
 * the expression's spans point into the file.
 */
#include "parser/parse.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lang/gc.h"
#include "parser/lex.h"

#define MAX_DEPTH 300   /* nested grammar rules */
#define MAX_CHAIN (PARSE_MAX_HEIGHT - 100)   /* binary operators in a row */

typedef struct Parser {
  MistVM *vm;
  Lexer *lx;               /* the lexer in use: main, or one inside an f-string */
  Lexer *main;
  int file;
  Token tok;              /* the current token */
  Token ahead[2];         /* lookahead beyond tok */
  int nahead;
  LexPos prev_end;        /* just after the last token consumed */
  int depth;              /* nested rules, against MAX_DEPTH */
  int fdepth;             /* inside an f-string's expression */
  int in_def;             /* inside a def (for 'return') */
  int in_loop;            /* inside a loop of the current def (for break/continue) */
  bool guessing;          /* reading past an error already found, for Python's guess */
  jmp_buf fail;
} Parser;

/* ---- tokens ---- */

static Token fetch(Parser *P) {
  Token t = lex_next(P->lx);
  if (t.kind == TK_ERROR) {
    /* the input ending inside brackets while the parser reads on past an
     * error for its message: the lexer's error, final (not one the REPL
     * waits for more lines to end), as for any other error there */
    if (P->guessing) P->vm->err.incomplete = false;
    longjmp(P->fail, 1);
  }
  return t;
}

static void advance(Parser *P) {
  P->prev_end = P->tok.endpos;
  if (P->nahead) {
    P->tok = P->ahead[0];
    P->ahead[0] = P->ahead[1];
    P->nahead--;
  } else {
    P->tok = fetch(P);
  }
}

/* The k-th token after the current one (k = 1 or 2). */
static const Token *peek(Parser *P, int k) {
  while (P->nahead < k) P->ahead[P->nahead++] = fetch(P);
  return &P->ahead[k - 1];
}

static bool at(Parser *P, TokKind k) { return P->tok.kind == k; }

static bool accept(Parser *P, TokKind k) {
  if (!at(P, k)) return false;
  advance(P);
  return true;
}

/* ---- errors ---- */

static void vfail(Parser *P, Span span, bool incomplete, const char *fmt, va_list ap) {
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  /* As Python does, an error of the lexer anywhere later in the file
   * (an unclosed bracket, an unterminated string...) takes precedence
   * over the parser's: it is usually the real cause. */
  if (!P->main->failed) {
    for (;;) {
      Token t = lex_next(P->main);
      if (t.kind == TK_EOF) break;
      if (t.kind == TK_ERROR) {
        P->vm->err.incomplete = false;
        longjmp(P->fail, 1);
      }
    }
  }
  if (P->fdepth > 0 && strncmp(buf, "f-string", 8) != 0)
    lang_raise_at(P->vm, span, "SyntaxError", "f-string: %s", buf);
  else
    lang_raise_at(P->vm, span, "SyntaxError", "%s", buf);
  P->vm->err.incomplete = incomplete;
  longjmp(P->fail, 1);
}

static _Noreturn void error_at(Parser *P, Span span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static _Noreturn void error_at(Parser *P, Span span, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(P, span, false, fmt, ap);
  va_end(ap);
  longjmp(P->fail, 1);
}

static _Noreturn void incomplete_at(Parser *P, Span span, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static _Noreturn void incomplete_at(Parser *P, Span span, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(P, span, true, fmt, ap);
  va_end(ap);
  longjmp(P->fail, 1);
}

/* The current token cannot go here. */
static _Noreturn void unexpected(Parser *P) {
  Token *t = &P->tok;
  switch (t->kind) {
  case TK_INDENT: error_at(P, t->span, "unexpected indent");
  case TK_PIPE: case TK_CARET: case TK_AMP: case TK_TILDE: case TK_LSHIFT: case TK_RSHIFT:
  case TK_PIPEEQ: case TK_CARETEQ: case TK_AMPEQ: case TK_LSHIFTEQ: case TK_RSHIFTEQ:
  case TK_WALRUS:
    error_at(P, t->span, "'%s' is not supported in Mist", lex_token_name(t->kind));
  default: error_at(P, t->span, "invalid syntax");
  }
}

/* Python says "expected ':'" and "expected '('" where those must come (a
 * def's, an else's); any other token missing is "invalid syntax" at the
 * token found (inside brackets the line cannot end: an unclosed bracket is
 * the lexer's error). */
static void expect(Parser *P, TokKind k) {
  if (accept(P, k)) return;
  TokKind t = P->tok.kind;
  if ((t >= TK_PIPE && t <= TK_RSHIFTEQ) || t == TK_WALRUS || t == TK_INDENT) unexpected(P);
  if (k != TK_COLON && k != TK_LPAREN) unexpected(P);
  error_at(P, P->tok.span, "expected '%s'", lex_token_name(k));
}

/* After an item of a bracketed list, something that is neither ',' nor
 * the closing bracket: Python's guess is a missing comma. */
static _Noreturn void assign_in_expression(Parser *P, const Ast *e);
static Ast *expr(Parser *P);

/* The last item of a bare tuple (a, b), or e itself: what a missing
 * comma after it follows */
static const Ast *last_item(const Ast *e) {
  return e->kind == AST_TUPLE && !e->parenthesised && e->seq.nitems ? e->seq.items[e->seq.nitems - 1] : e;
}

static void after_item(Parser *P, const Ast *item, TokKind close) {
  if (at(P, TK_COMMA) || at(P, close)) return;
  if (at(P, TK_ASSIGN)) assign_in_expression(P, item);
  TokKind t = P->tok.kind;
  if (!(t == TK_NAME || t == TK_INT || t == TK_FLOAT || t == TK_STR || t == TK_FSTR || t == TK_NONE ||
        t == TK_TRUE || t == TK_FALSE || t == TK_LBRACE || t == TK_NOT || t == TK_LAMBDA || t == TK_ELLIPSIS))
    return;
  /* Python's guess spans from the last `or`-level expression of the item
   * (the else part of a conditional, a lambda's body, a slice's last bound)
   * to the end of the expression after it; `name "string"` is not a guess */
  for (;;) {
    if (item->kind == AST_IFEXP && !item->parenthesised) item = item->ifexp.orelse;
    else if (item->kind == AST_LAMBDA && !item->parenthesised) item = item->lambda.body;
    else if (item->kind == AST_SLICE && (item->slice.step || item->slice.stop || item->slice.start))
      item = item->slice.step ? item->slice.step : item->slice.stop ? item->slice.stop : item->slice.start;
    else break;
  }
  if (item->kind == AST_NAME && !item->parenthesised && (t == TK_STR || t == TK_FSTR)) return;
  Span range = item->span;
  P->guessing = true;
  expr(P);
  if (P->prev_end.line == range.line && P->prev_end.col > range.col) range.len = P->prev_end.col - range.col;
  error_at(P, range, "invalid syntax. Perhaps you forgot a comma?");
}

/* ---- nodes ---- */

static void enter(Parser *P) {
  char *here = __builtin_frame_address(0);
  if (++P->depth > MAX_DEPTH || (P->vm->stack_limit && here < P->vm->stack_limit))
    error_at(P, P->tok.span, "expression too deeply nested");
}

static void leave(Parser *P) { P->depth--; }

static Ast *mk(Parser *P, AstKind k, Span span) {
  Ast *a = ast_new(k, span);
  a->height = 1;
  return a;
}

/* a's height covers child's. */
static void grow(Parser *P, Ast *a, const Ast *child) {
  if (!child || child->height < a->height) return;
  a->height = child->height + 1;
  if (a->height > PARSE_MAX_HEIGHT) {
    if (ast_is_stmt(child->kind)) error_at(P, a->span, "too many statically nested blocks");
    error_at(P, a->span, "expression too deeply nested");
  }
}

static void grow_all(Parser *P, Ast *a, Ast *const *items, int n) {
  for (int i = 0; i < n; i++) grow(P, a, items[i]);
}

/* Stretch a's span to the end of the last token consumed, when that is
 * on the same line. */
static Ast *finish(Parser *P, Ast *a) {
  if (P->prev_end.line == a->span.line && P->prev_end.col > a->span.col) a->span.len = P->prev_end.col - a->span.col;
  return a;
}

static Span span_from(Span start) {
  start.len = start.len > 0 ? start.len : 1;
  return start;
}

/* ---- expressions ---- */

static Ast *expr(Parser *P);
static Ast *exprlist(Parser *P);
static Ast *disjunction(Parser *P);
static Ast *bitor(Parser *P);
static Ast *factor(Parser *P);
static Ast *subscript(Parser *P);
static Ast *comprehension(Parser *P, AstKind kind, Span start, Ast *key, Ast *elt);

static bool starts_expr(TokKind k) {
  switch (k) {
  case TK_NAME: case TK_INT: case TK_FLOAT: case TK_STR: case TK_FSTR: case TK_LPAREN: case TK_LBRACKET:
  case TK_LBRACE: case TK_MINUS: case TK_PLUS: case TK_TILDE: case TK_NOT: case TK_LAMBDA: case TK_NONE: case TK_ELLIPSIS:
  case TK_TRUE: case TK_FALSE: case TK_STAR: case TK_DSTAR:
    return true;
  default: return false;
  }
}

/* params -> param { ',' param } [',']     param -> NAME ['=' expr]
 * (ended by ')' for def, ':' for lambda) */
static void params(Parser *P, TokKind close, bool is_def, AstParam **out, int *nout) {
  AstParam *ps = NULL;
  int n = 0, cap = 0;
  bool seen_default = false;
  while (!at(P, close)) {
    if (at(P, TK_STAR) || at(P, TK_DSTAR))
      error_at(P, P->tok.span, "'*' and '**' parameters are not supported in Mist");
    if (!at(P, TK_NAME)) unexpected(P);
    AstParam p;
    p.name = P->tok.str;
    p.span = P->tok.span;
    p.def = NULL;
    for (int i = 0; i < n; i++)
      if (ps[i].name == p.name)
        error_at(P, p.span, "duplicate argument '%s' in function definition", p.name->data);
    advance(P);
    if (is_def && at(P, TK_COLON)) error_at(P, P->tok.span, "parameter annotations are not supported in Mist");
    if (accept(P, TK_ASSIGN)) {
      p.def = expr(P);
      seen_default = true;
    } else if (seen_default) {
      error_at(P, p.span, "non-default argument follows default argument");
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 4;
      AstParam *np = lang_alloc((size_t)cap * sizeof *np);
      if (n) memcpy(np, ps, (size_t)n * sizeof *np);
      ps = np;
    }
    ps[n++] = p;
    if (!accept(P, TK_COMMA)) break;
  }
  *out = ps;
  *nout = n;
}

/* lambdef -> 'lambda' [params] ':' expr */
static Ast *lambdef(Parser *P) {
  Ast *a = mk(P, AST_LAMBDA, P->tok.span);
  advance(P);
  params(P, TK_COLON, false, &a->lambda.params, &a->lambda.nparams);
  if (!accept(P, TK_COLON)) unexpected(P);
  a->lambda.body = expr(P);
  grow(P, a, a->lambda.body);
  for (int i = 0; i < a->lambda.nparams; i++) grow(P, a, a->lambda.params[i].def);
  return finish(P, a);
}

/* expr -> lambdef | disjunction ['if' disjunction 'else' expr] */
static Ast *expr(Parser *P) {
  enter(P);
  Ast *e;
  if (at(P, TK_LAMBDA)) {
    e = lambdef(P);
  } else {
    Span start = P->tok.span;
    e = disjunction(P);
    if (at(P, TK_IF)) {
      Ast *a = mk(P, AST_IFEXP, start);
      a->ifexp.then = e;
      advance(P);
      a->ifexp.cond = disjunction(P);
      if (!accept(P, TK_ELSE)) {
        finish(P, a);
        error_at(P, a->span, "expected 'else' after 'if' expression");
      }
      a->ifexp.orelse = expr(P);
      grow(P, a, a->ifexp.cond);
      grow(P, a, a->ifexp.then);
      grow(P, a, a->ifexp.orelse);
      e = finish(P, a);
    }
  }
  leave(P);
  return e;
}

/* Collect items separated by commas into a TUPLE (when a comma appears)
 * or return the one item.  item parses one element. */
static Ast *tuple_of(Parser *P, Ast *(*item)(Parser *), Span start) {
  Ast *first = item(P);
  if (!at(P, TK_COMMA)) return first;
  Ast *t = mk(P, AST_TUPLE, start);
  int cap = 0;
  ast_push(&t->seq.items, &t->seq.nitems, &cap, first);
  while (accept(P, TK_COMMA)) {
    if (!starts_expr(P->tok.kind) && !(item == subscript && at(P, TK_COLON))) break;
    ast_push(&t->seq.items, &t->seq.nitems, &cap, item(P));
  }
  grow_all(P, t, t->seq.items, t->seq.nitems);
  return finish(P, t);
}

/* exprlist -> expr { ',' expr } [','] */
static Ast *exprlist(Parser *P) { return tuple_of(P, expr, P->tok.span); }

/* disjunction -> conjunction { 'or' conjunction } */
/* conjunction -> inversion { 'and' inversion } */
static Ast *inversion(Parser *P);

static Ast *conjunction(Parser *P) {
  Span start = P->tok.span;
  Ast *e = inversion(P);
  while (at(P, TK_AND)) {
    advance(P);
    Ast *a = mk(P, AST_BOOLOP, start);
    a->boolop.op = BOOL_AND;
    a->boolop.left = e;
    a->boolop.right = inversion(P);
    grow(P, a, a->boolop.left);
    grow(P, a, a->boolop.right);
    e = finish(P, a);
  }
  return e;
}

static Ast *disjunction(Parser *P) {
  Span start = P->tok.span;
  Ast *e = conjunction(P);
  while (at(P, TK_OR)) {
    advance(P);
    Ast *a = mk(P, AST_BOOLOP, start);
    a->boolop.op = BOOL_OR;
    a->boolop.left = e;
    a->boolop.right = conjunction(P);
    grow(P, a, a->boolop.left);
    grow(P, a, a->boolop.right);
    e = finish(P, a);
  }
  return e;
}

/* inversion -> 'not' inversion | comparison
 * comparison -> bitor { compop bitor }
 * compop -> '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not' 'in' | 'is' | 'is' 'not' */
static Ast *inversion(Parser *P) {
  if (at(P, TK_NOT)) {
    enter(P);
    Ast *a = mk(P, AST_UNARY, P->tok.span);
    advance(P);
    a->unary.op = UN_NOT;
    a->unary.operand = inversion(P);
    grow(P, a, a->unary.operand);
    leave(P);
    return finish(P, a);
  }
  Span start = P->tok.span;
  Ast *first = bitor(P);
  Ast **opnds = NULL;
  CmpKind *ops = NULL;
  int nopnds = 0, capopnds = 0, nops = 0, capops = 0;
  for (;;) {
    CmpKind op;
    switch (P->tok.kind) {
    case TK_EQ: op = CMPK_EQ; break;
    case TK_NE: op = CMPK_NE; break;
    case TK_LT: op = CMPK_LT; break;
    case TK_LE: op = CMPK_LE; break;
    case TK_GT: op = CMPK_GT; break;
    case TK_GE: op = CMPK_GE; break;
    case TK_IN: op = CMPK_IN; break;
    case TK_IS: op = peek(P, 1)->kind == TK_NOT ? CMPK_IS_NOT : CMPK_IS; break;
    case TK_NOT:
      if (peek(P, 1)->kind != TK_IN) goto done;
      op = CMPK_NOT_IN;
      break;
    default: goto done;
    }
    advance(P);
    if (op == CMPK_IS_NOT || op == CMPK_NOT_IN) advance(P);
    if (nops == capops) {
      capops = capops ? capops * 2 : 2;
      CmpKind *nk = lang_alloc_atomic((size_t)capops * sizeof *nk);
      if (nops) memcpy(nk, ops, (size_t)nops * sizeof *nk);
      ops = nk;
    }
    ops[nops++] = op;
    if (nopnds == 0) ast_push(&opnds, &nopnds, &capopnds, first);
    ast_push(&opnds, &nopnds, &capopnds, bitor(P));
  }
done:
  if (nops == 0) return first;
  Ast *a = mk(P, AST_COMPARE, start);
  a->cmp.operands = opnds;
  a->cmp.ops = ops;
  a->cmp.nops = nops;
  grow_all(P, a, opnds, nopnds);
  return finish(P, a);
}

/* bitor -> arith     (| ^ & << >> are not supported: an error where they appear) */
static Ast *arith(Parser *P);

static Ast *bitor(Parser *P) {
  Ast *e = arith(P);
  switch (P->tok.kind) {
  case TK_PIPE: case TK_CARET: case TK_AMP: case TK_LSHIFT: case TK_RSHIFT: unexpected(P);
  default: return e;
  }
}

static Ast *binop(Parser *P, Span start, ArithOp op, Ast *l, Ast *r) {
  Ast *a = mk(P, AST_BINOP, start);
  a->binop.op = op;
  a->binop.left = l;
  a->binop.right = r;
  /* A chain a + b + c ... grows on the left, one level an operator: it
   * stops short of the height limit, leaving room for the statement and
   * brackets around it, so a long chain is reported as too long. */
  if (l->height > MAX_CHAIN && l->kind == AST_BINOP)
    error_at(P, start, "expression too long: more than %d operators in a row", MAX_CHAIN);
  grow(P, a, l);
  grow(P, a, r);
  return finish(P, a);
}

/* arith -> term { ('+' | '-') term } */
static Ast *term(Parser *P);

static Ast *arith(Parser *P) {
  Span start = P->tok.span;
  Ast *e = term(P);
  for (;;) {
    ArithOp op;
    if (at(P, TK_PLUS)) op = OP_ADD;
    else if (at(P, TK_MINUS)) op = OP_SUB;
    else return e;
    advance(P);
    e = binop(P, start, op, e, term(P));
  }
}

/* term -> factor { ('*' | '/' | '//' | '%' | '@') factor } */
static Ast *term(Parser *P) {
  Span start = P->tok.span;
  Ast *e = factor(P);
  for (;;) {
    ArithOp op;
    switch (P->tok.kind) {
    case TK_STAR: op = OP_MUL; break;
    case TK_SLASH: op = OP_TRUEDIV; break;
    case TK_DSLASH: op = OP_FLOORDIV; break;
    case TK_PERCENT: op = OP_MOD; break;
    case TK_AT: op = OP_MATMUL; break;
    default: return e;
    }
    advance(P);
    e = binop(P, start, op, e, factor(P));
  }
}

static Ast *power(Parser *P);

/* factor -> ('+' | '-') factor | power      ('~' is not supported) */
static Ast *factor(Parser *P) {
  if (at(P, TK_TILDE)) unexpected(P);
  if (!at(P, TK_MINUS) && !at(P, TK_PLUS)) return power(P);
  enter(P);
  Span start = P->tok.span;
  bool neg = at(P, TK_MINUS);
  /* -9223372036854775808 is the one literal beyond INT64_MAX that fits */
  if (neg) {
    const Token *n = peek(P, 1);
    if (n->kind == TK_INT && n->uval == (uint64_t)INT64_MAX + 1) {
      TokKind after = peek(P, 2)->kind;
      if (after != TK_DSTAR && after != TK_LPAREN && after != TK_LBRACKET && after != TK_DOT) {
        advance(P);
        advance(P);
        Ast *a = mk(P, AST_INT, start);
        a->ival = INT64_MIN;
        leave(P);
        return finish(P, a);
      }
    }
  }
  advance(P);
  Ast *a = mk(P, AST_UNARY, start);
  a->unary.op = neg ? UN_NEG : UN_POS;
  a->unary.operand = factor(P);
  grow(P, a, a->unary.operand);
  leave(P);
  return finish(P, a);
}

static Ast *primary(Parser *P);

/* power -> primary ['**' factor] */
static Ast *power(Parser *P) {
  Span start = P->tok.span;
  Ast *e = primary(P);
  if (!at(P, TK_DSTAR)) return e;
  advance(P);
  enter(P);
  Ast *r = factor(P);
  leave(P);
  return binop(P, start, OP_POW, e, r);
}

/* subscript -> expr | [expr] ':' [expr] [':' [expr]] */
static Ast *subscript(Parser *P) {
  Span start = P->tok.span;
  Ast *lo = NULL;
  if (!at(P, TK_COLON)) {
    lo = expr(P);
    if (!at(P, TK_COLON)) return lo;
  }
  Ast *a = mk(P, AST_SLICE, start);
  a->slice.start = lo;
  advance(P);   /* ':' */
  if (!at(P, TK_COLON) && !at(P, TK_COMMA) && !at(P, TK_RBRACKET)) a->slice.stop = expr(P);
  if (accept(P, TK_COLON))
    if (!at(P, TK_COMMA) && !at(P, TK_RBRACKET)) a->slice.step = expr(P);
  grow(P, a, a->slice.start);
  grow(P, a, a->slice.stop);
  grow(P, a, a->slice.step);
  return finish(P, a);
}

/* call_args -> genexp_arg | arg { ',' arg } [',']      arg -> NAME '=' expr | expr
 * genexp_arg -> expr comprehension     (the sole argument; lparen is the call's '(') */
static const char *target_kind(const Ast *t);

static void call_args(Parser *P, Ast *call, Span lparen) {
  int capa = 0, capk = 0;
  Ast *genexp = NULL;
  while (!at(P, TK_RPAREN)) {
    if (at(P, TK_STAR) || at(P, TK_DSTAR))
      error_at(P, P->tok.span, "'*' and '**' arguments are not supported in Mist");
    if (at(P, TK_NAME) && peek(P, 1)->kind == TK_ASSIGN) {
      Token name = P->tok;
      for (int i = 0; i < call->call.nkw; i++)
        if (call->call.kwnames[i] == name.str)
          error_at(P, name.span, "keyword argument repeated: %s", name.str->data);
      advance(P);
      advance(P);
      Ast *v = expr(P);
      if (at(P, TK_FOR)) error_at(P, name.span, "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
      if (at(P, TK_ASSIGN)) unexpected(P);   /* f(a = 1 = 2) */
      after_item(P, v, TK_RPAREN);
      if (call->call.nkw == capk) {
        int nc = capk ? capk * 2 : 4;
        ObjStr **nn = lang_alloc((size_t)nc * sizeof *nn);
        if (capk) memcpy(nn, call->call.kwnames, (size_t)call->call.nkw * sizeof *nn);
        call->call.kwnames = nn;
      }
      int nkw = call->call.nkw;
      ast_push(&call->call.kwvalues, &nkw, &capk, v);
      call->call.kwnames[call->call.nkw++] = name.str;
    } else {
      Ast *v = expr(P);
      if (at(P, TK_ASSIGN)) {   /* Python's carets run from the expression to its '=' */
        Span start = v->span, eq = P->tok.span;
        if (eq.line == start.line && eq.col + eq.len > start.col) start.len = eq.col + eq.len - start.col;
        if ((v->kind == AST_TRUE || v->kind == AST_FALSE || v->kind == AST_NONE) && !v->parenthesised)
          error_at(P, start, "cannot assign to %s", target_kind(v));
        error_at(P, span_from(start), "expression cannot contain assignment, perhaps you meant \"==\"?");
      }
      if (at(P, TK_FOR)) {
        /* Python allows an unparenthesised generator expression only
         * as the sole argument */
        if (call->call.nargs > 0 || call->call.nkw > 0)
          error_at(P, v->span, "Generator expression must be parenthesized");
        genexp = comprehension(P, AST_GENEXP, lparen, NULL, v);
        if (at(P, TK_COMMA)) error_at(P, v->span, "Generator expression must be parenthesized");
        if (!at(P, TK_RPAREN)) unexpected(P);
        ast_push(&call->call.args, &call->call.nargs, &capa, genexp);
        break;
      }
      if (call->call.nkw > 0) error_at(P, v->span, "positional argument follows keyword argument");
      ast_push(&call->call.args, &call->call.nargs, &capa, v);
      after_item(P, v, TK_RPAREN);
    }
    if (!accept(P, TK_COMMA)) break;
  }
  expect(P, TK_RPAREN);
  if (genexp) finish(P, genexp);
  grow_all(P, call, call->call.args, call->call.nargs);
  grow_all(P, call, call->call.kwvalues, call->call.nkw);
}

static Ast *atom(Parser *P);

/* primary -> atom { '.' NAME | '(' [call_args] ')' | '[' subscripts ']' }
 * subscripts -> subscript { ',' subscript } [','] */
static Ast *primary(Parser *P) {
  Span start = P->tok.span;
  Ast *e = atom(P);
  for (;;) {
    Ast *a;
    if (at(P, TK_DOT)) {
      advance(P);
      if (!at(P, TK_NAME)) unexpected(P);
      a = mk(P, AST_ATTRIBUTE, start);
      a->attr.obj = e;
      a->attr.name = P->tok.str;
      a->attr.name_span = P->tok.span;
      advance(P);
      grow(P, a, e);
    } else if (at(P, TK_LPAREN)) {
      Span lparen = P->tok.span;
      advance(P);
      a = mk(P, AST_CALL, start);
      a->call.func = e;
      grow(P, a, e);
      call_args(P, a, lparen);
    } else if (at(P, TK_LBRACKET)) {
      advance(P);
      if (at(P, TK_RBRACKET)) unexpected(P);
      a = mk(P, AST_SUBSCRIPT, start);
      a->sub.obj = e;
      a->sub.index = tuple_of(P, subscript, P->tok.span);
      after_item(P, last_item(a->sub.index), TK_RBRACKET);
      expect(P, TK_RBRACKET);
      grow(P, a, e);
      grow(P, a, a->sub.index);
    } else {
      return e;
    }
    e = finish(P, a);
  }
}

/* ---- strings ---- */

static void fstring_body(Parser *P, Ast *fs, int *cap, StrBuf *lit, Span *litspan, LexPos p, size_t end,
                         bool raw, bool spec, int nest, LexPos *stop);

static void flush_literal(Parser *P, Ast *fs, int *cap, StrBuf *lit, Span *litspan) {
  if (lit->len == 0) {
    litspan->line = 0;
    return;
  }
  Ast *s = mk(P, AST_STR, *litspan);
  s->str = lang_str_new(lit->data, lit->len);
  ast_push(&fs->fstr.parts, &fs->fstr.nparts, cap, s);
  grow(P, fs, s);
  sb_init(lit);
  litspan->line = 0;
}

/* Decode src[from..to) into the pending literal. */
static void add_literal(Parser *P, StrBuf *lit, Span *litspan, LexPos from, size_t to, bool raw) {
  if (from.pos >= to) return;
  if (!litspan->line) *litspan = lex_span(P->lx, from, 1);
  if (!lex_decode(P->lx, from, to, raw, lit)) longjmp(P->fail, 1);
}

/* The parsed expression of src[start.pos..end), with a lexer of its own. */
static Ast *fstring_expr(Parser *P, LexPos start, size_t end) {
  Lexer sub;
  lex_init_sub(&sub, P->vm, P->file, P->lx->src, start, end);
  Lexer *olx = P->lx;
  Token otok = P->tok, oahead[2] = {P->ahead[0], P->ahead[1]};
  int onahead = P->nahead;
  LexPos oprev = P->prev_end;
  P->lx = &sub;
  P->nahead = 0;
  P->tok = fetch(P);
  P->fdepth++;
  Ast *e = exprlist(P);
  if (!at(P, TK_EOF)) unexpected(P);
  P->fdepth--;
  P->lx = olx;
  P->tok = otok;
  P->ahead[0] = oahead[0];
  P->ahead[1] = oahead[1];
  P->nahead = onahead;
  P->prev_end = oprev;
  return e;
}

/* replacement_field -> '{' exprlist ['='] ['!' ('r' | 's')] [':' format_spec] '}'
 * format_spec -> { literal | replacement_field }
 * p is at the '{'; returns the FORMATTED node, *after is just past '}'.
 * A field ending in '=' (`{x=}`) also adds its own text to the literal. */
static Ast *replacement_field(Parser *P, Ast *fs, int *cap, StrBuf *lit, Span *litspan, LexPos p, size_t end,
                              bool raw, int nest, LexPos *after) {
  const Lexer *L = P->lx;
  const char *s = L->src;
  LexPos open = p;
  lex_advance(L, &p);
  LexPos estart = p;
  int depth = 0;
  bool only_space = true;
  for (;;) {
    if (p.pos >= end) error_at(P, lex_span(L, open, 1), "f-string: expecting '}'");
    char c = s[p.pos];
    if (c == '\\') error_at(P, lex_span(L, p, 1), "f-string expression part cannot include a backslash");
    if (c == '#') error_at(P, lex_span(L, p, 1), "f-string expression part cannot include '#'");
    if (depth == 0 && (c == '}' || c == ':' || (c == '!' && !(p.pos + 1 < end && s[p.pos + 1] == '='))))
      break;
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') only_space = false;
    if (c == '(' || c == '[' || c == '{') depth++;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
    else if (c == '\'' || c == '"') {     /* a string inside the expression */
      LexPos q = p;
      lex_advance(L, &q);
      while (q.pos < end && s[q.pos] != c) {
        if (s[q.pos] == '\\')
          error_at(P, lex_span(L, q, 1), "f-string expression part cannot include a backslash");
        lex_advance(L, &q);
      }
      if (q.pos >= end) error_at(P, lex_span(L, open, 1), "f-string: expecting '}'");
      p = q;
    }
    lex_advance(L, &p);
  }
  if (only_space) error_at(P, lex_span(L, p, 1), "f-string: empty expression not allowed");
  /* `{x=}`: a trailing '=' that is not part of ==, !=, <=, >= */
  size_t eend = p.pos;
  size_t k = eend;
  while (k > estart.pos && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
  bool debug = k > estart.pos && s[k - 1] == '=' &&
               !(k - 1 > estart.pos && strchr("=!<>", s[k - 2]));
  if (debug) eend = k - 1;
  Ast *value = fstring_expr(P, estart, eend);
  if (debug) {
    if (!litspan->line) *litspan = lex_span(L, estart, 1);
    sb_add(lit, s + estart.pos, p.pos - estart.pos);
  }
  flush_literal(P, fs, cap, lit, litspan);

  Ast *f = mk(P, AST_FORMATTED, lex_span(L, open, 1));
  f->fmt.value = value;
  grow(P, f, value);
  if (s[p.pos] == '!') {
    lex_advance(L, &p);
    char conv = p.pos < end ? s[p.pos] : 0;
    if (conv != 'r' && conv != 's') {
      if (p.pos >= end || s[p.pos] == '}' || s[p.pos] == ':')
        error_at(P, lex_span(L, p, 1), "f-string: missing conversion character");
      error_at(P, lex_span(L, p, 1), "f-string: invalid conversion character: expected 's' or 'r'");
    }
    f->fmt.conv = conv;
    lex_advance(L, &p);
    if (p.pos >= end || (s[p.pos] != '}' && s[p.pos] != ':'))
      error_at(P, lex_span(L, open, 1), "f-string: expecting '}'");
  } else if (debug && s[p.pos] != ':') {
    f->fmt.conv = 'r';
  }
  if (s[p.pos] == ':') {
    lex_advance(L, &p);
    if (nest >= 1) {
      /* a spec inside a spec: Python allows one level */
      for (size_t i = p.pos; i < end && s[i] != '}'; i++)
        if (s[i] == '{') error_at(P, lex_span(L, open, 1), "f-string: expressions nested too deeply");
    }
    Ast *specnode = mk(P, AST_FSTRING, lex_span(L, p, 1));
    int scap = 0;
    StrBuf slit;
    sb_init(&slit);
    Span sspan = {0, 0, 0, 0};
    fstring_body(P, specnode, &scap, &slit, &sspan, p, end, raw, true, nest + 1, &p);
    flush_literal(P, specnode, &scap, &slit, &sspan);
    f->fmt.spec = specnode->fstr.parts;
    f->fmt.nspec = specnode->fstr.nparts;
    grow(P, f, specnode);
  }
  if (p.pos >= end || s[p.pos] != '}') error_at(P, lex_span(L, open, 1), "f-string: expecting '}'");
  lex_advance(L, &p);
  f->span.len = p.line == open.line ? p.col - open.col : 1;
  *after = p;
  return f;
}

/* fstring_body -> { literal | '{{' | '}}' | replacement_field }
 * In a format spec (spec), a lone '}' ends the body; *stop is left there. */
static void fstring_body(Parser *P, Ast *fs, int *cap, StrBuf *lit, Span *litspan, LexPos p, size_t end,
                         bool raw, bool spec, int nest, LexPos *stop) {
  const Lexer *L = P->lx;
  const char *s = L->src;
  LexPos seg = p;
  while (p.pos < end) {
    char c = s[p.pos];
    char d = p.pos + 1 < end ? s[p.pos + 1] : 0;
    if (c == '\\') {
      lex_advance(L, &p);
      if (d != '{' && d != '}' && p.pos < end) lex_advance(L, &p);
    } else if (c == '{' && d == '{' && !spec) {
      lex_advance(L, &p);
      add_literal(P, lit, litspan, seg, p.pos, raw);
      lex_advance(L, &p);
      seg = p;
    } else if (c == '{') {
      add_literal(P, lit, litspan, seg, p.pos, raw);
      Ast *f = replacement_field(P, fs, cap, lit, litspan, p, end, raw, nest, &p);
      ast_push(&fs->fstr.parts, &fs->fstr.nparts, cap, f);
      grow(P, fs, f);
      seg = p;
    } else if (c == '}' && spec) {
      break;
    } else if (c == '}' && d == '}') {
      lex_advance(L, &p);
      add_literal(P, lit, litspan, seg, p.pos, raw);
      lex_advance(L, &p);
      seg = p;
    } else if (c == '}') {
      error_at(P, lex_span(L, p, 1), "f-string: single '}' is not allowed");
    } else {
      lex_advance(L, &p);
    }
  }
  add_literal(P, lit, litspan, seg, p.pos < end ? p.pos : end, raw);
  if (stop) *stop = p;
}

/* strings -> (STR | FSTR)+
 * Adjacent literals are joined; if any is an f-string the whole is one
 * FSTRING, else one STR. */
static Ast *strings(Parser *P) {
  Span start = P->tok.span;
  Ast *fs = NULL;
  int cap = 0;
  StrBuf lit;
  sb_init(&lit);
  Span litspan = {0, 0, 0, 0};
  while (at(P, TK_STR) || at(P, TK_FSTR)) {
    if (at(P, TK_STR)) {
      if (P->tok.str->len && !litspan.line) litspan = P->tok.span;
      sb_add(&lit, P->tok.str->data, P->tok.str->len);
    } else {
      if (!fs) fs = mk(P, AST_FSTRING, start);
      fstring_body(P, fs, &cap, &lit, &litspan, P->tok.body, P->tok.body_end, P->tok.raw, false, 0, NULL);
    }
    advance(P);
  }
  if (!fs) {
    Ast *a = mk(P, AST_STR, start);
    a->str = lang_str_new(lit.data, lit.len);
    return finish(P, a);
  }
  flush_literal(P, fs, &cap, &lit, &litspan);
  return finish(P, fs);
}

/* ---- atoms ---- */

/* The closing bracket of a comprehension: nothing else may come before it. */
static void comp_close(Parser *P, TokKind close) {
  if (!accept(P, close)) unexpected(P);
}

/* list_items -> [expr { ',' expr } [',']]   (up to the closing bracket)
 *             | expr comprehension         (in a list display, as its only item)
 * Returns seq finished, or the LISTCOMP that replaces it. */
static Ast *items_until(Parser *P, Ast *seq, TokKind close, int *cap) {
  while (!at(P, close)) {
    Ast *e = expr(P);
    if (at(P, TK_FOR)) {
      if (close != TK_RBRACKET) unexpected(P);
      if (seq->seq.nitems > 0)
        error_at(P, seq->seq.items[0]->span, "did you forget parentheses around the comprehension target?");
      Ast *c = comprehension(P, AST_LISTCOMP, seq->span, NULL, e);
      comp_close(P, close);
      return finish(P, c);
    }
    ast_push(&seq->seq.items, &seq->seq.nitems, cap, e);
    after_item(P, e, close);
    if (!accept(P, TK_COMMA)) break;
  }
  expect(P, close);
  grow_all(P, seq, seq->seq.items, seq->seq.nitems);
  return finish(P, seq);
}

static void check_target(Parser *P, const Ast *t);

/* A comprehension's variables are names, or tuples and lists of them:
 * it has no statement after which a subscript or attribute assigned in
 * it could be seen. */
static void check_comp_target(Parser *P, const Ast *t) {
  if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
    for (int i = 0; i < t->seq.nitems; i++) check_comp_target(P, t->seq.items[i]);
  } else if (t->kind != AST_NAME) {
    error_at(P, t->span, "subscript and attribute targets in comprehensions are not supported in Mist");
  }
}

/* comprehension -> for_if_clause { for_if_clause }
 * for_if_clause -> 'for' targets 'in' disjunction { 'if' disjunction }
 * elt (and a dict's key) are parsed already; the current token is the
 * first 'for'.  Lowering nests a graph for each clause and each filter,
 * so those count toward the node's height too. */
static Ast *comprehension(Parser *P, AstKind kind, Span start, Ast *key, Ast *elt) {
  enter(P);
  Ast *a = mk(P, kind, start);
  a->comp.key = key;
  a->comp.elt = elt;
  grow(P, a, key);
  grow(P, a, elt);
  int cap = 0, levels = 0;
  while (accept(P, TK_FOR)) {
    AstCompFor c = {0};
    c.target = tuple_of(P, bitor, P->tok.span);
    if (!at(P, TK_IN))
      after_item(P, last_item(c.target), TK_IN);
    check_target(P, c.target);
    check_comp_target(P, c.target);
    expect(P, TK_IN);
    c.iter = disjunction(P);
    int capi = 0;
    while (accept(P, TK_IF)) ast_push(&c.ifs, &c.nifs, &capi, disjunction(P));
    grow(P, a, c.target);
    grow(P, a, c.iter);
    grow_all(P, a, c.ifs, c.nifs);
    levels += 1 + c.nifs;
    if (a->comp.nfors == cap) {
      cap = cap ? cap * 2 : 2;
      AstCompFor *nf = lang_alloc((size_t)cap * sizeof *nf);
      if (a->comp.nfors) memcpy(nf, a->comp.fors, (size_t)a->comp.nfors * sizeof *nf);
      a->comp.fors = nf;
    }
    a->comp.fors[a->comp.nfors++] = c;
  }
  if (levels > PARSE_MAX_HEIGHT - a->height) error_at(P, a->span, "expression too deeply nested");
  a->height += levels;
  leave(P);
  return finish(P, a);
}

/* atom -> NAME | INT | FLOAT | strings | 'None' | 'True' | 'False'
 *       | '(' [exprlist] ')' | '(' expr comprehension ')'
 *       | '[' [list_items] ']' | '{' [dict_items] '}'
 * dict_items -> expr ':' expr { ',' expr ':' expr } [',']
 *             | expr ':' expr comprehension
 * ('{' expr comprehension '}', a set comprehension, is refused.) */
static Ast *atom(Parser *P) {
  Token t = P->tok;
  Ast *a;
  switch (t.kind) {
  case TK_NAME:
    a = mk(P, AST_NAME, t.span);
    a->name = t.str;
    advance(P);
    return a;
  case TK_INT:
    if (t.uval > (uint64_t)INT64_MAX) error_at(P, t.span, "integer literal too large");
    a = mk(P, AST_INT, t.span);
    a->ival = (int64_t)t.uval;
    advance(P);
    return a;
  case TK_FLOAT:
    a = mk(P, AST_FLOAT, t.span);
    a->fval = t.fval;
    advance(P);
    return a;
  case TK_STR: case TK_FSTR: return strings(P);
  case TK_NONE: a = mk(P, AST_NONE, t.span); advance(P); return a;
  case TK_TRUE: a = mk(P, AST_TRUE, t.span); advance(P); return a;
  case TK_ELLIPSIS: a = mk(P, AST_ELLIPSIS, t.span); advance(P); return a;
  case TK_FALSE: a = mk(P, AST_FALSE, t.span); advance(P); return a;
  case TK_LPAREN: {
    advance(P);
    if (accept(P, TK_RPAREN)) return finish(P, mk(P, AST_TUPLE, t.span));
    Ast *e = expr(P);
    if (at(P, TK_ASSIGN)) assign_in_expression(P, e);
    if (at(P, TK_FOR)) {
      a = comprehension(P, AST_GENEXP, t.span, NULL, e);
      comp_close(P, TK_RPAREN);
      return finish(P, a);
    }
    if (at(P, TK_COMMA)) {
      a = mk(P, AST_TUPLE, t.span);
      int cap = 0;
      ast_push(&a->seq.items, &a->seq.nitems, &cap, e);
      advance(P);
      e = items_until(P, a, TK_RPAREN, &cap);
    } else {
      after_item(P, e, TK_RPAREN);
      expect(P, TK_RPAREN);
    }
    e->parenthesised = true;
    return e;
  }
  case TK_LBRACKET: {
    advance(P);
    a = mk(P, AST_LIST, t.span);
    int cap = 0;
    return items_until(P, a, TK_RBRACKET, &cap);
  }
  case TK_LBRACE: {
    advance(P);
    a = mk(P, AST_DICT, t.span);
    int capk = 0, capv = 0;
    while (!at(P, TK_RBRACE)) {
      if (at(P, TK_DSTAR)) error_at(P, P->tok.span, "'**' in dict displays is not supported in Mist");
      Ast *k = expr(P);
      if (a->dict.nitems == 0 && at(P, TK_ASSIGN)) assign_in_expression(P, k);
      if (!at(P, TK_COLON)) {
        if (a->dict.nitems == 0 && (at(P, TK_COMMA) || at(P, TK_RBRACE) || at(P, TK_FOR)))
          error_at(P, t.span, "sets are not supported in Mist");
        if (a->dict.nitems == 0) {   /* {1 2}, {"a" 1}: a set, to Python */
          after_item(P, k, TK_RBRACE);
          unexpected(P);
        }
        Span last = k->span;   /* Python points at the key's last character */
        if (last.len > 1) last.col += last.len - 1, last.len = 1;
        error_at(P, span_from(last), "':' expected after dictionary key");
        unexpected(P);
      }
      advance(P);
      Ast *v = expr(P);
      if (at(P, TK_FOR)) {
        if (a->dict.nitems > 0) unexpected(P);
        Ast *c = comprehension(P, AST_DICTCOMP, t.span, k, v);
        comp_close(P, TK_RBRACE);
        return finish(P, c);
      }
      int n = a->dict.nitems;
      ast_push(&a->dict.keys, &n, &capk, k);
      ast_push(&a->dict.values, &a->dict.nitems, &capv, v);
      grow(P, a, k);
      grow(P, a, v);
      after_item(P, v, TK_RBRACE);
      if (!accept(P, TK_COMMA)) break;
    }
    expect(P, TK_RBRACE);
    return finish(P, a);
  }
  case TK_STAR: case TK_DSTAR:
    error_at(P, t.span, "starred expressions are not supported in Mist");
  default: unexpected(P);
  }
}

/* ---- targets ---- */

static const char *target_kind(const Ast *t) {
  switch (t->kind) {
  case AST_NAME: return "name";
  case AST_INT: case AST_FLOAT: case AST_STR: return "literal";
  case AST_FSTRING: return "f-string expression";
  case AST_NONE: return "None";
  case AST_TRUE: return "True";
  case AST_ELLIPSIS: return "ellipsis";
  case AST_FALSE: return "False";
  case AST_CALL: return "function call";
  case AST_COMPARE: return "comparison";
  case AST_IFEXP: return "conditional expression";
  case AST_LAMBDA: return "lambda";
  case AST_DICT: return "dict literal";
  case AST_TUPLE: return "tuple";
  case AST_LIST: return "list";
  case AST_LISTCOMP: return "list comprehension";
  case AST_DICTCOMP: return "dict comprehension";
  case AST_GENEXP: return "generator expression";
  default: return "expression";
  }
}

static bool valid_target(const Ast *t) {
  switch (t->kind) {
  case AST_NAME: case AST_SUBSCRIPT: case AST_ATTRIBUTE: return true;
  case AST_TUPLE: case AST_LIST:
    for (int i = 0; i < t->seq.nitems; i++)
      if (!valid_target(t->seq.items[i])) return false;
    return true;
  default: return false;
  }
}

/* target -> NAME | target_attr | target_subscript | '(' targets ')' | '[' targets ']' */
static void check_target(Parser *P, const Ast *t) {
  switch (t->kind) {
  case AST_NAME: case AST_SUBSCRIPT: case AST_ATTRIBUTE: return;
  case AST_TUPLE: case AST_LIST:
    for (int i = 0; i < t->seq.nitems; i++) check_target(P, t->seq.items[i]);
    return;
  default: error_at(P, t->span, "cannot assign to %s", target_kind(t));
  }
}

static void check_aug_target(Parser *P, const Ast *t) {
  if (t->kind == AST_NAME || t->kind == AST_SUBSCRIPT || t->kind == AST_ATTRIBUTE) return;
  error_at(P, t->span, "'%s' is an illegal expression for augmented assignment", target_kind(t));
}

/* Where Python 3.11 reads `a = b` as a mistyped `a == b`, and says so
 * (its rule invalid_named_expression): `a` is an expression at the level
 * of `|` (not a comparison, `not`, lambda, conditional; not a display
 * Python takes for a target list: tuple, list, True, False, None) and
 * `b`, the same kind of expression after the `=`, is not followed by
 * another `=`.  So `if x = 1:` says "invalid syntax. Maybe you meant '=='
 * or ':=' instead of '='?" over `x = 1`, and `f() = 1` "cannot assign to
 * function call here. Maybe you meant '==' instead of '='?" at `f()`. */
static bool bitor_level(const Ast *e) {
  if (e->parenthesised) return true;
  switch (e->kind) {
  case AST_COMPARE: case AST_BOOLOP: case AST_IFEXP: case AST_LAMBDA: case AST_TUPLE: return false;
  case AST_UNARY: return e->unary.op != UN_NOT;
  default: return true;
  }
}

/* The `|`-level expression Python's parser would read first in e (e parsed
 * from the start of what follows a `=`), or NULL where e starts with `not`
 * or `lambda`; *whole: it is e itself, so what follows it follows e. */
static const Ast *leading_bitor(const Ast *e, bool *whole) {
  *whole = true;
  for (;;) {
    if (e->parenthesised) return e;
    switch (e->kind) {
    case AST_COMPARE: e = e->cmp.operands[0]; break;
    case AST_BOOLOP: e = e->boolop.left; break;
    case AST_IFEXP: e = e->ifexp.then; break;
    case AST_TUPLE: if (e->seq.nitems == 0) return e; e = e->seq.items[0]; break;
    case AST_LAMBDA: return NULL;
    case AST_UNARY: if (e->unary.op == UN_NOT) return NULL; return e;
    default: return e;
    }
    *whole = false;
  }
}

/* a, the last expression before a `=`, and b, what follows it (then_assign:
 * another `=` comes after b): raise Python's message where its rule
 * applies, return otherwise. */
static void mistyped_equality(Parser *P, const Ast *a, const Ast *b, bool then_assign) {
  if (!bitor_level(a) || a->kind == AST_TUPLE || a->kind == AST_LIST || a->kind == AST_GENEXP || a->kind == AST_TRUE ||
      a->kind == AST_FALSE || a->kind == AST_NONE)
    return;
  bool whole;
  const Ast *lead = leading_bitor(b, &whole);
  if (!lead || (whole && then_assign)) return;
  if (a->kind != AST_NAME || a->parenthesised)
    error_at(P, a->span, "cannot assign to %s here. Maybe you meant '==' instead of '='?",
             a->kind == AST_ATTRIBUTE ? "attribute" : a->kind == AST_SUBSCRIPT ? "subscript" : target_kind(a));
  Span range = a->span;   /* to the end of b's first `|`-level expression (inside its parentheses) */
  if (lead->span.line == a->span.line && lead->span.col + lead->span.len > range.col)
    range.len = lead->span.col + lead->span.len - range.col;
  error_at(P, range, "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
}

/* At a `=` after e where an expression was expected (a condition, inside
 * brackets): Python's guess that `==` was meant, else "invalid syntax" at
 * the `=`. */
static _Noreturn void assign_in_expression(Parser *P, const Ast *e) {
  Span eq = P->tok.span;
  if (bitor_level(e)) {
    P->guessing = true;
    advance(P);
    if (!at(P, TK_NOT) && !at(P, TK_LAMBDA)) {
      Ast *b = expr(P);
      mistyped_equality(P, e, b, at(P, TK_ASSIGN) || at(P, TK_WALRUS));
    }
  }
  error_at(P, eq, "invalid syntax");
}

/* The ':' ending an if, elif or while header after its condition cond (or a
 * for's, cond NULL): Python says "expected ':'" only where the line ends
 * there, else "invalid syntax" at the token found. */
static void header_colon(Parser *P, const Ast *cond) {
  if (accept(P, TK_COLON)) return;
  if (cond && at(P, TK_ASSIGN)) assign_in_expression(P, cond);
  if (at(P, TK_NEWLINE)) error_at(P, P->tok.span, "expected ':'");
  unexpected(P);
}

/* The targets of an assignment statement: a bad one is reported as Python
 * 3.11 reports it, first guessing (from the first `=` only) that `==` was
 * meant, then "cannot assign to ..." at the first bad target. */
static void check_targets(Parser *P, const Ast *a) {
  int n = a->assign.ntargets;
  bool bad = false;
  for (int i = 0; i < n && !bad; i++) bad = !valid_target(a->assign.targets[i]);
  if (!bad) return;
  const Ast *t = a->assign.targets[0];
  const Ast *last = t->kind == AST_TUPLE && !t->parenthesised && t->seq.nitems ? t->seq.items[t->seq.nitems - 1] : t;
  mistyped_equality(P, last, n > 1 ? a->assign.targets[1] : a->assign.value, n > 1);
  for (int i = 0; i < n; i++) check_target(P, a->assign.targets[i]);
}

/* ---- statements ---- */

typedef struct Body {
  Ast **items;
  int n, cap;
} Body;

static void stmt(Parser *P, Body *b);
static void simple_stmts(Parser *P, Body *b);

/* A node at the current token. */
static Ast *mk_stmt(Parser *P, AstKind k) {
  Ast *a = ast_new(k, P->tok.span);
  a->height = 1;
  return a;
}

/* block -> NEWLINE INDENT stmt+ DEDENT | simple_stmts
 * what names the header for the error ("'if' statement"), on line `line`. */
static void block(Parser *P, Ast *owner, const char *what, int line, Ast ***items, int *n) {
  Body b = {NULL, 0, 0};
  enter(P);
  if (at(P, TK_NEWLINE)) {
    Span nl = P->tok.span;
    advance(P);
    if (!at(P, TK_INDENT)) {
      bool eof = at(P, TK_EOF) || (at(P, TK_DEDENT) && P->lx->p.pos >= P->lx->len);
      if (eof) incomplete_at(P, nl, "expected an indented block after %s on line %d", what, line);
      error_at(P, P->tok.span, "expected an indented block after %s on line %d", what, line);
    }
    advance(P);
    while (!at(P, TK_DEDENT) && !at(P, TK_EOF)) stmt(P, &b);
    accept(P, TK_DEDENT);
  } else {
    simple_stmts(P, &b);   /* on the same line: compound statements are refused there */
  }
  leave(P);
  *items = b.items;
  *n = b.n;
  grow_all(P, owner, b.items, b.n);
}

/* if_stmt -> 'if' expr ':' block { 'elif' expr ':' block } ['else' ':' block]
 * An elif chain becomes nested Ifs; built in a loop, heights fixed after. */
static Ast *if_stmt(Parser *P) {
  Ast **chain = NULL;
  int n = 0, cap = 0;
  for (;;) {
    bool is_elif = at(P, TK_ELIF);
    int line = P->tok.span.line;
    Ast *a = mk_stmt(P, AST_IF);
    advance(P);
    a->if_.cond = expr(P);
    grow(P, a, a->if_.cond);
    header_colon(P, a->if_.cond);
    block(P, a, is_elif ? "'elif' statement" : "'if' statement", line, &a->if_.body, &a->if_.nbody);
    if (n > 0) {
      Ast *prev = chain[n - 1];
      prev->if_.orelse = lang_alloc(sizeof(Ast *));
      prev->if_.orelse[0] = a;
      prev->if_.norelse = 1;
    }
    ast_push(&chain, &n, &cap, a);
    if (at(P, TK_ELIF)) continue;
    if (at(P, TK_ELSE)) {
      int eline = P->tok.span.line;
      advance(P);
      expect(P, TK_COLON);
      block(P, a, "'else' statement", eline, &a->if_.orelse, &a->if_.norelse);
    }
    break;
  }
  for (int i = n - 2; i >= 0; i--) grow(P, chain[i], chain[i + 1]);
  return chain[0];
}

/* a loop's `else:` block, which runs when the loop ends without a break */
static void loop_else(Parser *P, Ast *a, Ast ***orelse, int *norelse) {
  if (!at(P, TK_ELSE)) return;
  int eline = P->tok.span.line;
  advance(P);
  expect(P, TK_COLON);
  block(P, a, "'else' statement", eline, orelse, norelse);
}

/* while_stmt -> 'while' expr ':' block */
static Ast *while_stmt(Parser *P) {
  Ast *a = mk_stmt(P, AST_WHILE);
  int line = P->tok.span.line;
  advance(P);
  a->while_.cond = expr(P);
  grow(P, a, a->while_.cond);
  header_colon(P, a->while_.cond);
  P->in_loop++;
  block(P, a, "'while' statement", line, &a->while_.body, &a->while_.nbody);
  P->in_loop--;
  loop_else(P, a, &a->while_.orelse, &a->while_.norelse);
  return a;
}

/* for_stmt -> 'for' targets 'in' exprlist ':' block
 * targets -> bitor { ',' bitor } [',']   (checked as assignment targets) */
static Ast *for_stmt(Parser *P) {
  Ast *a = mk_stmt(P, AST_FOR);
  int line = P->tok.span.line;
  advance(P);
  a->for_.target = tuple_of(P, bitor, P->tok.span);
  check_target(P, a->for_.target);
  expect(P, TK_IN);
  a->for_.iter = exprlist(P);
  grow(P, a, a->for_.target);
  grow(P, a, a->for_.iter);
  header_colon(P, NULL);
  P->in_loop++;
  block(P, a, "'for' statement", line, &a->for_.body, &a->for_.nbody);
  P->in_loop--;
  loop_else(P, a, &a->for_.orelse, &a->for_.norelse);
  return a;
}

/* funcdef -> decorators? 'def' NAME '(' [params] ')' ':' block
 * decorators -> ('@' expr NEWLINE)+ */
static Ast *funcdef(Parser *P) {
  Ast **decos = NULL;
  int ndecos = 0, capd = 0;
  while (at(P, TK_AT)) {
    advance(P);
    ast_push(&decos, &ndecos, &capd, expr(P));
    if (!at(P, TK_NEWLINE)) unexpected(P);
    advance(P);
  }
  if (ndecos && (at(P, TK_EOF) || (at(P, TK_DEDENT) && P->lx->p.pos >= P->lx->len)))
    incomplete_at(P, P->tok.span, "invalid syntax");
  if (!at(P, TK_DEF)) unexpected(P);
  Ast *a = mk_stmt(P, AST_DEF);
  int line = P->tok.span.line;
  advance(P);
  if (!at(P, TK_NAME)) unexpected(P);
  a->def.name = P->tok.str;
  a->def.name_span = P->tok.span;
  a->def.decorators = decos;
  a->def.ndecorators = ndecos;
  advance(P);
  expect(P, TK_LPAREN);
  params(P, TK_RPAREN, true, &a->def.params, &a->def.nparams);
  expect(P, TK_RPAREN);
  if (at(P, TK_ARROW)) error_at(P, P->tok.span, "return annotations are not supported in Mist");
  expect(P, TK_COLON);
  int saved_loop = P->in_loop;
  P->in_def++;
  P->in_loop = 0;
  block(P, a, "function definition", line, &a->def.body, &a->def.nbody);
  P->in_def--;
  P->in_loop = saved_loop;
  grow_all(P, a, decos, ndecos);
  for (int i = 0; i < a->def.nparams; i++) grow(P, a, a->def.params[i].def);
  return a;
}

static bool is_augop(TokKind k, ArithOp *op) {
  switch (k) {
  case TK_PLUSEQ: *op = OP_ADD; return true;
  case TK_MINUSEQ: *op = OP_SUB; return true;
  case TK_STAREQ: *op = OP_MUL; return true;
  case TK_SLASHEQ: *op = OP_TRUEDIV; return true;
  case TK_DSLASHEQ: *op = OP_FLOORDIV; return true;
  case TK_PERCENTEQ: *op = OP_MOD; return true;
  case TK_DSTAREQ: *op = OP_POW; return true;
  case TK_ATEQ: *op = OP_MATMUL; return true;
  default: return false;
  }
}

/* expr_stmt -> exprlist (augop exprlist | { '=' exprlist }) */
static Ast *expr_stmt(Parser *P) {
  Span start = P->tok.span;
  Ast *first = exprlist(P);
  if (first->kind == AST_NAME && starts_expr(P->tok.kind) &&
      (strcmp(first->name->data, "print") == 0 || strcmp(first->name->data, "exec") == 0)) {
    Ast *stmt = mk(P, AST_EXPR_STMT, first->span);   /* Python 2's statement, named over all of it */
    P->guessing = true;
    exprlist(P);
    error_at(P, finish(P, stmt)->span, "Missing parentheses in call to '%s'. Did you mean %s(...)?",
             first->name->data, first->name->data);
  }
  ArithOp op;
  if (is_augop(P->tok.kind, &op)) {
    check_aug_target(P, first);
    advance(P);
    Ast *a = mk(P, AST_AUGASSIGN, start);
    a->aug.target = first;
    a->aug.op = op;
    a->aug.value = exprlist(P);
    grow(P, a, first);
    grow(P, a, a->aug.value);
    return finish(P, a);
  }
  if (at(P, TK_COLON)) error_at(P, P->tok.span, "type annotations are not supported in Mist");
  if (!at(P, TK_ASSIGN)) {
    Ast *a = mk(P, AST_EXPR_STMT, start);
    a->expr.value = first;
    grow(P, a, first);
    return finish(P, a);
  }
  Ast *a = mk(P, AST_ASSIGN, start);
  int cap = 0;
  Ast *value = first;
  while (at(P, TK_ASSIGN)) {
    ast_push(&a->assign.targets, &a->assign.ntargets, &cap, value);
    advance(P);
    value = exprlist(P);
  }
  a->assign.value = value;
  check_targets(P, a);
  grow_all(P, a, a->assign.targets, a->assign.ntargets);
  grow(P, a, value);
  return finish(P, a);
}

/* small_stmt -> 'pass' | 'break' | 'continue' | 'return' [exprlist]
 *             | 'assert' expr [',' expr] | 'import' NAME ['as' NAME] {',' NAME ['as' NAME]}
 *             | expr_stmt */
static void small_stmt(Parser *P, Body *b) {
  Ast *a;
  switch (P->tok.kind) {
  case TK_PASS: a = mk_stmt(P, AST_PASS); advance(P); break;
  case TK_BREAK:
    if (!P->in_loop) error_at(P, P->tok.span, "'break' outside loop");
    a = mk_stmt(P, AST_BREAK);
    advance(P);
    break;
  case TK_CONTINUE:
    if (!P->in_loop) error_at(P, P->tok.span, "'continue' not properly in loop");
    a = mk_stmt(P, AST_CONTINUE);
    advance(P);
    break;
  case TK_RETURN:
    if (!P->in_def) error_at(P, P->tok.span, "'return' outside function");
    a = mk_stmt(P, AST_RETURN);
    advance(P);
    if (starts_expr(P->tok.kind)) a->return_.value = exprlist(P);
    grow(P, a, a->return_.value);
    break;
  case TK_ASSERT:
    a = mk_stmt(P, AST_ASSERT);
    advance(P);
    a->assert_.test = expr(P);
    if (accept(P, TK_COMMA)) a->assert_.msg = expr(P);
    grow(P, a, a->assert_.test);
    grow(P, a, a->assert_.msg);
    break;
  case TK_IMPORT:
    advance(P);
    for (;;) {
      if (!at(P, TK_NAME)) unexpected(P);
      a = ast_new(AST_IMPORT, P->tok.span);
      a->height = 1;
      a->import.module = P->tok.str;
      advance(P);
      if (at(P, TK_DOT)) error_at(P, P->tok.span, "dotted module names are not supported in Mist");
      if (accept(P, TK_AS)) {
        if (!at(P, TK_NAME)) unexpected(P);
        a->import.alias = P->tok.str;
        advance(P);
      }
      finish(P, a);
      if (!at(P, TK_COMMA)) break;
      ast_push(&b->items, &b->n, &b->cap, a);
      advance(P);
    }
    break;
  default: a = expr_stmt(P); break;
  }
  ast_push(&b->items, &b->n, &b->cap, finish(P, a));
}

/* simple_stmts -> small_stmt { ';' small_stmt } [';'] NEWLINE */
static void simple_stmts(Parser *P, Body *b) {
  do {
    small_stmt(P, b);
  } while (accept(P, TK_SEMI) && !at(P, TK_NEWLINE));
  if (!accept(P, TK_NEWLINE)) unexpected(P);
}

/* stmt -> if_stmt | while_stmt | for_stmt | funcdef | simple_stmts */
static void stmt(Parser *P, Body *b) {
  Ast *a;
  switch (P->tok.kind) {
  case TK_IF: a = if_stmt(P); break;
  case TK_WHILE: a = while_stmt(P); break;
  case TK_FOR: a = for_stmt(P); break;
  case TK_DEF: case TK_AT: a = funcdef(P); break;
  case TK_INDENT: case TK_NEWLINE: case TK_DEDENT: case TK_EOF: case TK_ELSE: case TK_ELIF: unexpected(P);
  default: simple_stmts(P, b); return;
  }
  ast_push(&b->items, &b->n, &b->cap, a);
}

/* ---- entry points ---- */

/* Is the text valid UTF-8 without NUL bytes?  If not, raise at the first
 * bad byte. */
static bool check_text(MistVM *vm, int file, const char *src, size_t start, size_t len, int line) {
  int col = 1;
  size_t i = start;
  while (i < len) {
    unsigned char c = (unsigned char)src[i];
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = n > 0 && i + n <= len && lang_utf8_valid(src + i, n);
    if (!ok || c == 0) {
      Span s = {file, line, col, 1};
      if (c == 0) lang_raise_at(vm, s, "SyntaxError", "source code cannot contain null bytes");
      else lang_raise_at(vm, s, "SyntaxError", "invalid UTF-8 byte 0x%02x in source", c);
      return false;
    }
    if (c == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
    i += n;
  }
  return true;
}

static void parser_init(Parser *P, Lexer *L, MistVM *vm, int file, const char *src, size_t len) {
  memset(P, 0, sizeof *P);
  lex_init(L, vm, file, src, len);
  P->vm = vm;
  P->lx = L;
  P->main = L;
  P->file = file;
  P->prev_end.line = 1;
  P->prev_end.col = 1;
}

/* file -> { stmt } EOF */
Ast *parse_module(MistVM *vm, int file_id, const char *src, size_t len) {
  return parse_module_part(vm, file_id, src, 0, len, 1);
}

Ast *parse_module_part(MistVM *vm, int file_id, const char *src, size_t start, size_t end, int line) {
  if (!check_text(vm, file_id, src, start, end, line)) return NULL;
  Parser *P = lang_alloc(sizeof *P);   /* GC memory: scanned, and big jmp_buf stays off the stack */
  Lexer *L = lang_alloc(sizeof *L);
  parser_init(P, L, vm, file_id, src, end);
  L->p.pos = start;
  L->p.line = line;
  P->prev_end.line = line;
  Span top = {file_id, line, 1, 1};
  Ast *m = ast_new(AST_MODULE, top);
  m->height = 1;
  if (setjmp(P->fail)) return NULL;
  P->tok = fetch(P);
  Body b = {NULL, 0, 0};
  while (!at(P, TK_EOF)) stmt(P, &b);
  m->module.body = b.items;
  m->module.nbody = b.n;
  for (int i = 0; i < b.n; i++) grow(P, m, b.items[i]);
  return m;
}

/* expression_input -> exprlist NEWLINE* EOF */
Ast *parse_expression(MistVM *vm, int file_id, const char *src, size_t len) {
  if (!check_text(vm, file_id, src, 0, len, 1)) return NULL;
  Parser *P = lang_alloc(sizeof *P);
  Lexer *L = lang_alloc(sizeof *L);
  parser_init(P, L, vm, file_id, src, len);
  if (setjmp(P->fail)) return NULL;
  P->tok = fetch(P);
  if (at(P, TK_INDENT)) unexpected(P);
  Ast *e = exprlist(P);
  while (accept(P, TK_NEWLINE)) {}
  if (!at(P, TK_EOF)) unexpected(P);
  return e;
}
