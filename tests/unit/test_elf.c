/* test_elf.c: the loader of relocatable objects graph mode links its
 * compiled code with (jit/elf.c).
 *
 * The object is tests/unit/elf/fixture.c, compiled by the C compiler as
 * position-independent code: loaded, its function run and its data
 * read, its undefined symbols resolved by the test.  Then what the
 * loader must refuse without crashing: an undefined symbol nobody
 * defines, every truncation of the file and bytes of it changed (the
 * objects come from a folder on disk, which may hold anything; the
 * fuzz target tests/fuzz/fuzz_elf.c does the same at random). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/elf.h"

double elf_test_scale(double x);
double elf_test_scale(double x) { return 10 * x; }
int elf_test_counter = 1000;

static void *resolve(void *ud, const char *name) {
  (void)ud;
  if (strcmp(name, "elf_test_scale") == 0) return (void *)(uintptr_t)elf_test_scale;
  if (strcmp(name, "elf_test_counter") == 0) return &elf_test_counter;
  return NULL;
}

static void *resolve_none(void *ud, const char *name) {
  (void)ud;
  (void)name;
  return NULL;
}

static uint8_t *fixture(size_t *size) {
  FILE *f = fopen(ELF_FIXTURE, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", ELF_FIXTURE);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n);
  ck_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

START_TEST(loads_and_runs) {
  size_t size;
  uint8_t *obj = fixture(&size);
  char why[JIT_ELF_WHY];
  JitElf *e = jit_elf_load(obj, size, resolve, NULL, "fixture", why);
  ck_assert_msg(e != NULL, "refused: %s", why);
  double (*sum)(int) = (double (*)(int))(uintptr_t)jit_elf_symbol(e, "fixture_sum");
  int *bss = jit_elf_symbol(e, "fixture_bss"), *seed = jit_elf_symbol(e, "fixture_seed");
  ck_assert(sum && bss && seed);
  ck_assert_int_eq(*bss, 0);
  ck_assert_int_eq(*seed, 7);
  /* 10 * 2.5 + 7 + 1 + 1000 + 3 * 1 */
  ck_assert(sum(1) == 1036.0);
  *seed = 100;
  elf_test_counter = 0;
  /* 10 * 4.5 + 100 + 2 + 0 + 3 * 3 */
  ck_assert(sum(3) == 156.0);
  ck_assert_int_eq(*bss, 2);
  ck_assert_ptr_null(jit_elf_symbol(e, "twice"));   /* a local: not looked up */
  ck_assert_ptr_null(jit_elf_symbol(e, "nothing"));
  jit_elf_free(e);
  elf_test_counter = 1000;
  free(obj);
}
END_TEST

START_TEST(refuses_undefined) {
  size_t size;
  uint8_t *obj = fixture(&size);
  char why[JIT_ELF_WHY];
  ck_assert_ptr_null(jit_elf_load(obj, size, resolve_none, NULL, NULL, why));
  ck_assert_msg(strstr(why, "undefined symbol elf_test_") != NULL, "%s", why);
  free(obj);
}
END_TEST

START_TEST(refuses_damage) {
  size_t size;
  uint8_t *obj = fixture(&size);
  uint8_t *copy = malloc(size);
  char why[JIT_ELF_WHY];
  /* every truncation: the section headers are at the end */
  for (size_t n = 0; n < size; n++) {
    memcpy(copy, obj, n);
    JitElf *e = jit_elf_load(copy, n, resolve, NULL, NULL, why);
    ck_assert_msg(e == NULL, "a truncation to %zu of %zu bytes loaded", n, size);
    ck_assert(why[0]);
  }
  /* every byte changed in turn: refused, or loaded (a change in code or
   * constants) and freed; never a crash */
  int refused = 0;
  for (size_t i = 0; i < size; i++) {
    memcpy(copy, obj, size);
    copy[i] ^= (uint8_t)(0x5a + i);
    JitElf *e = jit_elf_load(copy, size, resolve, NULL, NULL, why);
    if (!e) refused++;
    jit_elf_free(e);
  }
  ck_assert_int_gt(refused, 0);
  memcpy(copy, obj, size);
  copy[18] = 3;   /* e_machine: EM_386 */
  ck_assert_ptr_null(jit_elf_load(copy, size, resolve, NULL, NULL, why));
  ck_assert_msg(strstr(why, "not an x86-64 relocatable object") != NULL, "%s", why);
  free(copy);
  free(obj);
}
END_TEST

int main(void) {
  Suite *s = suite_create("elf");
  TCase *tc = tcase_create("loader");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, loads_and_runs);
  tcase_add_test(tc, refuses_undefined);
  tcase_add_test(tc, refuses_damage);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
