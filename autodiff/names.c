/* names.c: the primitives as builtins under names a program can call,
 * so that a derivative printed as Mist source (stdlib/source.c,
 * show_source(grad(f)), `mist ir --source --grad`) runs.
 *
 * A derived program calls primitives that the language has no syntax
 * for: J, gadd, seed, bp_call, env_get, sens_item... and whatever
 * primitives are added to ir/ops.def later.  Each primitive that the
 * interpreter can call as a value is registered here as the builtin
 * `_` + its name (`_gadd`, `_J`, `_bp_call`), the primitive's own value,
 * so the printed call means exactly what the IR node means.  The
 * leading underscore keeps them out of the way of a program's own names
 * and marks them as the derivative machinery's, not API; a primitive
 * that already is a builtin under its plain name (stop_gradient) keeps
 * that one.  The list comes from the ir_prims[] table, so a new
 * primitive gets its name with no edit here.  The identity continuation
 * is the builtin `_ad_kid` (api.c), and the derivative rules are reached
 * through their module (`import ad_rules as _ad_rules`), which the
 * printer writes itself.
 */
#include <string.h>

#include "autodiff/ad.h"
#include "ir/eval.h"
#include "lang/gc.h"

/* Whether the builtin `name` is bound to the object of v. */
static bool bound_to(MistVM *vm, const char *name, Value v) {
  Value b;
  return lang_dict_get(vm->builtins, lang_str(name), &b) && b.tag == V_OBJ && b.o == v.o;
}

void ad_register_names(MistVM *vm) {
  for (int p = 0; p < IR_NPRIMS; p++) {
    if (!ev_prim_fn((IrPrim)p)) continue;
    Value v = ir_prim_value(vm, (IrPrim)p);
    if (bound_to(vm, ir_prims[p].name, v)) continue;
    ObjStr *name = lang_str_fmt("_%s", ir_prims[p].name);
    Value old;
    if (lang_dict_get(vm->builtins, name, &old)) continue;   /* taken: keep it */
    lang_dict_put(vm->builtins, name, v);
  }
}
