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

/* A reduction a fused loop's output feeds, computed as the output is:
 * of all of it, or over one axis or a run of adjacent axes (the output
 * seen as outer x len x after, reduced over len).  FR_COLUMNS is or'ed
 * into a sum or mean over the leading axes (not all), which eager mode
 * adds as column sums (dev_sum_rows) where it adds the others pairwise
 * (dev_sum).  The loop's output's DType, shifted by FR_DTYPE_SHIFT, is
 * or'ed in too: what is reduced, where the result's dtype may differ
 * (argmax's i64, any's bool, an integer sum's i64). */
typedef enum { FR_NONE, FR_SUM, FR_MEAN, FR_MAX, FR_MIN, FR_PROD, FR_ARGMAX, FR_ARGMIN, FR_ANY, FR_ALL } FuseReduce;
enum { FR_COLUMNS = 16, FR_OP_MASK = 15, FR_DTYPE_SHIFT = 8 };

/* The address of the function or data compiled code calls or reads by
 * the name `name` (a JitElfResolve, ud unused): the runtime's helpers
 * (mist_rt_*), the host's vector math functions fused loops call
 * (mist_vec_* and mist_vec256_*, as jit/llvm/fuse.c names them) and
 * libm's functions the interpreter's builtins call, else whatever the
 * process defines by that name (memcpy, memset, libm's others); NULL
 * for none. */
void *jit_rt_symbol(void *ud, const char *name);

#endif
