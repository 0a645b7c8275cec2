/* help.c: help(x), as Python's help prints it for a function: a
 * heading, the signature, and the documentation indented under it.
 *
 * A function written in Mist shows its parameters with their default
 * values, and its documentation: a docstring (a string literal as the
 * first statement of the body) or else the block of `#` comment lines
 * just above the `def`, as Python's inspect.getcomments finds it; both
 * are read from the source file the function came from.  A builtin
 * shows the signature and one paragraph from the table below, which is
 * the reference of the builtins users reach for (docs/language.md has
 * the rest of the story).  The layout is pydoc's ("Help on function f
 * in module __main__:", the signature, the text indented by four).  A
 * module lists its names; any other value names its type and the
 * methods `x.` may be followed by. */
#include <string.h>

#include "ir/ir.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/strbuf.h"
#include "stdlib/builtins.h"

typedef struct BuiltinDoc {
  const char *name, *signature, *doc;
} BuiltinDoc;

static const BuiltinDoc docs[] = {
  {"print", "print(*values, sep=' ', end='\\n')", "Write the values, as str() shows them, separated by sep and followed by end."},
  {"str", "str(object='')", "The text of object: str() of a str is itself; other values as print shows them."},
  {"repr", "repr(object)", "The text of object as Python's repr: strings quoted, floats shortest."},
  {"format", "format(value, format_spec='', /)", "The text of value laid out by format_spec, the mini-language of f-strings: format(x, '.3f') is f'{x:.3f}'."},
  {"int", "int(x=0, base=10)", "An int from a number (truncated toward zero) or from text in the given base."},
  {"float", "float(x=0.0)", "A float from a number or from text such as '1.5', 'inf', 'nan'."},
  {"bool", "bool(x=False)", "The truth of x: False for 0, 0.0, '', empty containers and None."},
  {"list", "list(iterable=())", "A list of the items of iterable."},
  {"tuple", "tuple(iterable=())", "A tuple of the items of iterable."},
  {"dict", "dict(mapping_or_pairs=(), **kwargs)", "A dict from another dict, from (key, value) pairs, or from keywords; keys are str."},
  {"range", "range(stop) or range(start, stop, step=1)", "The ints from start up to stop (not included), step apart."},
  {"len", "len(obj)", "The number of items in a container (characters in a str, rows of a tensor)."},
  {"abs", "abs(x)", "The absolute value of a number, or of each element of a tensor."},
  {"round", "round(number, ndigits=None)", "number rounded to ndigits after the point, halves to even; an int when ndigits is None."},
  {"min", "min(iterable, *, key=None, default=None) or min(a, b, ...)", "The smallest item; on a tensor, its smallest element (axis= for one axis)."},
  {"max", "max(iterable, *, key=None, default=None) or max(a, b, ...)", "The largest item; on a tensor, its largest element (axis= for one axis)."},
  {"sum", "sum(iterable, start=0)", "start plus the items; on a tensor, the sum of its elements (axis=, keepdims=)."},
  {"map", "map(function, iterable, ...)", "The list of function applied to the items (to items in parallel, for several iterables)."},
  {"filter", "filter(function, iterable)", "The list of the items for which function is true (the true items, for None)."},
  {"zip", "zip(*iterables, strict=False)", "The list of tuples of items taken in parallel, as long as the shortest."},
  {"enumerate", "enumerate(iterable, start=0)", "The list of (index, item) pairs."},
  {"sorted", "sorted(iterable, *, key=None, reverse=False)", "A new sorted list of the items; stable."},
  {"reversed", "reversed(sequence)", "A list of the items in reverse order."},
  {"any", "any(iterable)", "True if some item is true."},
  {"all", "all(iterable)", "True if every item is true."},
  {"type", "type(object)", "The name of the type of object as a str: 'int', 'float', 'tensor', 'function'..."},
  {"isinstance", "isinstance(object, classinfo)", "Whether object is of the type (int, float, str, bool, list, tuple, dict, range, tensor, or a type() name) or of one of a tuple of them."},
  {"callable", "callable(object)", "Whether object can be called: functions, lambdas, builtins, bound methods."},
  {"ord", "ord(c)", "The Unicode code point of a one-character str."},
  {"chr", "chr(i)", "The one-character str of code point i."},
  {"hex", "hex(number)", "The int in hexadecimal, as '0xff'."},
  {"oct", "oct(number)", "The int in octal, as '0o17'."},
  {"bin", "bin(number)", "The int in binary, as '0b101'."},
  {"divmod", "divmod(x, y)", "The pair (x // y, x % y)."},
  {"pow", "pow(base, exp, mod=None)", "base ** exp, or (base ** exp) % mod computed without the big power."},
  {"args", "args()", "The script's command-line words, as a list of str."},
  {"time", "time()", "Seconds since the epoch, as a float."},
  {"input", "input(prompt='')", "Write the prompt, then read a line of standard input and return it without its newline."},
  {"exit", "exit(code=None)", "Stop the program with status 0, code, or 1 after printing a str code."},
  {"quit", "quit(code=None)", "The same as exit."},
  {"iter", "iter(iterable)", "An iterator over the items; next(it) gives the next one and moves the name it on."},
  {"next", "next(iterator, default=None)", "The iterator's next item (default, or StopIteration, at the end); `x = next(it)` also moves it on."},
  {"help", "help(object)", "Show the signature and documentation of a function, or what a value offers."},
  {"open", "open(file, mode='r')", "A text file: .read() its contents, .readlines() its lines, .write(text) to replace them ('w') or add to them ('a')."},
  {"tensor", "tensor(data, dtype=None)", "An n-d tensor from nested lists of numbers (f32 for floats, i64 for ints, unless dtype says)."},
  {"zeros", "zeros(shape, dtype='f32')", "A tensor of zeros."},
  {"ones", "ones(shape, dtype='f32')", "A tensor of ones."},
  {"full", "full(shape, fill_value, dtype=None)", "A tensor whose every element is fill_value."},
  {"zeros_like", "zeros_like(t)", "Zeros of t's shape and dtype."},
  {"ones_like", "ones_like(t)", "Ones of t's shape and dtype."},
  {"arange", "arange(stop) or arange(start, stop, step=1)", "A 1-d tensor of evenly spaced values, as range gives them."},
  {"linspace", "linspace(start, stop, num=50)", "num evenly spaced values from start to stop, both included."},
  {"eye", "eye(n, m=None, dtype='f32')", "A 2-d tensor with ones on the diagonal."},
  {"key", "key(seed)", "A random key for rand and randn."},
  {"split", "split(key, num=2)", "num new independent keys made from key."},
  {"rand", "rand(shape, seed=None, key=None)", "Uniform random numbers in [0, 1), reproducible from seed or key."},
  {"randn", "randn(shape, seed=None, key=None)", "Standard normal random numbers, reproducible from seed or key."},
  {"reshape", "reshape(t, shape)", "t's elements in a new shape (one axis may be -1)."},
  {"transpose", "transpose(t, axes=None)", "t with its axes reversed or permuted."},
  {"broadcast_to", "broadcast_to(t, shape)", "t broadcast to shape, as NumPy does."},
  {"flatten", "flatten(t)", "t as a 1-d tensor."},
  {"squeeze", "squeeze(t, axis=None)", "t without its axes of length 1."},
  {"expand_dims", "expand_dims(t, axis)", "t with a new axis of length 1 at axis."},
  {"astype", "astype(t, dtype)", "t converted to dtype ('f32', 'f64', 'i32', 'i64', 'bool')."},
  {"item", "item(t)", "A one-element tensor as a float, int or bool."},
  {"tolist", "tolist(t)", "t as nested lists of numbers."},
  {"mean", "mean(t, axis=None, keepdims=False)", "The mean of t's elements, or along axis."},
  {"prod", "prod(t, axis=None, keepdims=False)", "The product of t's elements, or along axis."},
  {"argmax", "argmax(t, axis=None)", "The index of the largest element, or along axis."},
  {"argmin", "argmin(t, axis=None)", "The index of the smallest element, or along axis."},
  {"exp", "exp(x)", "e to the power x, for a number or each element of a tensor."},
  {"log", "log(x)", "The natural logarithm of x (math domain error for x <= 0)."},
  {"sqrt", "sqrt(x)", "The square root of x."},
  {"sin", "sin(x)", "The sine of x (radians)."},
  {"cos", "cos(x)", "The cosine of x (radians)."},
  {"tan", "tan(x)", "The tangent of x (radians)."},
  {"asin", "asin(x)", "The arc sine of x, in radians."},
  {"acos", "acos(x)", "The arc cosine of x, in radians."},
  {"atan", "atan(x)", "The arc tangent of x, in radians."},
  {"atan2", "atan2(y, x)", "The arc tangent of y / x, in radians, in the quadrant of the point (x, y)."},
  {"log2", "log2(x)", "The base-2 logarithm of x."},
  {"log10", "log10(x)", "The base-10 logarithm of x."},
  {"lgamma", "lgamma(x)", "The natural logarithm of the absolute value of the Gamma function at x."},
  {"erf", "erf(x)", "The error function at x."},
  {"floor", "floor(x)", "The largest integer <= x: an int for a number, a float tensor for a tensor."},
  {"ceil", "ceil(x)", "The smallest integer >= x: an int for a number, a float tensor for a tensor."},
  {"tanh", "tanh(x)", "The hyperbolic tangent of x."},
  {"sigmoid", "sigmoid(x)", "1 / (1 + exp(-x))."},
  {"relu", "relu(x)", "max(x, 0), for a number or each element of a tensor."},
  {"maximum", "maximum(a, b)", "The larger of a and b, elementwise with broadcasting."},
  {"minimum", "minimum(a, b)", "The smaller of a and b, elementwise with broadcasting."},
  {"where", "where(condition, a, b)", "a where condition is true, else b, elementwise with broadcasting."},
  {"clip", "clip(x, lo, hi)", "x limited to the interval [lo, hi]."},
  {"matmul", "matmul(a, b)", "The matrix product a @ b."},
  {"concat", "concat(tensors, axis=0)", "The tensors joined along an existing axis."},
  {"stack", "stack(tensors, axis=0)", "The tensors joined along a new axis."},
  {"softmax", "softmax(x, axis=-1)", "exp(x) normalised to sum to 1 along axis."},
  {"log_softmax", "log_softmax(x, axis=-1)", "log(softmax(x)), computed stably."},
  {"logsumexp", "logsumexp(x, axis=-1, keepdims=False)", "log(sum(exp(x))) along axis, computed stably."},
  {"one_hot", "one_hot(labels, n)", "Rows of n zeros with a one at each label."},
  {"conv2d", "conv2d(x, w, stride=1, padding=0)", "The 2-d convolution of an NCHW batch x with weights w."},
  {"max_pool2d", "max_pool2d(x, size, stride=None)", "The maximum over size x size windows of an NCHW batch."},
  {"allclose", "allclose(a, b, rtol=1e-05, atol=1e-08)", "Whether every element of a is within atol + rtol * |b| of b's."},
  {"set_printoptions", "set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, suppress=None)",
   "How tensors print from now on, as NumPy's options of those names."},
  {"grad", "grad(f, argnums=0)", "The function computing the derivative of f (a float or one-element tensor result) with respect to the arguments argnums."},
  {"value_and_grad", "value_and_grad(f, argnums=0)", "The function returning (f(x...), grad(f)(x...))."},
  {"vjp", "vjp(f, *xs)", "(f(*xs), pullback), where pullback(ct) gives the cotangents of xs."},
  {"jvp", "jvp(f, xs, ts)", "(f(*xs), the directional derivative of f at xs along ts)."},
  {"jacobian", "jacobian(f)", "The function computing f's Jacobian."},
  {"hessian", "hessian(f)", "The function computing f's Hessian."},
  {"stop_gradient", "stop_gradient(x)", "x, with zero derivative."},
  {"show_ir", "show_ir(f)", "Print f's IR."},
  {"show_source", "show_source(f)", "Print f (or grad(f)) as Mist source."},
  {"jit", "jit(f)", "f, compiled for the types of the arguments of each call (docs/jit.md)."},
  {"set_mode", "set_mode(mode)", "\"graph\": every function call compiles from now on; \"eager\": interpreted."},
  {"set_device", "set_device(name)", "\"cpu\": where tensors live and compiled code runs; \"gpu\" is an error in this build (no GPU backend)."},
};

static const BuiltinDoc *doc_of(const char *name) {
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
    if (strcmp(docs[i].name, name) == 0) return &docs[i];
  return NULL;
}

/* The lines of text, each indented by four spaces (blank ones too, as
 * pydoc prints them). */
static void add_indented(StrBuf *sb, const char *text, size_t len) {
  size_t i = 0;
  while (i < len) {
    size_t j = i;
    while (j < len && text[j] != '\n') j++;
    sb_adds(sb, "    ");
    sb_add(sb, text + i, j - i);
    sb_addc(sb, '\n');
    i = j + 1;
  }
}

static size_t indent_of(const char *line, size_t len) {
  size_t k = 0;
  while (k < len && line[k] == ' ') k++;
  return k;
}

/* The line after the header of the def on line `line`: where its ':'
 * outside brackets and strings ends a line (the parameters may run over
 * several lines); 0 for a body on the header's own line. */
static int body_line(MistVM *vm, int file, int line) {
  int depth = 0;
  for (int l = line;; l++) {
    size_t len;
    const char *t = lang_file_line(vm, file, l, &len);
    if (!t) return 0;
    for (size_t i = 0; i < len; i++) {
      char c = t[i];
      if (c == '#') break;
      if (c == '"' || c == '\'') {
        for (i++; i < len && t[i] != c; i++)
          if (t[i] == '\\') i++;
      } else if (c == '(' || c == '[' || c == '{') {
        depth++;
      } else if (c == ')' || c == ']' || c == '}') {
        depth--;
      } else if (c == ':' && depth == 0) {
        size_t k = i + 1;
        while (k < len && (t[k] == ' ' || t[k] == '\r')) k++;
        return k == len || t[k] == '#' ? l + 1 : 0;
      }
    }
  }
}

/* The docstring of the def whose header is on line `line` (a string
 * literal, in triple quotes or not, as the body's first statement),
 * dedented as inspect.cleandoc does, or the comment block above it;
 * false if none. */
static bool source_doc(MistVM *vm, int file, int line, StrBuf *doc) {
  size_t len;
  const char *text = NULL;
  int body = body_line(vm, file, line);
  if (body)
    while ((text = lang_file_line(vm, file, body, &len)) && indent_of(text, len) == len) body++;
  StrBuf raw;
  sb_init(&raw);
  size_t end = 0;
  bool found = false;
  if (text) {
    size_t k = indent_of(text, len);
    const char *q = text + k;
    size_t rest = len - k;
    if (rest >= 3 && (memcmp(q, "\"\"\"", 3) == 0 || memcmp(q, "'''", 3) == 0)) {
      char delim[4] = {q[0], q[0], q[0], 0};
      sb_add(&raw, q + 3, rest - 3);
      int l = body;
      while (!strstr(raw.data ? raw.data : "", delim)) {
        const char *more = lang_file_line(vm, file, ++l, &len);
        if (!more) return false;
        sb_addc(&raw, '\n');
        sb_add(&raw, more, len);
      }
      end = (size_t)(strstr(raw.data, delim) - raw.data);
      found = true;
    } else if (rest >= 2 && (q[0] == '"' || q[0] == '\'')) {
      /* "..." on one line, its escapes read as the lexer reads them */
      size_t i = 1;
      for (; i < rest && q[i] != q[0]; i++) {
        if (q[i] == '\\' && i + 1 < rest) {
          char e = q[++i];
          sb_addc(&raw, e == 'n' ? '\n' : e == 't' ? '\t' : e);
        } else {
          sb_addc(&raw, q[i]);
        }
      }
      end = raw.len;
      found = i < rest;
    }
  }
  if (found) {
    /* cleandoc: tabs expanded to every 8 columns, the first line
     * stripped, the others dedented by their common indentation, blank
     * lines at both ends dropped */
    StrBuf tabs;
    sb_init(&tabs);
    for (size_t i = 0, col = 0; i < end; i++) {
      if (raw.data[i] == '\t') {
        do sb_addc(&tabs, ' '); while (++col % 8);
      } else {
        sb_addc(&tabs, raw.data[i]);
        /* (columns of characters: a UTF-8 continuation byte adds none) */
        col = raw.data[i] == '\n' ? 0 : ((unsigned char)raw.data[i] & 0xc0) == 0x80 ? col : col + 1;
      }
    }
    raw = tabs;
    end = tabs.len;
    size_t common = (size_t)-1;
    for (size_t i = 0; i < end;) {
      size_t j = i;
      while (j < end && raw.data[j] != '\n') j++;
      if (i > 0) {
        size_t ind = indent_of(raw.data + i, j - i);
        if (ind < j - i && ind < common) common = ind;
      }
      i = j + 1;
    }
    StrBuf out;
    sb_init(&out);
    for (size_t i = 0; i < end;) {
      size_t j = i;
      while (j < end && raw.data[j] != '\n') j++;
      size_t a = i == 0 ? indent_of(raw.data, j) : i + (common == (size_t)-1 ? 0 : common);
      if (a > j) a = j;
      sb_add(&out, raw.data + a, j - a);
      sb_addc(&out, '\n');
      i = j + 1;
    }
    size_t s = 0, e = out.len;
    while (s < e && (out.data[s] == '\n' || out.data[s] == ' ')) s++;
    while (e > s && (out.data[e - 1] == '\n' || out.data[e - 1] == ' ')) e--;
    if (e == s) return false;
    sb_add(doc, out.data + s, e - s);
    return true;
  }
  /* comment lines just above the def, in order, '#' kept (as
   * inspect.getcomments gives them) */
  int first = line;
  while (first > 1) {
    const char *above = lang_file_line(vm, file, first - 1, &len);
    size_t k = above ? indent_of(above, len) : len;
    if (!above || k == len || above[k] != '#') break;
    first--;
  }
  if (first == line) return false;
  for (int l = first; l < line; l++) {
    text = lang_file_line(vm, file, l, &len);
    size_t k = indent_of(text, len);
    while (len > k && (text[len - 1] == ' ' || text[len - 1] == '\r')) len--;
    if (l > first) sb_addc(doc, '\n');
    sb_add(doc, text + k, len - k);
  }
  return true;
}

static bool help_function(MistVM *vm, ObjFunc *f, StrBuf *sb) {
  IrGraph *g = f->graph;
  const char *name = g->display ? g->display->data : g->name->data;
  const char *module = g->module && g->module->name ? g->module->name->data : "__main__";
  sb_printf(sb, "Help on function %s in module %s:\n\n%s(", name, module, name);
  int nd = f->x ? f->x->ndefaults : 0;
  for (int i = 0; i < g->nparams; i++) {
    if (i) sb_adds(sb, ", ");
    sb_adds(sb, g->params[i]->name ? g->params[i]->name->data : "_");
    int d = i - (g->nparams - nd);
    if (d >= 0) {
      sb_addc(sb, '=');
      if (!lang_repr(vm, f->x->defaults[d], sb)) return false;
    }
  }
  sb_adds(sb, ")\n");
  StrBuf doc;
  sb_init(&doc);
  if (g->span.file >= 0 && source_doc(vm, g->span.file, g->span.line, &doc)) add_indented(sb, doc.data, doc.len);
  sb_addc(sb, '\n');
  return true;
}

static bool bi_help(MistVM *vm, int argc, const Value *argv, const KwArgs *kw, Value *out) {
  if (!std_one_arg(vm, "help", argc, kw)) return false;
  Value x = argv[0];
  StrBuf sb;
  sb_init(&sb);
  if (v_is_obj(x, O_BOUND)) x = AS_BOUND(x)->fn;
  if (v_is_obj(x, O_FUNC)) {
    if (!help_function(vm, AS_FUNC(x), &sb)) return false;
  } else if (v_is_obj(x, O_BUILTIN)) {
    const char *name = AS_BUILTIN(x)->name;
    const BuiltinDoc *d = doc_of(name);
    sb_printf(&sb, "Help on built-in function %s in module builtins:\n\n", name);
    if (d) {
      sb_printf(&sb, "%s\n", d->signature);
      add_indented(&sb, d->doc, strlen(d->doc));
    } else {
      sb_printf(&sb, "%s(...)\n", name);
    }
    sb_addc(&sb, '\n');
  } else {
    ObjSeq *names = lang_attr_names(vm, x);
    if (v_is_obj(x, O_MODULE)) sb_printf(&sb, "Help on module %s:\n\nNAMES\n", AS_MODULE(x)->name->data);
    else sb_printf(&sb, "Help on a value of type %s:\n\n%s\n", lang_type_name(x), names->len ? "METHODS" : "(no methods)");
    for (size_t i = 0; i < names->len; i++) sb_printf(&sb, "    %s\n", AS_STR(names->items[i])->data);
    sb_addc(&sb, '\n');
  }
  lang_write(vm, sb.data, sb.len);
  *out = v_none();
  return true;
}

void std_register_help(MistVM *vm) { lang_def_builtin(vm, "help", bi_help, -1, -1); }
