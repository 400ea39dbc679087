/* reader.c — pull chunks one at a time from an nytp_in, telling a clean
 * end, a cut-off file and corrupt bytes apart. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codec_decode.h"
#include "in_impl.h"
#include "nytp/reader.h"
#include "reader_impl.h"

struct nytp_reader {
    nytp_in *in;
    uint64_t chunk_no, chunk_off;
    bool chunk_inflated;
    bool header_done;
    bool inflate_next;       /* the chunk just returned was START_DEFLATE */
    bool fast;               /* the next chunk may take the fast path */
    nytp_error sticky;       /* status != 0 once reading has stopped */
    nytp_error pending;      /* raised by the next call (after its chunk) */
    nytp_warn_fn warn;
    void *warn_ctx;
    /* Processes started and not yet ended: a profile whose data stops
     * with one still open was cut short, even at a chunk boundary. */
    uint32_t open_pids[8];
    unsigned n_open, n_started;
};

int nytp_reader_open_in(nytp_reader **rp, nytp_in *in, nytp_error *err)
{
    nytp_reader *r = calloc(1, sizeof *r);
    if (!r) {
        nytp_in_close(in);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    r->in = in;
    *rp = r;
    return NYTP_OK;
}

int nytp_reader_open(nytp_reader **rp, const char *path, nytp_error *err)
{
    nytp_in *in;
    int st = nytp_in_open_file(&in, path, err);
    if (st < 0) {
        if (err) {
            err->offset = 0;
            err->inflated = false;
            err->chunk = 0;
        }
        return st;
    }
    return nytp_reader_open_in(rp, in, err);
}

int nytp_reader_open_mem(nytp_reader **rp, const void *data, size_t len, nytp_error *err)
{
    nytp_in *in;
    int st = nytp_in_open_mem(&in, data, len, err);
    if (st < 0)
        return st;
    return nytp_reader_open_in(rp, in, err);
}

void nytp_reader_close(nytp_reader *r)
{
    if (!r)
        return;
    nytp_in_close(r->in);
    free(r);
}

void nytp_reader_set_warn(nytp_reader *r, nytp_warn_fn fn, void *ctx)
{
    r->warn = fn;
    r->warn_ctx = ctx;
}

uint64_t nytp_reader_chunk_number(const nytp_reader *r) { return r->chunk_no; }
uint64_t nytp_reader_chunk_offset(const nytp_reader *r) { return r->chunk_off; }
bool nytp_reader_chunk_inflated(const nytp_reader *r) { return r->chunk_inflated; }
nytp_in *nytp_reader_input(nytp_reader *r) { return r->in; }

/* Stop reading with status and a message about the current chunk. */
static int stop(nytp_reader *r, nytp_error *err, int status, uint64_t offset, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static int stop(nytp_reader *r, nytp_error *err, int status, uint64_t offset, const char *fmt, ...)
{
    nytp_error *e = &r->sticky;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = status;
    e->offset = offset;
    e->inflated = nytp_in_inflating(r->in);
    e->deflate_start = nytp_in_deflate_start(r->in);
    e->chunk = r->chunk_no;
    if (err)
        *err = *e;
    return status;
}

/* Stop with an error the input layer reported (it knows its own offset
 * for zlib data errors). */
static int stop_io(nytp_reader *r, nytp_error *err, const nytp_error *fe)
{
    r->sticky = *fe;
    if (fe->status != NYTP_E_FORMAT) {
        r->sticky.offset = nytp_in_offset(r->in);
        r->sticky.inflated = nytp_in_inflating(r->in);
        r->sticky.deflate_start = nytp_in_deflate_start(r->in);
    }
    r->sticky.chunk = r->chunk_no;
    if (err)
        *err = r->sticky;
    return r->sticky.status;
}

static void warn(nytp_reader *r, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(nytp_reader *r, uint64_t offset, const char *fmt, ...)
{
    if (!r->warn)
        return;
    nytp_error w = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w.msg, sizeof w.msg, fmt, ap);
    va_end(ap);
    w.kind = fmt;
    w.offset = offset;
    w.inflated = nytp_in_inflating(r->in);
    w.deflate_start = nytp_in_deflate_start(r->in);
    w.chunk = r->chunk_no;
    r->warn(r->warn_ctx, &w);
}

/* What a user may give instead of a profile, and what to do about it:
 * a compressed copy of one, or Devel::DProf's tmon.out. */
static const char *foreign_format_hint(const uint8_t *p, size_t n)
{
    static const struct {
        const char *magic;
        size_t len;
        const char *hint;
    } known[] = {
        {"\x1f\x8b", 2, "this is a gzip file: gunzip it first"},
        {"BZh", 3, "this is a bzip2 file: bunzip2 it first"},
        {"\xfd" "7zXZ", 5, "this is an xz file: unxz it first"},
        {"\x28\xb5\x2f\xfd", 4, "this is a zstd file: unzstd it first"},
        {"#fOrTyTwO", 9, "this is a Devel::DProf tmon.out: convert it with 'nytp dprof-convert'"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (n >= known[i].len && memcmp(p, known[i].magic, known[i].len) == 0)
            return known[i].hint;
    return NULL;
}

/* Whether the gzip data p[0..n) (its start is enough) holds a pprof
 * profile, as 'nytp pprof' and Go write them (profile.proto): it opens
 * with field 1, sample_type, a length-delimited ValueType whose own first
 * field is 1 (type), a varint: bytes 0x0a LEN 0x08. */
static bool gzip_holds_pprof(const uint8_t *p, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return false;
    uint8_t out[8];
    z.next_in = (Bytef *)p;
    z.avail_in = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
    z.next_out = out;
    z.avail_out = sizeof out;
    int st = inflate(&z, Z_SYNC_FLUSH);
    size_t got = sizeof out - z.avail_out;
    inflateEnd(&z);
    if (st != Z_OK && st != Z_STREAM_END && st != Z_BUF_ERROR)
        return false;
    return got >= 3 && out[0] == 0x0a && out[1] >= 2 && out[1] < 0x80 && out[2] == 0x08;
}

static int read_header(nytp_reader *r, nytp_chunk *c, nytp_error *err)
{
    size_t want = 32;
    for (;;) {
        nytp_error fe = {0};
        int st = nytp_in_fill(r->in, want, &fe);
        if (st < 0)
            return stop_io(r, err, &fe);
        size_t avail;
        const uint8_t *p = nytp_in_peek(r->in, &avail);
        if (avail == 0)
            return stop(r, err, NYTP_E_FORMAT, 0,
                        "empty file, expected the header line 'NYTProf 5 0'");
        size_t used;
        const char *why = NULL;
        int d = nytp_decode_header(p, p + avail, c, &used, &why);
        if (d == NYTP_DECODE_BAD) {
            const char *hint = foreign_format_hint(p, avail);
            if (hint && p[0] == 0x1f && st != NYTP_END && avail < 512) {
                want = 512; /* enough of a gzip stream to see what it holds */
                continue;
            }
            if (hint && p[0] == 0x1f && gzip_holds_pprof(p, avail))
                hint = "this is a pprof profile (gzipped protobuf, as 'nytp pprof' writes), which "
                       "nytp cannot read: open it with 'go tool pprof'";
            if (hint)
                return stop(r, err, NYTP_E_FORMAT, 0, "not an NYTProf profile: %s", hint);
            return stop(r, err, NYTP_E_FORMAT, used,
                        "not an NYTProf profile: expected %s", why);
        }
        if (d == NYTP_DECODE_NEED_MORE) {
            if (st == NYTP_END || used > 64) {
                if (used > 64)
                    return stop(r, err, NYTP_E_FORMAT, 0,
                                "not an NYTProf profile: header line too long");
                return stop(r, err, NYTP_E_TRUNCATED, avail,
                            "the file ends inside the header line");
            }
            want = used;
            continue;
        }
        nytp_in_skip(r->in, used);
        r->header_done = true;
        if (c->u.version.major != NYTP_FORMAT_MAJOR)
            return stop(r, err, NYTP_E_VERSION, 0,
                        "profile format version %u.%u is not supported (nytp reads version %d.x)",
                        c->u.version.major, c->u.version.minor, NYTP_FORMAT_MAJOR);
        if (c->u.version.minor > NYTP_FORMAT_MINOR)
            warn(r, 0,
                 "profile format version %u.%u is newer than %d.%d; reading it as %d.%d, errors are likely",
                 c->u.version.major, c->u.version.minor, NYTP_FORMAT_MAJOR, NYTP_FORMAT_MINOR,
                 NYTP_FORMAT_MAJOR, NYTP_FORMAT_MINOR);
        r->chunk_off = 0;
        r->chunk_inflated = false;
        return NYTP_OK;
    }
}

static bool str_is(nytp_str s, const char *lit)
{
    size_t n = strlen(lit);
    return s.len == n && memcmp(s.ptr, lit, n) == 0;
}

/* "a TIME_LINE", "an ATTRIBUTE" */
static const char *article(const char *name)
{
    return name && strchr("AEIOU", name[0]) ? "an" : "a";
}

static void pid_started(nytp_reader *r, uint32_t pid)
{
    r->n_started++;
    if (r->n_open < sizeof r->open_pids / sizeof r->open_pids[0])
        r->open_pids[r->n_open] = pid;
    r->n_open++;
}

static void pid_ended(nytp_reader *r, uint32_t pid)
{
    unsigned kept = r->n_open < 8 ? r->n_open : 8;
    for (unsigned i = 0; i < kept; i++) {
        if (r->open_pids[i] == pid) {
            r->open_pids[i] = r->open_pids[kept - 1];
            r->n_open--;
            return;
        }
    }
    if (r->n_open > kept) /* more than we track: count it off */
        r->n_open--;
}

/* The data ended cleanly at a chunk boundary: complete, or cut short? */
static int at_end(nytp_reader *r, nytp_error *err)
{
    uint64_t off = nytp_in_offset(r->in);
    r->chunk_no++; /* the chunk that never came */
    if (r->n_started == 0)
        return stop(r, err, NYTP_E_TRUNCATED, off,
                    "the data ends before any process started (no PID_START): the file was cut short");
    if (r->n_open > 0)
        return stop(r, err, NYTP_E_TRUNCATED, off,
                    "the data ends while process %u is still running (no PID_END): the file was cut short",
                    r->open_pids[0]);
    r->chunk_no--;
    return NYTP_END;
}

/* The chunk was decoded; apply the rules that need a look at its content.
 * Returns 1 to hand it to the caller, 0 to skip it, or an error. */
static int check_chunk(nytp_reader *r, nytp_chunk *c, nytp_error *err)
{
    switch (c->tag) {
    case NYTP_TAG_PID_START:
        pid_started(r, c->u.pid_start.pid);
        return 1;
    case NYTP_TAG_PID_END:
        pid_ended(r, c->u.pid_end.pid);
        return 1;
    case NYTP_TAG_START_DEFLATE:
        if (nytp_in_inflating(r->in))
            return stop(r, err, NYTP_E_FORMAT, r->chunk_off,
                        "START_DEFLATE inside data that is already compressed");
        r->inflate_next = true;
        return 1;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION:
        if (!c->u.kv.value.ptr) {
            warn(r, r->chunk_off, "%s line without '=' ignored: '%.*s'",
                 c->tag == NYTP_TAG_ATTRIBUTE ? "attribute" : "option",
                 (int)(c->u.kv.key.len > 80 ? 80 : c->u.kv.key.len), c->u.kv.key.ptr);
            return 0;
        }
        if (c->tag == NYTP_TAG_ATTRIBUTE && str_is(c->u.kv.key, "nv_size") &&
            !str_is(c->u.kv.value, "8")) {
            /* Hand the attribute over, then stop: the numbers that follow
             * cannot be read. */
            nytp_error *e = &r->pending;
            e->status = NYTP_E_FORMAT;
            e->offset = r->chunk_off;
            e->inflated = r->chunk_inflated;
            e->deflate_start = nytp_in_deflate_start(r->in);
            e->chunk = r->chunk_no;
            snprintf(e->msg, sizeof e->msg,
                     "nv_size=%.*s: only profiles written with 8-byte floating point numbers (nv_size=8) are supported",
                     (int)(c->u.kv.value.len > 20 ? 20 : c->u.kv.value.len), c->u.kv.value.ptr);
        }
        return 1;
    default:
        return 1;
    }
}

/* Everything but the common case: errors, the header, the switch to
 * inflate, refilling the window, and chunks with rules of their own. */
static __attribute__((noinline)) int next_slow(nytp_reader *r, nytp_chunk *c, nytp_error *err)
{
    if (r->sticky.status) {
        if (err)
            *err = r->sticky;
        return r->sticky.status;
    }
    if (r->pending.status) {
        r->sticky = r->pending;
        if (err)
            *err = r->sticky;
        return r->sticky.status;
    }
    if (!r->header_done)
        return read_header(r, c, err);
    if (r->inflate_next) {
        r->inflate_next = false;
        nytp_error fe = {0};
        int st = nytp_in_start_inflate(r->in, &fe);
        if (st < 0)
            return stop_io(r, err, &fe);
    }
    for (;;) {
        size_t avail;
        const uint8_t *p = nytp_in_peek(r->in, &avail);
        if (avail == 0) {
            nytp_error fe = {0};
            int st = nytp_in_fill(r->in, 1, &fe);
            if (st == NYTP_END)
                return at_end(r, err);
            if (st < 0) {
                if (st == NYTP_E_TRUNCATED) {
                    r->chunk_no++;
                    return stop(r, err, st, nytp_in_offset(r->in),
                                "the zlib stream stops without its end after chunk %llu (the file was cut short)",
                                (unsigned long long)r->chunk_no - 1);
                }
                return stop_io(r, err, &fe);
            }
            continue;
        }
        r->chunk_no++;
        r->chunk_off = nytp_in_offset(r->in);
        r->chunk_inflated = nytp_in_inflating(r->in);
        for (;;) {
            size_t used;
            const char *why = NULL;
            int d = nytp_decode_chunk(p, p + avail, c, &used, &why);
            if (d == NYTP_DECODE_OK) {
                nytp_in_skip(r->in, used);
                break;
            }
            if (d == NYTP_DECODE_BAD) {
                const char *name = nytp_tag_name(*p);
                if (why == nytp_why_tag)
                    return stop(r, err, NYTP_E_FORMAT, r->chunk_off,
                                "expected a chunk tag, found byte 0x%02x", *p);
                if (why == nytp_why_string_length) {
                    uint32_t len = 0;
                    nytp_decode_u32(p + used + 1, p + avail, &len);
                    return stop(r, err, NYTP_E_FORMAT, r->chunk_off + used,
                                "in %s %s chunk: a string length of %u bytes, over the %u MiB limit",
                                article(name), name, len, NYTP_STR_LIMIT >> 20);
                }
                if (why == nytp_why_string_tag)
                    return stop(r, err, NYTP_E_FORMAT, r->chunk_off + used,
                                "in %s %s chunk: expected %s, found byte 0x%02x", article(name),
                                name, why, p[used]);
                return stop(r, err, NYTP_E_FORMAT, r->chunk_off + used, "in %s %s chunk: expected %s",
                            article(name), name, why);
            }
            /* The chunk is decoded again from its start once more bytes
             * are in.  A text line (COMMENT, ATTRIBUTE, OPTION) only says
             * it needs one byte more than there is; a pipe gives 64 KiB a
             * read, so a line of n bytes would be scanned n / 64 KiB
             * times.  Asking for twice what is buffered makes the scans
             * add up to O(n); at the end of the input what came is
             * decoded once more before the chunk is called cut short. */
            size_t want = used;
            if (want == avail + 1 && want < 2 * avail)
                want = 2 * avail;
            size_t before = avail;
            nytp_error fe = {0};
            int st = nytp_in_fill(r->in, want, &fe);
            p = nytp_in_peek(r->in, &avail);
            if (st == NYTP_OK || (st == NYTP_END && avail >= used && avail > before))
                continue;
            const char *name = nytp_tag_name(*p);
            if (st == NYTP_END && nytp_in_stream_ended(r->in))
                return stop(r, err, NYTP_E_FORMAT, r->chunk_off + avail,
                            "the compressed data ends inside %s %s chunk that needs at least %zu bytes, %zu present",
                            article(name), name, used, avail);
            if (st == NYTP_END || st == NYTP_E_TRUNCATED)
                return stop(r, err, NYTP_E_TRUNCATED, r->chunk_off,
                            "the data ends inside %s %s chunk (it needs at least %zu bytes, %zu present)",
                            article(name), name, used, avail);
            return stop_io(r, err, &fe);
        }
        int keep = check_chunk(r, c, err);
        if (keep < 0)
            return keep;
        if (keep)
            return NYTP_OK;
        p = nytp_in_peek(r->in, &avail);
    }
}

/* Chunks that need no look at their content after decoding (see
 * check_chunk) may be returned by the fast path. */
static const bool plain_chunk[256] = {
    [NYTP_TAG_TIME_LINE] = true,  [NYTP_TAG_TIME_BLOCK] = true, [NYTP_TAG_DISCOUNT] = true,
    [NYTP_TAG_SUB_RETURN] = true, [NYTP_TAG_SUB_ENTRY] = true,  [NYTP_TAG_SRC_LINE] = true,
    [NYTP_TAG_SUB_INFO] = true,   [NYTP_TAG_SUB_CALLERS] = true, [NYTP_TAG_NEW_FID] = true,
    [NYTP_TAG_COMMENT] = true,
};

int nytp_reader_next(nytp_reader *r, nytp_chunk *c, nytp_error *err)
{
    if (__builtin_expect(r->fast, 1)) {
        /* The common case, kept small so it inlines the decoder: a whole
         * chunk is in the window and needs no further checks. */
        nytp_in *in = r->in;
        const uint8_t *p = in->data + in->pos;
        size_t avail = in->lim - in->pos;
        size_t used;
        const char *why;
        if (avail && plain_chunk[*p] &&
            nytp_decode_chunk_inline(p, p + avail, c, &used, &why) == NYTP_DECODE_OK) {
            r->chunk_no++;
            r->chunk_off = in->base + in->pos;
            r->chunk_inflated = in->inflating;
            in->pos += used;
            return NYTP_OK;
        }
    }
    int st = next_slow(r, c, err);
    r->fast = r->header_done && !r->inflate_next && !r->sticky.status && !r->pending.status;
    return st;
}

bool nytp_reader_window(nytp_reader *r, const uint8_t **start, const uint8_t **end)
{
    if (!r->fast)
        return false;
    nytp_in *in = r->in;
    *start = in->data + in->pos;
    *end = in->data + in->lim;
    return in->pos < in->lim;
}

void nytp_reader_took(nytp_reader *r, const uint8_t *to, const uint8_t *last, uint64_t chunks)
{
    nytp_in *in = r->in;
    r->chunk_no += chunks;
    r->chunk_off = in->base + (uint64_t)(last - in->data);
    r->chunk_inflated = in->inflating;
    in->pos = (size_t)(to - in->data);
}

int nytp_reader_foreach(nytp_reader *r, nytp_chunk_fn fn, void *ctx, nytp_error *err)
{
    nytp_chunk c;
    int st;
    while ((st = nytp_reader_next(r, &c, err)) == NYTP_OK) {
        int rc = fn(ctx, &c);
        if (rc)
            return rc;
    }
    return st == NYTP_END ? NYTP_OK : st;
}
