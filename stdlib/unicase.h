/* unicase.h: Unicode case mapping as Python 3.11 does it (unicase.c),
 * for the str methods upper, lower, title, capitalize, swapcase and
 * casefold. */
#ifndef MIST_STDLIB_UNICASE_H
#define MIST_STDLIB_UNICASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { STD_UPPER, STD_LOWER, STD_TITLE, STD_FOLD } StdCase;

/* The full case mapping of code point c (one to three code points) as
 * UTF-8 in out, which has room for 12 bytes; returns the bytes written. */
size_t std_case_map(uint32_t c, StdCase to, char *out);
/* Unicode's properties, as near as the C library tells them: a letter
 * with case (Lu, Ll, Lt), lowercase, uppercase, and case-ignorable (the
 * marks and punctuation that the final-sigma rule skips). */
bool std_is_cased(uint32_t c);
bool std_is_lower(uint32_t c);
bool std_is_upper(uint32_t c);
bool std_is_case_ignorable(uint32_t c);

#endif
