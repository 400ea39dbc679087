/* fmt.c — number formatting shared by the commands. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

static const char hexdigits[] = "0123456789abcdef";

char *fmt_u64(char *o, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *o++ = tmp[--n];
    return o;
}

char *fmt_i64(char *o, int64_t v)
{
    if (v < 0) {
        *o++ = '-';
        return fmt_u64(o, (uint64_t)0 - (uint64_t)v);
    }
    return fmt_u64(o, (uint64_t)v);
}

char *fmt_nv(char *o, double d)
{
    if (isnan(d))
        return memcpy(o, "NaN", 3), o + 3;
    if (isinf(d))
        return d < 0 ? (memcpy(o, "-Inf", 4), o + 4) : (memcpy(o, "Inf", 3), o + 3);
    if (d == 0)
        return *o++ = '0', o;
    /* Whole numbers below 1e15 print the same under %.15g: skip snprintf. */
    if (d == floor(d) && fabs(d) < 1e15)
        return fmt_i64(o, (int64_t)d);
    return o + snprintf(o, 32, "%.15g", d);
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid
 * (overlong, a surrogate, beyond U+10FFFF, cut short); *cp gets the code
 * point. */
size_t fmt_utf8_decode(const unsigned char *p, size_t left, uint32_t *cp)
{
    unsigned char b = p[0];
    size_t n;
    uint32_t v;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
        v = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        v = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        v = b & 0x07;
    } else {
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

size_t fmt_utf8_seq(const unsigned char *p, size_t left)
{
    uint32_t cp;
    return fmt_utf8_decode(p, left, &cp);
}

/* A JSON string.  Valid UTF-8 passes through; a byte that is not part of
 * valid UTF-8 becomes \u00XX (its Latin-1 reading), so the output is always
 * valid JSON. */
char *fmt_json_str(char *o, const char *str, size_t len)
{
    const unsigned char *p = (const unsigned char *)str;
    *o++ = '"';
    for (size_t i = 0; i < len;) {
        unsigned char b = p[i];
        if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
            *o++ = (char)b;
            i++;
            continue;
        }
        if (b == '"' || b == '\\') {
            *o++ = '\\';
            *o++ = (char)b;
            i++;
            continue;
        }
        size_t n = b >= 0x80 ? fmt_utf8_seq(p + i, len - i) : 0;
        if (n > 1) {
            memcpy(o, p + i, n);
            o += n;
            i += n;
            continue;
        }
        *o++ = '\\';
        switch (b) {
        case '\n': *o++ = 'n'; break;
        case '\t': *o++ = 't'; break;
        case '\r': *o++ = 'r'; break;
        default:
            memcpy(o, "u00", 3);
            o += 3;
            *o++ = hexdigits[b >> 4];
            *o++ = hexdigits[b & 15];
        }
        i++;
    }
    *o++ = '"';
    return o;
}

/* JSON has no NaN or infinities: those become null.  Other numbers use the
 * shortest of %.15g and %.17g that reads back exactly. */
char *fmt_json_nv(char *o, double d)
{
    if (isnan(d) || isinf(d))
        return memcpy(o, "null", 4), o + 4;
    if (d == floor(d) && fabs(d) < 1e15)
        return fmt_i64(o, (int64_t)d);
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.15g", d);
    if (strtod(tmp, NULL) != d)
        snprintf(tmp, sizeof tmp, "%.17g", d);
    size_t n = strlen(tmp);
    memcpy(o, tmp, n);
    return o + n;
}


/* ---- HTML (nytp html) ---- */

char *fmt_html_str(char *o, const char *str, size_t len)
{
    const unsigned char *p = (const unsigned char *)str;
    for (size_t i = 0; i < len;) {
        unsigned char b = p[i];
        const char *ent = NULL;
        switch (b) {
        case '&': ent = "&amp;"; break;
        case '<': ent = "&lt;"; break;
        case '>': ent = "&gt;"; break;
        case '"': ent = "&quot;"; break;
        case '\'': ent = "&#39;"; break;
        default: break;
        }
        if (ent) {
            size_t n = strlen(ent);
            memcpy(o, ent, n);
            o += n;
            i++;
            continue;
        }
        if ((b >= 0x20 && b < 0x7f) || b == '\t') {
            *o++ = (char)b;
            i++;
            continue;
        }
        size_t n = b >= 0x80 ? fmt_utf8_seq(p + i, len - i) : 0;
        if (n > 1) {
            memcpy(o, p + i, n);
            o += n;
            i += n;
            continue;
        }
        uint32_t cp = b < 0x20 ? 0x2400u + b : b == 0x7f ? 0x2421u : b;
        if (cp < 0x800) { /* Latin-1 reading of a stray byte */
            *o++ = (char)(0xC0 | (cp >> 6));
            *o++ = (char)(0x80 | (cp & 0x3F));
        } else {
            *o++ = (char)(0xE0 | (cp >> 12));
            *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
            *o++ = (char)(0x80 | (cp & 0x3F));
        }
        i++;
    }
    return o;
}

char *fmt_duration(char *o, double s)
{
    if (isnan(s))
        return memcpy(o, "?", 1), o + 1;
    if (s < 0) {
        *o++ = '-';
        s = -s;
    }
    if (isinf(s))
        return memcpy(o, "Inf", 3), o + 3;
    if (s == 0)
        return memcpy(o, "0s", 2), o + 2;
    if (s < 1e-6)
        return o + snprintf(o, 30, "%.0fns", s * 1e9);
    if (s < 1e-3)
        return o + snprintf(o, 30, "%.0f\xC2\xB5s", s * 1e6);
    if (s >= 1e6) /* only a corrupt profile: keep it short */
        return o + snprintf(o, 30, "%.3gs", s);
    double v = s < 1 ? s * 1e3 : s;
    const char *unit = s < 1 ? "ms" : "s";
    if (v >= 100)
        return o + snprintf(o, 30, "%.0f%s", v, unit);
    int digits = v >= 10 ? 1 : 2;
    return o + snprintf(o, 30, "%.*f%s", digits, v, unit);
}

double fmt_time_scaled(double t, double scale)
{
    double v = t * scale;
    /* false for NaN; an infinity (or a product that overflowed) is not
     * finite */
    return v > 0 && isfinite(v) ? v : 0;
}

uint64_t fmt_time_units(double t, double scale)
{
    double v = fmt_time_scaled(t, scale);
    if (v >= (double)FMT_UNITS_MAX)
        return FMT_UNITS_MAX;
    return (uint64_t)llround(v);
}

uint64_t fmt_units_add(uint64_t a, uint64_t b)
{
    if (a > FMT_UNITS_MAX)
        a = FMT_UNITS_MAX;
    if (b > FMT_UNITS_MAX)
        b = FMT_UNITS_MAX;
    return a + b > FMT_UNITS_MAX ? FMT_UNITS_MAX : a + b;
}

size_t fmt_package_len(const char *name, size_t len)
{
    const char *br = memchr(name, '[', len);
    size_t end = br ? (size_t)(br - name) : len, pkg = 0;
    for (size_t i = 0; i + 1 < end; i++)
        if (name[i] == ':' && name[i + 1] == ':')
            pkg = i;
    return pkg;
}

double fmt_bar_pct(double v, double max)
{
    if (!(max > 0) || !(v > 0))
        return 0;
    return v >= max ? 100 : 100.0 * v / max;
}
