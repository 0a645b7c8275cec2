/* host.c: a host program outside the build, compiled by
 * tests/embed/test_embed.sh with `pkg-config --cflags --libs mist` as
 * LANGUAGE.md section 9 says a host is: two interpreters on two
 * threads, each with its own output, in eager and graph mode (which
 * loads the code generator and calls back into the program), and a
 * failure that is a status and a message. */
#include <mist.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct Out {
  char text[256];
  size_t len;
} Out;

static void collect(void *user, const char *text, size_t len) {
  Out *o = user;
  if (o->len + len < sizeof o->text) {
    memcpy(o->text + o->len, text, len);
    o->len += len;
    o->text[o->len] = 0;
  }
}

typedef struct Job {
  bool graph;
  Out out;
  int status;
} Job;

static void *run(void *arg) {
  Job *job = arg;
  MistVM *vm = mist_new(0, NULL);
  mist_set_write(vm, collect, &job->out);
  mist_set_graph_mode(vm, job->graph);
  job->status = mist_eval(vm, "<host>",
                          "def f(x):\n    return x * x + 1.0\n"
                          "print(f(3.0), grad(f)(3.0))\n", false);
  if (job->status != MIST_OK) fprintf(stderr, "%s", mist_error(vm));
  mist_free(vm);
  return NULL;
}

int main(void) {
  Job jobs[2] = {{.graph = false}, {.graph = true}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run, &jobs[i]);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) printf("%s: %d %s", jobs[i].graph ? "graph" : "eager", jobs[i].status, jobs[i].out.text);
  MistVM *vm = mist_new(0, NULL);
  MistStatus s = mist_eval(vm, "<bad>", "1 / 0", false);
  printf("status %d\n%s", s, mist_error(vm));
  mist_free(vm);
  return 0;
}
