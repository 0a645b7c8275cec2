/* effort.c: which functions of a lowered module LLVM optimises
 * (docs/jit.md, "How much LLVM optimises").
 *
 * LLVM's O2 passes and its code generator take most of a compilation's
 * time, and most of that goes on code where they gain nothing: a frame
 * that calls into the interpreter (a primitive or builtin on boxed
 * values, a tensor operation, a fused loop) on its way, microseconds a
 * call, next to which what O2 saves on the frame's own instructions
 * does not show.  So a function is optimised in full only when it can
 * run without the interpreter:
 *
 * - it has a loop that can go round without calling the interpreter
 *   (or a frame that does), or
 * - it has no loop, and can return without calling it (scalar code, a
 *   recursion's base case: fib), unless it is called only by functions
 *   that are not optimised (a scalar helper of a tensor function: it
 *   runs once per call of one, which calls the interpreter anyway);
 *
 * and fused loops and twins (inlined into their frame) always are, and
 * so is a function that calls a recursion that is optimised (fib's
 * caller).
 * "Calling it" counts only common paths: failures and slow paths are
 * the rare side of the branches lower.c weights (likely_br).  Every
 * other function is marked `optnone noinline`: the passes skip it and
 * the code generator makes its code the quick way.  A call of a frame
 * marked so counts as calling the interpreter, so the marks are made
 * again until none is added (a frame that only calls such frames is
 * one too).  A module whose functions are all marked skips the passes
 * and is compiled by a code generator at -O0 (backend.c).  The marks
 * are part of the module, so of the compile cache's key.  A
 * recursion's careful copy (lower.c), run only near the depth limit,
 * comes marked from the lowering.  Once the marks are made, the base
 * cases of the recursions optimised are peeked at (peek.c).
 */
#include <string.h>

#include "ir/map.h"
#include "jit/llvm/cg.h"
#include "lang/gc.h"

/* Calls that go into the interpreter or allocate, each far dearer than
 * the frame's own code: the runtime's, and frames marked quick. */
static bool heavy_call(LLVMValueRef inst, const NodeMap *quick) {
  if (LLVMGetInstructionOpcode(inst) != LLVMCall) return false;
  LLVMValueRef callee = LLVMGetCalledValue(inst);
  if (!callee || LLVMGetValueKind(callee) != LLVMFunctionValueKind) return false;
  if (ir_map_get(quick, callee)) return true;
  size_t n;
  const char *name = LLVMGetValueName2(callee, &n);
  static const char *const heavy[] = {"mist_rt_prim", "mist_rt_call", "mist_rt_fused", "mist_rt_closure",
                                      "mist_rt_tuple"};
  for (size_t i = 0; i < sizeof heavy / sizeof *heavy; i++)
    if (strcmp(name, heavy[i]) == 0) return true;
  return false;
}

static bool block_calls_heavy(LLVMBasicBlockRef bb, const NodeMap *quick) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
    if (heavy_call(i, quick)) return true;
  return false;
}

/* Whether successor k of term is a rare edge: a branch whose weights
 * make the other side the common one. */
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

/* A depth-first walk of a function's blocks from start.  light: only
 * along common edges and into blocks that call nothing heavy (start
 * included), else along every edge.  Whether it finds an edge back to
 * a block on its path (a loop), and whether it reaches a return. */
typedef struct Walk {
  LLVMContextRef C;
  const NodeMap *quick;
  bool light;
  NodeMap state;        /* block -> 1 on the path, 2 done */
  bool loop, ret;
} Walk;

static void walk(Walk *w, LLVMBasicBlockRef start) {
  /* (an explicit stack: a frame can have thousands of blocks) */
  typedef struct Item {
    LLVMBasicBlockRef bb;
    unsigned next;
  } Item;
  if (ir_map_get(&w->state, start) || (w->light && block_calls_heavy(start, w->quick))) return;
  size_t cap = 64, n = 0;
  Item *stack = lang_alloc(cap * sizeof *stack);
  ir_map_set_int(&w->state, start, 1);
  stack[n++] = (Item){start, 0};
  while (n) {
    Item *it = &stack[n - 1];
    LLVMValueRef term = LLVMGetBasicBlockTerminator(it->bb);
    if (it->next == 0 && term && LLVMGetInstructionOpcode(term) == LLVMRet) w->ret = true;
    unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
    if (it->next >= ns) {
      ir_map_set_int(&w->state, it->bb, 2);
      n--;
      continue;
    }
    unsigned k = it->next++;
    if (w->light && rare_edge(w->C, term, k)) continue;
    LLVMBasicBlockRef s = LLVMGetSuccessor(term, k);
    int st = ir_map_int(&w->state, s, 0);
    if (st == 1) w->loop = true;
    if (st || (w->light && block_calls_heavy(s, w->quick))) continue;
    ir_map_set_int(&w->state, s, 1);
    if (n == cap) {
      cap *= 2;
      stack = lang_realloc(stack, cap * sizeof *stack);
    }
    stack[n++] = (Item){s, 0};
  }
}

/* Why fn is worth optimising (the file's comment), the functions in
 * quick being marked: */
typedef enum {
  NOT_WORTH,    /* it cannot run without calling the interpreter */
  LIGHT_RET,    /* it has no loop, and can return without calling it */
  ALWAYS,       /* a loop that turns without it, a fused loop, a twin */
} Worth;

/* A big function of the standard library's derivative code (lower.c
 * tags the frames of stdlib/ad.ms and the rules "mist-library"):
 * jacobian's and hessian's list building, differentiated again under
 * nested derivatives, two to three thousand instructions a frame and
 * its twin, made anew for each signature.  It calls the interpreter on
 * every useful path, yet has light paths (an empty list's loop) that
 * would make it count as worth O2, which took most of the compile time
 * of a script of nested derivatives (seconds).  The rules' own small
 * functions (a product's backpropagator) stay as the rest: they are
 * what a scalar derivative's loop inlines. */
enum { LIBRARY_BIG = 400 };

static bool library_big(LLVMValueRef fn) {
  if (!LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "mist-library", 12)) return false;
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      if (++n > LIBRARY_BIG) return true;
  return false;
}

static Worth worth(LLVMContextRef C, LLVMValueRef fn, const NodeMap *quick) {
  if (library_big(fn)) return NOT_WORTH;
  if (LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMGetEnumAttributeKindForName("alwaysinline", 12)))
    return ALWAYS;
  if (LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "prefer-vector-width", 19)) return ALWAYS;
  /* a loop that turns without the interpreter: among the light blocks,
   * wherever they are (a scalar loop after a call of the runtime) */
  Walk light = {C, quick, true, {0}, false, false};
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && !light.loop; bb = LLVMGetNextBasicBlock(bb))
    walk(&light, bb);
  if (light.loop) return ALWAYS;
  Walk any = {C, quick, false, {0}, false, false};
  walk(&any, LLVMGetEntryBasicBlock(fn));
  if (any.loop) return NOT_WORTH;
  Walk ret = {C, quick, true, {0}, false, false};
  walk(&ret, LLVMGetEntryBasicBlock(fn));
  return ret.ret ? LIGHT_RET : NOT_WORTH;
}

/* Whether every call of fn in its module is made by a function marked
 * quick (and there is one). */
static bool called_by_quick_only(LLVMValueRef fn, const NodeMap *quick) {
  bool any = false;
  for (LLVMUseRef u = LLVMGetFirstUse(fn); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsACallInst(user)) return false;
    LLVMValueRef caller = LLVMGetBasicBlockParent(LLVMGetInstructionParent(user));
    if (!ir_map_get(quick, caller)) return false;
    any = true;
  }
  return any;
}

/* Whether fn calls a function of its module that is not marked quick. */
static bool calls_optimised(LLVMValueRef fn, const NodeMap *quick) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMCall) continue;
      LLVMValueRef callee = LLVMGetCalledValue(i);
      if (callee && LLVMGetValueKind(callee) == LLVMFunctionValueKind && !LLVMIsDeclaration(callee) &&
          !ir_map_get(quick, callee))
        return true;
    }
  return false;
}

/* The functions of its module that fn calls, into out (a set). */
static void callees(LLVMValueRef fn, NodeMap *out) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMCall) continue;
      LLVMValueRef callee = LLVMGetCalledValue(i);
      if (callee && LLVMGetValueKind(callee) == LLVMFunctionValueKind && !LLVMIsDeclaration(callee))
        ir_map_put(out, callee, callee);
    }
}

/* A stack of functions, for the walk below. */
typedef struct FnStack {
  LLVMValueRef *items;
  size_t n, cap;
} FnStack;

/* Push the functions of its module that fn calls. */
static void push_callees(FnStack *st, LLVMValueRef fn) {
  NodeMap next = {0};
  callees(fn, &next);
  for (size_t k = 0; k < next.cap; k++) {
    if (!next.keys[k]) continue;
    if (st->n == st->cap) {
      st->cap = st->cap ? 2 * st->cap : 8;
      st->items = lang_realloc(st->items, st->cap * sizeof *st->items);
    }
    st->items[st->n++] = (LLVMValueRef)next.keys[k];
  }
}

/* Whether fn calls into a recursion of native calls (a function of the
 * module that calls itself, directly or not) that is optimised: such a
 * call runs long without the interpreter, and its caller is optimised
 * with it (so that LLVM may inline its first level, as for fib's
 * caller). */
static bool calls_optimised_recursion(LLVMValueRef fn, const NodeMap *quick) {
  NodeMap direct = {0};
  callees(fn, &direct);
  for (size_t i = 0; i < direct.cap; i++) {
    LLVMValueRef f = (LLVMValueRef)direct.keys[i];
    if (!f || f == fn || ir_map_get(quick, f)) continue;
    /* does f reach itself? */
    NodeMap seen = {0};
    FnStack st = {0};
    push_callees(&st, f);
    while (st.n) {
      LLVMValueRef g = st.items[--st.n];
      if (g == f) return true;
      if (ir_map_get(&seen, g)) continue;
      ir_map_put(&seen, g, g);
      push_callees(&st, g);
    }
  }
  return false;
}

static void mark_quick(LLVMContextRef C, LLVMValueRef fn) {
  unsigned optnone = LLVMGetEnumAttributeKindForName("optnone", 7);
  unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
  /* (a library twin: called, not inlined, as its quick frame would be) */
  LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMGetEnumAttributeKindForName("alwaysinline", 12));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(C, optnone, 0));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(C, noinline, 0));
}

/* Whether bb is a failure's exit as lower.c's fail_here makes it:
 * mist_rt_fail(cx, site) with a constant site, then a return of the
 * constant that says "failed". */
static bool fail_exit(LLVMBasicBlockRef bb) {
  LLVMValueRef c = LLVMGetFirstInstruction(bb), r = c ? LLVMGetNextInstruction(c) : NULL;
  if (!r || LLVMGetNextInstruction(r) || !LLVMIsACallInst(c) || !LLVMIsAReturnInst(r)) return false;
  size_t len;
  LLVMValueRef callee = LLVMGetCalledValue(c);
  const char *name = LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
  return strcmp(name, "mist_rt_fail") == 0 && LLVMGetNumArgOperands(c) == 2 &&
         LLVMIsAConstantInt(LLVMGetOperand(c, 1)) && LLVMGetNumOperands(r) == 1 &&
         LLVMIsConstant(LLVMGetOperand(r, 0)) && LLVMIsNull(LLVMGetOperand(r, 0));
}

/* A quick function's failure exits made one block that takes the site
 * by a phi.  Each exit ends in a return of an aggregate, which LLVM's
 * fast instruction selector cannot make, so each became a block of its
 * own for the slow selector (SelectionDAG): a third of a nested
 * derivative's code generation time, for code that runs at most once a
 * call.  Only quick functions: what O2 makes of the others is as before. */
static void merge_fail_exits(LLVMContextRef C, LLVMValueRef fn) {
  LLVMValueRef cx = NULL, ret = NULL, callee = NULL;
  LLVMTypeRef fnty = NULL;
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    if (!fail_exit(bb)) continue;
    LLVMValueRef c = LLVMGetFirstInstruction(bb);
    if (n == 0) {
      cx = LLVMGetOperand(c, 0);
      ret = LLVMGetOperand(LLVMGetNextInstruction(c), 0);
      callee = LLVMGetCalledValue(c);
      fnty = LLVMGetCalledFunctionType(c);
    }
    if (LLVMGetOperand(c, 0) == cx && LLVMGetOperand(LLVMGetNextInstruction(c), 0) == ret) n++;
  }
  if (n < 2) return;
  LLVMBuilderRef B = LLVMCreateBuilderInContext(C);
  LLVMBasicBlockRef failed = LLVMAppendBasicBlockInContext(C, fn, "failed");
  LLVMPositionBuilderAtEnd(B, failed);
  LLVMValueRef site = LLVMBuildPhi(B, LLVMInt32TypeInContext(C), "site");
  LLVMBuildCall2(B, fnty, callee, (LLVMValueRef[]){cx, site}, 2, "");
  LLVMBuildRet(B, ret);
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb != failed; bb = LLVMGetNextBasicBlock(bb)) {
    if (!fail_exit(bb)) continue;
    LLVMValueRef c = LLVMGetFirstInstruction(bb), r = LLVMGetNextInstruction(c);
    if (LLVMGetOperand(c, 0) != cx || LLVMGetOperand(r, 0) != ret) continue;
    LLVMValueRef at = LLVMGetOperand(c, 1);
    LLVMAddIncoming(site, &at, &bb, 1);
    LLVMInstructionEraseFromParent(r);
    LLVMInstructionEraseFromParent(c);
    LLVMPositionBuilderAtEnd(B, bb);
    LLVMBuildBr(B, failed);
  }
  LLVMDisposeBuilder(B);
}

/* Whether the lowering marked fn optnone itself (before any mark made
 * here): a recursion's careful copy, run only near the depth limit. */
static bool marked_by_lowering(LLVMValueRef fn) {
  return LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMGetEnumAttributeKindForName("optnone", 7));
}

int jit_mark_effort(LLVMModuleRef mod, int *nfns) {
  LLVMContextRef C = LLVMGetModuleContext(mod);
  NodeMap quick = {0};
  int nquick = 0;
  LLVMValueRef entry = NULL;
  *nfns = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn)) ++*nfns;
  for (bool more = true; more;) {
    more = false;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
      if (LLVMIsDeclaration(fn) || ir_map_get(&quick, fn)) continue;
      if (marked_by_lowering(fn)) {
        ir_map_put(&quick, fn, fn);
        nquick++;
        more = true;
        continue;
      }
      /* the entry (the one function the module exports: it unboxes the
       * arguments, calls the root frame and boxes its result, once per
       * call from the interpreter) goes with the root frame, below */
      if (LLVMGetLinkage(fn) != LLVMInternalLinkage) {
        entry = fn;
        continue;
      }
      /* a function that can run without the interpreter is optimised
       * unless it is called only by quick ones, once per such call
       * (which calls the interpreter anyway): a scalar helper */
      Worth w = worth(C, fn, &quick);
      if (w == ALWAYS || (w == LIGHT_RET && !called_by_quick_only(fn, &quick))) continue;
      ir_map_put(&quick, fn, fn);
      nquick++;
      more = true;
    }
  }
  /* (after the rest: whether a recursion is optimised is known now.
   * All are asked before any is unmarked: unmarking one as the map is
   * walked would make the answers depend on the map's order, which
   * follows addresses, and the module differ from run to run.) */
  bool *unmark = lang_alloc((quick.cap + 1) * sizeof *unmark);
  for (size_t i = 0; i < quick.cap; i++)
    unmark[i] = quick.keys[i] && !marked_by_lowering((LLVMValueRef)quick.keys[i]) &&
                calls_optimised_recursion((LLVMValueRef)quick.keys[i], &quick);
  for (size_t i = 0; i < quick.cap; i++)
    if (unmark[i]) {
      quick.vals[i] = NULL;   /* (kept as a key, so the walk stays valid) */
      nquick--;
    }
  if (entry && !calls_optimised(entry, &quick)) {
    ir_map_put(&quick, entry, entry);
    nquick++;
  }
  for (size_t i = 0; i < quick.cap; i++)
    if (quick.keys[i] && quick.vals[i]) {
      mark_quick(C, (LLVMValueRef)quick.keys[i]);
      merge_fail_exits(C, (LLVMValueRef)quick.keys[i]);
    }
  /* (after the marks: only what LLVM optimises is peeked at) */
  jit_peek_base_cases(mod);
  return nquick;
}
