/* rt.c: the runtime functions compiled code calls (docs/jit.md).
 *
 * Compiled code does the common case itself (int and float arithmetic
 * that cannot overflow or divide by zero, comparisons, branches, loops,
 * calls of known functions) and hands everything else to the
 * interpreter's own code through these: a primitive or a builtin on
 * boxed values (mist_rt_prim, mist_rt_call), which computes what eager
 * mode computes and raises its errors with its messages; the recursion
 * guard; Ctrl-C and the time limit; and mist_rt_fail, which adds the
 * span and the traceback line of a failing frame exactly as the
 * interpreter's fail_at does (ir/eval.c).  A Value crosses in memory
 * (Value *), never by value.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "ir/eval.h"
#include "jit/llvm/cg.h"
#include "lang/gc.h"
#include "lang/ops.h"

/* The error at a site: its span unless one is set already, and a
 * traceback line when its frame is a function's or a module's. */
static void mist_rt_fail(const JitCx *cx, int32_t site) {
  MistVM *vm = cx->vm;
  const JitSite *s = &cx->sites[site];
  if (vm->err.span.file < 0 && s->node) vm->err.span = s->node->span;
  IrGraph *g = s->frame;
  if (g->flags & (IRG_FUNCTION | IRG_MODULE))
    lang_trace_push(vm, s->node && s->node->span.file >= 0 ? s->node->span : g->span,
                    g->display ? g->display->data : g->name->data);
}

/* Primitive p of ops.def on boxed arguments. */
static bool mist_rt_prim(const JitCx *cx, int32_t p, int32_t argc, const Value *argv, Value *out) {
  return ev_prim_fn((IrPrim)p)(cx->vm, argc, argv, NULL, out);
}

/* Call fn, any callable value, as the interpreter calls it. */
static bool mist_rt_call(const JitCx *cx, const Value *fn, int32_t argc, const Value *argv, Value *out) {
  return ev_call(cx->vm, *fn, argc, argv, NULL, out);
}

/* Ctrl-C and the host's time limit, on a loop's back edge or a call,
 * when either may be due. */
static bool mist_rt_poll(const JitCx *cx) {
  MistVM *vm = cx->vm;
  if (vm->interrupt) {
    vm->interrupt = 0;
    return lang_raise(vm, "KeyboardInterrupt", "KeyboardInterrupt");
  }
  if (vm->deadline > 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if ((double)ts.tv_sec + ts.tv_nsec * 1e-9 > vm->deadline)
      return lang_raise(vm, "TimeoutError", "the program ran past its time limit of %g seconds", vm->time_limit);
  }
  return true;
}

/* Before a call, where the depth or the C stack is near its end, or
 * Ctrl-C or the time limit may be due: the interpreter's checks, in its
 * order (I_CALL looks at Ctrl-C and the clock, then enter() at the
 * stack). */
static bool mist_rt_call_check(const JitCx *cx) { return mist_rt_poll(cx) && lang_check_stack(cx->vm); }

static bool mist_rt_truthy(const JitCx *cx, const Value *v, bool *out) { return lang_truthy(cx->vm, *v, out); }

/* A closure of the graph held by the constant node of the site, over
 * env (its free variables' values, in ir_free_vars order). */
static void mist_rt_closure(const JitCx *cx, int32_t site, const Value *env, Value *out) {
  *out = v_obj(ev_closure(cx->vm, ir_node_graph(cx->sites[site].node), env));
}

static void mist_rt_tuple(int32_t n, const Value *items, Value *out) {
  ObjSeq *t = lang_tuple_new((size_t)n);
  if (n) memcpy(t->items, items, (size_t)n * sizeof *items);
  *out = v_obj(t);
}

/* The items of *v when it is a tuple of n items, else NULL. */
static const Value *mist_rt_tuple_items(const Value *v, int64_t n) {
  if (!v_is_obj(*v, O_TUPLE) || AS_SEQ(*v)->len != (size_t)n) return NULL;
  return AS_SEQ(*v)->items;
}

/* Whether *v is a closure of graph g (of the site's node, a graph
 * constant) that captured nothing, for a value inference said is one:
 * of g or of another copy inference made of the same graph (compiled
 * code that made it was specialised apart). */
static bool mist_rt_is_closure(const JitCx *cx, const Value *v, int32_t site) {
  return v_is_obj(*v, O_FUNC) && AS_FUNC(*v)->nenv == 0 &&
         ir_graph_origin(AS_FUNC(*v)->graph) == ir_graph_origin(ir_node_graph(cx->sites[site].node));
}

/* A value of another kind than inference said: a bug of inference or
 * of the lowering, reported, never computed with. */
static bool mist_rt_bad_value(const JitCx *cx, const Value *v, int32_t site) {
  const IrType *t = cx->sites[site].type;
  return lang_raise(cx->vm, "RuntimeError", "graph mode: compiled code got a %s where inference expected %s",
                    lang_type_name(*v), t ? ir_type_str(t) : "another type");
}

/* The value of the module global the site's node reads, as the
 * interpreter reads it (its module's binding, else a builtin). */
static bool mist_rt_global(const JitCx *cx, int32_t site, Value *out) {
  MistVM *vm = cx->vm;
  IrNode *n = cx->sites[site].node;
  ObjStr *name = AS_STR(n->in[1]->value);
  ObjModule *m = n->graph->module;
  Value slot;
  if (m && m->names && lang_dict_get(m->names, name, &slot) && m->slots[slot.i].tag != V_UNBOUND) {
    *out = m->slots[slot.i];
    return true;
  }
  if (vm->builtins && lang_dict_get(vm->builtins, name, out)) return true;
  return lang_raise(vm, "NameError", "name '%s' is not defined", name->data);
}

const JitHelper jit_helpers[] = {
#define H(f) {#f, (void *)f}
  H(mist_rt_fail), H(mist_rt_prim), H(mist_rt_call), H(mist_rt_call_check), H(mist_rt_poll),
  H(mist_rt_truthy), H(mist_rt_closure), H(mist_rt_tuple), H(mist_rt_tuple_items),
  H(mist_rt_is_closure), H(mist_rt_bad_value), H(mist_rt_global),
  /* libm, which the interpreter's math builtins call too */
  H(exp), H(log), H(sin), H(cos), H(tanh), H(tan), H(asin), H(acos), H(atan), H(log2), H(log10),
  H(erf), H(lgamma), H(floor), H(ceil), H(fmod), H(pow),
#undef H
};
const int jit_nhelpers = sizeof jit_helpers / sizeof *jit_helpers;
