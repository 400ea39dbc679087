/* writer.c — one call per chunk kind, all through nytp_encode_chunk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "nytp/encode.h"
#include "nytp/writer.h"
#include "out_impl.h"

/* ob first: the inline writers of nytp/writer_inline.h find the output's
 * buffer through it. */
struct nytp_writer {
    nytp_outbuf *ob;
    nytp_out *out;
    nytp_error err;
};

/* An error of the writer's own: sticky, and the output takes no more
 * bytes, from the inline writers either. */
static int writer_fail(nytp_writer *w)
{
    if (w->out->err.status == 0)
        w->out->err = w->err;
    out_sync_limit(w->out);
    return w->err.status;
}

int nytp_writer_open(nytp_writer **wp, nytp_out *out, nytp_error *err)
{
    nytp_writer *w = calloc(1, sizeof *w);
    if (!w) {
        nytp_out_abort(out);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    w->out = out;
    w->ob = &out->ob;
    *wp = w;
    return NYTP_OK;
}

nytp_out *nytp_writer_out(nytp_writer *w) { return w->out; }

const nytp_error *nytp_writer_error(const nytp_writer *w)
{
    if (w->err.status)
        return &w->err;
    return nytp_out_error(w->out);
}

/* Close w's out as a file (data NULL) or a memory out, or abort it after
 * an error of the writer's own; free w. */
static int close_writer(nytp_writer *w, uint8_t **data, size_t *len, nytp_error *err)
{
    int st;
    if (w->err.status) {
        st = w->err.status;
        if (err)
            *err = w->err;
        nytp_out_abort(w->out);
    } else if (data) {
        st = nytp_out_close_mem(w->out, data, len, err);
    } else {
        st = nytp_out_close(w->out, err);
    }
    free(w);
    return st;
}

int nytp_writer_close(nytp_writer *w, nytp_error *err)
{
    return close_writer(w, NULL, NULL, err);
}

int nytp_writer_close_mem(nytp_writer *w, uint8_t **data, size_t *len, nytp_error *err)
{
    *data = NULL;
    *len = 0;
    return close_writer(w, data, len, err);
}

void nytp_writer_abort(nytp_writer *w)
{
    if (!w)
        return;
    nytp_out_abort(w->out);
    free(w);
}

/* Devel::NYTProf's reader (NYTP_gets, 6.x) reads the text chunks
 * (ATTRIBUTE, OPTION, COMMENT) of a compressed stream wrongly when one
 * runs over the end of the 160 KiB it inflates at a time: the part after
 * the boundary overwrites the part before, so it loses the attribute
 * and warns "attribute malformed".  Its boundaries fall at multiples of
 * this size in the inflated stream. */
#define ORACLE_INFLATE_SIZE (4096u * 40u)

/* Before a text chunk of line bytes inside a compressed stream whose line
 * would cross one of Devel::NYTProf's boundaries: a COMMENT that ends
 * where the line then begins, on the boundary (or, with room for only
 * its tag, a COMMENT of a newline alone, after which the chunk's tag
 * takes the place before the boundary). */
static int pad_text_chunk(nytp_writer *w, size_t line)
{
    static const char why[] = "(padding: Devel::NYTProf's reader splits a line it inflates"
                              " across two buffers)";
    nytp_out *o = w->out;
    if (!o->def || line >= ORACLE_INFLATE_SIZE)
        return NYTP_OK; /* (a line that long cannot be helped) */
    uint64_t at = o->ob.total - o->deflate_base; /* the tag's offset */
    uint64_t first = at + 1, last = at + line;   /* the line's first and last byte */
    if (first / ORACLE_INFLATE_SIZE == last / ORACLE_INFLATE_SIZE)
        return NYTP_OK;
    uint64_t boundary = (first / ORACLE_INFLATE_SIZE + 1) * ORACLE_INFLATE_SIZE;
    size_t pad = (size_t)(boundary - 1 - at); /* to put the tag just before it */
    size_t body = pad >= 2 ? pad - 2 : 0;
    uint8_t *p = nytp_out_reserve(o, body + 2);
    if (!p)
        return nytp_out_error(o)->status;
    p[0] = NYTP_TAG_COMMENT;
    for (size_t i = 0; i < body; i++)
        p[1 + i] = i < sizeof why - 1 ? (uint8_t)why[i] : (uint8_t)' ';
    p[1 + body] = '\n';
    nytp_out_commit(o, body + 2);
    return NYTP_OK;
}

/* Encode c into the out, without any switch of compression. */
static int emit(nytp_writer *w, const nytp_chunk *c)
{
    if (w->err.status)
        return w->err.status;
    size_t line = nytp_chunk_line_size(c);
    if (line) {
        int st = pad_text_chunk(w, line);
        if (st < 0)
            return st;
    }
    uint8_t *p = nytp_out_reserve(w->out, nytp_chunk_max_size(c));
    if (!p)
        return nytp_out_error(w->out)->status;
    size_t n = nytp_encode_chunk(p, c);
    if (n == 0) {
        const char *name = nytp_tag_name(c->tag);
        nytp_error_set(&w->err, NYTP_E_USAGE,
                       "cannot encode a %s chunk (a newline or '=' where none may be, or an unknown kind)",
                       name ? name : "unknown");
        return writer_fail(w);
    }
    nytp_out_commit(w->out, n);
    return NYTP_OK;
}

int nytp_write_chunk(nytp_writer *w, const nytp_chunk *c)
{
    int st = emit(w, c);
    if (st == NYTP_OK && c->tag == NYTP_TAG_START_DEFLATE) {
        st = nytp_out_start_deflate(w->out, NYTP_DEFAULT_COMPRESSION);
        if (st > 0)
            st = NYTP_OK;
    }
    return st;
}

int nytp_write_header(nytp_writer *w, uint32_t major, uint32_t minor)
{
    nytp_chunk c = {.tag = NYTP_TAG_VERSION};
    c.u.version.major = major;
    c.u.version.minor = minor;
    return nytp_write_chunk(w, &c);
}

int nytp_write_comment(nytp_writer *w, const char *text)
{
    nytp_chunk c = {.tag = NYTP_TAG_COMMENT};
    c.u.comment.text = nytp_cstr(text, false);
    return nytp_write_chunk(w, &c);
}

static int write_kv(nytp_writer *w, int tag, const char *key, const char *value)
{
    nytp_chunk c = {.tag = (enum nytp_tag)tag};
    c.u.kv.key = nytp_cstr(key, false);
    c.u.kv.value = nytp_cstr(value, false);
    return nytp_write_chunk(w, &c);
}

int nytp_write_attribute(nytp_writer *w, const char *key, const char *value)
{
    return write_kv(w, NYTP_TAG_ATTRIBUTE, key, value);
}

int nytp_write_option(nytp_writer *w, const char *key, const char *value)
{
    return write_kv(w, NYTP_TAG_OPTION, key, value);
}

int nytp_write_start_deflate(nytp_writer *w, int level)
{
    if (level == 0)
        return w->err.status;
    if (level < 0 || level > 9) {
        nytp_error_set(&w->err, NYTP_E_USAGE, "compression level %d is not 0..9", level);
        return writer_fail(w);
    }
    char note[96];
    snprintf(note, sizeof note, "Compressed at level %d with zlib %s", level, zlibVersion());
    int st = nytp_write_comment(w, note);
    if (st < 0)
        return st;
    nytp_chunk c = {.tag = NYTP_TAG_START_DEFLATE};
    st = emit(w, &c);
    if (st < 0)
        return st;
    st = nytp_out_start_deflate(w->out, level);
    return st < 0 ? st : NYTP_OK;
}

int nytp_write_pid_start(nytp_writer *w, uint32_t pid, uint32_t ppid, double time)
{
    nytp_chunk c = {.tag = NYTP_TAG_PID_START};
    c.u.pid_start.pid = pid;
    c.u.pid_start.ppid = ppid;
    c.u.pid_start.time = time;
    return nytp_write_chunk(w, &c);
}

int nytp_write_pid_end(nytp_writer *w, uint32_t pid, double time)
{
    nytp_chunk c = {.tag = NYTP_TAG_PID_END};
    c.u.pid_end.pid = pid;
    c.u.pid_end.time = time;
    return nytp_write_chunk(w, &c);
}

int nytp_write_new_fid(nytp_writer *w, uint32_t fid, uint32_t eval_fid, uint32_t eval_line,
                       uint32_t flags, uint32_t size, uint32_t mtime, nytp_str name)
{
    nytp_chunk c = {.tag = NYTP_TAG_NEW_FID};
    c.u.new_fid.fid = fid;
    c.u.new_fid.eval_fid = eval_fid;
    c.u.new_fid.eval_line = eval_line;
    c.u.new_fid.flags = flags;
    c.u.new_fid.size = size;
    c.u.new_fid.mtime = mtime;
    c.u.new_fid.name = name;
    return nytp_write_chunk(w, &c);
}

/* The chunks a profiler writes per statement or per call skip
 * nytp_write_chunk: the same bytes, encoded straight into the output's
 * buffer. */
int nytp_write_time_line(nytp_writer *w, int32_t ticks, uint32_t fid, uint32_t line)
{
    if (w->err.status)
        return w->err.status;
    uint8_t *p = out_reserve_inline(w->out, NYTP_TIME_CHUNK_MAX);
    if (!p)
        return nytp_out_error(w->out)->status;
    out_commit_inline(w->out, nytp_encode_time_line_inline(p, ticks, fid, line));
    return NYTP_OK;
}

int nytp_write_time_block(nytp_writer *w, int32_t ticks, uint32_t fid, uint32_t line,
                          uint32_t block_line, uint32_t sub_line)
{
    if (w->err.status)
        return w->err.status;
    uint8_t *p = out_reserve_inline(w->out, NYTP_TIME_CHUNK_MAX);
    if (!p)
        return nytp_out_error(w->out)->status;
    out_commit_inline(w->out,
                      nytp_encode_time_block_inline(p, ticks, fid, line, block_line, sub_line));
    return NYTP_OK;
}

int nytp_write_discount(nytp_writer *w)
{
    if (w->err.status)
        return w->err.status;
    uint8_t *p = out_reserve_inline(w->out, 1);
    if (!p)
        return nytp_out_error(w->out)->status;
    out_commit_inline(w->out, nytp_encode_discount_inline(p));
    return NYTP_OK;
}

int nytp_write_sub_info(nytp_writer *w, uint32_t fid, uint32_t first_line, uint32_t last_line,
                        nytp_str name)
{
    nytp_chunk c = {.tag = NYTP_TAG_SUB_INFO};
    c.u.sub_info.fid = fid;
    c.u.sub_info.first_line = first_line;
    c.u.sub_info.last_line = last_line;
    c.u.sub_info.name = name;
    return nytp_write_chunk(w, &c);
}

int nytp_write_sub_callers(nytp_writer *w, uint32_t fid, uint32_t line, uint32_t count,
                           double incl, double excl, double reci, uint32_t rec_depth,
                           nytp_str called, nytp_str caller)
{
    nytp_chunk c = {.tag = NYTP_TAG_SUB_CALLERS};
    c.u.sub_callers.fid = fid;
    c.u.sub_callers.line = line;
    c.u.sub_callers.count = count;
    c.u.sub_callers.incl = incl;
    c.u.sub_callers.excl = excl;
    c.u.sub_callers.reci = reci;
    c.u.sub_callers.rec_depth = rec_depth;
    c.u.sub_callers.called = called;
    c.u.sub_callers.caller = caller;
    return nytp_write_chunk(w, &c);
}

int nytp_write_src_line(nytp_writer *w, uint32_t fid, uint32_t line, nytp_str text)
{
    nytp_chunk c = {.tag = NYTP_TAG_SRC_LINE};
    c.u.src_line.fid = fid;
    c.u.src_line.line = line;
    c.u.src_line.text = text;
    return nytp_write_chunk(w, &c);
}

int nytp_write_sub_entry(nytp_writer *w, uint32_t fid, uint32_t line)
{
    nytp_chunk c = {.tag = NYTP_TAG_SUB_ENTRY};
    c.u.sub_entry.fid = fid;
    c.u.sub_entry.line = line;
    return nytp_write_chunk(w, &c);
}

int nytp_write_sub_return(nytp_writer *w, uint32_t depth, double incl, double excl,
                          nytp_str name)
{
    /* one per call: the fast path too */
    if (w->err.status)
        return w->err.status;
    uint8_t *p = out_reserve_inline(w->out, NYTP_SUB_RETURN_MAX(name.len));
    if (!p)
        return nytp_out_error(w->out)->status;
    out_commit_inline(w->out, nytp_encode_sub_return_inline(p, depth, incl, excl, name));
    return NYTP_OK;
}
