/* helpers.c — file and chunk utilities for the unit tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

const char *td_path(const char *name)
{
    static char buf[4][1024];
    static int slot;
    const char *dir = getenv("NYTP_TESTDATA");
    char *b = buf[slot++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", dir ? dir : "testdata", name);
    return b;
}

uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(d);
    if (n > 0 && fread(d, 1, (size_t)n, f) != (size_t)n)
        fail_msg("cannot read %s", path);
    fclose(f);
    *len = (size_t)n;
    return d;
}

static nytp_str **string_slots(nytp_chunk *c, int *count)
{
    static nytp_str *v[2];
    *count = 0;
    switch (c->tag) {
    case NYTP_TAG_COMMENT: v[0] = &c->u.comment.text; *count = 1; break;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION: v[0] = &c->u.kv.key; v[1] = &c->u.kv.value; *count = 2; break;
    case NYTP_TAG_NEW_FID: v[0] = &c->u.new_fid.name; *count = 1; break;
    case NYTP_TAG_SUB_INFO: v[0] = &c->u.sub_info.name; *count = 1; break;
    case NYTP_TAG_SUB_CALLERS:
        v[0] = &c->u.sub_callers.called; v[1] = &c->u.sub_callers.caller; *count = 2; break;
    case NYTP_TAG_SRC_LINE: v[0] = &c->u.src_line.text; *count = 1; break;
    case NYTP_TAG_SUB_RETURN: v[0] = &c->u.sub_return.name; *count = 1; break;
    default: break;
    }
    return v;
}

saved_chunk *read_all(const uint8_t *data, size_t len, size_t *n, int *status, nytp_error *err)
{
    nytp_reader *r;
    size_t cap = 64, used = 0;
    saved_chunk *v = malloc(cap * sizeof *v);
    assert_non_null(v);
    assert_int_equal(nytp_reader_open_mem(&r, data, len, err), NYTP_OK);
    nytp_chunk c;
    int st;
    while ((st = nytp_reader_next(r, &c, err)) == NYTP_OK) {
        if (used == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        saved_chunk *s = &v[used++];
        s->c = c;
        s->strs[0] = s->strs[1] = NULL;
        int k;
        nytp_str **slots = string_slots(&s->c, &k);
        for (int i = 0; i < k; i++) {
            nytp_str *str = slots[i];
            if (!str->ptr)
                continue;
            s->strs[i] = malloc(str->len + 1);
            assert_non_null(s->strs[i]);
            memcpy(s->strs[i], str->ptr, str->len);
            s->strs[i][str->len] = 0;
            str->ptr = s->strs[i];
        }
    }
    nytp_reader_close(r);
    *n = used;
    *status = st;
    return v;
}

void free_chunks(saved_chunk *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].strs[0]);
        free(v[i].strs[1]);
    }
    free(v);
}

static int str_eq(nytp_str a, nytp_str b)
{
    if (a.len != b.len || a.utf8 != b.utf8 || (!a.ptr) != (!b.ptr))
        return 0;
    return a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0;
}

#define EQ(f) (a->u.f == b->u.f)
#define SEQ(f) str_eq(a->u.f, b->u.f)

char *nested_evals(size_t depth, const char *inner, int numbered, size_t *len)
{
    size_t il = strlen(inner);
    char *s = malloc(depth * 32 + il + 1);
    if (!s)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < depth; i++)
        k += (size_t)sprintf(s + k, "(eval %zu)[", numbered ? i + 1 : 0);
    memcpy(s + k, inner, il + 1);
    k += il;
    for (size_t i = 1; i < depth; i++)
        k += (size_t)sprintf(s + k, ":1]");
    *len = k;
    return s;
}

int chunk_equal(const nytp_chunk *a, const nytp_chunk *b)
{
    if (a->tag != b->tag)
        return 0;
    switch (a->tag) {
    case NYTP_TAG_VERSION: return EQ(version.major) && EQ(version.minor);
    case NYTP_TAG_COMMENT: return SEQ(comment.text);
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION: return SEQ(kv.key) && SEQ(kv.value);
    case NYTP_TAG_START_DEFLATE:
    case NYTP_TAG_DISCOUNT: return 1;
    case NYTP_TAG_PID_START:
        return EQ(pid_start.pid) && EQ(pid_start.ppid) &&
               memcmp(&a->u.pid_start.time, &b->u.pid_start.time, 8) == 0;
    case NYTP_TAG_PID_END:
        return EQ(pid_end.pid) && memcmp(&a->u.pid_end.time, &b->u.pid_end.time, 8) == 0;
    case NYTP_TAG_NEW_FID:
        return EQ(new_fid.fid) && EQ(new_fid.eval_fid) && EQ(new_fid.eval_line) &&
               EQ(new_fid.flags) && EQ(new_fid.size) && EQ(new_fid.mtime) && SEQ(new_fid.name);
    case NYTP_TAG_TIME_LINE:
    case NYTP_TAG_TIME_BLOCK:
        return EQ(time.ticks) && EQ(time.fid) && EQ(time.line) && EQ(time.block_line) &&
               EQ(time.sub_line);
    case NYTP_TAG_SUB_INFO:
        return EQ(sub_info.fid) && EQ(sub_info.first_line) && EQ(sub_info.last_line) &&
               SEQ(sub_info.name);
    case NYTP_TAG_SUB_CALLERS:
        return EQ(sub_callers.fid) && EQ(sub_callers.line) && EQ(sub_callers.count) &&
               EQ(sub_callers.rec_depth) &&
               memcmp(&a->u.sub_callers.incl, &b->u.sub_callers.incl, 8) == 0 &&
               memcmp(&a->u.sub_callers.excl, &b->u.sub_callers.excl, 8) == 0 &&
               memcmp(&a->u.sub_callers.reci, &b->u.sub_callers.reci, 8) == 0 &&
               SEQ(sub_callers.called) && SEQ(sub_callers.caller);
    case NYTP_TAG_SRC_LINE:
        return EQ(src_line.fid) && EQ(src_line.line) && SEQ(src_line.text);
    case NYTP_TAG_SUB_ENTRY: return EQ(sub_entry.fid) && EQ(sub_entry.line);
    case NYTP_TAG_SUB_RETURN:
        return EQ(sub_return.depth) &&
               memcmp(&a->u.sub_return.incl, &b->u.sub_return.incl, 8) == 0 &&
               memcmp(&a->u.sub_return.excl, &b->u.sub_return.excl, 8) == 0 &&
               SEQ(sub_return.name);
    }
    return 0;
}
