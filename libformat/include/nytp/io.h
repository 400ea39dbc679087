/* nytp/io.h — byte input and output, plain or zlib, over files, standard
 * input/output and memory.
 *
 * nytp_in gives a window of buffered bytes (peek), consumed with skip and
 * extended with fill.  After nytp_in_start_inflate everything that follows
 * is one zlib stream, inflated on the fly; when that stream ends the input
 * ends, and anything after it in the file (trailer comments) is ignored.
 *
 * nytp_out collects bytes in a buffer (reserve/commit or write) and can
 * switch to deflate at any point.  A file opened with NYTP_OUT_ATOMIC is
 * written under a temporary name in the same directory and renamed over
 * the target only by a successful nytp_out_close, so a failure never
 * leaves a half-written file; nytp_out_abort removes it.  That is for
 * regular files and new paths only: a symbolic link is followed to its
 * final target, which is replaced in its own directory (the link stays);
 * a device, FIFO, socket or an open file of /proc (/dev/stdout, /dev/fd/N)
 * is written straight into, never replaced.
 */
#ifndef NYTP_IO_H
#define NYTP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nytp/error.h"

/* ---- input ------------------------------------------------------------- */

typedef struct nytp_in nytp_in;

/* path "-" reads standard input. */
int nytp_in_open_file(nytp_in **in, const char *path, nytp_error *err);
/* Reads fd until end of file; closes it at nytp_in_close if close_fd. */
int nytp_in_open_fd(nytp_in **in, int fd, bool close_fd, nytp_error *err);
/* Reads len bytes at data, which must stay valid until nytp_in_close. */
int nytp_in_open_mem(nytp_in **in, const void *data, size_t len, nytp_error *err);
void nytp_in_close(nytp_in *in);

/* Bytes buffered at the current position; *avail says how many. */
const uint8_t *nytp_in_peek(const nytp_in *in, size_t *avail);
/* Consume n bytes (n <= avail). */
void nytp_in_skip(nytp_in *in, size_t n);
/* Try to have at least want bytes buffered.  Returns NYTP_OK when it has
 * them, NYTP_END when the input ended first (what there is stays
 * buffered), or an error: I/O, a zlib data error (NYTP_E_FORMAT), or a zlib
 * stream that stops without its end (NYTP_E_TRUNCATED). */
int nytp_in_fill(nytp_in *in, size_t want, nytp_error *err);

/* Whether inflating may use a second thread (default: yes, unless the
 * environment has NYTP_THREADS=0).  Call before nytp_in_start_inflate. */
void nytp_in_set_threads(nytp_in *in, bool on);

/* Which inflater to use: "isal" (Intel ISA-L, the default in builds that
 * have it) or "zlib" (the environment can choose: NYTP_INFLATE=zlib|isal).
 * Both give the same bytes, statuses, messages and offsets: when ISA-L
 * stops without the stream's end, zlib inflates it again to say why.
 * (Except that ISA-L accepts a block with an incomplete Huffman code,
 * which no zlib-based writer makes, if its data and adler32 are good.)  Input
 * that cannot be read twice (a pipe) is always inflated with zlib.  Call
 * before nytp_in_start_inflate; NYTP_E_USAGE for a name not in the build. */
int nytp_in_set_inflater(nytp_in *in, const char *name, nytp_error *err);
/* "isal" or "zlib": the inflater chosen (after nytp_in_start_inflate: the
 * one actually inflating). */
const char *nytp_in_inflater(const nytp_in *in);

/* Switch to inflating: the bytes after the current position are a zlib
 * stream.  Unless threads are off, a producer thread inflates ahead of the
 * reader from here on. */
int nytp_in_start_inflate(nytp_in *in, nytp_error *err);
bool nytp_in_inflating(const nytp_in *in);
/* True once the zlib stream has reached its proper end. */
bool nytp_in_stream_ended(const nytp_in *in);
/* Offset of the current position: in the file, or in the inflated data. */
uint64_t nytp_in_offset(const nytp_in *in);
/* File offset where the zlib stream starts (0 before inflating). */
uint64_t nytp_in_deflate_start(const nytp_in *in);

/* Inflate and discard everything left; *bytes gets the inflated size.
 * Exists so benchmarks can time zlib alone through the same I/O path. */
int nytp_in_drain(nytp_in *in, uint64_t *bytes, nytp_error *err);

/* ---- output ------------------------------------------------------------ */

typedef struct nytp_out nytp_out;

enum nytp_out_flags {
    NYTP_OUT_ATOMIC = 1     /* temporary name, renamed at close */
};

/* path "-" writes standard output (never atomic).  NYTP_OUT_ATOMIC: see
 * the top of this file; a replaced file keeps its permissions (and its
 * owner, where the process may give it), and replacing one needs the right
 * to write it, as the shell's '>' does.  A directory is an error. */
int nytp_out_open_file(nytp_out **out, const char *path, unsigned flags, nytp_error *err);
/* Where an atomic out is written until nytp_out_close renames it into
 * place; NULL when it writes straight into its file.  For removing it when
 * the process is killed (the string lives until close or abort). */
const char *nytp_out_temp_path(const nytp_out *out);
/* The path that writing to path reaches: a symbolic link, or a chain of
 * them, is followed to its final target, which need not exist (a dangling
 * link: the target is what gets created).  A link in /proc (where
 * /dev/stdout and /dev/fd/N lead) names an open file, not a path: it is
 * not followed and *magic is set.  Returns a malloc'd string, or NULL with
 * err set (a loop of links, out of memory). */
char *nytp_path_follow_links(const char *path, bool *magic, nytp_error *err);
int nytp_out_open_fd(nytp_out **out, int fd, bool close_fd, nytp_error *err);
/* For an output whose descriptor lives in a process that may close
 * descriptors it did not open (a daemon closing them all) and then open
 * files that get the same number: before each write, check that the
 * descriptor is still the regular file path was when guarded (its device
 * and inode).  If it is not, the descriptor is never written again: path
 * is opened anew and, if it is still that file, writing goes on there at
 * the same offset; else the output fails (NYTP_E_IO, naming path), and
 * the descriptor is not closed either, being another's now.  The
 * descriptor is also moved above the numbers a program reuses first
 * (NYTP_OUT_GUARD_FD_MIN and up, where the limit allows).  Does nothing
 * for a descriptor that is not a regular file (a device, a FIFO). */
#define NYTP_OUT_GUARD_FD_MIN 100
int nytp_out_guard_fd(nytp_out *out, const char *path, nytp_error *err);
/* Collect everything in memory; see nytp_out_mem_data. */
int nytp_out_open_mem(nytp_out **out, nytp_error *err);

/* Space for n bytes at the end of the buffer, or NULL on error (then
 * nytp_out_error says why).  Follow with nytp_out_commit(out, used).
 * errno is left as it was, also when the buffer is handed on. */
uint8_t *nytp_out_reserve(nytp_out *out, size_t n);
void nytp_out_commit(nytp_out *out, size_t n);
int nytp_out_write(nytp_out *out, const void *data, size_t len);
int nytp_out_printf(nytp_out *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether deflating happens on a writer thread of the out (default: yes,
 * unless the environment has NYTP_THREADS=0): the caller's thread then
 * only fills buffers, and waits only when the writer is a few buffers
 * (about 1 MB) behind; the bytes written are the same.  A flush or close
 * returns once everything is written.  The thread blocks all signals.
 * After fork the child must not use the parent's out, only
 * nytp_out_abort it (which then releases memory and the descriptor).
 * Call before nytp_out_start_deflate. */
void nytp_out_set_threads(nytp_out *out, bool on);

/* Which deflater to use: "zlib" (the default; the environment can choose:
 * NYTP_DEFLATE=zlib|isal) or "isal" (Intel ISA-L, in builds that have it:
 * many times faster than zlib at level 6, a stream about 40% larger;
 * levels 1, 2-6 and 7-9 become ISA-L's 1, 2 and 3, level 0 stays
 * zlib's).  Both write a zlib stream any inflater reads.  Call before
 * nytp_out_start_deflate; NYTP_E_USAGE for a name not in the build. */
int nytp_out_set_deflater(nytp_out *out, const char *name, nytp_error *err);
/* "zlib" or "isal": the deflater chosen. */
const char *nytp_out_deflater(const nytp_out *out);

/* From here on, deflate at level (0..9). */
int nytp_out_start_deflate(nytp_out *out, int level);
/* The same as a gzip (RFC 1952) stream, what .gz readers expect: the
 * file is one gzip member, with no trailer comment after it. */
int nytp_out_start_gzip(nytp_out *out, int level);
bool nytp_out_deflating(const nytp_out *out);
/* Push buffered bytes to the file (a zlib sync flush when deflating). */
int nytp_out_flush(nytp_out *out);
/* Bytes handed to the out so far (before compression). */
uint64_t nytp_out_total(const nytp_out *out);

/* The first error, if any (sticky: later calls fail the same way). */
const nytp_error *nytp_out_error(const nytp_out *out);
/* Make status (with msg) out's error, unless it has one: nothing more is
 * written, and closing reports it.  For a writer that ran out of memory
 * on its own, so that a report with a part missing is never taken for
 * a whole one.  Returns out's error status. */
int nytp_out_fail(nytp_out *out, int status, const char *msg);

/* Finish: end the zlib stream and append its trailer comment, flush,
 * close, and rename an atomic file into place.  Frees out. */
int nytp_out_close(nytp_out *out, nytp_error *err);
/* Give up: discard what was written (an atomic file is removed).  Frees out. */
void nytp_out_abort(nytp_out *out);

/* Memory outs: the bytes so far (valid until the next call on out; while
 * deflating, only what a flush pushed out). */
const uint8_t *nytp_out_mem_data(const nytp_out *out, size_t *len);
/* Memory outs: close and hand the buffer to the caller (free() it). */
int nytp_out_close_mem(nytp_out *out, uint8_t **data, size_t *len, nytp_error *err);

#endif
