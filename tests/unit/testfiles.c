/* testfiles.c: the data files of the unit suites (testfiles.h). */
#include "testfiles.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lang/gc.h"
#include "lang/strbuf.h"
#include "lang/value.h"

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *testfiles_dir(const char *sub, const char *source_dir) {
  const char *roots[] = {getenv("MIST_SOURCE_DIR"), source_dir, "../..", "."};
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
    if (!roots[i] || !*roots[i]) continue;
    char *path = lang_str_fmt("%s/%s", roots[i], sub)->data;
    if (is_dir(path)) return path;
  }
  return NULL;
}

char *testfiles_read(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  StrBuf sb;
  sb_init(&sb);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) sb_add(&sb, chunk, n);
  fclose(fp);
  sb_addc(&sb, 0);
  sb.len--;
  return sb.data;
}

int testfiles_each(const char *dir, const char *ext, const char *(*check)(const char *path), int *failed) {
  int n = 0;
  *failed = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t el = strlen(ext);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t k = strlen(de->d_name);
    if (k <= el || strcmp(de->d_name + k - el, ext) != 0) continue;
    const char *path = lang_str_fmt("%s/%s", dir, de->d_name)->data;
    const char *why = check(path);
    n++;
    if (*why) {
      (*failed)++;
      fprintf(stderr, "FAIL %s: %s\n", path, why);
    }
  }
  closedir(d);
  return n;
}

char *testfiles_find_line(char *text, const char *prefix) {
  size_t n = strlen(prefix);
  for (char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (strncmp(p, prefix, n) == 0) return p;
  return NULL;
}

void testfiles_trim_end(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = '\0';
}
