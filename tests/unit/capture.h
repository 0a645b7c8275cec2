/* capture.h: collecting a Mist VM's output in a growable buffer, shared by
 * the unit suites that run programs through the public API
 * (mist_set_write(vm, capture, &buf)). */
#ifndef MIST_TESTS_CAPTURE_H
#define MIST_TESTS_CAPTURE_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mist.h"

typedef struct Buf {
  char *data;
  size_t len, cap;
} Buf;

static inline void buf_add(Buf *b, const char *text, size_t len) {
  if (b->len + len + 1 > b->cap) {
    b->cap = (b->len + len + 1) * 2;
    b->data = realloc(b->data, b->cap);
    if (!b->data) abort();   /* (not ck_assert: generators run outside tests too) */
  }
  memcpy(b->data + b->len, text, len);
  b->len += len;
  b->data[b->len] = 0;
}

static inline void buf_clear(Buf *b) {
  if (!b->data) buf_add(b, "", 0);
  b->len = 0;
  b->data[0] = 0;
}

static inline void capture(void *user, const char *text, size_t len) { buf_add(user, text, len); }

static inline void buf_free(Buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

/* A fresh VM whose output goes to out (cleared), for a suite's setup. */
static inline MistVM *capture_vm_new(Buf *out) {
  MistVM *vm = mist_new(0, NULL);
  ck_assert_ptr_nonnull(vm);
  buf_clear(out);
  mist_set_write(vm, capture, out);
  return vm;
}

/* Its teardown: the VM freed, the buffer emptied. */
static inline void capture_vm_free(MistVM *vm, Buf *out) {
  mist_free(vm);
  buf_free(out);
}

#endif
