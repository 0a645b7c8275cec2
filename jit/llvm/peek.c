/* peek.c: a recursion's base case tested before its native calls
 * (docs/jit.md, "Frames").
 *
 * A recursive frame's calls of itself end, at the leaves, in calls
 * that do almost nothing: fib(1) compares its argument and returns it.
 * Half of fib's calls are such, and each costs a native call and
 * return.  So where a frame begins with a test whose one side returns
 * at once, computed from the parameters alone (no call, no store, no
 * failure on the way), its calls go through a small function, inlined at each
 * call, that makes that test and returns that value itself, and calls
 * the frame only otherwise.  Nothing the frame would have done is
 * skipped: the caller has already counted and checked the depth (the
 * guard stays before the call), and the frame's own first steps are
 * pure.  Only frames that recursion's twins call are peeked at, and
 * only from functions LLVM optimises.
 */
#include <stdio.h>
#include <string.h>

#include "jit/llvm/cg.h"
#include "lang/gc.h"

enum { MAXPATH = 48 };   /* instructions followed before giving up */

/* The pure instructions the path may copy: no memory (an address is
 * computed, not read), no call but the overflow intrinsics, nothing
 * that can trap (no division). */
static bool pure(LLVMValueRef i) {
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMAnd: case LLVMOr: case LLVMXor:
  case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMICmp: case LLVMFCmp:
  case LLVMFAdd: case LLVMFSub: case LLVMFMul: case LLVMFNeg:
  case LLVMTrunc: case LLVMZExt: case LLVMSExt: case LLVMSIToFP: case LLVMBitCast:
  case LLVMSelect: case LLVMExtractValue: case LLVMInsertValue: case LLVMGetElementPtr:
    return true;
  case LLVMCall: {
    LLVMValueRef f = LLVMGetCalledValue(i);
    if (!f || LLVMGetValueKind(f) != LLVMFunctionValueKind) return false;
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    return strncmp(name, "llvm.", 5) == 0 && strstr(name, ".with.overflow.");
  }
  default:
    return false;
  }
}

/* A straight path of blocks, as the peek copies it: old values and the
 * copies they stand for. */
typedef struct Path {
  LLVMValueRef from[MAXPATH], to[MAXPATH];
  int n;
} Path;

static LLVMValueRef mapped(const Path *p, LLVMValueRef v) {
  for (int i = 0; i < p->n; i++)
    if (p->from[i] == v) return p->to[i];
  return NULL;
}

/* v as the copy sees it: a parameter of fn as w's, an instruction
 * copied, a constant itself; NULL for anything else (an alloca, a load). */
static LLVMValueRef remap(const Path *p, LLVMValueRef fn, LLVMValueRef w, LLVMValueRef v) {
  if (LLVMIsAArgument(v)) {
    for (unsigned k = 0; k < LLVMCountParams(fn); k++)
      if (LLVMGetParam(fn, k) == v) return LLVMGetParam(w, k);
    return NULL;
  }
  if (LLVMIsAInstruction(v)) return mapped(p, v);
  if (LLVMIsAConstant(v) && !LLVMIsAGlobalValue(v)) return v;
  return NULL;
}

/* Follow fn's blocks from bb, coming from prev, through pure
 * instructions and unconditional branches, copying them into w at the
 * builder (when B is not NULL: else only looking), to the first other
 * terminator, which is returned (NULL if something with an effect, or
 * too long a path, is met).  Allocas and loads (which change nothing)
 * are passed over, and so is what uses them: they are not copied, and
 * what is copied must not need them.  A branch the lowering marks
 * `mist.same` has the same computation on both sides (a frame's
 * careful copy, lower.c): it is followed to its first. */
static LLVMValueRef follow(LLVMContextRef C, LLVMValueRef fn, LLVMValueRef w, LLVMBuilderRef B, Path *p,
                           LLVMBasicBlockRef bb, LLVMBasicBlockRef prev) {
  unsigned same = LLVMGetMDKindIDInContext(C, "mist.same", 9);
  for (int steps = 0; steps < MAXPATH; steps++) {
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      LLVMOpcode op = LLVMGetInstructionOpcode(i);
      if (op == LLVMBr && (!LLVMIsConditional(i) || LLVMGetMetadata(i, same))) {
        prev = bb;
        bb = LLVMGetSuccessor(i, 0);
        break;
      }
      if (op == LLVMBr || op == LLVMRet) return i;
      if (op == LLVMAlloca || (op == LLVMLoad && !LLVMGetVolatile(i))) continue;
      if (p->n == MAXPATH) return NULL;
      LLVMValueRef copy;
      if (op == LLVMPHI) {
        /* the value from the block the path came from */
        LLVMValueRef in = NULL;
        for (unsigned k = 0; k < LLVMCountIncoming(i); k++)
          if (LLVMGetIncomingBlock(i, k) == prev) in = LLVMGetIncomingValue(i, k);
        if (!in || !(copy = remap(p, fn, w, in))) continue;
      } else {
        if (!pure(i)) return NULL;
        int nops = LLVMGetNumOperands(i);
        bool have = true;
        for (int k = 0; k < nops && have; k++) {
          LLVMValueRef o = LLVMGetOperand(i, k);
          if (LLVMGetValueKind(o) == LLVMFunctionValueKind) continue;   /* an intrinsic called */
          have = remap(p, fn, w, o) != NULL;
        }
        if (!have) continue;
        copy = i;
        if (B) {
          copy = LLVMInstructionClone(i);
          for (int k = 0; k < nops; k++) {
            LLVMValueRef o = LLVMGetOperand(i, k);
            if (LLVMGetValueKind(o) != LLVMFunctionValueKind) LLVMSetOperand(copy, (unsigned)k, remap(p, fn, w, o));
          }
          LLVMInsertIntoBuilder(B, copy);
        }
      }
      p->from[p->n] = i;
      p->to[p->n++] = copy;
    }
  }
  return NULL;
}

/* Whether fn begins with a test of which side leaf returns straight
 * away, purely: the test's branch then. */
static LLVMValueRef base_case(LLVMContextRef C, LLVMValueRef fn, unsigned *leaf) {
  Path p = {.n = 0};
  LLVMValueRef br = follow(C, fn, fn, NULL, &p, LLVMGetEntryBasicBlock(fn), NULL);
  if (!br || LLVMGetInstructionOpcode(br) != LLVMBr || !remap(&p, fn, fn, LLVMGetCondition(br))) return NULL;
  for (unsigned k = 0; k < 2; k++) {
    Path q = p;
    LLVMValueRef ret = follow(C, fn, fn, NULL, &q, LLVMGetSuccessor(br, k), LLVMGetInstructionParent(br));
    if (ret && LLVMGetInstructionOpcode(ret) == LLVMRet && LLVMGetNumOperands(ret) == 1 &&
        remap(&q, fn, fn, LLVMGetOperand(ret, 0))) {
      *leaf = k;
      return br;
    }
  }
  return NULL;
}

static bool has_attr(LLVMValueRef fn, const char *name) {
  return LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                     LLVMGetEnumAttributeKindForName(name, strlen(name))) != NULL;
}

/* The call instructions in optimised functions that call fn, into
 * calls (*n of them); whether a twin (alwaysinline) is among their
 * functions. */
static bool callers(LLVMValueRef fn, LLVMValueRef **calls, int *n) {
  bool twin = false;
  int cap = 0;
  *n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(fn); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef c = LLVMGetUser(u);
    if (!LLVMIsACallInst(c) || LLVMGetCalledValue(c) != fn) continue;
    LLVMValueRef in = LLVMGetBasicBlockParent(LLVMGetInstructionParent(c));
    if (has_attr(in, "optnone")) continue;
    twin |= has_attr(in, "alwaysinline");
    if (*n == cap) {
      cap = cap ? 2 * cap : 8;
      *calls = lang_realloc(*calls, (size_t)cap * sizeof **calls);
    }
    (*calls)[(*n)++] = c;
  }
  return twin;
}

/* The peek of fn, whose base case is the side leaf of br. */
static LLVMValueRef make_peek(LLVMModuleRef mod, LLVMContextRef C, LLVMValueRef fn, LLVMValueRef br,
                              unsigned leaf) {
  size_t len;
  const char *name = LLVMGetValueName2(fn, &len);
  char pname[300];
  snprintf(pname, sizeof pname, "%.*s.peek", (int)(len < 200 ? len : 200), name);
  LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
  LLVMValueRef w = LLVMAddFunction(mod, pname, fty);
  LLVMSetLinkage(w, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(w, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(C, LLVMGetEnumAttributeKindForName("alwaysinline", 12), 0));
  LLVMBuilderRef B = LLVMCreateBuilderInContext(C);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(C, w, "entry");
  LLVMBasicBlockRef base = LLVMAppendBasicBlockInContext(C, w, "base");
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(C, w, "call");
  LLVMPositionBuilderAtEnd(B, entry);
  Path p = {.n = 0};
  follow(C, fn, w, B, &p, LLVMGetEntryBasicBlock(fn), NULL);
  LLVMValueRef cond = remap(&p, fn, w, LLVMGetCondition(br));
  if (leaf == 0) LLVMBuildCondBr(B, cond, base, other);
  else LLVMBuildCondBr(B, cond, other, base);
  LLVMPositionBuilderAtEnd(B, base);
  LLVMValueRef ret = follow(C, fn, w, B, &p, LLVMGetSuccessor(br, leaf), LLVMGetInstructionParent(br));
  LLVMBuildRet(B, remap(&p, fn, w, LLVMGetOperand(ret, 0)));
  LLVMPositionBuilderAtEnd(B, other);
  unsigned np = LLVMCountParams(w);
  LLVMValueRef *args = lang_alloc((np ? np : 1) * sizeof *args);
  for (unsigned k = 0; k < np; k++) args[k] = LLVMGetParam(w, k);
  LLVMBuildRet(B, LLVMBuildCall2(B, fty, fn, args, np, ""));
  LLVMDisposeBuilder(B);
  return w;
}

int jit_peek_base_cases(LLVMModuleRef mod) {
  LLVMContextRef C = LLVMGetModuleContext(mod);
  LLVMValueRef *calls = NULL;
  int npeeked = 0;
  /* (the functions as they were: the peeks are added at the end) */
  LLVMValueRef last = LLVMGetLastFunction(mod);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = fn == last ? NULL : LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn) || LLVMGetLinkage(fn) != LLVMInternalLinkage || has_attr(fn, "alwaysinline") ||
        has_attr(fn, "optnone"))
      continue;
    int n;
    if (!callers(fn, &calls, &n)) continue;
    unsigned leaf;
    LLVMValueRef br = base_case(C, fn, &leaf);
    if (!br) continue;
    LLVMValueRef w = make_peek(mod, C, fn, br, leaf);
    /* (the callee is a call's last operand) */
    for (int i = 0; i < n; i++) LLVMSetOperand(calls[i], (unsigned)LLVMGetNumOperands(calls[i]) - 1, w);
    npeeked++;
  }
  return npeeked;
}
