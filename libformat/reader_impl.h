/* reader_impl.h — the reader's window, for the library's own statement
 * loop (model.c), which decodes the commonest chunks in place instead of
 * one nytp_reader_next call each.  Not a public header. */
#ifndef NYTP_READER_IMPL_H
#define NYTP_READER_IMPL_H

#include <stdint.h>

#include "nytp/reader.h"

/* The buffered bytes from the next chunk on, [*start, *end), when the
 * caller may decode chunks there itself: the header is read, reading has
 * not stopped and no chunk with a rule of its own (START_DEFLATE, PID_*,
 * ATTRIBUTE, OPTION) is pending.  False otherwise, or when nothing is
 * buffered; nytp_reader_next then goes on as always.  Only chunks of the
 * fast path's kinds (TIME_LINE, DISCOUNT) may be taken from it. */
bool nytp_reader_window(nytp_reader *r, const uint8_t **start, const uint8_t **end);

/* The caller decoded chunks chunks up to to (within the window), the last
 * of them starting at last: the reader counts them and goes on from to. */
void nytp_reader_took(nytp_reader *r, const uint8_t *to, const uint8_t *last, uint64_t chunks);

#endif
