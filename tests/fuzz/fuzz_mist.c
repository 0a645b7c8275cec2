/* fuzz_mist.c: a libFuzzer target for the whole front of Mist: lexer,
 * parser, lowering and the interpreter.
 *
 * Each input is taken as a Mist program and run in a fresh interpreter
 * with its output thrown away.  Any result is fine (a clean run, a syntax
 * error, a runtime error); what the fuzzer looks for is a crash, an
 * ASan/UBSan report, a hang (libFuzzer's -timeout) or runaway memory
 * (-rss_limit_mb).  `make fuzz` runs it with those limits over
 * tests/fuzz/corpus; put any input it finds into tests/fuzz/regress/ so
 * ctest checks it from then on.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mist.h"

static void discard(void *user, const char *text, size_t len) {
  (void)user;
  (void)text;
  (void)len;
}

/* An input with a NUL byte also runs as a file, which keeps the bytes
 * after the NUL (mist_eval's string ends there): the rendered error, a
 * C string, must come out whole, ending in a newline (a NUL copied into
 * its source line used to cut it short before the caret). */
static void run_as_file(const uint8_t *data, size_t size) {
  char path[] = "/tmp/fuzz_mist_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return;
  bool written = write(fd, data, size) == (ssize_t)size;
  close(fd);
  MistVM *vm = written ? mist_new(0, NULL) : NULL;
  if (vm) {
    mist_set_write(vm, discard, NULL);
    mist_set_time_limit(vm, 1.0);
    if (mist_run_file(vm, path) != MIST_OK && mist_exit_code(vm) < 0) {
      const char *err = mist_error(vm);
      size_t n = strlen(err);
      if (n == 0 || err[n - 1] != '\n') abort();
    }
    mist_free(vm);
  }
  unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (memchr(data, '\0', size)) run_as_file(data, size);
  /* mist_eval takes a NUL-terminated string; an embedded NUL just ends
   * the program early. */
  char *src = malloc(size + 1);
  if (!src) return 0;
  memcpy(src, data, size);
  src[size] = '\0';

  MistVM *vm = mist_new(0, NULL);
  if (vm) {
    mist_set_write(vm, discard, NULL);
    /* a program may loop forever on purpose: that is its right, not a bug */
    mist_set_time_limit(vm, 1.0);
    (void)mist_eval(vm, "<fuzz>", src, false);
    (void)mist_error(vm);
    mist_free(vm);
  }
  free(src);
  return 0;
}
