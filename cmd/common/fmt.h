/* fmt.h — numbers and strings written the way the reports need them:
 * decimal integers, and floating point numbers as perl prints them. */
#ifndef NYTP_FMT_H
#define NYTP_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Each writes at o and returns the end; callers reserve room (32 bytes
 * per number). */
char *fmt_u64(char *o, uint64_t v);
char *fmt_i64(char *o, int64_t v);
/* As perl stringifies an NV: %.15g, but "0" for -0, and Inf, -Inf, NaN. */
char *fmt_nv(char *o, double d);

/* Length of the valid UTF-8 sequence at p (1..4; left bytes remain), or 0
 * if the bytes there are not valid UTF-8. */
size_t fmt_utf8_seq(const unsigned char *p, size_t left);
/* The same, and *cp gets the code point (unchanged when 0 is returned). */
size_t fmt_utf8_decode(const unsigned char *p, size_t left, uint32_t *cp);

/* A JSON string (with its quotes).  Valid UTF-8 passes through; a byte
 * that is not part of valid UTF-8 becomes \u00XX (its Latin-1 reading), so
 * the output is always valid JSON.  Needs 6 * len + 2 bytes of room. */
char *fmt_json_str(char *o, const char *s, size_t len);
/* Length of the package part of a sub name: up to its last "::" before
 * any '[' (anonymous subs name their file there); 0: no package. */
size_t fmt_package_len(const char *name, size_t len);
/* A JSON number: null for NaN and infinities, otherwise the shorter of
 * %.15g and %.17g that reads back exactly. */
char *fmt_json_nv(char *o, double d);

/* ---- times from a profile, to size or count with ---- */
/* A damaged profile can hold any double as a time: NaN, an infinity, a
 * negative time, 1e300.  Where a time becomes a size, a weight or a whole
 * number, such a time counts as nothing, as 'nytp flame --svg' draws it
 * (a frame of no width), and a time too large to count is cut. */

/* The largest whole number fmt_time_units gives: 2^62, so that the sum of
 * a few stays in range of an int64_t (and callers add with a saturating
 * sum, fmt_units_add). */
#define FMT_UNITS_MAX ((uint64_t)1 << 62)
/* t * scale when that is a positive finite number, else 0: a time in
 * other units (seconds to nanoseconds) that may weigh or size something. */
double fmt_time_scaled(double t, double scale);
/* t * scale rounded to a whole number (ticks, nanoseconds): 0 when
 * fmt_time_scaled gives 0, at most FMT_UNITS_MAX. */
uint64_t fmt_time_units(double t, double scale);
/* a + b, at most FMT_UNITS_MAX. */
uint64_t fmt_units_add(uint64_t a, uint64_t b);

/* ---- HTML (nytp html) ---- */
/* Text for HTML (element content or a quoted attribute value): & < > " '
 * become entities, valid UTF-8 passes through, a byte that is not part of
 * valid UTF-8 becomes its Latin-1 reading, and control bytes other than
 * TAB become the visible pictures U+2400..U+2421.  Needs 6 * len room. */
char *fmt_html_str(char *o, const char *s, size_t len);
/* A duration for people, as Devel::NYTProf shows it: 0s, 850ns, 12µs,
 * 1.23ms, 4.56s, 123s (3 significant digits).  Needs 32 bytes. */
char *fmt_duration(char *o, double secs);
/* The length of a bar for v against the largest value max, in percent:
 * 100 exactly for v >= max (100.0 * v / v is above 100 for some v), 0 when
 * either is not positive. */
double fmt_bar_pct(double v, double max);

#endif
