/* test_tensor.c: the Check suite of tensors (lang/tensor*.c, lang/random.c,
 * stdlib/tensor*.c).
 *
 * Three kinds of check:
 *  - programs run through the public API whose printed output was worked
 *    out by hand (arithmetic, promotion, indexing, reductions, errors),
 *    and whose float formatting was compared with NumPy 1.24's repr on
 *    a few thousand random arrays while writing the printer;
 *  - property tests over random shapes and strided views, against plain
 *    reference loops written here: broadcasting binary operations,
 *    reductions over random axes, matmul (batched, transposed, vectors),
 *    conv2d and max_pool2d, casts;
 *  - the machinery: views share buffers and functional updates never
 *    change another name's value, Philox's known-answer vectors, random
 *    numbers that do not depend on the thread count, and the bound on
 *    resident memory when a loop makes many big temporaries.
 */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/ir.h"
#include "lang/gc.h"
#include "lang/ops.h"
#include "lang/tensor.h"
#include "mist.h"

/* ---- the VM and output capture ---- */

#include "capture.h"


static MistVM *vm;
static Buf out;

static void setup(void) { vm = capture_vm_new(&out); }

static void teardown(void) {
  capture_vm_free(vm, &out);
  vm = NULL;
}

/* Run src; it must succeed.  Returns what it printed. */
static const char *run(const char *src) {
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", src, false);
  ck_assert_msg(s == MIST_OK, "failed:\n%s\n--- error:\n%s", src, mist_error(vm));
  return out.data;
}

/* Run src; it must fail.  Returns the first line of the error. */
static const char *run_error(const char *src) {
  static char line[1024];
  buf_clear(&out);
  MistStatus s = mist_eval(vm, "<t>", src, false);
  ck_assert_msg(s != MIST_OK, "expected an error from:\n%s", src);
  const char *e = mist_error(vm);
  size_t n = strcspn(e, "\n");
  if (n >= sizeof line) n = sizeof line - 1;
  memcpy(line, e, n);
  line[n] = 0;
  return line;
}

#define CHECK_OUT(src, want) ck_assert_str_eq(run(src), want)
/* errors render as "<t>:LINE:COL: error: MESSAGE" */
#define CHECK_ERR(src, want)                                                      \
  do {                                                                            \
    const char *got_ = strstr(run_error(src), "error: ");                         \
    ck_assert_ptr_nonnull(got_);                                                  \
    ck_assert_str_eq(got_ + 7, want);                                             \
  } while (0)

/* The value of a global of the main module. */
static Value global(const char *name) {
  ObjModule *m = vm->main;
  Value slot;
  ck_assert_msg(lang_dict_get(m->names, lang_str(name), &slot), "no global %s", name);
  return m->slots[slot.i];
}

static ObjTensor *global_tensor(const char *name) {
  Value v = global(name);
  ck_assert_msg(v_is_tensor(v), "%s is not a tensor", name);
  return AS_TENSOR(v);
}

/* ---- random data and reference element access ---- */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int64_t rnd_int(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }
static double rnd_unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* Element idx of t as a double. */
static double at(const ObjTensor *t, const int64_t *idx) {
  const char *p = lang_tensor_ptr(t);
  int64_t es = (int64_t)dev_dtype_size(t->dtype);
  for (int d = 0; d < t->ndim; d++) p += idx[d] * t->strides[d] * es;
  Value v = lang_tensor_load(t->dtype, p);
  return v.tag == V_FLOAT ? v.f : v.tag == V_INT ? (double)v.i : (double)v.b;
}

/* Element idx of t, where idx indexes a shape that t broadcasts to (nd axes). */
static double at_b(const ObjTensor *t, int nd, const int64_t *idx) {
  int64_t j[LANG_TENSOR_MAX_DIMS];
  for (int d = 0; d < t->ndim; d++) {
    int64_t i = idx[nd - t->ndim + d];
    j[d] = t->shape[d] == 1 ? 0 : i;
  }
  return at(t, j);
}

/* Step idx through shape in row-major order; false after the last. */
static bool next_index(int nd, const int64_t *shape, int64_t *idx) {
  for (int d = nd - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/* A tensor of shape with random small values (ints for int dtypes). */
static ObjTensor *random_tensor(DType dt, int nd, const int64_t *shape) {
  ObjTensor *t = lang_tensor_new(vm, dt, nd, shape, false);
  ck_assert_ptr_nonnull(t);
  char *p = lang_tensor_ptr(t);
  size_t es = dev_dtype_size(dt);
  for (int64_t i = 0; i < t->size; i++) {
    Value v = lang_dtype_is_float(dt) ? v_float(rnd_unit() * 8 - 4) : v_int(rnd_int(-9, 9));
    if (dt == DT_BOOL) v = v_int(rnd_int(0, 1));
    ck_assert(lang_tensor_store(vm, dt, p + (size_t)i * es, v));
  }
  return t;
}

/* Sometimes a strided view of the same values: a transposed copy
 * transposed back, or a slice of a bigger tensor. */
static ObjTensor *maybe_strided(ObjTensor *t) {
  int kind = (int)rnd_int(0, 2);
  if (kind == 0 || t->ndim == 0) return t;
  if (kind == 1) {   /* stored transposed */
    int perm[LANG_TENSOR_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) perm[d] = t->ndim - 1 - d;
    ObjTensor *tt, *c, *back;
    ck_assert(lang_tensor_transpose(vm, t, perm, &tt));
    c = lang_tensor_new(vm, t->dtype, tt->ndim, tt->shape, false);
    ck_assert(lang_tensor_copy_into(vm, "test", c, tt));
    ck_assert(lang_tensor_transpose(vm, c, perm, &back));
    return back;
  }
  /* every other element of a tensor twice as long on the last axis */
  int64_t sh[LANG_TENSOR_MAX_DIMS];
  memcpy(sh, t->shape, (size_t)t->ndim * sizeof *sh);
  sh[t->ndim - 1] *= 2;
  ObjTensor *big = random_tensor(t->dtype, t->ndim, sh);
  int64_t st[LANG_TENSOR_MAX_DIMS];
  memcpy(st, big->strides, (size_t)t->ndim * sizeof *st);
  st[t->ndim - 1] *= 2;
  ObjTensor *v = lang_tensor_view(big, t->ndim, t->shape, st, big->offset + 1);
  ck_assert(lang_tensor_copy_into(vm, "test", v, t));   /* fresh buffer: fine to write */
  return v;
}

static void random_shape(int *nd, int64_t *shape, int maxnd, int maxdim) {
  *nd = (int)rnd_int(0, maxnd);
  for (int d = 0; d < *nd; d++) shape[d] = rnd_int(1, maxdim);
}

/* ---- printing ---- */

START_TEST(test_print)
{
  CHECK_OUT("print(tensor([[1., 2.], [3., 4.]]))", "tensor([[1., 2.],\n"
                                                   "        [3., 4.]], f32)\n");
  CHECK_OUT("print(tensor([1, 2, 3]))", "tensor([1, 2, 3], i64)\n");
  CHECK_OUT("print(tensor([True, False]))", "tensor([ True, False], bool)\n");
  CHECK_OUT("print(tensor(3.5))", "tensor(3.5, f32)\n");
  CHECK_OUT("print(tensor([1., 0.5, -2.25]))", "tensor([ 1.  ,  0.5 , -2.25], f32)\n");
  /* scientific when the magnitudes call for it, digits shared */
  CHECK_OUT("print(tensor([1e-5, 1.0]))", "tensor([1.e-05, 1.e+00], f32)\n");
  CHECK_OUT("print(tensor([1.5e-5, 1.0], dtype='f64'))", "tensor([1.5e-05, 1.0e+00], f64)\n");
  CHECK_OUT("print(tensor([1e-5, 1e100], dtype='f64'))", "tensor([1.e-005, 1.e+100], f64)\n");
  CHECK_OUT("print(tensor([1e8]))", "tensor([1.e+08], f32)\n");
  CHECK_OUT("print(tensor([1.0, 2.5e-3], dtype='f64'))", "tensor([1.    , 0.0025], f64)\n");
  CHECK_OUT("print(tensor(1e-5))", "tensor(1.e-05, f32)\n");
  /* shortest digits for the dtype, at most 8 after the point */
  CHECK_OUT("print(tensor([0.1, 1 / 3]))", "tensor([0.1       , 0.33333334], f32)\n");
  CHECK_OUT("print(tensor([0.1, 1 / 3], dtype='f64'))", "tensor([0.1       , 0.33333333], f64)\n");
  CHECK_OUT("print(tensor([58691408.]))", "tensor([58691408.], f32)\n");
  CHECK_OUT("print(tensor([-0.0, 0.0]), tensor([float('nan'), float('inf'), -float('inf'), 1.5]))",
            "tensor([-0.,  0.], f32) tensor([ nan,  inf, -inf,  1.5], f32)\n");
  CHECK_OUT("print(tensor([]), zeros((0, 3)), zeros((2, 0), dtype='i32'))",
            "tensor([], f32) tensor([], shape=(0, 3), f32) tensor([], shape=(2, 0), i32)\n");
  CHECK_OUT("print(tensor([[1, 2]], dtype='i32'), tensor(True))",
            "tensor([[1, 2]], i32) tensor(True, bool)\n");
  /* summarised past 1000 elements: 3 at each end of every long axis */
  CHECK_OUT("print(arange(1001))",
            "tensor([   0,    1,    2, ...,  998,  999, 1000], i64)\n");
  CHECK_OUT("print(arange(2000.).reshape(2, 1000))",
            "tensor([[0.000e+00, 1.000e+00, 2.000e+00, ..., 9.970e+02, 9.980e+02,\n"
            "         9.990e+02],\n"
            "        [1.000e+03, 1.001e+03, 1.002e+03, ..., 1.997e+03, 1.998e+03,\n"
            "         1.999e+03]], f32)\n");
  CHECK_OUT("print(arange(1200).reshape(20, 60)[:, :1])",
            "tensor([[   0],\n"
            "        [  60],\n"
            "        [ 120],\n"
            "        [ 180],\n"
            "        [ 240],\n"
            "        [ 300],\n"
            "        [ 360],\n"
            "        [ 420],\n"
            "        [ 480],\n"
            "        [ 540],\n"
            "        [ 600],\n"
            "        [ 660],\n"
            "        [ 720],\n"
            "        [ 780],\n"
            "        [ 840],\n"
            "        [ 900],\n"
            "        [ 960],\n"
            "        [1020],\n"
            "        [1080],\n"
            "        [1140]], i64)\n");
  CHECK_OUT("print(arange(1200).reshape(20, 60))",
            "tensor([[   0,    1,    2, ...,   57,   58,   59],\n"
            "        [  60,   61,   62, ...,  117,  118,  119],\n"
            "        [ 120,  121,  122, ...,  177,  178,  179],\n"
            "        ...,\n"
            "        [1020, 1021, 1022, ..., 1077, 1078, 1079],\n"
            "        [1080, 1081, 1082, ..., 1137, 1138, 1139],\n"
            "        [1140, 1141, 1142, ..., 1197, 1198, 1199]], i64)\n");
  /* str, repr, f-strings */
  CHECK_OUT("t = tensor([1.5])\nprint(str(t), repr(t), f'{t}', f'{t:.3f}', f'{tensor(2):4d}')",
            "tensor([1.5], f32) tensor([1.5], f32) tensor([1.5], f32) 1.500    2\n");
}
END_TEST

/* ---- values of operations, worked out by hand ---- */

START_TEST(test_arith)
{
  CHECK_OUT("a = tensor([1., 2., 3.])\nb = tensor([[10.], [20.]])\nprint(a + b)",
            "tensor([[11., 12., 13.],\n"
            "        [21., 22., 23.]], f32)\n");
  CHECK_OUT("a = tensor([1., 2., 3.])\nprint(a - 1, 1 - a, a * 2, a / 2)",
            "tensor([0., 1., 2.], f32) tensor([ 0., -1., -2.], f32) tensor([2., 4., 6.], f32) tensor([0.5, 1. , 1.5], f32)\n");
  CHECK_OUT("a = tensor([-3.5, -1., 2.5])\nprint(a // 2, a % 2, a ** 2, 2 ** tensor([0., 3.]), -a, +a)",
            "tensor([-2., -1.,  1.], f32) tensor([0.5, 1. , 0.5], f32) tensor([12.25,  1.  ,  6.25], f32) tensor([1., 8.], f32) tensor([ 3.5,  1. , -2.5], f32) tensor([-3.5, -1. ,  2.5], f32)\n");
  /* integer semantics: Python's floor division and modulo */
  CHECK_OUT("i = tensor([7, -7, 3])\nprint(i // 2, i % 3, i // -2, i % -3, i ** 2, i * True)",
            "tensor([ 3, -4,  1], i64) tensor([1, 2, 0], i64) tensor([-4,  3, -2], i64) tensor([-2, -1,  0], i64) tensor([49, 49,  9], i64) tensor([ 7, -7,  3], i64)\n");
  CHECK_OUT("i = tensor([7, -7])\nprint(i / 2, i + 0.5, i - True)",
            "tensor([ 3.5, -3.5], f32) tensor([ 7.5, -6.5], f32) tensor([ 6, -8], i64)\n");
  /* float division by zero is IEEE's, as NumPy */
  CHECK_OUT("print(tensor([1., -1., 0.]) / 0, tensor([1., -1.]) // 0.)",
            "tensor([ inf, -inf,  nan], f32) tensor([ inf, -inf], f32)\n");
  /* comparisons are elementwise and give bools */
  CHECK_OUT("a = tensor([1., 2., 3.])\nprint(a < 2, a == tensor([1., 5., 3.]), a != 2, 2 <= a)",
            "tensor([ True, False, False], bool) tensor([ True, False,  True], bool) tensor([ True, False,  True], bool) tensor([False,  True,  True], bool)\n");
  CHECK_OUT("a = tensor([1., 2.])\nprint(a == None, a != 'x', a + [1, 1], (1, 2) * a)",
            "False True tensor([2., 3.], f32) tensor([1., 4.], f32)\n");
  /* math functions: floats stay floats, tensors work elementwise */
  CHECK_OUT("print(exp(0.0), log(1.0), sqrt(4), relu(-2), relu(2.5), sigmoid(0.0), tanh(0.0))",
            "1.0 0.0 2.0 0 2.5 0.5 0.0\n");
  CHECK_OUT("print(exp(tensor([0., 1.])), sqrt(tensor([4, 9])), relu(tensor([-1, 2])))",
            "tensor([1.       , 2.7182817], f32) tensor([2., 3.], f32) tensor([0, 2], i64)\n");
  CHECK_OUT("print(sigmoid(tensor([0., -1000., 1000.])), abs(tensor([-1, 2])), round(tensor([0.5, 1.5, -2.5, 2.4])))",
            "tensor([0.5, 0. , 1. ], f32) tensor([1, 2], i64) tensor([ 0.,  2., -2.,  2.], f32)\n");
  CHECK_OUT("print(round(tensor([1.25, 2.675], dtype='f64'), 1))", "tensor([1.2, 2.7], f64)\n");
  CHECK_OUT("print(maximum(1, 2.5), minimum(3, 2), maximum(tensor([1., 5.]), 2), "
            "minimum(tensor([1., float('nan')]), tensor([0., 1.])))",
            "2.5 2 tensor([2., 5.], f32) tensor([ 0., nan], f32)\n");
  CHECK_OUT("a = tensor([1., 2., 3.])\nprint(where(a > 1.5, a, 0.), where(True, 1, 2), where([True, False], 1, 2.5))",
            "tensor([0., 2., 3.], f32) 1 tensor([1. , 2.5], f32)\n");
  CHECK_OUT("print(pow(tensor([2, 3]), 2), pow(2.0, tensor([1., 2.])), clip(tensor([-2., 0.5, 3.]), 0, 1))",
            "tensor([4, 9], i64) tensor([2., 4.], f32) tensor([0. , 0.5, 1. ], f32)\n");
  CHECK_OUT("print(log(0.5) < 0, log(tensor([0., -1.])))", "True tensor([-inf,  nan], f32)\n");
}
END_TEST

/* The promotion table of docs/tensors.md. */
START_TEST(test_promotion)
{
  static const DType order[] = {DT_BOOL, DT_I32, DT_I64, DT_F32, DT_F64};
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++)
      ck_assert_int_eq(lang_dtype_promote(order[i], order[j]), order[i > j ? i : j]);
  CHECK_OUT("b = tensor([True])\ni = tensor([1], dtype='i32')\nl = tensor([1])\n"
            "f = tensor([1.])\nd = tensor([1.], dtype='f64')\n"
            "print((b + b).dtype, (b + i).dtype, (i + l).dtype, (l + f).dtype, (f + d).dtype, (b + d).dtype)",
            "i64 i32 i64 f32 f64 f64\n");
  /* a Python number takes the tensor's dtype (f32 for a float with ints) */
  CHECK_OUT("i = tensor([1], dtype='i32')\nprint((i + 1).dtype, (i + 1.5).dtype, (tensor([1.], dtype='f64') + 1.5).dtype, "
            "(tensor([True]) + 1).dtype, (tensor([True]) == True).dtype)",
            "i32 f32 f64 i64 bool\n");
  CHECK_OUT("print((tensor([1, 2]) / tensor([2, 2])).dtype, (tensor([1], dtype='i32') / 2).dtype, "
            "tensor([1, 2]).mean().dtype, tensor([True]).sum().dtype, tensor([1], dtype='i32').sum().dtype)",
            "f32 f32 f32 i64 i64\n");
  CHECK_OUT("print(tensor([1, 2.5]).dtype, tensor([True, 2]).dtype, tensor([tensor([1.], dtype='f64'), [2]]).dtype)",
            "f32 i64 f64\n");
  CHECK_ERR("tensor([1], dtype='i32') + 3000000000", "Python int 3000000000 is out of range for i32");
}
END_TEST

START_TEST(test_creation)
{
  CHECK_OUT("print(zeros((2, 2), dtype='i32'), ones(3, dtype='bool'), full((2,), 7), full(2, 1.5))",
            "tensor([[0, 0],\n"
            "        [0, 0]], i32) tensor([ True,  True,  True], bool) tensor([7, 7], i64) tensor([1.5, 1.5], f32)\n");
  CHECK_OUT("print(arange(4), arange(1, 7, 2), arange(3, 0, -1), arange(0., 1., 0.25), arange(5, dtype='f64'))",
            "tensor([0, 1, 2, 3], i64) tensor([1, 3, 5], i64) tensor([3, 2, 1], i64) tensor([0.  , 0.25, 0.5 , 0.75], f32) tensor([0., 1., 2., 3., 4.], f64)\n");
  CHECK_OUT("print(linspace(0, 1, 5), linspace(0, 1, 4, endpoint=False), linspace(2, 3, 1))",
            "tensor([0.  , 0.25, 0.5 , 0.75, 1.  ], f32) tensor([0.  , 0.25, 0.5 , 0.75], f32) tensor([2.], f32)\n");
  CHECK_OUT("print(eye(2), eye(2, 3, k=1, dtype='i64'))",
            "tensor([[1., 0.],\n"
            "        [0., 1.]], f32) tensor([[0, 1, 0],\n"
            "        [0, 0, 1]], i64)\n");
  CHECK_OUT("print(zeros_like(tensor([1, 2])), ones_like(tensor([[1.]]), dtype='f64'))",
            "tensor([0, 0], i64) tensor([[1.]], f64)\n");
  CHECK_OUT("t = tensor([[1, 2], [3, 4]])\nprint(tensor([t, t]).shape, tensor((1, 2.5)), tensor(t) is t, tensor(t, dtype='f32'))",
            "(2, 2, 2) tensor([1. , 2.5], f32) True tensor([[1., 2.],\n"
            "        [3., 4.]], f32)\n");
  CHECK_OUT("t = zeros((2, 3))\nprint(t.shape, t.dtype, t.ndim, t.size, t.device, type(t), len(t))",
            "(2, 3) f32 2 6 cpu tensor 2\n");
  CHECK_OUT("t = tensor([[1, 2], [3, 4]])\nprint(t.tolist(), t[0].tolist(), tensor(2.5).item(), tensor([[7]]).item(), "
            "tensor(True).tolist())",
            "[[1, 2], [3, 4]] [1, 2] 2.5 7 True\n");
  CHECK_OUT("print(float(tensor([2.5])), int(tensor(3.9)), bool(tensor([0])), list(tensor([1, 2])), astype(tensor([1.7, -1.7]), 'i32'))",
            "2.5 3 False [tensor(1, i64), tensor(2, i64)] tensor([ 1, -1], i32)\n");
  CHECK_OUT("print(tensor([300.5, -1e30, float('nan')]).astype('i32'), tensor([0., 2.]).astype('bool'))",
            "tensor([        300, -2147483648,           0], i32) tensor([False,  True], bool)\n");
}
END_TEST

START_TEST(test_shapes)
{
  CHECK_OUT("t = arange(6)\nprint(t.reshape((2, 3)), t.reshape(3, 2).shape, t.reshape(-1, 3).shape, t.reshape(6, 1).T.shape)",
            "tensor([[0, 1, 2],\n"
            "        [3, 4, 5]], i64) (3, 2) (2, 3) (1, 6)\n");
  CHECK_OUT("x = arange(24).reshape(2, 3, 4)\nprint(transpose(x).shape, x.transpose(1, 0, 2).shape, "
            "x.transpose((2, 0, -2)).shape, x.T.shape, tensor([1, 2]).T)",
            "(4, 3, 2) (3, 2, 4) (4, 2, 3) (4, 3, 2) tensor([1, 2], i64)\n");
  CHECK_OUT("x = arange(6).reshape(2, 3)\nprint(x.T.reshape(6), flatten(x.T), squeeze(zeros((1, 2, 1))).shape, "
            "expand_dims(x, 1).shape, expand_dims(x, -1).shape)",
            "tensor([0, 3, 1, 4, 2, 5], i64) tensor([0, 3, 1, 4, 2, 5], i64) (2,) (2, 1, 3) (2, 3, 1)\n");
  CHECK_OUT("a = tensor([1., 2., 3.])\nprint(broadcast_to(a, (2, 3)), concat([a, a]), concat([zeros((1, 2)), ones((1, 2))], axis=1))",
            "tensor([[1., 2., 3.],\n"
            "        [1., 2., 3.]], f32) tensor([1., 2., 3., 1., 2., 3.], f32) tensor([[0., 0., 1., 1.]], f32)\n");
  CHECK_OUT("a = tensor([1, 2])\nprint(stack([a, a * 2]), stack([a, a * 2], axis=1), stack([a, a], axis=-1).shape, "
            "concat([a, tensor([0.5])]))",
            "tensor([[1, 2],\n"
            "        [2, 4]], i64) tensor([[1, 2],\n"
            "        [2, 4]], i64) (2, 2) tensor([1. , 2. , 0.5], f32)\n");
}
END_TEST

START_TEST(test_indexing)
{
  run("x = arange(24).reshape(2, 3, 4)");
  CHECK_OUT("print(x[1, 2, 3], x[-1, -1, -1], x[0, 1], x[1][2][0])",
            "tensor(23, i64) tensor(23, i64) tensor([4, 5, 6, 7], i64) tensor(20, i64)\n");
  CHECK_OUT("print(x[1, :, ::2], x[:, -1, 1:3])",
            "tensor([[12, 14],\n"
            "        [16, 18],\n"
            "        [20, 22]], i64) tensor([[ 9, 10],\n"
            "        [21, 22]], i64)\n");
  CHECK_OUT("print(x[0, ::-1, 0], x[0, 0, 3:0:-2], x[0, 0, 10:], x[0, 0, -100:2])",
            "tensor([8, 4, 0], i64) tensor([3, 1], i64) tensor([], i64) tensor([0, 1], i64)\n");
  CHECK_OUT("print(x[None].shape, x[:, None, 0].shape, x[0, :, None, 1].shape)", "(1, 2, 3, 4) (2, 1, 4) (3, 1)\n");
  /* integer tensors and lists pick, booleans mask */
  CHECK_OUT("m = x[0]\nprint(m[tensor([2, 0])], m[[-1]], m[:, [0, 3]], m[[True, False, True]])",
            "tensor([[ 8,  9, 10, 11],\n"
            "        [ 0,  1,  2,  3]], i64) tensor([[ 8,  9, 10, 11]], i64) tensor([[ 0,  3],\n"
            "        [ 4,  7],\n"
            "        [ 8, 11]], i64) tensor([[ 0,  1,  2,  3],\n"
            "        [ 8,  9, 10, 11]], i64)\n");
  CHECK_OUT("m = x[0]\nprint(m[m > 8], m[tensor([[0, 1], [1, 2]]), 0], x[0, 0][argmax(x[0, 0])])",
            "tensor([ 9, 10, 11], i64) tensor([[0, 4],\n"
            "        [4, 8]], i64) tensor(3, i64)\n");
  /* iteration and unpacking follow the first axis */
  CHECK_OUT("for r in tensor([[1, 2], [3, 4]]):\n  print(r)\na, b = tensor([5., 6.])\nprint(a + b, 2 in tensor([1, 2]), 3 in tensor([1, 2]))",
            "tensor([1, 2], i64)\ntensor([3, 4], i64)\ntensor(11., f32) True False\n");
  CHECK_ERR("tensor([1, 2, 3])[5]", "index 5 is out of bounds for axis 0 with size 3");
  CHECK_ERR("zeros((2, 3))[0, -4]", "index -4 is out of bounds for axis 1 with size 3");
  CHECK_ERR("zeros((2, 3))[0, 0, 0]", "too many indices for tensor: tensor is 2-dimensional, but 3 were indexed");
  CHECK_ERR("zeros(3)[tensor([0, 3])]", "index 3 is out of bounds for axis 0 with size 3");
  CHECK_ERR("zeros(3)[[True, False]]",
            "boolean index did not match indexed tensor along axis 0; size of axis is 3 but size of "
            "corresponding boolean axis is 2");
  CHECK_ERR("zeros(3)[1.5]", "tensor indices must be ints, slices, None, ..., or int or bool tensors, not float");
  CHECK_ERR("zeros(3)[tensor([0.])]", "tensors used as indices must hold ints or bools, not f32");
  CHECK_ERR("zeros((2, 3))[..., 0, ...]", "an index can only have a single ellipsis ('...')");
  CHECK_ERR("zeros((2, 3))[[0, 1], [0, 1, 2]]",
            "shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,) ");
  CHECK_ERR("for v in tensor(1.0):\n  pass", "iteration over a 0-d tensor");
}
END_TEST

/* Views share buffers; updates copy, so no other name ever sees them. */
START_TEST(test_functional_update)
{
  CHECK_OUT("t = arange(6.).reshape(2, 3)\nu = t\nv = t[0]\nw = t.T\nu[0, 0] = 100.\nv[1] = -1.\n"
            "print(t)\nprint(u)\nprint(v)\nprint(w[0])",
            "tensor([[0., 1., 2.],\n"
            "        [3., 4., 5.]], f32)\n"
            "tensor([[100.,   1.,   2.],\n"
            "        [  3.,   4.,   5.]], f32)\n"
            "tensor([ 0., -1.,  2.], f32)\n"
            "tensor([0., 3.], f32)\n");
  CHECK_OUT("t = zeros((2, 3), dtype='i64')\ns = t\nt[:, 1] = tensor([7, 8])\nt[1] = 5\nt[t == 5] = 9\n"
            "print(t, s)",
            "tensor([[0, 7, 0],\n"
            "        [9, 9, 9]], i64) tensor([[0, 0, 0],\n"
            "        [0, 0, 0]], i64)\n");
  CHECK_OUT("t = zeros(4)\nt[[0, 2]] = tensor([1., 2.])\nt[-1] = 2.5\nt[1:3] = [5, 6]\nprint(t)",
            "tensor([1. , 5. , 6. , 2.5], f32)\n");
  CHECK_OUT("t = zeros(2, dtype='i32')\nt[0] = 2.9\nprint(t)", "tensor([2, 0], i32)\n");
  CHECK_ERR("t = zeros(3)\nt[0:2] = tensor([1., 2., 3.])", "setitem: cannot broadcast shape (3,) to (2,)");
  /* in C: the views really share the buffer, the update really copies */
  run("a = arange(12.).reshape(3, 4)\nb = a[1:, ::2]\nc = a.T\nd = a.reshape(4, 3)\ne = a\ne[0, 0] = 1.");
  ObjTensor *a = global_tensor("a"), *b = global_tensor("b"), *c = global_tensor("c"),
            *d = global_tensor("d"), *e = global_tensor("e");
  ck_assert_ptr_eq(a->buf, b->buf);
  ck_assert_ptr_eq(a->buf, c->buf);
  ck_assert_ptr_eq(a->buf, d->buf);
  ck_assert_ptr_ne(a->buf, e->buf);
  ck_assert_int_eq(b->offset, 4);
  ck_assert_int_eq(b->strides[0], 4);
  ck_assert_int_eq(b->strides[1], 2);
  ck_assert(!lang_tensor_is_contiguous(c));
  int64_t z[2] = {0, 0};
  ck_assert(at(a, z) == 0.0 && at(e, z) == 1.0);
}
END_TEST

START_TEST(test_reductions)
{
  run("x = arange(24).reshape(2, 3, 4)");
  CHECK_OUT("print(x.sum(), sum(x, axis=0)[0], x.sum(axis=(0, 2)), x.sum(axis=-1, keepdims=True).shape)",
            "tensor(276, i64) tensor([12, 14, 16, 18], i64) tensor([ 60,  92, 124], i64) (2, 3, 1)\n");
  CHECK_OUT("print(x.max(), x.min(axis=1), max(x, 0)[0], min(tensor([3, 1, 2])))",
            "tensor(23, i64) tensor([[ 0,  1,  2,  3],\n"
            "        [12, 13, 14, 15]], i64) tensor([12, 13, 14, 15], i64) tensor(1, i64)\n");
  CHECK_OUT("print(x.argmax(), x.argmax(axis=2)[0], argmin(tensor([3, 1, 1])), "
            "argmax(tensor([1., float('nan'), 5.])), x.argmax(axis=0, keepdims=True).shape)",
            "tensor(23, i64) tensor([3, 3, 3], i64) tensor(1, i64) tensor(1, i64) (1, 3, 4)\n");
  CHECK_OUT("print(x.mean(), x.astype('f64').mean(axis=(0, 1)), mean([1, 2]), tensor([[1., 2.], [3., 5.]]).mean(axis=0))",
            "tensor(11.5, f32) tensor([10., 11., 12., 13.], f64) tensor(1.5, f32) tensor([2. , 3.5], f32)\n");
  CHECK_OUT("print(prod(tensor([1, 2, 3, 4])), any(tensor([0, 1])), all(tensor([0, 1])), tensor([[True], [False]]).any(axis=1))",
            "tensor(24, i64) tensor(True, bool) tensor(False, bool) tensor([ True, False], bool)\n");
  CHECK_OUT("print(zeros((0, 2)).sum(axis=0), zeros((0, 2)).sum(), zeros((2, 0)).max(axis=0), zeros(0).mean())",
            "tensor([0., 0.], f32) tensor(0., f32) tensor([], f32) tensor(nan, f32)\n");
  CHECK_OUT("print(tensor(5.).sum(), tensor([1e8, 1., -1e8]).sum(), tensor([float('nan'), 1.]).max())",
            "tensor(5., f32) tensor(1., f32) tensor(nan, f32)\n");
  CHECK_ERR("zeros((2, 2)).sum(axis=2)", "axis 2 is out of bounds for a tensor of 2 dimensions");
  CHECK_ERR("zeros((2, 2)).sum(axis=(0, 0))", "sum: duplicate value in axis");
  CHECK_ERR("zeros((0,)).max()", "max: cannot reduce a tensor of shape (0,) over a zero-size axis");
  CHECK_ERR("tensor([9223372036854775807, 1]).sum()", "sum: integer overflow (the result does not fit in i64)");
  CHECK_ERR("bool(tensor([1, 2]))",
            "the truth value of a tensor with more than one element is ambiguous (use any() or all())");
}
END_TEST

START_TEST(test_matmul_values)
{
  CHECK_OUT("a = tensor([[1., 2.], [3., 4.]])\nprint(a @ a, a @ tensor([1., 1.]), tensor([1., 1.]) @ a, tensor([1., 2.]) @ tensor([3., 4.]))",
            "tensor([[ 7., 10.],\n"
            "        [15., 22.]], f32) tensor([3., 7.], f32) tensor([4., 6.], f32) tensor(11., f32)\n");
  CHECK_OUT("print(tensor([[1, 2], [3, 4]]) @ tensor([1, 1]), matmul(tensor([[1, 2]], dtype='i32'), tensor([[3], [4]], dtype='i32')))",
            "tensor([3, 7], i64) tensor([[11]], i32)\n");
  CHECK_OUT("b = arange(12.).reshape(2, 2, 3)\nprint(b @ ones((3, 2)), ones(3) @ b.transpose(0, 2, 1))",
            "tensor([[[ 3.,  3.],\n"
            "         [12., 12.]],\n"
            "\n"
            "        [[21., 21.],\n"
            "         [30., 30.]]], f32) tensor([[ 3., 12.],\n"
            "        [21., 30.]], f32)\n");
  CHECK_OUT("print((zeros((2, 0)) @ zeros((0, 3))).shape, zeros((2, 0)) @ zeros((0, 2)))",
            "(2, 3) tensor([[0., 0.],\n"
            "        [0., 0.]], f32)\n");
  CHECK_ERR("zeros((2, 3)) @ zeros((2, 3))", "matmul: shapes (2, 3) and (2, 3) are not aligned");
  CHECK_ERR("zeros((2, 2, 3)) @ zeros((3, 3, 4))", "matmul: shapes (2, 2, 3) and (3, 3, 4) cannot be broadcast");
  CHECK_ERR("zeros(3) @ 2.0", "matmul: an operand is a scalar (float); use * instead");
}
END_TEST

START_TEST(test_nn_values)
{
  CHECK_OUT("print(softmax(tensor([1., 2., 3.])), softmax(tensor([1000., 1000.])), softmax(tensor([[0., 0.], [0., 1000.]]), axis=0))",
            "tensor([0.09003057, 0.24472848, 0.66524094], f32) tensor([0.5, 0.5], f32) tensor([[0.5, 0. ],\n"
            "        [0.5, 1. ]], f32)\n");
  CHECK_OUT("print(logsumexp(tensor([1000., 1000.], dtype='f64')), logsumexp(tensor([[0., 0.]]), keepdims=True), "
            "logsumexp(tensor([-float('inf'), -float('inf')])), log_softmax(tensor([0., 0.], dtype='f64')))",
            "tensor(1000.69314718, f64) tensor([[0.6931472]], f32) tensor(-inf, f32) "
            "tensor([-0.69314718, -0.69314718], f64)\n");
  CHECK_OUT("print(one_hot(tensor([0, 2]), 3), one_hot(1, 2, dtype='i64'), one_hot(tensor([[1]]), 2).shape)",
            "tensor([[1., 0., 0.],\n"
            "        [0., 0., 1.]], f32) tensor([0, 1], i64) (1, 1, 2)\n");
  CHECK_OUT("print(conv2d(ones((1, 1, 3, 3)), ones((2, 1, 2, 2)), bias=tensor([0., 1.])))",
            "tensor([[[[4., 4.],\n"
            "          [4., 4.]],\n"
            "\n"
            "         [[5., 5.],\n"
            "          [5., 5.]]]], f32)\n");
  CHECK_OUT("print(conv2d(ones((1, 3, 3)), ones((1, 1, 3, 3)), padding=1, stride=2))",
            "tensor([[[4., 4.],\n"
            "         [4., 4.]]], f32)\n");
  CHECK_OUT("print(max_pool2d(arange(16.).reshape(1, 1, 4, 4), 2), max_pool2d(arange(9.).reshape(1, 3, 3), 2, stride=1))",
            "tensor([[[[ 5.,  7.],\n"
            "          [13., 15.]]]], f32) tensor([[[4., 5.],\n"
            "         [7., 8.]]], f32)\n");
  CHECK_OUT("print(allclose(tensor([1., 2.]), tensor([1., 2.000001])), allclose(1.0, 1.1), "
            "allclose(tensor([1., 2.]), 1.0, atol=1.0), allclose(tensor([float('inf')]), float('inf')))",
            "True False True True\n");
  CHECK_ERR("one_hot(tensor([3]), 3)", "one_hot: index 3 is out of range for 3 classes");
  CHECK_ERR("conv2d(zeros((1, 3, 4, 4)), zeros((2, 2, 3, 3)))",
            "conv2d: input of shape (1, 3, 4, 4) has 3 channels but weight of shape (2, 2, 3, 3) expects 2");
  CHECK_ERR("conv2d(zeros((1, 1, 2, 2)), zeros((1, 1, 3, 3)))",
            "conv2d: a kernel of shape (1, 1, 3, 3) does not fit an input of shape (1, 1, 2, 2) (padding 0, 0)");
  CHECK_ERR("conv2d(zeros((1, 1, 2, 2), dtype='i64'), zeros((1, 1, 1, 1)))",
            "conv2d: expected f32 or f64 tensors, not i64");
  CHECK_ERR("concat([zeros((2, 3)), zeros((3, 4))])", "concat: shapes (2, 3) and (3, 4) do not match outside axis 0");
  CHECK_ERR("stack([zeros(2), zeros(3)])", "stack: all tensors must have one shape, not (2,) and (3,)");
}
END_TEST

START_TEST(test_errors)
{
  CHECK_ERR("tensor([1., 2.]) + tensor([1., 2., 3.])", "add: shapes (2,) and (3,) cannot be broadcast");
  CHECK_ERR("zeros((2, 3)) * zeros((3, 2))", "mul: shapes (2, 3) and (3, 2) cannot be broadcast");
  CHECK_ERR("zeros(2) < zeros(3)", "lt: shapes (2,) and (3,) cannot be broadcast");
  CHECK_ERR("where(zeros(2) > 0, zeros(3), 1.)", "where: shapes (2,) and (3,) cannot be broadcast");
  CHECK_ERR("zeros(3, dtype='f16')", "zeros: unknown dtype 'f16': expected \"f32\", \"f64\", \"i32\", \"i64\" or \"bool\"");
  CHECK_ERR("zeros(3, dtype=32)", "zeros: dtype must be a str (\"f32\", \"f64\", \"i32\", \"i64\" or \"bool\"), not int");
  CHECK_ERR("tensor([[1], [2, 3]])", "tensor: the data is not rectangular: its items differ in shape at depth 1");
  CHECK_ERR("tensor(['a'])", "tensor: cannot make a tensor of str values");
  CHECK_ERR("tensor([1, 2]) // 0", "floordiv: integer division or modulo by zero");
  CHECK_ERR("tensor([1, 2]) % tensor([1, 0])", "mod: integer division or modulo by zero");
  CHECK_ERR("tensor([1, 2]) ** -1", "pow: integers to negative integer powers are not allowed");
  CHECK_ERR("tensor([1, 2]).reshape(3)", "reshape: cannot reshape a tensor of shape (2,) into shape (3,)");
  CHECK_ERR("zeros(4).reshape(-1, -1)", "reshape: can only infer one dimension (-1)");
  CHECK_ERR("zeros((2, 2)).transpose(0, 0)", "transpose: axes must be a permutation of 0..1");
  CHECK_ERR("broadcast_to(tensor([1, 2, 3]), (2, 2))", "broadcast_to: cannot broadcast shape (3,) to (2, 2)");
  CHECK_ERR("item(tensor([1, 2]))", "item: only a tensor of one element converts to a Python scalar, not one of shape (2,)");
  CHECK_ERR("float(zeros(2))", "float: only a tensor of one element converts to a Python scalar, not one of shape (2,)");
  CHECK_ERR("len(tensor(1))", "len() of a 0-d tensor");
  CHECK_ERR("tensor([1, 2]) < 'a'", "'<' not supported between instances of 'tensor' and 'str'");
  CHECK_ERR("randn((2,))", "randn: give seed= or key= (Mist has no hidden random state)");
  CHECK_ERR("randn(2, key=3)", "randn: a key must be a tensor of two 32-bit words as key(seed) or split(k) make, not int");
  CHECK_ERR("zeros(2).shape()", "'tuple' object is not callable");
  CHECK_ERR("[1].shape", "'list' object has no attribute 'shape'");
  CHECK_ERR("zeros(-1)", "zeros: negative dimension -1 in shape");
  CHECK_ERR("zeros((1073741824, 1073741824))", "a tensor of shape (1073741824, 1073741824) is too large");
  CHECK_ERR("log(0.0)", "math domain error");
  CHECK_ERR("exp(1000.0)", "math range error");
}
END_TEST

/* ---- property tests against reference loops ---- */

static double ref_binary(TensorBinop op, DType dt, double x, double y) {
  bool fl = lang_dtype_is_float(dt);
  switch (op) {
  case TB_ADD: return x + y;
  case TB_SUB: return x - y;
  case TB_MUL: return x * y;
  case TB_TRUEDIV: return x / y;
  case TB_MAXIMUM: return x > y ? x : y;
  case TB_MINIMUM: return x < y ? x : y;
  case TB_FLOORDIV: return floor(x / y);
  case TB_MOD: return fl ? x - floor(x / y) * y : x - floor(x / y) * y;
  case TB_LT: return x < y;
  case TB_EQ: return x == y;
  case TB_GE: return x >= y;
  default: return NAN;
  }
}

START_TEST(test_broadcast_property)
{
  static const TensorBinop ops[] = {TB_ADD, TB_SUB, TB_MUL, TB_TRUEDIV, TB_MAXIMUM, TB_MINIMUM,
                                    TB_FLOORDIV, TB_MOD, TB_LT, TB_EQ, TB_GE};
  static const DType dts[] = {DT_I32, DT_I64, DT_F32, DT_F64};
  for (int trial = 0; trial < 400; trial++) {
    int nd;
    int64_t shape[LANG_TENSOR_MAX_DIMS], sa[LANG_TENSOR_MAX_DIMS], sb[LANG_TENSOR_MAX_DIMS];
    random_shape(&nd, shape, 4, 5);
    /* each operand: a suffix of the shape, with some axes 1 */
    int na = (int)rnd_int(0, nd), nb = (int)rnd_int(0, nd);
    for (int d = 0; d < na; d++) sa[d] = rnd_int(0, 2) ? shape[nd - na + d] : 1;
    for (int d = 0; d < nb; d++) sb[d] = rnd_int(0, 2) ? shape[nd - nb + d] : 1;
    DType dt = dts[rnd_int(0, 3)];
    TensorBinop op = ops[rnd_int(0, 10)];
    ObjTensor *a = maybe_strided(random_tensor(dt, na, sa));
    ObjTensor *b = maybe_strided(random_tensor(dt, nb, sb));
    if ((op == TB_FLOORDIV || op == TB_MOD || op == TB_TRUEDIV) && !lang_dtype_is_float(dt)) {
      /* no zero divisors for ints */
      Value one;
      ck_assert(lang_tensor_binary(vm, TB_MUL, v_obj(b), v_obj(b), &one));
      ck_assert(lang_tensor_binary(vm, TB_ADD, one, v_int(1), &one));
      b = AS_TENSOR(one);
      ck_assert(b->dtype == dt);
    }
    Value r;
    ck_assert_msg(lang_tensor_binary(vm, op, v_obj(a), v_obj(b), &r), "%s", vm->err.message->data);
    ObjTensor *t = AS_TENSOR(r);
    /* the result's shape is the broadcast of the two */
    int rnd_ = na > nb ? na : nb;
    ck_assert_int_eq(t->ndim, rnd_);
    int64_t idx[LANG_TENSOR_MAX_DIMS] = {0};
    if (t->size == 0) continue;
    do {
      double x = at_b(a, t->ndim, idx), y = at_b(b, t->ndim, idx);
      if (dt == DT_F32) {   /* the reference computes in the tensor's precision */
        x = (float)x;
        y = (float)y;
      }
      double want = ref_binary(op, dt, x, y), got = at(t, idx);
      if (dt == DT_F32 && op != TB_LT && op != TB_EQ && op != TB_GE) want = (float)want;
      double tol = lang_dtype_is_float(t->dtype) ? 1e-6 * (fabs(want) + 1) : 0;
      if (op == TB_FLOORDIV || op == TB_MOD) tol = 1e-5 * (fabs(want) + 1);
      ck_assert_msg(fabs(got - want) <= tol, "trial %d op %s dt %s: %g op %g = %g, want %g", trial,
                    lang_tensor_binop_name(op), dev_dtype_name(dt), x, y, got, want);
    } while (next_index(t->ndim, t->shape, idx));
  }
}
END_TEST

START_TEST(test_reduce_property)
{
  static const TensorReduction ops[] = {TR_SUM, TR_MEAN, TR_MAX, TR_MIN, TR_ARGMAX, TR_ARGMIN};
  static const DType dts[] = {DT_BOOL, DT_I32, DT_I64, DT_F32, DT_F64};
  for (int trial = 0; trial < 400; trial++) {
    int nd;
    int64_t shape[LANG_TENSOR_MAX_DIMS];
    random_shape(&nd, shape, 4, 6);
    DType dt = dts[rnd_int(0, 4)];
    TensorReduction op = ops[rnd_int(0, 5)];
    ObjTensor *x = maybe_strided(random_tensor(dt, nd, shape));
    uint64_t axes = 0;
    bool all = rnd_int(0, 3) == 0;
    if (op == TR_ARGMAX || op == TR_ARGMIN) {
      if (!all && nd > 0) axes = (uint64_t)1 << rnd_int(0, nd - 1);
      else all = true;
    } else {
      for (int d = 0; d < nd; d++)
        if (rnd_int(0, 1)) axes |= (uint64_t)1 << d;
    }
    if (all) axes = ~(uint64_t)0;
    bool keep = rnd_int(0, 1);
    ObjTensor *r;
    ck_assert_msg(lang_tensor_reduce(vm, op, x, axes, keep, &r), "%s", vm->err.message->data);
    /* walk the result, reducing the matching block by hand */
    int64_t oshape[LANG_TENSOR_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < nd; d++)
      if (!(axes >> d & 1)) oshape[ond++] = shape[d];
    bool flat_arg = (op == TR_ARGMAX || op == TR_ARGMIN) && all;
    int64_t oidx[LANG_TENSOR_MAX_DIMS] = {0};
    do {
      int64_t idx[LANG_TENSOR_MAX_DIMS] = {0};
      int64_t rshape[LANG_TENSOR_MAX_DIMS];
      for (int d = 0, o = 0; d < nd; d++) {
        if (axes >> d & 1) {
          rshape[d] = shape[d];
        } else {
          rshape[d] = 1;
          idx[d] = oidx[o++];
        }
      }
      double sum = 0, best = 0;
      int64_t count = 0, besti = 0, pos = 0;
      int64_t ridx[LANG_TENSOR_MAX_DIMS] = {0};
      do {
        int64_t full[LANG_TENSOR_MAX_DIMS];
        for (int d = 0; d < nd; d++) full[d] = rshape[d] == 1 && !(axes >> d & 1) ? idx[d] : ridx[d];
        double v = at(x, full);
        sum += v;
        bool better = count == 0 || ((op == TR_MAX || op == TR_ARGMAX) ? v > best : v < best);
        if (better) {
          best = v;
          besti = flat_arg ? pos : ridx[(int)__builtin_ctzll(axes ? axes : 1)];
        }
        count++;
        pos++;
      } while (next_index(nd, rshape, ridx));
      if (flat_arg) {
        /* pos counts in row-major order over the whole tensor: besti is the flat index */
      }
      double want = op == TR_SUM ? sum : op == TR_MEAN ? sum / (double)count
                    : (op == TR_ARGMAX || op == TR_ARGMIN) ? (double)besti : best;
      /* the result element at oidx (with kept axes of size 1 when keepdims) */
      int64_t ri[LANG_TENSOR_MAX_DIMS] = {0};
      if (!flat_arg) {
        if (keep) {
          for (int d = 0, o = 0; d < nd; d++) ri[d] = axes >> d & 1 ? 0 : oidx[o++];
        } else {
          memcpy(ri, oidx, sizeof ri);
        }
      }
      double got = at(r, ri);
      double tol = lang_dtype_is_float(r->dtype) ? 1e-5 * (fabs(want) + 1) : 0;
      ck_assert_msg(fabs(got - want) <= tol, "trial %d %s over %llx of %s %s: got %g want %g", trial,
                    lang_tensor_reduction_name(op), (unsigned long long)axes, dev_dtype_name(dt),
                    "", got, want);
      if (flat_arg) break;
    } while (ond > 0 && next_index(ond, oshape, oidx));
  }
}
END_TEST

/* matmul against the triple loop, on transposed, strided, batched and
 * broadcast operands and vectors. */
START_TEST(test_matmul_property)
{
  static const DType dts[] = {DT_I32, DT_I64, DT_F32, DT_F64};
  for (int trial = 0; trial < 200; trial++) {
    int64_t m = rnd_int(1, 9), k = rnd_int(1, 9), n = rnd_int(1, 9);
    int nb = (int)rnd_int(0, 2);
    int64_t batch[2] = {rnd_int(1, 3), rnd_int(1, 3)};
    DType dt = dts[rnd_int(0, 3)];
    bool avec = rnd_int(0, 5) == 0, bvec = rnd_int(0, 5) == 0;
    int64_t sa[4], sb[4];
    int na = 0, nbb = 0;
    for (int d = 0; d < nb; d++) {
      sa[na++] = rnd_int(0, 2) ? batch[d] : 1;
      sb[nbb++] = rnd_int(0, 2) ? batch[d] : 1;
    }
    if (rnd_int(0, 1) && na > 0) {   /* a's batch shorter */
      memmove(sa, sa + 1, (size_t)(na - 1) * sizeof *sa);
      na--;
    }
    if (avec) na = 0;
    if (bvec) nbb = 0;
    if (!avec) sa[na++] = m;
    sa[na++] = k;
    sb[nbb++] = k;
    if (!bvec) sb[nbb++] = n;
    ObjTensor *a = maybe_strided(random_tensor(dt, na, sa));
    ObjTensor *b = maybe_strided(random_tensor(dt, nbb, sb));
    ObjTensor *r;
    ck_assert_msg(lang_tensor_matmul(vm, a, b, &r), "%s", vm->err.message->data);
    ck_assert_int_eq(r->dtype, dt);
    /* the reference: loop over r's elements */
    int64_t idx[LANG_TENSOR_MAX_DIMS] = {0};
    do {
      int rb = r->ndim - (avec ? 0 : 1) - (bvec ? 0 : 1);
      int64_t i = avec ? 0 : idx[rb], j = bvec ? 0 : idx[r->ndim - 1];
      double want = 0;
      for (int64_t l = 0; l < k; l++) {
        int64_t ia[LANG_TENSOR_MAX_DIMS], ib[LANG_TENSOR_MAX_DIMS];
        int abatch = a->ndim - (avec ? 1 : 2), bbatch = b->ndim - (bvec ? 1 : 2);
        for (int d = 0; d < abatch; d++) {
          int rd = rb - abatch + d;
          ia[d] = a->shape[d] == 1 ? 0 : idx[rd];
        }
        for (int d = 0; d < bbatch; d++) {
          int rd = rb - bbatch + d;
          ib[d] = b->shape[d] == 1 ? 0 : idx[rd];
        }
        if (avec) ia[abatch] = l;
        else {
          ia[abatch] = i;
          ia[abatch + 1] = l;
        }
        ib[bbatch] = l;
        if (!bvec) ib[bbatch + 1] = j;
        want += at(a, ia) * at(b, ib);
      }
      double got = at(r, idx);
      ck_assert_msg(fabs(got - want) <= 1e-4 * (fabs(want) + 1), "trial %d: got %g want %g", trial,
                    got, want);
    } while (r->ndim > 0 && next_index(r->ndim, r->shape, idx));
  }
}
END_TEST

/* conv2d and max_pool2d against direct loops */
START_TEST(test_conv_pool_property)
{
  for (int trial = 0; trial < 60; trial++) {
    DType dt = rnd_int(0, 1) ? DT_F32 : DT_F64;
    int64_t n = rnd_int(1, 2), cin = rnd_int(1, 3), h = rnd_int(3, 8), w = rnd_int(3, 8);
    int64_t cout = rnd_int(1, 3), kh = rnd_int(1, 3), kw = rnd_int(1, 3);
    int64_t sh = rnd_int(1, 2), sw = rnd_int(1, 2), ph = rnd_int(0, 1), pw = rnd_int(0, 1);
    int64_t xs[4] = {n, cin, h, w}, ws[4] = {cout, cin, kh, kw};
    run("pass");
    ObjTensor *x = maybe_strided(random_tensor(dt, 4, xs)), *wt = random_tensor(dt, 4, ws);
    ObjTensor *bias = random_tensor(dt, 1, &cout);
    /* through the builtin, as programs call it */
    Value fn;
    ck_assert(lang_dict_get(vm->builtins, lang_str("conv2d"), &fn));
    Value args[5] = {v_obj(x), v_obj(wt), v_obj(bias), lang_tuple_of(2, v_int(sh), v_int(sw)),
                     lang_tuple_of(2, v_int(ph), v_int(pw))};
    Value rv;
    ck_assert_msg(AS_BUILTIN(fn)->fn(vm, 5, args, NULL, &rv), "%s", vm->err.message->data);
    ObjTensor *r = AS_TENSOR(rv);
    int64_t ho = (h + 2 * ph - kh) / sh + 1, wo = (w + 2 * pw - kw) / sw + 1;
    ck_assert_int_eq(r->shape[2], ho);
    ck_assert_int_eq(r->shape[3], wo);
    int64_t idx[4] = {0};
    do {
      double want = at(bias, &idx[1]);
      for (int64_t c = 0; c < cin; c++)
        for (int64_t a = 0; a < kh; a++)
          for (int64_t b = 0; b < kw; b++) {
            int64_t y = idx[2] * sh - ph + a, z = idx[3] * sw - pw + b;
            if (y < 0 || y >= h || z < 0 || z >= w) continue;
            int64_t xi[4] = {idx[0], c, y, z}, wi[4] = {idx[1], c, a, b};
            want += at(x, xi) * at(wt, wi);
          }
      ck_assert_msg(fabs(at(r, idx) - want) <= 1e-4 * (fabs(want) + 1), "conv trial %d", trial);
    } while (next_index(4, r->shape, idx));

    /* max pooling, padding at most half the kernel */
    int64_t pk[2] = {rnd_int(1, 3), rnd_int(1, 3)};
    int64_t pp[2] = {rnd_int(0, pk[0] / 2), rnd_int(0, pk[1] / 2)};
    ck_assert(lang_dict_get(vm->builtins, lang_str("max_pool2d"), &fn));
    Value pargs[4] = {v_obj(x), lang_tuple_of(2, v_int(pk[0]), v_int(pk[1])),
                      lang_tuple_of(2, v_int(sh), v_int(sw)), lang_tuple_of(2, v_int(pp[0]), v_int(pp[1]))};
    ck_assert_msg(AS_BUILTIN(fn)->fn(vm, 4, pargs, NULL, &rv), "%s", vm->err.message->data);
    r = AS_TENSOR(rv);
    memset(idx, 0, sizeof idx);
    do {
      double want = -INFINITY;
      for (int64_t a = 0; a < pk[0]; a++)
        for (int64_t b = 0; b < pk[1]; b++) {
          int64_t y = idx[2] * sh - pp[0] + a, z = idx[3] * sw - pp[1] + b;
          if (y < 0 || y >= h || z < 0 || z >= w) continue;
          int64_t xi[4] = {idx[0], idx[1], y, z};
          if (at(x, xi) > want) want = at(x, xi);
        }
      ck_assert_msg(at(r, idx) == want, "pool trial %d", trial);
    } while (next_index(4, r->shape, idx));
  }
}
END_TEST

/* astype against C conversions, every pair of dtypes, strided sources */
START_TEST(test_cast_property)
{
  static const DType dts[] = {DT_BOOL, DT_I32, DT_I64, DT_F32, DT_F64};
  for (int trial = 0; trial < 100; trial++) {
    int nd;
    int64_t shape[LANG_TENSOR_MAX_DIMS];
    random_shape(&nd, shape, 3, 5);
    DType from = dts[rnd_int(0, 4)], to = dts[rnd_int(0, 4)];
    ObjTensor *x = maybe_strided(random_tensor(from, nd, shape)), *r;
    ck_assert(lang_tensor_astype(vm, x, to, &r));
    ck_assert_int_eq(r->dtype, to);
    int64_t idx[LANG_TENSOR_MAX_DIMS] = {0};
    if (x->size == 0) continue;
    do {
      double v = at(x, idx), want;
      switch (to) {
      case DT_BOOL: want = v != 0; break;
      case DT_I32: case DT_I64: want = trunc(v); break;
      case DT_F32: want = (float)v; break;
      default: want = v; break;
      }
      ck_assert(at(r, idx) == want);
    } while (next_index(nd, shape, idx));
  }
}
END_TEST

/* exp, log, ... of random data against libm, f32 and f64 */
START_TEST(test_unary_property)
{
  static const TensorUnop ops[] = {TU_NEG, TU_ABS, TU_EXP, TU_LOG, TU_SQRT, TU_SIN, TU_COS,
                                   TU_TANH, TU_SIGMOID, TU_RELU, TU_ROUND};
  for (int trial = 0; trial < 100; trial++) {
    TensorUnop op = ops[rnd_int(0, 10)];
    DType dt = rnd_int(0, 1) ? DT_F32 : DT_F64;
    int64_t n = rnd_int(1, 3000);
    ObjTensor *x = maybe_strided(random_tensor(dt, 1, &n)), *r;
    ck_assert(lang_tensor_unary(vm, op, x, &r));
    for (int64_t i = 0; i < n; i++) {
      double v = at(x, &i), want;
      switch (op) {
      case TU_NEG: want = -v; break;
      case TU_ABS: want = fabs(v); break;
      case TU_EXP: want = exp(v); break;
      case TU_LOG: want = log(v); break;
      case TU_SQRT: want = sqrt(v); break;
      case TU_SIN: want = sin(v); break;
      case TU_COS: want = cos(v); break;
      case TU_TANH: want = tanh(v); break;
      case TU_SIGMOID: want = 1 / (1 + exp(-v)); break;
      case TU_RELU: want = v > 0 ? v : 0; break;
      default: want = rint(v); break;
      }
      double got = at(r, &i);
      if (isnan(want)) {
        ck_assert(isnan(got));
        continue;
      }
      double tol = (dt == DT_F32 ? 1e-6 : 1e-14) * (fabs(want) + 1e-30) + (dt == DT_F32 ? 1e-7 : 1e-15);
      ck_assert_msg(fabs(got - want) <= tol, "%s(%.17g) = %.17g, want %.17g (%s)",
                    lang_tensor_unop_name(op), v, got, want, dev_dtype_name(dt));
    }
  }
}
END_TEST

/* Pairwise summation keeps a long f32 sum accurate. */
START_TEST(test_sum_accuracy)
{
  /* a running f32 sum of these would be off by 8% */
  CHECK_OUT("print(full(10000000, 0.1).sum())", "tensor(1000000., f32)\n");
  CHECK_OUT("print(full(10000000, 0.1, dtype='f64').mean())", "tensor(0.1, f64)\n");
}
END_TEST

/* ---- random numbers ---- */

START_TEST(test_philox)
{
  /* the known-answer vectors of Random123's kat_vectors */
  static const struct {
    uint32_t ctr[4], key[2], out[4];
  } kat[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
    uint32_t out4[4];
    lang_philox(kat[i].ctr, kat[i].key, out4);
    for (int j = 0; j < 4; j++) ck_assert_uint_eq(out4[j], kat[i].out[j]);
  }
}
END_TEST

START_TEST(test_random)
{
  /* reproducible from a seed or a key, different for different keys */
  CHECK_OUT("print(allclose(randn((3, 4), seed=7), randn((3, 4), seed=7)), allclose(rand(5, seed=1), rand(5, seed=2)))",
            "True False\n");
  CHECK_OUT("k = key(42)\nk1, k2 = split(k)\nprint(k, split(k, 3).shape, allclose(randn(4, key=k1), randn(k1, 4)), "
            "allclose(randn(4, key=k1), randn(4, key=k2)), allclose(randn(4, key=k), randn(4, seed=42)))",
            "tensor([ 0, 42], i64) (3, 2) True False True\n");
  /* the values themselves are part of the contract: same on every machine */
  CHECK_OUT("print(rand(3, seed=0, dtype='f64'), key(-1))",
            "tensor([0.39904647, 0.9722412 , 0.01944942], f64) tensor([4294967295, 4294967295], i64)\n");
  /* statistics of a million draws */
  run("u = rand(1000000, seed=3)\nz = randn(1000000, seed=4, dtype='f64')\n"
      "um = u.mean().item()\nuv = ((u - um) ** 2).mean().item()\nzm = z.mean().item()\n"
      "zv = (z * z).mean().item()\nlo = u.min().item()\nhi = u.max().item()");
  ck_assert(fabs(global("um").f - 0.5) < 0.002);
  ck_assert(fabs(global("uv").f - 1.0 / 12) < 0.002);
  ck_assert(fabs(global("zm").f) < 0.005);
  ck_assert(fabs(global("zv").f - 1.0) < 0.005);
  ck_assert(global("lo").f >= 0.0 && global("hi").f < 1.0);
}
END_TEST

/* The same draws whatever the number of threads. */
START_TEST(test_random_threads)
{
  static const int threads[] = {1, 2, 5};
  ObjTensor *first = NULL;
  for (int i = 0; i < 3; i++) {
    char n[8];
    snprintf(n, sizeof n, "%d", threads[i]);
    setenv("MIST_NUM_THREADS", n, 1);
    MistVM *v = mist_new(0, NULL);
    int64_t shape = 1 << 20;
    uint32_t key[2] = {1, 2};
    ObjTensor *t;
    ck_assert(lang_tensor_random(v, LANG_RANDOM_NORMAL, DT_F32, 1, &shape, key, &t));
    if (first) ck_assert(memcmp(lang_tensor_ptr(first), lang_tensor_ptr(t), (size_t)shape * 4) == 0);
    else first = t;
    mist_free(v);
  }
  unsetenv("MIST_NUM_THREADS");
}
END_TEST

/* ---- memory ---- */

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

/* A loop making 10**5 tensors of 1 MB each stays under 200 MB resident:
 * the buffers live outside the GC heap, and their growth triggers
 * collections whose finalisers give them back. */
START_TEST(test_memory_bound)
{
#ifdef MIST_ASAN
  const int iters = 10000;   /* the same bound, fewer turns under the sanitizers */
#else
  const int iters = 100000;
#endif
  long before = rss_kb(), peak = before;
  int64_t n = 1 << 18;   /* 1 MiB of f32 */
  for (int i = 0; i < iters; i++) {
    ObjTensor *t;
    ck_assert(lang_tensor_full(vm, DT_F32, 1, &n, v_float(1.0), &t));
    ck_assert(((float *)lang_tensor_ptr(t))[n - 1] == 1.0f);
    if (i % 1000 == 0) {
      long r = rss_kb();
      if (r > peak) peak = r;
    }
  }
  ck_assert_msg(before > 0, "no VmRSS in /proc/self/status");
  ck_assert_msg(peak < 200 * 1024, "peak resident %ld kB (started at %ld kB)", peak, before);
  ck_assert(lang_gc_external_bytes() < (size_t)200 << 20);
}
END_TEST

/* Do tensors a and b hold the same elements (same shape, exactly)? */
static bool same_elements(const ObjTensor *a, const ObjTensor *b) {
  if (a->ndim != b->ndim || a->size != b->size) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  int64_t idx[LANG_TENSOR_MAX_DIMS] = {0};
  if (a->size == 0) return true;
  do {
    double x = at(a, idx), y = at(b, idx);
    if (!(x == y || (x != x && y != y))) return false;
  } while (next_index(a->ndim, a->shape, idx));
  return true;
}

/* A new tensor holding t's elements: t * 1 (an arithmetic result, as
 * the temporaries the interpreter hands to lang_arith_reusing are). */
static ObjTensor *temporary(ObjTensor *t) {
  Value r;
  ck_assert(lang_arith(vm, OP_MUL, v_obj(t), v_int(1), &r));
  return AS_TENSOR(r);
}

/* op(a, b) with the operands marked dead: the result must be the one
 * lang_arith gives, written over the dead operand exactly when
 * `reused` (the other operand never changes). */
static void check_reusing(ArithOp op, Value a, Value b, unsigned dead, bool reused) {
  Value want, got;
  ck_assert(lang_arith(vm, op, a, b, &want));
  ObjTensor *keep = v_is_tensor(dead == 1 ? b : a) ? temporary(AS_TENSOR(dead == 1 ? b : a)) : NULL;
  ck_assert(lang_arith_reusing(vm, op, a, b, dead, &got));
  ck_assert(v_is_tensor(got));
  ck_assert_msg(same_elements(AS_TENSOR(got), AS_TENSOR(want)), "wrong result");
  ck_assert_int_eq(AS_TENSOR(got)->dtype, AS_TENSOR(want)->dtype);
  Value d = dead == 1 ? a : b;
  ck_assert_msg((v_is_tensor(d) && AS_TENSOR(got) == AS_TENSOR(d)) == reused, "reused: expected %d", reused);
  if (keep) ck_assert_msg(same_elements(keep, AS_TENSOR(dead == 1 ? b : a)), "the live operand changed");
}

/* Arithmetic writes over an operand that the caller says is dead only
 * where that operand's buffer can take the result (lang_tensor_reusable),
 * and the arithmetic primitives that ir/eval.c counts on to make new
 * buffers (dead_temporary) make one every time, whatever their operands. */
START_TEST(test_reuse_temporaries)
{
  int64_t n[1] = {1024}, n2[2] = {2, 1024}, col[2] = {1024, 1}, small[1] = {16}, sq[2] = {32, 32};
  ObjTensor *a = random_tensor(DT_F32, 1, n), *b = random_tensor(DT_F32, 1, n);
  /* reused: either side, a number on the other, a broadcast other side */
  check_reusing(OP_SUB, v_obj(temporary(a)), v_obj(b), 1, true);
  check_reusing(OP_SUB, v_obj(b), v_obj(temporary(a)), 2, true);
  check_reusing(OP_MUL, v_float(0.01), v_obj(temporary(a)), 2, true);
  check_reusing(OP_ADD, v_obj(temporary(random_tensor(DT_F64, 2, n2))), v_obj(b), 1, true);
  check_reusing(OP_ADD, v_obj(temporary(random_tensor(DT_I64, 2, sq))), v_int(3), 1, true);
  /* a small buffer (in the collector's heap) too */
  check_reusing(OP_ADD, v_obj(temporary(random_tensor(DT_F32, 1, small))), v_float(1.0), 1, true);
  /* not reused: another dtype, a bigger shape, a view,
   * a buffer with an old version (t[0] = v), a tensor not covering its
   * buffer (reshaped views do; a slice does not) */
  check_reusing(OP_ADD, v_obj(temporary(random_tensor(DT_I32, 1, n))), v_float(1.5), 1, false);
  check_reusing(OP_ADD, v_obj(temporary(a)), v_obj(random_tensor(DT_F32, 2, n2)), 1, false);
  check_reusing(OP_MUL, v_obj(random_tensor(DT_F32, 2, col)), v_obj(temporary(a)), 2, false);
  run("t = ones(4096) * 2.0\ns = t[1:]\nu = t\nu[0] = 5.0\nr = arange(2048.).reshape(32, 64)");
  check_reusing(OP_ADD, global("s"), v_float(1.0), 1, false);
  check_reusing(OP_ADD, global("u"), v_float(1.0), 1, false);
  ck_assert(at(global_tensor("t"), (int64_t[]){0}) == 2.0);
  ObjTensor *rt;
  ck_assert(lang_tensor_transpose(vm, global_tensor("r"), NULL, &rt));
  check_reusing(OP_ADD, v_obj(rt), v_float(1.0), 1, false);
  check_reusing(OP_ADD, global("r"), v_float(1.0), 1, true);
  /* new buffers from every primitive dead_temporary names, on big and
   * small operands of each kind */
  static const ArithOp ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_TRUEDIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_MATMUL};
  static const DType dts[] = {DT_F32, DT_F64, DT_I32, DT_I64, DT_BOOL};
  for (int round = 0; round < 400; round++) {
    ArithOp op = ops[rnd_int(0, 7)];
    DType dt = dts[rnd_int(0, 4)];
    int64_t shape[2] = {rnd_int(1, 40), rnd_int(1, 40)};
    ObjTensor *x = random_tensor(dt, 2, shape);
    Value other;
    int kind = (int)rnd_int(0, 3);
    if (op == OP_MATMUL) {
      int64_t sh2[2] = {shape[1], rnd_int(1, 40)};
      other = kind == 0 ? v_obj(random_tensor(dt, 1, &shape[1])) : v_obj(random_tensor(dts[rnd_int(0, 4)], 2, sh2));
    } else {
      other = kind == 0 ? v_obj(x) : kind == 1 ? v_int(rnd_int(1, 3))
                                   : v_obj(random_tensor(dts[rnd_int(0, 4)], 2, shape));
      if (kind == 3) other = v_float(rnd_unit() + 0.5);
    }
    if (dt == DT_BOOL || (op == OP_POW && !lang_dtype_is_float(dt))) continue;   /* (errors) */
    Value r;
    bool left = rnd_int(0, 1) && op != OP_MATMUL;
    if (!(left ? lang_arith(vm, op, other, v_obj(x), &r) : lang_arith(vm, op, v_obj(x), other, &r))) {
      lang_error_clear(vm);
      continue;
    }
    ck_assert(v_is_tensor(r));
    ck_assert_ptr_ne(AS_TENSOR(r)->buf, x->buf);
    if (v_is_tensor(other)) ck_assert_ptr_ne(AS_TENSOR(r)->buf, AS_TENSOR(other)->buf);
    ck_assert(lang_neg(vm, v_obj(x), &r));
    ck_assert_ptr_ne(AS_TENSOR(r)->buf, x->buf);
  }
}
END_TEST

/* x op (a * b) at once (lang_arith_scaled) against the two operations
 * one after the other (lang_arith): the same elements, dtype and shape
 * when it is done, written over an operand marked dead exactly when that
 * one can take it (x first), the others unchanged; and done exactly when
 * one of a and b is a number and the other a float tensor of x's dtype
 * and shape, both contiguous (nothing done, no error, otherwise). */
START_TEST(test_scaled_sum)
{
  for (int round = 0; round < 800; round++) {
    static const DType others[] = {DT_I64, DT_BOOL, DT_I32};
    DType dt = rnd_int(0, 5) ? (rnd_int(0, 1) ? DT_F32 : DT_F64) : others[rnd_int(0, 2)];
    int64_t shape[2] = {rnd_int(1, 40), rnd_int(1, 64)}, row[2] = {1, shape[1]};
    int kind = (int)rnd_int(0, 7);   /* 0: another dtype, 1: a row, 2: strided, 3: a tensor for s */
    ObjTensor *x = random_tensor(dt, 2, shape);
    ObjTensor *y = random_tensor(kind == 0 ? (dt == DT_F32 ? DT_F64 : DT_F32) : dt, 2, kind == 1 ? row : shape);
    if (kind == 2) y = maybe_strided(y);
    Value s = kind == 3 ? v_obj(random_tensor(dt, 0, NULL)) : rnd_int(0, 1) ? v_float(rnd_unit() * 2 - 1)
                                                                           : v_int(rnd_int(-3, 3));
    ArithOp op = rnd_int(0, 1) ? OP_ADD : OP_SUB;
    bool product_first = rnd_int(0, 1), scalar_first = rnd_int(0, 1);
    unsigned how = (product_first ? LANG_PRODUCT_FIRST : 0) | (unsigned)rnd_int(0, 7) * LANG_DEAD_X;
    /* dead operands are new copies, so the originals give the reference */
    Value xv = how & LANG_DEAD_X ? v_obj(temporary(x)) : v_obj(x);
    Value yv = how & (scalar_first ? LANG_DEAD_B : LANG_DEAD_A) ? v_obj(temporary(y)) : v_obj(y);
    Value prod, want, got = v_none();
    if (!lang_arith(vm, OP_MUL, scalar_first ? s : v_obj(y), scalar_first ? v_obj(y) : s, &prod) ||
        !lang_arith(vm, op, product_first ? prod : v_obj(x), product_first ? v_obj(x) : prod, &want)) {
      lang_error_clear(vm);
      continue;
    }
    ObjTensor *keep_x = temporary(x), *keep_y = temporary(y);
    int done = lang_arith_scaled(vm, op, xv, scalar_first ? s : yv, scalar_first ? yv : s, how, &got);
    ck_assert_int_ge(done, 0);
    ObjTensor *yt = AS_TENSOR(yv);
    bool can = lang_dtype_is_float(dt) && yt->dtype == dt && yt->shape[0] == shape[0] && kind != 3 &&
               lang_tensor_is_contiguous(yt);
    ck_assert_msg(done == can, "round %d: done %d, expected %d (kind %d, dtype %d)", round, done, can, kind, dt);
    if (!done) continue;
    ck_assert(v_is_tensor(got) && AS_TENSOR(got)->dtype == AS_TENSOR(want)->dtype);
    ck_assert_msg(same_elements(AS_TENSOR(got), AS_TENSOR(want)), "round %d: wrong result", round);
    ObjTensor *X = AS_TENSOR(xv), *Y = AS_TENSOR(yv), *G = AS_TENSOR(got);
    bool over_x = (how & LANG_DEAD_X) && lang_tensor_reusable(X, dt, 2, shape);
    bool over_y = !over_x && (how & (scalar_first ? LANG_DEAD_B : LANG_DEAD_A)) && lang_tensor_reusable(Y, dt, 2, shape);
    ck_assert_msg((G == X) == over_x && (G == Y) == over_y, "round %d: written over the wrong tensor", round);
    if (G != X) ck_assert(same_elements(X, keep_x));
    if (G != Y) ck_assert(same_elements(Y, keep_y));
  }
}
END_TEST

/* Do two results of a primitive agree: the same tensor elements, dtype
 * and shape, or equal numbers, or both None? */
static bool same_result(Value a, Value b) {
  if (v_is_tensor(a) && v_is_tensor(b))
    return AS_TENSOR(a)->dtype == AS_TENSOR(b)->dtype && same_elements(AS_TENSOR(a), AS_TENSOR(b));
  return a.tag == b.tag && (a.tag != V_FLOAT || a.f == b.f || (a.f != a.f && b.f != b.f));
}

/* Primitive p's argument k for a random round: float tensors (f32 or
 * f64, a square shape or, now and then, a row that broadcasts) or a
 * float; the last argument of a binary sensitivity is 0 or 1. */
static Value prim_arg(IrPrim p, int k, int64_t n) {
  int arity = ir_prims[p].arity;
  if (arity == 4 && k == 3) return v_int(rnd_int(0, 1));
  /* sens_at(x, i, d): a row index, d a row (a part when x is big) */
  if (p == IR_P_SENS_AT && k == 1) return v_int(rnd_int(-n, n - 1));
  if (p == IR_P_SENS_AT && k == 2) return v_obj(random_tensor(rnd_int(0, 1) ? DT_F32 : DT_F64, 1, &n));
  if (rnd_int(0, 9) == 0) return v_float(rnd_unit() * 4 - 2);
  int64_t sq[2] = {n, n}, row[2] = {1, n};
  bool bcast = p != IR_P_MATMUL && p != IR_P_MATMUL_SENS && rnd_int(0, 5) == 0;
  return v_obj(random_tensor(rnd_int(0, 1) ? DT_F32 : DT_F64, 2, bcast ? row : sq));
}

/* The ops.def flags that ir/eval.c trusts when it reuses buffers, held
 * to what each primitive does: a P_FRESH primitive's tensor result
 * shares no buffer with its arguments; a P_SHAPE_XY one's result does
 * not change when x and y (arguments 1 and 2) hold other elements; a
 * P_OVER_D one told that d (a temporary) is dead gives the same result,
 * over d's buffer when that can take it. */
START_TEST(test_prim_flags)
{
  for (int p = 0; p < IR_NPRIMS; p++) {
    unsigned flags = ir_prims[p].flags;
    if (!(flags & (P_FRESH | P_SHAPE_XY | P_OVER_D))) continue;
    int arity = ir_prims[p].arity;
    ck_assert_msg(arity >= 1 && arity <= 4, "%s: arity %d", ir_prims[p].name, arity);
    BuiltinFn fn = ev_prim_fn((IrPrim)p);
    int checked = 0;
    for (int round = 0; round < 300; round++) {
      int64_t n = rnd_int(1, 40);
      Value args[4], r;
      for (int k = 0; k < arity; k++) args[k] = prim_arg((IrPrim)p, k, n);
      if (!fn(vm, arity, args, NULL, &r)) {
        lang_error_clear(vm);
        continue;
      }
      checked++;
      if ((flags & P_FRESH) && v_is_tensor(r))
        for (int k = 0; k < arity; k++)
          ck_assert_msg(!v_is_tensor(args[k]) || AS_TENSOR(args[k])->buf != AS_TENSOR(r)->buf,
                        "%s: the result shares argument %d's buffer", ir_prims[p].name, k);
      if (flags & P_SHAPE_XY) {
        Value other[4] = {args[0], args[1], args[2], args[3]}, r2;
        for (int k = 1; k <= 2; k++)
          if (v_is_tensor(args[k])) other[k] = v_obj(random_tensor(AS_TENSOR(args[k])->dtype, 2, AS_TENSOR(args[k])->shape));
        ck_assert(fn(vm, arity, other, NULL, &r2));
        ck_assert_msg(same_result(r, r2), "%s: the result reads x's or y's elements", ir_prims[p].name);
      }
      if ((flags & P_OVER_D) && v_is_tensor(args[0])) {
        ObjTensor *d = temporary(AS_TENSOR(args[0]));
        bool reusable = lang_tensor_reusable(d, d->dtype, d->ndim, d->shape);
        Value over[4] = {v_obj(d), args[1], args[2], args[3]}, r2;
        vm->over_d = true;
        ck_assert(fn(vm, arity, over, NULL, &r2));
        ck_assert(!vm->over_d);
        ck_assert_msg(same_result(r, r2), "%s: a different result over d", ir_prims[p].name);
        /* (over d where the result has d's dtype and shape) */
        if (v_is_tensor(r2) && AS_TENSOR(r2) == d) ck_assert(reusable);
      }
    }
    ck_assert_msg(checked > 50, "%s: only %d rounds ran", ir_prims[p].name, checked);
  }
}
END_TEST

/* The same through the interpreter, with the script-level loop. */
START_TEST(test_memory_bound_script)
{
  run("def churn(n):\n  s = 0.0\n  for i in range(n):\n    t = ones(262144) * 2.0\n    s = s + t[0].item()\n  return s\n"
      "total = churn(3000)");
  ck_assert(global("total").f == 6000.0);
  ck_assert_msg(rss_kb() < 200 * 1024, "resident %ld kB", rss_kb());
}
END_TEST

static Suite *tensor_suite(void) {
  Suite *s = suite_create("tensor");
  TCase *tc = tcase_create("values");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_print);
  tcase_add_test(tc, test_arith);
  tcase_add_test(tc, test_promotion);
  tcase_add_test(tc, test_creation);
  tcase_add_test(tc, test_shapes);
  tcase_add_test(tc, test_indexing);
  tcase_add_test(tc, test_functional_update);
  tcase_add_test(tc, test_reductions);
  tcase_add_test(tc, test_matmul_values);
  tcase_add_test(tc, test_nn_values);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_sum_accuracy);
  suite_add_tcase(s, tc);
  tc = tcase_create("properties");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_broadcast_property);
  tcase_add_test(tc, test_reduce_property);
  tcase_add_test(tc, test_matmul_property);
  tcase_add_test(tc, test_conv_pool_property);
  tcase_add_test(tc, test_cast_property);
  tcase_add_test(tc, test_unary_property);
  suite_add_tcase(s, tc);
  tc = tcase_create("machinery");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_philox);
  tcase_add_test(tc, test_random);
  tcase_add_test(tc, test_random_threads);
  tcase_add_test(tc, test_memory_bound);
  tcase_add_test(tc, test_memory_bound_script);
  tcase_add_test(tc, test_reuse_temporaries);
  tcase_add_test(tc, test_scaled_sum);
  tcase_add_test(tc, test_prim_flags);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(tensor_suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
