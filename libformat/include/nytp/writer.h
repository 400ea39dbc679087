/* nytp/writer.h — write an NYTProf v5 file, one call per chunk.
 *
 *     nytp_out *o;  nytp_writer *w;
 *     nytp_out_open_file(&o, "x.out", NYTP_OUT_ATOMIC, &e);
 *     nytp_writer_open(&w, o, &e);            // takes ownership of o
 *     nytp_write_header(w, 5, 0);
 *     nytp_write_attribute(w, "ticks_per_sec", "10000000");
 *     nytp_write_start_deflate(w, 6);         // writes the '#' note and 'z'
 *     nytp_write_time_line(w, 31, 1, 8);
 *     ...
 *     nytp_writer_close(w, &e);               // ends zlib, adds the trailer
 *
 * Errors are sticky: the first failure is kept, every later call returns
 * it, and nytp_writer_close reports it (and discards an atomic file).
 */
#ifndef NYTP_WRITER_H
#define NYTP_WRITER_H

#include "nytp/codec.h"
#include "nytp/io.h"

typedef struct nytp_writer nytp_writer;

int nytp_writer_open(nytp_writer **w, nytp_out *out, nytp_error *err);
/* Finish and free; NYTP_OK or the first error. */
int nytp_writer_close(nytp_writer *w, nytp_error *err);
/* For a writer on a memory out (nytp_out_open_mem): finish as
 * nytp_writer_close does and hand the file's bytes to the caller (free()
 * them).  NYTP_OK or the first error (then nothing is handed over). */
int nytp_writer_close_mem(nytp_writer *w, uint8_t **data, size_t *len, nytp_error *err);
/* Discard everything (an atomic file is removed) and free. */
void nytp_writer_abort(nytp_writer *w);
const nytp_error *nytp_writer_error(const nytp_writer *w);
nytp_out *nytp_writer_out(nytp_writer *w);

#define NYTP_DEFAULT_COMPRESSION 6

/* Any chunk, as the reader returns it.  A START_DEFLATE chunk switches to
 * deflate at NYTP_DEFAULT_COMPRESSION (the reader does not know the level
 * a file was written with). */
int nytp_write_chunk(nytp_writer *w, const nytp_chunk *c);

int nytp_write_header(nytp_writer *w, uint32_t major, uint32_t minor);
/* text without the final newline; it may not contain one. */
int nytp_write_comment(nytp_writer *w, const char *text);
int nytp_write_attribute(nytp_writer *w, const char *key, const char *value);
int nytp_write_option(nytp_writer *w, const char *key, const char *value);
/* Writes "#Compressed at level N with zlib V", then 'z', then deflates.
 * Level 0 writes nothing and stays plain, as Devel::NYTProf does. */
int nytp_write_start_deflate(nytp_writer *w, int level);
int nytp_write_pid_start(nytp_writer *w, uint32_t pid, uint32_t ppid, double time);
int nytp_write_pid_end(nytp_writer *w, uint32_t pid, double time);
int nytp_write_new_fid(nytp_writer *w, uint32_t fid, uint32_t eval_fid,
                       uint32_t eval_line, uint32_t flags, uint32_t size,
                       uint32_t mtime, nytp_str name);
int nytp_write_time_line(nytp_writer *w, int32_t ticks, uint32_t fid, uint32_t line);
int nytp_write_time_block(nytp_writer *w, int32_t ticks, uint32_t fid, uint32_t line,
                          uint32_t block_line, uint32_t sub_line);
int nytp_write_discount(nytp_writer *w);
int nytp_write_sub_info(nytp_writer *w, uint32_t fid, uint32_t first_line,
                        uint32_t last_line, nytp_str name);
int nytp_write_sub_callers(nytp_writer *w, uint32_t fid, uint32_t line,
                           uint32_t count, double incl, double excl, double reci,
                           uint32_t rec_depth, nytp_str called, nytp_str caller);
int nytp_write_src_line(nytp_writer *w, uint32_t fid, uint32_t line, nytp_str text);
int nytp_write_sub_entry(nytp_writer *w, uint32_t fid, uint32_t line);
int nytp_write_sub_return(nytp_writer *w, uint32_t depth, double incl, double excl,
                          nytp_str name);

/* A byte string from a C string (handy for the calls above). */
static inline nytp_str nytp_cstr(const char *s, bool utf8)
{
    nytp_str r;
    size_t n = 0;
    while (s[n])
        n++;
    r.ptr = s;
    r.len = (uint32_t)n;
    r.utf8 = utf8;
    return r;
}

#endif
