/* closure.c: the C baseline for closure.ms, with closures as heap-allocated
 * environments and function pointers, as a compiler would make them. */
#include <stdio.h>
#include <stdlib.h>

typedef struct Closure Closure;
struct Closure {
  long (*fn)(Closure *self, long x);
  long n;               /* adder: captured n */
  Closure *f, *g;       /* compose: captured f and g */
};

static long adder(Closure *self, long x) { return x + self->n; }
static long doubler(Closure *self, long x) { (void)self; return x * 2; }
static long composed(Closure *self, long x) {
  long y = self->g->fn(self->g, x);
  return self->f->fn(self->f, y);
}

static Closure *make(long (*fn)(Closure *, long)) {
  Closure *c = malloc(sizeof *c);
  if (!c) abort();
  c->fn = fn;
  return c;
}

int main(void) {
  volatile long n = 1000000;
  long total = 0;
  for (long i = 0; i < n; i++) {
    Closure *add = make(adder);
    add->n = i;
    Closure *dbl = make(doubler);
    Closure *h = make(composed);
    h->f = add;
    h->g = dbl;
    total += h->fn(h, i) % 7;
    free(h);
    free(dbl);
    free(add);
  }
  printf("%ld\n", total);
  return 0;
}
