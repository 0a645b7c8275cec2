/* loop.c: the C baseline for loop.ms.  volatile keeps gcc -O2 from
 * folding the loop away, as an interpreter could not. */
#include <stdio.h>

int main(void) {
  volatile long n = 10000000;
  double x = 1.0, acc = 0.0;
  for (long i = 0; i < n; i++) {
    x = x * 0.999999 + 0.5;
    acc += x;
  }
  printf("%.17g\n", acc);
  return 0;
}
