/* eval_exec.h: the interpreter's loop (ir/eval.c, which includes this
 * file twice).  EXEC_NAME is the function's name; with EXEC_GRAPH 0 it
 * is exec, eager mode's, and with EXEC_GRAPH 1 exec_graph, the same
 * loop whose tail calls of functions are offered to graph mode first
 * (vm->jit, ir/eval.h).  Two copies, so that eager mode's has no trace
 * of graph mode: a test of one flag in its tail call alone made the
 * compiler keep other values in memory and the whole loop 3% slower.
 * It uses eval.c's definitions, and is no header of its own. */

static bool EXEC_NAME(MistVM *vm, EvCode *code, Value *frame, int cap, Value *out) {
  load_constants(code, frame);
  Instr *ins = code->ins;
  int pc = 0;
  int tail_depth = 0;
  EvState *st = vm->eval;
  int tail_base = st->ntails;
  Value tmp[16];
  /* threaded dispatch: each instruction jumps straight to the next one's code */
  static void *const labels[] = {
    [I_MOVE] = &&L_I_MOVE,
    [I_ADD] = &&L_I_ADD,
    [I_SUB] = &&L_I_SUB,
    [I_MUL] = &&L_I_MUL,
    [I_LT] = &&L_I_LT,
    [I_LE] = &&L_I_LE,
    [I_GT] = &&L_I_GT,
    [I_GE] = &&L_I_GE,
    [I_EQ] = &&L_I_EQ,
    [I_NE] = &&L_I_NE,
    [I_GETITEM] = &&L_I_GETITEM,
    [I_PRIM] = &&L_I_PRIM,
    [I_TUPLE] = &&L_I_TUPLE,
    [I_SETITEM] = &&L_I_SETITEM,
    [I_SELECT] = &&L_I_SELECT,
    [I_GADD] = &&L_I_GADD,
    [I_SENS_AT_GADD] = &&L_I_SENS_AT_GADD,
    [I_ENV_GET] = &&L_I_ENV_GET,
    [I_SENS_ADD] = &&L_I_SENS_ADD,
    [I_SENS_SUB] = &&L_I_SENS_SUB,
    [I_SENS_MUL] = &&L_I_SENS_MUL,
    [I_SENS_DIV] = &&L_I_SENS_DIV,
    [I_SENS_MUL2] = &&L_I_SENS_MUL2,
    [I_AD_FLOAT] = &&L_I_AD_FLOAT,
    [I_CALL] = &&L_I_CALL,
    [I_TAILCALL] = &&L_I_TAILCALL,
    [I_CALLG] = &&L_I_CALLG,
    [I_CLOSURE] = &&L_I_CLOSURE,
    [I_JUMP] = &&L_I_JUMP,
    [I_JUMPIFNOT] = &&L_I_JUMPIFNOT,
    [I_PMOVE] = &&L_I_PMOVE,
    [I_MOVES] = &&L_I_MOVES,
    [I_RETURN] = &&L_I_RETURN,
    [I_GLOBAL] = &&L_I_GLOBAL,
    [I_SETGLOBAL] = &&L_I_SETGLOBAL,
    [I_IMPORT] = &&L_I_IMPORT,
    [I_INTERRUPT] = &&L_I_INTERRUPT,
  };
#define NEXT                        \
  do {                              \
    in = &ins[pc++];                \
    goto *labels[in->op];           \
  } while (0)
  Instr *in;
  NEXT;
    L_I_MOVE: copy_value(&F[in->dst], &F[in->a]); NEXT;
    L_I_ADD: {
      Value a = F[in->a], b = F[in->b];
      int64_t r;
      if (a.tag == V_INT && b.tag == V_INT && !__builtin_add_overflow(a.i, b.i, &r)) F[in->dst] = v_int(r);
      else if (a.tag == V_FLOAT && b.tag == V_FLOAT) F[in->dst] = v_float(a.f + b.f);
      else {
        PROF_START;
        bool ok = lang_arith_reusing(vm, OP_ADD, a, b, (unsigned)in->imm, &F[in->dst]);
        PROF_END("tensor +");
        if (!ok) goto fail;
      }
      NEXT;
    }
    L_I_SUB: {
      Value a = F[in->a], b = F[in->b];
      int64_t r;
      if (a.tag == V_INT && b.tag == V_INT && !__builtin_sub_overflow(a.i, b.i, &r)) F[in->dst] = v_int(r);
      else if (a.tag == V_FLOAT && b.tag == V_FLOAT) F[in->dst] = v_float(a.f - b.f);
      else {
        PROF_START;
        bool ok = lang_arith_reusing(vm, OP_SUB, a, b, (unsigned)in->imm, &F[in->dst]);
        PROF_END("tensor -");
        if (!ok) goto fail;
      }
      NEXT;
    }
    L_I_MUL: {
      Value a = F[in->a], b = F[in->b];
      int64_t r;
      if (a.tag == V_INT && b.tag == V_INT && !__builtin_mul_overflow(a.i, b.i, &r)) F[in->dst] = v_int(r);
      else if (a.tag == V_FLOAT && b.tag == V_FLOAT) F[in->dst] = v_float(a.f * b.f);
      else {
        PROF_START;
        int done = in->imm & (NEXT_ADDS_A | NEXT_ADDS_B) ? scaled_sum(vm, in, &ins[pc], frame) : 0;
        if (done < 0) goto fail;
        if (done) {
          PROF_END("tensor x +- s * y");
          pc++;   /* the sum is done too */
          NEXT;
        }
        bool ok = lang_arith_reusing(vm, OP_MUL, a, b, (unsigned)in->imm & 3, &F[in->dst]);
        PROF_END("tensor *");
        if (!ok) goto fail;
      }
      NEXT;
    }
#define CMP_CASE(OPC, CMPOP, op)                                                  \
    L_##OPC: {                                                                    \
      Value a = F[in->a], b = F[in->b];                                           \
      if (a.tag == V_INT && b.tag == V_INT) F[in->dst] = v_bool(a.i op b.i);      \
      else if (a.tag == V_FLOAT && b.tag == V_FLOAT) F[in->dst] = v_bool(a.f op b.f); \
      else if (!lang_compare(vm, CMPOP, a, b, &F[in->dst])) goto fail;            \
      NEXT;                                                                      \
    }
    CMP_CASE(I_LT, CMP_LT, <)
    CMP_CASE(I_LE, CMP_LE, <=)
    CMP_CASE(I_GT, CMP_GT, >)
    CMP_CASE(I_GE, CMP_GE, >=)
    CMP_CASE(I_EQ, CMP_EQ, ==)
    CMP_CASE(I_NE, CMP_NE, !=)
#undef CMP_CASE
    L_I_GETITEM: {
      Value x = F[in->a], i = F[in->b];
      if (x.tag == V_OBJ && (x.o->kind == O_LIST || x.o->kind == O_TUPLE) && i.tag == V_INT) {
        ObjSeq *s = AS_SEQ(x);
        int64_t k = i.i < 0 ? i.i + (int64_t)s->len : i.i;
        if (k >= 0 && k < (int64_t)s->len) {
          F[in->dst] = s->items[k];
          NEXT;
        }
      }
      if (!lang_getitem(vm, x, i, &F[in->dst])) goto fail;
      NEXT;
    }
    L_I_PRIM: {
      Value *args = in->nargs <= 16 ? tmp : lang_alloc(in->nargs * sizeof(Value));
      for (int k = 0; k < in->nargs; k++) copy_value(&args[k], &F[in->args[k]]);
      vm->over_d = in->over_d;
      PROF_START;
      bool ok = in->fn(vm, in->nargs, args, NULL, &F[in->dst]);
      PROF_END(prof_prim_name(in->node));
      vm->over_d = false;
      if (!ok) goto fail;
      NEXT;
    }
    /* prim_ops: the common cases here, the rest (and every error)
     * through the primitive, as I_PRIM */
    L_I_TUPLE: {
      ObjSeq *t = lang_tuple_new(in->nargs);
      for (int k = 0; k < in->nargs; k++) copy_value(&t->items[k], &F[in->args[k]]);
      F[in->dst] = v_obj(t);
      NEXT;
    }
    L_I_SETITEM: {
      /* xs[i] = v on a list: O(1), lang_list_set (lang/value.c) */
      Value x = F[in->a], i = F[in->b];
      if (x.tag != V_OBJ || x.o->kind != O_LIST || i.tag != V_INT) goto L_I_PRIM;
      ObjSeq *s = AS_SEQ(x);
      int64_t k = i.i < 0 ? i.i + (int64_t)s->len : i.i;
      if (k < 0 || k >= (int64_t)s->len) goto L_I_PRIM;
      F[in->dst] = v_obj(lang_list_set(s, (size_t)k, F[in->c], lang_updates_in_place(vm)));
      NEXT;
    }
    L_I_SELECT: {
      Value c = F[in->a];
      if (c.tag != V_BOOL) goto L_I_PRIM;
      copy_value(&F[in->dst], &F[c.b ? in->b : in->c]);
      NEXT;
    }
    /* sensitivities: None (zero) and floats, with the same operations
     * as gadd in ir/prims.c and ir/prims_sens.c, so the bits are the same */
    L_I_GADD: {
      const Value *a = &F[in->a], *b = &F[in->b];
      if (a->tag == V_FLOAT && b->tag == V_FLOAT) F[in->dst] = v_float(a->f + b->f);
      else if (a->tag == V_NONE) copy_value(&F[in->dst], b);
      else if (b->tag == V_NONE) copy_value(&F[in->dst], a);
      else if (in->imm) {
        /* a sum over a dead temporary's buffer (dead_sum) */
        if (!ir_gadd(vm, *a, *b, (unsigned)in->imm, &F[in->dst])) goto fail;
      } else goto L_I_PRIM;
      NEXT;
    }
    L_I_SENS_AT_GADD: {
      /* the next instruction's sum done here, when the operands allow */
      if (!ir_gadd_sens_at(F[in->c], F[in->args[0]], F[in->args[1]], F[in->args[2]], &F[ins[pc].dst])) goto L_I_PRIM;
      pc++;
      NEXT;
    }
    L_I_ENV_GET: {
      Value e = F[in->a], key = F[in->b];
      if (e.tag == V_NONE) {
        F[in->dst] = v_none();
        NEXT;
      }
      if (!v_is_obj(e, O_ENV) || key.tag != V_INT) goto L_I_PRIM;
      ObjEnv *env = AS_ENV(e);
      F[in->dst] = v_none();
      for (size_t k = 0; k < env->len; k++)
        if (env->items[k].key == key.i) F[in->dst] = env->items[k].value;
      NEXT;
    }
#define SENS_CASE(OPC, EXPR, OK)                                                        \
    L_##OPC: {                                                                          \
      Value dv = F[in->a], x = F[in->b], y = F[in->c];                                  \
      int i = in->imm;                                                                  \
      if (i < 0) goto L_I_PRIM;                                                         \
      if (dv.tag == V_NONE) {                                                           \
        F[in->dst] = v_none();                                                          \
        NEXT;                                                                           \
      }                                                                                 \
      if (dv.tag != V_FLOAT || x.tag != V_FLOAT || y.tag != V_FLOAT) goto L_I_PRIM;     \
      double d = dv.f, a = x.f, b = y.f;                                                \
      (void)a, (void)b;                                                                 \
      if (!(OK)) goto L_I_PRIM;                                                         \
      F[in->dst] = v_float(EXPR);                                                       \
      NEXT;                                                                             \
    }
    SENS_CASE(I_SENS_ADD, d, true)
    SENS_CASE(I_SENS_SUB, i ? -d : d, true)
    SENS_CASE(I_SENS_MUL, i ? a * d : d * b, true)
    SENS_CASE(I_SENS_DIV, i ? -d * a / (b * b) : d / b, b != 0.0)
#undef SENS_CASE
    L_I_CALL: {
      if (vm->interrupt) goto interrupted;
      if (__builtin_expect(vm->deadline > 0, 0) && out_of_time(vm, st)) goto timed_out;
      Value fn = F[in->a];
      if (v_is_obj(fn, O_FUNC)) {
        ObjFunc *f = AS_FUNC(fn);
        EvCode *fc = code_at(vm, in, f->graph);
        if (fc->nparams == in->nargs) {
          if (!call_slots(vm, f, fc, frame, in->args, &F[in->dst])) goto fail;
          NEXT;
        }
      }
      Value *args = in->nargs <= 16 ? tmp : lang_alloc(in->nargs * sizeof(Value));
      for (int k = 0; k < in->nargs; k++) copy_value(&args[k], &F[in->args[k]]);
      PROF_START;
      bool ok = ev_call(vm, fn, in->nargs, args, NULL, &F[in->dst]);
      PROF_END(v_is_obj(fn, O_BUILTIN) ? AS_BUILTIN(fn)->name : NULL);
      if (!ok) goto fail;
      NEXT;
    }
    L_I_CALLG: {
      EvCode *gc = in->gcode ? in->gcode : (in->gcode = code_of(vm, in->graph));
      if (vm->interrupt) goto interrupted;
      if (__builtin_expect(vm->deadline > 0, 0) && out_of_time(vm, st)) goto timed_out;
      Value *args = in->nargs + in->b <= 16 ? tmp : lang_alloc((in->nargs + in->b) * sizeof(Value));
      for (int k = 0; k < in->nargs; k++) copy_value(&args[k], &F[in->args[k]]);
      for (int k = 0; k < in->b; k++) copy_value(&args[in->nargs + k], &F[in->dsts[k]]);
      if (!enter(vm, gc, args, args + in->nargs, &F[in->dst])) goto fail;
      NEXT;
    }
    L_I_TAILCALL: {
      Value fn = F[in->a];
      if (vm->interrupt) goto interrupted;
      if (__builtin_expect(vm->deadline > 0, 0) && out_of_time(vm, st)) goto timed_out;
      if (!v_is_obj(fn, O_FUNC)) {
        Value *args = in->nargs <= 16 ? tmp : lang_alloc(in->nargs * sizeof(Value));
        for (int k = 0; k < in->nargs; k++) copy_value(&args[k], &F[in->args[k]]);
        if (!ev_call(vm, fn, in->nargs, args, NULL, out)) goto fail;
        vm->depth -= tail_depth;
        st->ntails = tail_base;
        return true;
      }
      /* replace this frame by the callee's */
      ObjFunc *f = AS_FUNC(fn);
      EvCode *fc = code_at(vm, in, f->graph);
      Value *args = in->nargs <= 16 ? tmp : lang_alloc(in->nargs * sizeof(Value));
      for (int k = 0; k < in->nargs; k++) copy_value(&args[k], &F[in->args[k]]);
      /* a user function's tail call still counts as a level of
       * recursion (as in Python), so runaway recursion is an error, but
       * its frame is reused */
      if (fc->traced) {
#if EXEC_GRAPH
        if (vm->jit_calls) {
          int r = tailcall_jit(vm, f, in, frame, out);
          if (r == EV_JIT_FAILED) goto fail;
          if (r == EV_JIT_DONE) {
            vm->depth -= tail_depth;
            st->ntails = tail_base;
            return true;
          }
        }
#endif
        tail_depth++;
        vm->depth++;
        if (!stack_ok(vm)) goto fail;
        if (code->traced) {
          if (st->ntails == st->captails) {
            st->captails = st->captails ? 2 * st->captails : 64;
            st->tails = lang_realloc(st->tails, st->captails * sizeof *st->tails);
          }
          /* (as fail_at and graph mode show it) */
          st->tails[st->ntails].span = in->node && in->node->span.file >= 0 ? in->node->span : code->graph->span;
          st->tails[st->ntails].own = in->node ? in->node->span : span_none();
          st->tails[st->ntails].inlined = in->node ? in->node->inlined : NULL;
          st->tails[st->ntails++].name = code->name;
        }
      }
      if (fc->nslots > cap) {
        /* grows at most to the largest frame among the codes reached */
        cap = fc->nslots;
        frame = alloca(cap * sizeof(Value));
      }
      if (fc->zero) memset(frame, 0, fc->nslots * sizeof(Value));
      /* loops, not memcpy: a few values each, and the call into libc
       * cost more than the copying (a backward pass's turn is a tail call) */
      if (in->nargs == fc->nparams)
        for (int k = 0, n = in->nargs; k < n; k++) copy_value(&frame[k], &args[k]);
      else if (!bind_args(vm, f->graph, fc->name, in->nargs, args, NULL, lang_func_ndefaults(f), lang_func_defaults(f), frame)) {
        /* the call failed in this frame, whose line fail_at adds: not
         * also as a frame the tail call replaced */
        if (fc->traced && code->traced) st->ntails--;
        goto fail;
      }
      for (int k = 0, np = fc->nparams, n = f->nenv; k < n; k++) copy_value(&frame[np + k], &f->env[k]);
      /* the same code again (a chain of backward passes): its constants
       * are still in their slots, which no instruction writes */
      if (fc != code || fc->zero) {
        code = fc;
        ins = code->ins;
        load_constants(code, frame);
      }
      pc = 0;
      NEXT;
    }
    L_I_CLOSURE: {
      IrGraph *g = in->graph;
      F[in->dst] = v_obj(make_closure(vm, g, frame, in->args));
      NEXT;
    }
    L_I_JUMP: pc = in->target; NEXT;
    L_I_JUMPIFNOT: {
      bool t;
      if (!truthy_fast(vm, F[in->a], &t)) goto fail;
      if (!t) pc = in->target;
      NEXT;
    }
    L_I_MOVES: {
      const int32_t *src = in->args, *dst = in->dsts;
      for (int k = 0, n = in->nargs; k < n; k++) copy_value(&F[dst[k]], &F[src[k]]);
      NEXT;
    }
    L_I_PMOVE: {
      Value *t = in->nargs <= 16 ? tmp : lang_alloc(in->nargs * sizeof(Value));
      for (int k = 0; k < in->nargs; k++) copy_value(&t[k], &F[in->args[k]]);
      for (int k = 0; k < in->nargs; k++) copy_value(&F[in->dsts[k]], &t[k]);
      NEXT;
    }
    L_I_INTERRUPT:
      if (vm->interrupt) goto interrupted;
      if (__builtin_expect(vm->deadline > 0, 0) && out_of_time(vm, st)) goto timed_out;
      NEXT;
    L_I_RETURN:
      copy_value(out, &F[in->a]);
      vm->depth -= tail_depth;
      st->ntails = tail_base;
      return true;
    L_I_GLOBAL: {
      ObjModule *m = in->module;
      if (m && m->slots[in->b].tag != V_UNBOUND) {
        F[in->dst] = m->slots[in->b];
        NEXT;
      }
      if (vm->builtins && lang_dict_get(vm->builtins, in->name, &F[in->dst])) NEXT;
      lang_raise(vm, "NameError", "name '%s' is not defined%s", in->name->data, name_hint(vm, in));
      goto fail;
    }
    L_I_SETGLOBAL:
      if (in->module) in->module->slots[in->b] = F[in->a];
      F[in->dst] = F[in->a];
      NEXT;
    L_I_IMPORT: {
      if (!vm->import) {
        lang_raise(vm, "ImportError", "import is not available here");
        goto fail;
      }
      if (!vm->import(vm, in->name, in->module, &F[in->dst])) goto fail;
      NEXT;
    }
    L_I_SENS_MUL2: {
      const Value *dv = &F[in->a], *x = &F[in->b], *y = &F[in->c];
      Instr *next = &ins[pc];
      if (dv->tag == V_FLOAT && x->tag == V_FLOAT && y->tag == V_FLOAT) {
        double d = dv->f, a = x->f, b = y->f;
        F[in->dst] = v_float(in->imm ? a * d : d * b);
        F[next->dst] = v_float(next->imm ? a * d : d * b);
        pc++;
        NEXT;
      }
      if (dv->tag == V_NONE) {
        F[in->dst] = v_none();
        F[next->dst] = v_none();
        pc++;
        NEXT;
      }
      goto L_I_SENS_MUL;
    }
    L_I_AD_FLOAT: {
      const Value *x = &F[in->a];
      if (x->tag != V_FLOAT) goto L_I_PRIM;
      F[in->dst] = v_float(in->imm == 0 ? x->f : in->imm == 1 ? 1.0 : 0.0);
      NEXT;
    }
#undef NEXT
interrupted:
  vm->interrupt = 0;
  lang_raise(vm, "KeyboardInterrupt", "KeyboardInterrupt");
  pc = pc > 0 ? pc : 1;
  goto fail;
timed_out:
  lang_raise(vm, "TimeoutError", "the program ran past its time limit of %g seconds", vm->time_limit);
fail:
  vm->depth -= tail_depth;
  fail_at(vm, code, &ins[pc - 1]);
  /* the frames this one replaced by tail calls, innermost first */
  for (int i = st->ntails - 1; i >= tail_base; i--) {
    if (vm->err.span.file < 0) vm->err.span = st->tails[i].own;
    ev_trace_frame(vm, st->tails[i].span, st->tails[i].inlined, st->tails[i].name);
  }
  st->ntails = tail_base;
  return false;
}
