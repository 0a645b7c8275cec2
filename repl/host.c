/* host.c: what every mode of the `mist` command shares.
 *
 * The command is a host of libmist like any embedder: it creates an
 * interpreter, sends its output to stdout, prints the API's rendered
 * errors to stderr, and turns Ctrl-C into mist_interrupt().  Program
 * output goes through stdio and is flushed before any error is written,
 * so that stdout and stderr interleave in the order things happened.
 *
 * Ctrl-C: one SIGINT handler for the whole process.  It only touches
 * sig_atomic_t flags and calls mist_interrupt(), which the API promises
 * is safe in a signal handler.  The handler is installed with SA_RESTART
 * so that stdio calls are not cut short by EINTR; the REPL waits for
 * keys in pselect(), which Linux never restarts, so Ctrl-C at the prompt
 * still wakes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "repl.h"

static MistVM *volatile interrupt_vm;     /* whom Ctrl-C interrupts */
static volatile sig_atomic_t running;     /* an evaluation is in progress */
static volatile sig_atomic_t sigints;     /* Ctrl-C presses since the last reset */

static void write_stdout(void *user, const char *text, size_t len) {
  (void)user;
  fwrite(text, 1, len, stdout);
}

MistVM *repl_vm_new(int argc, const char *const *argv) {
  MistVM *vm = mist_new(argc, argv);
  if (vm)
    mist_set_write(vm, write_stdout, NULL);
  return vm;
}

void repl_report(MistVM *vm, MistStatus status, const char *name) {
  const char *msg = mist_error(vm);
  fflush(stdout);
  if (msg && *msg) {
    fputs(msg, stderr);
    if (msg[strlen(msg) - 1] != '\n')
      fputc('\n', stderr);
  } else if (status == MIST_INCOMPLETE) {
    fprintf(stderr, "%s: error: unexpected end of input\n", name);
  } else {
    fprintf(stderr, "%s: error: failed (no message)\n", name);
  }
  fflush(stderr);
}

char *repl_slurp(FILE *f, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf)
    return NULL;
  for (;;) {
    if (cap - n < 2) {
      char *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        errno = ENOMEM;
        return NULL;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        int err = errno ? errno : EIO;
        free(buf);
        errno = err;
        return NULL;
      }
      break;
    }
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

char *repl_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    errno = EISDIR;
    return NULL;
  }
  errno = 0;
  char *text = repl_slurp(f, len);
  int err = errno;
  fclose(f);
  errno = err;
  return text;
}

static void on_sigint(int sig) {
  (void)sig;
  int saved = errno;
  sigints = sigints + 1;   /* SIGINT is blocked inside its own handler */
  if (running) {
    if (sigints >= 3) {
      static const char msg[] = "\nmist: interrupted three times, giving up\n";
      ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
      (void)ignored;
      signal(SIGINT, SIG_DFL);
      raise(SIGINT);   /* delivered when this handler returns */
    } else if (interrupt_vm) {
      mist_interrupt(interrupt_vm);
    }
  }
  errno = saved;
}

void repl_catch_sigint(MistVM *vm) {
  interrupt_vm = vm;
  struct sigaction sa;
  /* A parent that ignores SIGINT (nohup, a background job) keeps that. */
  if (sigaction(SIGINT, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
    return;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
}

void repl_begin(void) {
  sigints = 0;
  running = 1;
}

bool repl_end(void) {
  running = 0;
  return sigints > 0;
}

int repl_sigint_count(void) { return sigints; }

void repl_clear_sigint(void) { sigints = 0; }

void repl_die_of_sigint(void) {
  fflush(stdout);
  fflush(stderr);
  signal(SIGINT, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(SIGINT);
  _exit(130);   /* only if SIGINT is ignored by our parent's choice */
}
