/* ffi.c: the C half of the `ffi` module (stdlib/ffi.ms): Mist code
 * calling C functions of shared libraries, through dlopen and libffi.
 *
 *   libm = ffi.load("libm.so.6")                  # an ffi_library value
 *   cbrt = libm.func("cbrt", "f64", ("f64",))     # a builtin function
 *   print(cbrt(27.0))                             # 3.0
 *
 * A library is a native value (type() says "ffi_library", it prints
 * as <ffi library 'libm.so.6'>); it stays loaded for the rest of the
 * process (dlclose is never called: a function taken from it may be
 * held anywhere).  lib.func gives a builtin made at run time
 * (vm->callee's data is its FfiFunc): like any C function it prints
 * as <built-in function cbrt> and type() says
 * "builtin_function_or_method".
 *
 * The C types and the Mist values they take and give:
 *   void  (result only)   None
 *   i32, i64              int (range-checked; a bool counts as an int)
 *   f32, f64              float (an int is converted)
 *   str                   str, passed as a const char * to its UTF-8 bytes
 *                         (one holding a NUL character is refused);
 *                         a str result is copied (a NULL one is None)
 *   ptr   (argument only) a tensor: the address of its first element,
 *                         without copying (a view that is not contiguous
 *                         is refused).  Tensors are immutable values: the
 *                         C function must only read through it; writing
 *                         is undefined (other tensors may share the bytes).
 * A C function that keeps a pointer past its return, calls back, or
 * takes variadic arguments is outside what this checks.  Graph mode
 * calls these builtins through the runtime, as any builtin without an
 * IR row. */
#include <alloca.h>
#include <dlfcn.h>
#include <ffi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lang/gc.h"
#include "stdlib/builtins.h"
#include "stdlib/files.h"

typedef enum { FT_VOID, FT_I32, FT_I64, FT_F32, FT_F64, FT_STR, FT_PTR, FT_COUNT } FfiType;

/* Each C type: its name, the Mist value it takes (for messages), and
 * libffi's type */
static const struct {
  const char *name, *value;
  ffi_type *ffi;
} types[FT_COUNT] = {
  [FT_VOID] = {"void", "None", &ffi_type_void},    [FT_I32] = {"i32", "int", &ffi_type_sint32},
  [FT_I64] = {"i64", "int", &ffi_type_sint64},     [FT_F32] = {"f32", "float", &ffi_type_float},
  [FT_F64] = {"f64", "float", &ffi_type_double},   [FT_STR] = {"str", "str", &ffi_type_pointer},
  [FT_PTR] = {"ptr", "tensor", &ffi_type_pointer},
};

typedef struct FfiLib {
  ObjNative base;
  ObjStr *path;
  void *handle;
} FfiLib;

typedef struct FfiFunc {
  ObjStr *name;
  void *fn;
  int nargs;
  FfiType ret;
  FfiType *args;
  ffi_type **arg_types;
  ffi_cif cif;
} FfiFunc;

static void lib_repr(MistVM *vm, Value self, StrBuf *out) {
  (void)vm;
  sb_printf(out, "<ffi library '%s'>", ((FfiLib *)self.o)->path->data);
}

static const NativeClass lib_class = {"ffi_library", lib_repr, NULL, NULL, NULL};

/* load(path): dlopen(path); a library that cannot be loaded is an
 * OSError naming path and dlerror's reason. */
static bool bi_load(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"path"};
  Value a[1];
  if (!std_parse_args(vm, "load", ARGS_CLINIC, argc, argv, kw, names, 1, 1, 1, true, a)) return false;
  if (!v_is_obj(a[0], O_STR))
    return lang_raise(vm, "TypeError", "ffi.load: path must be a str, not '%s'", lang_type_name(a[0]));
  ObjStr *path = AS_STR(a[0]);
  void *handle = dlopen(path->data, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return lang_raise(vm, "OSError", "ffi.load: cannot load '%s': %s", path->data, why ? why : "unknown reason");
  }
  FfiLib *lib = lang_alloc(sizeof *lib);
  lib->base.obj.kind = O_NATIVE;
  lib->base.cls = &lib_class;
  lib->path = path;
  lib->handle = handle;
  *out = v_obj(lib);
  return true;
}

/* A type's name as its FfiType; ValueError naming it and listing the
 * valid ones.  what: "return type" or "argument 2's type". */
static bool parse_type(MistVM *vm, Value v, const char *what, FfiType *out) {
  if (!v_is_obj(v, O_STR))
    return lang_raise(vm, "TypeError", "func: %s must be a str, not '%s'", what, lang_type_name(v));
  for (int t = 0; t < FT_COUNT; t++)
    if (strcmp(AS_STR(v)->data, types[t].name) == 0) {
      *out = (FfiType)t;
      return true;
    }
  return lang_raise(vm, "ValueError",
                    "func: unknown %s '%s' (the types are 'void', 'i32', 'i64', 'f32', 'f64', 'str', 'ptr')", what,
                    AS_STR(v)->data);
}

static bool ffi_call_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out);

/* lib.func(name, ret, argtypes): the C function name of lib, as a
 * builtin taking argtypes (a tuple or list of type names) and giving
 * ret. */
static bool bi_func(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (kw && kw->n > 0) return lang_raise(vm, "TypeError", "func() takes no keyword arguments");
  /* argv[0] is the library (lib.func) */
  if (argc != 4) return lang_raise(vm, "TypeError", "func() takes exactly 3 arguments (%d given)", argc - 1);
  const Value *a = argv;
  if (!v_is_obj(a[0], O_NATIVE) || AS_NATIVE(a[0])->cls != &lib_class)
    return lang_raise(vm, "TypeError", "func: expected an ffi library (from ffi.load), not '%s'",
                      lang_type_name(a[0]));
  FfiLib *lib = (FfiLib *)a[0].o;
  if (!v_is_obj(a[1], O_STR))
    return lang_raise(vm, "TypeError", "func: name must be a str, not '%s'", lang_type_name(a[1]));
  if (!v_is_obj(a[3], O_TUPLE) && !v_is_obj(a[3], O_LIST))
    return lang_raise(vm, "TypeError", "func: argtypes must be a tuple or list of type names, not '%s'",
                      lang_type_name(a[3]));
  FfiFunc *f = lang_alloc(sizeof *f);
  f->name = AS_STR(a[1]);
  if (!parse_type(vm, a[2], "return type", &f->ret)) return false;
  if (f->ret == FT_PTR)
    return lang_raise(vm, "ValueError", "func: 'ptr' cannot be a return type (a tensor cannot be made from a bare address)");
  Value *items;
  size_t n;
  if (!std_iter_items(vm, a[3], &items, &n)) return false;
  if (n > 64) return lang_raise(vm, "ValueError", "func: at most 64 arguments, not %zu", n);
  f->nargs = (int)n;
  f->args = lang_alloc((n + 1) * sizeof *f->args);
  f->arg_types = lang_alloc((n + 1) * sizeof *f->arg_types);
  for (size_t i = 0; i < n; i++) {
    char what[48];
    snprintf(what, sizeof what, "argument %zu's type", i + 1);
    if (!parse_type(vm, items[i], what, &f->args[i])) return false;
    if (f->args[i] == FT_VOID) return lang_raise(vm, "ValueError", "func: 'void' cannot be an argument's type (argument %zu)", i + 1);
    f->arg_types[i] = types[f->args[i]].ffi;
  }
  dlerror();
  f->fn = dlsym(lib->handle, f->name->data);
  if (!f->fn) {
    const char *why = dlerror();
    return lang_raise(vm, "AttributeError", "func: no symbol '%s' in '%s'%s%s", f->name->data, lib->path->data,
                      why ? ": " : "", why ? why : "");
  }
  if (ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, (unsigned)n, types[f->ret].ffi, f->arg_types) != FFI_OK)
    return lang_raise(vm, "ValueError", "func: libffi cannot describe the call of '%s'", f->name->data);
  ObjBuiltin *b = lang_builtin_new(f->name->data, ffi_call_fn, -1, -1);
  b->data = f;
  b->nondiff = false;   /* no rule: differentiating through it is an error */
  *out = v_obj(b);
  return true;
}

/* One argument's C value, by its type; the storage is big enough for
 * any of them. */
typedef union Slot {
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
  const void *p;
} Slot;

static bool arg_error(MistVM *vm, FfiFunc *f, int i, Value v) {
  return lang_raise(vm, "TypeError", "%s() argument %d must be %s (%s), not '%s'", f->name->data, i + 1,
                    types[f->args[i]].value, types[f->args[i]].name, lang_type_name(v));
}

static bool convert_arg(MistVM *vm, FfiFunc *f, int i, Value v, Slot *s) {
  switch (f->args[i]) {
  case FT_I32: case FT_I64: {
    if (v.tag != V_INT && v.tag != V_BOOL) return arg_error(vm, f, i, v);
    int64_t x = v.tag == V_BOOL ? v.b : v.i;
    if (f->args[i] == FT_I32) {
      if (x < INT32_MIN || x > INT32_MAX)
        return lang_raise(vm, "OverflowError", "%s() argument %d: %lld is out of range for i32", f->name->data,
                          i + 1, (long long)x);
      s->i32 = (int32_t)x;
    } else {
      s->i64 = x;
    }
    return true;
  }
  case FT_F32: case FT_F64: {
    double x;
    if (v.tag == V_FLOAT) x = v.f;
    else if (v.tag == V_INT) x = (double)v.i;
    else return arg_error(vm, f, i, v);
    if (f->args[i] == FT_F32) s->f32 = (float)x;
    else s->f64 = x;
    return true;
  }
  case FT_STR:
    if (!v_is_obj(v, O_STR)) return arg_error(vm, f, i, v);
    /* C would see the text cut at the NUL: refused, as Python refuses it */
    if (strlen(AS_STR(v)->data) != AS_STR(v)->len)
      return lang_raise(vm, "ValueError", "%s() argument %d: embedded null character", f->name->data, i + 1);
    s->p = AS_STR(v)->data;
    return true;
  case FT_PTR: {
    if (!v_is_obj(v, O_TENSOR)) return arg_error(vm, f, i, v);
    ObjTensor *t = AS_TENSOR(v);
    if (!lang_tensor_is_contiguous(t))
      return lang_raise(vm, "ValueError", "%s() argument %d: a 'ptr' must be a contiguous tensor (use .contiguous())",
                        f->name->data, i + 1);
    s->p = lang_tensor_ptr(t);
    return true;
  }
  case FT_VOID: case FT_COUNT: break;
  }
  return arg_error(vm, f, i, v);
}

/* Calling an ffi function: the arguments checked and converted, the
 * call made through libffi, the result converted back. */
static bool ffi_call_fn(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  FfiFunc *f = vm->callee->data;
  if (kw && kw->n > 0) return lang_raise(vm, "TypeError", "%s() takes no keyword arguments", f->name->data);
  if (argc != f->nargs)
    return lang_raise(vm, "TypeError", "%s() takes %d argument%s (%d given)", f->name->data, f->nargs,
                      f->nargs == 1 ? "" : "s", argc);
  Slot *slots = alloca((argc + 1) * sizeof *slots);
  void **values = alloca((argc + 1) * sizeof *values);
  for (int i = 0; i < argc; i++) {
    if (!convert_arg(vm, f, i, argv[i], &slots[i])) return false;
    values[i] = &slots[i];
  }
  /* libffi widens integer results smaller than a register to ffi_arg */
  union {
    ffi_arg word;
    int64_t i64;
    float f32;
    double f64;
    const char *s;
  } r;
  memset(&r, 0, sizeof r);
  vm->effects++;   /* C code may do anything: graph mode never runs it twice */
  ffi_call(&f->cif, FFI_FN(f->fn), &r, values);
  switch (f->ret) {
  case FT_VOID: *out = v_none(); return true;
  case FT_I32: *out = v_int((int32_t)r.word); return true;
  case FT_I64: *out = v_int(r.i64); return true;
  case FT_F32: *out = v_float(r.f32); return true;
  case FT_F64: *out = v_float(r.f64); return true;
  case FT_STR:
    if (!r.s) {
      *out = v_none();
      return true;
    }
    if (!lang_utf8_valid(r.s, strlen(r.s)))
      return lang_raise(vm, "UnicodeDecodeError", "%s() returned a string that is not UTF-8", f->name->data);
    *out = v_obj(lang_str(r.s));
    return true;
  case FT_PTR: case FT_COUNT: break;
  }
  return lang_raise(vm, "TypeError", "%s(): no such result type", f->name->data);
}

void std_register_ffi(MistVM *vm) {
  std_def_hidden(vm, "_ffi_load", "load", bi_load);
  lang_def_method(vm, "func", bi_func, -1, -1);
}
