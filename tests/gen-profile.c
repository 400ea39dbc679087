/* gen-profile.c — small hand-made profiles for the integration tests,
 * written with libformat's writer (the one encoder):
 *
 *     gen-profile KIND N OUT [NAME]
 *
 *   deep-return N   one SUB_RETURN at depth N and nothing else: N-1 calls
 *                   left open, the name of each unknown
 *   recursion N     a complete recursion N deep: returns at depths N..1
 *   big-fid N       one file declared with id N, a statement, a sub
 *   sparse-lines N  N statements, on lines 64, 128, ... 64*N of one file
 *   eval-chain N    N string evals, each run by the one before it
 *   fid0 N          files 0 and 1 declared, statements in both (N ticks
 *                   in the last)
 *   undeclared N    a statement in file id N, never declared, and an eval
 *                   run in it (chunks 6 and 7)
 *   block-lines N   TIME_BLOCKs with a block line N, a sub line N+1
 *   src-far N       source saved for lines 1 and N of one file, a
 *                   statement on each
 *   sub-far N       sub main::f on lines 2..N of one file, a statement
 *                   on line N in it and one on line 1 outside it
 *   odd-names N     subs main::o1..o6 whose names end in bytes that are
 *                   not UTF-8 (overlong, surrogate, beyond U+10FFFF,
 *                   cut short, a lone continuation) or U+FFFE, each
 *                   called N times from main::RUNTIME
 *   negative-ticks N  on line 1 a statement of 50 ticks and one of -N (a
 *                   clock that went back: Devel::NYTProf files have
 *                   them), on line 2 one of 1024 and one of 5000
 *   long-name N     main::short returned 20,000 times, and between them
 *                   twice a sub whose name is "main::" and N bytes 'x'
 *   punct-name N    the same with N bytes '!' (3 bytes each in a URL)
 *   slow-clock N    ticks_per_sec=1 (every other kind: 10 MHz): a
 *                   statement of N ticks on line 1 of x.pl, two of 1 and
 *                   2 ticks on line 2
 *   discounts N     on lines 1 and 2: N DISCOUNTs, a statement (the
 *                   line's first), a statement, N DISCOUNTs, a statement;
 *                   then a statement on line 3
 *   control-names N  names holding LF, TAB, CR and ESC (each followed by
 *                   text that looks like a message of its own): file 1
 *                   declared, then declared again under another such
 *                   name; a sub of such a name called N times, from file
 *                   1 and from file id 9, never declared; a string eval
 *                   of such a name whose parent file id 8 is unknown
 *   pid-end-unstarted N  N PID_ENDs of process 7, which never started
 *   fid-again N     file 1 declared N+1 times, a statement in it
 *   time-nan N, time-inf N, time-neginf N, time-huge N
 *                   a profile whose times are NaN, +Inf, -Inf or 1e300:
 *                   main::a and main::b called N times each, b from a
 *                   and from main::RUNTIME, with that inclusive,
 *                   exclusive and recursive time (SUB_CALLERS, three
 *                   call paths), N SUB_RETURNs of each path with that
 *                   time; a process that starts and ends at that time;
 *                   statements of the largest and smallest ticks
 *   empty-fids N    x.pl with a statement, then N more files
 *                   (/nonexistent/e1.pm ...) declared with nothing in them
 *   aliases N       the file NAME declared three times: as NAME, with "/./"
 *                   before its last component, with that '/' doubled;
 *                   statements of N ticks on line 1 of the first and third,
 *                   on line 2 of the second; main::f defined in the second
 *                   on line 2, called from line 1 of the third
 *
 * Exit status 0, or 1 with a message. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nytp/writer.h"

static nytp_writer *w;
static nytp_error e;

static void check(int st)
{
    if (st < 0) {
        const nytp_error *we = nytp_writer_error(w);
        fprintf(stderr, "gen-profile: %s\n", we && we->msg[0] ? we->msg : e.msg);
        exit(1);
    }
}

static void file(uint32_t fid, uint32_t eval_fid, uint32_t eval_line, const char *name)
{
    check(nytp_write_new_fid(w, fid, eval_fid, eval_line, eval_fid ? 0x112 : 0x12, 0, 0,
                             nytp_cstr(name, false)));
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: gen-profile KIND N OUT [NAME]\n");
        return 2;
    }
    const char *kind = argv[1];
    unsigned long n = strtoul(argv[2], NULL, 10);
    nytp_out *o;
    check(nytp_out_open_file(&o, argv[3], 0, &e));
    check(nytp_writer_open(&w, o, &e));
    check(nytp_write_header(w, 5, 0));
    check(nytp_write_attribute(w, "ticks_per_sec", strcmp(kind, "slow-clock") == 0 ? "1" : "10000000"));
    check(nytp_write_attribute(w, "nv_size", "8"));
    check(nytp_write_pid_start(w, 42, 1, 1000.5));
    nytp_str f = nytp_cstr("main::f", false);
    if (strcmp(kind, "deep-return") == 0) {
        check(nytp_write_sub_return(w, (uint32_t)n, 1, 1, f));
    } else if (strcmp(kind, "recursion") == 0) {
        file(1, 0, 0, "x.pl");
        for (unsigned long d = n; d >= 1; d--)
            check(nytp_write_sub_return(w, (uint32_t)d, (double)(n - d + 1), 1, f));
        check(nytp_write_sub_info(w, 1, 1, 3, f));
        check(nytp_write_sub_callers(w, 1, 5, 1, 1, 1, 0, 0, f, nytp_cstr("main::RUNTIME", false)));
        check(nytp_write_sub_callers(w, 1, 2, (uint32_t)n - 1, 1, 1, 0, (uint32_t)n - 1, f, f));
    } else if (strcmp(kind, "big-fid") == 0) {
        file((uint32_t)n, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, (uint32_t)n, 1));
        check(nytp_write_sub_info(w, (uint32_t)n, 1, 1, f));
        check(nytp_write_sub_callers(w, (uint32_t)n, 1, 1, 1e-6, 1e-6, 0, 0, f,
                                     nytp_cstr("main::RUNTIME", false)));
    } else if (strcmp(kind, "sparse-lines") == 0) {
        file(1, 0, 0, "x.pl");
        for (unsigned long i = 1; i <= n; i++)
            check(nytp_write_time_line(w, 3, 1, (uint32_t)(64 * i)));
    } else if (strcmp(kind, "eval-chain") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 3, 1, 1));
        for (unsigned long i = 1; i <= n; i++) {
            char name[64];
            snprintf(name, sizeof name, "(eval %lu)[x.pl:1]", i);
            file((uint32_t)i + 1, (uint32_t)i, 1, name);
            check(nytp_write_time_line(w, 3, (uint32_t)i + 1, 1));
        }
    } else if (strcmp(kind, "discounts") == 0) {
        file(1, 0, 0, "x.pl");
        for (uint32_t line = 1; line <= 2; line++) {
            /* N DISCOUNTs before the first statement of a line, then
             * before a later one */
            for (unsigned long i = 0; i < n; i++)
                check(nytp_write_discount(w));
            check(nytp_write_time_line(w, 10, 1, line));
            check(nytp_write_time_line(w, 10, 1, line));
            for (unsigned long i = 0; i < n; i++)
                check(nytp_write_discount(w));
            check(nytp_write_time_line(w, 10, 1, line));
        }
        check(nytp_write_time_line(w, 10, 1, 3));
    } else if (strcmp(kind, "negative-ticks") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 50, 1, 1));
        check(nytp_write_time_line(w, -(int32_t)n, 1, 1));
        check(nytp_write_time_line(w, 1024, 1, 2));
        check(nytp_write_time_line(w, 5000, 1, 2));
    } else if (strcmp(kind, "fid0") == 0) {
        file(0, 0, 0, "zero.pl");
        check(nytp_write_time_line(w, 10, 0, 1));
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 20, 1, 1));
        check(nytp_write_time_line(w, (int32_t)n, 0, 2));
    } else if (strcmp(kind, "undeclared") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
        check(nytp_write_time_line(w, 10, (uint32_t)n, 1));
        file(2, (uint32_t)n, 3, "(eval 1)[x.pl:3]");
    } else if (strcmp(kind, "src-far") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_src_line(w, 1, 1, nytp_cstr("my $near = 1;\n", false)));
        check(nytp_write_src_line(w, 1, (uint32_t)n, nytp_cstr("my $far = 2;\n", false)));
        check(nytp_write_time_line(w, 10, 1, 1));
        check(nytp_write_time_line(w, 20, 1, (uint32_t)n));
    } else if (strcmp(kind, "sub-far") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
        check(nytp_write_time_line(w, 20, 1, (uint32_t)n));
        check(nytp_write_sub_info(w, 1, 2, (uint32_t)n, f));
        check(nytp_write_sub_callers(w, 1, 1, 1, 2e-6, 2e-6, 0, 0, f, nytp_cstr("main::RUNTIME", false)));
    } else if (strcmp(kind, "odd-names") == 0) {
        static const char *odd[] = {"main::o1\xc0\xaf", "main::o2\xed\xa0\x80", "main::o3\xf4\x90\x80\x80",
                                    "main::o4\xe2\x82", "main::o5\x80", "main::o6\xef\xbf\xbe"};
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
        for (uint32_t i = 0; i < 6; i++) {
            nytp_str name = nytp_cstr(odd[i], false);
            check(nytp_write_sub_info(w, 1, 10 + i, 10 + i, name));
            check(nytp_write_sub_callers(w, 1, 1, (uint32_t)n, 1e-6 * (i + 1), 1e-6 * (i + 1), 0, 0, name,
                                         nytp_cstr("main::RUNTIME", false)));
            for (unsigned long k = 0; k < n; k++)
                check(nytp_write_sub_return(w, 1, 10 * (i + 1), 10 * (i + 1), name));
        }
    } else if (strcmp(kind, "long-name") == 0 || strcmp(kind, "punct-name") == 0) {
        char *big = malloc(n + 7);
        if (!big)
            return 1;
        memcpy(big, "main::", 6);
        memset(big + 6, kind[0] == 'p' ? '!' : 'x', n);
        big[n + 6] = 0;
        nytp_str lname = nytp_cstr(big, false), sname = nytp_cstr("main::short", false);
        nytp_str rt = nytp_cstr("main::RUNTIME", false);
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
        check(nytp_write_sub_info(w, 1, 2, 2, sname));
        check(nytp_write_sub_info(w, 1, 3, 3, lname));
        for (uint32_t k = 0; k < 20000; k++) {
            check(nytp_write_sub_return(w, 1, 10, 10, sname));
            if (k == 7000 || k == 13000)
                check(nytp_write_sub_return(w, 1, 300000, 300000, lname));
        }
        check(nytp_write_sub_callers(w, 1, 1, 20000, 0.02, 0.02, 0, 0, sname, rt));
        check(nytp_write_sub_callers(w, 1, 1, 2, 4e-6, 4e-6, 0, 0, lname, rt));
        free(big);
    } else if (strcmp(kind, "slow-clock") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, (int32_t)n, 1, 1));
        check(nytp_write_time_line(w, 1, 1, 2));
        check(nytp_write_time_line(w, 2, 1, 2));
    } else if (strcmp(kind, "control-names") == 0) {
        /* every message naming one of these must stay one line */
        const char *fname = "ctl\nnytp top: fake line\t\r\033[2J.pl";
        const char *again = "again\nnytp top: warning: forged\t\r\033]0;t\a.pl";
        nytp_str sub = nytp_cstr("main::ctl\nnytp top: forged\t\r\033[31m", false);
        file(1, 0, 0, fname);
        check(nytp_write_time_line(w, 10, 1, 1));
        file(1, 0, 0, again);
        check(nytp_write_sub_info(w, 1, 2, 2, sub));
        check(nytp_write_sub_callers(w, 1, 1, (uint32_t)n, 1e-6, 1e-6, 0, 0, sub,
                                     nytp_cstr("main::RUNTIME", false)));
        check(nytp_write_sub_callers(w, 9, 1, (uint32_t)n, 1e-6, 1e-6, 0, 0, sub,
                                     nytp_cstr("main::RUNTIME", false)));
        file(2, 8, 1, "(eval 1)[ctl\nnytp top: forged\t\r\033[2J:1]");
    } else if (strcmp(kind, "pid-end-unstarted") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
        for (unsigned long i = 0; i < n; i++)
            check(nytp_write_pid_end(w, 7, 1001.0));
    } else if (strcmp(kind, "fid-again") == 0) {
        for (unsigned long i = 0; i <= n; i++)
            file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
    } else if (strncmp(kind, "time-", 5) == 0 &&
               (strcmp(kind + 5, "nan") == 0 || strcmp(kind + 5, "inf") == 0 ||
                strcmp(kind + 5, "neginf") == 0 || strcmp(kind + 5, "huge") == 0)) {
        double v = strcmp(kind + 5, "nan") == 0 ? NAN
                 : strcmp(kind + 5, "inf") == 0 ? INFINITY
                 : strcmp(kind + 5, "neginf") == 0 ? -INFINITY : 1e300;
        nytp_str a = nytp_cstr("main::a", false), b = nytp_cstr("main::b", false);
        file(1, 0, 0, "x.pl");
        check(nytp_write_pid_start(w, 43, 42, v));
        check(nytp_write_time_line(w, INT32_MAX, 1, 1));
        check(nytp_write_time_line(w, INT32_MIN, 1, 2));
        check(nytp_write_time_block(w, INT32_MAX, 1, 3, 3, 3));
        check(nytp_write_sub_info(w, 1, 3, 4, a));
        check(nytp_write_sub_info(w, 1, 5, 6, b));
        nytp_str rt = nytp_cstr("main::RUNTIME", false);
        for (unsigned long k = 0; k < n; k++) {
            check(nytp_write_sub_return(w, 2, v, v, b));
            check(nytp_write_sub_return(w, 1, v, v, a));
            check(nytp_write_sub_return(w, 1, v, v, b));
        }
        check(nytp_write_sub_callers(w, 1, 1, (uint32_t)n, v, v, v, 1, a, rt));
        check(nytp_write_sub_callers(w, 1, 3, (uint32_t)n, v, v, v, 1, b, a));
        check(nytp_write_sub_callers(w, 1, 2, (uint32_t)n, v, v, 0, 0, b, rt));
        check(nytp_write_pid_end(w, 43, v));
    } else if (strcmp(kind, "empty-fids") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
        for (unsigned long i = 1; i <= n; i++) {
            char name[64];
            snprintf(name, sizeof name, "/nonexistent/e%lu.pm", i);
            file((uint32_t)i + 1, 0, 0, name);
        }
    } else if (strcmp(kind, "aliases") == 0) {
        const char *name = argc == 5 ? argv[4] : "/tmp/x.pl";
        const char *slash = strrchr(name, '/');
        size_t dir = slash ? (size_t)(slash - name) : 0;
        char dot[4096], twice[4096];
        snprintf(dot, sizeof dot, "%.*s/./%s", (int)dir, name, slash ? slash + 1 : name);
        snprintf(twice, sizeof twice, "%.*s//%s", (int)dir, name, slash ? slash + 1 : name);
        file(1, 0, 0, name);
        check(nytp_write_time_line(w, (int32_t)n, 1, 1));
        file(2, 0, 0, dot);
        check(nytp_write_time_line(w, (int32_t)n, 2, 2));
        file(3, 0, 0, twice);
        check(nytp_write_time_line(w, (int32_t)n, 3, 1));
        check(nytp_write_sub_info(w, 2, 2, 2, f));
        check(nytp_write_sub_callers(w, 3, 1, 1, 1e-6, 1e-6, 0, 0, f, nytp_cstr("main::RUNTIME", false)));
    } else if (strcmp(kind, "block-lines") == 0) {
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_block(w, 10, 1, 1, 1, 1));
        check(nytp_write_time_block(w, 10, 1, 2, (uint32_t)n, 1));
        check(nytp_write_time_block(w, 10, 1, 3, 1, (uint32_t)n + 1));
    } else {
        fprintf(stderr, "gen-profile: unknown kind %s\n", kind);
        return 2;
    }
    check(nytp_write_pid_end(w, 42, 1001.5));
    check(nytp_writer_close(w, &e));
    return 0;
}
