/* suggest.c: "did you mean" for a misspelt name, and the names an
 * attribute of a value may have.
 *
 * The closeness rule is CPython's (Python/suggestions.c), so Mist
 * suggests what Python would: a Levenshtein distance over bytes in
 * which inserting, deleting or replacing a character costs 2 and a
 * change of case only 1, after the common prefix and suffix are
 * trimmed; a candidate counts only when no more than a third of the
 * characters involved change (distance <= (len(a) + len(b) + 3) * 2 / 6)
 * and strings longer than 40 bytes are never close.  Among the close
 * candidates the first with the smallest distance wins, so the order
 * of offering matters, as it does in Python (locals, then globals, then
 * builtins).
 *
 * lang_attr_names lists what `x.` may be followed by: a module's bound
 * names, or the builtins registered as methods of x's kind of value
 * (ObjBuiltin.self_kinds) and, for a tensor, its properties.  The REPL
 * completes from it and AttributeError suggests from it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lang/gc.h"
#include "lang/tensor.h"
#include "lang/vm.h"

#define MOVE_COST 2
#define CASE_COST 1
#define MAX_STRING_SIZE 40

static size_t substitution_cost(char a, char b) {
  if ((a & 31) != (b & 31)) return MOVE_COST;
  if (a == b) return 0;
  if (a >= 'A' && a <= 'Z') a += 'a' - 'A';
  if (b >= 'A' && b <= 'Z') b += 'a' - 'A';
  return a == b ? CASE_COST : MOVE_COST;
}

/* The distance from a to b, or max_cost + 1 as soon as it must exceed
 * max_cost.  One row of the matrix is kept, updated in place. */
static size_t distance(const char *a, size_t na, const char *b, size_t nb, size_t max_cost) {
  while (na && nb && a[0] == b[0]) a++, b++, na--, nb--;
  while (na && nb && a[na - 1] == b[nb - 1]) na--, nb--;
  if (na == 0 || nb == 0) return (na + nb) * MOVE_COST;
  if (na > MAX_STRING_SIZE || nb > MAX_STRING_SIZE) return max_cost + 1;
  if (nb < na) {
    const char *t = a;
    a = b, b = t;
    size_t n = na;
    na = nb, nb = n;
  }
  if ((nb - na) * MOVE_COST > max_cost) return max_cost + 1;
  size_t row[MAX_STRING_SIZE];
  for (size_t i = 0; i < na; i++) row[i] = (i + 1) * MOVE_COST;
  size_t result = 0;
  for (size_t j = 0; j < nb; j++) {
    size_t diag = result = j * MOVE_COST;
    size_t minimum = SIZE_MAX;
    for (size_t i = 0; i < na; i++) {
      size_t substitute = diag + substitution_cost(b[j], a[i]);
      diag = row[i];
      size_t insert_delete = (result < diag ? result : diag) + MOVE_COST;
      result = insert_delete < substitute ? insert_delete : substitute;
      row[i] = result;
      if (result < minimum) minimum = result;
    }
    if (minimum > max_cost) return max_cost + 1;
  }
  return result;
}

void lang_suggest_start(LangSuggest *s, const char *name) {
  s->name = name;
  s->len = strlen(name);
  s->best = NULL;
  s->dist = SIZE_MAX;
}

void lang_suggest_offer(LangSuggest *s, const char *cand) {
  size_t n = strlen(cand);
  if (n == s->len && memcmp(cand, s->name, n) == 0) return;
  /* names private to the runtime (_sens_to...) are offered only for a
   * name that is itself private */
  if (cand[0] == '_' && s->name[0] != '_') return;
  size_t max = (s->len + n + 3) * MOVE_COST / 6;
  if (s->dist != SIZE_MAX && s->dist - 1 < max) max = s->dist - 1;
  size_t d = distance(s->name, s->len, cand, n, max);
  if (d > max) return;
  if (!s->best || d < s->dist) {
    s->best = cand;
    s->dist = d;
  }
}

void lang_suggest_dict(LangSuggest *s, const ObjDict *d) {
  if (!d) return;
  for (size_t i = 0; i < d->len; i++)
    if (d->entries[i].key) lang_suggest_offer(s, d->entries[i].key->data);
}

/* The key of a name of lazily loaded module m not loaded yet, else NULL. */
static ObjStr *unloaded_name(const ObjModule *m, const DictEntry *e) {
  return e->key && e->value.tag == V_INT && m->lazy->state[e->value.i] != LAZY_LOADED ? e->key : NULL;
}

void lang_suggest_module(LangSuggest *s, const ObjModule *m) {
  if (!m) return;
  for (size_t i = 0; m->names && i < m->names->len; i++) {
    DictEntry *e = &m->names->entries[i];
    if (e->key && e->value.tag == V_INT && m->slots[e->value.i].tag != V_UNBOUND)
      lang_suggest_offer(s, e->key->data);
  }
  for (size_t i = 0; m->lazy && i < m->lazy->index->len; i++) {
    ObjStr *name = unloaded_name(m, &m->lazy->index->entries[i]);
    if (name) lang_suggest_offer(s, name->data);
  }
}

const char *lang_suggest_hint(const LangSuggest *s) {
  if (!s->best) return "";
  size_t n = strlen(s->best);
  char *h = lang_alloc_atomic(n + 20);
  memcpy(h, ". Did you mean: '", 17);
  memcpy(h + 17, s->best, n);
  memcpy(h + 17 + n, "'?", 3);
  return h;
}

/* ---- the names after `x.` ---- */

unsigned lang_self_kind(Value x) {
  if (v_is_obj(x, O_STR)) return SELF_STR;
  if (v_is_obj(x, O_LIST)) return SELF_LIST;
  if (v_is_obj(x, O_TUPLE)) return SELF_TUPLE;
  if (v_is_obj(x, O_DICT)) return SELF_DICT;
  if (v_is_tensor(x)) return SELF_TENSOR;
  if (v_is_obj(x, O_FILE)) return SELF_FILE_KIND;
  return 0;
}

/* A growing set of names, kept in GC memory. */
typedef struct Names {
  ObjStr **items;
  size_t len, cap;
} Names;

static void add_name(Names *ns, ObjStr *name) {
  for (size_t i = 0; i < ns->len; i++)
    if (lang_str_eq(ns->items[i], name)) return;
  if (ns->len == ns->cap) {
    ns->cap = ns->cap ? ns->cap * 2 : 32;
    ns->items = lang_realloc(ns->items, ns->cap * sizeof *ns->items);
  }
  ns->items[ns->len++] = name;
}

static void add_methods(Names *ns, const ObjDict *d, unsigned kind) {
  if (!d || !kind) return;
  for (size_t i = 0; i < d->len; i++) {
    DictEntry *e = &d->entries[i];
    if (e->key && v_is_obj(e->value, O_BUILTIN) && (AS_BUILTIN(e->value)->self_kinds & kind))
      add_name(ns, e->key);
  }
}

static int by_name(const void *a, const void *b) {
  const ObjStr *x = *(ObjStr *const *)a, *y = *(ObjStr *const *)b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->data, y->data, n);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

ObjSeq *lang_attr_names(MistVM *vm, Value x) {
  Names ns = {0};
  if (v_is_obj(x, O_MODULE)) {
    ObjModule *m = AS_MODULE(x);
    for (size_t i = 0; m->names && i < m->names->len; i++) {
      DictEntry *e = &m->names->entries[i];
      if (e->key && e->value.tag == V_INT && m->slots[e->value.i].tag != V_UNBOUND) add_name(&ns, e->key);
    }
    for (size_t i = 0; m->lazy && i < m->lazy->index->len; i++) {
      ObjStr *name = unloaded_name(m, &m->lazy->index->entries[i]);
      if (name) add_name(&ns, name);
    }
  } else {
    unsigned kind = lang_self_kind(x);
    add_methods(&ns, vm->methods, kind);
    add_methods(&ns, vm->builtins, kind);
    if (kind == SELF_TENSOR && vm->properties)
      for (size_t i = 0; i < vm->properties->len; i++)
        if (vm->properties->entries[i].key) add_name(&ns, vm->properties->entries[i].key);
  }
  if (ns.len > 1) qsort(ns.items, ns.len, sizeof *ns.items, by_name);
  ObjSeq *l = lang_list_new(ns.len);
  for (size_t i = 0; i < ns.len; i++) l->items[i] = v_obj(ns.items[i]);
  return l;
}
