/* main.c: the `mist` command line.
 *
 * This file owns the command's interface: it reads the arguments, picks
 * one mode (run a script, run -e SOURCE, run the program on standard
 * input, print a function's IR or source, or start the REPL), and turns the
 * outcome into the exit status of docs/reference.md section 1: 0 on success,
 * 1 on an error in the Mist program, 2 on bad usage.  It is a plain host
 * of the public API (include/mist.h), which does all the work; the
 * shared host plumbing is in host.c and the interactive loop in repl.c.
 * Arguments are read by hand, Python-style: options come before the
 * script, and everything after the script (or after -e SOURCE) is the
 * program's args().  A script that cannot be opened is a usage error
 * (exit 2, as python3 does), checked here before the API is called.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "repl.h"

static const char usage_line[] =
    "usage: mist [--mode=eager|graph] [--dump=STAGES] [-e SOURCE | FILE.ms | -] [ARGS...]\n"
    "       mist ir [--grad] [--opt] [--source] FILE.ms NAME\n"
    "       mist ir --types [--grad] FILE.ms NAME ARGTYPES...\n"
    "       mist emit-llvm FILE.ms NAME ARGTYPES...\n"
    "       mist emit-ptx FILE.ms NAME ARGTYPES...   (not built yet)\n"
    "       mist --version | --help\n";

static void print_help(void) {
  printf("%s", usage_line);
  printf("\n"
         "With no arguments, mist starts the interactive REPL when standard input\n"
         "is a terminal, and otherwise runs the program read from standard input.\n"
         "\n"
         "  FILE.ms [ARGS...]    run the script FILE.ms; args() returns ARGS\n"
         "  -e SOURCE [ARGS...]  run the program SOURCE\n"
         "  - [ARGS...]          run the program read from standard input\n"
         "  ir FILE.ms NAME      print the IR of the function NAME in FILE.ms\n"
         "  ir --source FILE.ms NAME\n"
         "                       print it back as Mist source instead\n"
         "  ir --grad FILE.ms NAME\n"
         "                       print the reverse-mode derivative program of NAME\n"
         "  ir --opt FILE.ms NAME\n"
         "                       print the IR of NAME after the optimiser\n"
         "  ir --types FILE.ms NAME ARGTYPES...\n"
         "                       print NAME specialised to argument types (int, float,\n"
         "                       f32[64,784]...) with a type on every node\n"
         "  emit-llvm FILE.ms NAME ARGTYPES...\n"
         "                       print the optimised LLVM IR graph mode makes for NAME\n"
         "                       specialised to ARGTYPES\n"
         "  emit-ptx FILE.ms NAME ARGTYPES...\n"
         "                       the PTX of the GPU backend, which is not built yet:\n"
         "                       an error says so (exit status 1)\n"
         "  --mode=graph         compile every function call for the types of its\n"
         "                       arguments (docs/jit.md); --mode=eager (the default)\n"
         "                       interprets\n"
         "  --dump=STAGES        before running, print the stages of the pipeline\n"
         "                       named (ast, ir, opt, types, comma-separated) of the\n"
         "                       program and of each module it imports\n"
         "  -V, --version        print the version and exit\n"
         "  -h, --help           print this help and exit\n"
         "\n"
         "Exit status: 0 on success, 1 on an error in the program, 2 on bad usage.\n");
}

/* Report bad usage; returns the exit status for it. */
__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fputs("mist: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fputs(usage_line, stderr);
  fputs("Try 'mist --help' for more information.\n", stderr);
  return 2;
}

/* Whether the file named on the command line can be read; if not, say
 * why in Python's words. */
static bool check_file(const char *path) {
  FILE *f = fopen(path, "r");
  struct stat st;
  if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    f = NULL;
    errno = EISDIR;
  }
  if (!f) {
    fflush(stdout);
    fprintf(stderr, "mist: can't open file '%s': %s\n", path, strerror(errno));
    return false;
  }
  fclose(f);
  return true;
}

static int dump_stages;   /* --dump= */
static bool graph_mode;   /* --mode=graph */

static MistVM *vm_or_die(int argc, char **argv) {
  MistVM *vm = repl_vm_new(argc, (const char *const *)argv);
  if (!vm) {
    fprintf(stderr, "mist: out of memory\n");
    exit(1);
  }
  repl_catch_sigint(vm);
  mist_set_dump(vm, dump_stages);
  mist_set_graph_mode(vm, graph_mode);
  return vm;
}

/* The end of every non-interactive mode: report an error, flush, free. */
static int finish(MistVM *vm, MistStatus status, const char *name, bool interrupted) {
  int code = 0;
  int exit_code = mist_exit_code(vm);
  if (exit_code >= 0) {
    /* exit() or quit(): its status, after its message if it gave one */
    const char *msg = mist_error(vm);
    fflush(stdout);
    if (*msg) fprintf(stderr, "%s\n", msg);
    code = exit_code;
  } else if (status != MIST_OK) {
    repl_report(vm, status, name);
    code = 1;
    if (interrupted)
      repl_die_of_sigint();
  }
  mist_free(vm);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "mist: error writing standard output: %s\n", strerror(errno));
    code = 1;
  }
  return code;
}

/* Run source text as the main program named name. */
static int run_source(const char *name, const char *source, size_t len, int argc,
                      char **argv) {
  MistVM *vm = vm_or_die(argc, argv);
  if (memchr(source, '\0', len)) {
    fflush(stdout);
    fprintf(stderr, "%s: error: source contains a null byte\n", name);
    mist_free(vm);
    return 1;
  }
  repl_begin();
  MistStatus status = mist_eval(vm, name, source, false);
  return finish(vm, status, name, repl_end());
}

static int run_stdin(int argc, char **argv) {
  size_t len;
  char *source = repl_slurp(stdin, &len);
  if (!source) {
    fprintf(stderr, "mist: can't read standard input: %s\n", strerror(errno));
    return 1;
  }
  int code = run_source("<stdin>", source, len, argc, argv);
  free(source);
  return code;
}

static int run_script(const char *path, int argc, char **argv) {
  if (!check_file(path))
    return 2;
  MistVM *vm = vm_or_die(argc, argv);
  repl_begin();
  MistStatus status = mist_run_file(vm, path);
  return finish(vm, status, path, repl_end());
}

/* mist ir [--grad] [--opt] [--source] FILE.ms NAME
 * mist ir --types [--grad] FILE.ms NAME ARGTYPES...
 * The options may come anywhere (no type starts with "-"). */
static int run_ir(int argc, char **argv) {
  const char *operands[argc + 1];   /* FILE.ms, NAME, then the argument types */
  int n = 0, flags = MIST_IR_LOWERED;
  bool types = false;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--types") == 0)
      types = true;
    else if (strcmp(argv[i], "--source") == 0)
      flags |= MIST_IR_SOURCE;
    else if (strcmp(argv[i], "--grad") == 0)
      flags |= MIST_IR_GRAD;
    else if (strcmp(argv[i], "--opt") == 0)
      flags |= MIST_IR_OPT;
    else if (argv[i][0] == '-' && argv[i][1] != '\0')
      return usage_error("ir: unknown option %s", argv[i]);
    else
      operands[n++] = argv[i];
  }
  if (n < 2)
    return usage_error("ir: expected FILE.ms NAME");
  if (n > 2 && !types)
    return usage_error("ir: unexpected argument '%s' (argument types go with --types)", operands[2]);
  if (types && (flags & MIST_IR_SOURCE))
    return usage_error("ir: --types cannot be combined with --source");
  if (!check_file(operands[0]))
    return 2;
  MistVM *vm = vm_or_die(0, NULL);
  for (int k = 2; k < n; k++) {
    const char *why = mist_argtype_error(vm, operands[k]);
    if (why) {
      int code = usage_error("ir: %s", why);
      mist_free(vm);
      return code;
    }
  }
  repl_begin();
  MistStatus status = types ? mist_print_file_ir_types(vm, operands[0], operands[1], flags, n - 2, operands + 2)
                            : mist_print_file_ir(vm, operands[0], operands[1], flags);
  return finish(vm, status, operands[0], repl_end());
}

/* mist emit-llvm FILE.ms NAME ARGTYPES..., and emit-ptx, whose backend
 * is not built: its command line is checked as emit-llvm's, then it
 * fails saying so rather than being taken for a script named emit-ptx. */
static int run_emit(const char *command, int argc, char **argv) {
  if (argc < 2)
    return usage_error("%s: expected FILE.ms NAME ARGTYPES...", command);
  for (int i = 0; i < 2; i++)
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      return usage_error("%s: unknown option %s", command, argv[i]);
  if (!check_file(argv[0]))
    return 2;
  MistVM *vm = vm_or_die(0, NULL);
  for (int k = 2; k < argc; k++) {
    const char *why = mist_argtype_error(vm, argv[k]);
    if (why) {
      int code = usage_error("%s: %s", command, why);
      mist_free(vm);
      return code;
    }
  }
  if (strcmp(command, "emit-ptx") == 0) {
    fprintf(stderr, "mist: emit-ptx: the GPU backend is not built yet: graph mode compiles for the CPU only (mist emit-llvm)\n");
    mist_free(vm);
    return 1;
  }
  repl_begin();
  MistStatus status = mist_print_file_llvm(vm, argv[0], argv[1], argc - 2, (const char *const *)argv + 2);
  return finish(vm, status, argv[0], repl_end());
}

static int run_repl(void) {
  MistVM *vm = vm_or_die(0, NULL);
  int code = repl_run(vm);
  mist_free(vm);
  fflush(stdout);
  return code;
}

int main(int argc, char **argv) {
  /* --mode=MODE and --dump=STAGES, before what to run */
  for (;;) {
    if (argc >= 2 && strncmp(argv[1], "--mode", 6) == 0 && (argv[1][6] == '=' || !argv[1][6])) {
      const char *mode = argv[1][6] ? argv[1] + 7 : "";
      if (strcmp(mode, "graph") != 0 && strcmp(mode, "eager") != 0)
        return usage_error("option --mode needs 'eager' or 'graph': --mode=graph");
      graph_mode = mode[0] == 'g';
      argv[1] = argv[0];
      argv++, argc--;
      continue;
    }
    if (!(argc >= 2 && strncmp(argv[1], "--dump", 6) == 0 && (argv[1][6] == '=' || !argv[1][6]))) break;
    if (!argv[1][6] || !argv[1][7])
      return usage_error("option --dump needs its stages: --dump=ast,ir,opt,types");
    const char *bad;
    int stages = mist_dump_stages(argv[1] + 7, &bad);
    if (stages < 0)
      return usage_error("--dump: unknown stage '%.*s' (the stages are ast, ir, opt and types)",
                         (int)strcspn(bad, ","), bad);
    dump_stages |= stages;
    argv[1] = argv[0];
    argv++, argc--;
  }
  if (argc < 2)
    return isatty(STDIN_FILENO) ? run_repl() : run_stdin(0, NULL);

  const char *arg = argv[1];
  if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
    printf("mist %s\n", mist_version());
    return 0;
  }
  if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
    print_help();
    return 0;
  }
  if (strcmp(arg, "-e") == 0) {
    if (argc < 3)
      return usage_error("option %s needs an argument (the source to run)", arg);
    return run_source("<string>", argv[2], strlen(argv[2]), argc - 3, argv + 3);
  }
  if (strncmp(arg, "-e", 2) == 0)   /* -eSOURCE, as python3 -cSOURCE */
    return run_source("<string>", arg + 2, strlen(arg + 2), argc - 2, argv + 2);
  if (strcmp(arg, "-") == 0)
    return run_stdin(argc - 2, argv + 2);
  if (strcmp(arg, "--") == 0) {
    if (argc < 3)
      return usage_error("expected FILE.ms after %s", arg);
    return run_script(argv[2], argc - 3, argv + 3);
  }
  if (strcmp(arg, "ir") == 0)
    return run_ir(argc - 2, argv + 2);
  if (strcmp(arg, "emit-llvm") == 0 || strcmp(arg, "emit-ptx") == 0)
    return run_emit(arg, argc - 2, argv + 2);
  if (arg[0] == '-')
    return usage_error("unknown option %s", arg);
  return run_script(arg, argc - 2, argv + 2);
}
