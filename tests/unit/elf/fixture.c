/* fixture.c: an object for test_elf.c to load with jit/elf.c, compiled
 * position-independent by the C compiler: calls of a function it does
 * not define, data it does not define (through the GOT), constants,
 * data, bss and a table of addresses. */
extern double elf_test_scale(double x);
extern int elf_test_counter;

static const double table[4] = {1.5, 2.5, 3.5, 4.5};
int fixture_bss;
int fixture_seed = 7;

static int twice(int x) { return 2 * x; }
static int thrice(int x) { return 3 * x; }
int (*const fixture_ops[2])(int) = {twice, thrice};

double fixture_sum(int i) {
  fixture_bss++;
  return elf_test_scale(table[i & 3]) + fixture_seed + fixture_bss + elf_test_counter + fixture_ops[i & 1](i);
}
