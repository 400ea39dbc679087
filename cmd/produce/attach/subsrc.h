/* subsrc.h — where each anonymous sub of a perl file ends, from its source.
 *
 * Perl names an anonymous sub, when its debugger flags ask for it (as
 * Devel::NYTP and Devel::NYTProf do), __ANON__[file:line] with the line of
 * the sub's closing brace: the line the parser was at when it finished
 * the sub.  A perl run without them keeps that line nowhere; what nytp
 * attach can read of the sub is its first statement's line.  So the
 * file's text is scanned once, as perl's tokenizer would split it as far
 * as braces go (comments, POD, strings, quote-like operators, regexes and
 * here-documents skipped), for every block: the line of the first token
 * of its body and the line of its closing brace, and whether a 'sub'
 * without a name opened it.
 *
 *     subsrc s;
 *     subsrc_scan(&s, text, len);
 *     uint32_t end = subsrc_end(&s, first_statement_line);  // 0: not known
 *     subsrc_release(&s);
 *
 * The scan is not a perl parser: a brace in an unusual construct (a
 * format, a regex after a word it takes for an operand) can mislead it,
 * so a line with two anonymous subs whose ends differ is not answered. */
#ifndef NYTP_ATTACH_SUBSRC_H
#define NYTP_ATTACH_SUBSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct subsrc_span {
    uint32_t first;     /* line of the first token of the body (use and no
                         * statements passed over: they leave no code) */
    uint32_t end;       /* line of the closing brace */
    uint32_t order;     /* of the opening brace in the file */
    bool sub;           /* opened by 'sub' */
    bool call;          /* opened after a word that is no keyword: may be a
                         * block passed to a sub of prototype & (try {...}) */
} subsrc_span;

typedef struct subsrc {
    subsrc_span *v;     /* sorted by first */
    size_t n, cap;
} subsrc;

/* Scan text (len bytes, not NUL-terminated); 0, or -1 out of memory. */
int subsrc_scan(subsrc *s, const char *text, size_t len);
/* The line of the closing brace of the one anonymous sub whose body's
 * first token is on line first; 0 when there is none, or several that
 * end on different lines.  Without a 'sub' there, the outermost block
 * after a word that is no keyword whose first token is on that line: a
 * block passed to a sub of prototype & (try { ... }, Plack's
 * build { ... }) is an anonymous sub with no 'sub' written.  Failing
 * both, the innermost of these that holds the line: perl numbers a
 * statement over several lines by a later line at times. */
uint32_t subsrc_end(const subsrc *s, uint32_t first);
void subsrc_release(subsrc *s);

#endif
