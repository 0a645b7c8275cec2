/* show.h: the builtins that print a function's IR or source form
 * (show.c). */
#ifndef MIST_STDLIB_SHOW_H
#define MIST_STDLIB_SHOW_H

#include "lang/vm.h"

/* Register show_ir(f) and show_source(f).  Called by
 * std_register_builtins. */
void std_register_show(MistVM *vm);

#endif
