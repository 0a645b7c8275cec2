/* fuzz_readers.c: a libFuzzer target for the file readers of the
 * standard library (stdlib/files.h): IDX, NPY, CSV and safetensors, each
 * gzip'd or not.
 *
 * The first byte of an input picks the reader (its value mod 4: IDX,
 * NPY, safetensors, CSV); the rest is the file's bytes, inflated first
 * when they start with gzip's magic, as data.idx does.  Any result is
 * fine, a tensor or an error; what the fuzzer looks for is a read out of
 * bounds, a crash, a hang or runaway memory.  Inputs that found one go
 * into tests/fuzz/readers_corpus/, which ctest replays (this file built
 * with MIST_FUZZ_REPLAY, a main() that runs each file there once).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/vm.h"
#include "mist.h"
#include "stdlib/files.h"

/* inflate no more than this: a hostile gzip stream must not take the
 * fuzzer's memory */
#define FUZZ_GUNZIP_MAX ((size_t)64 << 20)

static MistVM *vm;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (!vm) vm = mist_new(0, NULL);
  int which = data[0] % 4;
  const unsigned char *bytes = data + 1;
  size_t len = size - 1;
  unsigned char *in;
  size_t inlen;
  bool owned;
  if (!std_gunzip(vm, "fuzz", bytes, len, FUZZ_GUNZIP_MAX, &in, &inlen, &owned)) {
    lang_error_clear(vm);
    return 0;
  }
  /* the readers see exactly the bytes of the file: copy them into a
   * block of their own size, so that ASan catches a read one past it */
  unsigned char *exact = malloc(inlen ? inlen : 1);
  if (!exact) goto out;
  memcpy(exact, in, inlen);
  ObjTensor *t;
  Value v;
  switch (which) {
  case 0: (void)std_read_idx(vm, "fuzz", exact, inlen, &t); break;
  case 1: (void)std_read_npy(vm, "fuzz", exact, inlen, &t); break;
  case 2: (void)std_read_safetensors(vm, "fuzz", exact, inlen, &v); break;
  case 3: (void)std_read_csv(vm, "fuzz", (const char *)exact, inlen, data[0] & 4, &t); break;
  }
  lang_error_clear(vm);
  free(exact);
out:
  if (owned) free(in);
  return 0;
}

#include "replay.h"
