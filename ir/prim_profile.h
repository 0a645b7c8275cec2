/* prim_profile.h: where the time of a repeated piece of work goes, per
 * primitive, builtin call and tensor arithmetic instruction of the
 * interpreter (a training step: which products, updates and rules cost
 * what).  Compiled in only by a build configured with
 * -DMIST_PRIM_PROFILE=ON; other builds have none of it (eval_exec.h's
 * PROF_ macros are empty), since a timer around every instruction slows
 * the loop.  Included by ir/eval.c alone.
 *
 * MIST_PRIM_PROFILE=N in the environment turns it on: the program is
 * taken to end with N repetitions of the same work (a loop of N steps),
 * so each name's last k*N calls are k calls per repetition, in order;
 * at exit it prints, per name and per position, the tenth percentile and
 * the median over the repetitions of the cycles that call took (the
 * timestamp counter's cycles on x86-64, nanoseconds elsewhere), and the
 * totals.  Percentiles, not means: a call that met a collection is an
 * outlier, as the best-of timings of bench/grad/ leave it out.  Calls
 * nest (a builtin calling a rule's closure): each is timed whole.  The
 * table is not locked: a profile is of a program that runs Mist code on
 * one thread (no data pipeline beside it). */
#ifndef MIST_PRIM_PROFILE_H
#define MIST_PRIM_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum { PROF_NAMES = 1024 };

/* the cycles of each call of one name, in order */
typedef struct {
  const char *name;
  uint32_t *cycles;
  size_t n, cap;
} ProfName;

static ProfName prof_names[PROF_NAMES];
static int prof_reps = -1;   /* MIST_PRIM_PROFILE's N; 0: off */

static inline uint64_t prof_now(void) {
#if defined(__x86_64__)
  return __rdtsc();
#else
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

static int prof_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void prof_report(void) {
  size_t reps = (size_t)prof_reps;
  uint32_t *col = malloc(reps * sizeof *col);
  if (!col) return;
  fprintf(stderr, "prim_profile: the last %zu repetitions; per name, calls per repetition, "
                  "then cycles: total of the tenth percentiles, of the medians, and each call's "
                  "tenth percentile in order\n", reps);
  for (int i = 0; i < PROF_NAMES; i++) {
    ProfName *p = &prof_names[i];
    size_t k = p->name ? p->n / reps : 0;
    if (k == 0) continue;
    const uint32_t *last = p->cycles + (p->n - k * reps);
    uint64_t p10 = 0, med = 0;
    char each[256] = "";
    for (size_t at = 0; at < k; at++) {
      for (size_t r = 0; r < reps; r++) col[r] = last[r * k + at];
      qsort(col, reps, sizeof *col, prof_cmp);
      p10 += col[reps / 10];
      med += col[reps / 2];
      size_t used = strlen(each);
      if (at < 8 && used < sizeof each - 16) snprintf(each + used, sizeof each - used, " %u", col[reps / 10]);
    }
    fprintf(stderr, "  %-24s %3zu %10llu %10llu %s%s\n", p->name, k, (unsigned long long)p10,
            (unsigned long long)med, each, k > 8 ? " ..." : "");
  }
  free(col);
}

static inline bool prof_on(void) {
  if (__builtin_expect(prof_reps < 0, 0)) {
    const char *e = getenv("MIST_PRIM_PROFILE");
    prof_reps = e ? atoi(e) : 0;
    if (prof_reps < 0) prof_reps = 0;
    if (prof_reps) atexit(prof_report);
  }
  return prof_reps > 0;
}

/* one more call of name (a string that lives as long as the program),
 * of `cycles` */
static void prof_add(const char *name, uint64_t cycles) {
  if (!prof_on() || !name) return;
  size_t h = ((uintptr_t)name >> 3) % PROF_NAMES;
  for (int probe = 0; prof_names[h].name && prof_names[h].name != name; probe++) {
    if (probe == PROF_NAMES) return;   /* full: the rest go uncounted */
    h = (h + 1) % PROF_NAMES;
  }
  ProfName *p = &prof_names[h];
  p->name = name;
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 1024;
    uint32_t *c = realloc(p->cycles, cap * sizeof *c);
    if (!c) return;
    p->cycles = c;
    p->cap = cap;
  }
  p->cycles[p->n++] = cycles > UINT32_MAX ? UINT32_MAX : (uint32_t)cycles;
}

/* the name an I_PRIM instruction is timed under: the builtin's it calls
 * (with keywords too: sum(x, axis=1) is call_kw of sum), else its
 * primitive's */
static const char *prof_prim_name(const IrNode *n) {
  int p = n ? ir_node_prim(n) : -1;
  int callee = p == IR_P_CALL_KW ? 1 : p < 0 ? 0 : -1;
  if (n && callee >= 0 && n->nin > callee && n->in[callee]->kind == IR_CONST &&
      v_is_obj(n->in[callee]->value, O_BUILTIN))
    return AS_BUILTIN(n->in[callee]->value)->name;
  return p >= 0 ? ir_prims[p].name : NULL;
}

#define PROF_START uint64_t prof_t0 = prof_now()
#define PROF_END(name) prof_add((name), prof_now() - prof_t0)

#endif
