/* ast.h: the abstract syntax tree that parse.c builds and lower.c reads.
 *
 * One struct, Ast, for every node: a kind (from ast.def), a source span,
 * and a union with one member per kind (or per family of kinds).  Lists
 * are a pointer to an array plus a count (`Ast **items; int nitems`).
 * All memory comes from lang_alloc (the GC); names and string contents
 * are ObjStr (names interned with lang_intern, so two names are equal
 * iff the pointers are equal).
 *
 * Spans: file, 1-based line and column (in code points) of the node's
 * first character, len = columns it covers on that line (for the caret).
 * A binary expression, call, subscript or attribute starts where its
 * left operand / callee / object starts (at its '(' if parenthesised, as
 * in Python; a parenthesised expression itself has the span of what is
 * inside); a statement starts at its first token (a decorated def at its
 * 'def' keyword).
 */
#ifndef MIST_PARSER_AST_H
#define MIST_PARSER_AST_H

#include "lang/ops.h"
#include "lang/strbuf.h"
#include "lang/vm.h"

typedef enum {
#define AST(e, name, is_stmt) AST_##e,
#include "parser/ast.def"
#undef AST
  AST__COUNT
} AstKind;

/* Comparison operators: the first six equal lang/ops.h's CmpOp, so
 * `(CmpOp)k` is valid for k < CMPK_IN. */
typedef enum {
  CMPK_EQ = CMP_EQ, CMPK_NE = CMP_NE, CMPK_LT = CMP_LT,
  CMPK_LE = CMP_LE, CMPK_GT = CMP_GT, CMPK_GE = CMP_GE,
  CMPK_IN, CMPK_NOT_IN, CMPK_IS, CMPK_IS_NOT,
} CmpKind;

typedef enum { UN_NEG, UN_POS, UN_NOT } UnaryKind;
typedef enum { BOOL_AND, BOOL_OR } BoolKind;

typedef struct Ast Ast;

/* One `for target in iter if c1 if c2...` clause of a comprehension.
 * target is a NAME or a nested TUPLE/LIST of NAMEs (the parser refuses
 * subscript and attribute targets there); iter and the ifs are
 * disjunctions, as in Python's grammar. */
typedef struct AstCompFor {
  Ast *target, *iter;
  Ast **ifs; int nifs;
} AstCompFor;

/* A parameter of a def or lambda: `name` or `name=default`.  Defaults are
 * expressions evaluated where the def is; a parameter without a default
 * never follows one with a default (the parser checks). */
typedef struct AstParam {
  ObjStr *name;       /* interned */
  Ast *def;           /* default value, or NULL */
  Span span;          /* of the name */
} AstParam;

struct Ast {
  AstKind kind;
  Span span;
  /* Height of the subtree (a leaf is 1; a statement counts its
   * expressions and nested blocks).  The parser keeps every node's at
   * most PARSE_MAX_HEIGHT (parse.h), so passes that recurse over the tree
   * need no depth guard of their own. */
  int height;
  /* Written in parentheses: `(f())`, `(a, b)`.  Only the parser's error
   * messages read it (Python's grammar takes a group for an atom). */
  bool parenthesised;
  union {
    ObjStr *name;          /* NAME: the identifier, interned */
    int64_t ival;          /* INT: a literal too large for int64 is a syntax error */
    double fval;           /* FLOAT */
    ObjStr *str;           /* STR: the decoded contents (adjacent literals joined) */

    /* FSTRING: parts in order, each an AST_STR (literal text, `{{` already
     * turned into `{`, never two STRs in a row, never an empty one) or an
     * AST_FORMATTED.  Adjacent literals, plain or f, are joined into one
     * FSTRING if any of them is an f-string; f'' has no parts.  A
     * `{x=}` field is the literal "x=" followed by Formatted(x, conv 'r'). */
    struct { Ast **parts; int nparts; } fstr;

    /* FORMATTED: `{value!conv:spec}`.  conv is 0, 'r' or 's'.  spec is
     * NULL/0 when absent; otherwise its parts, as in fstr (Python allows
     * `{x:{w}.2f}`: parts Formatted(w), Str(".2f")).  An empty spec `{x:}`
     * gives nspec == 0 and spec == NULL too. */
    struct { Ast *value; int conv; Ast **spec; int nspec; } fmt;

    struct { Ast **items; int nitems; } seq;              /* TUPLE, LIST */
    struct { Ast **keys; Ast **values; int nitems; } dict;   /* DICT */
    struct { ArithOp op; Ast *left, *right; } binop;       /* BINOP */
    struct { UnaryKind op; Ast *operand; } unary;          /* UNARY */
    /* BOOLOP: exactly two operands; `a or b or c` is Or(Or(a, b), c). */
    struct { BoolKind op; Ast *left, *right; } boolop;
    /* COMPARE: `a < b <= c` has operands [a, b, c] (nops + 1 of them) and
     * ops [LT, LE].  A single comparison has nops == 1. */
    struct { Ast **operands; CmpKind *ops; int nops; } cmp;
    struct { Ast *cond, *then, *orelse; } ifexp;           /* IFEXP: then if cond else orelse */
    struct { AstParam *params; int nparams; Ast *body; } lambda;   /* LAMBDA: body is an expression */
    /* CALL: func(args..., kwnames[0]=kwvalues[0], ...).  Positional
     * arguments never follow keyword ones; keyword names are distinct
     * and interned (the parser checks both). */
    struct {
      Ast *func;
      Ast **args; int nargs;
      ObjStr **kwnames; Ast **kwvalues; int nkw;
    } call;
    struct { Ast *obj; ObjStr *name; Span name_span; } attr;   /* ATTRIBUTE: obj.name (name interned) */
    /* SUBSCRIPT: obj[index].  `x[i, j]` has a TUPLE index (whose items may
     * be SLICEs: `x[:, 0]`); `x[a:b]` a SLICE index. */
    struct { Ast *obj; Ast *index; } sub;
    struct { Ast *start, *stop, *step; } slice;            /* SLICE: each may be NULL */
    /* LISTCOMP, DICTCOMP, GENEXP: elt for each combination of the
     * clauses (the first is the outermost loop) that passes their ifs;
     * key too for a DICTCOMP (elt is then the value), NULL otherwise.
     * nfors >= 1.  The span starts at the opening bracket: for a
     * generator expression that is a call's sole argument, the call's '('. */
    struct { Ast *key, *elt; AstCompFor *fors; int nfors; } comp;

    /* ---- statements ---- */
    struct { Ast *value; } expr;                           /* EXPR_STMT */
    /* ASSIGN: `t1 = t2 = value` has targets [t1, t2].  A target is a NAME,
     * a TUPLE or LIST of targets (nested), a SUBSCRIPT or an ATTRIBUTE
     * (the parser accepts attribute targets; lowering rejects them). */
    struct { Ast **targets; int ntargets; Ast *value; } assign;
    /* AUGASSIGN: target op= value; target is a NAME, SUBSCRIPT or ATTRIBUTE. */
    struct { Ast *target; ArithOp op; Ast *value; } aug;
    /* IF: `elif` becomes a nested IF as the only statement of orelse
     * (whose span is the 'elif' keyword). */
    struct { Ast *cond; Ast **body; int nbody; Ast **orelse; int norelse; } if_;
    /* WHILE and FOR: orelse runs when the loop ends without a break */
    struct { Ast *cond; Ast **body; int nbody; Ast **orelse; int norelse; } while_;
    /* FOR: target is a target as in ASSIGN (a NAME or nested TUPLE/LIST of them, usually) */
    struct { Ast *target, *iter; Ast **body; int nbody; Ast **orelse; int norelse; } for_;
    /* RETURN: value or NULL.  The parser has checked that return is inside
     * a def, and break/continue inside a loop of the same def. */
    struct { Ast *value; } return_;
    struct { Ast *test, *msg; } assert_;                   /* ASSERT: msg or NULL */
    /* DEF: decorators in source order (the last one applies first, as in
     * Python); each is an expression (NAME, ATTRIBUTE or CALL). */
    struct {
      ObjStr *name; Span name_span;
      AstParam *params; int nparams;
      Ast **body; int nbody;
      Ast **decorators; int ndecorators;
    } def;
    /* IMPORT: `import module` or `import module as alias` (alias NULL if
     * absent).  The name bound is alias ? alias : module. */
    struct { ObjStr *module; ObjStr *alias; } import;
    struct { Ast **body; int nbody; } module;             /* MODULE */
  };
};

/* Name of a kind as ast_dump prints it ("BinOp"). */
const char *ast_kind_name(AstKind k);
bool ast_is_stmt(AstKind k);
/* Symbol of a comparison ("<", "not in", "is not"). */
const char *ast_cmp_symbol(CmpKind k);

/* A zeroed node of the given kind (GC memory). */
Ast *ast_new(AstKind kind, Span span);

/* Growable arrays used while building: *arr has room for *cap items.
 * Appends x, growing the array (GC memory) as needed. */
void ast_push(Ast ***arr, int *n, int *cap, Ast *x);

/* Debug printer: one line, S-expression style, e.g.
 *   (Module (Assign (Name x) (BinOp + (Int 1) (Int 2))))
 * A comprehension prints its clauses after the element:
 *   (ListComp (Name x) (for (Name x) (Name xs) (if (Name x))))
 * With spans, every node is followed by @LINE:COL. */
void ast_dump(const Ast *a, bool spans, StrBuf *out);

#endif
