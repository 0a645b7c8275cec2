/* show.c: the builtins that print a function's forms, show_ir(f) and
 * show_source(f) (docs/reference.md section 5).
 *
 * Both take a Mist function (a closure: user code, a lambda, or a
 * function made by a transformation such as grad) and write the graph
 * behind it through the VM's write callback, as ir/print.c's IR text or
 * as stdlib/source.c's Mist source; they return None.  In the source form
 * a free variable appears by name, as in the code it came from, and the
 * printout first lists, as comments, the values the closure captured
 * under those names.  The source of a derivative, show_source(grad(f)),
 * is the whole derived program, which runs (std_print_source_value).
 */
#include "stdlib/builtins.h"

#include "ir/ir.h"
#include "stdlib/source.h"
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

static bool show(MistVM *vm, const char *fname, bool source, int argc, const Value *argv,
                 const KwArgs *kw, Value *out) {
  IrGraph *g = NULL;
  if (!graph_arg(vm, fname, argc, argv, kw, &g)) return false;
  StrBuf sb;
  sb_init(&sb);
  if (source) std_print_source_value(vm, argv[0], &sb);
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
