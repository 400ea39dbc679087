/* term.c — tables for people on a terminal (see term.h): escaping,
 * cutting and padding, durations and shares, whole tables fitted to the
 * width, and names cut so that they stay apart (term_fit_names). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fmt.h"
#include "term.h"

void term_init(term *t, const char *path)
{
    t->width = 0;
    t->colour = false;
    bool to_stdout = !path || strcmp(path, "-") == 0;
    if (to_stdout && isatty(STDOUT_FILENO)) {
        struct winsize ws;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
            t->width = ws.ws_col;
        t->colour = getenv("NO_COLOR") == NULL;
    }
    if (!t->width && to_stdout) {
        const char *c = getenv("COLUMNS");
        char *end;
        unsigned long v = c && *c ? strtoul(c, &end, 10) : 0;
        if (v > 0 && v < 100000 && !*end)
            t->width = (unsigned)v;
    }
    if (t->width && t->width < 40)
        t->width = 40; /* too narrow to be useful: wrap rather than cut to nothing */
}

void term_sgr(const term *t, nytp_out *out, enum term_sgr what)
{
    static const char *const codes[] = {"\033[0m", "\033[1m", "\033[31m", "\033[32m", "\033[33m",
                                        "\033[2m"};
    if (t->colour)
        nytp_out_write(out, codes[what], strlen(codes[what]));
}

size_t term_clean(const char *p, size_t n, bool tabs, char *o, size_t *cols)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t k = 0, c = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t l = fmt_utf8_decode(s + i, n - i, &cp);
        if (l == 0) { /* a stray byte: its Latin-1 character */
            l = 1;
            cp = s[i];
            if (cp >= 0xA0) {
                o[k++] = (char)(0xC0 | (cp >> 6));
                o[k++] = (char)(0x80 | (cp & 0x3F));
                c++;
                i++;
                continue;
            }
        }
        if (cp == '\\' && !tabs) { /* so that "\\x1B" never reads as an escape */
            memcpy(o + k, "\\\\", 2);
            k += 2;
            c += 2;
        } else if (cp == '\t' && tabs) {
            size_t to = (c / 8 + 1) * 8;
            while (c < to) {
                o[k++] = ' ';
                c++;
            }
        } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
            k += (size_t)sprintf(o + k, "\\x%02X", cp);
            c += 4;
        } else {
            memcpy(o + k, s + i, l);
            k += l;
            c++;
        }
        i += l;
    }
    o[k] = 0;
    *cols = c;
    return k;
}

/* Bytes of the first cols characters of clean UTF-8 text. */
static size_t prefix_bytes(const char *s, size_t len, size_t cols)
{
    size_t i = 0;
    for (size_t c = 0; c < cols && i < len; c++) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
    }
    return i;
}

static void spaces(nytp_out *out, size_t n)
{
    static const char sp[] = "                                ";
    while (n) {
        size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
        nytp_out_write(out, sp, k);
        n -= k;
    }
}

void term_put(nytp_out *out, const char *s, size_t len, size_t width, size_t cols,
              enum term_align align)
{
    if (cols == 0) {
        nytp_out_write(out, s, len);
        return;
    }
    if (width > cols && align == TERM_KEEP_END) {
        size_t keep = cols > 2 ? cols - 2 : 0;
        nytp_out_write(out, "..", cols - keep < 2 ? cols - keep : 2);
        size_t skip = prefix_bytes(s, len, width - keep);
        nytp_out_write(out, s + skip, len - skip);
        return;
    }
    if (width > cols) {
        size_t keep = cols > 2 ? cols - 2 : 0;
        nytp_out_write(out, s, prefix_bytes(s, len, keep));
        nytp_out_write(out, "..", cols - keep < 2 ? cols - keep : 2);
        return;
    }
    if (align == TERM_RIGHT)
        spaces(out, cols - width);
    nytp_out_write(out, s, len);
    if (align != TERM_RIGHT)
        spaces(out, cols - width);
}

void term_num(nytp_out *out, const char *text, size_t cols)
{
    size_t len = strlen(text), w = 0;
    for (size_t i = 0; i < len; i++)
        w += ((unsigned char)text[i] & 0xC0) != 0x80;
    if (w < cols)
        spaces(out, cols - w);
    nytp_out_write(out, text, len);
}

int term_cell(nytp_out *out, const char *s, size_t len, size_t cols, enum term_align align)
{
    char small[512];
    char *buf = len * 4 + 1 <= sizeof small ? small : malloc(len * 4 + 1);
    if (!buf)
        return NYTP_E_NOMEM;
    size_t w;
    size_t n = term_clean(s, len, false, buf, &w);
    term_put(out, buf, n, w, cols, align);
    if (buf != small)
        free(buf);
    return NYTP_OK;
}

char *term_dur(char *o, double secs, bool sign)
{
    if (sign && secs > 0)
        *o++ = '+';
    return fmt_duration(o, secs);
}

char *term_pct(char *o, double pct, bool sign)
{
    if (!isfinite(pct))
        return memcpy(o, "-", 1), o + 1;
    const char *plus = sign && pct > 0 ? "+" : "";
    double a = fabs(pct);
    /* at most 31 bytes whatever the value: a corrupt profile's 1e300 % too */
    if (a >= 1e6)
        return o + snprintf(o, 32, "%s%.3g%%", plus, pct);
    if (a >= 99.95 || a == 0)
        return o + snprintf(o, 32, "%s%.0f%%", plus, pct);
    return o + snprintf(o, 32, "%s%.1f%%", plus, pct);
}

void term_write_fitted(const term *t, nytp_out *out, const char *text, size_t len)
{
    if (!t->width) {
        nytp_out_write(out, text, len);
        return;
    }
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t i = start, cols = 0;
        bool in_sgr = false;
        while (i < end) {
            unsigned char c = (unsigned char)text[i];
            if (c == 0x1B) { /* our own SGR sequences: no width */
                size_t k = i + 1;
                while (k < end && text[k] != 'm')
                    k++;
                in_sgr = !(k < end && k - i == 3 && text[i + 2] == '0'); /* all but a reset */
                i = k < end ? k + 1 : end;
                continue;
            }
            if ((c & 0xC0) != 0x80) {
                if (cols == t->width)
                    break;
                cols++;
            }
            i++;
        }
        nytp_out_write(out, text + start, i - start);
        if (i < end && in_sgr)
            nytp_out_write(out, "\033[0m", 4);
        nytp_out_write(out, "\n", nl ? 1 : 0);
        start = nl ? end + 1 : len;
    }
}

/* ---- names that stay apart ------------------------------------------------------------ */

/* A clean name with the byte offset of each of its characters. */
typedef struct fit_name {
    const char *s;
    size_t *at;             /* at[i]: byte of character i; at[w]: the length */
    size_t w;               /* characters (columns) */
    size_t own;             /* characters before its own name's "::" (w: none) */
    char *out;              /* the shown form */
    size_t out_w;
} fit_name;

/* Head characters of the name, "…", its last tail characters. */
static bool fit_cut(fit_name *f, size_t head, size_t tail)
{
    size_t hb = f->at[head], tb = f->at[f->w - tail], len = f->at[f->w];
    char *o = malloc(hb + 3 + (len - tb) + 1);
    if (!o)
        return false;
    memcpy(o, f->s, hb);
    memcpy(o + hb, "\xE2\x80\xA6", 3);
    memcpy(o + hb + 3, f->s + tb, len - tb);
    o[hb + 3 + len - tb] = 0;
    free(f->out);
    f->out = o;
    f->out_w = head + 1 + tail;
    return true;
}

/* Head, "…", the characters from mid for mw, "…", tail. */
static bool fit_window(fit_name *f, size_t head, size_t mid, size_t mw, size_t tail)
{
    size_t len = f->at[f->w];
    char *o = malloc(len + 7);
    if (!o)
        return false;
    size_t k = 0;
    memcpy(o, f->s, f->at[head]);
    k += f->at[head];
    memcpy(o + k, "\xE2\x80\xA6", 3);
    k += 3;
    memcpy(o + k, f->s + f->at[mid], f->at[mid + mw] - f->at[mid]);
    k += f->at[mid + mw] - f->at[mid];
    if (mid + mw < f->w - tail) {
        memcpy(o + k, "\xE2\x80\xA6", 3);
        k += 3;
    }
    memcpy(o + k, f->s + f->at[f->w - tail], len - f->at[f->w - tail]);
    k += len - f->at[f->w - tail];
    o[k] = 0;
    free(f->out);
    f->out = o;
    f->out_w = head + 1 + mw + (mid + mw < f->w - tail) + tail;
    return true;
}

static bool fit_whole(fit_name *f)
{
    size_t len = f->at[f->w];
    char *o = malloc(len + 1);
    if (!o)
        return false;
    memcpy(o, f->s, len);
    o[len] = 0;
    free(f->out);
    f->out = o;
    f->out_w = f->w;
    return true;
}

/* The first form: the start of the package path up to a "::" and the
 * sub's own name ("Perl::Tidy::…::tokenize_this_line"); a name whose own
 * part does not fit keeps a third of the room for its start and the rest
 * for its end ("M::__AN…/lib/M.pm:4]"). */
static bool fit_first(fit_name *f, size_t cols)
{
    if (f->w <= cols)
        return fit_whole(f);
    size_t tail = f->own < f->w ? f->w - f->own : 0;
    if (tail && tail + 1 + 4 <= cols) {
        size_t budget = cols - 1 - tail, head = budget;
        /* whole components when that keeps half the room or more */
        for (size_t i = budget; i >= 2 && i >= budget / 2; i--)
            if (f->s[f->at[i - 1]] == ':' && f->s[f->at[i - 2]] == ':') {
                head = i;
                break;
            }
        return fit_cut(f, head, tail);
    }
    size_t head = (cols - 1) / 3 ? (cols - 1) / 3 : 1;
    return fit_cut(f, head, cols - 1 - head);
}

static bool same_out(const fit_name *a, const fit_name *b)
{
    return strcmp(a->out, b->out) == 0;
}

/* Whether name i reads as another. */
static bool clashes(const fit_name *v, size_t n, size_t i)
{
    for (size_t j = 0; j < n; j++)
        if (j != i && same_out(&v[i], &v[j]))
            return true;
    return false;
}

/* The first character at which the names that read as v[i] differ. */
static size_t first_difference(const fit_name *v, size_t n, size_t i)
{
    size_t d = v[i].w;
    for (size_t j = 0; j < n; j++) {
        if (j == i || !same_out(&v[i], &v[j]))
            continue;
        size_t k = 0;
        while (k < v[i].w && k < v[j].w &&
               v[i].at[k + 1] - v[i].at[k] == v[j].at[k + 1] - v[j].at[k] &&
               memcmp(v[i].s + v[i].at[k], v[j].s + v[j].at[k], v[i].at[k + 1] - v[i].at[k]) == 0)
            k++;
        if (k < d)
            d = k;
    }
    return d;
}

char **term_fit_names(char *const *names, const size_t *lens, size_t n, size_t cols, size_t *widths)
{
    fit_name *v = calloc(n + 1, sizeof *v);
    char **res = calloc(n + 1, sizeof *res);
    bool ok = v && res;
    if (cols && cols < 8)
        cols = 8;
    for (size_t i = 0; i < n && ok; i++) {
        fit_name *f = &v[i];
        f->s = names[i];
        f->at = malloc((lens[i] + 1) * sizeof *f->at);
        if (!f->at) {
            ok = false;
            break;
        }
        for (size_t b = 0; b < lens[i]; b++)
            if (((unsigned char)names[i][b] & 0xC0) != 0x80)
                f->at[f->w++] = b;
        f->at[f->w] = lens[i];
        f->own = f->w;
        for (size_t c = f->w; c >= 2; c--)
            if (names[i][f->at[c - 1]] == ':' && names[i][f->at[c - 2]] == ':') {
                f->own = c - 2;
                break;
            }
        ok = cols && f->w > cols ? fit_first(f, cols) : fit_whole(f);
    }
    /* names that read as another, a group at a time: more of their end,
     * then the place where they differ, then (equal names, or "…" in a
     * name) a number */
    bool *in = calloc(n + 1, sizeof *in);
    ok = ok && in;
    for (int pass = 0; pass < 8 && ok && cols; pass++) {
        bool any = false;
        for (size_t i = 0; i < n && ok; i++) {
            if (!clashes(v, n, i))
                continue;
            any = true;
            for (size_t j = 0; j < n; j++)
                in[j] = same_out(&v[i], &v[j]);
            bool apart = false;
            if (pass == 0) {
                /* the ends, longer, the same for the whole group (from
                 * the own name on, when it fits) */
                size_t own = v[i].w - v[i].own, from = own && own + 2 <= cols ? own : 1;
                for (size_t tail = from; tail + 2 <= cols && !apart && ok; tail++) {
                    size_t head = cols - 1 - tail;
                    bool cut_all = true;
                    for (size_t j = 0; j < n && ok; j++)
                        if (in[j] && v[j].w > cols)
                            ok = fit_cut(&v[j], head, tail);
                        else if (in[j])
                            cut_all = false;
                    apart = cut_all;
                    for (size_t j = 0; j < n && apart; j++)
                        if (in[j] && clashes(v, n, j))
                            apart = false;
                    if (apart)
                        break;
                }
                if (!apart) /* back to the first form; the window is next */
                    for (size_t j = 0; j < n && ok; j++)
                        if (in[j] && v[j].w > cols)
                            ok = fit_first(&v[j], cols);
            } else if (pass < 7 && v[i].w > cols) {
                /* a window on the first character where they differ,
                 * from the start of its component when that is near,
                 * between "…"s, the own name kept when it leaves room */
                size_t d = first_difference(v, n, i);
                for (size_t j = 0; j < n && ok; j++) {
                    if (!in[j] || v[j].w <= cols)
                        continue;
                    fit_name *f = &v[j];
                    size_t own = f->w - f->own;
                    size_t tail = own && own + 2 + 6 <= cols ? own : cols >= 16 ? 4 : 1;
                    size_t avail = cols - tail - 2;
                    size_t head = avail >= 14 ? 4 : 0, mw = avail - head;
                    size_t at = d < f->w ? d : f->w - 1, comp = at;
                    while (comp >= 2 && !(f->s[f->at[comp - 1]] == ':' && f->s[f->at[comp - 2]] == ':'))
                        comp--;
                    if (comp < 2)
                        comp = 0;
                    size_t mid = at - comp <= mw / 2 ? comp : at - mw / 2;
                    if (mid < head)
                        mid = head;
                    if (mid + mw > f->w - tail)
                        mid = f->w - tail - mw;
                    ok = fit_window(f, head, mid, mw, tail);
                }
            } else {
                /* numbered, the first of the group as it is */
                size_t k = 0;
                for (size_t j = 0; j < n && ok; j++) {
                    if (!in[j] || k++ == 0)
                        continue;
                    char num[24];
                    snprintf(num, sizeof num, " #%zu", k);
                    size_t l = strlen(v[j].out), nl = strlen(num);
                    char *o = realloc(v[j].out, l + nl + 1);
                    if (!o) {
                        ok = false;
                        break;
                    }
                    memcpy(o + l, num, nl + 1);
                    v[j].out = o;
                    v[j].out_w += nl;
                }
            }
        }
        if (!any)
            break;
    }
    free(in);
    for (size_t i = 0; i < n && ok; i++) {
        res[i] = v[i].out;
        v[i].out = NULL;
        if (widths)
            widths[i] = v[i].out_w;
    }
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].at);
        free(v[i].out);
    }
    free(v);
    if (!ok) {
        for (size_t i = 0; res && i < n; i++)
            free(res[i]);
        free(res);
        return NULL;
    }
    return res;
}

void term_free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

int term_write_table(const term *t, nytp_out *out, void (*write)(void *ctx, nytp_out *mem),
                     void *ctx)
{
    nytp_out *mem;
    nytp_error e = {0};
    uint8_t *text = NULL;
    size_t len = 0;
    if (nytp_out_open_mem(&mem, &e) < 0)
        return NYTP_E_NOMEM;
    write(ctx, mem);
    if (nytp_out_close_mem(mem, &text, &len, &e) < 0) {
        free(text);
        return NYTP_E_NOMEM;
    }
    term_write_fitted(t, out, (const char *)text, len);
    free(text);
    return NYTP_OK;
}
