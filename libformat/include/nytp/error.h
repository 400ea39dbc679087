/* nytp/error.h — how libformat reports what went wrong.
 *
 * Every failing call fills an nytp_error and returns a negative status.
 * The error says what kind of failure it was, where in the input it
 * happened (byte offset, whether that offset counts inflated bytes, and
 * the chunk number) and a human sentence without the file name, so the
 * caller can prefix it with whatever it calls the input.
 */
#ifndef NYTP_ERROR_H
#define NYTP_ERROR_H

#include <stdbool.h>
#include <stdint.h>

enum nytp_status {
    NYTP_OK = 0,
    NYTP_END = 1,           /* reader: no more chunks (clean end) */
    NYTP_E_IO = -1,         /* the operating system said no */
    NYTP_E_FORMAT = -2,     /* bytes that no valid writer produces */
    NYTP_E_TRUNCATED = -3,  /* input ends inside a chunk or a zlib stream */
    NYTP_E_VERSION = -4,    /* a format version we do not read */
    NYTP_E_NOMEM = -5,
    NYTP_E_USAGE = -6       /* the caller misused the API */
};

#define NYTP_ERROR_MSG_MAX 320

typedef struct nytp_error {
    int status;             /* one of enum nytp_status, negative */
    uint64_t offset;        /* byte offset of the problem */
    bool inflated;          /* offset counts bytes of the inflated stream */
    uint64_t deflate_start; /* file offset where the zlib stream begins */
    uint64_t chunk;         /* 1-based number of the chunk being read; 0 = header */
    char msg[NYTP_ERROR_MSG_MAX];
    /* Warnings only: the printf format msg was made from, a string that
     * outlives the program and is the same for every warning of one kind
     * ("process %u ends without having started"), so that a caller can
     * show the first few of a kind and count the rest.  NULL when not
     * known (then msg itself is the kind). */
    const char *kind;
} nytp_error;

/* Fill err (which may be NULL) and return status. printf-style message. */
int nytp_error_set(nytp_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Short name of a status: "format error", "truncated", ... */
const char *nytp_status_name(int status);

/* Write "offset N" or "offset N in inflated data (zlib stream starts at
 * file offset M)" plus ", chunk C" into buf; returns buf. */
const char *nytp_error_where(const nytp_error *err, char *buf, size_t size);

#endif
