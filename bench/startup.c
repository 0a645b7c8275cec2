/* startup.c: the C baseline for startup.ms (process start-up alone). */
#include <stdio.h>

int main(void) {
  printf("1\n");
  return 0;
}
