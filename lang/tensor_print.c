/* tensor_print.c: the text form of a tensor, NumPy's repr on one line:
 *
 *     tensor([[1., 2.], [3., 4.]], f32)     tensor([1, 2, 3], i64)
 *     tensor([True, False], bool)           tensor(3.5, f32)
 *     tensor([1.e-05, 1.e+00], f32)         tensor([], shape=(0, 3), f32)
 *
 * Floats follow NumPy's FloatingFormat (floatmode "maxprec", precision
 * 8), but without the padding that aligns columns, which only helps on
 * several lines.  All the elements shown share one notation:
 * scientific when a finite non-zero magnitude is >= 1e8 or < 1e-4, or
 * the largest is more than 1000 times the smallest; positional
 * otherwise.  Positional elements are the shortest decimal that reads
 * back to the same value of the tensor's dtype (so an f32 0.1 prints as
 * 0.1), rounded to at most 8 digits after the point, with trailing
 * zeros dropped but the point kept ("1.", "0.5").  Scientific elements
 * show as many digits after the point as the element that needs the
 * most (its shortest form, at most 8), each correctly rounded from its
 * value (so zeros pad exact values: "1.5e-05", "1.0e+00"), with an
 * exponent of at least two digits, as many as the widest needs.  Non-finite
 * values print as nan, inf, -inf.
 *
 * A tensor of more than 1000 elements is summarised as NumPy does: on
 * every axis longer than 6, only the first 3 and last 3 entries are
 * shown, with "..." between them; the notation is chosen from the
 * entries shown.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/tensor.h"

#define THRESHOLD 1000
#define EDGE 3
#define PRECISION 8

/* ---- digits ---- */

static bool reads_back(const char *text, double x, bool f32) {
  if (f32) return strtof(text, NULL) == (float)x;
  return strtod(text, NULL) == x;
}

/* The shortest significant digits (at most 17) of |x| (finite, non-zero)
 * that read back to x as an f32 or f64, and the decimal exponent of the
 * first.  As lang_float_repr does: try each precision's correctly
 * rounded digits and their two neighbours. */
static void shortest(double x, bool f32, char *digits, int *exp10) {
  x = fabs(x);
  char ans[48];
  for (int p = 1; p <= 17; p++) {
    snprintf(ans, sizeof ans, "%.*e", p - 1, x);
    if (reads_back(ans, x, f32)) break;
    /* the two neighbours on the grid of p digits */
    char *e = strchr(ans, 'e');
    int ex = atoi(e + 1), n = 0;
    char d[24];
    for (char *q = ans; q < e; q++)
      if (isdigit((unsigned char)*q)) d[n++] = *q;
    d[n] = '\0';
    bool found = false;
    for (int dir = -1; dir <= 1 && !found; dir += 2) {
      char alt[24], txt[48];
      int aex = ex, i = n - 1;
      memcpy(alt, d, (size_t)n + 1);
      if (dir > 0) {
        while (i >= 0 && alt[i] == '9') alt[i--] = '0';
        if (i >= 0) {
          alt[i]++;
        } else {
          alt[0] = '1';
          aex++;
        }
      } else {
        while (i >= 0 && alt[i] == '0') alt[i--] = '9';
        if (i >= 0) alt[i]--;
        if (alt[0] == '0') {
          memset(alt, '9', (size_t)n);
          aex--;
        }
      }
      snprintf(txt, sizeof txt, "%c.%se%d", alt[0], alt + 1, aex);
      if (reads_back(txt, x, f32)) {
        memcpy(ans, txt, sizeof txt);
        found = true;
      }
    }
    if (found) break;
  }
  char *e = strchr(ans, 'e');
  *exp10 = atoi(e + 1);
  int n = 0;
  for (char *q = ans; q < e; q++)
    if (isdigit((unsigned char)*q)) digits[n++] = *q;
  while (n > 1 && digits[n - 1] == '0') n--;
  digits[n] = '\0';
}

/* Digits of |x| as the printer shows them in scientific notation: the
 * shortest, rounded to at most PRECISION digits after the point. */
static void sci_digits(double x, bool f32, char *digits, int *exp10) {
  shortest(x, f32, digits, exp10);
  if ((int)strlen(digits) > PRECISION + 1) {
    char buf[48];
    snprintf(buf, sizeof buf, "%.*e", PRECISION, fabs(x));
    char *e = strchr(buf, 'e');
    *exp10 = atoi(e + 1);
    int n = 0;
    for (char *q = buf; q < e; q++)
      if (isdigit((unsigned char)*q)) digits[n++] = *q;
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = '\0';
  }
}

/* |x| in positional notation: integer part, '.', fraction without
 * trailing zeros (at most PRECISION digits). */
static void positional(double x, bool f32, StrBuf *out) {
  if (x == 0) {
    sb_adds(out, "0.");
    return;
  }
  char digits[24];
  int e;
  shortest(x, f32, digits, &e);
  int n = (int)strlen(digits);
  if (n - 1 - e > PRECISION) {   /* more fraction digits than we show: round */
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", PRECISION, fabs(x));
    size_t len = strlen(buf);
    while (len > 0 && buf[len - 1] == '0') len--;
    sb_add(out, buf, len);
    return;
  }
  if (e < 0) {
    sb_adds(out, "0.");
    for (int i = 0; i < -e - 1; i++) sb_addc(out, '0');
    sb_adds(out, digits);
  } else if (n <= e + 1) {
    /* a whole number: all its digits, even those the shortest form
     * rounds away (an f32 58691408 is not shown as 58691410) */
    char buf[400];
    snprintf(buf, sizeof buf, "%.0f.", fabs(x));
    sb_adds(out, buf);
  } else {
    sb_add(out, digits, (size_t)e + 1);
    sb_addc(out, '.');
    sb_adds(out, digits + e + 1);
  }
}

/* ---- the walk over the elements shown ---- */

typedef struct Format {
  bool f32;
  bool sci;            /* scientific notation */
  int frac;            /* sci: digits after the point */
  int exp_size;        /* sci: digits of the exponent */
  /* gathered first */
  bool any;
  double min_abs, max_abs;
} Format;

typedef void (*ElemFn)(const ObjTensor *t, const char *p, Format *f, StrBuf *out);

static void walk(const ObjTensor *t, int d, const char *p, bool summarise, ElemFn fn, Format *f,
                 StrBuf *out) {
  if (d == t->ndim) {
    fn(t, p, f, out);
    return;
  }
  int64_t len = t->shape[d];
  int64_t step = t->strides[d] * (int64_t)dev_dtype_size(t->dtype);
  if (out) sb_addc(out, '[');
  for (int64_t i = 0; i < len; i++) {
    if (summarise && len > 2 * EDGE && i == EDGE) {
      if (out) sb_adds(out, ", ...");
      i = len - EDGE;
    }
    if (out && i > 0) sb_adds(out, ", ");
    walk(t, d + 1, p + i * step, summarise, fn, f, out);
  }
  if (out) sb_addc(out, ']');
}

static double load_f(const ObjTensor *t, const char *p) {
  return t->dtype == DT_F32 ? (double)*(const float *)p : *(const double *)p;
}

static void gather_range(const ObjTensor *t, const char *p, Format *f, StrBuf *out) {
  (void)out;
  double x = fabs(load_f(t, p));
  if (!isfinite(x) || x == 0) return;
  if (!f->any || x < f->min_abs) f->min_abs = x;
  if (!f->any || x > f->max_abs) f->max_abs = x;
  f->any = true;
}

static void gather_sci(const ObjTensor *t, const char *p, Format *f, StrBuf *out) {
  (void)out;
  double x = load_f(t, p);
  if (!isfinite(x)) return;
  char digits[24];
  int e = 0;
  if (x == 0) {
    digits[0] = '0';
    digits[1] = '\0';
  } else {
    sci_digits(x, f->f32, digits, &e);
  }
  int frac = (int)strlen(digits) - 1;
  if (frac > f->frac) f->frac = frac;
  int ae = e < 0 ? -e : e, es = ae >= 100 ? 3 : 2;
  if (es > f->exp_size) f->exp_size = es;
}

static void print_float(const ObjTensor *t, const char *p, Format *f, StrBuf *out) {
  double x = load_f(t, p);
  if (isnan(x)) {
    sb_adds(out, "nan");
    return;
  }
  if (signbit(x)) sb_addc(out, '-');
  if (isinf(x)) {
    sb_adds(out, "inf");
    return;
  }
  if (!f->sci) {
    positional(x, f->f32, out);
    return;
  }
  /* the value's own digits, correctly rounded to the common count (so
   * an f32 8.4465e-10 shown with 7 digits is 8.4465002e-10, as NumPy) */
  char buf[64];
  snprintf(buf, sizeof buf, "%.*e", f->frac, fabs(x));
  char *e = strchr(buf, 'e');
  int ex = atoi(e + 1);
  sb_add(out, buf, (size_t)(e - buf));
  if (f->frac == 0) sb_addc(out, '.');
  sb_printf(out, "e%c%0*d", ex < 0 ? '-' : '+', f->exp_size, ex < 0 ? -ex : ex);
}

static void print_other(const ObjTensor *t, const char *p, Format *f, StrBuf *out) {
  (void)f;
  switch (t->dtype) {
  case DT_BOOL: sb_adds(out, *(const uint8_t *)p ? "True" : "False"); break;
  case DT_I32: sb_printf(out, "%d", (int)*(const int32_t *)p); break;
  case DT_I64: sb_printf(out, "%lld", (long long)*(const int64_t *)p); break;
  default: break;
  }
}

void lang_tensor_repr(ObjTensor *t, StrBuf *out) {
  sb_adds(out, "tensor(");
  if (t->size == 0) {
    sb_adds(out, "[]");
    if (t->ndim != 1) {
      sb_adds(out, ", shape=");
      lang_shape_repr(t->ndim, t->shape, out);
    }
  } else {
    bool summarise = t->size > THRESHOLD;
    const char *p = lang_tensor_ptr(t);
    Format f = {0};
    if (lang_dtype_is_float(t->dtype)) {
      f.f32 = t->dtype == DT_F32;
      walk(t, 0, p, summarise, gather_range, &f, NULL);
      f.sci = f.any && (f.max_abs >= 1e8 || f.min_abs < 1e-4 || f.max_abs / f.min_abs > 1000);
      if (f.sci) walk(t, 0, p, summarise, gather_sci, &f, NULL);
      walk(t, 0, p, summarise, print_float, &f, out);
    } else {
      walk(t, 0, p, summarise, print_other, &f, out);
    }
  }
  sb_printf(out, ", %s)", dev_dtype_name(t->dtype));
}
