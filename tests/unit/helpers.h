/* helpers.h — shared by the cmocka unit tests. */
#ifndef NYTP_TEST_HELPERS_H
#define NYTP_TEST_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "nytp/nytp.h"

/* Path of a file under testdata/ ($NYTP_TESTDATA, default "testdata"). */
const char *td_path(const char *name);
/* The whole file in malloc'd memory; fails the test if unreadable. */
uint8_t *slurp(const char *path, size_t *len);

/* A decoded chunk with its strings copied, for comparing streams. */
typedef struct saved_chunk {
    nytp_chunk c;
    char *strs[2];
} saved_chunk;

/* Read every chunk of data[0..len) into a malloc'd array; *status gets the
 * reader's final status, *n the number of chunks. */
saved_chunk *read_all(const uint8_t *data, size_t len, size_t *n, int *status, nytp_error *err);
void free_chunks(saved_chunk *v, size_t n);
/* Field-by-field equality of two chunks (strings by content). */
int chunk_equal(const nytp_chunk *a, const nytp_chunk *b);

/* A name of `depth` nested string evals around `inner` ("FILE:LINE]"):
 * "(eval 1)[(eval 2)[...FILE:LINE]:1]...:1]", numbered from 1, or every
 * one "(eval 0)" when `numbered` is 0.  Malloced; its length in *len. */
char *nested_evals(size_t depth, const char *inner, int numbered, size_t *len);

#endif
