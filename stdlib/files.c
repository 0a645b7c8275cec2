/* files.c: files as the standard library reads and writes them: a whole
 * file into memory, gzip'd data inflated through zlib, and atomic writes
 * (files.h).
 *
 * Files are read whole: the formats Mist reads (IDX, NPY, CSV,
 * safetensors) are parsed from memory, which keeps every check a
 * comparison with one length.  An atomic write goes to a temporary file
 * made next to its destination (so the rename cannot cross file
 * systems), which is fsync'd, renamed over the destination and whose
 * folder is fsync'd: a crash leaves the old file or the new one, never
 * half of one. */
#define _GNU_SOURCE
#include "stdlib/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lang/gc.h"

/* Python's OSError text: "[Errno 2] No such file or directory: 'x'". */
static bool os_error(MistVM *vm, int err, const char *path) {
  const char *kind = err == ENOENT ? "FileNotFoundError"
                     : err == EACCES || err == EPERM ? "PermissionError"
                     : err == EISDIR ? "IsADirectoryError"
                     : "OSError";
  return lang_raise(vm, kind, "[Errno %d] %s: '%s'", err, strerror(err), path);
}

static bool sandboxed(MistVM *vm, const char *fname) {
  return lang_raise(vm, "PermissionError", "%s: the file system is not available in the sandbox",
                    fname);
}

bool std_read_file(MistVM *vm, const char *fname, const char *path, unsigned char **data,
                   size_t *len) {
  if (vm->sandbox) return sandboxed(vm, fname);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return os_error(vm, errno, path);
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
    close(fd);
    return os_error(vm, e, path);
  }
  size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) {
    close(fd);
    return lang_raise(vm, "MemoryError", "%s: '%s' is too large to read", fname, path);
  }
  for (;;) {
    if (n + 1 >= cap) {   /* a file that grew, or a pipe: keep reading */
      unsigned char *b = cap < ((size_t)1 << 40) ? realloc(buf, cap * 2) : NULL;
      if (!b) {
        free(buf);
        close(fd);
        return lang_raise(vm, "MemoryError", "%s: '%s' is too large to read", fname, path);
      }
      buf = b;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      close(fd);
      return os_error(vm, e, path);
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = 0;
  *data = buf;
  *len = n;
  return true;
}

bool std_gunzip(MistVM *vm, const char *what, const unsigned char *data, size_t len, size_t max,
                unsigned char **out, size_t *outlen, bool *owned) {
  if (len < 2 || data[0] != 0x1f || data[1] != 0x8b) {
    *out = (unsigned char *)data;
    *outlen = len;
    *owned = false;
    return true;
  }
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    return lang_raise(vm, "MemoryError", "'%s': cannot start zlib", what);
  size_t cap = len * 4 < max ? len * 4 + 64 : max, n = 0;
  unsigned char *buf = malloc(cap + 1);
  const char *why = NULL;
  size_t in = 0;
  while (buf && !why) {
    /* zlib counts in uInt: feed and drain at most 1 GiB at a time */
    size_t avail_in = len - in, room = cap - n;
    z.next_in = (unsigned char *)data + in;
    z.avail_in = (uInt)(avail_in < (1u << 30) ? avail_in : (1u << 30));
    z.next_out = buf + n;
    z.avail_out = (uInt)(room < (1u << 30) ? room : (1u << 30));
    uInt given_in = z.avail_in, given_out = z.avail_out;
    int r = inflate(&z, Z_NO_FLUSH);
    in += given_in - z.avail_in;
    n += given_out - z.avail_out;
    if (r == Z_STREAM_END) {
      /* gzip files may hold several members one after another */
      if (in + 2 <= len && data[in] == 0x1f && data[in + 1] == 0x8b) {
        inflateReset(&z);
        continue;
      }
      if (in < len) why = "has bytes after the end of the gzip data";
      break;
    }
    if (r == Z_NEED_DICT || r == Z_DATA_ERROR || r == Z_STREAM_ERROR) {
      why = "is not valid gzip data (corrupt)";
    } else if (r == Z_MEM_ERROR) {
      why = "could not be inflated: out of memory";
    } else if (n == cap) {   /* Z_OK or Z_BUF_ERROR with the output full: grow it */
      if (cap >= max) {
        why = "inflates to more bytes than Mist reads";
        break;
      }
      size_t ncap = cap * 2 < max ? cap * 2 : max;
      unsigned char *b = realloc(buf, ncap + 1);
      if (!b) why = "could not be inflated: out of memory";
      else buf = b, cap = ncap;
    } else if (in == len && z.avail_in == 0 && r == Z_BUF_ERROR) {
      why = "is truncated: the gzip data ends early";
    }
  }
  inflateEnd(&z);
  if (!buf) return lang_raise(vm, "MemoryError", "'%s' could not be inflated: out of memory", what);
  if (why) {
    free(buf);
    return lang_raise(vm, "ValueError", "'%s' %s", what, why);
  }
  buf[n] = 0;
  *out = buf;
  *outlen = n;
  *owned = true;
  return true;
}

static bool write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t r = write(fd, p, len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    len -= (size_t)r;
  }
  return true;
}

/* A path that is not a regular file (a device such as /dev/null, a
 * fifo) is written in place, as Python's open(path, "w") writes it:
 * renaming a temporary over it would replace the device with a file
 * (as root, /dev/null itself). */
static bool write_in_place(MistVM *vm, const char *path, const StdBytes *parts, int nparts) {
  int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return os_error(vm, errno, path);
  bool ok = true;
  for (int i = 0; i < nparts && ok; i++) ok = write_all(fd, parts[i].data, parts[i].len);
  int e = ok ? 0 : errno;
  if (close(fd) != 0 && ok) ok = false, e = errno;
  return ok || os_error(vm, e ? e : EIO, path);
}

bool std_write_atomic(MistVM *vm, const char *path, const StdBytes *parts, int nparts) {
  if (vm->sandbox) return sandboxed(vm, "write");
  vm->effects++;
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    return write_in_place(vm, path, parts, nparts);
  /* a symbolic link: the file it names is replaced, the link kept */
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    char *real = realpath(path, NULL);
    if (real) {
      path = lang_strdup(real);
      free(real);
    }
  }
  /* the temporary file: ".NAME.XXXXXX" in the destination's folder */
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
  const char *base = slash ? slash + 1 : path;
  if (!*base) return os_error(vm, EISDIR, path);
  StrBuf tmp;
  sb_init(&tmp);
  sb_add(&tmp, path, dirlen);
  sb_printf(&tmp, ".%s.XXXXXX", base);
  char *tpath = lang_strndup(tmp.data, tmp.len);
  int fd = mkostemp(tpath, O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    /* name the destination: the folder is what is missing or closed */
    return os_error(vm, e, path);
  }
  bool ok = true;
  for (int i = 0; i < nparts && ok; i++) ok = write_all(fd, parts[i].data, parts[i].len);
  /* mkstemp makes 0600; a saved file should be as open as any other */
  mode_t mask = umask(0);
  umask(mask);
  ok = ok && fchmod(fd, 0666 & ~mask) == 0;
  ok = ok && fsync(fd) == 0;
  int e = ok ? 0 : errno;
  if (close(fd) != 0 && ok) ok = false, e = errno;
  if (ok && rename(tpath, path) != 0) ok = false, e = errno;
  if (!ok) {
    unlink(tpath);
    return os_error(vm, e ? e : EIO, path);
  }
  /* the rename itself must reach the disk: fsync the folder */
  const char *dir = dirlen ? lang_strndup(path, dirlen) : ".";
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return true;
}

void std_def_hidden(MistVM *vm, const char *global, const char *name, BuiltinFn fn) {
  ObjBuiltin *b = lang_builtin_new(name, fn, -1, -1);
  lang_dict_put(vm->builtins, lang_intern(vm, global, strlen(global)), v_obj(b));
}

bool std_makedirs(MistVM *vm, const char *path) {
  if (vm->sandbox) return sandboxed(vm, "makedirs");
  vm->effects++;
  char *p = lang_strdup(path);
  size_t n = strlen(p);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != 0) continue;
    char c = p[i];
    p[i] = 0;
    struct stat st;
    if (mkdir(p, 0777) != 0 && errno != EEXIST) return os_error(vm, errno, p);
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) return os_error(vm, ENOTDIR, p);
    p[i] = c;
  }
  return true;
}
