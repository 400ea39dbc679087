/* json.h — the one JSON writer of the commands: objects, arrays, keys,
 * escaped strings and numbers, streamed to an nytp_out, with the commas
 * and the nesting tracked here, so that no output counts its own commas.
 * Compact (no white space) unless the caller asks for some with
 * json_raw between values.
 *
 *     json j;
 *     json_init(&j, out);
 *     json_object(&j);
 *     json_key(&j, "name"); json_str(&j, name, len);
 *     json_key(&j, "rows"); json_array(&j); json_u64(&j, 3); json_end(&j);
 *     json_end(&j);
 *
 * The text is gathered in a small buffer and handed to the output when it
 * is full and whenever the outermost value is complete (json_flush also
 * does), so a record costs one write: the caller's own writes to the
 * output go between outermost values.  Write errors are the nytp_out's
 * (it remembers the first). */
#ifndef NYTP_JSON_H
#define NYTP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nytp/io.h"

/* Deeper nesting than this is written, but without commas: no output of
 * nytp nests more than a few levels. */
#define JSON_MAX_DEPTH 32
#define JSON_BUF 2048

typedef struct json {
    nytp_out *out;
    uint32_t depth;             /* open objects and arrays */
    bool has[JSON_MAX_DEPTH];   /* the container at a depth has a member */
    bool object[JSON_MAX_DEPTH]; /* it is an object (else an array) */
    bool no_comma;              /* the next value takes no comma (after a key, json_break) */
    bool direct;                /* the room being filled is the output's */
    char *into;                 /* json_init_into: the caller's room, or NULL */
    size_t n;                   /* bytes in buf */
    char buf[JSON_BUF];
} json;

void json_init(json *j, nytp_out *out);
/* A writer into room the caller reserved in out (nytp_out_reserve) and
 * knows to be enough for everything written: no buffer, no bounds
 * checked; json_used says how much to commit.  For records written by the
 * million (dump --json). */
void json_init_into(json *j, nytp_out *out, char *room);
static inline size_t json_used(const json *j)
{
    return j->n;
}
/* Hand what is buffered to the output. */
void json_flush(json *j);
/* Open an object or an array (as a value); json_end closes the latest. */
void json_object(json *j);
void json_array(json *j);
void json_end(json *j);
/* A member's key, in the open object: a literal, written as it is; or
 * any text, escaped. */
void json_key_n(json *j, const char *key, size_t klen);
static inline void json_key(json *j, const char *key)
{
    json_key_n(j, key, strlen(key)); /* a literal's length is known here */
}
void json_key_str(json *j, const char *s, size_t len);
/* Values. */
void json_str(json *j, const char *s, size_t len); /* escaped; always valid JSON (fmt_json_str) */
void json_cstr(json *j, const char *s);            /* NULL: null */
void json_num(json *j, double d);                  /* as perl prints it; null when not finite */
void json_u64(json *j, uint64_t v);
void json_i64(json *j, int64_t v);
void json_bool(json *j, bool b);
void json_null(json *j);
/* A key and its value in one call (the same text as json_key then the
 * value), for records written by the million. */
void json_field_u64_n(json *j, const char *key, size_t klen, uint64_t v);
void json_field_i64_n(json *j, const char *key, size_t klen, int64_t v);
void json_field_num_n(json *j, const char *key, size_t klen, double d);
void json_field_str_n(json *j, const char *key, size_t klen, const char *s, size_t len);
static inline void json_field_u64(json *j, const char *key, uint64_t v)
{
    json_field_u64_n(j, key, strlen(key), v);
}
static inline void json_field_i64(json *j, const char *key, int64_t v)
{
    json_field_i64_n(j, key, strlen(key), v);
}
static inline void json_field_num(json *j, const char *key, double d)
{
    json_field_num_n(j, key, strlen(key), d);
}
static inline void json_field_str(json *j, const char *key, const char *s, size_t len)
{
    json_field_str_n(j, key, strlen(key), s, len);
}
/* Text written as it is, with no comma: white space between values. */
void json_raw_n(json *j, const char *text, size_t len);
static inline void json_raw(json *j, const char *text)
{
    json_raw_n(j, text, strlen(text));
}
/* The same after the comma the next value takes: "[1,\n2]", not "[1\n,2]". */
void json_break(json *j, const char *text);

#endif
