/* fmt.h — numbers and strings written the way the reports need them:
 * decimal integers, and floating point numbers as perl prints them. */
#ifndef NYTP_FMT_H
#define NYTP_FMT_H

#include <stdint.h>

/* Each writes at o and returns the end; callers reserve room (32 bytes
 * per number). */
char *fmt_u64(char *o, uint64_t v);
char *fmt_i64(char *o, int64_t v);
/* As perl stringifies an NV: %.15g, but "0" for -0, and Inf, -Inf, NaN. */
char *fmt_nv(char *o, double d);

/* A JSON string (with its quotes).  Valid UTF-8 passes through; a byte
 * that is not part of valid UTF-8 becomes \u00XX (its Latin-1 reading), so
 * the output is always valid JSON.  Needs 6 * len + 2 bytes of room. */
char *fmt_json_str(char *o, const char *s, size_t len);
/* A JSON number: null for NaN and infinities, otherwise the shorter of
 * %.15g and %.17g that reads back exactly. */
char *fmt_json_nv(char *o, double d);

#endif
