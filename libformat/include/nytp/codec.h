/* nytp/codec.h — the chunks of an NYTProf v5 file and their byte encoding.
 *
 * This is the only place that knows how a chunk looks as bytes.  Decoding
 * works on a caller-owned byte range and never allocates: strings in a
 * decoded chunk point into that range.  Encoding writes into a
 * caller-owned buffer of at least nytp_chunk_max_size() bytes.
 */
#ifndef NYTP_CODEC_H
#define NYTP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NYTP_FORMAT_MAJOR 5
#define NYTP_FORMAT_MINOR 0

/* Chunk kinds.  For binary chunks the value is the tag byte on disk. */
enum nytp_tag {
    NYTP_TAG_VERSION = 1,           /* the header line; no tag byte */
    NYTP_TAG_COMMENT = '#',
    NYTP_TAG_ATTRIBUTE = ':',
    NYTP_TAG_OPTION = '!',
    NYTP_TAG_START_DEFLATE = 'z',
    NYTP_TAG_PID_START = 'P',
    NYTP_TAG_PID_END = 'p',
    NYTP_TAG_NEW_FID = '@',
    NYTP_TAG_TIME_LINE = '+',
    NYTP_TAG_TIME_BLOCK = '*',
    NYTP_TAG_DISCOUNT = '-',
    NYTP_TAG_SUB_INFO = 's',
    NYTP_TAG_SUB_CALLERS = 'c',
    NYTP_TAG_SRC_LINE = 'S',
    NYTP_TAG_SUB_ENTRY = '>',
    NYTP_TAG_SUB_RETURN = '<'
};

/* String tags. */
#define NYTP_STR_BYTES '\''
#define NYTP_STR_UTF8 '"'

/* NEW_FID flag bits. */
enum nytp_fid_flag {
    NYTP_FIDF_IS_PMC = 0x001,
    NYTP_FIDF_VIA_STMT = 0x002,
    NYTP_FIDF_VIA_SUB = 0x004,
    NYTP_FIDF_IS_AUTOSPLIT = 0x008,
    NYTP_FIDF_HAS_SRC = 0x010,
    NYTP_FIDF_SAVE_SRC = 0x020,
    NYTP_FIDF_IS_ALIAS = 0x040,
    NYTP_FIDF_IS_FAKE = 0x080,
    NYTP_FIDF_IS_EVAL = 0x100
};

/* Longest string or text line the decoder accepts.  No profiler writes
 * anything near it; a length beyond it is corruption, not data. */
#define NYTP_STR_LIMIT (256u * 1024u * 1024u)

/* A string inside a chunk: bytes (not NUL-terminated) and whether the
 * writer flagged them as UTF-8 text. */
typedef struct nytp_str {
    const char *ptr;
    uint32_t len;
    bool utf8;
} nytp_str;

typedef struct nytp_chunk {
    enum nytp_tag tag;
    union {
        struct { uint32_t major, minor; } version;
        struct { nytp_str text; } comment;             /* text ends with '\n' */
        struct { nytp_str key, value; } kv;            /* ATTRIBUTE, OPTION */
        struct { uint32_t pid, ppid; double time; } pid_start;
        struct { uint32_t pid; double time; } pid_end;
        struct {
            uint32_t fid, eval_fid, eval_line, flags, size, mtime;
            nytp_str name;
        } new_fid;
        struct {                                       /* TIME_LINE, TIME_BLOCK */
            int32_t ticks;
            uint32_t fid, line, block_line, sub_line;  /* last two: BLOCK only */
        } time;
        struct { uint32_t fid, first_line, last_line; nytp_str name; } sub_info;
        struct {
            uint32_t fid, line, count, rec_depth;
            double incl, excl, reci;                   /* seconds */
            nytp_str called, caller;
        } sub_callers;
        struct { uint32_t fid, line; nytp_str text; } src_line;
        struct { uint32_t fid, line; } sub_entry;
        struct { uint32_t depth; double incl, excl; nytp_str name; } sub_return;
    } u;
} nytp_chunk;

/* "TIME_LINE" etc.; NULL for a byte that is not a chunk tag. */
const char *nytp_tag_name(int tag);
/* The inverse, for option parsing: tag for "TIME_LINE", or 0. */
int nytp_tag_from_name(const char *name, size_t len);

/* ---- numbers ---------------------------------------------------------- */

/* Bytes the shortest encoding of v takes (1..5). */
static inline size_t nytp_u32_size(uint32_t v)
{
    return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}
size_t nytp_encode_u32(uint8_t *out, uint32_t v);  /* returns bytes written */

/* Decode a u32 from p..end.  Returns bytes used, or 0 if more bytes are
 * needed. */
size_t nytp_decode_u32(const uint8_t *p, const uint8_t *end, uint32_t *v);

/* ---- whole chunks ----------------------------------------------------- */

enum nytp_decode_result {
    NYTP_DECODE_OK = 0,
    NYTP_DECODE_NEED_MORE = 1,  /* *need = bytes required (a lower bound) */
    NYTP_DECODE_BAD = -1        /* why: see *why (static string) */
};

/* What a BAD result expected, as *why points to one of these (compare
 * pointers to tell them apart; each reads as "expected <why>"). */
extern const char nytp_why_tag[];            /* byte 0 is not a chunk tag */
extern const char nytp_why_string_tag[];     /* byte at *used is not ' or " */
extern const char nytp_why_string_length[];  /* string at *used declares > limit */
extern const char nytp_why_line_length[];    /* no newline within the limit */

/* Decode the chunk that starts at p (its tag byte).  On OK, *used is the
 * chunk's length in bytes.  On NEED_MORE, *used is how many bytes from p
 * are needed at least before trying again (always > end - p).  On BAD,
 * *why names what was expected and *used is the offset from p of the bad
 * byte.  START_DEFLATE decodes as a one-byte chunk; what follows it is the
 * caller's business. */
int nytp_decode_chunk(const uint8_t *p, const uint8_t *end, nytp_chunk *c,
                      size_t *used, const char **why);

/* Decode the header line "NYTProf MAJOR MINOR\n" at p.  Same results. */
int nytp_decode_header(const uint8_t *p, const uint8_t *end, nytp_chunk *c,
                       size_t *used, const char **why);

/* Upper bound of the encoded size of c (header line included). */
size_t nytp_chunk_max_size(const nytp_chunk *c);

/* For a text chunk (COMMENT, ATTRIBUTE, OPTION): the bytes nytp_encode_chunk
 * writes after its tag, its line with the newline; 0 for other kinds. */
size_t nytp_chunk_line_size(const nytp_chunk *c);

/* Encode c at out (nytp_chunk_max_size(c) bytes available); returns the
 * bytes written.  A VERSION chunk encodes as the header line.  Text
 * chunks (COMMENT, ATTRIBUTE, OPTION) must not contain '\n' except the
 * comment's final one, which is added if missing. */
size_t nytp_encode_chunk(uint8_t *out, const nytp_chunk *c);

#endif
