/* ast.c: AST nodes: the kind table, the constructor, growable arrays and
 * the debug printer.
 *
 * Nodes live on the GC heap (lang_alloc, zeroed), so the parser never
 * frees anything and an error half-way through a parse just drops what
 * was built.  ast_dump prints a tree as one line of S-expressions; the
 * parser's tests compare those lines, and `mist --dump=ast` shows them.
 * The printer recurses over the tree, which the parser keeps at most
 * PARSE_MAX_HEIGHT high (statements nest at most 100 deep).
 */
#include "parser/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/ops.h"

static const char *const kind_names[] = {
#define AST(e, name, is_stmt) name,
#include "parser/ast.def"
#undef AST
};

static const bool kind_is_stmt[] = {
#define AST(e, name, is_stmt) is_stmt,
#include "parser/ast.def"
#undef AST
};

const char *ast_kind_name(AstKind k) { return (unsigned)k < AST__COUNT ? kind_names[k] : "?"; }

bool ast_is_stmt(AstKind k) { return (unsigned)k < AST__COUNT && kind_is_stmt[k]; }

const char *ast_cmp_symbol(CmpKind k) {
  switch (k) {
  case CMPK_EQ: return "==";
  case CMPK_NE: return "!=";
  case CMPK_LT: return "<";
  case CMPK_LE: return "<=";
  case CMPK_GT: return ">";
  case CMPK_GE: return ">=";
  case CMPK_IN: return "in";
  case CMPK_NOT_IN: return "not in";
  case CMPK_IS: return "is";
  case CMPK_IS_NOT: return "is not";
  }
  return "?";
}

Ast *ast_new(AstKind kind, Span span) {
  Ast *a = lang_alloc(sizeof *a);
  a->kind = kind;
  a->span = span;
  return a;
}

void ast_push(Ast ***arr, int *n, int *cap, Ast *x) {
  if (*n >= *cap) {
    int nc = *cap ? *cap * 2 : 4;
    Ast **na = lang_alloc((size_t)nc * sizeof *na);
    if (*n) memcpy(na, *arr, (size_t)*n * sizeof *na);
    *arr = na;
    *cap = nc;
  }
  (*arr)[(*n)++] = x;
}

/* ---- printer ---- */

static const char *arith_symbol(ArithOp op) {
  switch (op) {
  case OP_ADD: return "+";
  case OP_SUB: return "-";
  case OP_MUL: return "*";
  case OP_TRUEDIV: return "/";
  case OP_FLOORDIV: return "//";
  case OP_MOD: return "%";
  case OP_POW: return "**";
  case OP_MATMUL: return "@";
  }
  return "?";
}

static void dump_str(const ObjStr *s, StrBuf *out) {
  lang_quote(out, s ? s->data : "", s ? s->len : 0, '"', 0);
}

static void dump_float(double d, StrBuf *out) {
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) break;
  }
  sb_adds(out, buf);
  if (!strpbrk(buf, ".eEin")) sb_adds(out, ".0");
}

static void dump(const Ast *a, bool spans, StrBuf *out);

static void dump_list(Ast *const *items, int n, bool spans, StrBuf *out) {
  for (int i = 0; i < n; i++) {
    sb_addc(out, ' ');
    dump(items[i], spans, out);
  }
}

static void dump_block(const char *label, Ast *const *items, int n, bool spans, StrBuf *out) {
  sb_printf(out, " (%s", label);
  dump_list(items, n, spans, out);
  sb_addc(out, ')');
}

static void dump_params(const AstParam *ps, int n, bool spans, StrBuf *out) {
  sb_addc(out, '(');
  for (int i = 0; i < n; i++) {
    if (i) sb_addc(out, ' ');
    sb_add(out, ps[i].name->data, ps[i].name->len);
    if (ps[i].def) {
      sb_addc(out, '=');
      dump(ps[i].def, spans, out);
    }
  }
  sb_addc(out, ')');
}

static void dump(const Ast *a, bool spans, StrBuf *out) {
  if (!a) {
    sb_addc(out, '_');
    return;
  }
  sb_addc(out, '(');
  sb_adds(out, ast_kind_name(a->kind));
  if (spans) sb_printf(out, "@%d:%d", a->span.line, a->span.col);
  switch (a->kind) {
  case AST_NAME:
    sb_addc(out, ' ');
    sb_add(out, a->name->data, a->name->len);
    break;
  case AST_INT: sb_printf(out, " %lld", (long long)a->ival); break;
  case AST_FLOAT: sb_addc(out, ' '); dump_float(a->fval, out); break;
  case AST_STR: sb_addc(out, ' '); dump_str(a->str, out); break;
  case AST_FSTRING: dump_list(a->fstr.parts, a->fstr.nparts, spans, out); break;
  case AST_FORMATTED:
    sb_addc(out, ' ');
    dump(a->fmt.value, spans, out);
    if (a->fmt.conv) sb_printf(out, " !%c", a->fmt.conv);
    if (a->fmt.nspec) dump_block("spec", a->fmt.spec, a->fmt.nspec, spans, out);
    break;
  case AST_NONE: case AST_TRUE: case AST_FALSE: case AST_ELLIPSIS: case AST_BREAK: case AST_CONTINUE: case AST_PASS: break;
  case AST_TUPLE: case AST_LIST: dump_list(a->seq.items, a->seq.nitems, spans, out); break;
  case AST_DICT:
    for (int i = 0; i < a->dict.nitems; i++) {
      sb_adds(out, " (");
      dump(a->dict.keys[i], spans, out);
      sb_adds(out, ": ");
      dump(a->dict.values[i], spans, out);
      sb_addc(out, ')');
    }
    break;
  case AST_BINOP:
    sb_printf(out, " %s ", arith_symbol(a->binop.op));
    dump(a->binop.left, spans, out);
    sb_addc(out, ' ');
    dump(a->binop.right, spans, out);
    break;
  case AST_UNARY:
    sb_adds(out, a->unary.op == UN_NEG ? " - " : a->unary.op == UN_POS ? " + " : " not ");
    dump(a->unary.operand, spans, out);
    break;
  case AST_BOOLOP:
    sb_adds(out, a->boolop.op == BOOL_AND ? " and " : " or ");
    dump(a->boolop.left, spans, out);
    sb_addc(out, ' ');
    dump(a->boolop.right, spans, out);
    break;
  case AST_COMPARE:
    for (int i = 0; i <= a->cmp.nops; i++) {
      sb_addc(out, ' ');
      dump(a->cmp.operands[i], spans, out);
      if (i < a->cmp.nops) sb_printf(out, " %s", ast_cmp_symbol(a->cmp.ops[i]));
    }
    break;
  case AST_IFEXP:
    sb_addc(out, ' ');
    dump(a->ifexp.cond, spans, out);
    sb_addc(out, ' ');
    dump(a->ifexp.then, spans, out);
    sb_addc(out, ' ');
    dump(a->ifexp.orelse, spans, out);
    break;
  case AST_LAMBDA:
    sb_addc(out, ' ');
    dump_params(a->lambda.params, a->lambda.nparams, spans, out);
    sb_addc(out, ' ');
    dump(a->lambda.body, spans, out);
    break;
  case AST_CALL:
    sb_addc(out, ' ');
    dump(a->call.func, spans, out);
    dump_list(a->call.args, a->call.nargs, spans, out);
    for (int i = 0; i < a->call.nkw; i++) {
      sb_addc(out, ' ');
      sb_add(out, a->call.kwnames[i]->data, a->call.kwnames[i]->len);
      sb_addc(out, '=');
      dump(a->call.kwvalues[i], spans, out);
    }
    break;
  case AST_ATTRIBUTE:
    sb_addc(out, ' ');
    dump(a->attr.obj, spans, out);
    sb_addc(out, ' ');
    sb_add(out, a->attr.name->data, a->attr.name->len);
    break;
  case AST_SUBSCRIPT:
    sb_addc(out, ' ');
    dump(a->sub.obj, spans, out);
    sb_addc(out, ' ');
    dump(a->sub.index, spans, out);
    break;
  case AST_SLICE:
    sb_addc(out, ' ');
    dump(a->slice.start, spans, out);
    sb_addc(out, ' ');
    dump(a->slice.stop, spans, out);
    sb_addc(out, ' ');
    dump(a->slice.step, spans, out);
    break;
  case AST_LISTCOMP: case AST_DICTCOMP: case AST_GENEXP:
    if (a->comp.key) {
      sb_addc(out, ' ');
      dump(a->comp.key, spans, out);
    }
    sb_addc(out, ' ');
    dump(a->comp.elt, spans, out);
    for (int i = 0; i < a->comp.nfors; i++) {
      const AstCompFor *c = &a->comp.fors[i];
      sb_adds(out, " (for ");
      dump(c->target, spans, out);
      sb_addc(out, ' ');
      dump(c->iter, spans, out);
      for (int j = 0; j < c->nifs; j++) {
        sb_adds(out, " (if ");
        dump(c->ifs[j], spans, out);
        sb_addc(out, ')');
      }
      sb_addc(out, ')');
    }
    break;
  case AST_EXPR_STMT:
    sb_addc(out, ' ');
    dump(a->expr.value, spans, out);
    break;
  case AST_ASSIGN:
    dump_list(a->assign.targets, a->assign.ntargets, spans, out);
    sb_adds(out, " = ");
    dump(a->assign.value, spans, out);
    break;
  case AST_AUGASSIGN:
    sb_printf(out, " %s= ", arith_symbol(a->aug.op));
    dump(a->aug.target, spans, out);
    sb_addc(out, ' ');
    dump(a->aug.value, spans, out);
    break;
  case AST_IF:
    sb_addc(out, ' ');
    dump(a->if_.cond, spans, out);
    dump_block("then", a->if_.body, a->if_.nbody, spans, out);
    if (a->if_.norelse) dump_block("else", a->if_.orelse, a->if_.norelse, spans, out);
    break;
  case AST_WHILE:
    sb_addc(out, ' ');
    dump(a->while_.cond, spans, out);
    dump_block("do", a->while_.body, a->while_.nbody, spans, out);
    if (a->while_.norelse) dump_block("else", a->while_.orelse, a->while_.norelse, spans, out);
    break;
  case AST_FOR:
    sb_addc(out, ' ');
    dump(a->for_.target, spans, out);
    sb_addc(out, ' ');
    dump(a->for_.iter, spans, out);
    dump_block("do", a->for_.body, a->for_.nbody, spans, out);
    if (a->for_.norelse) dump_block("else", a->for_.orelse, a->for_.norelse, spans, out);
    break;
  case AST_RETURN:
    if (a->return_.value) {
      sb_addc(out, ' ');
      dump(a->return_.value, spans, out);
    }
    break;
  case AST_ASSERT:
    sb_addc(out, ' ');
    dump(a->assert_.test, spans, out);
    if (a->assert_.msg) {
      sb_addc(out, ' ');
      dump(a->assert_.msg, spans, out);
    }
    break;
  case AST_DEF:
    sb_addc(out, ' ');
    sb_add(out, a->def.name->data, a->def.name->len);
    sb_addc(out, ' ');
    dump_params(a->def.params, a->def.nparams, spans, out);
    if (a->def.ndecorators) dump_block("decorators", a->def.decorators, a->def.ndecorators, spans, out);
    dump_block("body", a->def.body, a->def.nbody, spans, out);
    break;
  case AST_IMPORT:
    sb_addc(out, ' ');
    sb_add(out, a->import.module->data, a->import.module->len);
    if (a->import.alias) {
      sb_adds(out, " as ");
      sb_add(out, a->import.alias->data, a->import.alias->len);
    }
    break;
  case AST_MODULE: dump_list(a->module.body, a->module.nbody, spans, out); break;
  case AST__COUNT: break;
  }
  sb_addc(out, ')');
}

void ast_dump(const Ast *a, bool spans, StrBuf *out) { dump(a, spans, out); }
