/* test_model.c — the loaded profile: lookups, sums, several inputs,
 * truncated and corrupt inputs, collapsing evals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nytp/model.h"
#include "nytp/reader.h"
#include "nytp/writer.h"
#include "../../libformat/stmtcount.h"

static nytp_profile *load(const char *const *names, size_t n, int *last_status, nytp_error *e)
{
    nytp_profile *p;
    assert_int_equal(nytp_profile_new(&p, e), NYTP_OK);
    for (size_t i = 0; i < n; i++)
        *last_status = nytp_profile_load(p, td_path(names[i]), NULL, e);
    nytp_profile_finish(p);
    return p;
}

/* Sum of all statement counts and times over every file and line. */
static void line_totals(const nytp_profile *p, int64_t *count, double *time)
{
    *count = 0;
    *time = 0;
    for (uint32_t f = 0; f < p->n_files; f++)
        for (uint32_t l = 0; l < p->files[f].line.n; l++)
            if (p->files[f].line.v[l].set) { /* always: entries are the lines present */
                *count += p->files[f].line.v[l].count;
                *time += p->files[f].line.v[l].time;
            }
}

/* What a profile says about itself agrees with what the model holds. */
static void totals_agree_with_lines(void **state)
{
    (void)state;
    const char *files[] = {"demo.out",        "demo-blocks.out", "evals.out",
                           "recursion.out",   "anon.out",        "tricky-strings.out"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        nytp_error e = {0};
        int st;
        nytp_profile *p = load(&files[i], 1, &st, &e);
        assert_int_equal(st, NYTP_OK);
        assert_true(p->complete);
        int64_t count;
        double time;
        line_totals(p, &count, &time);
        /* every measured statement adds 1, except the discounted ones */
        assert_int_equal(count, (int64_t)(p->total_stmts_measured - p->total_stmts_discounted));
        assert_true(fabs(time - p->total_stmts_duration) < 1e-9);
        /* sub call totals are the sums over call sites (xsub marks add 0) */
        uint64_t calls = 0;
        for (uint32_t s = 0; s < p->n_sites; s++)
            calls += p->sites[s].count;
        assert_int_equal(calls, p->total_sub_calls);
        for (uint32_t s = 0; s < p->n_subs; s++) {
            const nytp_sub *sub = &p->subs[s];
            uint64_t c = 0;
            for (uint32_t k = 0; k < sub->n_sites; k++) {
                assert_int_equal(p->sites[sub->sites[k]].called, s);
                c += p->sites[sub->sites[k]].count;
            }
            assert_int_equal(c, sub->calls);
        }
        nytp_profile_free(p);
    }
}

static void lookups(void **state)
{
    (void)state;
    nytp_error e = {0};
    int st;
    const char *f = "demo.out";
    nytp_profile *p = load(&f, 1, &st, &e);
    assert_int_equal(st, NYTP_OK);
    const nytp_file *f1 = nytp_profile_file(p, 1);
    assert_non_null(f1);
    const char *name = nytp_profile_str(p, f1->name);
    assert_true(strlen(name) > 8 && strcmp(name + strlen(name) - 8, "/demo.pl") == 0);
    assert_int_equal(nytp_profile_fid_by_name(p, name, strlen(name)), 1);
    assert_int_equal(nytp_profile_fid_by_name(p, "nope.pl", 7), NYTP_NONE);
    assert_null(nytp_profile_file(p, 0));
    assert_null(nytp_profile_file(p, 100000));
    uint32_t fib = nytp_profile_sub_by_name(p, "main::fib", 9);
    assert_int_not_equal(fib, NYTP_NONE);
    assert_int_equal(p->subs[fib].fid, 1);
    assert_true(p->subs[fib].calls > 10);
    assert_true(p->subs[fib].rec_depth > 1);
    assert_int_equal(nytp_profile_sub_by_name(p, "main::nope", 10), NYTP_NONE);
    /* the line of fib's first statement ran as often as fib was called */
    const nytp_linestat *ls = nytp_profile_line(p, 1, p->subs[fib].first_line);
    assert_non_null(ls);
    assert_true(ls->count >= (int64_t)p->subs[fib].calls);
    assert_null(nytp_profile_line(p, 1, 1000000));
    assert_string_equal(nytp_profile_attr(p, "nv_size"), "8");
    assert_string_equal(nytp_profile_option(p, "calls"), "1");
    assert_null(nytp_profile_attr(p, "no_such_attribute"));
    assert_int_equal(p->n_procs, 1);
    assert_true(p->procs[0].ended);
    assert_true(p->profiler_duration > 0);
    nytp_profile_free(p);
}

/* Loading a file twice doubles counts and times and adds no file, sub
 * or call site. */
static void same_file_twice(void **state)
{
    (void)state;
    nytp_error e = {0};
    int st;
    const char *one[] = {"evals.out"};
    const char *two[] = {"evals.out", "evals.out"};
    nytp_profile *a = load(one, 1, &st, &e);
    nytp_profile *b = load(two, 2, &st, &e);
    assert_int_equal(st, NYTP_OK);
    assert_int_equal(b->n_subs, a->n_subs);
    assert_int_equal(b->n_sites, a->n_sites);
    assert_int_equal(b->total_stmts_measured, 2 * a->total_stmts_measured);
    assert_int_equal(b->total_sub_calls, 2 * a->total_sub_calls);
    uint32_t defined_a = 0, defined_b = 0;
    for (uint32_t f = 0; f < a->n_files; f++)
        defined_a += a->files[f].defined;
    for (uint32_t f = 0; f < b->n_files; f++)
        defined_b += b->files[f].defined;
    assert_int_equal(defined_b, defined_a);
    for (uint32_t f = 0; f < a->n_files; f++) {
        assert_int_equal(b->files[f].line.n, a->files[f].line.n);
        for (uint32_t l = 0; l < a->files[f].line.n; l++) {
            const nytp_linestat *x = &a->files[f].line.v[l], *y = &b->files[f].line.v[l];
            assert_int_equal(y->line, x->line);
            assert_int_equal(y->count, 2 * x->count);
            assert_true(fabs(y->time - 2 * x->time) < 1e-12);
        }
    }
    assert_int_equal(b->n_procs, 2);
    nytp_profile_free(a);
    nytp_profile_free(b);
}

/* A truncated input keeps what came before the cut; a corrupt one stops
 * with an error and the model keeps what was loaded before it. */
static void truncated_and_corrupt(void **state)
{
    (void)state;
    nytp_error e = {0};
    int st;
    const char *cut = "broken/trunc-z-middle.out";
    nytp_profile *p = load(&cut, 1, &st, &e);
    assert_int_equal(st, NYTP_E_TRUNCATED);
    assert_false(p->complete);
    assert_true(p->truncated);
    assert_true(p->total_stmts_measured > 100);
    assert_true(e.inflated);
    nytp_profile_free(p);

    const char *two[] = {"demo.out", "broken/bad-tag.out"};
    p = load(two, 2, &st, &e);
    assert_int_equal(st, NYTP_E_FORMAT);
    assert_string_equal(e.msg, "expected a chunk tag, found byte 0x51");
    assert_true(p->n_subs > 0); /* demo.out is still there */
    nytp_profile_free(p);

    /* Found by the fuzzer: a statement on line 198,507,774 made the line
     * array take 4.5 GB, and line 4294967295 made its growth loop spin.
     * Lines are stored by what is present now: such a line is one entry
     * (the files are fuzz mutants, corrupt further on). */
    const char *huge = "fuzz/huge-line.out";
    p = load(&huge, 1, &st, &e);
    assert_int_equal(st, NYTP_E_FORMAT);
    assert_null(strstr(e.msg, "line number"));
    assert_true(e.chunk > 1436);
    bool found = false;
    for (uint32_t f = 0; f < p->n_files; f++)
        found |= nytp_profile_line(p, f, 198507774) != NULL;
    assert_true(found);
    nytp_profile_free(p);

    const char *spin = "fuzz/line-4294967295.out";
    p = load(&spin, 1, &st, &e);
    assert_null(strstr(e.msg, "line number"));
    found = false;
    for (uint32_t f = 0; f < p->n_files; f++)
        found |= nytp_profile_line(p, f, 4294967295u) != NULL;
    assert_true(found);
    nytp_profile_free(p);

    nytp_profile *q;
    assert_int_equal(nytp_profile_new(&q, &e), NYTP_OK);
    assert_int_equal(nytp_profile_load(q, td_path("no-such-file.out"), NULL, &e), NYTP_E_IO);
    nytp_profile_free(q);
}

/* Collapsing: nothing is lost from the totals, the evals of one line with
 * one source fold into one. */
static void collapse_keeps_totals(void **state)
{
    (void)state;
    nytp_error e = {0};
    int st;
    const char *f = "evals.out";
    nytp_profile *p = load(&f, 1, &st, &e);
    int64_t c0;
    double t0;
    line_totals(p, &c0, &t0);
    uint32_t evals0 = 0;
    for (uint32_t i = 0; i < p->n_files; i++)
        evals0 += p->files[i].defined && p->files[i].eval_fid;
    uint64_t calls0 = 0;
    for (uint32_t s = 0; s < p->n_subs; s++)
        calls0 += p->subs[s].calls;
    assert_int_equal(nytp_profile_collapse_evals(p), NYTP_OK);
    int64_t c1;
    double t1;
    line_totals(p, &c1, &t1);
    assert_int_equal(c1, c0);
    assert_true(fabs(t1 - t0) < 1e-12);
    uint32_t evals1 = 0, merged = 0;
    for (uint32_t i = 0; i < p->n_files; i++) {
        evals1 += p->files[i].defined && p->files[i].eval_fid;
        merged += p->files[i].merged_evals;
        if (!p->files[i].defined)
            assert_int_equal(p->files[i].line.n, 0); /* nothing left behind */
    }
    assert_true(evals1 < evals0);
    assert_int_equal(evals1 + merged, evals0);
    uint64_t calls1 = 0;
    for (uint32_t s = 0; s < p->n_subs; s++)
        calls1 += p->subs[s].calls;
    assert_int_equal(calls1, calls0);
    /* lookups still work after the renumbering */
    for (uint32_t s = 0; s < p->n_subs; s++) {
        const char *name = nytp_profile_str(p, p->subs[s].name);
        assert_int_equal(nytp_profile_sub_by_name(p, name, nytp_profile_strlen(p, p->subs[s].name)), s);
    }
    nytp_profile_free(p);
}

/* A file id of 2^32-1 in a second input: the fid map must not try to
 * grow to it (its doubling overflowed and never ended). */
/* True when site sid lists the sub named caller among its callers. */
static bool site_called_from(const nytp_profile *p, uint32_t sid, const char *caller)
{
    const nytp_site *st = &p->sites[sid];
    for (uint32_t k = 0; k < st->n_callers; k++)
        if (strcmp(nytp_profile_str(p, st->callers[k]), caller) == 0)
            return true;
    return false;
}

static bool calls_sub(const nytp_profile *p, const nytp_sub *s, const char *callee)
{
    for (uint32_t k = 0; k < s->n_callees; k++)
        if (strcmp(nytp_profile_str(p, p->subs[p->sites[s->callees[k]].called].name), callee) == 0)
            return true;
    return false;
}

/* The callee lists are the caller lists turned around, before and after
 * collapsing evals: every (site, caller) pair appears exactly once. */
static void callees_mirror_callers(void **state)
{
    (void)state;
    const char *files[] = {"demo.out", "evals.out", "recursion.out", "anon.out"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        for (int collapse = 0; collapse < 2; collapse++) {
            nytp_error e = {0};
            int st;
            nytp_profile *p = load(&files[i], 1, &st, &e);
            if (collapse)
                assert_int_equal(nytp_profile_collapse_evals(p), NYTP_OK);
            uint64_t pairs = 0, listed = 0;
            for (uint32_t sid = 0; sid < p->n_sites; sid++)
                for (uint32_t k = 0; k < p->sites[sid].n_callers; k++)
                    pairs += nytp_profile_sub_by_name(p, nytp_profile_str(p, p->sites[sid].callers[k]),
                                                      nytp_profile_strlen(p, p->sites[sid].callers[k]))
                             != NYTP_NONE;
            for (uint32_t s = 0; s < p->n_subs; s++) {
                const nytp_sub *sub = &p->subs[s];
                listed += sub->n_callees;
                for (uint32_t k = 0; k < sub->n_callees; k++) {
                    assert_true(sub->callees[k] < p->n_sites);
                    assert_true(site_called_from(p, sub->callees[k], nytp_profile_str(p, sub->name)));
                }
            }
            assert_int_equal(listed, pairs);
            assert_true(pairs > 0);
            nytp_profile_free(p);
        }
    }
    /* and what demo.pl's source says it calls */
    nytp_error e = {0};
    int st;
    const char *f = "demo.out";
    nytp_profile *p = load(&f, 1, &st, &e);
    const char *fib = "main::fib";
    uint32_t id = nytp_profile_sub_by_name(p, fib, strlen(fib));
    assert_int_not_equal(id, NYTP_NONE);
    assert_true(calls_sub(p, &p->subs[id], "main::fib"));
    const char *cw = "main::count_words";
    id = nytp_profile_sub_by_name(p, cw, strlen(cw));
    assert_int_not_equal(id, NYTP_NONE);
    assert_true(calls_sub(p, &p->subs[id], "main::CORE:match"));
    assert_false(calls_sub(p, &p->subs[id], "main::fib"));
    nytp_profile_free(p);
}

static void huge_fid_in_second_input(void **state)
{
    (void)state;
    static const uint8_t prof[] = "NYTProf 5 0\n:ticks_per_sec=10000000\n"
                                  "P\x01\x00\x00\x00\x00\x00\x00\x00\xf0\x3f"
                                  "@\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00'\x04" "a.pl"
                                  "p\x01\x00\x00\x00\x00\x00\x00\x00\x40";
    nytp_error e = {0};
    nytp_profile *p;
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    assert_int_equal(nytp_profile_load(p, td_path("demo.out"), NULL, &e), NYTP_OK);
    nytp_reader *r;
    assert_int_equal(nytp_reader_open_mem(&r, prof, sizeof prof - 1, &e), NYTP_OK);
    /* any file id is a file id: it costs one file, not an array up to it */
    uint32_t before = p->n_files;
    assert_int_equal(nytp_profile_load_reader(p, r, "mem", NULL, &e), NYTP_OK);
    assert_int_equal(p->n_files, before + 1);
    uint32_t fid = nytp_profile_fid_by_name(p, "a.pl", 4);
    assert_int_equal(fid, before);
    assert_int_equal(p->files[fid].number, fid); /* a later input's files are numbered anew */
    nytp_profile_free(p);

    /* the same id in a first input keeps its number */
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    assert_int_equal(nytp_reader_open_mem(&r, prof, sizeof prof - 1, &e), NYTP_OK);
    assert_int_equal(nytp_profile_load_reader(p, r, "mem", NULL, &e), NYTP_OK);
    assert_true(p->n_files <= 2);
    fid = nytp_profile_fid_by_name(p, "a.pl", 4);
    assert_int_equal(p->files[fid].number, 4294967295u);
    nytp_profile_free(p);
}

/* on_chunk sees every chunk the reader gives, in order, and can stop the
 * load with its status. */
typedef struct chunk_count {
    uint64_t n, sub_returns;
    uint64_t stop_at;
} chunk_count;

static int count_chunk(void *ctx, const nytp_chunk *c)
{
    chunk_count *cc = ctx;
    cc->n++;
    cc->sub_returns += c->tag == NYTP_TAG_SUB_RETURN;
    return cc->stop_at && cc->n == cc->stop_at ? NYTP_E_NOMEM : NYTP_OK;
}

static void on_chunk_hook(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_reader *r;
    assert_int_equal(nytp_reader_open(&r, td_path("demo.out"), &e), NYTP_OK);
    nytp_chunk c;
    uint64_t want = 0, want_returns = 0, statements = 0;
    while (nytp_reader_next(r, &c, &e) == NYTP_OK) {
        want++;
        want_returns += c.tag == NYTP_TAG_SUB_RETURN;
        statements += c.tag == NYTP_TAG_TIME_LINE || c.tag == NYTP_TAG_TIME_BLOCK || c.tag == NYTP_TAG_DISCOUNT;
    }
    nytp_reader_close(r);

    nytp_profile *p;
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    chunk_count cc = {0, 0, 0};
    nytp_load_opts o = {NULL, NULL, count_chunk, &cc, false};
    assert_int_equal(nytp_profile_load(p, td_path("demo.out"), &o, &e), NYTP_OK);
    assert_int_equal(cc.n, want);
    assert_int_equal(cc.sub_returns, want_returns);
    assert_true(want_returns > 100);
    nytp_profile_free(p);

    /* skip_statements: every chunk but TIME_LINE, TIME_BLOCK and DISCOUNT */
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    chunk_count some = {0, 0, 0};
    o = (nytp_load_opts){NULL, NULL, count_chunk, &some, true};
    assert_int_equal(nytp_profile_load(p, td_path("demo.out"), &o, &e), NYTP_OK);
    assert_true(statements > 1000);
    assert_int_equal(some.n, want - statements);
    assert_int_equal(some.sub_returns, want_returns);
    nytp_profile_free(p);

    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    chunk_count stop = {0, 0, 50};
    assert_int_equal(nytp_profile_load(p, td_path("demo.out"), &(nytp_load_opts){NULL, NULL, count_chunk, &stop, false}, &e),
                     NYTP_E_NOMEM);
    assert_int_equal(stop.n, 50);
    nytp_profile_free(p);
}

/* The count a statement adds after k DISCOUNTs: 1 - k, in 64 bits (an
 * int counter overflowed after 2^31 DISCOUNTs in a row; UBSan aborts). */
static void discount_count_is_wide(void **state)
{
    (void)state;
    assert_int_equal(stmt_count_delta(0), 1);
    assert_int_equal(stmt_count_delta(1), 0);
    assert_int_equal(stmt_count_delta(3), -2);
    assert_true(stmt_count_delta((uint64_t)1 << 31) == 1 - ((int64_t)1 << 31));
    assert_true(stmt_count_delta(((uint64_t)1 << 32) + 5) == -((int64_t)1 << 32) - 4);
    assert_true(stmt_count_delta((uint64_t)INT64_MAX) == 1 - INT64_MAX);
    assert_true(stmt_count_delta(UINT64_MAX) == INT64_MIN);
}

/* ---- the statement runs of the load (model.c statement_run) ------------ */

/* A profile whose statements take every turn the in-place statement loop
 * must hand back to the general one: DISCOUNT runs, negative and large
 * ticks, lines beyond the dense tables, a file used before its NEW_FID
 * and one never declared, blocks, sub returns between them, and (when
 * level > 0) chunks across the 1 MiB blocks the inflater hands over. */
static uint8_t *statement_profile(int level, size_t *len)
{
    nytp_error e = {0};
    nytp_out *o;
    nytp_writer *w;
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    nytp_write_header(w, 5, 0);
    nytp_write_attribute(w, "ticks_per_sec", "10000000");
    nytp_write_start_deflate(w, level);
    nytp_write_pid_start(w, 7, 1, 1.5);
    nytp_write_new_fid(w, 1, 0, 0, 0, 0, 0, nytp_cstr("/a.pl", false));
    nytp_write_new_fid(w, 2, 0, 0, 0, 0, 0, nytp_cstr("/b.pm", false));
    uint64_t x = 88172645463325252ull; /* xorshift: the same file every run */
    for (uint32_t i = 0; i < 700000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned pick = (unsigned)(x % 1000);
        uint32_t fid = 1 + (uint32_t)(x >> 20) % 2;
        uint32_t line = 1 + (uint32_t)(x >> 24) % 3000;
        int32_t ticks = (int32_t)((x >> 40) % 5000);
        if (pick < 60)
            nytp_write_discount(w);
        if (pick < 8)
            nytp_write_discount(w); /* several in a row: a negative count */
        if (pick == 100)
            ticks = -(int32_t)(x % 300); /* a clock that went back */
        else if (pick == 101)
            ticks = 2000000000; /* beyond any table of small ticks */
        else if (pick == 102)
            line = 4000000000u; /* beyond any dense table */
        else if (pick == 103)
            line = 100000 + (uint32_t)(x >> 33) % 50000; /* far apart */
        else if (pick == 104)
            fid = 3; /* declared half way through */
        else if (pick == 105)
            fid = 99; /* never declared */
        if (pick == 106)
            nytp_write_time_block(w, ticks, fid, line, line > 5 ? line - 5 : 1, 1);
        else
            nytp_write_time_line(w, ticks, fid, line);
        if (pick >= 900 && pick < 910)
            nytp_write_sub_return(w, 1, 0.5, 0.25, nytp_cstr("main::f", false));
        if (i == 350000)
            nytp_write_new_fid(w, 3, 0, 0, 0, 0, 0, nytp_cstr("/c.pm", false));
    }
    nytp_write_discount(w); /* one with no statement after it */
    nytp_write_pid_end(w, 7, 9.5);
    uint8_t *data;
    assert_int_equal(nytp_writer_close_mem(w, &data, len, &e), NYTP_OK);
    return data;
}

static int no_chunk(void *ctx, const nytp_chunk *c)
{
    (void)ctx;
    (void)c;
    return NYTP_OK;
}

static void count_warning(void *ctx, const nytp_error *w)
{
    (void)w;
    (*(unsigned *)ctx)++;
}

typedef struct loaded {
    nytp_profile *p;
    int st;
    nytp_error e;
    unsigned warnings;
} loaded;

/* Load data[0..len); general: with an on_chunk hook that sees statements,
 * which keeps the load on nytp_reader_next for every chunk. */
static void load_mem(loaded *l, const uint8_t *data, size_t len, bool general)
{
    memset(l, 0, sizeof *l);
    assert_int_equal(nytp_profile_new(&l->p, &l->e), NYTP_OK);
    nytp_reader *r;
    assert_int_equal(nytp_reader_open_mem(&r, data, len, &l->e), NYTP_OK);
    nytp_load_opts o = {count_warning, &l->warnings, general ? no_chunk : NULL, NULL, false};
    l->st = nytp_profile_load_reader(l->p, r, "mem", &o, &l->e);
}

static void lines_equal(const nytp_lines *a, const nytp_lines *b)
{
    assert_int_equal(a->n, b->n);
    for (uint32_t i = 0; i < a->n; i++) {
        assert_int_equal(a->v[i].line, b->v[i].line);
        assert_int_equal(a->v[i].count, b->v[i].count);
        /* the same additions in the same order: the same bits */
        assert_memory_equal(&a->v[i].time, &b->v[i].time, sizeof(double));
    }
}

static void same_load(const loaded *a, const loaded *b)
{
    assert_int_equal(a->st, b->st);
    assert_string_equal(a->e.msg, b->e.msg);
    assert_int_equal(a->e.offset, b->e.offset);
    assert_int_equal(a->e.chunk, b->e.chunk);
    assert_int_equal(a->warnings, b->warnings);
    assert_int_equal(a->p->n_files, b->p->n_files);
    for (uint32_t f = 0; f < a->p->n_files; f++) {
        lines_equal(&a->p->files[f].line, &b->p->files[f].line);
        lines_equal(&a->p->files[f].block, &b->p->files[f].block);
        lines_equal(&a->p->files[f].sub, &b->p->files[f].sub);
    }
    assert_memory_equal(&a->p->total_stmts_duration, &b->p->total_stmts_duration, sizeof(double));
    assert_int_equal(a->p->total_stmts_measured, b->p->total_stmts_measured);
    assert_int_equal(a->p->total_stmts_discounted, b->p->total_stmts_discounted);
    assert_int_equal(a->p->complete, b->p->complete);
}

static void statement_runs_match_the_general_path(void **state)
{
    (void)state;
    for (int level = 0; level <= 1; level++) {
        size_t len;
        uint8_t *data = statement_profile(level, &len);
        loaded fast, slow;
        load_mem(&fast, data, len, false);
        load_mem(&slow, data, len, true);
        assert_int_equal(fast.st, NYTP_OK);
        assert_true(fast.p->total_stmts_measured > 600000);
        assert_true(fast.p->files[1].line.n > 2000);
        assert_int_equal(fast.p->n_files, 100); /* fid 99, never declared */
        same_load(&fast, &slow);
        nytp_profile_free(fast.p);
        nytp_profile_free(slow.p);

        /* cut anywhere, in the middle of a statement or not: the same
         * error at the same chunk and offset, the same model up to it */
        uint64_t x = 2463534242u;
        for (int cut = 0; cut < 12; cut++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            size_t at = len / 2 + (size_t)(x % (len / 2));
            load_mem(&fast, data, at, false);
            load_mem(&slow, data, at, true);
            assert_true(fast.st < 0);
            same_load(&fast, &slow);
            nytp_profile_free(fast.p);
            nytp_profile_free(slow.p);
        }
        free(data);
    }
}

/* ---- one file named several ways (nytp_profile_fold_files) ------------- */

static void fold_files_merges_aliases(void **state)
{
    (void)state;
    nytp_error e = {0};
    nytp_out *o;
    nytp_writer *w;
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    nytp_write_header(w, 5, 0);
    nytp_write_attribute(w, "ticks_per_sec", "1000000");
    nytp_write_pid_start(w, 7, 1, 1.5);
    nytp_write_new_fid(w, 1, 0, 0, 0, 0, 0, nytp_cstr("/a/b.pl", false));
    nytp_write_new_fid(w, 2, 0, 0, 0, 0, 0, nytp_cstr("/a/./b.pl", false));
    nytp_write_new_fid(w, 3, 0, 0, 0, 0, 0, nytp_cstr("/c.pl", false));
    nytp_write_new_fid(w, 4, 2, 9, 0, 0, 0, nytp_cstr("(eval 1)[/a/./b.pl:9]", false));
    nytp_write_src_line(w, 2, 1, nytp_cstr("my $x;\n", false));
    nytp_write_time_line(w, 10, 1, 1);
    nytp_write_time_line(w, 20, 2, 1);
    nytp_write_time_line(w, 30, 2, 2);
    nytp_write_time_line(w, 40, 3, 1);
    nytp_write_time_line(w, 50, 4, 1);
    nytp_str f = nytp_cstr("main::f", false), rt = nytp_cstr("main::RUNTIME", false);
    nytp_write_sub_info(w, 2, 3, 4, f);
    nytp_write_sub_callers(w, 1, 5, 2, 1e-6, 1e-6, 0, 0, f, rt);
    nytp_write_sub_callers(w, 2, 5, 3, 2e-6, 2e-6, 0, 0, f, rt);
    nytp_write_pid_end(w, 7, 9.5);
    uint8_t *data;
    size_t len;
    assert_int_equal(nytp_writer_close_mem(w, &data, &len, &e), NYTP_OK);
    loaded l;
    load_mem(&l, data, len, false);
    assert_int_equal(l.st, NYTP_OK);
    nytp_profile *p = l.p;
    assert_int_equal(nytp_profile_finish(p), NYTP_OK);
    assert_int_equal(p->n_files, 5);
    uint32_t into[5] = {0, 1, 1, 3, 4};
    assert_int_equal(nytp_profile_fold_files(p, into), NYTP_OK);

    const nytp_file *a = &p->files[1], *b = &p->files[2];
    assert_true(a->defined);
    assert_false(b->defined);
    assert_true(nytp_file_is_empty(b));
    assert_int_equal(nytp_profile_line(p, 1, 1)->count, 2);
    assert_int_equal(nytp_profile_line(p, 1, 2)->count, 1);
    assert_int_equal(nytp_profile_line(p, 3, 1)->count, 1);
    assert_non_null(nytp_src_get(&a->src, 1)); /* the alias's saved source */
    uint32_t sid = nytp_profile_sub_by_name(p, "main::f", 7);
    assert_int_not_equal(sid, NYTP_NONE);
    assert_int_equal(p->subs[sid].fid, 1);
    assert_int_equal(p->subs[sid].n_sites, 1); /* the two sites on line 5 are one */
    assert_int_equal(p->sites[p->subs[sid].sites[0]].fid, 1);
    assert_int_equal(p->sites[p->subs[sid].sites[0]].count, 5);
    assert_int_equal(p->files[4].eval_fid, 1);
    assert_int_equal(p->files[4].root_fid, 1);
    assert_int_equal(a->n_evals, 1);
    assert_int_equal(a->evals[0], 4);
    assert_false(nytp_file_is_empty(&p->files[3]));
    nytp_profile_free(p);
    free(data);
}

/* ---- sampled profiles (Devel::NYTP sample=HZ) ----------------------------- */

/* A profile with the attributes of a sampled one (hz 0: not sampled;
 * samples < 0: cut before the count was written). */
static uint8_t *sampled_profile(const char *hz, long samples, size_t *len)
{
    nytp_error e = {0};
    nytp_out *o;
    nytp_writer *w;
    assert_int_equal(nytp_out_open_mem(&o, &e), NYTP_OK);
    assert_int_equal(nytp_writer_open(&w, o, &e), NYTP_OK);
    nytp_write_header(w, 5, 0);
    nytp_write_attribute(w, "ticks_per_sec", "10000000");
    if (hz)
        nytp_write_attribute(w, "sample_hz", hz);
    nytp_write_pid_start(w, 7, 1, 1.5);
    nytp_write_new_fid(w, 1, 0, 0, 0, 0, 0, nytp_cstr("/a.pl", false));
    nytp_write_discount(w);
    nytp_write_time_line(w, 10000, 1, 3);
    if (hz && samples >= 0) {
        char n[32];
        snprintf(n, sizeof n, "%ld", samples);
        nytp_write_attribute(w, "sample_count", n);
    }
    nytp_write_pid_end(w, 7, 2.5);
    uint8_t *data;
    assert_int_equal(nytp_writer_close_mem(w, &data, len, &e), NYTP_OK);
    return data;
}

static void sampled_inputs_are_counted(void **state)
{
    (void)state;
    struct { const char *hz; long samples; } in[] = {{"1000", 1200}, {"1000", 800}, {NULL, 0},
                                                      {"1000", -1}};
    nytp_profile *p;
    nytp_error e = {0};
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    for (size_t i = 0; i < 2; i++) { /* two sampled segments */
        size_t len;
        uint8_t *d = sampled_profile(in[i].hz, in[i].samples, &len);
        nytp_reader *r;
        assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
        assert_int_equal(nytp_profile_load_reader(p, r, "mem", NULL, &e), NYTP_OK);
        free(d);
    }
    assert_true(p->counts_unknown);
    assert_int_equal(p->n_sampled, 2);
    assert_int_equal(p->samples, 2000);
    assert_int_equal(p->n_sample_counts, 2);
    assert_true(p->sample_hz == 1000);
    assert_false(p->sample_hz_mixed);
    /* the line has time and no count */
    const nytp_linestat *l = nytp_profile_line(p, 1, 3);
    assert_non_null(l);
    assert_int_equal(l->count, 0);
    assert_true(fabs(l->time - 0.002) < 1e-12);
    for (size_t i = 2; i < 4; i++) { /* a traced input, and one cut short */
        size_t len;
        uint8_t *d = sampled_profile(in[i].hz, in[i].samples, &len);
        nytp_reader *r;
        assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
        assert_int_equal(nytp_profile_load_reader(p, r, "mem", NULL, &e), NYTP_OK);
        free(d);
    }
    assert_int_equal(p->n_inputs, 4);
    assert_int_equal(p->n_sampled, 3);
    assert_int_equal(p->n_sample_counts, 2);
    assert_int_equal(p->samples, 2000);
    nytp_profile_free(p);

    /* a traced profile alone: counts are known */
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    size_t len;
    uint8_t *d = sampled_profile(NULL, 0, &len);
    nytp_reader *r;
    assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
    assert_int_equal(nytp_profile_load_reader(p, r, "mem", NULL, &e), NYTP_OK);
    assert_false(p->counts_unknown);
    assert_int_equal(p->n_sampled, 0);
    nytp_profile_free(p);
    free(d);

    /* rates that differ */
    assert_int_equal(nytp_profile_new(&p, &e), NYTP_OK);
    const char *hz[] = {"1000", "100"};
    for (size_t i = 0; i < 2; i++) {
        d = sampled_profile(hz[i], 10, &len);
        assert_int_equal(nytp_reader_open_mem(&r, d, len, &e), NYTP_OK);
        assert_int_equal(nytp_profile_load_reader(p, r, "mem", NULL, &e), NYTP_OK);
        free(d);
    }
    assert_true(p->sample_hz_mixed);
    assert_int_equal(p->samples, 20);
    nytp_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sampled_inputs_are_counted),
        cmocka_unit_test(discount_count_is_wide),
        cmocka_unit_test(totals_agree_with_lines),
        cmocka_unit_test(lookups),
        cmocka_unit_test(same_file_twice),
        cmocka_unit_test(truncated_and_corrupt),
        cmocka_unit_test(collapse_keeps_totals),
        cmocka_unit_test(huge_fid_in_second_input),
        cmocka_unit_test(callees_mirror_callers),
        cmocka_unit_test(on_chunk_hook),
        cmocka_unit_test(statement_runs_match_the_general_path),
        cmocka_unit_test(fold_files_merges_aliases),
    };
    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
