/* files.h: the file formats of the standard library, read from bytes in
 * memory and written atomically: whole-file reading (gzip'd or not,
 * through zlib), atomic writes, and the readers of IDX, NPY and CSV
 * (files.c, readers.c), used by the `data` and `io` modules (data.c,
 * io.c) and by the fuzz target over the readers.
 *
 * Every reader checks every size and offset against the bytes it was
 * given before touching them, and raises an error naming the file
 * (`what`, as the user wrote it) and what is wrong with it; none reads
 * out of bounds whatever the input. */
#ifndef MIST_STDLIB_FILES_H
#define MIST_STDLIB_FILES_H

#include "lang/tensor.h"

/* The most bytes a gzip'd file may inflate to: beyond it, an error
 * rather than memory exhausted by a small hostile file. */
#define STD_GUNZIP_MAX ((size_t)1 << 34)

/* The whole of the file at path, in malloc'd memory (*data, NUL-
 * terminated past len; the caller frees it).  Raises OSError with
 * Python's wording ("[Errno 2] No such file or directory: 'x'"), or
 * "FNAME: 'x' is sandboxed" in a sandbox.  fname names the caller. */
bool std_read_file(MistVM *vm, const char *fname, const char *path, unsigned char **data,
                   size_t *len);
/* data inflated when it is gzip'd (starts with 1f 8b), else data
 * itself: *out is then data (not a copy) and *owned false; when it was
 * inflated *out is malloc'd and *owned true.  At most max bytes. */
bool std_gunzip(MistVM *vm, const char *what, const unsigned char *data, size_t len, size_t max,
                unsigned char **out, size_t *outlen, bool *owned);
/* Write the nparts byte ranges to path atomically: a temporary file in
 * the same folder, written, fsync'd, renamed over path, and the folder
 * fsync'd, so that path holds either the old file or the whole new one,
 * whatever happens.  Raises OSError naming path. */
typedef struct StdBytes {
  const void *data;
  size_t len;
} StdBytes;
bool std_write_atomic(MistVM *vm, const char *path, const StdBytes *parts, int nparts);

/* A safetensors file's bytes (io.c) as the tree it holds. */
bool std_read_safetensors(MistVM *vm, const char *what, const unsigned char *data, size_t len,
                          Value *out);

/* A C function of a stdlib module written in Mist: registered under a
 * global name with a leading underscore (`_io_save`), which the module
 * binds to its own name (`save = _io_save`), and calling itself by the
 * name users see in messages. */
void std_def_hidden(MistVM *vm, const char *global, const char *name, BuiltinFn fn);

/* Register the C halves of io, data and progress (io.c, data.c,
 * progress.c); called by std_register_builtins. */
void std_register_io(MistVM *vm);
void std_register_data(MistVM *vm);
void std_register_progress(MistVM *vm);
void std_register_optim(MistVM *vm);   /* optim.c: fused update kernels */
void std_register_ffi(MistVM *vm);     /* ffi.c: C functions of shared libraries */

/* mkdir -p: path and its missing parents; OSError naming the part that
 * could not be made. */
bool std_makedirs(MistVM *vm, const char *path);

/* ---- readers (readers.c) ---- */

/* An IDX file (MNIST's format) of len bytes: magic 0 0 TYPE NDIMS, the
 * dimensions as big-endian u32, then the data big-endian.  Unsigned and
 * signed bytes, shorts and ints become i32 (Mist has no 8- or 16-bit
 * dtype), floats f32, doubles f64. */
bool std_read_idx(MistVM *vm, const char *what, const unsigned char *data, size_t len,
                  ObjTensor **out);
/* A .npy file, versions 1 to 3: dtypes f4 f8 i4 i8 (either byte order),
 * u1 (as i32) and b1, C or Fortran order. */
bool std_read_npy(MistVM *vm, const char *what, const unsigned char *data, size_t len,
                  ObjTensor **out);
/* The bytes of a .npy file (version 1.0, little-endian) holding t. */
bool std_write_npy(MistVM *vm, ObjTensor *t, StrBuf *out);
/* Comma-separated numbers, one row per line (a first line of names
 * skipped when header): an f32 tensor of shape (rows, columns).  Every
 * row must have as many fields as the first. */
bool std_read_csv(MistVM *vm, const char *what, const char *text, size_t len, bool header,
                  ObjTensor **out);

#endif
