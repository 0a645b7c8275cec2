/* elf.c: a loader of the ELF64 x86-64 relocatable objects LLVM's code
 * generator makes for graph mode (elf.h; docs/jit.md, "How a function
 * compiles"), in the runtime so that code from the compile cache runs
 * without LLVM.
 *
 * It knows what backend.c's code generator emits (position-independent
 * code, the small code model) and refuses, with a reason, anything
 * else: the objects come from a folder on disk that may hold anything.
 * The allocatable sections go into one mapping, in three page-aligned
 * parts: code (and the jump stubs) read+execute, constants (and the
 * GOT) read-only, data and bss read+write; nothing is ever writable and
 * executable at once.  Relocations are applied as the ELF x86-64 psABI
 * says; a call whose target is farther than +-2 GiB (the runtime's
 * helpers in the executable, libm in its shared object) goes through a
 * stub, `jmp *GOT(sym)`, and every GOTPCREL load reads a GOT slot (the
 * GOTPCRELX relaxations are allowed, not required).
 *
 * .eh_frame is not loaded, nor registered with __register_frame.
 * Nothing unwinds through compiled frames: Mist is C, compiled code
 * returns its errors (JitCode.entry's bool), the one longjmp (the
 * parser's) needs no tables and never crosses a compiled frame, and
 * there are no C++ exceptions or thread cancellation in the process.
 * What walks stacks for people does not read tables registered that
 * way either (gdb; perf, which reads the map file this writes with
 * MIST_JIT_PERFMAP=1); only a sanitizer's report printed from inside a
 * runtime function called by compiled code stops its backtrace at the
 * compiled frame.  Debug sections are not loaded either.
 */
#include "jit/elf.h"

#include <elf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A defined symbol others may look up, or a function for the perf map. */
typedef struct ElfSym {
  char *name;
  uintptr_t addr;
  uint64_t size;
  bool global, func;
} ElfSym;

struct JitElf {
  uint8_t *base;          /* the mapping */
  size_t size;
  ElfSym *syms;
  int nsyms;
};

/* The parts of the mapping. */
enum { PART_TEXT, PART_RO, PART_RW, NPARTS };

/* What the loader reads of an object, checked against its bounds. */
typedef struct Obj {
  const uint8_t *data;
  size_t size;
  const Elf64_Shdr *sh;
  int nsh;
  const char *shstr;      /* the section names, and their table's size */
  size_t shstr_size;
  const Elf64_Sym *sym;   /* the symbol table */
  int nsym;
  const char *str;        /* its names */
  size_t str_size;
  int8_t *part;           /* per section: its part, or -1 when not loaded */
  uintptr_t *addr;        /* per section: where it is loaded */
  int32_t *got;           /* per symbol: its GOT slot, or -1 */
  int32_t *stub;          /* per symbol: its stub, or -1 */
  uintptr_t *value;       /* per symbol: its address, once resolved */
  bool *resolved;
  uint64_t *got_slots;    /* where the GOT and the stubs go, and how many are used */
  uint8_t *stubs;
  int ngot, nstubs;
  char *why;
} Obj;

static bool refuse(Obj *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->why, JIT_ELF_WHY, fmt, ap);
  va_end(ap);
  return false;
}

/* Whether [off, off + n) lies inside a block of size bytes. */
static bool inside(uint64_t off, uint64_t n, uint64_t size) { return off <= size && n <= size - off; }

/* The NUL-terminated string at off of a table of size bytes, or NULL. */
static const char *string_at(const char *table, size_t size, uint64_t off) {
  if (!table || off >= size) return NULL;
  return memchr(table + off, 0, size - off) ? table + off : NULL;
}

static const char *section_name(const Obj *o, int i) {
  const char *s = string_at(o->shstr, o->shstr_size, o->sh[i].sh_name);
  return s ? s : "?";
}

/* The section headers, the section names and the symbol table. */
static bool read_headers(Obj *o) {
  if (o->size < sizeof(Elf64_Ehdr)) return refuse(o, "truncated: %zu bytes", o->size);
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)o->data;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return refuse(o, "not an ELF file");
  if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
      eh->e_ident[EI_VERSION] != EV_CURRENT)
    return refuse(o, "not a little-endian ELF64 file");
  if (eh->e_type != ET_REL || eh->e_machine != EM_X86_64)
    return refuse(o, "not an x86-64 relocatable object (type %u, machine %u)", eh->e_type, eh->e_machine);
  if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 || eh->e_shstrndx >= eh->e_shnum ||
      !inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), o->size) || eh->e_shoff % 8)
    return refuse(o, "malformed section header table");
  o->sh = (const Elf64_Shdr *)(o->data + eh->e_shoff);
  o->nsh = eh->e_shnum;
  for (int i = 0; i < o->nsh; i++) {
    const Elf64_Shdr *s = &o->sh[i];
    if (s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL && !inside(s->sh_offset, s->sh_size, o->size))
      return refuse(o, "section %d lies outside the file", i);
  }
  const Elf64_Shdr *names = &o->sh[eh->e_shstrndx];
  if (names->sh_type != SHT_STRTAB) return refuse(o, "no section names");
  o->shstr = (const char *)o->data + names->sh_offset;
  o->shstr_size = names->sh_size;
  for (int i = 0; i < o->nsh; i++) {
    const Elf64_Shdr *s = &o->sh[i];
    if (s->sh_type != SHT_SYMTAB) continue;
    if (o->sym) return refuse(o, "more than one symbol table");
    if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_size % sizeof(Elf64_Sym) || s->sh_offset % 8 ||
        s->sh_size / sizeof(Elf64_Sym) > INT32_MAX || s->sh_link >= (uint32_t)o->nsh ||
        o->sh[s->sh_link].sh_type != SHT_STRTAB)
      return refuse(o, "malformed symbol table");
    o->sym = (const Elf64_Sym *)(o->data + s->sh_offset);
    o->nsym = (int)(s->sh_size / sizeof(Elf64_Sym));
    o->str = (const char *)o->data + o->sh[s->sh_link].sh_offset;
    o->str_size = o->sh[s->sh_link].sh_size;
  }
  if (!o->sym) return refuse(o, "no symbol table");
  return true;
}

/* Which part section i goes into, or -1 when it is not loaded; false
 * for a section the loader does not know. */
static bool place_of(Obj *o, int i, int8_t *part) {
  const Elf64_Shdr *s = &o->sh[i];
  *part = -1;
  switch (s->sh_type) {
  case SHT_NULL: case SHT_SYMTAB: case SHT_STRTAB: case SHT_RELA: case SHT_GROUP:
  case SHT_NOTE: case 0x6fff4c03 /* SHT_LLVM_ADDRSIG */:
    return true;
  case SHT_REL:
    return refuse(o, "REL relocations (section %s): x86-64 objects use RELA", section_name(o, i));
  case SHT_X86_64_UNWIND:   /* .eh_frame: see the opening comment */
    return true;
  case SHT_PROGBITS: case SHT_NOBITS:
    break;
  default:
    if (!(s->sh_flags & SHF_ALLOC)) return true;
    return refuse(o, "section %s of unknown type %#x", section_name(o, i), s->sh_type);
  }
  if (!(s->sh_flags & SHF_ALLOC)) return true;   /* .comment, .debug_* */
  if (strcmp(section_name(o, i), ".eh_frame") == 0) return true;
  if (s->sh_flags & SHF_TLS) return refuse(o, "thread-local section %s", section_name(o, i));
  if (s->sh_addralign > 4096 || (s->sh_addralign & (s->sh_addralign - 1)))
    return refuse(o, "section %s aligned to %llu bytes", section_name(o, i), (unsigned long long)s->sh_addralign);
  if (s->sh_size > (1u << 30)) return refuse(o, "section %s too big", section_name(o, i));
  *part = s->sh_flags & SHF_EXECINSTR ? PART_TEXT : s->sh_flags & SHF_WRITE || s->sh_type == SHT_NOBITS ? PART_RW
                                                                                                        : PART_RO;
  return true;
}

static uint64_t round_up(uint64_t n, uint64_t align) { return align > 1 ? (n + align - 1) & ~(align - 1) : n; }

static const char *symbol_name(const Obj *o, const Elf64_Sym *s) {
  const char *n = string_at(o->str, o->str_size, s->st_name);
  return n ? n : "";
}

/* The address of symbol k, resolving an undefined one. */
static bool symbol_value(Obj *o, uint32_t k, JitElfResolve resolve, void *ud, uintptr_t *out) {
  if (k >= (uint32_t)o->nsym) return refuse(o, "relocation against symbol %u of %d", k, o->nsym);
  if (o->resolved[k]) {
    *out = o->value[k];
    return true;
  }
  const Elf64_Sym *s = &o->sym[k];
  const char *name = symbol_name(o, s);
  uintptr_t v;
  if (s->st_shndx == SHN_UNDEF) {
    if (ELF64_ST_TYPE(s->st_info) == STT_TLS) return refuse(o, "thread-local symbol %s", name);
    v = (uintptr_t)(resolve && *name ? resolve(ud, name) : NULL);
    if (!v && ELF64_ST_BIND(s->st_info) != STB_WEAK) return refuse(o, "undefined symbol %s", name);
  } else if (s->st_shndx == SHN_ABS) {
    v = (uintptr_t)s->st_value;
  } else if (s->st_shndx < o->nsh && s->st_shndx < SHN_LORESERVE) {
    if (o->part[s->st_shndx] < 0) return refuse(o, "symbol %s in section %s, which is not loaded", name,
                                                section_name(o, s->st_shndx));
    if (s->st_value > o->sh[s->st_shndx].sh_size) return refuse(o, "symbol %s outside its section", name);
    v = o->addr[s->st_shndx] + (uintptr_t)s->st_value;
  } else {
    return refuse(o, "symbol %s in section %#x", name, s->st_shndx);
  }
  o->value[k] = v;
  o->resolved[k] = true;
  *out = v;
  return true;
}

static bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* The GOT slot of symbol k (its address), made on first use. */
static uintptr_t got_of(Obj *o, uint32_t k, uintptr_t value) {
  if (o->got[k] < 0) {
    o->got[k] = o->ngot;
    o->got_slots[o->ngot++] = value;
  }
  return (uintptr_t)&o->got_slots[o->got[k]];
}

/* The stub of symbol k, `jmp *GOT(k)(%rip)`, made on first use. */
static uintptr_t stub_of(Obj *o, uint32_t k, uintptr_t value) {
  if (o->stub[k] < 0) {
    uintptr_t slot = got_of(o, k, value);
    uint8_t *p = o->stubs + 8 * o->nstubs;
    int32_t d = (int32_t)((intptr_t)slot - (intptr_t)(p + 6));
    p[0] = 0xff;
    p[1] = 0x25;
    memcpy(p + 2, &d, 4);
    p[6] = p[7] = 0xcc;
    o->stub[k] = o->nstubs++;
  }
  return (uintptr_t)(o->stubs + 8 * o->stub[k]);
}

/* Apply the relocations of section r to the section they patch. */
static bool relocate(Obj *o, int r, JitElfResolve resolve, void *ud) {
  const Elf64_Shdr *rs = &o->sh[r];
  if (rs->sh_info >= (uint32_t)o->nsh) return refuse(o, "relocations %s of no section", section_name(o, r));
  int target = (int)rs->sh_info;
  if (o->part[target] < 0) return true;   /* of a section not loaded (.eh_frame, debug info) */
  if (rs->sh_link >= (uint32_t)o->nsh || o->sh[rs->sh_link].sh_type != SHT_SYMTAB)
    return refuse(o, "relocations %s not against the symbol table", section_name(o, r));
  if (rs->sh_entsize != sizeof(Elf64_Rela) || rs->sh_size % sizeof(Elf64_Rela) || rs->sh_offset % 8)
    return refuse(o, "malformed relocations %s", section_name(o, r));
  if (o->sh[target].sh_type == SHT_NOBITS && rs->sh_size)
    return refuse(o, "relocations %s of a section with no bytes", section_name(o, r));
  const Elf64_Rela *rel = (const Elf64_Rela *)(o->data + rs->sh_offset);
  size_t n = rs->sh_size / sizeof(Elf64_Rela);
  uint64_t tsize = o->sh[target].sh_size;
  for (size_t i = 0; i < n; i++) {
    uint32_t type = ELF64_R_TYPE(rel[i].r_info), k = ELF64_R_SYM(rel[i].r_info);
    uint64_t off = rel[i].r_offset;
    int64_t a = rel[i].r_addend;
    if (type == R_X86_64_NONE) continue;
    unsigned width = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
    if (!inside(off, width, tsize)) return refuse(o, "relocation outside section %s", section_name(o, target));
    uint8_t *p = (uint8_t *)o->addr[target] + off;
    uintptr_t place = (uintptr_t)p, s;
    if (!symbol_value(o, k, resolve, ud, &s)) return false;
    int64_t v;
    switch (type) {
    case R_X86_64_64:
      v = (int64_t)(s + (uint64_t)a);
      memcpy(p, &v, 8);
      continue;
    case R_X86_64_PC64:
      v = (int64_t)(s + (uint64_t)a - place);
      memcpy(p, &v, 8);
      continue;
    case R_X86_64_PC32:
      v = (int64_t)(s + (uint64_t)a - place);
      break;
    case R_X86_64_PLT32:
      v = (int64_t)(s + (uint64_t)a - place);
      if (!fits32(v)) v = (int64_t)(stub_of(o, k, s) + (uint64_t)a - place);
      break;
    case R_X86_64_GOTPCREL: case R_X86_64_GOTPCRELX: case R_X86_64_REX_GOTPCRELX:
      v = (int64_t)(got_of(o, k, s) + (uint64_t)a - place);
      break;
    case R_X86_64_32:
      v = (int64_t)(s + (uint64_t)a);
      if (v < 0 || v > (int64_t)UINT32_MAX)
        return refuse(o, "an absolute 32-bit address (R_X86_64_32) out of range: not position-independent code");
      memcpy(p, &(uint32_t){(uint32_t)v}, 4);
      continue;
    case R_X86_64_32S:
      v = (int64_t)(s + (uint64_t)a);
      if (!fits32(v))
        return refuse(o, "an absolute 32-bit address (R_X86_64_32S) out of range: not position-independent code");
      break;
    default:
      return refuse(o, "relocation type %u in section %s", type, section_name(o, target));
    }
    if (!fits32(v)) return refuse(o, "relocation of %s out of range", symbol_name(o, &o->sym[k]));
    memcpy(p, &(int32_t){(int32_t)v}, 4);
  }
  return true;
}

/* The symbols the loaded object keeps: its global definitions, for
 * jit_elf_symbol, and its functions, for the perf map. */
static bool keep_symbols(Obj *o, JitElf *e) {
  e->syms = calloc((size_t)o->nsym, sizeof *e->syms);
  if (!e->syms && o->nsym) return refuse(o, "out of memory");
  for (int k = 1; k < o->nsym; k++) {
    const Elf64_Sym *s = &o->sym[k];
    int bind = ELF64_ST_BIND(s->st_info), type = ELF64_ST_TYPE(s->st_info);
    if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE || type == STT_SECTION || type == STT_FILE)
      continue;
    bool global = bind == STB_GLOBAL || bind == STB_WEAK, func = type == STT_FUNC;
    if (!global && !func) continue;
    if (s->st_shndx >= o->nsh || o->part[s->st_shndx] < 0) continue;
    uintptr_t v;
    if (!symbol_value(o, (uint32_t)k, NULL, NULL, &v)) return false;
    ElfSym *es = &e->syms[e->nsyms];
    if (!(es->name = strdup(symbol_name(o, s)))) return refuse(o, "out of memory");
    es->addr = v;
    es->size = s->st_size;
    es->global = global;
    es->func = func;
    e->nsyms++;
  }
  return true;
}

/* Append e's functions to /tmp/perf-PID.map, as `perf report` reads it. */
static void write_perf_map(const JitElf *e, const char *label) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
  FILE *f = fopen(path, "a");
  if (!f) return;
  for (int i = 0; i < e->nsyms; i++)
    if (e->syms[i].func && e->syms[i].size)
      fprintf(f, "%lx %lx mist:%s%s%s\n", (unsigned long)e->syms[i].addr, (unsigned long)e->syms[i].size,
              label ? label : "", label ? ":" : "", e->syms[i].name);
  fclose(f);
}

static bool perf_map_on(void) {
  const char *s = getenv("MIST_JIT_PERFMAP");
  return s && strcmp(s, "1") == 0;
}

/* Lay the loaded sections out in their parts, load them, relocate them
 * and protect the parts. */
static JitElf *load(Obj *o, JitElfResolve resolve, void *ud, const char *label) {
  uint64_t end[NPARTS] = {0};
  for (int i = 0; i < o->nsh; i++) {
    if (!place_of(o, i, &o->part[i])) return NULL;
    if (o->part[i] < 0) continue;
    int p = o->part[i];
    end[p] = round_up(end[p], o->sh[i].sh_addralign) + o->sh[i].sh_size;
  }
  /* every symbol may need a stub (in the code) and a GOT slot (in the constants) */
  uint64_t stubs_at = round_up(end[PART_TEXT], 16), got_at = round_up(end[PART_RO], 8);
  end[PART_TEXT] = stubs_at + 8 * (uint64_t)o->nsym;
  end[PART_RO] = got_at + 8 * (uint64_t)o->nsym;
  long page = sysconf(_SC_PAGESIZE);
  uint64_t start[NPARTS], total = 0;
  for (int p = 0; p < NPARTS; p++) {
    start[p] = total;
    total += round_up(end[p], (uint64_t)page);
  }
  void *m = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    refuse(o, "cannot map %llu bytes", (unsigned long long)total);
    return NULL;
  }
  JitElf *e = calloc(1, sizeof *e);
  if (!e) {
    munmap(m, (size_t)total);
    refuse(o, "out of memory");
    return NULL;
  }
  e->base = m;
  e->size = (size_t)total;
  uint64_t at[NPARTS] = {0};
  for (int i = 0; i < o->nsh; i++) {
    if (o->part[i] < 0) continue;
    int p = o->part[i];
    at[p] = round_up(at[p], o->sh[i].sh_addralign);
    o->addr[i] = (uintptr_t)e->base + start[p] + at[p];
    if (o->sh[i].sh_type != SHT_NOBITS) memcpy((void *)o->addr[i], o->data + o->sh[i].sh_offset, o->sh[i].sh_size);
    at[p] += o->sh[i].sh_size;
  }
  o->stubs = e->base + start[PART_TEXT] + stubs_at;
  o->got_slots = (uint64_t *)(e->base + start[PART_RO] + got_at);
  bool ok = true;
  for (int i = 0; i < o->nsh && ok; i++)
    if (o->sh[i].sh_type == SHT_RELA) ok = relocate(o, i, resolve, ud);
  ok = ok && keep_symbols(o, e);
  if (ok) {
    static const int prot[NPARTS] = {PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE};
    for (int p = 0; p < NPARTS && ok; p++) {
      size_t n = (size_t)round_up(end[p], (uint64_t)page);
      if (n && mprotect(e->base + start[p], n, prot[p])) ok = refuse(o, "cannot protect the loaded code");
    }
  }
  if (!ok) {
    jit_elf_free(e);
    return NULL;
  }
  if (perf_map_on()) write_perf_map(e, label);
  return e;
}

JitElf *jit_elf_load(const void *obj, size_t size, JitElfResolve resolve, void *ud, const char *label,
                     char why[JIT_ELF_WHY]) {
  Obj o = {.data = obj, .size = size, .why = why};
  why[0] = '\0';
  void *copy = NULL;
  if ((uintptr_t)obj % 8) {   /* its tables are read in place */
    if (!(copy = malloc(size ? size : 1))) {
      refuse(&o, "out of memory");
      return NULL;
    }
    o.data = memcpy(copy, obj, size);
  }
  if (!read_headers(&o)) {
    free(copy);
    return NULL;
  }
  size_t ns = (size_t)o.nsh, nk = (size_t)o.nsym;
  o.part = malloc(ns);
  o.addr = calloc(ns, sizeof *o.addr);
  o.got = malloc(nk * sizeof *o.got + 1);
  o.stub = malloc(nk * sizeof *o.stub + 1);
  o.value = calloc(nk + 1, sizeof *o.value);
  o.resolved = calloc(nk + 1, 1);
  JitElf *e = NULL;
  if (!o.part || !o.addr || !o.got || !o.stub || !o.value || !o.resolved) {
    refuse(&o, "out of memory");
  } else {
    memset(o.got, 0xff, nk * sizeof *o.got);
    memset(o.stub, 0xff, nk * sizeof *o.stub);
    e = load(&o, resolve, ud, label);
  }
  free(o.part);
  free(o.addr);
  free(o.got);
  free(o.stub);
  free(o.value);
  free(o.resolved);
  free(copy);
  return e;
}

void *jit_elf_symbol(const JitElf *e, const char *name) {
  for (int i = 0; i < e->nsyms; i++)
    if (e->syms[i].global && strcmp(e->syms[i].name, name) == 0) return (void *)e->syms[i].addr;
  return NULL;
}

void jit_elf_free(JitElf *e) {
  if (!e) return;
  for (int i = 0; i < e->nsyms; i++) free(e->syms[i].name);
  free(e->syms);
  if (e->base) munmap(e->base, e->size);
  free(e);
}
