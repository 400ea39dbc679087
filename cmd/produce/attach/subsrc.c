/* subsrc.c — the lines of anonymous subs in a perl file's source. */
#include "subsrc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096      /* nested braces followed; deeper ones are not subs' */
#define MAX_HEREDOCS 16     /* here-documents begun on one line */

typedef struct lexer {
    const char *p, *end;
    uint32_t line;
    /* what came last: an operand (a '/' after it divides, '<<' shifts) */
    bool operand;
    /* here-documents whose bodies start at the next newline */
    struct { const char *tag; size_t len; bool indent; } hd[MAX_HEREDOCS];
    int nhd;
    /* open braces: the index of the anonymous sub a brace opens, or -1 */
    long stack[MAX_DEPTH];
    int depth;
    long want_first;    /* the block whose body's first token is still to come, or -1 */
    bool in_pragma;     /* ... after a use or no statement that began it */
    bool word_ok;       /* the last token was a word a block may be passed to */
    bool after_sub;     /* the last token was 'sub' */
    int pragma_depth;
} lexer;

static bool is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\n';
}

/* The rest of the line (the newline is left for next_line). */
static void skip_to_eol(lexer *l)
{
    while (l->p < l->end && *l->p != '\n')
        l->p++;
}

/* Past a newline at l->p: the bodies of the here-documents begun on the
 * line just ended, then, at a line's start, POD or the end of the code. */
static void next_line(lexer *l);

/* Whitespace and comments (a newline does next_line's work). */
static void skip_blank(lexer *l)
{
    while (l->p < l->end) {
        if (*l->p == '\n')
            next_line(l);
        else if (is_space(*l->p))
            l->p++;
        else if (*l->p == '#')
            skip_to_eol(l);
        else
            break;
    }
}

static bool line_is(const char *a, const char *e, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(e - a) >= n && memcmp(a, word, n) == 0;
}

static void next_line(lexer *l)
{
    l->p++;
    l->line++;
    for (int i = 0; i < l->nhd; i++) {
        while (l->p < l->end) {
            const char *a = l->p, *e = a;
            while (e < l->end && *e != '\n')
                e++;
            const char *t = a;
            if (l->hd[i].indent)
                while (t < e && (*t == ' ' || *t == '\t'))
                    t++;
            size_t n = (size_t)(e - t);
            if (n > 0 && t[n - 1] == '\r')
                n--;
            bool last = n == l->hd[i].len && memcmp(t, l->hd[i].tag, n) == 0;
            l->p = e < l->end ? e + 1 : e;
            if (e < l->end)
                l->line++;
            if (last)
                break;
        }
    }
    l->nhd = 0;
    /* POD from a line starting '=word' to the line starting '=cut' */
    while (l->p + 1 < l->end && l->p[0] == '=' && ((l->p[1] >= 'a' && l->p[1] <= 'z')
                                                   || (l->p[1] >= 'A' && l->p[1] <= 'Z'))) {
        bool cut = false;
        while (l->p < l->end && !cut) {
            cut = line_is(l->p, l->end, "=cut");
            skip_to_eol(l);
            if (l->p < l->end) {
                l->p++;
                l->line++;
            }
        }
    }
    if (line_is(l->p, l->end, "__END__") || line_is(l->p, l->end, "__DATA__"))
        l->p = l->end;
}

static char closer(char open)
{
    switch (open) {
    case '(': return ')';
    case '[': return ']';
    case '{': return '}';
    case '<': return '>';
    default: return open;
    }
}

/* A delimited string whose opening delimiter is at l->p: past its end. */
static void skip_delimited(lexer *l)
{
    char open = *l->p++, close = closer(open);
    int nest = 1;
    while (l->p < l->end) {
        char c = *l->p;
        if (c == '\\' && l->p + 1 < l->end) {
            if (l->p[1] == '\n')
                l->line++;
            l->p += 2;
            continue;
        }
        l->p++;
        if (c == '\n') {
            l->line++;
        } else if (c == close && open != close) {
            if (--nest == 0)
                return;
        } else if (c == close) {
            return;
        } else if (c == open) {
            nest++;
        }
    }
}

/* After q, qq, qw, qr, m (parts 1), s, tr, y (parts 2), at the
 * delimiter: the operator's strings and any flags. */
static void skip_quotelike(lexer *l, int parts)
{
    char open = *l->p;
    skip_delimited(l);
    if (parts == 2) {
        if (closer(open) != open) {
            skip_blank(l);
            if (l->p < l->end)
                skip_delimited(l);
        } else {
            /* s/a/b/: the middle delimiter ends one part and opens the next */
            l->p--;
            skip_delimited(l);
        }
    }
    while (l->p < l->end && is_word(*l->p))
        l->p++;
}

/* Words after which a '/' starts a regex and '<<' a here-document. */
static bool takes_operand(const char *w, size_t n)
{
    static const char *const words[] = {"if", "unless", "while", "until", "and", "or", "not",
                                        "xor", "return", "split", "grep", "map", "join", "push",
                                        "unshift", "when", "x", "lt", "gt", "le", "ge", "eq",
                                        "ne", "cmp", "print", "say", "die", "warn", NULL};
    for (int i = 0; words[i]; i++)
        if (strlen(words[i]) == n && memcmp(words[i], w, n) == 0)
            return true;
    return false;
}

/* Words whose block is no sub's (a named sub's name comes after 'sub'). */
static bool is_keyword(const char *w, size_t n)
{
    static const char *const words[] = {"if", "unless", "while", "until", "for", "foreach",
                                        "else", "elsif", "do", "eval", "map", "grep", "sort",
                                        "BEGIN", "END", "INIT", "CHECK", "UNITCHECK", "package",
                                        "continue", "default", "when", "given", "print", "say",
                                        "exec", "system", "return", "and", "or", "not", "local",
                                        "my", "our", "state", "defer", NULL};
    for (int i = 0; words[i]; i++)
        if (strlen(words[i]) == n && memcmp(words[i], w, n) == 0)
            return true;
    return false;
}

static int add_span(subsrc *s, bool sub, bool call)
{
    if (s->n == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 64;
        subsrc_span *v = realloc(s->v, ncap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = ncap;
    }
    s->v[s->n].first = 0;
    s->v[s->n].end = 0;
    s->v[s->n].order = (uint32_t)s->n;
    s->v[s->n].sub = sub;
    s->v[s->n].call = call;
    s->n++;
    return 0;
}

/* At a '<<' that is not a shift: the here-document's tag, noted for the
 * next newline, and l->p past it; false when it is not one. */
static bool heredoc(lexer *l)
{
    const char *q = l->p + 2;
    bool indent = q < l->end && *q == '~';
    if (indent)
        q++;
    while (q < l->end && (*q == ' ' || *q == '\t'))
        q++;
    const char *tag, *tag_end;
    if (q < l->end && (*q == '"' || *q == '\'' || *q == '`')) {
        char d = *q++;
        tag = q;
        while (q < l->end && *q != d && *q != '\n')
            q++;
        if (q >= l->end || *q != d)
            return false;
        tag_end = q++;
    } else if (q == l->p + 2 + indent && q < l->end && is_word(*q) && !(*q >= '0' && *q <= '9')) {
        tag = q;
        while (q < l->end && is_word(*q))
            q++;
        tag_end = q;
    } else {
        return false;
    }
    if (l->nhd < MAX_HEREDOCS) {
        l->hd[l->nhd].tag = tag;
        l->hd[l->nhd].len = (size_t)(tag_end - tag);
        l->hd[l->nhd].indent = indent;
        l->nhd++;
    }
    l->p = q;
    return true;
}

/* A '{' at l->p: opened and noted. */
static int open_block(lexer *l, subsrc *s, bool sub, bool call)
{
    l->p++;
    l->operand = false;
    if (l->depth >= MAX_DEPTH) {
        l->depth++;
        return 0;
    }
    if (add_span(s, sub, call) < 0)
        return -1;
    l->stack[l->depth++] = (long)s->n - 1;
    l->want_first = (long)s->n - 1;
    l->in_pragma = false;
    return 0;
}

/* At 'sub' (a word of its own): an anonymous sub's '{' opened and noted,
 * or nothing done for a named one. */
static int sub_keyword(lexer *l, subsrc *s)
{
    skip_blank(l);
    if (l->p >= l->end || is_word(*l->p) || *l->p == '=' || *l->p == ',')
        return 0;   /* named, or a hash key 'sub =>' */
    if (*l->p == '(') { /* a prototype or a signature */
        int nest = 0;
        while (l->p < l->end) {
            char c = *l->p++;
            if (c == '\n') {
                l->p--;
                next_line(l);
            } else if (c == '(') {
                nest++;
            } else if (c == ')' && --nest == 0) {
                break;
            } else if (c == '\'' || c == '"') {
                l->p--;
                skip_delimited(l);
            }
        }
        skip_blank(l);
    }
    while (l->p < l->end && *l->p == ':') { /* attributes */
        l->p++;
        skip_blank(l);
        while (l->p < l->end && is_word(*l->p))
            l->p++;
        if (l->p < l->end && *l->p == '(')
            skip_delimited(l);
        skip_blank(l);
    }
    if (l->p >= l->end || *l->p != '{')
        return 0;
    return open_block(l, s, true, false);
}

static int by_first(const void *a, const void *b)
{
    const subsrc_span *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

int subsrc_scan(subsrc *s, const char *text, size_t len)
{
    memset(s, 0, sizeof *s);
    lexer *l = calloc(1, sizeof *l);
    if (!l)
        return -1;
    l->p = text;
    l->end = text + len;
    l->line = 1;
    l->want_first = -1;
    int rc = 0;
    /* the file's first line, as next_line sees every other */
    if (line_is(l->p, l->end, "__END__") || line_is(l->p, l->end, "__DATA__"))
        l->p = l->end;
    while (rc == 0) {
        skip_blank(l);
        if (l->p >= l->end)
            break;
        char c = *l->p;
        bool word_before = l->word_ok, sub_before = l->after_sub;
        l->word_ok = l->after_sub = false;
        if (l->want_first >= 0 && !l->in_pragma) {
            /* use and no statements leave no code: the first statement
             * perl runs is the one after them */
            const char *q = l->p;
            while (q < l->end && is_word(*q))
                q++;
            size_t wn = (size_t)(q - l->p);
            if (q < l->end && is_space(*q)
                && ((wn == 3 && memcmp(l->p, "use", 3) == 0) || (wn == 2 && memcmp(l->p, "no", 2) == 0))) {
                l->in_pragma = true;
                l->pragma_depth = l->depth;
            } else {
                s->v[l->want_first].first = l->line;
                l->want_first = -1;
            }
        }
        if (is_word(c) && !(c >= '0' && c <= '9')) {
            const char *w = l->p;
            while (l->p < l->end && (is_word(*l->p) || (*l->p == ':' && l->p + 1 < l->end
                                                         && l->p[1] == ':' && l->p++)))
                l->p++;
            size_t n = (size_t)(l->p - w);
            /* a word right after '->' or a sigil is a method or a name */
            char before = w > text ? w[-1] : ' ';
            bool name = before == '$' || before == '@' || before == '%' || before == '&'
                        || before == '*' || (before == '>' && w - 1 > text && w[-2] == '-');
            if (name) {
                l->operand = true;
                continue;
            }
            const char *after = l->p;
            while (after < l->end && (*after == ' ' || *after == '\t'))
                after++;
            bool fat_comma = after + 1 < l->end && after[0] == '=' && after[1] == '>';
            bool key = before == '{' && after < l->end && *after == '}';
            if (fat_comma || key) {
                l->operand = true;
                continue;
            }
            int parts = 0;
            if (before == '-' && n == 1) /* a file test: -s $file */
                ;
            else if ((n == 1 && (*w == 'q' || *w == 'm')) || (n == 2 && (memcmp(w, "qq", 2) == 0 || memcmp(w, "qw", 2) == 0 || memcmp(w, "qr", 2) == 0)))
                parts = 1;
            else if ((n == 1 && (*w == 's' || *w == 'y')) || (n == 2 && memcmp(w, "tr", 2) == 0))
                parts = 2;
            if (parts) {
                /* the delimiter: any non-word, non-space character; after
                 * a space not '#' (a comment) nor '=' ('s = 1') */
                const char *d = l->p;
                bool spaced = false;
                while (d < l->end && is_space(*d) && *d != '\n') {
                    d++;
                    spaced = true;
                }
                if (d < l->end && !is_word(*d) && !is_space(*d) && *d != ','
                    && *d != ';' && *d != ')' && !(spaced && (*d == '#' || *d == '='))
                    && !(*d == '=' && d + 1 < l->end && (d[1] == '=' || d[1] == '~'))) {
                    l->p = d;
                    skip_quotelike(l, parts);
                    l->operand = true;
                    continue;
                }
            }
            if (n == 3 && memcmp(w, "sub", 3) == 0) {
                l->after_sub = true;
                rc = sub_keyword(l, s);
                continue;
            }
            if ((n == 7 && memcmp(w, "__END__", 7) == 0) || (n == 8 && memcmp(w, "__DATA__", 8) == 0))
                break;
            l->operand = !takes_operand(w, n);
            l->word_ok = !sub_before && !is_keyword(w, n);
            continue;
        }
        if (c >= '0' && c <= '9') {
            while (l->p < l->end && (is_word(*l->p) || *l->p == '.'))
                l->p++;
            l->operand = true;
            continue;
        }
        switch (c) {
        case '\'':
        case '"':
        case '`':
            skip_delimited(l);
            l->operand = true;
            break;
        case '$':
            l->p++;
            /* $#array, $#{...}, and punctuation variables ($', $", $#, $;) */
            if (l->p < l->end && *l->p == '#') {
                l->p++;
            } else if (l->p < l->end && !is_word(*l->p) && *l->p != '{' && *l->p != '$'
                       && !is_space(*l->p) && *l->p != ':') {
                l->p++;
                l->operand = true;
            }
            break;
        case '@':
        case '%':
        case '&':
        case '*':
            l->p++;
            l->operand = false;
            break;
        case '/':
            if (l->operand) {
                /* a division, or '//' (defined-or) */
                l->p += l->p + 1 < l->end && l->p[1] == '/' ? 2 : 1;
                l->operand = false;
            } else {
                skip_quotelike(l, 1);
                l->operand = true;
            }
            break;
        case '<':
            if (!l->operand && l->p + 1 < l->end && l->p[1] == '<' && heredoc(l)) {
                l->operand = true;
            } else {
                l->p++;
                l->operand = false;
            }
            break;
        case '{':
            rc = open_block(l, s, false, word_before);
            break;
        case ';':
            l->p++;
            l->operand = false;
            if (l->in_pragma && l->depth == l->pragma_depth)
                l->in_pragma = false;
            break;
        case '}':
            l->p++;
            if (l->depth > 0) {
                l->depth--;
                if (l->depth < MAX_DEPTH && l->stack[l->depth] >= 0)
                    s->v[l->stack[l->depth]].end = l->line;
            }
            l->operand = true;
            break;
        case ')':
        case ']':
            l->p++;
            l->operand = true;
            break;
        default:
            l->p++;
            l->operand = false;
            break;
        }
    }
    free(l);
    if (rc < 0) {
        subsrc_release(s);
        return -1;
    }
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, by_first);
    return 0;
}

uint32_t subsrc_end(const subsrc *s, uint32_t first)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].first < first)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t end = 0, block_end = 0, block_order = UINT32_MAX;
    bool subs = false;
    for (size_t i = lo; i < s->n && s->v[i].first == first; i++) {
        const subsrc_span *v = &s->v[i];
        if (v->sub) {
            if (!v->end || (subs && v->end != end))
                return 0;
            end = v->end;
            subs = true;
        } else if (v->call && v->order < block_order) {
            block_order = v->order;
            block_end = v->end;
        }
    }
    if (subs)
        return end;
    if (block_end)
        return block_end;
    /* perl numbers a statement over several lines by one of its later
     * lines at times ('f(...)\n or die', a call's arguments over lines):
     * the innermost sub or block after a word that holds the line */
    uint32_t best = UINT32_MAX;
    for (size_t i = 0; i < lo; i++) {
        const subsrc_span *v = &s->v[i];
        if ((v->sub || v->call) && v->end >= first && (best == UINT32_MAX || v->order > s->v[best].order))
            best = (uint32_t)i;
    }
    return best == UINT32_MAX ? 0 : s->v[best].end;
}

void subsrc_release(subsrc *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}
