/* tensor_print.c: the text form of a tensor, laid out as NumPy 1.24's
 * repr lays out an array, with Mist's prefix and dtype:
 *
 *     tensor([[1. , 2.5],           tensor([1, 2, 3], i64)
 *             [3. , 4. ]], f32)     tensor(3.5, f32)
 *     tensor([ True, False], bool)  tensor([], shape=(0, 3), f32)
 *
 * The layout is NumPy's _formatArray: one line per row of a 2-d tensor,
 * a blank line between the blocks of higher dimensions, rows that
 * would pass the line width (75) wrapped under their first element,
 * and the dtype on the last line when it fits there (else on a line of
 * its own).  Every element is padded to a common width, so columns
 * line up: integers right-aligned to the widest, booleans as " True"
 * and "False", floats aligned on the point.
 *
 * Floats follow NumPy's FloatingFormat in its default "maxprec" mode:
 * all the elements shown share one notation, scientific when a finite
 * non-zero magnitude is >= 1e8 or < 1e-4 or the largest is more than
 * 1000 times the smallest (only the first with suppress), positional
 * otherwise.  Positional elements are the shortest decimal that reads
 * back to the same value of the tensor's dtype (so an f32 0.1 prints as
 * 0.1), cut to `precision` (8) digits after the point, trailing zeros
 * dropped but the point kept ("1.", "0.5"), then padded with spaces on
 * the right to the longest fraction shown ("1.5 ", "2.25").
 * Scientific elements show as many digits after the point as the
 * element that needs the most (its shortest form, at most `precision`),
 * each correctly rounded from its value (so an f32 8.4465e-10 shown
 * with 7 digits is 8.4465002e-10, as NumPy), with an exponent of at
 * least two digits, as many as the widest needs.  nan, inf and -inf are
 * right-aligned in the same width.
 *
 * A tensor of more than `threshold` (1000) elements is summarised: on
 * every axis longer than 2 * `edgeitems` (3), only the first and last
 * `edgeitems` entries are shown, with "..." between them (a line of its
 * own between rows); the format is chosen from the entries shown.
 * precision, threshold, edgeitems, linewidth and suppress are the VM's
 * print options (set_printoptions), NumPy's defaults until changed.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/tensor.h"

#define PREFIX "tensor("

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

/* Digits of |x| (finite, non-zero) in scientific notation with at most
 * prec digits after the first: the shortest, or, when that has more,
 * the value correctly rounded to prec (trailing zeros dropped). */
static void sci_digits(double x, bool f32, int prec, char *digits, int *exp10) {
  shortest(x, f32, digits, exp10);
  if ((int)strlen(digits) > prec + 1) {
    char buf[48];
    snprintf(buf, sizeof buf, "%.*e", prec, fabs(x));
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
 * trailing zeros (at most prec digits). */
static void positional(double x, bool f32, int prec, StrBuf *out) {
  if (x == 0) {
    sb_adds(out, "0.");
    return;
  }
  char digits[24];
  int e;
  shortest(x, f32, digits, &e);
  int n = (int)strlen(digits);
  if (n - 1 - e > prec) {   /* more fraction digits than we show: round */
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", prec, fabs(x));
    size_t len = strlen(buf);
    if (prec == 0) {
      sb_add(out, buf, len);
      sb_addc(out, '.');
      return;
    }
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

/* ---- the format of the elements shown ---- */

typedef struct Format {
  LangPrintOptions opt;
  DType dtype;
  bool summarise;       /* more than threshold elements */
  bool zero_d;
  /* floats */
  bool sci;             /* scientific notation */
  int frac;             /* sci: digits after the point */
  int exp_size;         /* sci: digits of the exponent */
  int pad_left;         /* characters before the point */
  int pad_right;        /* characters after it */
  /* integers */
  int width;
  /* gathered first */
  bool any, nonfinite, neginf;
  double min_abs, max_abs;
  int64_t imin, imax;
} Format;

typedef void (*ElemFn)(const ObjTensor *t, const char *p, Format *f);

static bool shown(const Format *f, int64_t len) {
  return f->summarise && len - f->opt.edgeitems > f->opt.edgeitems;   /* len > 2 edgeitems, without overflow */
}

/* Call fn on every element shown, in order. */
static void each(const ObjTensor *t, int d, const char *p, ElemFn fn, Format *f) {
  if (d == t->ndim) {
    fn(t, p, f);
    return;
  }
  int64_t len = t->shape[d];
  int64_t step = t->strides[d] * (int64_t)dev_dtype_size(t->dtype);
  for (int64_t i = 0; i < len; i++) {
    if (shown(f, len) && i == f->opt.edgeitems) i = len - f->opt.edgeitems;
    each(t, d + 1, p + i * step, fn, f);
  }
}

static double load_f(const ObjTensor *t, const char *p) {
  return t->dtype == DT_F32 ? (double)*(const float *)p : *(const double *)p;
}

static int64_t load_i(const ObjTensor *t, const char *p) {
  return t->dtype == DT_I32 ? *(const int32_t *)p : *(const int64_t *)p;
}

static void gather_range(const ObjTensor *t, const char *p, Format *f) {
  double x = load_f(t, p);
  if (!isfinite(x)) {
    f->nonfinite = true;
    if (x < 0) f->neginf = true;
    return;
  }
  x = fabs(x);
  if (x == 0) return;
  if (!f->any || x < f->min_abs) f->min_abs = x;
  if (!f->any || x > f->max_abs) f->max_abs = x;
  f->any = true;
}

/* The widths of the parts of finite x as the mode shows it. */
static void gather_widths(const ObjTensor *t, const char *p, Format *f) {
  double x = load_f(t, p);
  if (!isfinite(x)) return;
  bool f32 = t->dtype == DT_F32;
  int sign = signbit(x) ? 1 : 0;
  if (f->sci) {
    char digits[24];
    int e = 0;
    if (x == 0) {
      digits[0] = '0';
      digits[1] = '\0';
    } else {
      sci_digits(x, f32, f->opt.precision, digits, &e);
    }
    int frac = (int)strlen(digits) - 1;
    if (frac > f->frac) f->frac = frac;
    int ae = e < 0 ? -e : e, es = ae >= 100 ? 3 : 2;
    if (es > f->exp_size) f->exp_size = es;
    if (1 + sign > f->pad_left) f->pad_left = 1 + sign;
  } else {
    StrBuf sb;
    sb_init(&sb);
    positional(x, f32, f->opt.precision, &sb);
    int point = (int)(strchr(sb.data, '.') - sb.data);
    if (point + sign > f->pad_left) f->pad_left = point + sign;
    if ((int)sb.len - point - 1 > f->pad_right) f->pad_right = (int)sb.len - point - 1;
  }
}

static void gather_ints(const ObjTensor *t, const char *p, Format *f) {
  int64_t v = load_i(t, p);
  if (!f->any || v < f->imin) f->imin = v;
  if (!f->any || v > f->imax) f->imax = v;
  f->any = true;
}

static void make_format(const ObjTensor *t, Format *f) {
  const char *p = lang_tensor_ptr(t);
  if (lang_dtype_is_float(t->dtype)) {
    each(t, 0, p, gather_range, f);
    f->sci = f->any && (f->max_abs >= 1e8 || (!f->opt.suppress && (f->min_abs < 1e-4 || f->max_abs / f->min_abs > 1000)));
    each(t, 0, p, gather_widths, f);
    if (f->sci) f->pad_right = f->exp_size + 2 + f->frac;
    if (f->nonfinite) {
      /* room for nan, inf and -inf, right-aligned */
      int offset = f->pad_right + 1, inf = 3 + f->neginf;
      if (3 - offset > f->pad_left) f->pad_left = 3 - offset;
      if (inf - offset > f->pad_left) f->pad_left = inf - offset;
    }
  } else if (t->dtype != DT_BOOL) {
    each(t, 0, p, gather_ints, f);
    char a[24], b[24];
    int na = snprintf(a, sizeof a, "%lld", (long long)f->imin);
    int nb = snprintf(b, sizeof b, "%lld", (long long)f->imax);
    f->width = na > nb ? na : nb;
  }
}

static void pad(StrBuf *out, int n) {
  for (int i = 0; i < n; i++) sb_addc(out, ' ');
}

static void format_elem(const ObjTensor *t, const char *p, const Format *f, StrBuf *out) {
  if (t->dtype == DT_BOOL) {
    sb_adds(out, *(const uint8_t *)p ? (f->zero_d ? "True" : " True") : "False");
    return;
  }
  if (!lang_dtype_is_float(t->dtype)) {
    sb_printf(out, "%*lld", f->width, (long long)load_i(t, p));
    return;
  }
  double x = load_f(t, p);
  if (!isfinite(x)) {
    const char *s = isnan(x) ? "nan" : x < 0 ? "-inf" : "inf";
    pad(out, f->pad_left + f->pad_right + 1 - (int)strlen(s));
    sb_adds(out, s);
    return;
  }
  int sign = signbit(x) ? 1 : 0;
  if (f->sci) {
    /* the value's own digits, correctly rounded to the common count */
    char buf[64];
    snprintf(buf, sizeof buf, "%.*e", f->frac, fabs(x));
    char *e = strchr(buf, 'e');
    int ex = atoi(e + 1);
    pad(out, f->pad_left - 1 - sign);
    if (sign) sb_addc(out, '-');
    sb_add(out, buf, (size_t)(e - buf));
    if (f->frac == 0) sb_addc(out, '.');
    sb_printf(out, "e%c%0*d", ex < 0 ? '-' : '+', f->exp_size, ex < 0 ? -ex : ex);
    return;
  }
  StrBuf sb;
  sb_init(&sb);
  positional(x, t->dtype == DT_F32, f->opt.precision, &sb);
  int point = (int)(strchr(sb.data, '.') - sb.data);
  pad(out, f->pad_left - point - sign);
  if (sign) sb_addc(out, '-');
  sb_add(out, sb.data, sb.len);
  pad(out, f->pad_right - ((int)sb.len - point - 1));
}

/* ---- the layout: NumPy's _formatArray ---- */

/* Append word to line, first moving line to s (a line break, then the
 * hanging indent) when it would pass width, unless the line holds only
 * the indent. */
static void extend_line(StrBuf *s, StrBuf *line, const char *word, size_t wlen, int width, int indent) {
  if ((int)(line->len + wlen) > width && (int)line->len > indent) {
    size_t n = line->len;
    while (n > 0 && line->data[n - 1] == ' ') n--;
    sb_add(s, line->data, n);
    sb_addc(s, '\n');
    line->len = 0;
    line->data[0] = '\0';
    pad(line, indent);
  }
  sb_add(line, word, wlen);
}

/* The text of the sub-tensor at p of axes d.. (NumPy's recurser). */
static void layout(const ObjTensor *t, int d, const char *p, int indent, int width, const Format *f, StrBuf *out) {
  if (d == t->ndim) {
    format_elem(t, p, f, out);
    return;
  }
  int axes_left = t->ndim - d;
  int64_t len = t->shape[d];
  int64_t step = t->strides[d] * (int64_t)dev_dtype_size(t->dtype);
  bool summary = shown(f, len);
  int64_t lead = summary ? f->opt.edgeitems : 0, trail = summary ? f->opt.edgeitems : len;
  StrBuf s;
  sb_init(&s);
  if (axes_left == 1) {
    int elem_width = width - 1;   /* room for ',' or ']' */
    StrBuf line, word;
    sb_init(&line);
    pad(&line, indent);
    for (int64_t k = 0; k < lead + trail; k++) {
      int64_t i = k < lead ? k : len - (lead + trail - k);
      if (summary && k == lead) {
        extend_line(&s, &line, "...", 3, elem_width, indent);
        sb_adds(&line, ", ");
      }
      sb_init(&word);
      layout(t, d + 1, p + i * step, indent + 1, width - 1, f, &word);
      extend_line(&s, &line, word.data, word.len, elem_width, indent);
      if (k < lead + trail - 1) sb_adds(&line, ", ");
    }
    sb_add(&s, line.data, line.len);
  } else {
    for (int64_t k = 0; k < lead + trail; k++) {
      int64_t i = k < lead ? k : len - (lead + trail - k);
      if (summary && k == lead) {
        pad(&s, indent);
        sb_adds(&s, "...,");
        for (int n = 0; n < axes_left - 1; n++) sb_addc(&s, '\n');
      }
      StrBuf nested;
      sb_init(&nested);
      layout(t, d + 1, p + i * step, indent + 1, width - 1, f, &nested);
      pad(&s, indent);
      sb_add(&s, nested.data, nested.len);
      if (k < lead + trail - 1) {
        sb_addc(&s, ',');
        for (int n = 0; n < axes_left - 1; n++) sb_addc(&s, '\n');
      }
    }
  }
  sb_addc(out, '[');
  if (s.len > (size_t)indent) sb_add(out, s.data + indent, s.len - (size_t)indent);
  sb_addc(out, ']');
}

LangPrintOptions lang_print_defaults(void) {
  LangPrintOptions o = {.precision = 8, .threshold = 1000, .edgeitems = 3, .linewidth = 75, .suppress = false};
  return o;
}

void lang_tensor_repr(MistVM *vm, ObjTensor *t, StrBuf *out) {
  LangPrintOptions opt = vm ? vm->print_options : lang_print_defaults();
  size_t start = out->len;
  sb_adds(out, PREFIX);
  if (t->size == 0) {
    sb_adds(out, "[]");
    if (t->ndim != 1) {
      sb_adds(out, ", shape=");
      lang_shape_repr(t->ndim, t->shape, out);
    }
  } else {
    Format f = {0};
    f.opt = opt;
    f.dtype = t->dtype;
    f.summarise = t->size > opt.threshold;
    f.zero_d = t->ndim == 0;
    make_format(t, &f);
    /* NumPy takes the "," after the elements off the width */
    int indent = (int)strlen(PREFIX) + 1;
    layout(t, 0, lang_tensor_ptr(t), indent, (int)opt.linewidth - 1, &f, out);
  }
  sb_addc(out, ',');
  /* the dtype goes on the last line if it fits there */
  const char *dtype = dev_dtype_name(t->dtype);
  size_t line_start = start;
  for (size_t i = start; i < out->len; i++)
    if (out->data[i] == '\n') line_start = i + 1;
  if ((int64_t)(out->len - line_start + strlen(dtype) + 2) > opt.linewidth) {
    sb_addc(out, '\n');
    pad(out, (int)strlen(PREFIX));
  } else {
    sb_addc(out, ' ');
  }
  sb_printf(out, "%s)", dtype);
}
