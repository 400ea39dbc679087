/* codec.c — byte encoding of NYTProf v5 chunks: numbers, strings, and one
 * encoder and one decoder per chunk kind.  No I/O, no allocation. */
#include <stdio.h>
#include <string.h>

#include "codec_decode.h"
#include "nytp/encode.h"

static const struct {
    int tag;
    const char *name;
} tag_names[] = {
    {NYTP_TAG_VERSION, "VERSION"},         {NYTP_TAG_COMMENT, "COMMENT"},
    {NYTP_TAG_ATTRIBUTE, "ATTRIBUTE"},     {NYTP_TAG_OPTION, "OPTION"},
    {NYTP_TAG_START_DEFLATE, "START_DEFLATE"}, {NYTP_TAG_PID_START, "PID_START"},
    {NYTP_TAG_PID_END, "PID_END"},         {NYTP_TAG_NEW_FID, "NEW_FID"},
    {NYTP_TAG_TIME_LINE, "TIME_LINE"},     {NYTP_TAG_TIME_BLOCK, "TIME_BLOCK"},
    {NYTP_TAG_DISCOUNT, "DISCOUNT"},       {NYTP_TAG_SUB_INFO, "SUB_INFO"},
    {NYTP_TAG_SUB_CALLERS, "SUB_CALLERS"}, {NYTP_TAG_SRC_LINE, "SRC_LINE"},
    {NYTP_TAG_SUB_ENTRY, "SUB_ENTRY"},     {NYTP_TAG_SUB_RETURN, "SUB_RETURN"},
};

const char *nytp_tag_name(int tag)
{
    for (size_t i = 0; i < sizeof tag_names / sizeof tag_names[0]; i++)
        if (tag_names[i].tag == tag)
            return tag_names[i].name;
    return NULL;
}

int nytp_tag_from_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof tag_names / sizeof tag_names[0]; i++)
        if (strlen(tag_names[i].name) == len && memcmp(tag_names[i].name, name, len) == 0)
            return tag_names[i].tag;
    return 0;
}

const char nytp_why_tag[] = "a chunk tag";
const char nytp_why_string_tag[] = "a string tag (0x27 or 0x22)";
const char nytp_why_string_length[] = "a string length within the 256 MiB limit";
const char nytp_why_line_length[] = "a text line within the 256 MiB limit";

/* ---- numbers ---------------------------------------------------------- */

size_t nytp_encode_u32(uint8_t *o, uint32_t v)
{
    return nytp_encode_u32_inline(o, v);
}

size_t nytp_decode_u32(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
    return decode_u32_inline(p, end, v);
}


/* ---- decoding --------------------------------------------------------- */

int nytp_decode_chunk(const uint8_t *p, const uint8_t *end, nytp_chunk *c, size_t *used,
                      const char **why)
{
    return nytp_decode_chunk_inline(p, end, c, used, why);
}

int nytp_decode_header(const uint8_t *p, const uint8_t *end, nytp_chunk *c, size_t *used,
                       const char **why)
{
    static const char magic[] = "NYTProf ";
    size_t avail = (size_t)(end - p);
    size_t m = sizeof magic - 1;
    size_t cmp = avail < m ? avail : m;
    if (memcmp(p, magic, cmp) != 0) {
        *why = "the header line 'NYTProf 5 0'";
        *used = 0;
        return NYTP_DECODE_BAD;
    }
    if (avail < m) {
        *used = m + 1;
        return NYTP_DECODE_NEED_MORE;
    }
    /* "NYTProf " digits " " digits "\n" */
    const uint8_t *q = p + m;
    uint32_t nums[2];
    for (int i = 0; i < 2; i++) {
        uint64_t v = 0;
        const uint8_t *d = q;
        while (q < end && *q >= '0' && *q <= '9' && q - d < 10)
            v = v * 10 + (uint64_t)(*q++ - '0');
        if (q == end) {
            *used = avail + 1;
            return NYTP_DECODE_NEED_MORE;
        }
        char want = i == 0 ? ' ' : '\n';
        if (q == d || *q != want || v > UINT32_MAX) {
            *why = "the header line 'NYTProf MAJOR MINOR'";
            *used = (size_t)(q - p);
            return NYTP_DECODE_BAD;
        }
        nums[i] = (uint32_t)v;
        q++;
    }
    c->tag = NYTP_TAG_VERSION;
    c->u.version.major = nums[0];
    c->u.version.minor = nums[1];
    *used = (size_t)(q - p);
    return NYTP_DECODE_OK;
}

/* ---- encoding --------------------------------------------------------- */

/* A comment's text without the newline it may end with (the encoder
 * writes one newline whether or not it is there). */
static size_t comment_body(nytp_str t)
{
    return t.len && t.ptr[t.len - 1] == '\n' ? t.len - 1 : t.len;
}

size_t nytp_chunk_line_size(const nytp_chunk *c)
{
    switch (c->tag) {
    case NYTP_TAG_COMMENT: return comment_body(c->u.comment.text) + 1;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION: return c->u.kv.key.len + 1 + c->u.kv.value.len + 1;
    default: return 0;
    }
}

size_t nytp_chunk_max_size(const nytp_chunk *c)
{
    /* tag + up to 6 u32 (5 bytes) + 3 nv + string headers */
    size_t fixed = 1 + 9 * 5 + 3 * 8 + 2 * 6 + 32;
    switch (c->tag) {
    case NYTP_TAG_COMMENT: return fixed + c->u.comment.text.len;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION: return fixed + c->u.kv.key.len + c->u.kv.value.len;
    case NYTP_TAG_NEW_FID: return fixed + c->u.new_fid.name.len;
    case NYTP_TAG_SUB_INFO: return fixed + c->u.sub_info.name.len;
    case NYTP_TAG_SUB_CALLERS:
        return fixed + c->u.sub_callers.called.len + c->u.sub_callers.caller.len;
    case NYTP_TAG_SRC_LINE: return fixed + c->u.src_line.text.len;
    case NYTP_TAG_SUB_RETURN: return fixed + c->u.sub_return.name.len;
    default: return fixed;
    }
}


static bool has_byte(nytp_str s, int b)
{
    return s.len && memchr(s.ptr, b, s.len) != NULL;
}

size_t nytp_encode_chunk(uint8_t *out, const nytp_chunk *c)
{
    uint8_t *o = out;
    if (c->tag == NYTP_TAG_VERSION) {
        int n = snprintf((char *)o, 32, "NYTProf %u %u\n", (unsigned)c->u.version.major,
                         (unsigned)c->u.version.minor);
        return (size_t)n;
    }
    *o++ = (uint8_t)c->tag;
    switch (c->tag) {
    case NYTP_TAG_TIME_LINE:
        return nytp_encode_time_line_inline(out, c->u.time.ticks, c->u.time.fid,
                                            c->u.time.line);
    case NYTP_TAG_TIME_BLOCK:
        return nytp_encode_time_block_inline(out, c->u.time.ticks, c->u.time.fid,
                                             c->u.time.line, c->u.time.block_line,
                                             c->u.time.sub_line);
    case NYTP_TAG_DISCOUNT:
    case NYTP_TAG_START_DEFLATE:
        break;
    case NYTP_TAG_SUB_RETURN:
        return nytp_encode_sub_return_inline(out, c->u.sub_return.depth,
                                             c->u.sub_return.incl, c->u.sub_return.excl,
                                             c->u.sub_return.name);
    case NYTP_TAG_SUB_ENTRY:
        o += nytp_encode_u32_inline(o, c->u.sub_entry.fid);
        o += nytp_encode_u32_inline(o, c->u.sub_entry.line);
        break;
    case NYTP_TAG_NEW_FID:
        o += nytp_encode_u32_inline(o, c->u.new_fid.fid);
        o += nytp_encode_u32_inline(o, c->u.new_fid.eval_fid);
        o += nytp_encode_u32_inline(o, c->u.new_fid.eval_line);
        o += nytp_encode_u32_inline(o, c->u.new_fid.flags);
        o += nytp_encode_u32_inline(o, c->u.new_fid.size);
        o += nytp_encode_u32_inline(o, c->u.new_fid.mtime);
        o = nytp_encode_str_inline(o, c->u.new_fid.name);
        break;
    case NYTP_TAG_SUB_INFO:
        o += nytp_encode_u32_inline(o, c->u.sub_info.fid);
        o = nytp_encode_str_inline(o, c->u.sub_info.name);
        o += nytp_encode_u32_inline(o, c->u.sub_info.first_line);
        o += nytp_encode_u32_inline(o, c->u.sub_info.last_line);
        break;
    case NYTP_TAG_SUB_CALLERS:
        o += nytp_encode_u32_inline(o, c->u.sub_callers.fid);
        o += nytp_encode_u32_inline(o, c->u.sub_callers.line);
        o = nytp_encode_str_inline(o, c->u.sub_callers.caller);
        o += nytp_encode_u32_inline(o, c->u.sub_callers.count);
        nytp_encode_nv_inline(o, c->u.sub_callers.incl);
        nytp_encode_nv_inline(o + 8, c->u.sub_callers.excl);
        nytp_encode_nv_inline(o + 16, c->u.sub_callers.reci);
        o += 24;
        o += nytp_encode_u32_inline(o, c->u.sub_callers.rec_depth);
        o = nytp_encode_str_inline(o, c->u.sub_callers.called);
        break;
    case NYTP_TAG_SRC_LINE:
        o += nytp_encode_u32_inline(o, c->u.src_line.fid);
        o += nytp_encode_u32_inline(o, c->u.src_line.line);
        o = nytp_encode_str_inline(o, c->u.src_line.text);
        break;
    case NYTP_TAG_PID_START:
        o += nytp_encode_u32_inline(o, c->u.pid_start.pid);
        o += nytp_encode_u32_inline(o, c->u.pid_start.ppid);
        nytp_encode_nv_inline(o, c->u.pid_start.time);
        o += 8;
        break;
    case NYTP_TAG_PID_END:
        o += nytp_encode_u32_inline(o, c->u.pid_end.pid);
        nytp_encode_nv_inline(o, c->u.pid_end.time);
        o += 8;
        break;
    case NYTP_TAG_COMMENT: {
        nytp_str t = c->u.comment.text;
        size_t body = comment_body(t);
        if (body && memchr(t.ptr, '\n', body))
            return 0;
        if (body)
            memcpy(o, t.ptr, body);
        o += body;
        *o++ = '\n';
        break;
    }
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION: {
        nytp_str key = c->u.kv.key, val = c->u.kv.value;
        if (has_byte(key, '=') || has_byte(key, '\n') || has_byte(val, '\n') || !val.ptr)
            return 0;
        if (key.len)
            memcpy(o, key.ptr, key.len);
        o += key.len;
        *o++ = '=';
        if (val.len)
            memcpy(o, val.ptr, val.len);
        o += val.len;
        *o++ = '\n';
        break;
    }
    default:
        return 0;
    }
    return (size_t)(o - out);
}
