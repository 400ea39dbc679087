/* term.h — tables for people, shared by 'nytp top' and 'nytp diff': the
 * width to fit, whether to colour, and text from the profile made safe to
 * print and cut to a number of columns.
 *
 *     term t;
 *     term_init(&t, path);            // path: the -o file, NULL or "-": stdout
 *     term_cell(&t, out, name, len, 40, TERM_LEFT);   // escaped, cut, padded
 *     term_sgr(&t, out, TERM_RED); ... term_sgr(&t, out, TERM_RESET);
 *
 * A name is never printed raw: control bytes (C0, DEL, C1) become "\xHH",
 * bytes that are not UTF-8 are shown as their Latin-1 characters, so a
 * hostile sub name or source line cannot move the cursor or change the
 * terminal's state; in a name (not in source text) a backslash is
 * doubled, so that two names never print alike ("f" ESC is "f\x1B", the
 * name f\x1B is "f\\x1B").  Widths count characters (one column each).
 */
#ifndef NYTP_TERM_H
#define NYTP_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "nytp/nytp.h"

typedef struct term {
    unsigned width;     /* columns to fit; 0: no limit */
    bool colour;        /* ANSI colours and bold */
} term;

/* For output to path (NULL or "-": standard output): on a terminal, its
 * width (TIOCGWINSZ) and colour unless NO_COLOR is set (to anything, even
 * empty); otherwise no colour, and the width of $COLUMNS if set, else no
 * limit. */
void term_init(term *t, const char *path);

enum term_sgr { TERM_RESET, TERM_BOLD, TERM_RED, TERM_GREEN, TERM_YELLOW, TERM_DIM };
/* An ANSI attribute, only when t->colour. */
void term_sgr(const term *t, nytp_out *out, enum term_sgr what);

/* s (len bytes from the profile) made printable into out (room for
 * 4 * len + 1): valid UTF-8 kept, control bytes "\xHH", other bytes
 * Latin-1; a name or path (!tabs): a backslash doubled; source text
 * (tabs): a backslash as it is, and a TAB becomes spaces to the next
 * multiple of 8 (out then needs 8 * len + 1).  NUL-terminated; returns
 * its length and sets *cols to its width in columns. */
size_t term_clean(const char *s, size_t len, bool tabs, char *out, size_t *cols);

enum term_align { TERM_LEFT, TERM_RIGHT, TERM_KEEP_END };
/* Write clean text (from term_clean or our own) padded to cols columns,
 * or cut to cols with ".." at the end (TERM_KEEP_END: left-aligned, cut
 * at the start, as for a path whose end says most); cols 0: as it is. */
void term_put(nytp_out *out, const char *clean, size_t len, size_t width, size_t cols,
              enum term_align align);
/* Our own text (a number), right-aligned in cols columns, never cut. */
void term_num(nytp_out *out, const char *text, size_t cols);
/* term_clean then term_put.  Returns NYTP_E_NOMEM or NYTP_OK. */
int term_cell(nytp_out *out, const char *s, size_t len, size_t cols, enum term_align align);

/* Copy text (lines of a finished table, ANSI colours included) to out,
 * each line cut at t->width columns when there is a width: the last word
 * on what fits, whatever the table computed. */
void term_write_fitted(const term *t, nytp_out *out, const char *text, size_t len);

/* What write(ctx, mem) writes, written into memory first and then to out
 * with each line cut to t->width (term_write_fitted): the tables of top
 * and diff.  NYTP_OK or NYTP_E_NOMEM. */
int term_write_table(const term *t, nytp_out *out, void (*write)(void *ctx, nytp_out *mem),
                     void *ctx);

/* Names for one column of cols columns (0: no limit), from clean text
 * (term_clean's output; lens in bytes).  A name that is wider is cut in
 * the middle of its package path: its start up to a "::" and its own
 * name after the last "::" stay ("Perl::Tidy::…::tokenize_this_line"); a
 * name whose own part is too long keeps its start and its end.  No two
 * come out alike: names that would read the same keep more of their end,
 * then show where they differ (a number is the last resort, for names
 * that are equal).  Returns n malloc'd strings (term_free_names) with
 * their widths in widths (may be NULL), or NULL when out of memory. */
char **term_fit_names(char *const *names, const size_t *lens, size_t n, size_t cols,
                      size_t *widths);
void term_free_names(char **names, size_t n);

/* Durations and shares for tables: "1.23ms", "+1.23ms", "12.3%", "+45%"
 * ("-" for a share that is not a number).  32 bytes of room. */
char *term_dur(char *o, double secs, bool sign);
char *term_pct(char *o, double pct, bool sign);


#endif
