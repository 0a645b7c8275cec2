/* rt.h: the runtime functions compiled code calls (rt.c, matmul.c,
 * tape.c), on the runtime's side of graph mode, where they exist
 * without LLVM: what links a compiled object, from LLVM or from the
 * compile cache, binds its calls to them by name (docs/jit.md, "How a
 * function compiles").
 */
#ifndef MIST_JIT_RT_H
#define MIST_JIT_RT_H

/* The most inputs and operations one fused loop takes. */
#define FUSE_MAX_INPUTS 32
#define FUSE_MAX_NODES 64

/* A reduction a fused loop's output feeds, summed as it is computed: of
 * the whole output, over its first axis (sum(x, axis=0): the column sums
 * of rows x cols, cols the product of the other dims), or over its last
 * (rows x cols, cols the last dim). */
typedef enum { FR_NONE, FR_SUM, FR_MEAN, FR_SUM_FIRST, FR_MEAN_FIRST, FR_SUM_LAST, FR_MEAN_LAST } FuseReduce;

/* The address of the function or data compiled code calls or reads by
 * the name `name` (a JitElfResolve, ud unused): the runtime's helpers
 * (mist_rt_*), the host's vector math functions fused loops call
 * (mist_vec_* and mist_vec256_*, as jit/llvm/fuse.c names them) and
 * libm's functions the interpreter's builtins call, else whatever the
 * process defines by that name (memcpy, memset, libm's others); NULL
 * for none. */
void *jit_rt_symbol(void *ud, const char *name);

#endif
