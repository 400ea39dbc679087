/* dprof.c — a streaming reader of Devel::DProf's tmon.out (see nytp/dprof.h).
 *
 * The format is learnt from what Devel::DProf 20110802 writes and from how
 * dprofpp reads it: a header of perl assignments that dprofpp evals, then
 * records split on white space. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nytp/dprof.h"
#include "kmap.h"
#include "strtab.h"

#define MAX_LINE (1u << 20)   /* no real record is anywhere near this */
#define MAX_FIELDS 8

typedef struct frame {
    uint32_t sub;       /* running now */
    uint32_t entered;   /* the sub the '+' named (differs after goto) */
} frame;

struct nytp_dprof {
    nytp_in *in;
    unsigned flags;
    nytp_dprof_header hdr;
    uint64_t line;          /* number of the last line read */
    uint64_t line_offset;   /* its byte offset */
    uint64_t offset;        /* byte offset of the next line */
    strtab subs;            /* sub names -> dense numbers */
    strtab ids;             /* DProf ids (as text) -> index into id_sub */
    uint32_t *id_sub;
    uint32_t id_cap;
    frame *stack;
    uint32_t depth, stack_cap;
    double user, sys, real;
    bool ended;             /* PART line or end of input seen */
    uint64_t cut_line;      /* a last line without its newline, left out */
    char *buf;              /* the current line, NUL-terminated */
    size_t buf_cap;
};

static int fail(nytp_dprof *d, nytp_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(nytp_dprof *d, nytp_error *err, int status, const char *fmt, ...)
{
    if (err) {
        char msg[NYTP_ERROR_MSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        memset(err, 0, sizeof *err);
        err->offset = d->line_offset;
        err->chunk = d->line;
        nytp_error_set(err, status, "line %llu: %s", (unsigned long long)d->line, msg);
    }
    return status;
}

/* The next line into d->buf without its newline: NYTP_OK, NYTP_END (no
 * more bytes), or an error.  A last line without its newline means the
 * writer was cut off. */
static int read_line(nytp_dprof *d, nytp_error *err)
{
    size_t avail, scanned = 0;
    const uint8_t *p;
    bool at_end = false;
    for (;;) {
        p = nytp_in_peek(d->in, &avail);
        const uint8_t *nl = avail > scanned ? memchr(p + scanned, '\n', avail - scanned) : NULL;
        if (nl) {
            avail = (size_t)(nl - p);
            break;
        }
        scanned = avail;
        if (avail > MAX_LINE) {
            d->line++;
            d->line_offset = d->offset;
            return fail(d, err, NYTP_E_FORMAT, "a line longer than %u bytes", MAX_LINE);
        }
        if (at_end) {
            if (avail == 0)
                return NYTP_END;
            d->line++;
            d->line_offset = d->offset;
            /* A killed DProf leaves its buffer's last flush, cut anywhere:
             * with fake exits, the records before it are the profile. */
            if (d->flags & NYTP_DPROF_FAKE_EXITS) {
                d->cut_line = d->line;
                return NYTP_END;
            }
            return fail(d, err, NYTP_E_TRUNCATED,
                        "the file ends in the middle of a line (it was cut short)");
        }
        int st = nytp_in_fill(d->in, avail + 4096, err);
        if (st == NYTP_END)
            at_end = true;
        else if (st < 0)
            return st;
    }
    d->line++;
    d->line_offset = d->offset;
    if (avail + 1 > d->buf_cap) {
        size_t cap = d->buf_cap ? d->buf_cap : 256;
        while (cap < avail + 1)
            cap *= 2;
        char *nb = realloc(d->buf, cap);
        if (!nb)
            return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
        d->buf = nb;
        d->buf_cap = cap;
    }
    memcpy(d->buf, p, avail);
    d->buf[avail] = 0;
    if (avail && d->buf[avail - 1] == '\r')
        d->buf[avail - 1] = 0;
    nytp_in_skip(d->in, avail + 1);
    d->offset += avail + 1;
    return NYTP_OK;
}

/* Splits s on white space in place; returns the number of fields. */
static int split(char *s, char **f, int max)
{
    int n = 0;
    for (;;) {
        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s)
            return n;
        if (n == max)
            return max + 1;
        f[n++] = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s)
            *s++ = 0;
    }
}

static bool parse_number(const char *s, double *v)
{
    char *end;
    if (!*s)
        return false;
    errno = 0;
    *v = strtod(s, &end);
    return !errno && !*end && isfinite(*v);
}

/* ---- header ------------------------------------------------------------ */

static void set_var(nytp_dprof_header *h, const char *name, size_t nlen, const char *text,
                    size_t tlen, bool quoted)
{
    struct { const char *name; double *v; } nums[] = {
        {"hz", &h->hz}, {"over_utime", &h->over_utime}, {"over_stime", &h->over_stime},
        {"over_rtime", &h->over_rtime}, {"over_tests", &h->over_tests},
        {"rrun_utime", &h->rrun_utime}, {"rrun_stime", &h->rrun_stime},
        {"rrun_rtime", &h->rrun_rtime}, {"total_marks", &h->total_marks},
    };
    if (nlen == 10 && memcmp(name, "XS_VERSION", 10) == 0) {
        size_t n = tlen < sizeof h->xs_version - 1 ? tlen : sizeof h->xs_version - 1;
        memcpy(h->xs_version, text, n);
        h->xs_version[n] = 0;
        return;
    }
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (strlen(nums[i].name) == nlen && memcmp(nums[i].name, name, nlen) == 0) {
            char tmp[64];
            double v;
            if (quoted || tlen >= sizeof tmp)
                return;
            memcpy(tmp, text, tlen);
            tmp[tlen] = 0;
            if (parse_number(tmp, &v)) {
                *nums[i].v = v;
                if (nums[i].v == &h->hz)
                    h->have_hz = true;
            }
            return;
        }
    }
}

/* One header line: '$name = value;' statements, values numbers or quoted
 * strings without escapes (all DProf writes). */
static int parse_header_line(nytp_dprof *d, const char *s, nytp_error *err)
{
    for (;;) {
        while (isspace((unsigned char)*s) || *s == ';')
            s++;
        if (!*s || *s == '#')
            return NYTP_OK;
        if (*s != '$')
            return fail(d, err, NYTP_E_FORMAT, "not a '$name=value;' header line");
        const char *name = ++s;
        while (isalnum((unsigned char)*s) || *s == '_')
            s++;
        size_t nlen = (size_t)(s - name);
        while (isspace((unsigned char)*s))
            s++;
        if (!nlen || *s != '=')
            return fail(d, err, NYTP_E_FORMAT, "not a '$name=value;' header line");
        s++;
        while (isspace((unsigned char)*s))
            s++;
        const char *val;
        size_t vlen;
        bool quoted = *s == '\'' || *s == '"';
        if (quoted) {
            char q = *s++;
            val = s;
            while (*s && *s != q)
                s++;
            if (!*s)
                return fail(d, err, NYTP_E_FORMAT, "unterminated string in the header");
            vlen = (size_t)(s - val);
            s++;
        } else {
            val = s;
            while (*s && !isspace((unsigned char)*s) && *s != ';')
                s++;
            vlen = (size_t)(s - val);
            if (!vlen)
                return fail(d, err, NYTP_E_FORMAT, "no value after '=' in the header");
        }
        set_var(&d->hdr, name, nlen, val, vlen, quoted);
    }
}

static int read_header(nytp_dprof *d, nytp_error *err)
{
    /* What a user may give instead: a profile, a compressed tmon.out. */
    nytp_error pe = {0};
    size_t avail = 0;
    int fs = nytp_in_fill(d->in, 8, &pe); /* an error comes again in read_line */
    if (fs == NYTP_OK || fs == NYTP_END) {
        const uint8_t *p = nytp_in_peek(d->in, &avail);
        d->line = 1;
        if (avail >= 8 && memcmp(p, "NYTProf ", 8) == 0)
            return fail(d, err, NYTP_E_FORMAT, "this is an NYTProf profile already, not a "
                        "Devel::DProf tmon.out: the other nytp commands read it as it is");
        if (avail >= 2 && memcmp(p, "\x1f\x8b", 2) == 0)
            return fail(d, err, NYTP_E_FORMAT, "this is a gzip file: gunzip it first");
        d->line = 0;
    }
    int st = read_line(d, err);
    if (st == NYTP_END) {
        d->line = 1;
        return fail(d, err, NYTP_E_FORMAT, "empty file, not a Devel::DProf tmon.out");
    }
    if (st < 0 && st != NYTP_E_TRUNCATED)
        return st;
    if (st < 0 || strcmp(d->buf, "#fOrTyTwO") != 0)
        return fail(d, err, NYTP_E_FORMAT,
                    "no '#fOrTyTwO' magic line: not a Devel::DProf tmon.out");
    for (;;) {
        st = read_line(d, err);
        if (st == NYTP_END)
            return fail(d, err, NYTP_E_TRUNCATED,
                        "the file ends in the header, before the PART2 line (it was cut short)");
        if (st < 0)
            return st;
        if (strncmp(d->buf, "PART", 4) == 0)
            break;
        if (d->buf[0] == '#')
            continue;
        if ((st = parse_header_line(d, d->buf, err)) < 0)
            return st;
    }
    if (!d->hdr.have_hz || !(d->hdr.hz > 0))
        return fail(d, err, NYTP_E_FORMAT, "the header has no positive '$hz=' (ticks per second)");
    return NYTP_OK;
}

int nytp_dprof_open(nytp_dprof **dp, nytp_in *in, unsigned flags, nytp_error *err)
{
    *dp = NULL;
    nytp_dprof *d = calloc(1, sizeof *d);
    if (!d) {
        nytp_in_close(in);
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    }
    d->in = in;
    d->flags = flags;
    strtab_init(&d->subs);
    strtab_init(&d->ids);
    int st = read_header(d, err);
    if (st < 0) {
        nytp_dprof_close(d);
        return st;
    }
    *dp = d;
    return NYTP_OK;
}

void nytp_dprof_close(nytp_dprof *d)
{
    if (!d)
        return;
    nytp_in_close(d->in);
    strtab_free(&d->subs);
    strtab_free(&d->ids);
    free(d->id_sub);
    free(d->stack);
    free(d->buf);
    free(d);
}

const nytp_dprof_header *nytp_dprof_get_header(const nytp_dprof *d) { return &d->hdr; }
uint32_t nytp_dprof_sub_count(const nytp_dprof *d) { return d->subs.count; }
const char *nytp_dprof_sub_name(const nytp_dprof *d, uint32_t sub)
{
    return sub < d->subs.count ? strtab_str(&d->subs, sub) : NULL;
}
uint64_t nytp_dprof_line(const nytp_dprof *d) { return d->line; }
uint64_t nytp_dprof_cut_line(const nytp_dprof *d) { return d->cut_line; }

/* ---- records ----------------------------------------------------------- */

static int sub_by_name(nytp_dprof *d, const char *name, uint32_t *sub, nytp_error *err)
{
    uint32_t s = strtab_intern(&d->subs, name, strlen(name));
    if (s == STRTAB_NONE)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    *sub = s;
    return NYTP_OK;
}

static int declare(nytp_dprof *d, char **f, int n, nytp_error *err)
{
    if (n < 4)
        return fail(d, err, NYTP_E_FORMAT, "a '&' declaration needs an id, a package and a name");
    size_t plen = strlen(f[2]), nlen = strlen(f[3]);
    char *full = malloc(plen + nlen + 3);
    if (!full)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    memcpy(full, f[2], plen);
    memcpy(full + plen, "::", 2);
    memcpy(full + plen + 2, f[3], nlen + 1);
    uint32_t sub = 0;
    int st = sub_by_name(d, full, &sub, err);
    free(full);
    if (st < 0)
        return st;
    uint32_t id = strtab_intern(&d->ids, f[1], strlen(f[1]));
    if (id == STRTAB_NONE)
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    if (!kmap_grow_to((void **)&d->id_sub, &d->id_cap, (uint64_t)id + 1, sizeof *d->id_sub))
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    d->id_sub[id] = sub;    /* a redeclared id names its new sub, as in dprofpp */
    return NYTP_OK;
}

static int push(nytp_dprof *d, uint32_t sub, uint32_t entered, nytp_error *err)
{
    if (!kmap_grow_to((void **)&d->stack, &d->stack_cap, (uint64_t)d->depth + 1, sizeof *d->stack))
        return nytp_error_set(err, NYTP_E_NOMEM, "out of memory");
    d->stack[d->depth++] = (frame){sub, entered};
    return NYTP_OK;
}

/* A '+', '-', '*' or '/' record: f[0] is the type. */
static int call_record(nytp_dprof *d, char **f, int n, nytp_dprof_event *ev, nytp_error *err)
{
    char type = f[0][0];
    uint32_t sub = 0;
    int st;
    if (n == 2) {                           /* "+ ID" */
        uint32_t id = strtab_find(&d->ids, f[1], strlen(f[1]));
        if (id == STRTAB_NONE)
            return fail(d, err, NYTP_E_FORMAT, "sub id '%.40s' was not declared by a '&' line",
                        f[1]);
        sub = d->id_sub[id];
    } else if (n == 3 && strcmp(f[1], "&") == 0) {  /* "- & NAME" */
        if ((st = sub_by_name(d, f[2], &sub, err)) < 0)
            return st;
    } else if (n == 5) {                    /* "+ USER SYS REAL NAME" */
        double u, s, r;
        if (!parse_number(f[1], &u) || !parse_number(f[2], &s) || !parse_number(f[3], &r))
            return fail(d, err, NYTP_E_FORMAT, "bad times in a '%c' record", type);
        if ((st = sub_by_name(d, f[4], &sub, err)) < 0)
            return st;
        d->user = u;
        d->sys = s;
        d->real = r;
    } else {
        return fail(d, err, NYTP_E_FORMAT,
                    "a '%c' record needs a sub id, '& NAME' or three times and a name", type);
    }
    ev->line = d->line;
    ev->user = d->user;
    ev->sys = d->sys;
    ev->real = d->real;
    ev->sub = sub;
    ev->named = sub;
    ev->goto_from = 0;
    if (type == '+') {
        if ((st = push(d, sub, sub, err)) < 0)
            return st;
        ev->kind = NYTP_DPROF_ENTER;
        ev->depth = d->depth;
        return NYTP_OK;
    }
    if (d->depth == 0)
        return fail(d, err, NYTP_E_FORMAT, "'%c' record for %s, but no sub is running", type,
                    strtab_str(&d->subs, sub));
    frame *top = &d->stack[d->depth - 1];
    switch (type) {
    case '-':
        /* After 'goto &x' DProf names the sub that was entered. */
        if (sub != top->sub && sub != top->entered)
            return fail(d, err, NYTP_E_FORMAT, "'-' record leaves %s, but %s is running",
                        strtab_str(&d->subs, sub), strtab_str(&d->subs, top->sub));
        ev->kind = NYTP_DPROF_LEAVE;
        ev->sub = top->sub;
        ev->depth = d->depth--;
        return NYTP_OK;
    case '/':
        /* dprofpp leaves whatever runs; so do we. */
        ev->kind = NYTP_DPROF_DIE;
        ev->sub = top->sub;
        if (n != 5)
            ev->named = top->sub;
        ev->depth = d->depth--;
        return NYTP_OK;
    default: /* '*' */
        ev->kind = NYTP_DPROF_GOTO;
        ev->goto_from = top->sub;
        top->sub = sub;
        ev->depth = d->depth;
        return NYTP_OK;
    }
}

int nytp_dprof_next(nytp_dprof *d, nytp_dprof_event *ev, nytp_error *err)
{
    char *f[MAX_FIELDS];
    for (;;) {
        if (d->ended) {
            if (d->depth == 0)
                return NYTP_END;
            if (!(d->flags & NYTP_DPROF_FAKE_EXITS))
                return fail(d, err, NYTP_E_TRUNCATED,
                            "the profile ends with %u sub%s still running (%s%s); the "
                            "file was cut short or the program was killed",
                            d->depth, d->depth == 1 ? "" : "s",
                            strtab_str(&d->subs, d->stack[d->depth - 1].sub),
                            d->depth > 1 ? " and its callers" : "");
            ev->kind = NYTP_DPROF_FAKE_LEAVE;
            ev->sub = d->stack[d->depth - 1].sub;
            ev->goto_from = 0;
            ev->named = ev->sub;
            ev->depth = d->depth--;
            ev->user = d->user;
            ev->sys = d->sys;
            ev->real = d->real;
            ev->line = d->line;
            return NYTP_OK;
        }
        int st = read_line(d, err);
        if (st == NYTP_END) {
            d->ended = true;
            continue;
        }
        if (st < 0)
            return st;
        if (d->buf[0] == '#')
            continue;
        if (strncmp(d->buf, "PART", 4) == 0) {
            d->ended = true;
            continue;
        }
        int n = split(d->buf, f, MAX_FIELDS);
        if (n == 0)
            return fail(d, err, NYTP_E_FORMAT, "an empty line where a record should be");
        if (strlen(f[0]) != 1)
            return fail(d, err, NYTP_E_FORMAT, "unknown record '%.40s'", f[0]);
        if (n > MAX_FIELDS)
            return fail(d, err, NYTP_E_FORMAT, "too many fields in a '%c' record", f[0][0]);
        switch (f[0][0]) {
        case '&':
            if ((st = declare(d, f, n, err)) < 0)
                return st;
            continue;
        case '@': {
            double u, s, r;
            if (n != 4 || !parse_number(f[1], &u) || !parse_number(f[2], &s) ||
                !parse_number(f[3], &r))
                return fail(d, err, NYTP_E_FORMAT, "a '@' record needs three tick counts");
            d->user += u;
            d->sys += s;
            d->real += r;
            continue;
        }
        case '+':
        case '-':
        case '*':
        case '/':
            return call_record(d, f, n, ev, err);
        default:
            return fail(d, err, NYTP_E_FORMAT, "unknown record '%.40s'", f[0]);
        }
    }
}
