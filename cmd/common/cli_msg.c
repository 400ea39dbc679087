/* cli_msg.c — messages in one format: errors, capped warnings, notes,
 * usage errors and exit 2, and every byte escaped for the terminal. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define LIBBSD_OPENBSD_VIS
#include <bsd/vis.h>

#include "cli_impl.h"

const char *cli_command = NULL;

/* Length of the UTF-8 sequence at s that a terminal shows as text, or 0
 * when s[0] starts something it may act on: a C0 control or DEL, a C1
 * control (U+0080..U+009F; U+009B is a CSI), or a byte that is not valid
 * UTF-8 (a lone 0x9B is a CSI to an 8-bit terminal). */
static size_t printable_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x20 || c == 0x7f)
        return 0;
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
        return 0;
    return len;
}

size_t cli_escape(char *dst, size_t size, const char *src)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t n = strlen(src), k = 0;
    if (!size)
        return 0;
    for (size_t i = 0; i < n;) {
        size_t ok = printable_len(s + i, n - i);
        if (ok) {
            if (k + ok >= size)
                break;
            memcpy(dst + k, s + i, ok);
            k += ok;
            i += ok;
            continue;
        }
        /* \ooo, or \n \t \r ... (at most 4 bytes and the NUL).  strnvis
         * leaves LF and TAB as they are unless told: a newline in a name
         * would start a line of the name's own choosing. */
        char enc[8];
        strnvisx(enc, sizeof enc, src + i, 1, VIS_OCTAL | VIS_CSTYLE | VIS_NL | VIS_TAB);
        size_t el = strlen(enc);
        if (k + el >= size)
            break;
        memcpy(dst + k, enc, el);
        k += el;
        i++;
    }
    dst[k] = 0;
    return k;
}

/* Every message goes through cli_escape: file and sub names come from
 * profiles, and a name holding ESC [ or ESC ] would drive the terminal. */
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
    park_if_dying(); /* an error the signal handler's cleanup caused */
    char line[1024], safe[4 * sizeof line];
    vsnprintf(line, sizeof line, fmt, ap);
    cli_escape(safe, sizeof safe, line);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s%s\n", cli_command, prefix, safe);
    else
        fprintf(stderr, "nytp: %s%s\n", prefix, safe);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

/* Warnings are capped by kind: a profile can hold millions of the same
 * problem (a PID_END without its start, a file id declared again), and
 * each would be a line on stderr.  The first WARN_SHOWN of a kind are
 * shown; the rest are counted and summed up in one line per kind at exit.
 * A kind is a message's format; kinds past the table's end share its
 * last slot. */
#define WARN_SHOWN 10
#define WARN_KINDS 64
typedef struct {
    char kind[160];             /* the format, cut to fit */
    unsigned long seen;
    char last[1024];            /* the last message shown, for the summary */
} warn_kind;
static warn_kind *warn_kinds;   /* WARN_KINDS of them, allocated at the first warning */
static size_t n_warn_kinds;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

static void warn_summary(void)
{
    pthread_mutex_lock(&warn_lock);
    for (size_t i = 0; i < n_warn_kinds; i++) {
        warn_kind *k = &warn_kinds[i];
        if (k->seen > WARN_SHOWN)
            cli_note("warning: ... and %lu more warnings like this: %s", k->seen - WARN_SHOWN,
                     k->last);
    }
    pthread_mutex_unlock(&warn_lock);
}

/* Whether a warning of this kind is to be shown (its text is line);
 * counts it either way. */
static bool warn_counts(const char *kind, const char *line)
{
    bool show = true;
    pthread_mutex_lock(&warn_lock);
    if (!warn_kinds) {
        warn_kinds = calloc(WARN_KINDS, sizeof *warn_kinds);
        if (warn_kinds)
            atexit(warn_summary);
    }
    if (warn_kinds) {
        size_t i = 0;
        while (i < n_warn_kinds && strncmp(warn_kinds[i].kind, kind, sizeof warn_kinds[i].kind - 1))
            i++;
        if (i == n_warn_kinds) {
            if (n_warn_kinds < WARN_KINDS)
                snprintf(warn_kinds[n_warn_kinds++].kind, sizeof warn_kinds->kind, "%s", kind);
            else
                i = WARN_KINDS - 1;
        }
        warn_kind *k = &warn_kinds[i];
        show = ++k->seen <= WARN_SHOWN;
        if (show)
            snprintf(k->last, sizeof k->last, "%s", line);
    }
    pthread_mutex_unlock(&warn_lock);
    return show;
}

/* A warning of a kind (see warn_counts): shown or counted. */
static void vwarn_kind(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    if (warn_counts(kind, line))
        cli_note("warning: %s", line);
}

static void warn_kind_of(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn_kind_of(const char *kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn_kind(kind, fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn_kind(fmt, fmt, ap);
    va_end(ap);
}

void cli_warn_error(const nytp_error *w)
{
    warn_kind_of(w->kind ? w->kind : w->msg, "%s", w->msg);
}

_Noreturn void cli_usage_error(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char safe[4 * sizeof line];
    cli_escape(safe, sizeof safe, line);
    if (cli_command)
        fprintf(stderr, "nytp %s: %s (see 'nytp %s --help')\n", cli_command, safe, cli_command);
    else
        fprintf(stderr, "nytp: %s (see 'nytp --help')\n", safe);
    exit(EXIT_USAGE);
}

const char *display_name(const char *file)
{
    return strcmp(file, "-") == 0 ? "(standard input)" : file;
}

void cli_report(const char *file, const nytp_error *e, bool as_warning)
{
    char where[200];
    const char *what = nytp_status_name(e->status);
    if (e->status == NYTP_E_IO || e->status == NYTP_E_NOMEM) {
        if (as_warning)
            warn_kind_of(e->kind ? e->kind : e->msg, "%s: %s", display_name(file), e->msg);
        else
            cli_error("%s: %s", display_name(file), e->msg);
        return;
    }
    nytp_error_where(e, where, sizeof where);
    if (as_warning)
        warn_kind_of(e->kind ? e->kind : e->msg, "%s: %s at %s: %s", display_name(file), what, where,
                     e->msg);
    else
        cli_error("%s: %s at %s: %s", display_name(file), what, where, e->msg);
}

void cli_reader_warning(void *ctx, const nytp_error *w)
{
    char where[200];
    nytp_error_where(w, where, sizeof where);
    warn_kind_of(w->kind ? w->kind : w->msg, "%s: at %s: %s", display_name(ctx), where, w->msg);
}
