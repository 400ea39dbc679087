/* deflater.h — zlib deflate of an output's buffers, either on the caller's
 * thread or on a writer thread of its own.  Private to libformat: out.c is
 * its one client (nytp_out_start_deflate); opening, committing and
 * renaming files stay there.
 *
 * The caller fills a buffer and hands it over with deflater_push.  On its
 * own thread the deflater compresses it at once and gives the same buffer
 * back.  With a writer thread the buffer joins a bounded queue and the
 * caller gets an empty one in exchange, so it only waits when the writer
 * is several buffers behind (memory stays bounded: at most
 * DEFLATER_QUEUE + 2 buffers).  The writer deflates the buffers in order,
 * with the flush mode each was pushed with, so the stream is the one the
 * same pushes would give without a thread.  A push with Z_SYNC_FLUSH or
 * Z_FINISH returns only once everything pushed is written.
 *
 *   deflater *d;
 *   deflater_start(&d, 6, true, sink, ctx, &err);
 *   deflater_push(d, &buf, &cap, len, Z_NO_FLUSH, &err);  // buf may change
 *   deflater_push(d, &buf, &cap, len, Z_FINISH, &err);
 *   deflater_free(d);
 *
 * The writer thread blocks every signal, so that a host program's signal
 * handlers (perl's) only ever run on the host's own threads.  After fork
 * the child has no writer thread: deflater_free there only releases
 * memory, and the child must not push to the parent's deflater.
 */
#ifndef NYTP_DEFLATER_H
#define NYTP_DEFLATER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nytp/error.h"

#define DEFLATER_QUEUE 4 /* buffers waiting for the writer thread */

/* Writes len compressed bytes at p to the destination; on failure sets
 * *err and returns its (negative) status.  Called on the writer thread
 * when there is one: it must not touch what the caller's thread uses. */
typedef int (*deflater_sink_fn)(void *ctx, const uint8_t *p, size_t len, nytp_error *err);

typedef struct deflater deflater;

/* Start a zlib stream at level (0..9), deflated by engine: "zlib" (or
 * NULL) or "isal" (Intel ISA-L, in builds with NYTP_HAVE_ISAL: many times
 * faster, a larger stream; zlib's levels 1, 2-6 and 7-9 become ISA-L's 1,
 * 2 and 3, and level 0 stays zlib's) or "gzip" (zlib's deflate in a gzip
 * wrapper, RFC 1952, instead of a zlib one).  NYTP_E_USAGE for an engine not in
 * the build.  threaded: deflate on a writer thread (if one cannot be
 * started, on the caller's thread). */
int deflater_start(deflater **d, int level, const char *engine, bool threaded,
                   deflater_sink_fn sink, void *ctx, nytp_error *err);

/* Deflate the len bytes at *buf with flush (Z_NO_FLUSH, Z_SYNC_FLUSH or
 * Z_FINISH).  *buf (of *cap bytes) may be exchanged for another buffer of
 * *cap bytes.  Returns NYTP_OK, or the first error of the stream (sticky:
 * every later push returns it too, and nothing more is written). */
int deflater_push(deflater *d, uint8_t **buf, size_t *cap, size_t len, int flush,
                  nytp_error *err);

/* Bytes in and out of the stream so far (after Z_FINISH: all of them). */
void deflater_totals(const deflater *d, uint64_t *in, uint64_t *out);

/* Whether the deflating happens on a writer thread. */
bool deflater_threaded(const deflater *d);

/* Stop the writer thread (what is queued is dropped unless a Z_FINISH
 * push came first) and free everything. */
void deflater_free(deflater *d);

#endif
