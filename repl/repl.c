/* repl.c: the interactive loop of `mist`, the only user of readline.
 *
 * The loop reads an entry, which may span several lines, and hands it
 * to mist_eval() with echo on, so the API prints the value of an
 * expression.  An entry is complete, as in Python's REPL, when
 *   - no line of it opens a block (ends in ':' outside brackets) and
 *     mist_eval() does not answer MIST_INCOMPLETE (an open bracket, a
 *     decorator waiting for its def): each new line re-submits the
 *     whole entry, which is safe because incomplete source never runs;
 *   - or, once a line has opened a block, when an empty line is entered.
 * Two empty lines in a row end any entry, so a user can always get out.
 * Lines starting with ':' at the primary prompt are commands (:help,
 * :ir, :load, :quit).  Ctrl-D at the primary prompt leaves, as exit()
 * and quit() do; at a continuation prompt it ends the entry, which then
 * runs or, incomplete, is reported, and the REPL stays (Python's way).
 *
 * Tab completes from mist_complete(): keywords, names and builtins, and
 * after a '.' the module's names or the value's methods; inside `:load`
 * it completes file names.  On a line with only spaces before the
 * cursor it indents by four spaces, since Mist refuses tabs there.
 *
 * Lines are read with readline's callback interface inside our own
 * pselect() loop rather than with readline(), because that gives a
 * clean answer to Ctrl-C: SIGINT and SIGWINCH are blocked except while
 * pselect() waits, so a signal can only arrive there, where the loop
 * sees the flag, tells readline to drop the line and returns (SIGCONT,
 * after Ctrl-Z, likewise: the loop sets the terminal up again).  readline
 * installs no signal handlers of its own (rl_catch_signals = 0).  While
 * an entry runs, the terminal is back in its normal mode and Ctrl-C goes
 * to host.c's handler, which calls mist_interrupt(); the evaluation then
 * fails with a KeyboardInterrupt error, printed like any other.
 *
 * History: each line entered is appended to ~/.mist_history as soon as
 * it is read (so a crash loses nothing), and the file is read at start
 * and kept to its last HISTORY_MAX lines.  Failures are ignored.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "repl.h"

enum { HISTORY_MAX = 1000 };
enum { READ_LINE, READ_EOF, READ_INTERRUPT };

static const char prompt1[] = ">>> ";
static const char prompt2[] = "... ";

static char *history_path;                /* NULL: no persistent history */
static volatile sig_atomic_t resized;     /* SIGWINCH seen */
static volatile sig_atomic_t continued;   /* SIGCONT seen: back from Ctrl-Z */

/* What readline's line handler hands back to read_line(). */
static char *line_read;
static bool line_done;

typedef struct {
  char *data;
  size_t len, cap;
} Text;

static bool text_add(Text *t, const char *s, size_t n) {
  if (t->cap - t->len < n + 1) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap - t->len < n + 1)
      cap *= 2;
    char *data = realloc(t->data, cap);
    if (!data)
      return false;
    t->data = data;
    t->cap = cap;
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
  return true;
}

/* ---- reading a line --------------------------------------------------- */

static void on_signal(int sig) {
  if (sig == SIGWINCH)
    resized = 1;
  else
    continued = 1;
}

static void on_line(char *line) {
  line_read = line;
  line_done = true;
  rl_callback_handler_remove();   /* also puts the terminal back */
}

/* Throw away the line being edited after Ctrl-C, readline-side, and
 * leave the cursor on a fresh line (the order is CPython's). */
static void drop_line(void) {
  rl_point = rl_end;
  rl_redisplay();
  rl_free_line_state();
  rl_callback_sigcleanup();
  rl_cleanup_after_signal();
  rl_callback_handler_remove();
  using_history();
  fputs("^C\n", rl_outstream);
  fflush(rl_outstream);
}

/* Read one line after showing prompt.  READ_LINE puts a malloc'd line
 * in *out; READ_EOF means Ctrl-D on an empty line (or a read error);
 * READ_INTERRUPT means Ctrl-C. */
static int read_line(const char *prompt, char **out) {
  sigset_t block, waitmask;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGWINCH);
  sigaddset(&block, SIGCONT);
  sigprocmask(SIG_BLOCK, &block, &waitmask);
  sigdelset(&waitmask, SIGINT);
  sigdelset(&waitmask, SIGWINCH);
  sigdelset(&waitmask, SIGCONT);

  if (resized) {
    resized = 0;
    rl_reset_screen_size();
  }
  continued = 0;
  repl_clear_sigint();
  line_read = NULL;
  line_done = false;
  rl_callback_handler_install(prompt, on_line);

  int result = READ_EOF;
  int fd = fileno(rl_instream);
  for (;;) {
    if (repl_sigint_count() > 0) {
      drop_line();
      result = READ_INTERRUPT;
      break;
    }
    if (continued) {
      /* Stopped by Ctrl-Z and resumed: the shell has had the terminal
       * meanwhile, so set it up for line editing again and redraw. */
      continued = 0;
      rl_deprep_terminal();
      rl_prep_terminal(1);
      rl_forced_update_display();
    }
    if (resized) {
      resized = 0;
      rl_resize_terminal();
    }
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(fd, &fds);
    if (pselect(fd + 1, &fds, NULL, NULL, NULL, &waitmask) < 0) {
      if (errno == EINTR)
        continue;
      rl_callback_handler_remove();
      break;
    }
    rl_callback_read_char();
    if (line_done) {
      result = line_read ? READ_LINE : READ_EOF;
      break;
    }
  }
  repl_clear_sigint();
  sigprocmask(SIG_UNBLOCK, &block, NULL);
  *out = line_read;
  return result;
}

/* ---- history ---------------------------------------------------------- */

static void history_open(void) {
  const char *home = getenv("HOME");
  using_history();
  stifle_history(HISTORY_MAX);
  if (!home || !*home)
    return;
  size_t n = strlen(home) + sizeof "/.mist_history";
  history_path = malloc(n);
  if (!history_path)
    return;
  snprintf(history_path, n, "%s/.mist_history", home);
  read_history(history_path);
  history_truncate_file(history_path, HISTORY_MAX);
  /* append_history() needs the file to exist. */
  int fd = open(history_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0)
    close(fd);
}

static void remember(const char *line) {
  HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
  if (last && strcmp(last->line, line) == 0)
    return;
  add_history(line);
  using_history();
  if (history_path)
    append_history(1, history_path);
}

/* ---- entries ---------------------------------------------------------- */

static bool is_blank(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r')
    s++;
  return *s == '\0';
}

/* Scan one line of Mist source, carrying the bracket depth across lines
 * in *depth; returns whether the line opens a block: its last token is
 * ':' outside brackets.  Strings and comments are skipped; strings do
 * not span lines in Mist. */
static bool opens_block(const char *s, int *depth) {
  char last = 0, quote = 0;
  for (; *s; s++) {
    char c = *s;
    if (quote) {
      if (c == '\\' && s[1])
        s++;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '#')
      break;
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '(' || c == '[' || c == '{')
      (*depth)++;
    else if ((c == ')' || c == ']' || c == '}') && *depth > 0)
      (*depth)--;
    if (!isspace((unsigned char)c))
      last = c;
  }
  return last == ':' && *depth == 0;
}

/* Run Mist code with Ctrl-C armed; prints the error, if any, unless the
 * source was incomplete and incomplete_ok. */
/* exit() or quit() ran: the status it asked for, else -1 */
static int exit_requested = -1;

static MistStatus run(MistVM *vm, const char *name, const char *source, bool echo,
                      bool incomplete_ok) {
  repl_begin();
  MistStatus status = mist_eval(vm, name, source, echo);
  bool interrupted = repl_end();
  fflush(stdout);
  if (status == MIST_ERROR && mist_exit_code(vm) >= 0) {
    const char *msg = mist_error(vm);
    if (*msg)
      fprintf(stderr, "%s\n", msg);
    exit_requested = mist_exit_code(vm);
    return status;
  }
  if (interrupted && status == MIST_ERROR)
    fputc('\n', stderr);   /* past the "^C" the terminal echoed */
  if (status == MIST_ERROR || (status == MIST_INCOMPLETE && !incomplete_ok))
    repl_report(vm, status, name);
  return status;
}

/* ---- commands --------------------------------------------------------- */

static void print_help(void) {
  printf("Mist is a small differentiable language that reads like Python: def,\n"
         "lambda, if/while/for, immutable values, tensors, and grad(f) for exact\n"
         "derivatives.\n"
         "\n"
         "Type a statement or an expression; an expression's value is shown.\n"
         "A line ending in ':' opens a block; an empty line ends it.\n"
         "\n"
         "Commands:\n"
         "  :help        show this help\n"
         "  :ir NAME     print the IR of the function NAME defined in this session\n"
         "  :llvm NAME ARGTYPES...\n"
         "               print the LLVM IR graph mode makes for NAME called with\n"
         "               arguments of those types (int, float, bool, f32[2,3]...)\n"
         "  :load FILE   run FILE in this session; its definitions stay defined\n"
         "  :quit        leave (Ctrl-D does too)\n"
         "\n"
         "Ctrl-C stops a running computation, or discards the line being typed.\n");
}

static void load(MistVM *vm, const char *path) {
  size_t len;
  char *source = repl_read_file(path, &len);
  if (!source) {
    fprintf(stderr, "mist: can't open file '%s': %s\n", path, strerror(errno));
    return;
  }
  if (memchr(source, '\0', len))
    fprintf(stderr, "%s: error: source contains a null byte\n", path);
  else
    run(vm, path, source, false, false);
  free(source);
}

/* Run the command line ":NAME ARG"; returns false for :quit. */
static bool command(MistVM *vm, char *line) {
  char *name = line + strspn(line, " \t") + 1;
  char *end = name + strcspn(name, " \t");
  char *arg = end + strspn(end, " \t");
  size_t n = strlen(arg);
  while (n > 0 && isspace((unsigned char)arg[n - 1]))
    arg[--n] = '\0';
  *end = '\0';

  fflush(stdout);
  if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0 || strcmp(name, "exit") == 0)
    return false;
  if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0 || strcmp(name, "?") == 0) {
    print_help();
  } else if (strcmp(name, "ir") == 0) {
    if (!*arg || arg[strcspn(arg, " \t")]) {
      fprintf(stderr, "usage: :ir NAME (a function defined in this session)\n");
    } else {
      repl_begin();
      MistStatus status = mist_print_ir(vm, arg, MIST_IR_LOWERED);
      repl_end();
      fflush(stdout);
      if (status != MIST_OK)
        repl_report(vm, status, "<stdin>");
    }
  } else if (strcmp(name, "llvm") == 0) {
    /* NAME, then the argument types, separated by blanks */
    char *words[64];
    int nw = 0;
    for (char *w = strtok(arg, " \t"); w && nw < 64; w = strtok(NULL, " \t")) words[nw++] = w;
    if (nw == 0) {
      fprintf(stderr, "usage: :llvm NAME ARGTYPES... (a function defined in this session)\n");
    } else {
      repl_begin();
      MistStatus status = mist_print_llvm(vm, words[0], nw - 1, (const char *const *)words + 1);
      repl_end();
      fflush(stdout);
      if (status != MIST_OK)
        repl_report(vm, status, "<stdin>");
    }
  } else if (strcmp(name, "load") == 0) {
    if (!*arg)
      fprintf(stderr, "usage: :load FILE\n");
    else
      load(vm, arg);
  } else {
    fprintf(stderr, "unknown command ':%s' (:help lists the commands)\n", name);
  }
  fflush(stdout);
  return true;
}

/* ---- the loop --------------------------------------------------------- */

/* ---- completion -------------------------------------------------------- */

static MistVM *completing_vm;
static char **matches;        /* mist_complete's answer for the word being completed */
static size_t next_match;

static char *next_completion(const char *text, int state) {
  if (state == 0) {
    if (matches) {
      for (size_t i = next_match; matches[i]; i++)
        free(matches[i]);
      free(matches);
    }
    matches = mist_complete(completing_vm, text);
    next_match = 0;
  }
  if (!matches || !matches[next_match]) {
    free(matches);
    matches = NULL;
    return NULL;
  }
  return matches[next_match++];   /* readline frees it */
}

static char **complete(const char *text, int start, int end) {
  (void)end;
  rl_attempted_completion_over = 1;   /* never readline's own file names, unasked */
  const char *line = rl_line_buffer;
  size_t lead = strspn(line, " \t");
  if (strncmp(line + lead, ":load", 5) == 0 && isspace((unsigned char)line[lead + 5]) && start > (int)lead + 5)
    return rl_completion_matches(text, rl_filename_completion_function);
  if (start == rl_point && (int)strspn(line, " ") >= rl_point) {
    rl_insert_text("    ");   /* Tab on an empty line indents */
    return NULL;
  }
  rl_completion_append_character = '\0';
  return rl_completion_matches(text, next_completion);
}

static void setup_readline(void) {
  rl_readline_name = "mist";
  rl_instream = stdin;
  rl_outstream = stdout;
  rl_catch_signals = 0;
  rl_catch_sigwinch = 0;
  rl_initialize();   /* reads inputrc; our settings below come after it */
  rl_attempted_completion_function = complete;
  /* a dotted name (nn.dense) is one word to complete */
  rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{([,+-*/%~^!:";
  /* A bracketed paste would hand us several lines as one. */
  rl_variable_bind("enable-bracketed-paste", "off");

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGWINCH, &sa, NULL);
  sigaction(SIGCONT, &sa, NULL);
}

int repl_run(MistVM *vm) {
  completing_vm = vm;
  exit_requested = -1;
  setup_readline();
  history_open();
  printf("Mist %s \xe2\x80\x94 :help for help, Ctrl-D to leave\n", mist_version());
  fflush(stdout);

  Text entry = {0};
  bool block = false;    /* a line of the entry opened a block */
  bool was_blank = false;
  int depth = 0;         /* brackets open at the end of the entry */
  for (;;) {
    char *line;
    int got = read_line(entry.len ? prompt2 : prompt1, &line);
    if (got == READ_EOF && entry.len > 0) {
      /* Ctrl-D inside an entry ends it: run it, or report it incomplete */
      fputc('\n', stdout);
      run(vm, "<stdin>", entry.data, true, false);
      entry.len = 0;
      block = was_blank = false;
      depth = 0;
      if (exit_requested >= 0)
        break;
      continue;
    }
    if (got == READ_EOF) {
      fputc('\n', stdout);
      break;
    }
    if (got == READ_INTERRUPT) {
      entry.len = 0;
      block = was_blank = false;
      depth = 0;
      continue;
    }
    bool blank = is_blank(line);
    if (entry.len == 0 && blank) {
      free(line);
      continue;
    }
    if (entry.len == 0 && line[strspn(line, " \t")] == ':') {
      remember(line);
      bool more = command(vm, line);
      free(line);
      if (!more || exit_requested >= 0)
        break;
      continue;
    }
    if (!blank)
      remember(line);
    if (opens_block(line, &depth))
      block = true;
    bool stored = text_add(&entry, line, strlen(line)) && text_add(&entry, "\n", 1);
    free(line);
    if (!stored) {
      fprintf(stderr, "mist: out of memory; entry discarded\n");
      entry.len = 0;
      block = was_blank = false;
      depth = 0;
      continue;
    }

    bool give_up = blank && was_blank;
    was_blank = blank;
    if (block && !blank)
      continue;
    if (run(vm, "<stdin>", entry.data, true, !give_up) == MIST_INCOMPLETE && !give_up)
      continue;
    if (exit_requested >= 0)
      break;
    entry.len = 0;
    block = was_blank = false;
    depth = 0;
  }
  free(entry.data);
  if (history_path)
    history_truncate_file(history_path, HISTORY_MAX);
  free(history_path);
  history_path = NULL;
  return exit_requested >= 0 ? exit_requested : 0;
}
