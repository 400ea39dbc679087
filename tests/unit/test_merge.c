/* test_merge.c — joining profiles: sums, counts kept exactly, evals
 * matched by place, attributes, call events, errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "nytp/merge.h"
#include "nytp/model.h"

/* ---- making inputs ------------------------------------------------------ */

typedef struct input {
    uint8_t *data;
    size_t len;
} input;

/* Writers go to a temporary file, read back whole by finish(). */
static char tmp_path[64];

static nytp_writer *mem_writer(void)
{
    nytp_out *o;
    nytp_writer *w;
    nytp_error e = {0};
    strcpy(tmp_path, "/tmp/nytp-test-merge-XXXXXX");
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(nytp_out_open_file(&o, tmp_path, 0, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    return w;
}

static input finish(nytp_writer *w)
{
    input in;
    nytp_error e = {0};
    assert_int_equal(nytp_writer_close(w, &e), NYTP_OK);
    in.data = slurp(tmp_path, &in.len);
    unlink(tmp_path);
    return in;
}

/* A small profile of "x.pl": 3 statements on line 1 (10 ticks each), a
 * DISCOUNT then 1 statement on line 2 (7 ticks), `evals` string evals run
 * on line 5 with one statement each (fid 2, 3, ...), a sub with a call
 * arc, source lines, two call events, and a DISCOUNT at the very end. */
static input small_profile(const char *app, const char *basetime, const char *tps, int evals,
                           uint32_t rec_depth)
{
    nytp_writer *w = mem_writer();
    nytp_write_header(w, 5, 0);
    nytp_write_attribute(w, "basetime", basetime);
    nytp_write_attribute(w, "application", app);
    nytp_write_attribute(w, "perl_version", "5.36.0");
    nytp_write_attribute(w, "ticks_per_sec", tps);
    nytp_write_attribute(w, "cumulative_overhead_ticks", "100");
    nytp_write_option(w, "calls", "1");
    nytp_write_start_deflate(w, 6);
    nytp_write_pid_start(w, 42, 1, 1000.0);
    nytp_write_new_fid(w, 1, 0, 0, 0x12, 0, 0, nytp_cstr("x.pl", false));
    for (int i = 0; i < 3; i++)
        nytp_write_time_line(w, 10, 1, 1);
    nytp_write_discount(w);
    nytp_write_time_line(w, 7, 1, 2);
    for (int i = 0; i < evals; i++) {
        char name[64];
        snprintf(name, sizeof name, "(eval %d)[x.pl:5]", i + 1);
        nytp_write_new_fid(w, (uint32_t)(2 + i), 1, 5, 0x132, 0, 0, nytp_cstr(name, false));
        nytp_write_time_line(w, 100 * (i + 1), (uint32_t)(2 + i), 1);
    }
    nytp_write_sub_return(w, 1, 30.0, 20.0, nytp_cstr("main::f", false));
    nytp_write_sub_return(w, 1, 5.0, 5.0, nytp_cstr("main::g", false));
    nytp_write_src_line(w, 1, 1, nytp_cstr("f() for 1..3;\n", false));
    nytp_write_src_line(w, 1, 2, nytp_cstr("g();\n", false));
    nytp_write_sub_info(w, 1, 3, 4, nytp_cstr("main::f", false));
    nytp_write_sub_callers(w, 1, 1, 3, 0.5, 0.25, 0.125, rec_depth, nytp_cstr("main::f", false),
                           nytp_cstr("main::RUNTIME", false));
    nytp_write_discount(w);
    nytp_write_pid_end(w, 42, 1001.0);
    return finish(w);
}

typedef struct warnings {
    char text[4096];
    int n;
} warnings;

static void collect(void *ctx, const nytp_error *w)
{
    warnings *ws = ctx;
    size_t l = strlen(ws->text);
    snprintf(ws->text + l, sizeof ws->text - l, "%s\n", w->msg);
    ws->n++;
}

/* Merge inputs in memory; returns the merged bytes. */
static input merge(const input *ins, size_t n, warnings *ws, int *last_status)
{
    nytp_writer *w = mem_writer();
    nytp_merge *m;
    nytp_error e = {0};
    nytp_merge_opts o = {collect, ws, 6};
    assert_int_equal(nytp_merge_new(&m, w, &o, &e), NYTP_OK);
    *last_status = NYTP_OK;
    for (size_t i = 0; i < n; i++) {
        nytp_reader *r;
        char name[32];
        snprintf(name, sizeof name, "in%zu", i);
        assert_int_equal(nytp_reader_open_mem(&r, ins[i].data, ins[i].len, &e), NYTP_OK);
        int st = nytp_merge_add_reader(m, r, name, &e);
        if (st < 0)
            *last_status = st;
    }
    assert_int_equal(nytp_merge_finish(m, &e), NYTP_OK);
    assert_int_equal(nytp_merge_inputs(m), n);
    nytp_merge_free(m);
    return finish(w);
}

static nytp_profile *model_of(const input *in)
{
    nytp_profile *p;
    nytp_error e = {0};
    nytp_reader *r;
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    assert_int_equal(nytp_reader_open_mem(&r, in->data, in->len, &e), NYTP_OK);
    assert_int_equal(nytp_profile_load_reader(p, r, "merged", NULL, &e), NYTP_OK);
    nytp_profile_finish(p);
    return p;
}

static size_t count_tag(const input *in, int tag)
{
    size_t n, k = 0;
    int st;
    nytp_error e = {0};
    saved_chunk *v = read_all(in->data, in->len, &n, &st, &e);
    assert_int_equal(st, NYTP_END);
    for (size_t i = 0; i < n; i++)
        k += v[i].c.tag == (enum nytp_tag)tag;
    free_chunks(v, n);
    return k;
}

/* ---- tests ------------------------------------------------------------------ */

/* Two inputs: counts, discounts, times, arcs add up; events pass through;
 * source is kept once; the end-of-input DISCOUNT leaks nowhere. */
static void sums_and_counts(void **state)
{
    (void)state;
    input a = small_profile("x.pl", "1000", "10000000", 1, 2);
    input b = small_profile("x.pl", "990", "10000000", 1, 5);
    input ins[] = {a, b};
    warnings ws = {{0}, 0};
    int st;
    input m = merge(ins, 2, &ws, &st);
    assert_int_equal(st, NYTP_OK);
    assert_int_equal(ws.n, 0);
    nytp_profile *p = model_of(&m);
    const nytp_linestat *l1 = nytp_profile_line(p, 1, 1), *l2 = nytp_profile_line(p, 1, 2);
    assert_non_null(l1);
    assert_non_null(l2);
    assert_int_equal(l1->count, 6);
    assert_true(fabs(l1->time - 60e-7) < 1e-15);
    assert_int_equal(l2->count, 0); /* discounted: time but no count */
    assert_true(fabs(l2->time - 14e-7) < 1e-15);
    assert_int_equal(p->total_stmts_measured, 2 * (3 + 1 + 1));
    assert_int_equal(p->total_stmts_discounted, 2);
    assert_int_equal(p->total_sub_calls, 6);
    uint32_t f = nytp_profile_sub_by_name(p, "main::f", 7);
    assert_int_not_equal(f, NYTP_NONE);
    assert_int_equal(p->subs[f].calls, 6);
    assert_int_equal(p->subs[f].rec_depth, 5);
    assert_true(fabs(p->subs[f].incl - 1.0) < 1e-12);
    assert_true(fabs(p->subs[f].reci - 0.25) < 1e-12);
    assert_int_equal(p->subs[f].first_line, 3);
    /* the eval at x.pl:5 is one file with both inputs' statements */
    assert_int_equal(p->files[1].n_evals, 1);
    const nytp_linestat *e1 = nytp_profile_line(p, p->files[1].evals[0], 1);
    assert_non_null(e1);
    assert_int_equal(e1->count, 2);
    /* attributes */
    assert_string_equal(nytp_profile_attr(p, "basetime"), "990");
    assert_string_equal(nytp_profile_attr(p, "cumulative_overhead_ticks"), "200");
    assert_string_equal(nytp_profile_attr(p, "application"), "x.pl (2 runs)");
    assert_int_equal(p->n_procs, 2);
    assert_true(p->complete);
    nytp_profile_free(p);
    assert_int_equal(count_tag(&m, NYTP_TAG_SUB_RETURN), 4);
    assert_int_equal(count_tag(&m, NYTP_TAG_SRC_LINE), 2);
    assert_int_equal(count_tag(&m, NYTP_TAG_NEW_FID), 2);
    assert_int_equal(count_tag(&m, NYTP_TAG_SUB_INFO), 1);
    assert_int_equal(count_tag(&m, NYTP_TAG_SUB_CALLERS), 1);
    free(a.data);
    free(b.data);
    free(m.data);
}

/* The k-th eval at a place in each input is the k-th of the output. */
static void evals_matched_by_place(void **state)
{
    (void)state;
    input a = small_profile("x.pl", "1", "10000000", 2, 0);
    input b = small_profile("x.pl", "1", "10000000", 3, 0);
    input ins[] = {a, b};
    warnings ws = {{0}, 0};
    int st;
    input m = merge(ins, 2, &ws, &st);
    nytp_profile *p = model_of(&m);
    assert_int_equal(p->files[1].n_evals, 3);
    /* eval k has 100*k ticks per statement in both inputs */
    for (uint32_t k = 0; k < 3; k++) {
        const nytp_linestat *s = nytp_profile_line(p, p->files[1].evals[k], 1);
        assert_non_null(s);
        assert_int_equal(s->count, k < 2 ? 2 : 1);
        assert_true(fabs(s->time - (k < 2 ? 2 : 1) * 100.0 * (k + 1) / 1e7) < 1e-15);
    }
    nytp_profile_free(p);
    free(a.data);
    free(b.data);
    free(m.data);
}

/* A line's ticks beyond what one chunk holds are spread over its
 * statements; the count stays. */
static void big_ticks(void **state)
{
    (void)state;
    input ins[2];
    for (int i = 0; i < 2; i++) {
        nytp_writer *w = mem_writer();
        nytp_write_header(w, 5, 0);
        nytp_write_attribute(w, "ticks_per_sec", "10000000");
        nytp_write_pid_start(w, 7, 1, 5.0);
        nytp_write_new_fid(w, 1, 0, 0, 0, 0, 0, nytp_cstr("big.pl", false));
        nytp_write_time_line(w, INT32_MAX, 1, 9);
        nytp_write_pid_end(w, 7, 6.0);
        ins[i] = finish(w);
    }
    warnings ws = {{0}, 0};
    int st;
    input m = merge(ins, 2, &ws, &st);
    nytp_profile *p = model_of(&m);
    const nytp_linestat *s = nytp_profile_line(p, 1, 9);
    assert_int_equal(s->count, 2);
    assert_true(fabs(s->time - 2.0 * INT32_MAX / 1e7) < 1e-6);
    nytp_profile_free(p);
    assert_int_equal(count_tag(&m, NYTP_TAG_TIME_LINE), 2);
    free(ins[0].data);
    free(ins[1].data);
    free(m.data);
}

/* Inputs that disagree: a warning naming both inputs and values; ticks of
 * another resolution are converted; applications listed. */
static void disagreeing_inputs(void **state)
{
    (void)state;
    input a = small_profile("x.pl", "1", "10000000", 0, 0);
    input b = small_profile("y.pl", "1", "20000000", 0, 0);
    input c = small_profile("x.pl", "1", "10000000", 0, 0);
    input ins[] = {a, b, c};
    warnings ws = {{0}, 0};
    int st;
    input m = merge(ins, 3, &ws, &st);
    assert_int_equal(ws.n, 1);
    assert_non_null(strstr(ws.text, "inputs disagree on ticks_per_sec: 10000000 in in0, 20000000 in in1"));
    nytp_profile *p = model_of(&m);
    /* 3 x 30 ticks at 10 MHz, and 30 ticks at 20 MHz = 15 at 10 MHz */
    assert_true(fabs(nytp_profile_line(p, 1, 1)->time - 75e-7) < 1e-15);
    assert_int_equal(nytp_profile_line(p, 1, 1)->count, 9);
    assert_string_equal(nytp_profile_attr(p, "application"), "x.pl (2 runs) and y.pl");
    assert_string_equal(nytp_profile_attr(p, "ticks_per_sec"), "10000000");
    nytp_profile_free(p);
    free(a.data);
    free(b.data);
    free(c.data);
    free(m.data);
}

/* A real profile merged with itself: the model of the result equals the
 * model of loading it twice (counts exactly, times to rounding). */
static void real_profile_twice(void **state)
{
    (void)state;
    const char *names[] = {"demo.out", "demo-blocks.out", "evals.out", "recursion.out", "anon.out"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        input in;
        in.data = slurp(td_path(names[k]), &in.len);
        input ins[] = {in, in};
        warnings ws = {{0}, 0};
        int st;
        input m = merge(ins, 2, &ws, &st);
        assert_int_equal(st, NYTP_OK);
        nytp_profile *p = model_of(&m), *q;
        nytp_error e = {0};
        assert_int_equal(nytp_profile_new(&q, &e), NYTP_OK);
        for (int i = 0; i < 2; i++)
            assert_int_equal(nytp_profile_load(q, td_path(names[k]), NULL, &e), NYTP_OK);
        nytp_profile_finish(q);
        assert_int_equal(p->total_stmts_measured, q->total_stmts_measured);
        assert_int_equal(p->total_sub_calls, q->total_sub_calls);
        assert_true(fabs(p->total_stmts_duration - q->total_stmts_duration) <
                    1e-9 * q->total_stmts_duration + 1e-12);
        for (uint32_t f = 1; f < q->n_files; f++) {
            if (!q->files[f].defined)
                continue;
            for (uint32_t l = 0; l <= nytp_lines_last(&q->files[f].line); l++) {
                const nytp_linestat *a = nytp_profile_line(p, f, l), *b = nytp_profile_line(q, f, l);
                if (!b) {
                    assert_null(a);
                    continue;
                }
                assert_non_null(a);
                assert_int_equal(a->count, b->count);
                assert_true(fabs(a->time - b->time) <= 1e-9 * fabs(b->time) + 1e-15);
            }
        }
        nytp_profile_free(p);
        nytp_profile_free(q);
        free(in.data);
        free(m.data);
    }
}

/* A profile of "x.pl" declared with file id fid, statements on lines
 * given in this order (one each, `ticks` ticks), the source of each line
 * below 10,000,000 saved (the model keeps source by line number, and
 * refuses numbers far beyond the lines it has), and an eval of fid + 1
 * run on the last line. */
static input sparse_profile(uint32_t fid, const uint32_t *lines, size_t n, int32_t ticks)
{
    nytp_writer *w = mem_writer();
    nytp_write_header(w, 5, 0);
    nytp_write_attribute(w, "ticks_per_sec", "10000000");
    nytp_write_start_deflate(w, 6);
    nytp_write_pid_start(w, 42, 1, 1000.0);
    nytp_write_new_fid(w, fid, 0, 0, 0x12, 0, 0, nytp_cstr("x.pl", false));
    for (size_t i = 0; i < n; i++) {
        nytp_write_time_line(w, ticks, fid, lines[i]);
        if (lines[i] < 10000000)
            nytp_write_src_line(w, fid, lines[i], nytp_cstr("1;\n", false));
    }
    nytp_write_new_fid(w, fid + 1, fid, lines[n - 1], 0x132, 0, 0,
                       nytp_cstr("(eval 1)[x.pl:1]", false));
    nytp_write_time_line(w, ticks, fid + 1, 1);
    nytp_write_pid_end(w, 42, 1001.0);
    return finish(w);
}

/* Far file ids and line numbers far apart are merged as any others:
 * the file ids are matched by name, each line's statements summed, the
 * lines written in order, each source line once. */
static void far_ids_and_sparse_lines(void **state)
{
    (void)state;
    const uint32_t la[] = {6400000, 64, 640, 1}, lb[] = {640, 64000000, 1};
    input a = sparse_profile(4000000000u, la, 4, 10);
    input b = sparse_profile(1u << 23, lb, 3, 7);
    input c = sparse_profile(3, la, 4, 5);
    input ins[] = {a, b, c};
    warnings ws = {{0}, 0};
    int st;
    input m = merge(ins, 3, &ws, &st);
    assert_int_equal(st, NYTP_OK);
    assert_int_equal(ws.n, 0);
    nytp_profile *p = model_of(&m);
    assert_int_equal(p->n_files, 3); /* x.pl and its eval, renumbered from 1 */
    const uint32_t lines[] = {1, 64, 640, 6400000, 64000000};
    const int64_t counts[] = {3, 2, 3, 2, 1};
    const double ticks[] = {22, 15, 22, 15, 7};
    assert_int_equal(p->files[1].line.n, 5);
    for (size_t i = 0; i < 5; i++) {
        const nytp_linestat *l = nytp_profile_line(p, 1, lines[i]);
        assert_non_null(l);
        assert_int_equal(l->count, counts[i]);
        assert_true(fabs(l->time - ticks[i] / 1e7) < 1e-15);
    }
    assert_int_equal(p->files[1].n_evals, 1); /* each input's eval ran on line 1 */
    const nytp_linestat *ev = nytp_profile_line(p, p->files[1].evals[0], 1);
    assert_non_null(ev);
    assert_int_equal(ev->count, 3);
    nytp_profile_free(p);

    /* statements come line by line, in order; source once per line */
    size_t n;
    nytp_error e = {0};
    saved_chunk *v = read_all(m.data, m.len, &n, &st, &e);
    assert_int_equal(st, NYTP_END);
    uint32_t last = 0, srcs = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].c.tag == NYTP_TAG_TIME_LINE && v[i].c.u.time.fid == 1) {
            assert_true(v[i].c.u.time.line >= last);
            last = v[i].c.u.time.line;
        }
        srcs += v[i].c.tag == NYTP_TAG_SRC_LINE;
    }
    assert_int_equal(last, 64000000);
    assert_int_equal(srcs, 4);
    free_chunks(v, n);
    free(a.data);
    free(b.data);
    free(c.data);
    free(m.data);
}

/* A line number far beyond the others is taken (libformat has no line
 * limit); truncated and bad inputs: errors, truncation keeps what came
 * before. */
static void bad_inputs(void **state)
{
    (void)state;
    nytp_writer *w = mem_writer();
    nytp_write_header(w, 5, 0);
    nytp_write_new_fid(w, 1, 0, 0, 0, 0, 0, nytp_cstr("huge.pl", false));
    nytp_write_start_deflate(w, 6);
    nytp_write_src_line(w, 1, 1u << 27, nytp_cstr("x", false));
    input huge = finish(w);

    nytp_writer *out = mem_writer();
    nytp_merge *m;
    nytp_error e = {0};
    assert_int_equal(nytp_merge_new(&m, out, NULL, &e), NYTP_OK);
    nytp_reader *r;
    assert_int_equal(nytp_reader_open_mem(&r, huge.data, huge.len, &e), NYTP_OK);
    /* read to its end (cut inside the zlib stream): the line is taken */
    assert_int_equal(nytp_merge_add_reader(m, r, "huge", &e), NYTP_E_TRUNCATED);
    assert_null(strstr(e.msg, "line number"));

    size_t len;
    uint8_t *cut = slurp(td_path("broken/trunc-z-middle.out"), &len);
    assert_int_equal(nytp_reader_open_mem(&r, cut, len, &e), NYTP_OK);
    assert_int_equal(nytp_merge_add_reader(m, r, "cut", &e), NYTP_E_TRUNCATED);
    assert_int_equal(nytp_merge_add(m, td_path("broken/major4.out"), &e), NYTP_E_VERSION);
    assert_true(nytp_merge_add(m, td_path("does-not-exist.out"), &e) < 0);
    nytp_merge_free(m);
    nytp_writer_abort(out);
    unlink(tmp_path);
    free(cut);
    free(huge.data);
}

/* A header line holding a NUL byte (a damaged file: fuzz_reader's find)
 * is left out with a warning.  Written back cut at the NUL, the attribute
 * "nv_size<NUL>5..." was an nv_size of 0 in the merged file, which the
 * reader then refused. */
static void nul_in_header_line(void **state)
{
    (void)state;
    nytp_writer *w = mem_writer();
    nytp_write_header(w, 5, 0);
    nytp_chunk a = {.tag = NYTP_TAG_ATTRIBUTE};
    a.u.kv.key = (nytp_str){"nv_size\0005@'", 11, false};
    a.u.kv.value = nytp_cstr("0", false);
    assert_int_equal(nytp_write_chunk(w, &a), NYTP_OK);
    nytp_chunk o = {.tag = NYTP_TAG_OPTION};
    o.u.kv.key = nytp_cstr("calls", false);
    o.u.kv.value = (nytp_str){"1\0002", 3, false};
    assert_int_equal(nytp_write_chunk(w, &o), NYTP_OK);
    nytp_write_attribute(w, "ticks_per_sec", "10000000");
    nytp_write_pid_start(w, 42, 1, 1000.0);
    nytp_write_new_fid(w, 1, 0, 0, 0x12, 0, 0, nytp_cstr("x.pl", false));
    nytp_write_time_line(w, 10, 1, 1);
    nytp_write_pid_end(w, 42, 1001.0);
    input in = finish(w);

    warnings ws = {{0}, 0};
    int st;
    input m = merge(&in, 1, &ws, &st);
    assert_int_equal(st, NYTP_OK);
    assert_int_equal(ws.n, 2);
    assert_non_null(strstr(ws.text, "in0: at offset "));
    assert_non_null(strstr(ws.text, "an attribute whose name or value holds a NUL byte"));
    assert_non_null(strstr(ws.text, "an option whose name or value holds a NUL byte"));
    /* the merged file reads to its end (count_tag asserts it) */
    assert_int_equal(count_tag(&m, NYTP_TAG_TIME_LINE), 1);
    nytp_profile *p = model_of(&m);
    assert_null(nytp_profile_attr(p, "nv_size"));
    assert_string_equal(nytp_profile_attr(p, "ticks_per_sec"), "10000000");
    nytp_profile_free(p);
    free(in.data);
    free(m.data);
}

/* Every broken file of testdata after a good one: an error or a warning
 * (the status the reader gives), never a crash or a leak (ASan run). */
static void every_broken_file(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int status;
    } cases[] = {
        {"broken/bad-magic.out", NYTP_E_FORMAT},         {"broken/bad-string-tag.out", NYTP_E_FORMAT},
        {"broken/bad-tag.out", NYTP_E_FORMAT},           {"broken/bad-zlib.out", NYTP_E_FORMAT},
        {"broken/empty.out", NYTP_E_FORMAT},             {"broken/major4.out", NYTP_E_VERSION},
        {"broken/major6.out", NYTP_E_VERSION},           {"broken/minor9.out", NYTP_OK},
        {"broken/nv-size-4.out", NYTP_E_FORMAT},         {"broken/random.out", NYTP_E_FORMAT},
        {"broken/string-past-end.out", NYTP_E_FORMAT},   {"broken/trunc-plain-attr.out", NYTP_E_TRUNCATED},
        {"broken/trunc-plain-boundary.out", NYTP_E_TRUNCATED},
        {"broken/trunc-plain-string.out", NYTP_E_TRUNCATED},
        {"broken/trunc-z-before.out", NYTP_E_TRUNCATED}, {"broken/trunc-z-end.out", NYTP_E_TRUNCATED},
        {"broken/trunc-z-header.out", NYTP_E_TRUNCATED}, {"broken/trunc-z-middle.out", NYTP_E_TRUNCATED},
        {"fuzz/huge-line.out", NYTP_E_FORMAT},           {"fuzz/line-4294967295.out", NYTP_E_FORMAT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nytp_writer *w = mem_writer();
        nytp_merge *m;
        nytp_error e = {0};
        warnings ws = {{0}, 0};
        nytp_merge_opts o = {collect, &ws, 1};
        assert_int_equal(nytp_merge_new(&m, w, &o, &e), NYTP_OK);
        assert_int_equal(nytp_merge_add(m, td_path("demo.out"), &e), NYTP_OK);
        int st = nytp_merge_add(m, td_path(cases[i].name), &e);
        if (st != cases[i].status)
            fail_msg("%s: status %d, expected %d (%s)", cases[i].name, st, cases[i].status, e.msg);
        if (st == NYTP_E_FORMAT)
            assert_true(strlen(e.msg) > 0);
        /* what a truncated input had before the cut is written */
        if (st == NYTP_OK || st == NYTP_E_TRUNCATED)
            assert_int_equal(nytp_merge_finish(m, &e), NYTP_OK);
        nytp_merge_free(m);
        nytp_writer_abort(w);
        unlink(tmp_path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_and_counts),
        cmocka_unit_test(evals_matched_by_place),
        cmocka_unit_test(big_ticks),
        cmocka_unit_test(disagreeing_inputs),
        cmocka_unit_test(real_profile_twice),
        cmocka_unit_test(far_ids_and_sparse_lines),
        cmocka_unit_test(bad_inputs),
        cmocka_unit_test(every_broken_file),
        cmocka_unit_test(nul_in_header_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
