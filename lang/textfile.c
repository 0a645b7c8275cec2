/* textfile.c: reading text files named by file values.
 *
 * A file value (open(path, mode)) is only a name and a mode, like every
 * Mist value immutable: reading opens the file, reads all of it and
 * closes it, so there is no position to move and nothing to close.  The
 * text must be UTF-8, as source files must; a malformed byte is Python's
 * UnicodeDecodeError.  Line ends are Python's universal newlines ("\r\n"
 * and "\r" read as "\n").  Errors follow Python's OSError wording. */
#include "lang/textfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"

ObjFile *lang_textfile_new(ObjStr *path, char mode) {
  ObjFile *f = lang_alloc(sizeof *f);
  f->obj.kind = O_FILE;
  f->path = path;
  f->mode = mode;
  return f;
}

bool lang_textfile_error(MistVM *vm, int err, const ObjStr *path) {
  const char *kind = err == ENOENT ? "FileNotFoundError" : err == EEXIST ? "FileExistsError"
                   : err == EISDIR ? "IsADirectoryError" : err == EACCES ? "PermissionError" : "OSError";
  StrBuf name;
  sb_init(&name);
  lang_str_repr(path, &name);
  return lang_raise(vm, kind, "[Errno %d] %s: %s", err, strerror(err), name.data);
}

/* Python's universal newlines, in place: "\r\n" and a lone "\r" read as
 * "\n", so a file written on Windows or an old Mac reads as one written
 * here.  Returns the new length. */
static size_t universal_newlines(char *text, size_t len) {
  if (!text || !memchr(text, '\r', len)) return len;
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '\r') {
      text[n++] = text[i];
      continue;
    }
    text[n++] = '\n';
    if (i + 1 < len && text[i + 1] == '\n') i++;
  }
  return n;
}

bool lang_textfile_read(MistVM *vm, const ObjFile *f, ObjStr **out) {
  if (vm->sandbox) return lang_raise(vm, "PermissionError", "files are not available in the sandbox");
  if (f->mode != 'r') return lang_raise(vm, "UnsupportedOperation", "not readable");
  struct stat st;
  if (stat(f->path->data, &st) == 0 && S_ISDIR(st.st_mode)) return lang_textfile_error(vm, EISDIR, f->path);
  FILE *fp = fopen(f->path->data, "rb");
  if (!fp) return lang_textfile_error(vm, errno, f->path);
  StrBuf sb;
  sb_init(&sb);
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, fp)) > 0) sb_add(&sb, buf, got);
  bool failed = ferror(fp);
  int err = errno;
  fclose(fp);
  if (failed) return lang_textfile_error(vm, err, f->path);
  size_t bad = lang_utf8_check(sb.data ? sb.data : "", sb.len);
  if (bad < sb.len)
    return lang_raise(vm, "UnicodeDecodeError", "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid start byte",
                      (unsigned char)sb.data[bad], bad);
  *out = lang_str_new(sb.data ? sb.data : "", universal_newlines(sb.data, sb.len));
  return true;
}

bool lang_textfile_lines(MistVM *vm, const ObjFile *f, ObjSeq **out) {
  ObjStr *text;
  if (!lang_textfile_read(vm, f, &text)) return false;
  size_t n = 0;
  for (size_t i = 0; i < text->len; i++)
    if (text->data[i] == '\n') n++;
  if (text->len > 0 && text->data[text->len - 1] != '\n') n++;
  ObjSeq *lines = lang_list_new(n);
  size_t start = 0, k = 0;
  for (size_t i = 0; i < text->len; i++) {
    if (text->data[i] != '\n') continue;
    lines->items[k++] = v_obj(lang_str_new(text->data + start, i + 1 - start));
    start = i + 1;
  }
  if (start < text->len) lines->items[k++] = v_obj(lang_str_new(text->data + start, text->len - start));
  *out = lines;
  return true;
}
