/* term.c — tables for people on a terminal (see term.h). */
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
        if (cp == '\t' && tabs) {
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
