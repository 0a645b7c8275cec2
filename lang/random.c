/* random.c: reproducible random numbers, from the counter-based
 * generator Philox4x32-10 (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC 2011).  There is no generator state: a key (two
 * 32-bit words) and a counter give four random words, so element i of a
 * random tensor is a function of the key and i alone, and the result is
 * the same whatever the machine and however many threads fill it.
 *
 * Element i uses the counter (i mod 2**32, i div 2**32, 0, 0).  A uniform
 * f32 takes the top 24 bits of word 0, an f64 53 bits of words 0 and 1,
 * both in [0, 1).  A normal takes two 53-bit uniforms from words 0..3
 * through Box-Muller (the cosine branch), computed in double and
 * rounded to the dtype.  split(key, n) makes key j from the counter
 * (j mod 2**32, j div 2**32, "SPLT", 0): a different counter space from
 * the elements', so a key and its children draw unrelated numbers.
 */
#include <math.h>

#include "devices/pool.h"
#include "lang/tensor_impl.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void lang_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

void lang_random_split(const uint32_t key[2], uint64_t i, uint32_t out[2]) {
  const uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), 0x53504c54u, 0};
  uint32_t w[4];
  lang_philox(ctr, key, w);
  out[0] = w[0];
  out[1] = w[1];
}

/* a uniform double in [0, 1) from 53 bits of two words */
static double unit53(uint32_t a, uint32_t b) {
  uint64_t bits = ((uint64_t)(a >> 5) << 26) | (b >> 6);
  return (double)bits * (1.0 / 9007199254740992.0);
}

typedef struct RandCtx {
  LangRandomKind kind;
  DType dt;
  uint32_t key[2];
  char *out;
} RandCtx;

static void fill(void *vctx, int64_t begin, int64_t end) {
  const RandCtx *c = vctx;
  for (int64_t i = begin; i < end; i++) {
    const uint32_t ctr[4] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32), 0, 0};
    uint32_t w[4];
    lang_philox(ctr, c->key, w);
    double x;
    if (c->kind == LANG_RANDOM_UNIFORM) {
      if (c->dt == DT_F32) {
        ((float *)c->out)[i] = (float)(w[0] >> 8) * (1.0f / 16777216.0f);
        continue;
      }
      x = unit53(w[0], w[1]);
    } else {
      double u1 = 1.0 - unit53(w[0], w[1]);   /* (0, 1]: log is finite */
      double u2 = unit53(w[2], w[3]);
      x = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
    }
    if (c->dt == DT_F32) ((float *)c->out)[i] = (float)x;
    else ((double *)c->out)[i] = x;
  }
}

bool lang_tensor_random(MistVM *vm, LangRandomKind kind, DType dt, int ndim,
                        const int64_t *shape, const uint32_t key[2], ObjTensor **out) {
  if (!lang_dtype_is_float(dt))
    return lang_raise(vm, "TypeError", "%s: dtype must be f32 or f64, not %s",
                      kind == LANG_RANDOM_UNIFORM ? "rand" : "randn", dev_dtype_name(dt));
  ObjTensor *t = lang_tensor_new(vm, dt, ndim, shape, false);
  if (!t) return false;
  RandCtx c = {kind, dt, {key[0], key[1]}, lang_tensor_ptr(t)};
  dev_parallel_for(t->size >= 4096 ? lang_tensor_pool(vm) : NULL, t->size, 4096, fill, &c);
  *out = t;
  return true;
}
