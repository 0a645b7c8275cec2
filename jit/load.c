/* load.c: finding and opening the code generator, libmist_jit.so, on the
 * first compilation (docs/jit.md), once per process.
 *
 * It is looked for where lang_stdlib_dir looks for the standard library
 * (lang/vm.c): $MIST_JIT_LIB when set; else beside the code that runs
 * (the mist binary or a test): jit/ of the build folder it sits in
 * (build/mist, build/tests/test_x), or lib/mist of an installation
 * (bin/mist); else the build folder it was built in.  Opening it loads
 * LLVM, which is what a program that compiles nothing never pays for.
 */
#define _GNU_SOURCE   /* dladdr */
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jit/jit_int.h"
#include "jit/key.h"

/* What libmist_jit.so calls of key.c, which nothing in the runtime
 * calls yet: named here so that every program that links the runtime
 * holds it (a static library's member no one names is left out). */
__attribute__((used)) static void *const backend_calls[] = {(void *)jit_key_describe, (void *)jit_build_id};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const JitBackend *backend;
static char failure[4400 + 128];

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first candidate that exists, into path. */
static bool find(char *path, size_t size) {
  const char *env = getenv("MIST_JIT_LIB");
  if (env && *env) {
    snprintf(path, size, "%s", env);
    return true;
  }
  Dl_info info;
  char *here = NULL;
  if (dladdr((void *)find, &info) && info.dli_fname) here = realpath(info.dli_fname, NULL);
  if (here) {
    const char *dir = dirname(here);
    static const char *const beside[] = {"jit/libmist_jit.so", "../jit/libmist_jit.so", "../lib/mist/libmist_jit.so"};
    for (size_t i = 0; i < sizeof beside / sizeof *beside; i++) {
      snprintf(path, size, "%s/%s", dir, beside[i]);
      if (is_file(path)) {
        free(here);
        return true;
      }
    }
    free(here);
  }
  snprintf(path, size, "%s", MIST_JIT_LIB);
  return is_file(path);
}

static void load(void) {
  char path[4200];
  if (!find(path, sizeof path)) {
    snprintf(failure, sizeof failure, "the code generator libmist_jit.so is not installed (looked last at %s)", path);
    return;
  }
  /* RTLD_NOW: a symbol the program does not export is an error now,
   * not a crash later */
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(failure, sizeof failure, "cannot load the code generator: %s", dlerror());
    return;
  }
  const JitBackend *b = dlsym(h, "mist_jit_backend");
  if (!b) {
    snprintf(failure, sizeof failure, "%s has no mist_jit_backend", path);
    return;
  }
  if (b->abi != JIT_ABI) {
    snprintf(failure, sizeof failure, "%s was built for another version of Mist", path);
    return;
  }
  backend = b;
}

const JitBackend *jit_load_backend(const char **why) {
  pthread_once(&once, load);
  if (!backend) *why = failure;
  return backend;
}
