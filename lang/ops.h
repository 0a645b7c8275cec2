/* ops.h: the meaning of Mist's operators on values, following Python:
 * int/float arithmetic (floor division and modulo take the divisor's
 * sign, ** of ints stays int, int overflow is an error, never a wrap),
 * str/tuple/list concatenation and repetition, comparisons (chains are
 * lowered to these), equality across int/float/bool, indexing and
 * slicing, membership, truthiness, conversions, and printing (repr and
 * str, with floats as Python's shortest round-trip repr) and the format
 * mini-language of f-strings.
 *
 * Every function that can fail returns false after lang_raise(). */
#ifndef MIST_LANG_OPS_H
#define MIST_LANG_OPS_H

#include "lang/strbuf.h"
#include "lang/vm.h"

typedef enum {
  OP_ADD, OP_SUB, OP_MUL, OP_TRUEDIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_MATMUL,
} ArithOp;

typedef enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } CmpOp;

const char *lang_arith_symbol(ArithOp op);   /* "+", "//"... */
const char *lang_cmp_symbol(CmpOp op);

bool lang_arith(MistVM *vm, ArithOp op, Value a, Value b, Value *out);
/* lang_arith, where operand a (dead & 1) or b (dead & 2) is a
 * temporary that nothing reads after this operation (the interpreter
 * knows which, ir/eval.c): a tensor result may then be written into that
 * operand's buffer rather than a new one.  The result is the same. */
bool lang_arith_reusing(MistVM *vm, ArithOp op, Value a, Value b, unsigned dead, Value *out);
/* x op (a * b), op OP_ADD or OP_SUB, where a * b is a temporary that
 * nothing else reads, not computed yet: in one pass, without the
 * product's buffer, where one of a and b is a number and the other a
 * float tensor of x's dtype and shape (lang_tensor_scaled_op), which is
 * an SGD update's p - lr * g.  `how` is made of the bits below.  1 when
 * done (*out set), 0 when not (nothing done: compute a * b, then the
 * sum), -1 after an error.  The result is the same. */
enum {
  LANG_PRODUCT_FIRST = 1,   /* (a * b) op x */
  LANG_DEAD_X = 2,          /* x, a or b is a temporary nothing reads afterwards */
  LANG_DEAD_A = 4,
  LANG_DEAD_B = 8,
};
int lang_arith_scaled(MistVM *vm, ArithOp op, Value x, Value a, Value b, unsigned how, Value *out);
bool lang_compare(MistVM *vm, CmpOp op, Value a, Value b, Value *out);
bool lang_neg(MistVM *vm, Value a, Value *out);
bool lang_pos(MistVM *vm, Value a, Value *out);
bool lang_truthy(MistVM *vm, Value a, bool *out);

/* == as Python defines it for these types (1 == 1.0 == True); never fails. */
bool lang_equal(Value a, Value b);

/* x[i]: i an int, a slice (ObjSlice) or, for dicts, a str key. */
bool lang_getitem(MistVM *vm, Value x, Value index, Value *out);
/* set(x, i, v): a new value equal to x but with x[i] = v. */
bool lang_setitem(MistVM *vm, Value x, Value index, Value v, Value *out);
/* item in container (str substring, tuple/list element, dict key, range) */
bool lang_contains(MistVM *vm, Value container, Value item, bool *out);
bool lang_len(MistVM *vm, Value x, int64_t *out);
/* The elements of an iterable (tuple, list, str, dict keys, range) as a
 * tuple or list; for a tuple or list, the value itself, not a copy. */
bool lang_iter_items(MistVM *vm, Value v, ObjSeq **out);
/* A slice object for x[a:b:c]; each part an int or None. */
Value lang_slice_new(Value start, Value stop, Value step);

/* Text forms: repr as Python's repr(), str as Python's str(). */
bool lang_repr(MistVM *vm, Value v, StrBuf *out);
bool lang_tostr(MistVM *vm, Value v, StrBuf *out);
void lang_float_repr(double d, StrBuf *out);
void lang_str_repr(const ObjStr *s, StrBuf *out);   /* 'text' with Python's quoting */

/* s as a literal between two quote characters: the quote and backslash
 * escaped, \n \t \r, other control characters as \xNN; with
 * LANG_QUOTE_UNPRINTABLE, code points Python's repr escapes as \xNN,
 * \uNNNN or \UNNNNNNNN (else other bytes are copied); with
 * LANG_QUOTE_BRACES, { and } doubled (an f-string's text).  The one
 * escaper of repr, the IR text, the Mist source printout and the AST
 * dump. */
enum { LANG_QUOTE_UNPRINTABLE = 1, LANG_QUOTE_BRACES = 2 };
void lang_quote(StrBuf *out, const char *s, size_t len, char quote, unsigned flags);
/* format(v, spec): the mini-language for d, f, e, g, s, %, with fill,
 * align, sign, width, grouping (, and _) and precision. */
bool lang_format(MistVM *vm, Value v, const char *spec, size_t speclen, StrBuf *out);
/* fmt % args, printf-style, as Python's str % (PyUnicode_Format). */
bool lang_percent_format(MistVM *vm, const ObjStr *fmt, Value args, Value *out);

/* int(x), float(x), str parsing included; errors as Python's. */
bool lang_to_int(MistVM *vm, Value v, Value *out);
bool lang_to_float(MistVM *vm, Value v, Value *out);

#endif
