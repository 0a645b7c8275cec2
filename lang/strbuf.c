/* strbuf.c: a growable byte buffer for building text (repr, format,
 * error messages).  The bytes live on the GC heap in atomic memory;
 * an empty buffer points at a shared empty string and allocates on the
 * first byte added, so sb_init costs nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/strbuf.h"

void sb_init(StrBuf *sb) {
  sb->data = (char *)"";
  sb->len = 0;
  sb->cap = 0;
}

static void reserve(StrBuf *sb, size_t extra) {
  size_t need = sb->len + extra + 1;
  if (need <= sb->cap) return;
  size_t cap = sb->cap ? sb->cap : 32;
  while (cap < need) cap *= 2;
  if (sb->cap == 0) {
    char *d = lang_alloc_atomic(cap);
    memcpy(d, sb->data, sb->len + 1);
    sb->data = d;
  } else {
    sb->data = lang_realloc(sb->data, cap);
  }
  sb->cap = cap;
}

void sb_add(StrBuf *sb, const char *s, size_t len) {
  if (len == 0) return;
  reserve(sb, len);
  memcpy(sb->data + sb->len, s, len);
  sb->len += len;
  sb->data[sb->len] = '\0';
}

void sb_adds(StrBuf *sb, const char *cstr) {
  sb_add(sb, cstr, strlen(cstr));
}

void sb_addc(StrBuf *sb, char c) {
  reserve(sb, 1);
  sb->data[sb->len++] = c;
  sb->data[sb->len] = '\0';
}

void sb_printf(StrBuf *sb, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    sb_add(sb, small, (size_t)n);
    return;
  }
  reserve(sb, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

ObjStr *sb_to_str(StrBuf *sb) {
  return lang_str_new(sb->data, sb->len);
}
