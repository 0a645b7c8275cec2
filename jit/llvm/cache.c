/* cache.c: the persistent cache of compiled code (docs/jit.md, "The
 * compile cache"): object files that LLVM made, kept on disk by the key
 * of what they were made from, so that the next process that lowers the
 * same module loads the object instead of running LLVM's passes and
 * code generator.
 *
 * backend.c makes the key: a SHA-256 of the typed graphs the module is
 * lowered from (jit/key.c) or of the unoptimised module's bitcode, and
 * of everything else that decides the machine code (the CPU and its
 * features, LLVM's version, the pipeline, this file's format).  The
 * module embeds no address of this process (lower.c reaches every
 * object through cx, by index, and the runtime by symbol name), so an
 * object made by one process is valid in another.
 *
 * An entry is one file, DIR/jit/HEX.o (HEX: the key), holding a header
 * (a magic word, the format, the key again, the hash of the module the
 * object was made from, the lengths of the object and of its tables,
 * their SHA-256), the object and the tables its code reads (jit/key.c;
 * none where they could not be stored).  It is written to a temporary file in the
 * same folder and renamed into place, so a reader sees a whole entry or
 * none, whatever other processes do at the same time.  A file that is
 * not a whole, valid entry for its key (truncated, corrupt, another
 * format) is ignored, and the compilation that follows replaces it.
 * After a process's first write, and after any write that may have
 * filled the folder past its cap by its count, the entries used longest
 * ago (their mtime: a hit touches it) are removed down to the cap.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jit/llvm/cg.h"

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t sha_k[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(uint32_t h[8], const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
    uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void jit_sha_init(JitSha *s) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, h0, sizeof h0);
  s->len = 0;
}

void jit_sha_add(JitSha *s, const void *data, size_t n) {
  const uint8_t *p = data;
  size_t have = (size_t)(s->len % 64);
  s->len += n;
  if (have) {
    size_t take = 64 - have < n ? 64 - have : n;
    memcpy(s->buf + have, p, take);
    p += take, n -= take;
    if (have + take < 64) return;
    sha_block(s->h, s->buf);
  }
  for (; n >= 64; p += 64, n -= 64) sha_block(s->h, p);
  memcpy(s->buf, p, n);
}

void jit_sha_end(JitSha *s, uint8_t out[32]) {
  uint64_t bits = s->len * 8;
  uint8_t pad[72] = {0x80};
  size_t have = (size_t)(s->len % 64), npad = (have < 56 ? 56 : 120) - have;
  for (int i = 0; i < 8; i++) pad[npad + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
  jit_sha_add(s, pad, npad + 8);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

static void sha256(const void *data, size_t n, uint8_t out[32]) {
  JitSha s;
  jit_sha_init(&s);
  jit_sha_add(&s, data, n);
  jit_sha_end(&s, out);
}

void jit_hex(const uint8_t *bytes, int n, char *out) {
  for (int i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

/* ---- the folder ---- */

/* An entry's header, then the object. */
#define MAGIC "MISTJITO"
#define FORMAT 3
typedef struct Header {
  char magic[8];
  uint32_t format;
  uint32_t reserved;
  uint8_t key[32];
  uint8_t module[32];     /* the SHA-256 of the module the object was made
                             from (backend.c's module_sum): what a check
                             compares */
  uint64_t size;          /* the object's */
  uint64_t tables;        /* the size of its tables (jit/key.c), after it; 0: none */
  uint8_t sum[32];        /* the SHA-256 of the object and its tables */
} Header;

#define DEFAULT_CAP ((uint64_t)256 << 20)

static char *join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", a, b);
  return s;
}

/* mkdir -p path (mode 0700 for what it makes). */
static bool make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    bool ok = mkdir(path, 0700) == 0 || errno == EEXIST;
    *p = '/';
    if (!ok) return false;
  }
  return mkdir(path, 0700) == 0 || errno == EEXIST;
}

static void set_off(JitCache *c, const char *fmt, const char *path) {
  snprintf(c->off, sizeof c->off, fmt, path, strerror(errno));
}

void jit_cache_open(JitCache *c) {
  memset(c, 0, sizeof *c);
  c->cap = DEFAULT_CAP;
  const char *on = getenv("MIST_JIT_CACHE");
  if (on && strcmp(on, "0") == 0) return;   /* off, and nothing to say */
  const char *cap = getenv("MIST_JIT_CACHE_MB");
  if (cap && *cap) {
    char *end;
    double mb = strtod(cap, &end);
    if (*end == 0 && mb >= 0) c->cap = (uint64_t)(mb * 1048576.0);
  }
  const char *dir = getenv("MIST_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char *base = dir && *dir ? strdup(dir)
             : xdg && *xdg ? join(xdg, "mist")
             : home && *home ? join(home, ".cache/mist") : NULL;
  if (!base) {
    snprintf(c->off, sizeof c->off, "no compile cache: neither MIST_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
    return;
  }
  c->dir = join(base, "jit");
  free(base);
  if (!c->dir || !make_dirs(c->dir) || access(c->dir, R_OK | W_OK | X_OK) != 0) {
    if (c->dir) set_off(c, "no compile cache: cannot make or write %.3900s: %s", c->dir);
    free(c->dir);
    c->dir = NULL;
  }
}

void jit_cache_close(JitCache *c) {
  free(c->dir);
  c->dir = NULL;
}

static char *entry_path(const JitCache *c, const uint8_t key[32]) {
  char hex[65], name[80];
  jit_hex(key, 32, hex);
  snprintf(name, sizeof name, "%s.o", hex);
  return join(c->dir, name);
}

/* Read exactly n bytes. */
static bool read_all(int fd, void *buf, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
  for (size_t put = 0; put < n;) {
    ssize_t r = write(fd, (const char *)buf + put, n - put);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    put += (size_t)r;
  }
  return true;
}

void *jit_cache_get(JitCache *c, const uint8_t key[32], size_t *size, uint8_t module[32], size_t *tables) {
  if (!c->dir) return NULL;
  char *path = entry_path(c, key);
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  void *obj = NULL;
  struct stat st;
  Header h;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > sizeof h &&
      read_all(fd, &h, sizeof h) && memcmp(h.magic, MAGIC, 8) == 0 && h.format == FORMAT &&
      memcmp(h.key, key, 32) == 0 && h.size < (uint64_t)st.st_size && h.tables < (uint64_t)st.st_size &&
      h.size + h.tables == (uint64_t)st.st_size - sizeof h && (obj = malloc(h.size + h.tables))) {
    uint8_t sum[32];
    if (read_all(fd, obj, h.size + h.tables) && (sha256(obj, h.size + h.tables, sum), memcmp(sum, h.sum, 32) == 0)) {
      *size = h.size;
      *tables = h.tables;
      memcpy(module, h.module, 32);
      /* used now: the last to be pruned */
      futimens(fd, NULL);
    } else {
      free(obj);
      obj = NULL;
    }
  }
  if (fd >= 0) close(fd);
  free(path);
  return obj;
}

typedef struct Entry {
  char *name;
  off_t size;
  struct timespec used;
} Entry;

static int older(const void *a, const void *b) {
  const Entry *x = a, *y = b;
  if (x->used.tv_sec != y->used.tv_sec) return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  return x->used.tv_nsec < y->used.tv_nsec ? -1 : x->used.tv_nsec > y->used.tv_nsec;
}

/* Remove the entries used longest ago until the folder holds at most
 * the cap, and temporary files an hour old (a writer that died). */
static void prune(JitCache *c) {
  DIR *d = opendir(c->dir);
  if (!d) return;
  Entry *es = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0;
  time_t now = time(NULL);
  int dfd = dirfd(d);
  for (struct dirent *de; (de = readdir(d));) {
    struct stat st;
    if (de->d_name[0] == '.' && (de->d_name[1] == 0 || de->d_name[1] == '.')) continue;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (strncmp(de->d_name, ".tmp.", 5) == 0) {
      if (now - st.st_mtime > 3600) unlinkat(dfd, de->d_name, 0);
      continue;
    }
    size_t len = strlen(de->d_name);
    if (len < 3 || strcmp(de->d_name + len - 2, ".o") != 0) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      Entry *more = realloc(es, cap * sizeof *es);
      if (!more) break;
      es = more;
    }
    es[n++] = (Entry){strdup(de->d_name), st.st_size, st.st_mtim};
    total += (uint64_t)st.st_size;
  }
  qsort(es, n, sizeof *es, older);
  for (size_t i = 0; i < n && total > c->cap; i++)
    if (es[i].name && unlinkat(dfd, es[i].name, 0) == 0) total -= (uint64_t)es[i].size;
  c->total = total;
  c->scanned = true;
  for (size_t i = 0; i < n; i++) free(es[i].name);
  free(es);
  closedir(d);
}

bool jit_cache_put(JitCache *c, const uint8_t key[32], const uint8_t module[32], const void *obj, size_t size,
                   const void *tables, size_t ntables, const char **why) {
  if (!c->dir) return false;
  Header h = {.format = FORMAT, .size = size, .tables = ntables};
  memcpy(h.magic, MAGIC, 8);
  memcpy(h.key, key, 32);
  memcpy(h.module, module, 32);
  JitSha s;
  jit_sha_init(&s);
  jit_sha_add(&s, obj, size);
  jit_sha_add(&s, tables, ntables);
  jit_sha_end(&s, h.sum);
  char tmpname[64];
  static unsigned seq;   /* (VMs on other threads write too) */
  snprintf(tmpname, sizeof tmpname, ".tmp.%ld.%u.%ld", (long)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED),
           (long)time(NULL));
  char *tmp = join(c->dir, tmpname), *path = entry_path(c, key);
  int fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
  bool ok = fd >= 0 && write_all(fd, &h, sizeof h) && write_all(fd, obj, size) && write_all(fd, tables, ntables);
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    set_off(c, "not cached: cannot write %.3900s: %s", c->dir);
    *why = c->off;
    if (fd >= 0) unlink(tmp);
  }
  free(tmp);
  free(path);
  /* the folder is read once per process, and again only when what this
   * process wrote since may have filled it: a big cache is not read
   * after every compilation */
  if (ok && (!c->scanned || (c->total += sizeof h + size + ntables) > c->cap)) prune(c);
  return ok;
}
