/* tape.h: the memory of a loop's backward pass in compiled code
 * (tape.c; docs/jit.md, "The tape of a loop's backward pass"). */
#ifndef MIST_JIT_TAPE_H
#define MIST_JIT_TAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "jit/backend.h"

/* A tape's buffer: int64 words of the collector's memory, word 0 the
 * count of entries written, word 1 of those there is room for, then
 * the entries. */
enum { JIT_TAPE_HEAD = 2 };

/* Where entry count of the tape whose buffer is *owner goes (0 for
 * none yet), each entry entry_bytes long: *owner becomes the buffer
 * written, a new one when it had no room or when entries past count
 * were written already (another path that took the same tape).  A new
 * buffer is scanned by the collector when scanned is set. */
uint8_t *mist_rt_tape_push(int64_t *owner, int64_t count, int64_t entry_bytes, bool scanned);

/* The captured values of *v when it is a closure of the graph of the
 * site's node (a graph constant), else NULL. */
const Value *mist_rt_env_of(const JitCx *cx, const Value *v, int32_t site);

#endif
