/* replay.h: the main() of a fuzz target built to replay its corpus
 * (MIST_FUZZ_REPLAY, as ctest does): every file of the folder given is
 * run once through LLVMFuzzerTestOneInput; a crash fails the test.
 * Included at the end of a target. */
#ifdef MIST_FUZZ_REPLAY
/* Run every file of the folder given once; a crash fails the test. */
int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  DIR *d = opendir(argv[1]);
  if (!d) {
    perror(argv[1]);
    return 1;
  }
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(sz > 0 ? (size_t)sz : 1);
    size_t got = buf ? fread(buf, 1, (size_t)sz, f) : 0;
    fclose(f);
    if (buf) LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    n++;
  }
  closedir(d);
  printf("%d inputs ran\n", n);
  return n > 0 ? 0 : 1;
}
#endif
