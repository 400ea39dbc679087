/* gen-profile.c — small hand-made profiles for the integration tests,
 * written with libformat's writer (the one encoder):
 *
 *     gen-profile KIND N OUT [NAME]
 *
 *   deep-return N   one SUB_RETURN at depth N and nothing else: N-1 calls
 *                   left open, the name of each unknown
 *   recursion N     a complete recursion N deep: returns at depths N..1
 *   recursion-calls N  main::a calls main::f, which recurses N deep, each
 *                   main::f first calling main::g (1 tick each, every sub)
 *   odd-chars N     subs whose names hold ';', LF, CR, TAB, space, '%' and
 *                   UTF-8 (one a forged collapsed line), each called N
 *                   times from main::RUNTIME, and main::semi;colon also
 *                   from the one with a LF
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
 *   text-lines N    compressed (level 6): x.pl with a statement, then N
 *                   attributes a1..aN, N options o1..oN and N comments,
 *                   each line 100 bytes: together they run over the
 *                   160 KiB boundaries of Devel::NYTProf's inflating
 *   empty-fids N    x.pl with a statement, then N more files
 *                   (/nonexistent/e1.pm ...) declared with nothing in them
 *   paths N         the files named in the file NAME, one a line, each
 *                   declared (ids 1, 2, ...) with a statement of N ticks
 *                   on its line 1
 *   aliases N       the file NAME declared three times: as NAME, with "/./"
 *                   before its last component, with that '/' doubled;
 *                   statements of N ticks on line 1 of the first and third,
 *                   on line 2 of the second; main::f defined in the second
 *                   on line 2, called from line 1 of the third
 *
 * Large shapes for the time-ratio tests of tests/66-linear.t (deflated,
 * as the profiler writes by default):
 *   sibling-evals N  a code generator in a loop, eval "\$x = $i" for 1..N
 *                   on line 2 of x.pl: N evals of file 1 line 2, each
 *                   declared as Devel::NYTProf does (NEW_FID with
 *                   eval_fid 1, eval_line 2, a statement in it and one on
 *                   line 2; their source saved at the end)
 *   eval-calls N    eval "f($i);\n" x 4 for 1..N on line 2 of x.pl:
 *                   each eval calls main::f from its lines 1 to 4 (four
 *                   call sites per eval)
 *   eval-anon N     $s = eval "sub { $i }"; $s->() for 1..N on line 2 of
 *                   x.pl: each eval defines an anon sub, called once from
 *                   line 2
 *   eval-closures N  generated code run twice by one string eval (line 2
 *                   of x.pl): N lines, each defining an anon sub that the
 *                   line calls
 *   many-subs N     N subs main::s1..sN in one file, sub s_i on line i+1
 *                   (SUB_INFO), each called once from line N+2 by
 *                   main::RUNTIME
 *   many-callers N  generated code on one line: subs main::c1..cN all
 *                   defined on line 1 of x.pl, each calling main::f there
 *                   (one call site with N callers), each called once
 *                   from line 2
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
    } else if (strcmp(kind, "recursion-calls") == 0) {
        nytp_str a = nytp_cstr("main::a", false), g = nytp_cstr("main::g", false);
        file(1, 0, 0, "x.pl");
        for (unsigned long i = 1; i <= n; i++)
            check(nytp_write_sub_return(w, (uint32_t)(i + 2), 1, 1, g));
        for (unsigned long i = n; i >= 1; i--)
            check(nytp_write_sub_return(w, (uint32_t)(i + 1), (double)(2 * (n - i + 1)), 1, f));
        check(nytp_write_sub_return(w, 1, (double)(2 * n + 1), 1, a));
    } else if (strcmp(kind, "odd-chars") == 0) {
        static const char *odd[] = {"main::semi;colon", "main::line\nfeed", "main::tab\there",
                                    "main::with space", "main::caf\xc3\xa9", "main::per%3Bcent",
                                    "main::cr\rhere", "main::evil 99\nmain::forged;main::x"};
        file(1, 0, 0, "x.pl");
        for (uint32_t i = 0; i < 8; i++) {
            nytp_str name = nytp_cstr(odd[i], i == 4);
            check(nytp_write_sub_info(w, 1, 10 + i, 10 + i, name));
            check(nytp_write_sub_callers(w, 1, 1, (uint32_t)n, 1e-6 * (i + 1), 1e-6 * (i + 1), 0, 0, name,
                                         nytp_cstr("main::RUNTIME", false)));
            for (unsigned long k = 0; k < n; k++)
                check(nytp_write_sub_return(w, 1, 10 * (i + 1), 10 * (i + 1), name));
        }
        /* main::semi;colon called from main::line\nfeed */
        check(nytp_write_sub_return(w, 2, 5, 5, nytp_cstr(odd[0], false)));
        check(nytp_write_sub_return(w, 1, 7, 2, nytp_cstr(odd[1], false)));
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
    } else if (strcmp(kind, "sibling-evals") == 0 || strcmp(kind, "eval-calls") == 0 ||
               strcmp(kind, "eval-anon") == 0) {
        /* as Devel::NYTProf writes them: files and calls as they come,
         * source, subs and call arcs at the end */
        int shape = kind[5] == 'c' ? 1 : kind[5] == 'a' ? 2 : 0;
        nytp_str rt = nytp_cstr("main::RUNTIME", false);
        char name[64], text[64];
        check(nytp_write_start_deflate(w, 1));
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 30, 1, 1));
        for (unsigned long i = 1; i <= n; i++) {
            snprintf(name, sizeof name, "(eval %lu)[x.pl:2]", i);
            check(nytp_write_time_line(w, 7, 1, 2));
            file((uint32_t)i + 1, 1, 2, name);
            for (uint32_t line = 1; line <= (shape == 1 ? 4u : 1u); line++) {
                check(nytp_write_time_line(w, 3, (uint32_t)i + 1, line));
                if (shape == 1)
                    check(nytp_write_sub_return(w, 1, 5, 5, f));
            }
            if (shape == 2) {
                snprintf(name, sizeof name, "main::__ANON__[(eval %lu)[x.pl:2]:1]", i);
                check(nytp_write_sub_return(w, 1, 4, 4, nytp_cstr(name, false)));
            }
        }
        check(nytp_write_src_line(w, 1, 1, nytp_cstr("my $x;\n", false)));
        for (unsigned long i = 1; i <= n; i++) {
            snprintf(text, sizeof text, shape == 1 ? "f(%lu);\n" : shape == 2 ? "sub { %lu }\n" : "$x = %lu\n",
                     i);
            uint32_t last = shape == 1 ? 4 : 1;
            for (uint32_t line = 1; line <= last; line++)
                check(nytp_write_src_line(w, (uint32_t)i + 1, line, nytp_cstr(text, false)));
            check(nytp_write_src_line(w, (uint32_t)i + 1, last + 1, nytp_cstr(";", false)));
        }
        if (shape == 1)
            check(nytp_write_sub_info(w, 1, 1, 1, f));
        for (unsigned long i = 1; i <= n && shape; i++) {
            if (shape == 1) {
                for (uint32_t line = 1; line <= 4; line++)
                    check(nytp_write_sub_callers(w, (uint32_t)i + 1, line, 1, 5e-7, 5e-7, 0, 0, f, rt));
                continue;
            }
            snprintf(name, sizeof name, "main::__ANON__[(eval %lu)[x.pl:2]:1]", i);
            nytp_str aname = nytp_cstr(name, false);
            check(nytp_write_sub_info(w, (uint32_t)i + 1, 1, 1, aname));
            check(nytp_write_sub_callers(w, 1, 2, 1, 4e-7, 4e-7, 0, 0, aname, rt));
        }
    } else if (strcmp(kind, "eval-closures") == 0) {
        nytp_str rt = nytp_cstr("main::RUNTIME", false);
        char name[80];
        check(nytp_write_start_deflate(w, 1));
        file(1, 0, 0, "x.pl");
        for (uint32_t ev = 1; ev <= 2; ev++) {
            snprintf(name, sizeof name, "(eval %u)[x.pl:2]", ev);
            check(nytp_write_time_line(w, 7, 1, 2));
            file(ev + 1, 1, 2, name);
            for (unsigned long i = 1; i <= n; i++) {
                check(nytp_write_time_line(w, 3, ev + 1, (uint32_t)i));
                snprintf(name, sizeof name, "main::__ANON__[(eval %u)[x.pl:2]:%lu]", ev, i);
                check(nytp_write_sub_return(w, 1, 4, 4, nytp_cstr(name, false)));
            }
        }
        check(nytp_write_src_line(w, 1, 1, nytp_cstr("my $x;\n", false)));
        for (uint32_t ev = 1; ev <= 2; ev++)
            for (unsigned long i = 1; i <= n; i++)
                check(nytp_write_src_line(w, ev + 1, (uint32_t)i, nytp_cstr("sub { $x }->();\n", false)));
        for (uint32_t ev = 1; ev <= 2; ev++) {
            for (unsigned long i = 1; i <= n; i++) {
                snprintf(name, sizeof name, "main::__ANON__[(eval %u)[x.pl:2]:%lu]", ev, i);
                nytp_str aname = nytp_cstr(name, false);
                check(nytp_write_sub_info(w, ev + 1, (uint32_t)i, (uint32_t)i, aname));
                check(nytp_write_sub_callers(w, ev + 1, (uint32_t)i, 1, 4e-7, 4e-7, 0, 0, aname, rt));
            }
        }
    } else if (strcmp(kind, "many-subs") == 0) {
        check(nytp_write_start_deflate(w, 1));
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 30, 1, (uint32_t)n + 2));
        nytp_str rt = nytp_cstr("main::RUNTIME", false);
        for (unsigned long i = 1; i <= n; i++) {
            char name[64];
            snprintf(name, sizeof name, "main::s%lu", i);
            nytp_str sname = nytp_cstr(name, false);
            check(nytp_write_sub_info(w, 1, (uint32_t)i + 1, (uint32_t)i + 1, sname));
            check(nytp_write_sub_callers(w, 1, (uint32_t)n + 2, 1, 1e-6, 1e-6, 0, 0, sname, rt));
        }
    } else if (strcmp(kind, "many-callers") == 0) {
        check(nytp_write_start_deflate(w, 1));
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 30, 1, 2));
        check(nytp_write_time_line(w, (int32_t)n, 1, 1));
        nytp_str rt = nytp_cstr("main::RUNTIME", false);
        check(nytp_write_sub_info(w, 1, 1, 1, f));
        for (unsigned long i = 1; i <= n; i++) {
            char name[64];
            snprintf(name, sizeof name, "main::c%lu", i);
            nytp_str cname = nytp_cstr(name, false);
            check(nytp_write_sub_info(w, 1, 1, 1, cname));
            check(nytp_write_sub_callers(w, 1, 2, 1, 2e-6, 1e-6, 0, 0, cname, rt));
            check(nytp_write_sub_callers(w, 1, 1, 1, 1e-6, 1e-6, 0, 0, f, cname));
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
    } else if (strcmp(kind, "text-lines") == 0) {
        /* (without these two Devel::NYTProf::Data warns of its own) */
        check(nytp_write_attribute(w, "cumulative_overhead_ticks", "0"));
        check(nytp_write_attribute(w, "profiler_duration", "1"));
        check(nytp_write_start_deflate(w, 6));
        file(1, 0, 0, "x.pl");
        check(nytp_write_time_line(w, 10, 1, 1));
        char key[32], val[128];
        for (int kind2 = 0; kind2 < 3; kind2++) {
            for (unsigned long i = 1; i <= n; i++) {
                int kl = snprintf(key, sizeof key, "%c%lu", kind2 == 0 ? 'a' : 'o', i);
                /* key=value\n: 99 bytes after the tag */
                memset(val, 'v', 97 - (size_t)kl);
                val[97 - kl] = '\0';
                if (kind2 == 0)
                    check(nytp_write_attribute(w, key, val));
                else if (kind2 == 1)
                    check(nytp_write_option(w, key, val));
                else
                    check(nytp_write_comment(w, val));
            }
        }
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
    } else if (strcmp(kind, "paths") == 0) {
        FILE *in = argc == 5 ? fopen(argv[4], "r") : NULL;
        if (!in) {
            fprintf(stderr, "gen-profile: paths: cannot read the list NAME\n");
            return 1;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        uint32_t fid = 0;
        while ((len = getline(&line, &cap, in)) > 0) {
            if (line[len - 1] == '\n')
                line[--len] = 0;
            file(++fid, 0, 0, line);
            check(nytp_write_time_line(w, (uint32_t)n, fid, 1));
        }
        free(line);
        fclose(in);
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
