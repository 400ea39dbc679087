/* fuzz_reader.c — libFuzzer target: the streaming reader, the dump
 * formatting, the model (load, collapse, dump --data, the pages of nytp
 * html, nytp top) and the call tree
 * (calls, flame SVG), nytp diff of the profile with itself, the pprof,
 * speedscope and cachegrind exports, and nytp merge, on arbitrary bytes.  Checks, beyond "no crash": every chunk
 * the reader returns re-encodes and decodes to the same chunk, and the
 * reader ends with a clean end or a reported error, never anything else. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "dump.h"
#include "diff.h"
#include "dump_data.h"
#include "export.h"
#include "flame_svg.h"
#include "html/html.h"
#include "top.h"
#include "nytp/merge.h"
#include "nytp/model.h"
#include "nytp/nytp.h"
#include "nytp/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_str(nytp_str a, nytp_str b)
{
    return a.len == b.len && a.utf8 == b.utf8 && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Re-encode c, decode it again, and compare the fields that matter. */
static void check_roundtrip(const nytp_chunk *c)
{
    if (c->tag == NYTP_TAG_VERSION)
        return;
    size_t cap = nytp_chunk_max_size(c);
    uint8_t *buf = malloc(cap);
    if (!buf)
        return;
    size_t n = nytp_encode_chunk(buf, c);
    if (n == 0 || n > cap)
        __builtin_trap();
    nytp_chunk d;
    size_t used;
    const char *why;
    if (nytp_decode_chunk(buf, buf + n, &d, &used, &why) != NYTP_DECODE_OK || used != n ||
        d.tag != c->tag)
        __builtin_trap();
    switch (c->tag) {
    case NYTP_TAG_TIME_LINE:
    case NYTP_TAG_TIME_BLOCK:
        if (d.u.time.ticks != c->u.time.ticks || d.u.time.line != c->u.time.line ||
            d.u.time.sub_line != c->u.time.sub_line)
            __builtin_trap();
        break;
    case NYTP_TAG_SUB_CALLERS:
        if (!same_str(d.u.sub_callers.called, c->u.sub_callers.called) ||
            !same_str(d.u.sub_callers.caller, c->u.sub_callers.caller) ||
            d.u.sub_callers.count != c->u.sub_callers.count)
            __builtin_trap();
        break;
    case NYTP_TAG_ATTRIBUTE:
    case NYTP_TAG_OPTION:
        if (!same_str(d.u.kv.key, c->u.kv.key) || !same_str(d.u.kv.value, c->u.kv.value))
            __builtin_trap();
        break;
    case NYTP_TAG_NEW_FID:
        if (!same_str(d.u.new_fid.name, c->u.new_fid.name) || d.u.new_fid.fid != c->u.new_fid.fid)
            __builtin_trap();
        break;
    default:
        break;
    }
    free(buf);
}

/* nytp merge of the bytes with themselves: where both inputs were taken
 * (whole or cut short), what it wrote must never be corrupt. */
static void check_merge(const uint8_t *data, size_t size)
{
    nytp_error e = {0};
    nytp_out *o;
    if (nytp_out_open_mem(&o, &e) < 0)
        return;
    nytp_writer *w;
    if (nytp_writer_open(&w, o, &e) < 0)
        return;
    nytp_merge *m;
    nytp_merge_opts mo = {NULL, NULL, 1};
    if (nytp_merge_new(&m, w, &mo, &e) < 0) {
        nytp_writer_abort(w);
        return;
    }
    int st = NYTP_OK;
    for (int k = 0; k < 2 && st >= 0; k++) {
        nytp_reader *r;
        if ((st = nytp_reader_open_mem(&r, data, size, &e)) < 0)
            break;
        st = nytp_merge_add_reader(m, r, "fuzz", &e);
        if (st == NYTP_E_TRUNCATED)
            st = NYTP_OK;
    }
    if (st >= 0)
        st = nytp_merge_finish(m, &e);
    nytp_merge_free(m);
    if (st < 0) {
        if (st != NYTP_E_NOMEM && e.msg[0] == 0)
            __builtin_trap(); /* every error says something */
        nytp_writer_abort(w);
        return;
    }
    uint8_t *out;
    size_t out_len;
    if (nytp_writer_close_mem(w, &out, &out_len, &e) < 0)
        return;
    nytp_reader *r;
    if (nytp_reader_open_mem(&r, out, out_len, &e) == 0) {
        nytp_chunk c;
        int rs;
        while ((rs = nytp_reader_next(r, &c, &e)) == NYTP_OK)
            ;
        /* cut short is allowed: inputs cut before their first PID_START
         * merge into a file without one, which the reader calls cut short
         * too; corrupt is not */
        if (rs != NYTP_END && rs != NYTP_E_NOMEM && rs != NYTP_E_TRUNCATED)
            __builtin_trap(); /* merge wrote what it cannot read back */
        nytp_reader_close(r);
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nytp_reader *r;
    nytp_error e = {0};
    if (nytp_reader_open_mem(&r, data, size, &e) < 0)
        return 0;
    nytp_out *text, *json;
    if (nytp_out_open_mem(&text, &e) < 0) {
        nytp_reader_close(r);
        return 0;
    }
    if (nytp_out_open_mem(&json, &e) < 0) {
        nytp_out_abort(text);
        nytp_reader_close(r);
        return 0;
    }
    nytp_chunk c;
    int st;
    while ((st = nytp_reader_next(r, &c, &e)) == NYTP_OK) {
        dump_chunk_text(text, &c);
        dump_chunk_json(json, &c);
        check_roundtrip(&c);
    }
    if (st != NYTP_END && st >= 0)
        __builtin_trap();
    if (st < 0 && e.msg[0] == 0)
        __builtin_trap(); /* every error says something */
    /* an error is sticky */
    if (st < 0 && nytp_reader_next(r, &c, &e) != st)
        __builtin_trap();
    nytp_reader_close(r);
    nytp_out_abort(text);
    nytp_out_abort(json);

    /* The model: load (twice, as two inputs), finish, print, collapse,
     * print again. */
    nytp_profile *p;
    if (nytp_profile_new(&p, &e) < 0)
        return 0;
    for (int k = 0; k < 2; k++) {
        if (nytp_reader_open_mem(&r, data, size, &e) < 0)
            break;
        int ls = nytp_profile_load_reader(p, r, "fuzz", NULL, &e);
        if (ls < 0 && ls != NYTP_E_TRUNCATED)
            break;
    }
    nytp_profile_finish(p);
    static const char *inc[] = {"/usr/share/perl5", "/usr/lib"};
    dump_data_opts dopts = {inc, 2, "5.36.0"};
    nytp_out *o;
    if (nytp_out_open_mem(&o, &e) == 0) {
        dump_data_text(o, p, &dopts);
        dump_data_json(o, p, &dopts);
        nytp_profile_collapse_evals(p);
        dump_data_text(o, p, &dopts);
        nytp_out_abort(o);
        html_write_memory(p); /* every page of nytp html's report */
    }
    top_write_memory(p);
    cachegrind_write_memory(p);

    /* The call tree (two inputs), its collapsed lines and its SVG. */
    nytp_calltree *t;
    if (nytp_calltree_new(&t, &e) < 0) {
        nytp_profile_free(p);
        return 0;
    }
    for (int k = 0; k < 2; k++) {
        if (nytp_reader_open_mem(&r, data, size, &e) < 0)
            break;
        nytp_calltree_read(t, r, &e);
        nytp_reader_close(r);
    }
    nytp_calltree_stats cs;
    nytp_calltree_get_stats(t, &cs);
    if (nytp_calltree_total_calls(t) != cs.returns)
        __builtin_trap(); /* every return is counted once, open frames add none */
    if (nytp_out_open_mem(&o, &e) == 0) {
        calls_write_collapsed(o, t, false, true);
        flame_svg_opts so;
        flame_svg_opts_init(&so);
        so.minwidth = 0;
        so.link_template = "x#%s";
        flame_svg_write(o, t, &so);
        so.by_calls = so.inverted = true;
        flame_svg_write(o, t, &so);
        nytp_out_abort(o);
    }
    diff_write_memory(p, p, t, t); /* nytp diff: tables, JSON, the SVG */
    /* deep recursion folded (a limit of 2, so that small inputs reach it):
     * every call is kept (times too, but summed in another order) */
    if (nytp_calltree_fold_recursion(t, 2) >= 0) {
        if (nytp_calltree_total_calls(t) != cs.returns)
            __builtin_trap();
        if (nytp_out_open_mem(&o, &e) == 0) {
            calls_write_collapsed(o, t, true, false);
            nytp_out_abort(o);
        }
    }
    /* the view (flame --filter is its --focus) on what is left, drawn */
    nytp_view *v = NULL;
    if (nytp_view_new(&v, &e) == 0 && nytp_view_add(v, NYTP_VIEW_FOCUS, "a|b", &e) == 0 &&
        nytp_view_add(v, NYTP_VIEW_HIDE, "c", &e) == 0 && nytp_view_add(v, NYTP_VIEW_IGNORE, "d$", &e) == 0 &&
        nytp_view_apply(v, &t, &e) == 0 && nytp_out_open_mem(&o, &e) == 0) {
        flame_svg_opts so;
        flame_svg_opts_init(&so);
        so.minwidth = 0;
        flame_svg_write(o, t, &so);
        nytp_out_abort(o);
    }
    nytp_view_free(v);
    nytp_profile_free(p);
    nytp_calltree_free(t);

    /* The exports, each loading the bytes as two inputs itself. */
    pprof_write_memory(data, size);
    speedscope_write_memory(data, size);

    check_merge(data, size);
    return 0;
}
