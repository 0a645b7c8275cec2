/* fuzz_types.c: a libFuzzer target for the typed IR text (ir_read_typed,
 * ir/read.c, and the type parser of ir/types.c; docs/types.md).
 *
 * An input is IR text with type annotations.  Reading it may fail with
 * an error; when it reads, its typed printout must read back and print
 * the same (the round trip), and nothing may crash, read out of bounds
 * or hang.  Build with `CC=clang cmake -S . -B build-fuzz -DMIST_FUZZ=ON`
 * and run build-fuzz/tests/fuzz/fuzz_types tests/fuzz/types_corpus;
 * ctest replays tests/fuzz/types_corpus (this file built with
 * MIST_FUZZ_REPLAY, a main() that runs each file there once).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/passes.h"
#include "ir/types.h"
#include "lang/vm.h"
#include "mist.h"

static MistVM *vm;

static void put_type(void *ud, IrNode *n, IrType *t) { ir_map_put(ud, n, t); }
static IrType *map_type(void *ud, const IrNode *n) { return ir_map_get(ud, n); }

static char *print_typed(IrUnit *u, NodeMap *types) {
  StrBuf sb;
  sb_init(&sb);
  ir_print_unit_typed(vm, u, &sb, map_type, types);
  return sb.data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!vm) vm = mist_new(0, NULL);
  /* the reader sees exactly the input's bytes, in a block of its own */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  memcpy(text, data, size);
  NodeMap types = {0};
  IrUnit *u = ir_read_typed(vm, "fuzz.ir", text, size, put_type, &types);
  if (u) {
    char *t1 = print_typed(u, &types);
    NodeMap types2 = {0};
    IrUnit *u2 = ir_read_typed(vm, "fuzz.ir", t1, strlen(t1), put_type, &types2);
    if (!u2) {
      fprintf(stderr, "the printout does not read back: %s\n%s\n", mist_error(vm), t1);
      abort();
    }
    char *t2 = print_typed(u2, &types2);
    if (strcmp(t1, t2) != 0) {
      fprintf(stderr, "the printout does not round-trip:\n%s\n---\n%s\n", t1, t2);
      abort();
    }
  }
  lang_error_clear(vm);
  free(text);
  return 0;
}

#include "replay.h"
