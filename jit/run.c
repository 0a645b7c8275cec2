/* run.c: graph mode's side of a call, and the builtins `jit` and
 * `set_mode` (docs/jit.md).
 *
 * A call of a function that graph mode compiles (every user function in
 * graph mode, or one made by jit(f)) comes here from the interpreter
 * (IrJitInterface, ir/eval.h).  Its signature is the types of its bound
 * arguments and of the values its closure captured, as inference sees
 * them but with the values of ints, bools and strs left out (so that
 * fib(30) and fib(29) share their code) and closures typed by their
 * graph alone (below).  Each function keeps the code made for
 * each signature it was called with: native code, or a note that the
 * interpreter runs it and why.  A new signature is compiled once:
 * specialised by inference (ir_infer) and lowered by the code generator;
 * whatever cannot be compiled runs in the interpreter, with the same
 * results and errors, never failing because of graph mode.
 * MIST_JIT_LOG=1 prints a line per compilation: the function, its
 * signature and result type, the time taken and, for the interpreter,
 * why; for native code, where the time went and whether the code came
 * from the compile cache (jit/llvm/cache.c).
 */
#include <alloca.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/eval.h"
#include "ir/map.h"
#include "jit/jit_int.h"
#include "lang/gc.h"

/* Signatures a function compiles for; calls with others run in the
 * interpreter (a function called with ever new closures would otherwise
 * compile on every call). */
enum { MAX_SIGS = 8 };

/* The nodes inference may type for one compilation (about half a
 * second on the machine this was written on): the fixed point of a
 * higher derivative (jacobian of grad of a loop) can take seconds, and
 * the interpreter runs such a function at once instead.  Counted in
 * nodes, not time, so that what compiles is the same on every run. */
enum { MAX_INFER_WORK = 200000 };

typedef struct JitEntry {
  IrType **sig;          /* the types of the parameters, then of the free variables */
  JitCode *code;         /* native code, or NULL: the interpreter runs it */
  const char *why;       /* why the interpreter runs it */
  bool stale;            /* a global it assumed has changed: compiled again */
  struct JitEntry *next;
} JitEntry;

/* The code of one function (graph), by signature. */
typedef struct JitFn {
  JitEntry *entries;
  int n;
  bool full_said;        /* the log said that MAX_SIGS was reached */
} JitFn;

typedef struct JitState {
  NodeMap fns;           /* graph -> JitFn */
  bool log;              /* MIST_JIT_LOG=1 */
  bool strict;           /* MIST_JIT_STRICT=1: a type inference gave wrongly is an error */
  bool made_jit;         /* some jit(f) was made: the interpreter looks at calls */
  const JitBackend *backend;
  void *cg;              /* the code generator of this VM, opened on the first compilation */
  const char *no_cg;     /* why there is none */
  double open_ms;        /* the time opening it took (loading LLVM) */
} JitState;

static JitState *state(MistVM *vm) { return vm->jit_state; }

/* ---- signatures ----
 *
 * The type of an argument in a signature: the type of a value with the
 * values of ints, bools, strs and slices left out, lists of any length
 * (a list of more than MAX_SCAN items, or a dict of more, is `any`
 * inside, so that matching a call against a signature never walks a
 * big list), a closure that captured nothing typed by its graph, and
 * one that captured values by its graph and their types (the same type
 * for every closure of that graph over values of those types, so that a
 * function called with a new closure on every call, a backpropagator,
 * is compiled once; ir_infer_closure_sig), so that the compiled code
 * calls it natively (`grad(f)`, a closure over f, called in a loop).
 * A closure is `any` where one of its captured values is, and where its
 * graph is the compiled function's own or one inside it: inference
 * would take its captured values for the compiled function's. */

enum { MAX_SCAN = 16, MAX_NEST = 8 };

static IrType *sig_type_at(MistVM *vm, IrGraph *self, Value v, int depth);

static IrType *closure_sig(MistVM *vm, IrGraph *self, ObjFunc *f, int depth) {
  IrGraph *g = f->graph;
  ir_free_vars(g);
  if (g->nfv != f->nenv || (self && ir_is_ancestor(self, g))) return &ir_t_any;
  IrType **fvtypes = lang_alloc((size_t)g->nfv * sizeof *fvtypes);
  for (int i = 0; i < g->nfv; i++)
    if ((fvtypes[i] = sig_type_at(vm, self, f->env[i], depth + 1))->kind == IT_ANY) return &ir_t_any;
  return ir_infer_closure_sig(vm, g, fvtypes);
}

static IrType *sig_type_at(MistVM *vm, IrGraph *self, Value v, int depth) {
  if (depth > MAX_NEST) return &ir_t_any;
  switch (v.tag) {
  case V_NONE: return &ir_t_none;
  case V_BOOL: return &ir_t_bool;
  case V_INT: return &ir_t_int;
  case V_FLOAT: return &ir_t_float;
  case V_UNBOUND: return &ir_t_unbound;
  case V_OBJ: break;
  }
  switch (v.o->kind) {
  case O_STR: return &ir_t_str;
  case O_SLICE: return &ir_t_slice;
  case O_FUNC: return AS_FUNC(v)->nenv ? closure_sig(vm, self, AS_FUNC(v), depth) : ir_type_closure(AS_FUNC(v)->graph, NULL);
  case O_TUPLE: {
    ObjSeq *t = AS_SEQ(v);
    if (t->len > 64) return &ir_t_any;
    IrType *items[64];
    for (size_t i = 0; i < t->len; i++) items[i] = sig_type_at(vm, self, t->items[i], depth + 1);
    return ir_type_tuple((int)t->len, items);
  }
  case O_LIST: {
    ObjSeq *l = AS_SEQ(v);
    IrType *item = l->len > MAX_SCAN ? &ir_t_any : &ir_t_never;
    for (size_t i = 0; i < l->len && item->kind != IT_ANY; i++)
      item = ir_type_join(item, sig_type_at(vm, self, l->items[i], depth + 1));
    return ir_type_list(-1, &item);
  }
  case O_DICT: {
    ObjDict *d = AS_DICT(v);
    if (d->len > MAX_SCAN) return &ir_t_any;
    ObjStr *keys[MAX_SCAN];
    IrType *vals[MAX_SCAN];
    for (size_t i = 0; i < d->len; i++) {
      keys[i] = d->entries[i].key;
      vals[i] = sig_type_at(vm, self, d->entries[i].value, depth + 1);
    }
    return ir_type_dict((int)d->len, keys, vals);
  }
  case O_TENSOR: case O_BUILTIN: case O_MODULE: case O_RANGE: return ir_type_of_value(v);
  default: return &ir_t_any;
  }
}

/* v's type in a signature of graph self (NULL: none compiled) */
static IrType *sig_type(MistVM *vm, IrGraph *self, Value v) { return sig_type_at(vm, self, v, 0); }

IrType *jit_widen(IrType *t) {
  IrType *r;
  switch (t->kind) {
  case IT_INT: r = t->has_val ? &ir_t_int : t; break;
  case IT_BOOL: r = t->has_val ? &ir_t_bool : t; break;
  case IT_STR: r = t->sval ? &ir_t_str : t; break;
  case IT_SLICE: r = &ir_t_slice; break;
  case IT_TUPLE: {
    IrType **items = alloca((size_t)(t->n ? t->n : 1) * sizeof *items);
    for (int i = 0; i < t->n; i++) items[i] = jit_widen(t->items[i]);
    r = ir_type_tuple(t->n, items);
    break;
  }
  case IT_LIST: {
    IrType *item = t->n < 0 ? jit_widen(t->items[0]) : &ir_t_never;
    for (int i = 0; i < t->n; i++) item = ir_type_join(item, jit_widen(t->items[i]));
    r = ir_type_list(-1, &item);
    break;
  }
  default: return t;
  }
  if (r != t && (t->or_none || t->or_unbound)) {
    if (t->or_none) r = ir_type_or_none(r);
    if (t->or_unbound) r = ir_type_or_unbound(r);
  }
  return r;
}

/* Whether v is a value of type t of a signature, in at most MAX_SCAN
 * steps per list or dict. */
static bool sig_match(const IrType *t, Value v) {
  if (t->kind == IT_ANY) return true;
  switch (v.tag) {
  case V_NONE: return t->kind == IT_NONE;
  case V_BOOL: return t->kind == IT_BOOL;
  case V_INT: return t->kind == IT_INT;
  case V_FLOAT: return t->kind == IT_FLOAT;
  case V_UNBOUND: return t->kind == IT_UNBOUND;
  case V_OBJ: break;
  }
  switch (v.o->kind) {
  case O_STR: return t->kind == IT_STR;
  case O_SLICE: return t->kind == IT_SLICE;
  case O_FUNC: {
    ObjFunc *f = AS_FUNC(v);
    if (t->kind != IT_CLOSURE || t->graph != f->graph) return false;
    for (int i = 0; i < f->nenv; i++) {
      IrType *ft = ir_infer_closure_fv(t, i);
      if (!ft || !sig_match(ft, f->env[i])) return false;
    }
    return true;
  }
  case O_TUPLE: {
    ObjSeq *s = AS_SEQ(v);
    if (t->kind != IT_TUPLE || s->len != (size_t)t->n) return false;
    for (int i = 0; i < t->n; i++)
      if (!sig_match(t->items[i], s->items[i])) return false;
    return true;
  }
  case O_LIST: {
    ObjSeq *s = AS_SEQ(v);
    if (t->kind != IT_LIST || t->n >= 0) return false;
    if (t->items[0]->kind == IT_ANY) return true;
    if (s->len > MAX_SCAN) return false;
    for (size_t i = 0; i < s->len; i++)
      if (!sig_match(t->items[0], s->items[i])) return false;
    return true;
  }
  case O_DICT: {
    ObjDict *d = AS_DICT(v);
    if (t->kind != IT_DICT || d->len != (size_t)t->n) return false;
    for (size_t i = 0; i < d->len; i++)
      if (!lang_str_eq(d->entries[i].key, t->keys[i]) || !sig_match(t->items[i], d->entries[i].value)) return false;
    return true;
  }
  case O_TENSOR: case O_BUILTIN: case O_MODULE: case O_RANGE: return ir_type_has_value(t, v);
  default: return false;
  }
}

static JitEntry *lookup(MistVM *vm, JitFn *fn, ObjFunc *f, const Value *params) {
  IrGraph *g = f->graph;
  for (JitEntry *e = fn->entries; e; e = e->next) {
    bool same = true;
    for (int i = 0; i < g->nparams && same; i++) same = sig_match(e->sig[i], params[i]);
    for (int i = 0; i < f->nenv && same; i++) same = sig_match(e->sig[g->nparams + i], f->env[i]);
    if (same && !e->stale) return e;
  }
  return NULL;
}

/* ---- the log ---- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* name(T1, T2) [captures U1, U2] */
static void print_signature(StrBuf *sb, IrGraph *g, int nparams, int nfv, IrType **sig) {
  sb_printf(sb, "%s(", g->display ? g->display->data : g->name->data);
  for (int i = 0; i < nparams; i++) sb_printf(sb, "%s%s", i ? ", " : "", ir_type_str(sig[i]));
  sb_addc(sb, ')');
  if (nfv) {
    sb_adds(sb, " capturing (");
    for (int i = 0; i < nfv; i++) sb_printf(sb, "%s%s", i ? ", " : "", ir_type_str(sig[nparams + i]));
    sb_addc(sb, ')');
  }
}

static void say(MistVM *vm, StrBuf *sb) {
  sb_addc(sb, '\n');
  uint64_t effects = vm->effects;   /* (the log is not the program's output) */
  lang_write_err(vm, sb->data, sb->len);
  vm->effects = effects;
}

/* ---- compiling ---- */

/* Whether g is part of a program autodiff made (a transform, or the
 * function grad(f) returns): its graphs descend from a transform or
 * from an environment graph of autodiff's (flags 0), never from a
 * module's code or a def. */
static bool derived(IrGraph *g) {
  /* (a copy inference made of a graph, which compiled code may have
   * closed over: the graph it copies says) */
  for (;; g = g->parent) {
    g = ir_graph_origin(g);
    if (g->jsource || g->forig) return true;
    if (!g->parent) return !(g->flags & (IRG_FUNCTION | IRG_MODULE));
  }
}

/* Why a program autodiff made runs in the interpreter, or NULL: it
 * compiles.  MIST_JIT_DERIVED=0 keeps them all interpreted (to compare). */
static const char *derived_refused(IrGraph *g) {
  if (!derived(g)) return NULL;
  const char *off = getenv("MIST_JIT_DERIVED");
  if (off && strcmp(off, "0") == 0) return "a derivative (a program autodiff made), with MIST_JIT_DERIVED=0";
  return NULL;
}

/* The code generator, opened the first time one is needed; NULL with
 * the reason in st->no_cg. */
static void *code_generator(MistVM *vm) {
  JitState *st = state(vm);
  if (st->cg || st->no_cg) return st->cg;
  const char *why = NULL;
  double t0 = now_ms();
  st->backend = jit_load_backend(&why);
  if (st->backend) st->cg = st->backend->open(vm, &why);
  st->open_ms = now_ms() - t0;
  if (!st->cg) st->no_cg = lang_str(why ? why : "the code generator cannot be opened")->data;
  else if (st->log) {
    /* once per process, apart from the first compilation's time */
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "jit: the code generator (LLVM) loaded in %.2f ms", st->open_ms);
    say(vm, &sb);
  }
  return st->cg;
}

/* Compile f's graph for its signature: inference's specialisation, then
 * native code into *code.  Returns why the interpreter must run it
 * instead (NULL: native code).  *ret is the result's type when
 * inference gave one. */
static const char *compile(MistVM *vm, ObjFunc *f, IrType **sig, IrType **ret, JitCode **code) {
  IrGraph *g = f->graph;
  const char *refused = derived_refused(g);
  if (refused) return refused;
  IrInferOpts opts = {NULL, f->nenv ? sig + g->nparams : NULL, MAX_INFER_WORK};
  IrTyped *t = ir_infer(vm, g, g->nparams, sig, &opts);
  if (!t) {
    /* an error inference proves is raised by the interpreter when it
     * gets there, after whatever the program does first */
    const char *why = lang_str_fmt("inference stopped: %s", vm->err.message ? vm->err.message->data : "?")->data;
    lang_error_clear(vm);
    return why;
  }
  *ret = t->ret;
  void *cg = code_generator(vm);
  if (!cg) return state(vm)->no_cg;
  const char *why = NULL;
  *code = state(vm)->backend->compile(cg, vm, g, t, sig, &why);
  return *code ? NULL : why ? why : "the code generator failed";
}

static JitEntry *add_entry(MistVM *vm, JitFn *fn, ObjFunc *f, const Value *params) {
  IrGraph *g = f->graph;
  int n = g->nparams + f->nenv;
  JitEntry *e = lang_alloc(sizeof *e);
  e->sig = lang_alloc((size_t)(n ? n : 1) * sizeof *e->sig);
  for (int i = 0; i < g->nparams; i++) e->sig[i] = sig_type(vm, g, params[i]);
  for (int i = 0; i < f->nenv; i++) e->sig[g->nparams + i] = sig_type(vm, g, f->env[i]);
  double t0 = now_ms(), opened = state(vm)->open_ms;
  IrType *ret = NULL;
  e->why = compile(vm, f, e->sig, &ret, &e->code);
  double ms = now_ms() - t0 - (state(vm)->open_ms - opened);
  if (state(vm)->log) {
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "jit: ");
    print_signature(&sb, g, g->nparams, f->nenv, e->sig);
    if (ret) sb_printf(&sb, " -> %s", ir_type_str(ret));
    if (g->span.file >= 0 && g->span.file < vm->nfiles)
      sb_printf(&sb, " (%s:%d)", vm->files[g->span.file].path->data, g->span.line);
    if (derived(g)) sb_adds(&sb, " [derivative]");
    if (e->why) sb_printf(&sb, ": interpreted (%.2f ms): %s", ms, e->why);
    else sb_printf(&sb, ": compiled (%.2f ms)%s%s", ms, e->code->note ? ": " : "", e->code->note ? e->code->note : "");
    say(vm, &sb);
  }
  e->next = fn->entries;
  fn->entries = e;
  fn->n++;
  return e;
}

/* Whether the globals the code read when it was compiled still hold
 * what they held (a closure that captured nothing: of the same graph). */
static bool guards_hold(MistVM *vm, const JitCode *code) {
  for (int i = 0; i < code->nguards; i++) {
    const JitGuard *gd = &code->guards[i];
    Value v = v_unbound(), slot;
    if (gd->module && gd->module->names && lang_dict_get(gd->module->names, gd->name, &slot))
      v = gd->module->slots[slot.i];
    if (v.tag == V_UNBOUND && vm->builtins) lang_dict_get(vm->builtins, gd->name, &v);
    if (v.tag == gd->expect.tag && v.i == gd->expect.i) continue;
    if (v_is_obj(v, O_FUNC) && v_is_obj(gd->expect, O_FUNC) && AS_FUNC(v)->nenv == 0 &&
        AS_FUNC(gd->expect)->nenv == 0 && AS_FUNC(v)->graph == AS_FUNC(gd->expect)->graph)
      continue;
    return false;
  }
  return true;
}

/* IrJitInterface.call */
static int jit_call(MistVM *vm, ObjFunc *f, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  IrGraph *g = f->graph;
  const Value *params = argv;
  if (kw || argc != g->nparams) {
    Value *bound = alloca((size_t)(g->nparams + 1) * sizeof *bound);
    if (!ev_bind(vm, f, NULL, 0, argc, argv, kw, bound, NULL)) return EV_JIT_FAILED;
    params = bound;
  }
  JitState *st = state(vm);
  JitFn *fn = ir_map_get(&st->fns, g);
  if (!fn) {
    fn = lang_alloc(sizeof *fn);
    ir_map_put(&st->fns, g, fn);
  }
  JitEntry *e = lookup(vm, fn, f, params);
  if (!e && fn->n < MAX_SIGS) e = add_entry(vm, fn, f, params);
  if (!e && !fn->full_said && st->log) {
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "jit: %s: interpreted from now on for new signatures: it was compiled for %d already",
              g->display ? g->display->data : g->name->data, MAX_SIGS);
    say(vm, &sb);
  }
  if (!e) fn->full_said = true;
  if (e && e->code && !guards_hold(vm, e->code)) {
    /* a global the code assumed was bound again: compile anew, and
     * infer anew (inference typed the global by the value it held) */
    e->stale = true;
    ir_infer_forget(vm);
    if (st->log) {
      StrBuf sb;
      sb_init(&sb);
      sb_printf(&sb, "jit: %s: a global it read was bound again: compiled again",
                g->display ? g->display->data : g->name->data);
      say(vm, &sb);
    }
    e = add_entry(vm, fn, f, params);
  }
  if (!e || !e->code) return EV_JIT_INTERPRET;
  /* a frame of its own, as the interpreter's enter() makes one */
  char here;
  if ((vm->depth >= vm->max_depth || (vm->stack_limit && &here < vm->stack_limit)) && !lang_check_stack(vm))
    return EV_JIT_FAILED;
  vm->depth++;
  /* (a call nested in this one clears it too, but sets it only on its
   * way out with the error, which ends this call as well) */
  uint64_t effects = vm->effects;
  vm->jit_bad_value = false;
  bool ok = e->code->entry(&e->code->cx, params, f->env, out);
  vm->depth--;
  if (!ok && vm->jit_bad_value && vm->effects == effects && !st->strict) {
    /* compiled code met a value inference did not foresee (a bug of
     * inference or of the lowering), before the call had any effect: the
     * interpreter runs the call instead, now and for this signature
     * from now on, so that graph mode still prints what eager mode
     * prints.  Tests set MIST_JIT_STRICT, so that such a bug fails them. */
    vm->jit_bad_value = false;   /* (handled: a later error of the caller's is its own) */
    e->code = NULL;
    e->why = "compiled code met a type inference did not give; run again in the interpreter";
    if (st->log) {
      StrBuf sb;
      sb_init(&sb);
      sb_printf(&sb, "jit: %s: %s (%s)", g->display ? g->display->data : g->name->data, e->why,
                vm->err.message ? vm->err.message->data : "");
      say(vm, &sb);
    }
    lang_error_clear(vm);
    return EV_JIT_INTERPRET;
  }
  return ok ? EV_JIT_DONE : EV_JIT_FAILED;
}

/* ---- the builtins ---- */

static const IrJitInterface interface = {jit_call};

/* jit(f): f itself, whose calls compile (a builtin is compiled already). */
static bool b_jit(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (kw) return lang_raise(vm, "TypeError", "jit() takes no keyword arguments");
  if (argc != 1) return lang_raise(vm, "TypeError", "jit() takes exactly one argument (%d given)", argc);
  Value v = argv[0];
  if (v_is_obj(v, O_BUILTIN) || v_is_obj(v, O_BOUND) || (v_is_obj(v, O_FUNC) && AS_FUNC(v)->x && AS_FUNC(v)->x->jit)) {
    *out = v;
    return true;
  }
  if (!v_is_obj(v, O_FUNC))
    return lang_raise(vm, "TypeError", "jit() argument must be a function, not '%s'", lang_type_name(v));
  ObjFunc *f = AS_FUNC(v);
  size_t size = sizeof(ObjFunc) + (size_t)f->nenv * sizeof(Value);
  ObjFunc *j = lang_alloc(size);
  memcpy(j, f, size);
  j->x = NULL;
  lang_func_share_defaults(j, f);
  lang_func_extra(j)->jit = true;
  state(vm)->made_jit = true;
  vm->jit_calls = true;
  *out = v_obj(j);
  return true;
}

void jit_set_graph_mode(MistVM *vm, bool on) {
  vm->graph_mode = on;
  vm->jit_calls = on || state(vm)->made_jit;
}

static bool b_set_mode(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (kw) return lang_raise(vm, "TypeError", "set_mode() takes no keyword arguments");
  if (argc != 1) return lang_raise(vm, "TypeError", "set_mode() takes exactly one argument (%d given)", argc);
  if (!v_is_obj(argv[0], O_STR))
    return lang_raise(vm, "TypeError", "set_mode() argument must be a str, not '%s'", lang_type_name(argv[0]));
  const char *mode = AS_STR(argv[0])->data;
  if (strcmp(mode, "graph") != 0 && strcmp(mode, "eager") != 0)
    return lang_raise(vm, "ValueError", "set_mode() argument must be \"graph\" or \"eager\", not '%s'", mode);
  jit_set_graph_mode(vm, mode[0] == 'g');
  *out = v_none();
  return true;
}

void jit_register(MistVM *vm) {
  JitState *st = lang_alloc(sizeof *st);
  const char *log = getenv("MIST_JIT_LOG");
  st->log = log && *log && strcmp(log, "0") != 0;
  const char *strict = getenv("MIST_JIT_STRICT");
  st->strict = strict && *strict && strcmp(strict, "0") != 0;
  vm->jit_state = st;
  vm->jit = &interface;
  lang_def_builtin(vm, "jit", b_jit, 1, 1);
  lang_def_builtin(vm, "set_mode", b_set_mode, 1, 1);
}

void jit_free(MistVM *vm) {
  JitState *st = state(vm);
  if (st && st->cg) st->backend->close(st->cg);
  if (st) st->cg = NULL;
}

/* The type a free variable of a top-level function has before the
 * module runs: a def's closure, a constant's type, else any. */
static IrType *static_fv_type(MistVM *vm, IrNode *x) {
  if (ir_node_prim(x) == IR_P_SET_GLOBAL && x->nin == 3) x = x->in[2];
  IrGraph *h = ir_node_graph(x);
  if (h) {
    ir_free_vars(h);
    return h->nfv ? &ir_t_any : ir_type_closure(h, NULL);
  }
  if (x->kind == IR_CONST) return sig_type(vm, NULL, x->value);
  return &ir_t_any;
}

bool jit_emit_llvm(MistVM *vm, IrGraph *g, const Value *env, int nargs, IrType **args, IrGraph *module_code,
                   StrBuf *out) {
  ir_free_vars(g);
  IrType **sig = lang_alloc((size_t)(nargs + g->nfv + 1) * sizeof *sig);
  for (int i = 0; i < nargs; i++) sig[i] = args[i];
  for (int i = 0; i < g->nfv; i++) sig[nargs + i] = env ? sig_type(vm, g, env[i]) : static_fv_type(vm, g->fv[i]);
  IrInferOpts opts = {module_code, g->nfv ? sig + nargs : NULL};
  IrTyped *t = ir_infer(vm, g, nargs, sig, &opts);
  if (!t) return false;
  void *cg = code_generator(vm);
  if (!cg) return lang_raise(vm, "RuntimeError", "emit-llvm: %s", state(vm)->no_cg);
  const char *why = NULL;
  if (!state(vm)->backend->emit_llvm(cg, vm, g, t, sig, out, &why))
    return lang_raise(vm, "ValueError", "%s is not compiled natively for these types: %s",
                      g->display ? g->display->data : g->name->data, why ? why : "?");
  return true;
}
