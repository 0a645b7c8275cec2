/* fuse.h: fused elementwise loops over tensors (fuse.c), for the
 * lowering (lower.c); the runtime that runs them is jit/rt.c
 * (docs/jit.md, "Fused elementwise loops").
 */
#ifndef MIST_JIT_LLVM_FUSE_H
#define MIST_JIT_LLVM_FUSE_H

#include <llvm-c/Core.h>

#include "ir/infer.h"
#include "ir/map.h"
#include "jit/rt.h"


/* How an input of a loop is read at element (row r, column c) of the
 * output, whose shape is cut into rows x cols (cols: the product of its
 * last dims): a tensor of the output's shape at r * cols + c, one of its
 * last dims (broadcast over the rows) at c, one of its first dims
 * (broadcast over the columns) at r, a one-element tensor at 0; a
 * Python float or int, the same everywhere. */
typedef enum { FI_FULL, FI_INNER, FI_OUTER, FI_ONE, FI_FLOAT, FI_INT } FuseInKind;

/* The dtype of a Python number input: it takes the dtype of what it
 * meets, as in eager mode.  FUSE_SMALL_INT: an int constant that fits
 * in i32 (which it may meet). */
enum { FUSE_FLOAT = -1, FUSE_INT = -2, FUSE_SMALL_INT = -3 };

typedef struct FuseIn {
  IrNode *node;
  FuseInKind kind;
  int slot;              /* its index among the tensors, or among the numbers */
  int dtype;             /* a tensor's DType; a number's FUSE_FLOAT, FUSE_INT... */
} FuseIn;

/* One loop: the nodes it computes (in their graph's order, the last
 * the loop's output) and its inputs; the root is the node whose value
 * the loop gives: the last of nodes, or a reduction of it (reduce). */
typedef struct FuseGroup {
  IrNode *root;
  IrNode **nodes;
  int nnodes;
  FuseIn *ins;
  int nins, ntensors, nnumbers;
  int bits;              /* the vectors' width: 512 (AVX-512) or 256 (AVX2) */
  int lanes;             /* per vector: `bits` of the widest dtype the loop touches */
  IrType *type;          /* the loop's output's: every dim known */
  int64_t rows, cols;
  FuseReduce reduce;
  int red_axis, red_last;   /* the axes reduced over, red_axis..red_last, or -1: all */
  int64_t red_len, red_after;   /* its length, and the product of the dims after it */
  bool columns;          /* a sum or mean over axis 0 (FR_COLUMNS) */
  IrType *result;        /* the root's type: type, or the reduction's */
  int reuse;             /* the tensor (slot) whose buffer the output takes, or -1 */
} FuseGroup;

/* The vectors fused loops use, in bits, from the target CPU's features
 * (the host's, or MIST_JIT_CPU's): 512 with AVX-512F, 256 with AVX2 and
 * FMA, else 0 (nothing fused).  A transcendental is fused only where
 * eager mode calls a vector function of that width (devices/cpu/
 * vmath.h), whose lanes the loop calls. */
int jit_fuse_width(void);
/* Whether compiled code fuses loops: jit_fuse_width() > 0. */
bool jit_fuse_enabled(void);

/* The loops of graph g's own nodes: each node fused, root or not, to
 * its FuseGroup in *groups.  A sum, mean, max, min, prod, argmax,
 * argmin, any or all of a whole chain's output (of all of it, over one
 * axis or over adjacent axes, keepdims or not) is computed with its
 * loop, block by block, in the order and with the bits of eager mode's
 * reduction (jit/rt.c).  uses: the interpreter's count of uses
 * (ev_count_uses); type_of gives a node's inferred type. */
void jit_fuse_plan(IrGraph *g, const NodeMap *uses, IrType *(*type_of)(void *ud, IrNode *n), void *ud,
                   NodeMap *groups);

/* The loop of group fg, a new function of M named name:
 *   void (ptr tensors, ptr numbers, ptr out, i64 r0, i64 r1, i64 c0, i64 c1)
 * computes the output's rows [r0, r1) and columns [c0, c1), reading the
 * inputs' data from tensors[] and the numbers' bits (a double, or an
 * i64 for FI_INT) from numbers[]. */
LLVMValueRef jit_fuse_kernel(LLVMModuleRef M, const FuseGroup *fg, const char *name);

/* A line for MIST_JIT_LOG saying what the loop computes. */
const char *jit_fuse_describe(const FuseGroup *fg);

#endif
