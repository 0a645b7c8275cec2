/* jit_int.h: what the files of graph mode's runtime share (run.c, load.c). */
#ifndef MIST_JIT_JIT_INT_H
#define MIST_JIT_JIT_INT_H

#include "jit/backend.h"
#include "jit/jit.h"

/* The code generator, opened on the first call (once per process);
 * NULL with *why (a static string) when it cannot be. */
const JitBackend *jit_load_backend(const char **why);

#endif
