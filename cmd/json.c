/* json.c — the commands' JSON writer (json.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "json.h"

void json_init(json *j, nytp_out *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Before a value or a key: the comma after the previous member. */
static void before(json *j)
{
    if (j->no_comma) {
        j->no_comma = false;
        return;
    }
    if (j->depth && j->depth <= JSON_MAX_DEPTH) {
        if (j->has[j->depth - 1])
            nytp_out_write(j->out, ",", 1);
        j->has[j->depth - 1] = true;
    }
}

static void open_container(json *j, bool object)
{
    before(j);
    nytp_out_write(j->out, object ? "{" : "[", 1);
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
    nytp_out_write(j->out, object ? "}" : "]", 1);
}

void json_key(json *j, const char *key)
{
    before(j);
    nytp_out_write(j->out, "\"", 1);
    nytp_out_write(j->out, key, strlen(key));
    nytp_out_write(j->out, "\":", 2);
    j->no_comma = true;
}

void json_key_str(json *j, const char *s, size_t len)
{
    json_str(j, s, len);
    nytp_out_write(j->out, ":", 1);
    j->no_comma = true;
}

void json_str(json *j, const char *s, size_t len)
{
    before(j);
    uint8_t *d = nytp_out_reserve(j->out, len * 6 + 2);
    if (!d)
        return; /* the out remembers the error */
    char *end = fmt_json_str((char *)d, s, len);
    nytp_out_commit(j->out, (size_t)(end - (char *)d));
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
    before(j);
    char b[40];
    nytp_out_write(j->out, b, (size_t)(fmt_json_nv(b, d) - b));
}

void json_u64(json *j, uint64_t v)
{
    before(j);
    char b[24];
    int n = snprintf(b, sizeof b, "%" PRIu64, v);
    nytp_out_write(j->out, b, (size_t)n);
}

void json_i64(json *j, int64_t v)
{
    before(j);
    char b[24];
    int n = snprintf(b, sizeof b, "%" PRId64, v);
    nytp_out_write(j->out, b, (size_t)n);
}

void json_bool(json *j, bool v)
{
    before(j);
    nytp_out_write(j->out, v ? "true" : "false", v ? 4 : 5);
}

void json_null(json *j)
{
    before(j);
    nytp_out_write(j->out, "null", 4);
}

void json_break(json *j, const char *text)
{
    before(j);
    nytp_out_write(j->out, text, strlen(text));
    j->no_comma = true; /* the value that follows is this member */
}

void json_raw(json *j, const char *text)
{
    nytp_out_write(j->out, text, strlen(text));
}
