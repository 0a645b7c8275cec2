/* effort.c: which functions of a lowered module LLVM optimises
 * (docs/jit.md, "How much LLVM optimises").
 *
 * LLVM's O2 passes and its code generator take most of a compilation's
 * time, and most of that goes on code where they gain nothing: a frame
 * that calls into the interpreter (a primitive or builtin on boxed
 * values, a tensor operation, a fused loop) on every path through it
 * spends its time there, microseconds a call, next to which what O2
 * saves on the frame's own few instructions does not show.  Such a
 * function is marked `optnone noinline`: the passes skip it and the
 * code generator makes its code the quick way (FastISel, no machine
 * optimisations).  Every other function is optimised in full: one with
 * a loop, one that may return without calling the interpreter (scalar
 * code, which O2 makes fast), a fused loop, a twin that is to be
 * inlined.  The marks are part of the module's text, so of the compile
 * cache's key.
 */
#include <string.h>

#include "ir/map.h"
#include "jit/llvm/cg.h"
#include "lang/gc.h"

/* Calls of the runtime that go into the interpreter or allocate: each
 * costs far more than the frame's own code. */
static bool heavy_call(LLVMValueRef inst) {
  if (LLVMGetInstructionOpcode(inst) != LLVMCall) return false;
  LLVMValueRef callee = LLVMGetCalledValue(inst);
  if (!callee || LLVMGetValueKind(callee) != LLVMFunctionValueKind) return false;
  size_t n;
  const char *name = LLVMGetValueName2(callee, &n);
  static const char *const heavy[] = {"mist_rt_prim", "mist_rt_call", "mist_rt_fused", "mist_rt_closure",
                                      "mist_rt_tuple"};
  for (size_t i = 0; i < sizeof heavy / sizeof *heavy; i++)
    if (strcmp(name, heavy[i]) == 0) return true;
  return false;
}

static bool block_calls_heavy(LLVMBasicBlockRef bb) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
    if (heavy_call(i)) return true;
  return false;
}

/* Whether successor k of term is a rare edge: a branch whose weights
 * (lower.c's likely_br) make the other side the common one. */
static bool rare_edge(LLVMContextRef C, LLVMValueRef term, unsigned k) {
  if (LLVMGetNumSuccessors(term) != 2) return false;
  LLVMValueRef prof = LLVMGetMetadata(term, LLVMGetMDKindIDInContext(C, "prof", 4));
  if (!prof || LLVMGetMDNodeNumOperands(prof) != 3) return false;
  LLVMValueRef ops[3];
  LLVMGetMDNodeOperands(prof, ops);
  if (!ops[1] || !ops[2] || !LLVMIsAConstantInt(ops[1]) || !LLVMIsAConstantInt(ops[2])) return false;
  unsigned long long w[2] = {LLVMConstIntGetZExtValue(ops[1]), LLVMConstIntGetZExtValue(ops[2])};
  return w[k] * 100 < w[1 - k];
}

/* A depth-first walk of fn's blocks from its entry.  Whether it has a
 * loop (an edge back to a block on the walk's path, every edge
 * followed), or, with common_only, whether a return is reached along
 * common edges without passing a block that calls the interpreter. */
typedef struct Walk {
  LLVMContextRef C;
  NodeMap state;        /* block -> 1 on the path, 2 done */
  bool common_only;
  bool found;
} Walk;

static void walk(Walk *w, LLVMBasicBlockRef bb) {
  /* (an explicit stack: a frame can have thousands of blocks) */
  typedef struct Item { LLVMBasicBlockRef bb; unsigned next; } Item;
  size_t cap = 64, n = 0;
  Item *stack = lang_alloc(cap * sizeof *stack);
  ir_map_set_int(&w->state, bb, 1);
  stack[n++] = (Item){bb, 0};
  while (n && !w->found) {
    Item *it = &stack[n - 1];
    LLVMValueRef term = LLVMGetBasicBlockTerminator(it->bb);
    if (w->common_only && it->next == 0 && term && LLVMGetInstructionOpcode(term) == LLVMRet) {
      w->found = true;
      break;
    }
    unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
    if (it->next >= ns) {
      ir_map_set_int(&w->state, it->bb, 2);
      n--;
      continue;
    }
    unsigned k = it->next++;
    if (w->common_only && rare_edge(w->C, term, k)) continue;
    LLVMBasicBlockRef s = LLVMGetSuccessor(term, k);
    int st = ir_map_int(&w->state, s, 0);
    if (st == 1 && !w->common_only) w->found = true;   /* a back edge */
    if (st || (w->common_only && block_calls_heavy(s))) continue;
    ir_map_set_int(&w->state, s, 1);
    if (n == cap) {
      cap *= 2;
      stack = lang_realloc(stack, cap * sizeof *stack);
    }
    stack[n++] = (Item){s, 0};
  }
}

static bool has_attr(LLVMValueRef fn, const char *kind) {
  unsigned k = LLVMGetEnumAttributeKindForName(kind, strlen(kind));
  return LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, k) != NULL;
}

/* Whether fn is worth optimising (the file's comment). */
static bool worth_optimising(LLVMContextRef C, LLVMValueRef fn) {
  if (has_attr(fn, "alwaysinline")) return true;
  if (LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "prefer-vector-width", 19)) return true;
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  Walk loop = {C, {0}, false, false};
  walk(&loop, entry);
  if (loop.found) return true;
  if (block_calls_heavy(entry)) return false;
  Walk ret = {C, {0}, true, false};
  walk(&ret, entry);
  return ret.found;
}

static void mark_quick(LLVMContextRef C, LLVMValueRef fn) {
  unsigned optnone = LLVMGetEnumAttributeKindForName("optnone", 7);
  unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(C, optnone, 0));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(C, noinline, 0));
}

int jit_mark_effort(LLVMModuleRef mod, int *nfns) {
  LLVMContextRef C = LLVMGetModuleContext(mod);
  int quick = 0;
  LLVMValueRef entry = NULL;
  *nfns = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    ++*nfns;
    /* the entry (the one function the module exports) unboxes the
     * arguments, calls the root frame and boxes its result, once per
     * call from the interpreter: it is decided with the others */
    if (LLVMGetLinkage(fn) != LLVMInternalLinkage) {
      entry = fn;
      continue;
    }
    if (worth_optimising(C, fn)) continue;
    mark_quick(C, fn);
    quick++;
  }
  if (entry && quick == *nfns - 1) {
    mark_quick(C, entry);
    quick++;
  }
  return quick;
}
