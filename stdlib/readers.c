/* readers.c: the array file formats the `data` and `io` modules read,
 * parsed from bytes in memory into tensors (files.h): IDX (MNIST's),
 * NumPy's .npy (and its writer), and CSV of numbers.
 *
 * Each reader first works out from the header how many bytes the data
 * must have, with overflow-checked arithmetic, compares that with what
 * it was given, and only then allocates and copies; so a corrupt or
 * hostile file gives an error naming the file and the problem, never a
 * read out of bounds or a huge allocation the file cannot back. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stdlib/files.h"

static bool bad(MistVM *vm, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool bad(MistVM *vm, const char *what, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return lang_raise(vm, "ValueError", "'%s' %s", what, msg);
}

/* The product of n dims, or -1 when it passes LANG_TENSOR_MAX_SIZE. */
static int64_t dims_size(int n, const int64_t *dims) {
  int64_t size = 1;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0 || (dims[i] && size > LANG_TENSOR_MAX_SIZE / dims[i])) return -1;
    size *= dims[i];
  }
  return size;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- IDX ---- */

bool std_read_idx(MistVM *vm, const char *what, const unsigned char *data, size_t len,
                  ObjTensor **out) {
  if (len < 4) return bad(vm, what, "is not an IDX file: %zu bytes, shorter than the header", len);
  if (data[0] != 0 || data[1] != 0)
    return bad(vm, what, "is not an IDX file: bad magic number 0x%02x%02x%02x%02x", data[0],
               data[1], data[2], data[3]);
  int type = data[2], ndim = data[3];
  int esize;
  DType dt;
  switch (type) {
  case 0x08: case 0x09: esize = 1; dt = DT_I32; break;
  case 0x0B: esize = 2; dt = DT_I32; break;
  case 0x0C: esize = 4; dt = DT_I32; break;
  case 0x0D: esize = 4; dt = DT_F32; break;
  case 0x0E: esize = 8; dt = DT_F64; break;
  default: return bad(vm, what, "is not an IDX file: unknown data type 0x%02x", type);
  }
  if (ndim == 0) return bad(vm, what, "has no dimensions: a dataset needs a first axis");
  if (ndim > LANG_TENSOR_MAX_DIMS)
    return bad(vm, what, "has %d dimensions; Mist's tensors have at most %d", ndim,
               LANG_TENSOR_MAX_DIMS);
  size_t head = 4 + 4 * (size_t)ndim;
  if (len < head)
    return bad(vm, what, "is truncated: the header needs %zu bytes, the file has %zu", head, len);
  int64_t dims[LANG_TENSOR_MAX_DIMS];
  for (int i = 0; i < ndim; i++) dims[i] = be32(data + 4 + 4 * i);
  int64_t size = dims_size(ndim, dims);
  if (size < 0) return bad(vm, what, "has dimensions too large for a tensor");
  size_t need = (size_t)size * (size_t)esize;
  if (len - head < need)
    return bad(vm, what, "is truncated: its shape needs %zu bytes of data, the file has %zu", need,
               len - head);
  if (len - head > need)
    return bad(vm, what, "has %zu bytes after the data its shape describes", len - head - need);
  ObjTensor *t = lang_tensor_new(vm, dt, ndim, dims, false);
  if (!t) return false;
  const unsigned char *p = data + head;
  char *dst = lang_tensor_ptr(t);
  int32_t *i32 = (int32_t *)dst;
  /* one loop per type: a 47 MB image file is read in a blink */
  switch (type) {
  case 0x08: for (int64_t i = 0; i < size; i++) i32[i] = p[i]; break;
  case 0x09: for (int64_t i = 0; i < size; i++) i32[i] = (int8_t)p[i]; break;
  case 0x0B:
    for (int64_t i = 0; i < size; i++) i32[i] = (int16_t)(uint16_t)(p[2 * i] << 8 | p[2 * i + 1]);
    break;
  case 0x0C: case 0x0D:   /* big-endian 32-bit words, ints or floats alike */
    for (int64_t i = 0; i < size; i++) {
      uint32_t u = be32(p + 4 * i);
      memcpy(dst + 4 * i, &u, 4);
    }
    break;
  case 0x0E:
    for (int64_t i = 0; i < size; i++) {
      uint64_t u = (uint64_t)be32(p + 8 * i) << 32 | be32(p + 8 * i + 4);
      memcpy(dst + 8 * i, &u, 8);
    }
    break;
  }
  *out = t;
  return true;
}

/* ---- NPY ---- */

/* The header is a Python dict literal:
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * read by a small scanner over exactly that grammar. */
typedef struct Scan {
  const char *p, *end;
} Scan;

static void skip_ws(Scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static bool eat(Scan *s, char c) {
  skip_ws(s);
  if (s->p < s->end && *s->p == c) {
    s->p++;
    return true;
  }
  return false;
}

/* a quoted string, into buf (at most cap-1 bytes) */
static bool scan_str(Scan *s, char *buf, size_t cap) {
  skip_ws(s);
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) return false;
  char q = *s->p++;
  size_t n = 0;
  while (s->p < s->end && *s->p != q) {
    if (n + 1 >= cap) return false;
    buf[n++] = *s->p++;
  }
  if (s->p >= s->end) return false;
  s->p++;
  buf[n] = 0;
  return true;
}

static bool scan_word(Scan *s, const char *w) {
  skip_ws(s);
  size_t n = strlen(w);
  if ((size_t)(s->end - s->p) >= n && memcmp(s->p, w, n) == 0) {
    s->p += n;
    return true;
  }
  return false;
}

static bool scan_int(Scan *s, int64_t *out) {
  skip_ws(s);
  int64_t v = 0;
  const char *start = s->p;
  while (s->p < s->end && isdigit((unsigned char)*s->p)) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*s->p++ - '0');
  }
  if (s->p < s->end && *s->p == 'L') s->p++;   /* Python 2 longs */
  *out = v;
  return s->p > start;
}

typedef struct NpyDescr {
  DType dt;
  int esize;
  bool big;       /* big-endian data */
  bool u8;        /* unsigned bytes, widened to i32 */
} NpyDescr;

static bool npy_descr(const char *d, NpyDescr *out) {
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return false;
  const char *t = d + 1;
  out->big = order == '>';
  out->u8 = false;
  if (!strcmp(t, "f4")) out->dt = DT_F32, out->esize = 4;
  else if (!strcmp(t, "f8")) out->dt = DT_F64, out->esize = 8;
  else if (!strcmp(t, "i4")) out->dt = DT_I32, out->esize = 4;
  else if (!strcmp(t, "i8")) out->dt = DT_I64, out->esize = 8;
  else if (!strcmp(t, "u1")) out->dt = DT_I32, out->esize = 1, out->u8 = true;
  else if (!strcmp(t, "b1")) out->dt = DT_BOOL, out->esize = 1;
  else return false;
  return true;
}

bool std_read_npy(MistVM *vm, const char *what, const unsigned char *data, size_t len,
                  ObjTensor **out) {
  if (len < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
    return bad(vm, what, "is not a .npy file: bad magic string");
  int major = data[6];
  size_t hlen, head;
  if (major == 1) {
    hlen = (size_t)data[8] | (size_t)data[9] << 8;
    head = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) return bad(vm, what, "is truncated: the header ends early");
    hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 | (size_t)data[11] << 24;
    head = 12;
  } else {
    return bad(vm, what, "has .npy format version %d.%d, which Mist does not read", major, data[7]);
  }
  if (hlen > len - head)
    return bad(vm, what, "is truncated: the header says %zu bytes, the file has %zu after it", hlen,
               len - head);
  Scan s = {(const char *)data + head, (const char *)data + head + hlen};
  char descr[32] = "", key[32];
  bool have_descr = false, have_order = false, have_shape = false, fortran = false;
  int ndim = 0;
  int64_t dims[LANG_TENSOR_MAX_DIMS];
  if (!eat(&s, '{')) return bad(vm, what, "has a header that is not a dict");
  while (!eat(&s, '}')) {
    if (!scan_str(&s, key, sizeof key) || !eat(&s, ':'))
      return bad(vm, what, "has a malformed header");
    if (!strcmp(key, "descr")) {
      if (!scan_str(&s, descr, sizeof descr)) return bad(vm, what, "has a malformed 'descr'");
      have_descr = true;
    } else if (!strcmp(key, "fortran_order")) {
      if (scan_word(&s, "True")) fortran = true;
      else if (scan_word(&s, "False")) fortran = false;
      else return bad(vm, what, "has a malformed 'fortran_order'");
      have_order = true;
    } else if (!strcmp(key, "shape")) {
      if (!eat(&s, '(')) return bad(vm, what, "has a malformed 'shape'");
      while (!eat(&s, ')')) {
        if (ndim == LANG_TENSOR_MAX_DIMS)
          return bad(vm, what, "has more than %d dimensions", LANG_TENSOR_MAX_DIMS);
        if (!scan_int(&s, &dims[ndim])) return bad(vm, what, "has a malformed 'shape'");
        ndim++;
        if (!eat(&s, ',')) {
          if (!eat(&s, ')')) return bad(vm, what, "has a malformed 'shape'");
          break;
        }
      }
      have_shape = true;
    } else {
      return bad(vm, what, "has an unknown header key '%s'", key);
    }
    if (!eat(&s, ',')) {
      if (!eat(&s, '}')) return bad(vm, what, "has a malformed header");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return bad(vm, what, "has a header without '%s'",
               !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
  NpyDescr d;
  if (!npy_descr(descr, &d))
    return bad(vm, what, "has dtype '%s'; Mist reads f4, f8, i4, i8, u1 and b1", descr);
  int64_t size = dims_size(ndim, dims);
  if (size < 0) return bad(vm, what, "has a shape too large for a tensor");
  size_t need = (size_t)size * (size_t)d.esize, have = len - head - hlen;
  if (have < need)
    return bad(vm, what, "is truncated: its shape needs %zu bytes of data, the file has %zu", need,
               have);
  if (have > need) return bad(vm, what, "has %zu bytes after the data its shape describes", have - need);
  /* Fortran order is the transpose of the reversed shape in C order */
  int64_t cdims[LANG_TENSOR_MAX_DIMS];
  for (int i = 0; i < ndim; i++) cdims[i] = fortran ? dims[ndim - 1 - i] : dims[i];
  ObjTensor *t = lang_tensor_new(vm, d.dt, ndim, cdims, false);
  if (!t) return false;
  const unsigned char *p = data + head + hlen;
  char *dst = lang_tensor_ptr(t);
  if (d.u8) {
    for (int64_t i = 0; i < size; i++) ((int32_t *)dst)[i] = p[i];
  } else if (d.dt == DT_BOOL) {
    for (int64_t i = 0; i < size; i++) dst[i] = p[i] != 0;
  } else if (!d.big) {
    memcpy(dst, p, need);
  } else {
    for (int64_t i = 0; i < size; i++)
      for (int b = 0; b < d.esize; b++) dst[i * d.esize + b] = (char)p[i * d.esize + d.esize - 1 - b];
  }
  if (fortran && ndim > 1) {
    ObjTensor *tt;
    if (!lang_tensor_transpose(vm, t, NULL, &tt)) return false;
    t = lang_tensor_contiguous(vm, tt);
    if (!t) return false;
  }
  *out = t;
  return true;
}

bool std_write_npy(MistVM *vm, ObjTensor *t, StrBuf *out) {
  static const char *const descr[] = {[DT_F32] = "<f4", [DT_F64] = "<f8", [DT_I32] = "<i4",
                                      [DT_I64] = "<i8", [DT_BOOL] = "|b1"};
  StrBuf h;
  sb_init(&h);
  sb_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr[t->dtype]);
  for (int i = 0; i < t->ndim; i++) sb_printf(&h, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  sb_printf(&h, "%s), }", t->ndim == 1 ? "," : "");
  /* pad with spaces so the data starts at a multiple of 64 bytes */
  size_t total = 10 + h.len + 1;
  while (total % 64) sb_addc(&h, ' '), total++;
  sb_addc(&h, '\n');
  sb_add(out, "\x93NUMPY\x01\x00", 8);
  sb_addc(out, (char)(h.len & 0xff));
  sb_addc(out, (char)(h.len >> 8));
  sb_add(out, h.data, h.len);
  ObjTensor *c = lang_tensor_contiguous(vm, t);
  if (!c) return false;
  sb_add(out, lang_tensor_ptr(c), (size_t)c->size * dev_dtype_size(c->dtype));
  LANG_KEEP(c);
  return true;
}

/* ---- CSV ---- */

/* One line's fields into vals (at most cap of them); the count in *n.
 * A field is a number with optional spaces around it. */
static bool csv_line(MistVM *vm, const char *what, size_t lineno, const char *p, const char *end,
                     float *vals, size_t cap, size_t *n) {
  size_t k = 0;
  for (;;) {
    const char *f = p;
    while (p < end && *p != ',') p++;
    const char *fe = p;
    while (f < fe && (*f == ' ' || *f == '\t')) f++;
    while (fe > f && (fe[-1] == ' ' || fe[-1] == '\t' || fe[-1] == '\r')) fe--;
    if (vals && k < cap) {
      char buf[64];
      size_t fl = (size_t)(fe - f);
      char *stop = NULL;
      if (fl > 0 && fl < sizeof buf) {
        memcpy(buf, f, fl);
        buf[fl] = 0;
        vals[k] = strtof(buf, &stop);
      }
      if (fl == 0 || fl >= sizeof buf || *stop)
        return lang_raise(vm, "ValueError", "'%s', line %zu, field %zu: '%.*s' is not a number",
                          what, lineno, k + 1, (int)(fl < 40 ? fl : 40), f);
    }
    k++;
    if (p == end) break;
    p++;   /* the comma */
  }
  *n = k;
  return true;
}

/* The next line of [*q, end) with something besides spaces on it
 * (*start, *stop), counting lines in *lineno; false at the end. */
static bool next_row(const char **q, const char *end, size_t *lineno, const char **start,
                     const char **stop) {
  while (*q < end) {
    const char *e = memchr(*q, '\n', (size_t)(end - *q));
    if (!e) e = end;
    const char *line = *q, *c = line;
    *q = e + 1;
    ++*lineno;
    while (c < e && (*c == ' ' || *c == '\t' || *c == '\r')) c++;
    if (c < e) {
      *start = line;
      *stop = e;
      return true;
    }
  }
  return false;
}

bool std_read_csv(MistVM *vm, const char *what, const char *text, size_t len, bool header,
                  ObjTensor **out) {
  const char *p = text, *end = text + len, *q, *line, *e;
  if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3;   /* a UTF-8 byte-order mark */
  /* first pass: the rows, and the width of the first */
  size_t rows = 0, width = 0, lineno = 0, first_line = 0;
  q = p;
  if (header) next_row(&q, end, &lineno, &line, &e);
  for (; next_row(&q, end, &lineno, &line, &e); rows++) {
    if (rows == 0) {
      if (!csv_line(vm, what, lineno, line, e, NULL, 0, &width)) return false;
      first_line = lineno;
    }
  }
  if (rows == 0) return bad(vm, what, "has no rows of data");
  int64_t shape[2] = {(int64_t)rows, (int64_t)width};
  if (dims_size(2, shape) < 0) return bad(vm, what, "is too large for a tensor");
  ObjTensor *t = lang_tensor_new(vm, DT_F32, 2, shape, false);
  if (!t) return false;
  float *dst = (float *)lang_tensor_ptr(t);
  /* second pass: every row as wide as the first, and its numbers */
  lineno = 0;
  q = p;
  if (header) next_row(&q, end, &lineno, &line, &e);
  for (size_t row = 0; next_row(&q, end, &lineno, &line, &e); row++) {
    size_t n;
    if (!csv_line(vm, what, lineno, line, e, NULL, 0, &n)) return false;
    if (n != width)
      return lang_raise(vm, "ValueError", "'%s', line %zu: %zu fields, but line %zu has %zu", what,
                        lineno, n, first_line, width);
    if (!csv_line(vm, what, lineno, line, e, dst + row * width, width, &n)) return false;
  }
  *out = t;
  return true;
}
