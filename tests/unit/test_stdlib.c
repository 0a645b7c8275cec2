/* test_stdlib.c: the C side of the standard library's modules: the
 * progress bar as a host sees it (through mist_set_write_err, on a
 * terminal and off one), the data pipeline's threads (stopped when a
 * loop breaks, when its stream is garbage, when the VM is freed, never
 * left behind), and the file readers on hostile bytes that the golden
 * scripts cannot write (huge dimensions, gzip bombs, offsets past the
 * end, malformed headers).
 *
 * Everything else about nn, optim, data, io and plot is in
 * tests/scripts/stdlib/ and tests/stdlib/. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "capture.h"
#include "lang/gc.h"
#include "lang/vm.h"
#include "mist.h"
#include "stdlib/files.h"

static Buf out, err;
static MistVM *vm;

static void setup(void) {
  vm = capture_vm_new(&out);
  buf_clear(&err);
}

static void teardown(void) {
  if (vm) capture_vm_free(vm, &out);
  vm = NULL;
  buf_free(&err);
}

static void run_ok(const char *src) {
  MistStatus st = mist_eval(vm, "<test>", src, false);
  if (st != MIST_OK) ck_abort_msg("%s\nfailed: %s", src, mist_error(vm));
}

static int count_lines(const char *s, const char *prefix) {
  int n = 0;
  for (const char *p = s; p && *p;) {
    if (strncmp(p, prefix, strlen(prefix)) == 0) n++;
    p = strchr(p, '\n');
    if (p) p++;
  }
  return n;
}

/* ---- progress ---- */

START_TEST(test_progress_log) {
  mist_set_write_err(vm, capture, &err, false);
  run_ok("n = 0\nfor x in progress(range(50), desc='work'):\n    n = n + x\nprint(n)\n");
  ck_assert_str_eq(out.data, "1225\n");
  /* a line per tenth: 10 lines, the last at 100% */
  ck_assert_int_eq(count_lines(err.data, "work: "), 10);
  ck_assert_ptr_nonnull(strstr(err.data, "work:  10%|##                  | 5/50 ["));
  ck_assert_ptr_nonnull(strstr(err.data, "work: 100%|####################| 50/50 ["));
  ck_assert_ptr_nonnull(strstr(err.data, " it/s]\n"));
  ck_assert_ptr_null(strchr(err.data, '\r'));
}
END_TEST

START_TEST(test_progress_tty) {
  mist_set_write_err(vm, capture, &err, true);
  run_ok("import data\nfor b in progress(data.from_tensors(arange(7)).batch(2)):\n    pass\n");
  /* redrawn in place: the first and the last drawings at least, one line */
  ck_assert_ptr_nonnull(strstr(err.data, "\r 25%|#####               | 1/4 ["));
  ck_assert_ptr_nonnull(strstr(err.data, "\r100%|####################| 4/4 ["));
  ck_assert_int_eq(err.data[err.len - 1], '\n');
  ck_assert_ptr_eq(strchr(err.data, '\n'), err.data + err.len - 1);
}
END_TEST

START_TEST(test_progress_kinds) {
  mist_set_write_err(vm, capture, &err, false);
  /* lists, dicts (their keys), tensors; len() and list() see through it */
  run_ok("print([x for x in progress(['a', 'b'])], [k for k in progress({'k': 1})], len(progress(range(3))))\n"
         "print([t.item() for t in progress(arange(3))], list(progress((1, 2))))\n");
  ck_assert_str_eq(out.data, "['a', 'b'] ['k'] 3\n[0, 1, 2] [1, 2]\n");
  /* an infinite dataset: counts and rates, a line at 10, 100... */
  buf_clear(&err);
  run_ok("import data\nn = 0\nfor x in progress(data.from_tensors(arange(3)).repeat(), desc='inf'):\n"
         "    n = n + 1\n    if n == 120:\n        break\n");
  ck_assert_int_eq(count_lines(err.data, "inf: "), 2);
  ck_assert_ptr_nonnull(strstr(err.data, "inf: 100 ["));
  MistStatus st = mist_eval(vm, "<test>", "progress(1, desc=2)", false);
  ck_assert_int_eq(st, MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "progress: desc must be a str, not 'int'"));
}
END_TEST

/* ---- the pipeline's threads ---- */

static int threads_now(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  if (d) closedir(d);
  return n;
}

/* Threads of pipelines that ended exit by themselves (detached); give
 * them a moment. */
static int threads_settled(int want) {
  int n = threads_now();
  for (int i = 0; i < 200 && n > want; i++) {
    usleep(10000);
    n = threads_now();
  }
  return n;
}

START_TEST(test_pipeline_threads_end) {
  /* warm up: the tensor pool's threads start with the first tensor work */
  run_ok("import data\nx = [t for t in data.from_tensors(arange(4)).batch(2)]\n");
  int base = threads_settled(0);
  /* loops that finish, loops that break, pipelines with prefetch and
   * map workers, streams dropped half-read: none leaves a thread */
  run_ok("ds = data.from_tensors(arange(100)).map(lambda x: x * 2, workers=3).prefetch(4).shuffle(10, seed=1).batch(7)\n"
         "for i in range(30):\n"
         "    n = 0\n"
         "    for b in ds:\n"
         "        n = n + 1\n"
         "        if n == i % 5:\n"
         "            break\n"
         "    s = sum([b.sum().item() for b in ds])\n"
         "print(s)\n");
  ck_assert_str_eq(out.data, "9900\n");
  run_ok("for i in range(20):\n    it = [x for x in data.from_tensors(arange(5)).repeat().take(3)]\n");
  /* the streams of the loops that broke are garbage now: collecting
   * finalises them, which stops their pipelines */
  lang_gc_collect();
  lang_gc_collect();
  ck_assert_int_le(threads_settled(base), base);
}
END_TEST

START_TEST(test_pipeline_vm_free) {
  /* a VM freed while pipelines wait (an infinite prefetching one, a map
   * whose workers want the lock) stops and waits for their threads */
  int base = threads_settled(0);
  run_ok("import data\n"
         "ds = data.from_tensors(arange(10)).map(lambda x: x + 1, workers=4).repeat().prefetch(8)\n"
         "for x in ds:\n    break\n"
         "ds2 = data.from_tensors(arange(10)).repeat()\n"
         "for x in ds2:\n    break\n");
  mist_free(vm);
  vm = NULL;
  ck_assert_int_le(threads_settled(base), base + 2);   /* the pool's, at most */
  vm = capture_vm_new(&out);
}
END_TEST

START_TEST(test_pipeline_errors) {
  /* an error in map: raised at its example, with the examples before it */
  MistStatus st = mist_eval(vm, "<test>",
                            "import data\nfor x in data.from_tensors(arange(5)).map(lambda x: 1 // (x.item() - 3), workers=2):\n"
                            "    print(x)\n",
                            false);
  ck_assert_int_eq(st, MIST_ERROR);
  ck_assert_str_eq(out.data, "-1\n-1\n-1\n");
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "integer division or modulo by zero"));
  /* the VM still works, and so do new pipelines */
  buf_clear(&out);
  run_ok("print([x.item() for x in data.from_tensors(arange(3)).map(lambda x: x + 1, workers=2)])\n");
  ck_assert_str_eq(out.data, "[1, 2, 3]\n");
  /* stream misuse from C-level code paths: reading out of order */
  st = mist_eval(vm, "<test>", "s = data.from_tensors(arange(3))\nprint(len(s), s.batch(0))\n", false);
  ck_assert_int_eq(st, MIST_ERROR);
  ck_assert_ptr_nonnull(strstr(mist_error(vm), "batch: n must be at least 1, not 0"));
}
END_TEST

/* ---- readers on hostile bytes ---- */

static const char *reader_error(int which, const unsigned char *data, size_t len) {
  ObjTensor *t;
  Value v;
  lang_error_clear(vm);
  bool ok = which == 0   ? std_read_idx(vm, "f", data, len, &t)
            : which == 1 ? std_read_npy(vm, "f", data, len, &t)
            : which == 2 ? std_read_safetensors(vm, "f", data, len, &v)
                         : std_read_csv(vm, "f", (const char *)data, len, true, &t);
  if (ok) return NULL;
  return lang_error_render(vm)->data;
}

static void expect_error(int which, const void *data, size_t len, const char *want) {
  /* exactly len bytes of their own, so ASan sees any read past them */
  unsigned char *copy = malloc(len ? len : 1);
  memcpy(copy, data, len);
  const char *e = reader_error(which, copy, len);
  free(copy);
  if (!e) ck_abort_msg("no error, expected '%s'", want);
  if (!strstr(e, want)) ck_abort_msg("error '%s', expected '%s'", e, want);
}

START_TEST(test_idx_hostile) {
  /* dimensions whose product overflows, or that the data cannot back:
   * refused before any allocation */
  unsigned char big[] = {0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1};
  expect_error(0, big, sizeof big, "dimensions too large");
  unsigned char huge[] = {0, 0, 0x0E, 2, 0, 1, 0, 0, 0, 1, 0, 0, 1, 2};
  expect_error(0, huge, sizeof huge, "is truncated: its shape needs 34359738368 bytes");
  unsigned char head[] = {0, 0, 8, 4, 0, 0, 0, 1};
  expect_error(0, head, sizeof head, "is truncated: the header needs 20 bytes");
  unsigned char nodim[] = {0, 0, 8, 0};
  expect_error(0, nodim, sizeof nodim, "has no dimensions");
  unsigned char many[] = {0, 0, 8, 200};
  expect_error(0, many, sizeof many, "has 200 dimensions");
  expect_error(0, "", 0, "shorter than the header");
}
END_TEST

START_TEST(test_npy_hostile) {
  const char *cases[][2] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", "shape too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "is truncated: its shape needs 12 bytes"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "has dtype '<c8'"},
      {"{'descr': '<f4', 'shape': (1,), }", "has a header without 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", "malformed 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,2", "malformed 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "unknown header key 'x'"},
      {"['descr']", "not a dict"},
      {"{'descr': '<f4' 'fortran_order': False}", "malformed header"},
      {"{'descr': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', }", "malformed 'descr'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    unsigned char buf[512];
    size_t h = strlen(cases[i][0]);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)h;
    buf[9] = 0;
    memcpy(buf + 10, cases[i][0], h);
    expect_error(1, buf, 10 + h, cases[i][1]);
  }
  /* a header length past the end of the file */
  unsigned char lie[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0xff, '{'};
  expect_error(1, lie, sizeof lie, "is truncated: the header says 65535 bytes");
  unsigned char v9[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0};
  expect_error(1, v9, sizeof v9, "format version 9.0");
  unsigned char v2[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0, 0};
  expect_error(1, v2, sizeof v2, "the header ends early");
}
END_TEST

static void st_expect(const char *json, size_t datalen, const char *want) {
  size_t h = strlen(json);
  unsigned char *buf = calloc(1, 8 + h + datalen + 1);
  for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)h >> (8 * i));
  memcpy(buf + 8, json, h);
  expect_error(2, buf, 8 + h + datalen, want);
  free(buf);
}

START_TEST(test_safetensors_hostile) {
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, "is truncated: tensor 'w' ends at byte 8");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}", 8, "data offsets [-8, 0] outside");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "data offsets [8, 0] outside");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,8]}}", 8, "bad shape");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,8]}}", 8, "bad shape");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12, "4 bytes after the last tensor");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "leaves a hole");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "lacks a dtype, shape or data_offsets");
  st_expect("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"w\":1}", 8, "bad JSON header");
  st_expect("[1, 2]", 0, "the header is not a JSON object");
  st_expect("{\"__metadata__\":{\"mist.tree\":5}}", 0, "not a string");
  st_expect("{\"__metadata__\":{\"mist.tree\":\"{\\\"dict\\\":[[\\\"a\\\",\\\"T\\\"]]}\"}}", 0, "a leaf 'a' that the file does not hold");
  st_expect("{\"__metadata__\":{\"mist.tree\":\"{\\\"set\\\":[]}\"}}", 0, "unknown kind of container");
  st_expect("{\"__metadata__\":{\"mist.tree\":\"[[[[\"}}", 0, "is not valid JSON");
  st_expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
            "\"__metadata__\":{\"mist.tree\":\"{\\\"dict\\\":[[\\\"a\\\",\\\"I\\\"]]}\"}}",
            4, "a number leaf is not a 0-d tensor of its kind");
  st_expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
            "\"__metadata__\":{\"mist.tree\":\"{\\\"list\\\":[]}\"}}",
            4, "tensor 'a' is not in its tree");
  unsigned char huge[16] = {0, 0, 0, 0, 0, 0, 0, 0x10};
  expect_error(2, huge, sizeof huge, "a header of 1152921504606846976 bytes");
  expect_error(2, "\x05\0\0\0\0\0\0\0{}", 10, "the header is 5 bytes, the file has 2");
}
END_TEST

static void csv_expect(const char *text, const char *want) { expect_error(3, text, strlen(text), want); }

START_TEST(test_csv_hostile) {
  csv_expect("a,b\n", "has no rows of data");
  csv_expect("a\n1,,2\n", "line 2, field 2: '' is not a number");
  csv_expect("a\n1\n2,3\n", "line 3: 2 fields, but line 2 has 1");
  csv_expect("a\n1e999999999999999999999999999999999999999999999999999999999999999\n", "is not a number");
  csv_expect("a\n1x\n", "'1x' is not a number");
  csv_expect("only a header", "has no rows");
}
END_TEST

START_TEST(test_gunzip_hostile) {
  /* a bomb: a megabyte of zeros in a few hundred bytes, inflated with a
   * limit below it */
  size_t n = 1 << 20;
  unsigned char *zeros = calloc(1, n);
  unsigned char gz[4096];
  z_stream z = {0};
  ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = zeros;
  z.avail_in = (uInt)n;
  z.next_out = gz;
  z.avail_out = sizeof gz;
  ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
  size_t glen = sizeof gz - z.avail_out;
  deflateEnd(&z);
  free(zeros);
  unsigned char *o;
  size_t olen;
  bool owned;
  lang_error_clear(vm);
  ck_assert(!std_gunzip(vm, "bomb", gz, glen, 1000, &o, &olen, &owned));
  ck_assert_ptr_nonnull(strstr(lang_error_render(vm)->data, "inflates to more bytes than Mist reads"));
  lang_error_clear(vm);
  ck_assert(std_gunzip(vm, "bomb", gz, glen, n, &o, &olen, &owned));
  ck_assert(owned);
  ck_assert_int_eq(olen, n);
  free(o);
  /* corrupt and cut-short streams */
  gz[glen / 2] ^= 0xff;
  gz[glen / 2 + 1] ^= 0x55;
  lang_error_clear(vm);
  ck_assert(!std_gunzip(vm, "bad", gz, glen, n, &o, &olen, &owned));
  lang_error_clear(vm);
  ck_assert(!std_gunzip(vm, "cut", gz, 12, n, &o, &olen, &owned));
  ck_assert_ptr_nonnull(strstr(lang_error_render(vm)->data, "'cut' is"));
  lang_error_clear(vm);
}
END_TEST

static Suite *stdlib_suite(void) {
  Suite *s = suite_create("stdlib");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_progress_log);
  tcase_add_test(tc, test_progress_tty);
  tcase_add_test(tc, test_progress_kinds);
  tcase_add_test(tc, test_pipeline_threads_end);
  tcase_add_test(tc, test_pipeline_vm_free);
  tcase_add_test(tc, test_pipeline_errors);
  tcase_add_test(tc, test_idx_hostile);
  tcase_add_test(tc, test_npy_hostile);
  tcase_add_test(tc, test_safetensors_hostile);
  tcase_add_test(tc, test_csv_hostile);
  tcase_add_test(tc, test_gunzip_hostile);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  lang_gc_init();
  SRunner *sr = srunner_create(stdlib_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
