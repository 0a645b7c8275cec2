/* show.c: the builtins that print a function's forms, show_ir(f) and
 * show_source(f) (LANGUAGE.md section 7).
 *
 * Both take a Mist function (a closure: user code, a lambda, or a
 * function made by a transformation such as grad) and write the graph
 * behind it through the VM's write callback, as ir/print.c's IR text or
 * as ir/source.c's Mist source; they return None.  In the source form
 * a free variable appears by name, as in the code it came from, so
 * show_source first lists, as comments, the values the closure
 * captured under those names (grad(f) captures f: which f it is shows
 * there).
 */
#include "stdlib/builtins.h"

#include "ir/ir.h"
#include "lang/ops.h"
#include "lang/strbuf.h"

/* The graph of the one argument, which must be a Mist function. */
static bool graph_arg(MistVM *vm, const char *fname, int argc, const Value *argv, const KwArgs *kw,
                      IrGraph **g) {
  if (!std_one_arg(vm, fname, argc, kw)) return false;
  if (!v_is_obj(argv[0], O_FUNC))
    return lang_raise(vm, "TypeError", "%s() expects a Mist function, not '%s'", fname,
                      lang_type_name(argv[0]));
  *g = AS_FUNC(argv[0])->graph;
  return true;
}

/* Whether source.c prints name as it is (else as free_ID). */
static bool plain_name(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || (unsigned char)*s >= 0x80))
      return false;
  return true;
}

/* "# name = repr" for each value f captured, named as ir/source.c
 * names a free variable from outside. */
static bool captured(MistVM *vm, ObjFunc *f, StrBuf *sb) {
  IrGraph *g = f->graph;
  ir_free_vars(g);
  for (int i = 0; i < f->nenv && i < g->nfv; i++) {
    IrNode *x = g->fv[i];
    if (x->name && plain_name(x->name->data)) sb_printf(sb, "# %s = ", x->name->data);
    else sb_printf(sb, "# free_%u = ", x->id);
    if (!lang_repr(vm, f->env[i], sb)) return false;
    sb_addc(sb, '\n');
  }
  return true;
}

static bool show(MistVM *vm, const char *fname, bool source, int argc, const Value *argv,
                 const KwArgs *kw, Value *out) {
  IrGraph *g = NULL;
  if (!graph_arg(vm, fname, argc, argv, kw, &g)) return false;
  StrBuf sb;
  sb_init(&sb);
  if (source && !captured(vm, AS_FUNC(argv[0]), &sb)) return false;
  if (source) ir_print_source(vm, g, &sb);
  else ir_print_graph(vm, g, &sb);
  lang_write(vm, sb.data, sb.len);
  *out = v_none();
  return true;
}

/* show_ir(f): f's graphs in the IR's text form */
static bool bi_show_ir(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return show(vm, "show_ir", false, argc, argv, kw, out);
}

/* show_source(f): f as Mist source, one def that runs */
static bool bi_show_source(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  return show(vm, "show_source", true, argc, argv, kw, out);
}

void std_register_show(MistVM *vm) {
  lang_def_builtin(vm, "show_ir", bi_show_ir, -1, -1);
  lang_def_builtin(vm, "show_source", bi_show_source, -1, -1);
}
