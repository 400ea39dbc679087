/* nytp/reader.h — the streaming reader: one chunk at a time, pull style.
 *
 *     nytp_reader *r;  nytp_chunk c;  nytp_error e;  int st;
 *     if (nytp_reader_open(&r, "nytprof.out", &e) < 0) ...;
 *     while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK)
 *         use(&c);                  // strings valid until the next call
 *     // st == NYTP_END: clean end; NYTP_E_TRUNCATED: the input was cut
 *     // (everything before was good); other negative: corrupt or I/O.
 *     nytp_reader_close(r);
 *
 * The first chunk is always VERSION (the header line).  START_DEFLATE is
 * returned like any chunk; the reader then inflates the rest by itself.
 * No allocation happens per chunk.  Warnings that do not stop reading (a
 * newer minor version, an attribute line without '=') go to the warning
 * callback if one is set, else nowhere.
 */
#ifndef NYTP_READER_H
#define NYTP_READER_H

#include "nytp/codec.h"
#include "nytp/error.h"
#include "nytp/io.h"

typedef struct nytp_reader nytp_reader;

typedef void (*nytp_warn_fn)(void *ctx, const nytp_error *warning);

/* path "-" is standard input. */
int nytp_reader_open(nytp_reader **r, const char *path, nytp_error *err);
int nytp_reader_open_mem(nytp_reader **r, const void *data, size_t len, nytp_error *err);
/* Takes ownership of in. */
int nytp_reader_open_in(nytp_reader **r, nytp_in *in, nytp_error *err);
void nytp_reader_close(nytp_reader *r);

void nytp_reader_set_warn(nytp_reader *r, nytp_warn_fn fn, void *ctx);

/* NYTP_OK with *c filled, NYTP_END at a clean end, or a negative status
 * with err filled.  After an error every later call returns it again. */
int nytp_reader_next(nytp_reader *r, nytp_chunk *c, nytp_error *err);

/* Where the chunk last returned started, and its number (VERSION is 0,
 * the first chunk after the header is 1, as Devel::NYTProf counts). */
uint64_t nytp_reader_chunk_number(const nytp_reader *r);
uint64_t nytp_reader_chunk_offset(const nytp_reader *r);
bool nytp_reader_chunk_inflated(const nytp_reader *r);

/* The underlying input (for nytp_in_drain and offsets). */
nytp_in *nytp_reader_input(nytp_reader *r);

/* Callback style: fn is called for each chunk; a non-zero return stops
 * the walk and is returned.  Returns NYTP_OK at a clean end, or the
 * reader's negative status. */
typedef int (*nytp_chunk_fn)(void *ctx, const nytp_chunk *c);
int nytp_reader_foreach(nytp_reader *r, nytp_chunk_fn fn, void *ctx, nytp_error *err);

#endif
