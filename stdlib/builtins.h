/* builtins.h: the core builtin functions and the str/dict/list methods,
 * written in C (builtins.c, strmethods.c), and the few helpers they share
 * with the rest of stdlib/: argument parsing with Python's error
 * wording, and iteration over any iterable value.
 *
 * Every builtin has the BuiltinFn signature of lang/value.h and follows
 * Python 3.11: same results, same error kinds, same messages, except
 * where Mist's values differ (64-bit ints, immutable lists and dicts). */
#ifndef MIST_STDLIB_BUILTINS_H
#define MIST_STDLIB_BUILTINS_H

#include "lang/vm.h"

/* Register every core builtin (print, len, range, sorted...) under its
 * global name and every method (str.split, dict.get, list.index, the
 * mutating list/dict methods that explain the functional spelling...)
 * in the method table.  Call once per VM, after the VM's dicts exist. */
void std_register_builtins(MistVM *vm);

/* The str/dict/list/tuple methods (strmethods.c); called by
 * std_register_builtins. */
void std_register_methods(MistVM *vm);
/* help() (help.c) and open() with the file methods (textfiles.c); called by
 * std_register_builtins. */
void std_register_help(MistVM *vm);
void std_register_files(MistVM *vm);

/* ---- iteration ----
 *
 * An iterator over one of the values Python lets a for-loop walk: str
 * (its characters, as one-character strings), tuple, list, dict (its
 * keys, in insertion order), range.  It holds no GC memory of its own
 * besides src, so it can live on the C stack. */
typedef struct StdIter {
  Value src;
  size_t pos, len;
  size_t byte;          /* str: byte offset of character pos */
} StdIter;

/* Start iterating v; raises TypeError "'int' object is not iterable". */
bool std_iter_init(MistVM *vm, Value v, StdIter *it);
/* The next item in *out, or false at the end.  Never fails. */
bool std_iter_next(StdIter *it, Value *out);

/* All the items of the iterable v as a GC array (*items may be NULL when
 * *n is 0).  Raises TypeError for a value that is not iterable and
 * MemoryError for a range too long to hold in memory. */
bool std_iter_items(MistVM *vm, Value v, Value **items, size_t *n);

/* An int (or bool) as a C integer, else TypeError "'float' object cannot
 * be interpreted as an integer". */
bool std_as_index(MistVM *vm, Value v, int64_t *out);

/* ---- arguments ----
 *
 * CPython words its arity errors differently depending on how each
 * builtin is written; ArgStyle picks the wording. */
typedef enum {
  ARGS_CLINIC,        /* "f() takes at most 2 arguments (3 given)",
                         "f() missing required argument 'x' (pos 1)" */
  ARGS_CLINIC_NOPOS,  /* as ARGS_CLINIC, without " (pos 1)" */
  ARGS_TAKES,         /* "f() takes at most 3 arguments (4 given)",
                         "f() takes at least 1 argument (0 given)" */
  ARGS_EXPECTED,      /* "f expected at most 2 arguments, got 3" */
} ArgStyle;

/* Fill slots[0..nnames) from the positional arguments and the keyword
 * arguments (slots not given are left V_UNBOUND).  The first npos names
 * may be given by position (npos <= nnames), the first nreq must be
 * given; kwnames says whether names may be given as keywords at all
 * (false: "f() takes no keyword arguments"), and a name "" is
 * positional-only.  fname is the name as
 * Python prints it ("split", "str.find"). */
bool std_parse_args(MistVM *vm, const char *fname, ArgStyle style,
                    int argc, const Value *argv, const KwArgs *kw,
                    const char *const *names, int nnames, int npos, int nreq,
                    bool kwnames, Value *slots);

/* "f() takes no keyword arguments" unless kw is NULL or empty. */
bool std_no_kw(MistVM *vm, const char *fname, const KwArgs *kw);
/* "f() takes exactly one argument (2 given)" unless argc == 1; also
 * refuses keyword arguments. */
bool std_one_arg(MistVM *vm, const char *fname, int argc, const KwArgs *kw);
/* "f() takes no arguments (1 given)" unless argc == 0; also refuses
 * keyword arguments. */
bool std_no_args(MistVM *vm, const char *fname, int argc, const KwArgs *kw);

/* ---- text ---- */

/* Python's str.isspace() for one code point (the whitespace that int(),
 * split() and strip() skip). */
bool std_is_space(uint32_t c);
/* The code point of the UTF-8 character at s[*i] (s valid UTF-8, *i < len
 * on a character boundary); *i moves past it. */
uint32_t std_utf8_decode(const char *s, size_t len, size_t *i);

/* Call a Mist callable from C through vm->call (positional arguments). */
bool std_call(MistVM *vm, Value fn, int argc, const Value *argv, Value *out);

#endif
