/* textfiles.c: text files, in the spelling Python programs use without
 * `with`:
 *
 *     text = open("data.txt").read()
 *     lines = open("data.txt").readlines()
 *     for line in open("data.txt"): ...
 *     open("out.txt", "w").write("hello\n")
 *     open("log.txt", "a").write("one more line\n")
 *
 * open(path, mode) makes a file value (lang/textfile.c): a name and a
 * mode, immutable like every Mist value.  The effects happen when Python
 * would have them: open checks that a file to read exists, and "w"
 * empties the file (creating it), "x" creates it (failing if it
 * exists), "a" creates it if missing, all at open; each write appends
 * its text at once and closes the file again, so consecutive writes on
 * one file value add up as they do in Python and nothing is left
 * unflushed.  Reading reads the whole file each time: a file value has
 * no position, so read(size) and readline(), which would need one, are
 * errors that say what to write instead.  close() does nothing.  Text
 * is UTF-8; binary modes are not supported. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lang/strbuf.h"
#include "lang/textfile.h"
#include "stdlib/builtins.h"

static bool bi_open(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  static const char *const names[] = {"file", "mode", "buffering", "encoding"};
  Value a[4];
  if (!std_parse_args(vm, "open", ARGS_CLINIC, argc, argv, kw, names, 4, 4, 1, true, a)) return false;
  if (!v_is_obj(a[0], O_STR))
    return lang_raise(vm, "TypeError", "expected str, bytes or os.PathLike object, not %s", lang_type_name(a[0]));
  if (vm->sandbox) return lang_raise(vm, "PermissionError", "files are not available in the sandbox");
  char mode = 'r';
  if (a[1].tag != V_UNBOUND) {
    if (!v_is_obj(a[1], O_STR))
      return lang_raise(vm, "TypeError", "open() argument 'mode' must be str, not %s", lang_type_name(a[1]));
    const ObjStr *m = AS_STR(a[1]);
    int kinds = 0;
    for (size_t i = 0; i < m->len; i++) {
      char c = m->data[i];
      if (c == 'r' || c == 'w' || c == 'a' || c == 'x') {
        mode = c;
        kinds++;
      } else if (c == 'b') {
        return lang_raise(vm, "ValueError", "binary mode is not supported in Mist: files are text");
      } else if (c == '+') {
        return lang_raise(vm, "ValueError", "mode '+' is not supported in Mist: open the file once to read and once to write");
      } else if (c != 't') {
        return lang_raise(vm, "ValueError", "invalid mode: '%s'", m->data);
      }
    }
    if (kinds != 1)
      return lang_raise(vm, "ValueError", "must have exactly one of create/read/write/append mode");
  }
  if (a[3].tag != V_UNBOUND && a[3].tag != V_NONE) {
    const char *enc = v_is_obj(a[3], O_STR) ? AS_STR(a[3])->data : "";
    if (strcasecmp(enc, "utf-8") != 0 && strcasecmp(enc, "utf8") != 0)
      return lang_raise(vm, "ValueError", "encoding %s is not supported: files are UTF-8", enc);
  }
  ObjStr *path = AS_STR(a[0]);
  struct stat st;
  if (stat(path->data, &st) == 0 && S_ISDIR(st.st_mode)) return lang_textfile_error(vm, EISDIR, path);
  int flags = mode == 'r' ? O_RDONLY : mode == 'w' ? O_WRONLY | O_CREAT | O_TRUNC
            : mode == 'a' ? O_WRONLY | O_CREAT | O_APPEND : O_WRONLY | O_CREAT | O_EXCL;
  int fd = open(path->data, flags | O_CLOEXEC, 0666);
  if (fd < 0) return lang_textfile_error(vm, errno, path);
  close(fd);
  *out = v_obj(lang_textfile_new(path, mode));
  return true;
}

#define SELF_FILE(name)                                                                       \
  if (argc < 1 || !v_is_obj(argv[0], O_FILE))                                                 \
    return lang_raise(vm, "AttributeError", "'%s' object has no attribute '" name "'",        \
                      argc >= 1 ? lang_type_name(argv[0]) : "?");                             \
  ObjFile *f = (ObjFile *)argv[0].o

static bool m_read(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  SELF_FILE("read");
  if (!std_no_kw(vm, "read", kw)) return false;
  if (argc > 2) return lang_raise(vm, "TypeError", "read expected at most 1 argument, got %d", argc - 1);
  if (argc == 2 && !(argv[1].tag == V_NONE || (argv[1].tag == V_INT && argv[1].i < 0)))
    return lang_raise(vm, "ValueError", "read(size) is not supported: a file has no position in Mist; "
                                        "read() gives the whole text (slice it: f.read()[:size])");
  ObjStr *text;
  if (!lang_textfile_read(vm, f, &text)) return false;
  *out = v_obj(text);
  return true;
}

static bool m_readlines(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  SELF_FILE("readlines");
  if (!std_no_args(vm, "readlines", argc - 1, kw)) return false;
  ObjSeq *lines;
  if (!lang_textfile_lines(vm, f, &lines)) return false;
  *out = v_obj(lines);
  return true;
}

static bool m_readline(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  SELF_FILE("readline");
  (void)f;
  return lang_raise(vm, "ValueError", "readline() is not supported: a file has no position in Mist; "
                                      "write lines = f.readlines() and take lines[i]");
}

/* Append text to the file now (open, write, close). */
static bool append(MistVM *vm, const ObjFile *f, const ObjStr *text) {
  if (vm->sandbox) return lang_raise(vm, "PermissionError", "files are not available in the sandbox");
  int fd = open(f->path->data, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return lang_textfile_error(vm, errno, f->path);
  size_t done = 0;
  while (done < text->len) {
    ssize_t n = write(fd, text->data + done, text->len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return lang_textfile_error(vm, err, f->path);
    }
    done += (size_t)n;
  }
  if (close(fd) != 0) return lang_textfile_error(vm, errno, f->path);
  return true;
}

static bool m_write(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  SELF_FILE("write");
  if (!std_one_arg(vm, "write", argc - 1, kw)) return false;
  if (f->mode == 'r') return lang_raise(vm, "UnsupportedOperation", "not writable");
  if (!v_is_obj(argv[1], O_STR))
    return lang_raise(vm, "TypeError", "write() argument must be str, not %s", lang_type_name(argv[1]));
  if (!append(vm, f, AS_STR(argv[1]))) return false;
  *out = v_int((int64_t)AS_STR(argv[1])->nchars);
  return true;
}

static bool m_writelines(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  SELF_FILE("writelines");
  if (!std_one_arg(vm, "writelines", argc - 1, kw)) return false;
  if (f->mode == 'r') return lang_raise(vm, "UnsupportedOperation", "not writable");
  Value *items;
  size_t n;
  if (!std_iter_items(vm, argv[1], &items, &n)) return false;
  StrBuf sb;
  sb_init(&sb);
  for (size_t i = 0; i < n; i++) {
    if (!v_is_obj(items[i], O_STR))
      return lang_raise(vm, "TypeError", "write() argument must be str, not %s", lang_type_name(items[i]));
    sb_add(&sb, AS_STR(items[i])->data, AS_STR(items[i])->len);
  }
  if (!append(vm, f, lang_str_new(sb.data ? sb.data : "", sb.len))) return false;
  *out = v_none();
  return true;
}

static bool m_close(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  SELF_FILE("close");
  if (!std_no_args(vm, "close", argc - 1, kw)) return false;
  (void)f;
  *out = v_none();
  return true;
}

void std_register_files(MistVM *vm) {
  lang_def_builtin(vm, "open", bi_open, -1, -1);
  static const struct {
    const char *name;
    BuiltinFn fn;
  } methods[] = {
    {"read", m_read}, {"readlines", m_readlines}, {"readline", m_readline},
    {"write", m_write}, {"writelines", m_writelines}, {"close", m_close},
  };
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    lang_def_method(vm, methods[i].name, methods[i].fn, -1, -1)->self_kinds = SELF_FILE_KIND;
}
