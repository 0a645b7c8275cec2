/* strbuf.h: a growable byte buffer on the GC heap, for building text
 * (printing, formatting, error messages).  Never fails: the GC aborts
 * the allocation only when the process is out of memory entirely. */
#ifndef MIST_LANG_STRBUF_H
#define MIST_LANG_STRBUF_H

#include <stddef.h>

#include "lang/value.h"

typedef struct StrBuf {
  char *data;     /* NUL-terminated */
  size_t len, cap;
} StrBuf;

void sb_init(StrBuf *sb);
void sb_add(StrBuf *sb, const char *s, size_t len);
void sb_adds(StrBuf *sb, const char *cstr);
void sb_addc(StrBuf *sb, char c);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
ObjStr *sb_to_str(StrBuf *sb);     /* the text as a Mist string */

#endif
