/* tape.h: the memory of a loop's backward pass in compiled code
 * (tape.c; docs/jit.md, "The tape of a loop's backward pass"). */
#ifndef MIST_JIT_LLVM_TAPE_H
#define MIST_JIT_LLVM_TAPE_H

#include <stdint.h>

#include "jit/backend.h"

/* A tape's buffer: an int64 tensor whose word 0 counts the entries
 * written, word 1 those there is room for, and whose entries follow. */
enum { JIT_TAPE_HEAD = 2 };

/* Where entry count of the tape whose buffer is *owner goes (an
 * ObjTensor *, 0 for none yet), each entry entry_bytes long: *owner
 * becomes the buffer written, a new one when it had no room or when
 * entries past count were written already (another path that took the
 * same tape).  NULL, with the error raised, when memory runs out. */
uint8_t *mist_rt_tape_push(const JitCx *cx, int64_t *owner, int64_t count, int64_t entry_bytes);

/* The captured values of *v when it is a closure of the graph of the
 * site's node (a graph constant), else NULL. */
const Value *mist_rt_env_of(const JitCx *cx, const Value *v, int32_t site);

#endif
