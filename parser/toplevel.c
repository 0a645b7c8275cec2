/* toplevel.c: a module's text cut into its top-level statements without
 * parsing it, and the name each `def NAME` or `NAME = ...` binds, for
 * the modules whose definitions are loaded one at a time, when first
 * asked for (api/mist.c: autodiff's rules, stdlib/ad_rules.ms).
 *
 * A top-level statement starts on a line whose first character is in
 * column 1 and is neither blank nor a comment, outside brackets, strings
 * and a line continued by a backslash; `elif`, `else`, `except` and
 * `finally` continue the statement before them, and a decorator's line
 * the definition after it.  The cut only decides where each piece
 * starts: every piece is then parsed by the parser proper (parse.c's
 * parse_module_part), so text this scan misreads is still a syntax
 * error at its own line, never code that runs differently. */
#include <string.h>

#include "lang/gc.h"
#include "parser/toplevel.h"

static bool is_name_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

/* Whether the line at s (end e) starts with the keyword kw. */
static bool starts_with_word(const char *s, const char *e, const char *kw) {
  size_t n = strlen(kw);
  return (size_t)(e - s) >= n && memcmp(s, kw, n) == 0 && (s + n == e || !is_name_char(s[n]));
}

static const char *skip_blanks(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  return p;
}

/* The name at p (advanced past it), or NULL. */
static ObjStr *name_at(MistVM *vm, const char **p, const char *e) {
  const char *s = *p;
  if (s >= e || !is_name_start(*s)) return NULL;
  while (*p < e && is_name_char(**p)) (*p)++;
  return lang_intern(vm, s, (size_t)(*p - s));
}

/* What `import NAME` or `import NAME as ALIAS` binds (p after `import`),
 * when it is the whole line; else NULL. */
static ObjStr *imported_name(MistVM *vm, const char *p, const char *e) {
  p = skip_blanks(p, e);
  ObjStr *name = name_at(vm, &p, e);
  p = skip_blanks(p, e);
  if (name && starts_with_word(p, e, "as")) {
    p = skip_blanks(p + 2, e);
    name = name_at(vm, &p, e);
    p = skip_blanks(p, e);
  }
  return p == e || *p == '\n' || *p == '\r' || *p == '#' ? name : NULL;
}

/* The name a statement starting at s binds (`def NAME(`, `NAME =` but
 * not `==`, `import NAME`), or NULL. */
static ObjStr *bound_name(MistVM *vm, const char *s, const char *e) {
  const char *p = s;
  if (starts_with_word(p, e, "import")) return imported_name(vm, p + 6, e);
  if (starts_with_word(p, e, "def")) {
    p += 3;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
  }
  const char *name = p;
  if (p >= e || !is_name_start(*p)) return NULL;
  while (p < e && is_name_char(*p)) p++;
  size_t n = (size_t)(p - name);
  if (name != s) return *p == '(' ? lang_intern(vm, name, n) : NULL;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  if (p + 1 < e && p[0] == '=' && p[1] != '=') return lang_intern(vm, name, n);
  return NULL;
}

int parse_top_statements(MistVM *vm, const char *src, size_t len, TopStmt **out) {
  int n = 0, cap = 0;
  TopStmt *items = NULL;
  int depth = 0, line = 1;
  bool continued = false, after_decorator = false;
  size_t i = 0;
  while (i < len) {
    /* at the start of a line */
    char c = src[i];
    if (depth == 0 && !continued && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '#') {
      const char *e = src + len;
      bool joins = after_decorator || starts_with_word(src + i, e, "elif") || starts_with_word(src + i, e, "else") ||
                   starts_with_word(src + i, e, "except") || starts_with_word(src + i, e, "finally");
      if (!joins || n == 0) {
        if (n == cap) {
          cap = cap ? 2 * cap : 64;
          items = lang_realloc(items, (size_t)cap * sizeof *items);
        }
        if (n > 0) items[n - 1].end = i;
        items[n++] = (TopStmt){i, len, line, bound_name(vm, src + i, e)};
      } else if (after_decorator && c != '@') {
        items[n - 1].name = bound_name(vm, src + i, e);
      }
      after_decorator = c == '@';
    }
    continued = false;
    /* the rest of the line, and of any string or bracket it opens */
    while (i < len && src[i] != '\n') {
      c = src[i];
      if (c == '#') {
        while (i < len && src[i] != '\n') i++;
        break;
      }
      if (c == '\\' && i + 1 < len && src[i + 1] == '\n') {
        continued = true;
        i++;
        break;
      }
      if (c == '(' || c == '[' || c == '{') depth++;
      else if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
      else if (c == '"' || c == '\'') {
        bool triple = i + 2 < len && src[i + 1] == c && src[i + 2] == c;
        i += triple ? 3 : 1;
        while (i < len) {
          if (src[i] == '\\' && i + 1 < len) {
            if (src[i + 1] == '\n') line++;
            i += 2;
            continue;
          }
          if (src[i] == c && (!triple || (i + 2 < len && src[i + 1] == c && src[i + 2] == c))) break;
          if (src[i] == '\n') {
            if (!triple) break;   /* unterminated: the parser says so */
            line++;
          }
          i++;
        }
        if (i < len && src[i] == c) i += triple ? 3 : 1;
        continue;
      }
      i++;
    }
    if (i < len) {
      i++;   /* the newline */
      line++;
    }
  }
  *out = items;
  return n;
}
