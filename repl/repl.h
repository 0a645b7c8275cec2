/* repl.h: what the files of the `mist` command share.
 *
 * host.c holds what every mode of the command needs (output, error
 * reports, reading whole files, Ctrl-C); repl.c holds the interactive
 * loop, the only user of readline.  Nothing here is part of libmist:
 * the command is one host of the public API in include/mist.h.
 */
#ifndef MIST_REPL_H
#define MIST_REPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mist.h"

/* host.c */

/* A new interpreter whose output goes to stdout through stdio, so that
 * flushing stdout before writing to stderr keeps the two in order.
 * argv (argc strings, may be NULL) is what args() returns.  NULL when
 * memory runs out. */
MistVM *repl_vm_new(int argc, const char *const *argv);

/* Print the error of the last call on vm to stderr, after flushing
 * stdout; status says why (MIST_INCOMPLETE: the source ended too soon,
 * reported as such when the API left no text).  name is the source's
 * name for that fallback message. */
void repl_report(MistVM *vm, MistStatus status, const char *name);

/* Read all of f.  Returns a malloc'd, NUL-terminated buffer (the caller
 * frees it) and its length in *len; NULL with errno set on failure. */
char *repl_slurp(FILE *f, size_t *len);

/* Read the file at path, refusing a directory.  As repl_slurp. */
char *repl_read_file(const char *path, size_t *len);

/* Install the SIGINT handler: while an evaluation runs (between
 * repl_begin and repl_end) Ctrl-C calls mist_interrupt(vm); a third
 * Ctrl-C during one evaluation gives up and ends the process as SIGINT
 * does.  Outside an evaluation Ctrl-C is only counted. */
void repl_catch_sigint(MistVM *vm);

/* Bracket one call into the API that runs Mist code.  repl_end returns
 * whether Ctrl-C was pressed meanwhile. */
void repl_begin(void);
bool repl_end(void);

/* Ctrl-C presses counted since the last repl_begin or repl_clear_sigint. */
int repl_sigint_count(void);
void repl_clear_sigint(void);

/* End the process as an uncaught SIGINT does (after flushing stdout),
 * so that a shell sees the program was interrupted. */
void repl_die_of_sigint(void);

/* repl.c */

/* Run the interactive loop on the terminal until :quit or Ctrl-D.
 * Returns the exit status (0). */
int repl_run(MistVM *vm);

#endif
