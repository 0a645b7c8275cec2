/* adgen.h: a seeded generator of random Mist programs for the autodiff
 * suites (test_autodiff.c, test_ad_nested.c).  See adgen.c. */
#ifndef MIST_TESTS_ADGEN_H
#define MIST_TESTS_ADGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "capture.h"

typedef struct AdGenOpts {
  bool containers;    /* lists, tuples and dicts of floats and of functions, comprehensions */
  bool modules;       /* functions of tests/unit/_adgen_lib.ms, called and passed as values */
  bool methods;       /* method and keyword calls */
  int inner;          /* how deep derivative calls (grad, jvp, vjp...) nest inside f: 0 for none */
  bool check;         /* write each of those calls c as _cmp(c, its three numeric twins) */
  bool long_loops;    /* half the loops run 60 to 139 turns (a tape's buffer grows: docs/jit.md) */
  bool loop_bodies;   /* a for loop's body may hold an if/else, an if without else, an
                         if/elif/else or another loop, with or without an if, which may
                         hold a third loop or a break, and be followed by code or an if
                         (each marked by a comment), and a for or while loop an else block */
  bool nested_loops;  /* with loop_bodies, every for loop's body holds another loop */
  bool builtin_values; /* inner derivatives of builtins passed as values (grad(exp), grad(pow,
                          argnums=1), jvp(max, ...)), jacobian of dicts, tuples and lists,
                          hessian and jacobian with argnums tuples */
  bool extras;        /* what the other options never write (adgen.c, extra_expr and
                         extra_statement): dicts whose keys are built strings (f-strings,
                         str(), +; a comprehension, .get with a default), a helper with
                         defaults called by keyword, floats times int tensors, `while True`
                         left by a break, mutual recursion, max and min of 3 or 4 floats,
                         an item of a concatenation with a constant first part, filter,
                         zip and map of three sequences, max/min/sorted with key=, default=
                         and reverse= */
} AdGenOpts;

/* The program for seed: helpers, then f(x[, y[, z]]).  Returns the
 * number of f's parameters.  The same seed and options give the same
 * program; with check set, the same program with every derivative call
 * c written _cmp(c, c1, c2, c3), its numeric twins (c with grad written
 * _ngrad, _mgrad, _ograd...), which a checker defines. */
int adgen_program(uint64_t seed, const AdGenOpts *o, Buf *b);

/* A point in [-2, 2]^np as a Mist tuple of floats. */
void adgen_point(uint64_t seed, int np, Buf *b);

/* printf into a buffer */
void adgen_printf(Buf *b, const char *fmt, ...);

#endif
