/* textfile.h: text files as values (ObjFile, lang/value.h): reading one
 * whole, as text or as lines.  open() and the file methods are
 * stdlib/textfiles.c; `for line in f` reads the lines through here. */
#ifndef MIST_LANG_TEXTFILE_H
#define MIST_LANG_TEXTFILE_H

#include "lang/vm.h"

/* A new file value (nothing is opened). */
ObjFile *lang_textfile_new(ObjStr *path, char mode);
/* The whole text of f, which must be UTF-8; an error (Python's wording,
 * "[Errno 2] No such file or directory: 'x.txt'") if it cannot be read. */
bool lang_textfile_read(MistVM *vm, const ObjFile *f, ObjStr **out);
/* Its lines, each with its '\n' (the last may have none), as
 * Python's readlines(). */
bool lang_textfile_lines(MistVM *vm, const ObjFile *f, ObjSeq **out);
/* Python's OSError text for errno err on path. */
bool lang_textfile_error(MistVM *vm, int err, const ObjStr *path);

#endif
