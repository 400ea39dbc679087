/* diff_json.c — 'nytp diff --json': the comparison as one JSON document,
 * every row with both sides and the check's result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "diff_impl.h"

/* ---- JSON ------------------------------------------------------------------------ */

static void jkey(nytp_out *out, const char *k, bool first)
{
    nytp_out_printf(out, "%s\"%s\":", first ? "" : ",", k);
}

static void jchange(nytp_out *out, const char *what, double base, double now, bool first)
{
    jkey(out, what, first);
    term_json_nv(out, now - base);
    char k[40];
    snprintf(k, sizeof k, "%s_pct", what);
    jkey(out, k, false);
    term_json_nv(out, diff_pct_change(base, now)); /* null when BASE is 0 */
}

static const char *status(const bool present[2])
{
    return !present[0] ? "added" : !present[1] ? "removed" : "both";
}

static void json_side(nytp_out *out, const side *S)
{
    nytp_out_write(out, "{\"files\":[", 10);
    for (int i = 0; i < S->nfiles; i++) {
        if (i)
            nytp_out_write(out, ",", 1);
        term_json_str(out, S->files[i], strlen(S->files[i]));
    }
    nytp_out_write(out, "]", 1);
    jkey(out, "statements", false);
    term_json_nv(out, S->stmt_total);
    jkey(out, "sub_excl", false);
    term_json_nv(out, S->sub_total);
    jkey(out, "sub_calls", false);
    nytp_out_printf(out, "%llu", (unsigned long long)S->calls);
    jkey(out, "total", false);
    term_json_nv(out, S->total);
    jkey(out, "complete", false);
    nytp_out_printf(out, "%s}", S->p->complete ? "true" : "false");
}

void diff_write_json(diff *D, nytp_out *out, double min)
{
    nytp_out_write(out, "{\"format\":\"nytp-diff-1\",\"base\":", 31);
    json_side(out, &D->s[0]);
    nytp_out_write(out, ",\"new\":", 7);
    json_side(out, &D->s[1]);
    jkey(out, "total_kind", false);
    nytp_out_printf(out, "\"%s\"", D->s[0].stmt_total > 0 && D->s[1].stmt_total > 0 ? "statements" : "subs");
    jkey(out, "normalized", false);
    nytp_out_printf(out, "%s", D->o->normalize ? "true" : "false");
    jkey(out, "scale", false);
    term_json_nv(out, D->scale);
    nytp_out_write(out, ",\"total\":{", 10);
    jkey(out, "base", true);
    term_json_nv(out, D->s[0].total);
    jkey(out, "new", false);
    term_json_nv(out, D->s[1].total * D->scale);
    jchange(out, "delta", D->s[0].total, D->s[1].total * D->scale, false);
    nytp_out_write(out, "}", 1);

    /* the check */
    nytp_out_write(out, ",\"check\":", 9);
    if (D->o->fail_above < 0) {
        nytp_out_write(out, "null", 4);
    } else {
        nytp_out_write(out, "{", 1);
        jkey(out, "fail_above", true);
        term_json_nv(out, D->o->fail_above);
        jkey(out, "min_time", false);
        term_json_nv(out, min);
        jkey(out, "total_grew", false);
        nytp_out_printf(out, "%s", diff_total_grew(D) ? "true" : "false");
        jkey(out, "subs_grew", false);
        nytp_out_write(out, "[", 1);
        bool first = true;
        for (uint32_t i = 0; i < D->subs.n; i++) {
            uint32_t id = D->order_sub[i];
            if (!diff_sub_grew(D, &D->sub[id], min))
                continue;
            if (!first)
                nytp_out_write(out, ",", 1);
            first = false;
            term_json_str(out, strmap_str(&D->subs, id), D->subs.v[id].len);
        }
        nytp_out_write(out, "]", 1);
        jkey(out, "failed", false);
        nytp_out_printf(out, "%s}", diff_total_grew(D) || !first ? "true" : "false");
    }

    nytp_out_printf(out, ",\"rows\":{\"subs\":%u,\"lines\":%u,\"files\":%u}", D->subs.n,
                    D->lines.n, D->files.n);
    nytp_out_write(out, ",\"subs\":[", 9);
    for (size_t i = 0; i < diff_limit(D, D->subs.n); i++) {
        uint32_t id = D->order_sub[i];
        const sub_row *r = &D->sub[id];
        nytp_out_write(out, i ? ",{" : "{", i ? 2 : 1);
        jkey(out, "name", true);
        term_json_str(out, strmap_str(&D->subs, id), D->subs.v[id].len);
        jkey(out, "status", false);
        nytp_out_printf(out, "\"%s\"", status(r->present));
        for (int k = 0; k < 2; k++) {
            jkey(out, k ? "new" : "base", false);
            if (!r->present[k]) {
                nytp_out_write(out, "null", 4);
                continue;
            }
            const nytp_profile *p = D->s[k].p;
            const nytp_sub *s = &p->subs[r->sid[k]];
            nytp_out_write(out, "{", 1);
            jkey(out, "excl", true);
            term_json_nv(out, r->excl[k]);
            jkey(out, "incl", false);
            term_json_nv(out, r->incl[k]);
            jkey(out, "calls", false);
            nytp_out_printf(out, "%llu", (unsigned long long)r->calls[k]);
            jkey(out, "file", false);
            if (s->fid != NYTP_NONE && s->fid < p->n_files && p->files[s->fid].defined)
                term_json_str(out, nytp_profile_str(p, p->files[s->fid].name),
                              nytp_profile_strlen(p, p->files[s->fid].name));
            else
                nytp_out_write(out, "null", 4);
            jkey(out, "first_line", false);
            if (s->first_line == NYTP_NONE)
                nytp_out_write(out, "null", 4);
            else
                nytp_out_printf(out, "%u", s->first_line);
            nytp_out_write(out, "}", 1);
        }
        jchange(out, "excl_delta", r->excl[0], r->excl[1], false);
        jchange(out, "incl_delta", r->incl[0], r->incl[1], false);
        jkey(out, "calls_delta", false);
        nytp_out_printf(out, "%lld", (long long)(r->calls[1] - r->calls[0]));
        nytp_out_write(out, "}", 1);
    }
    nytp_out_write(out, "]", 1);
    for (int lines = 1; lines >= 0; lines--) {
        strmap *m = lines ? &D->lines : &D->files;
        time_row *rows = lines ? D->line : D->file;
        uint32_t *order = lines ? D->order_line : D->order_file;
        nytp_out_printf(out, ",\"%s\":[", lines ? "lines" : "files");
        for (size_t i = 0; i < diff_limit(D, m->n); i++) {
            const time_row *r = &rows[order[i]];
            nytp_out_write(out, i ? ",{" : "{", i ? 2 : 1);
            jkey(out, "file", true);
            if (lines) {
                term_json_str(out, strmap_str(&D->line_files, r->file), D->line_files.v[r->file].len);
                nytp_out_printf(out, ",\"line\":%u", r->line);
            } else {
                term_json_str(out, strmap_str(&D->files, order[i]), D->files.v[order[i]].len);
            }
            jkey(out, "status", false);
            nytp_out_printf(out, "\"%s\"", status(r->present));
            jkey(out, "base", false);
            term_json_nv(out, r->time[0]);
            jkey(out, "new", false);
            term_json_nv(out, r->time[1]);
            jchange(out, "delta", r->time[0], r->time[1], false);
            nytp_out_printf(out, ",\"count_base\":%lld,\"count_new\":%lld}", (long long)r->count[0],
                            (long long)r->count[1]);
        }
        nytp_out_write(out, "]", 1);
    }
    nytp_out_write(out, "}\n", 2);
}
