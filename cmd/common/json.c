/* json.c — the commands' JSON writer (json.h).  Each call reserves room
 * in the output once and writes its comma and its text into it, so the
 * writer costs little more than the text itself (speedscope writes
 * millions of events with it). */
#include <string.h>

#include "fmt.h"
#include "json.h"

void json_init(json *j, nytp_out *out)
{
    /* not the buffer: a record's writer is made anew for every record */
    j->out = out;
    j->depth = 0;
    j->no_comma = false;
    j->direct = false;
    j->into = NULL;
    j->n = 0;
}

void json_init_into(json *j, nytp_out *out, char *room)
{
    json_init(j, out);
    j->into = room;
}

void json_flush(json *j)
{
    if (j->n && !j->into) {
        nytp_out_write(j->out, j->buf, j->n);
        j->n = 0;
    }
}

/* Room for n bytes (a comma included), in the buffer, or in the output
 * itself for a long string; NULL when the output failed (it remembers
 * why). */
static inline __attribute__((always_inline)) char *room(json *j, size_t n)
{
    if (j->into)
        return j->into + j->n;
    if (n > sizeof j->buf - j->n) {
        json_flush(j);
        if (n > sizeof j->buf) {
            j->direct = true;
            return (char *)nytp_out_reserve(j->out, n);
        }
    }
    j->direct = false;
    return j->buf + j->n;
}

/* Room for the comma the next value or key may take and n bytes after it,
 * the comma written; *base is where the room starts, for commit. */
static inline __attribute__((always_inline)) char *begin(json *j, size_t n, char **base)
{
    char *o = room(j, n + 1);
    *base = o;
    if (!o)
        return NULL;
    if (j->no_comma) {
        j->no_comma = false;
    } else if (j->depth && j->depth <= JSON_MAX_DEPTH) {
        if (j->has[j->depth - 1])
            *o++ = ',';
        j->has[j->depth - 1] = true;
    }
    return o;
}

static inline __attribute__((always_inline)) void commit(json *j, const char *base, const char *end)
{
    if (j->direct)
        nytp_out_commit(j->out, (size_t)(end - base));
    else
        j->n += (size_t)(end - base);
    if (!j->depth) /* the outermost value is complete */
        json_flush(j);
}

static void open_container(json *j, bool object)
{
    char *base, *o = begin(j, 1, &base);
    if (!o)
        return;
    *o++ = object ? '{' : '[';
    commit(j, base, o);
    if (j->depth < JSON_MAX_DEPTH) {
        j->has[j->depth] = false;
        j->object[j->depth] = object;
    }
    j->depth++;
}

void json_object(json *j)
{
    open_container(j, true);
}

void json_array(json *j)
{
    open_container(j, false);
}

void json_end(json *j)
{
    if (!j->depth)
        return;
    j->depth--;
    bool object = j->depth < JSON_MAX_DEPTH && j->object[j->depth];
    char *o = room(j, 1);
    if (!o)
        return;
    *o = object ? '}' : ']';
    commit(j, o, o + 1);
}

void json_key_n(json *j, const char *key, size_t n)
{
    char *base, *o = begin(j, n + 3, &base);
    if (!o)
        return;
    *o++ = '"';
    memcpy(o, key, n);
    o += n;
    *o++ = '"';
    *o++ = ':';
    commit(j, base, o);
    j->no_comma = true;
}

void json_key_str(json *j, const char *s, size_t len)
{
    char *base, *o = begin(j, len * 6 + 3, &base);
    if (!o)
        return;
    o = fmt_json_str(o, s, len);
    *o++ = ':';
    commit(j, base, o);
    j->no_comma = true;
}

void json_str(json *j, const char *s, size_t len)
{
    char *base, *o = begin(j, len * 6 + 2, &base);
    if (o)
        commit(j, base, fmt_json_str(o, s, len));
}

void json_cstr(json *j, const char *s)
{
    if (s)
        json_str(j, s, strlen(s));
    else
        json_null(j);
}

void json_num(json *j, double d)
{
    char *base, *o = begin(j, 40, &base);
    if (o)
        commit(j, base, fmt_json_nv(o, d));
}

void json_u64(json *j, uint64_t v)
{
    char *base, *o = begin(j, 24, &base);
    if (o)
        commit(j, base, fmt_u64(o, v));
}

void json_i64(json *j, int64_t v)
{
    char *base, *o = begin(j, 24, &base);
    if (o)
        commit(j, base, fmt_i64(o, v));
}

/* ,"key": into room for it and n more bytes; the end of the key */
static inline __attribute__((always_inline)) char *field(json *j, const char *key, size_t k, size_t n, char **base)
{
    char *o = begin(j, k + 3 + n, base);
    if (!o)
        return NULL;
    *o++ = '"';
    memcpy(o, key, k);
    o += k;
    *o++ = '"';
    *o++ = ':';
    return o;
}

void json_field_u64_n(json *j, const char *key, size_t klen, uint64_t v)
{
    char *base, *o = field(j, key, klen, 24, &base);
    if (o)
        commit(j, base, fmt_u64(o, v));
}

void json_field_i64_n(json *j, const char *key, size_t klen, int64_t v)
{
    char *base, *o = field(j, key, klen, 24, &base);
    if (o)
        commit(j, base, fmt_i64(o, v));
}

void json_field_num_n(json *j, const char *key, size_t klen, double d)
{
    char *base, *o = field(j, key, klen, 40, &base);
    if (o)
        commit(j, base, fmt_json_nv(o, d));
}

void json_field_str_n(json *j, const char *key, size_t klen, const char *s, size_t len)
{
    char *base, *o = field(j, key, klen, len * 6 + 2, &base);
    if (o)
        commit(j, base, fmt_json_str(o, s, len));
}

static void word(json *j, const char *w, size_t n)
{
    char *base, *o = begin(j, n, &base);
    if (!o)
        return;
    memcpy(o, w, n);
    commit(j, base, o + n);
}

void json_bool(json *j, bool v)
{
    word(j, v ? "true" : "false", v ? 4 : 5);
}

void json_null(json *j)
{
    word(j, "null", 4);
}

void json_break(json *j, const char *text)
{
    word(j, text, strlen(text));
    j->no_comma = true; /* the value that follows is this member */
}

void json_raw_n(json *j, const char *text, size_t len)
{
    char *o = room(j, len);
    if (!o)
        return;
    memcpy(o, text, len);
    commit(j, o, o + len);
}
