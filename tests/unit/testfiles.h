/* testfiles.h: the data files of the unit suites (testfiles.c): a
 * folder of the source tree, a file's text and its lines, a check run
 * over each file of a folder. */
#ifndef MIST_TESTS_TESTFILES_H
#define MIST_TESTS_TESTFILES_H

/* The folder sub (such as "tests/ir") of the source tree: under
 * $MIST_SOURCE_DIR, else under source_dir (the suite's MIST_SOURCE_DIR
 * macro), else relative to a run from tests/unit or the root; NULL
 * when none is a folder.  The string is the caller's. */
char *testfiles_dir(const char *sub, const char *source_dir);

/* The whole text of a file (NUL-terminated), or NULL. */
char *testfiles_read(const char *path);

/* The line of text that starts with prefix, or NULL. */
char *testfiles_find_line(char *text, const char *prefix);
/* s without its trailing newlines, spaces and carriage returns. */
void testfiles_trim_end(char *s);

/* check(path) for each file of dir whose name ends with ext, in no
 * particular order; check returns "" when the file passes, else why,
 * which is printed to stderr with the path.  Returns the number of
 * files checked and sets *failed to the number that failed. */
int testfiles_each(const char *dir, const char *ext, const char *(*check)(const char *path), int *failed);

#endif
