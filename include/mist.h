/* mist.h: the public C API of Mist.
 *
 * A host program links libmist and drives one or more interpreters
 * through opaque MistVM handles.  There is no global state: separate
 * handles are independent.  No function here exits or aborts the
 * process; each reports failure by its return value, and the error's
 * text (in the usual "FILE:LINE:COL: error: ..." form, with the source
 * line, a caret and the Mist traceback) is then available from
 * mist_error().  The library never prints by itself: program output goes
 * to the write callback (stdout when none is set).
 */
#ifndef MIST_H
#define MIST_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct MistVM MistVM;

/* Status codes returned by the calls below. */
typedef enum {
  MIST_OK = 0,
  MIST_ERROR = 1,        /* an error in the program: syntax, type, runtime, assert */
  MIST_INCOMPLETE = 2,   /* source ended inside a statement (REPL: read more) */
} MistStatus;

/* The version string, such as "0.1.0". */
const char *mist_version(void);

/* Create an interpreter.  argv (may be NULL) is what the program's args()
 * returns; the strings are copied.  Returns NULL only when memory runs
 * out. */
MistVM *mist_new(int argc, const char *const *argv);

/* Release an interpreter.  Its values are reclaimed by the collector. */
void mist_free(MistVM *vm);

/* Send program output (print) to write(user, text, len) instead of stdout. */
void mist_set_write(MistVM *vm, void (*write)(void *user, const char *text, size_t len),
                    void *user);

/* Send what a program draws for people (progress bars) to write(user,
 * text, len) instead of stderr; is_terminal says whether it ends at a
 * terminal, where a bar is redrawn in place (else it prints a line now
 * and then). */
void mist_set_write_err(MistVM *vm, void (*write)(void *user, const char *text, size_t len),
                        void *user, bool is_terminal);

/* Run the file at path as the main module.  MIST_ERROR when the file
 * cannot be read or the program fails. */
MistStatus mist_run_file(MistVM *vm, const char *path);

/* Run source text as part of the main module, as the REPL does: names it
 * defines stay defined for later calls.  name is used in error messages
 * (such as "<stdin>").  When echo is true and the source is a single
 * expression statement whose value is not None, its repr is written
 * followed by a newline.  Returns MIST_INCOMPLETE when the text ends
 * inside a block or bracket, so a REPL can ask for another line. */
MistStatus mist_eval(MistVM *vm, const char *name, const char *source, bool echo);

/* The rendered text of the last error, valid until the next call on vm;
 * "" when there was none. */
const char *mist_error(MistVM *vm);

/* Write the IR of the top-level function `name` of the main module (after
 * mist_run_file or mist_eval defined it) to the write callback.  Flags
 * pick which form: MIST_IR_LOWERED, the IR text as lowered, or
 * MIST_IR_SOURCE, the same graphs printed back as Mist source (one def
 * that parses and runs; docs/ir.md, "As Mist source"). */
enum {
  MIST_IR_LOWERED = 0,
  MIST_IR_SOURCE = 1,   /* print as Mist source instead of IR text */
  MIST_IR_GRAD = 2,     /* print the derivative: the graphs of J(NAME); with MIST_IR_SOURCE, grad(NAME) as a whole program */
  MIST_IR_OPT = 4,      /* after the optimiser (inline, simplify, cse, dce); mist_print_file_ir only */
};
MistStatus mist_print_ir(MistVM *vm, const char *name, int flags);

/* Parse and lower the file at path without running it, and write the IR
 * of its top-level function `name` to the write callback. */
MistStatus mist_print_file_ir(MistVM *vm, const char *path, const char *name, int flags);

/* The same, specialised to nargs argument types (`int`, `float`,
 * `f32[64,784]`...: docs/types.md) with a type on every node, as
 * `mist ir --types` prints it (with MIST_IR_GRAD, the graph of
 * grad(name)); nargs -1 prints as mist_print_file_ir does. */
MistStatus mist_print_file_ir_types(MistVM *vm, const char *path, const char *name, int flags,
                                    int nargs, const char *const *argtypes);

/* Whether text is an argument type mist_print_file_ir_types takes
 * (`int`, `float`, `f32[64,784]`...): NULL when it is, else what is
 * wrong with it, valid until the next call on vm. */
const char *mist_argtype_error(MistVM *vm, const char *text);

/* Print, through the write callback, the optimised LLVM IR that graph
 * mode makes for function `name` called with arguments of the types
 * named (`int`, `float`, `bool`, `f32[64,784]`: docs/types.md):
 * mist_print_file_llvm for a top-level function of the file at path,
 * which is compiled but not run (`mist emit-llvm`), mist_print_llvm for
 * a function the program has bound (the REPL's `:llvm`).  MIST_ERROR
 * with the message in mist_error when the function is not compiled
 * natively for those types (it says why) or cannot be found. */
MistStatus mist_print_file_llvm(MistVM *vm, const char *path, const char *name, int nargs,
                                const char *const *argtypes);
MistStatus mist_print_llvm(MistVM *vm, const char *name, int nargs, const char *const *argtypes);

/* The stages of the pipeline that can be printed as each file (the
 * main program and every module it imports) goes through them: its
 * syntax tree, its IR as lowered, the IR after the optimiser, and that
 * IR specialised by type inference (docs/types.md).  `mist
 * --dump=ast,ir,opt,types FILE.ms` prints them before running. */
enum {
  MIST_DUMP_AST = 1,
  MIST_DUMP_IR = 2,
  MIST_DUMP_OPT = 4,
  MIST_DUMP_TYPES = 8,
};

/* The stages named in a comma-separated list such as "ast,ir"; -1 when
 * a name is not one of them, with *bad pointing at it. */
int mist_dump_stages(const char *list, const char **bad);

/* Print these stages (MIST_DUMP_ flags; 0: none) of each file that later
 * calls compile, to the write callback. */
void mist_set_dump(MistVM *vm, int stages);

/* Graph mode on (true) or off: with it on, every call of a function of
 * the program is compiled for the types of its arguments (or run by the
 * interpreter where it cannot be, with the same results), as
 * set_mode("graph") does from Mist (docs/jit.md). */
void mist_set_graph_mode(MistVM *vm, bool on);

/* Limit each later mist_eval / mist_run_file to `seconds` of wall-clock
 * time (0: no limit).  A program that runs longer stops with a
 * "TimeoutError": "the program ran past its time limit of N seconds". */
void mist_set_time_limit(MistVM *vm, double seconds);

/* After a call that failed because the program called exit() or quit():
 * the exit status it asked for (0 for exit(), n & 255 for exit(n), 1 for
 * exit("message")); mist_error is then that message alone, or "".  -1
 * when the last call did not end that way. */
int mist_exit_code(MistVM *vm);

/* Completions for text, the word before a REPL's cursor: the keywords,
 * globals of the main module and builtins that start with it, or, for
 * "x.y.pre", the attributes of x.y (a module's names, a value's
 * methods) that start with "pre", as whole words ("x.y.premise").
 * Returns a sorted, NULL-terminated array of strings, each and the
 * array malloc'd and owned by the caller, or NULL when there are none.
 * Nothing is evaluated but names and attribute lookups. */
char **mist_complete(MistVM *vm, const char *text);

/* Ask a running evaluation to stop soon with a "KeyboardInterrupt" error.
 * Safe to call from a signal handler or another thread. */
void mist_interrupt(MistVM *vm);

#ifdef __cplusplus
}
#endif

#endif
