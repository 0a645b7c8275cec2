/* fuzz_elf.c: a libFuzzer target for the loader of compiled objects
 * (jit/elf.c), which reads object files from the compile cache's folder
 * on disk, where anything may be.
 *
 * An input is an ELF file.  Loading it may fail with a reason; when it
 * loads, its symbols are looked up and it is freed; its code is never
 * run.  Nothing may crash, read or write out of bounds or hang.  Every
 * undefined symbol resolves to one function of this file.  Build with
 * `CC=clang cmake -S . -B build-fuzz -DMIST_FUZZ=ON` and run
 * build-fuzz/tests/fuzz/fuzz_elf tests/fuzz/elf_corpus; ctest replays
 * tests/fuzz/elf_corpus (this file built with MIST_FUZZ_REPLAY).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/elf.h"

static void somewhere(void) {}

static void *resolve(void *ud, const char *name) {
  (void)ud;
  return name[0] == 'x' ? NULL : (void *)(uintptr_t)somewhere;   /* some undefined */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the loader sees exactly the input's bytes, in a block of its own */
  uint8_t *obj = malloc(size ? size : 1);
  if (!obj) return 0;
  memcpy(obj, data, size);
  char why[JIT_ELF_WHY];
  JitElf *e = jit_elf_load(obj, size, resolve, NULL, NULL, why);
  if (e) {
    (void)jit_elf_symbol(e, "mist.entry");
    jit_elf_free(e);
  } else if (!why[0]) {
    fprintf(stderr, "refused without a reason\n");
    abort();
  }
  free(obj);
  return 0;
}

#include "replay.h"
