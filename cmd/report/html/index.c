/* index.c — the report's front pages in 'nytp html': index.html (the
 * summary of the run, with --base what it is compared with, the files by
 * time, the subs, the packages) and subs.html (every sub).  Uses write.c's primitives and the packages'
 * and call graph's sections. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fmt.h"
#include "html.h"

/* ---- index ------------------------------------------------------------------- */

static void dt(hw *w, const char *term)
{
    hw_s(w, "<dt>");
    hw_s(w, term);
    hw_s(w, "<dd>");
}

static void attr_text(html_report *r, hw *w, const char *key, const char *missing)
{
    const char *v = nytp_profile_attr(r->p, key);
    if (v)
        hw_esc(w, v, strlen(v));
    else
        hw_s(w, missing);
}

static int cmp_files_time(const void *a, const void *b, void *ctx)
{
    const html_report *r = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (r->all_time[x] != r->all_time[y])
        return r->all_time[x] > r->all_time[y] ? -1 : 1;
    return strcmp(r->shown[x], r->shown[y]);
}

static void summary(html_report *r, hw *w)
{
    const nytp_profile *p = r->p;
    hw_s(w, "<dl class=summary>");
    if (r->view_line) {
        /* first: every number below is of the view */
        dt(w, "View");
        hw_esc(w, r->view_line, strlen(r->view_line));
        hw_s(w, " <span class=note>(subs, packages, treemap, flame graph, call graphs and the calls on "
                "each line show the call stacks left; a line's share of calls that its sub makes from "
                "several lines is estimated, and each page says where call durations are the whole "
                "profile's)</span>");
    }
    dt(w, "Program");
    attr_text(r, w, "application", "(unknown)");
    const char *xs = nytp_profile_attr(p, "xs_version");
    if (r->source == SOURCE_DPROF) {
        /* a tmon.out converted: DProf records no perl version */
        dt(w, "Profiler");
        hw_s(w, "Devel::DProf");
        if (xs && strncmp(xs, "DProf", 5) == 0 && xs[5] == ' ' && xs[6]) {
            hw_s(w, " ");
            hw_esc(w, xs + 6, strlen(xs + 6));
        }
        hw_s(w, " <span class=note>(its tmon.out converted by nytp dprof-convert; DProf records "
                "no statements or lines)</span>");
    } else {
        dt(w, "Perl");
        attr_text(r, w, "perl_version", "?");
        hw_s(w, r->source == SOURCE_NYTP ? ", Devel::NYTP " : ", Devel::NYTProf ");
        attr_text(r, w, "xs_version", "?");
    }
    dt(w, "Run at");
    const char *bt = nytp_profile_attr(p, "basetime");
    double st = p->profiler_start_time; /* from the profile: may be anything */
    time_t t = bt ? (time_t)strtoll(bt, NULL, 10) : st > -1e15 && st < 1e15 ? (time_t)st : 0;
    char when[96];
    html_time_of_day(t, when, sizeof when);
    hw_esc(w, when, strlen(when));
    /* Several processes (a program that forks, or several runs): their
     * times add up, which is not how long anything took; the span from
     * the first start to the last end is. */
    uint32_t nproc = p->n_procs;
    double first = INFINITY, last = -INFINITY;
    for (uint32_t i = 0; i < p->n_procs; i++) {
        const nytp_process *pr = &p->procs[i];
        if (!isfinite(pr->start))
            continue;
        first = fmin(first, pr->start);
        last = fmax(last, pr->ended && isfinite(pr->end) ? pr->end : pr->start);
    }
    dt(w, "Wall time");
    hw_dur(w, p->profiler_duration);
    if (nproc > 1) {
        hw_s(w, " summed over ");
        hw_u(w, nproc);
        hw_s(w, " processes");
        if (last >= first) {
            hw_s(w, "; ");
            hw_dur(w, last - first);
            hw_s(w, " from the first one's start to the last one's end");
        }
    }
    dt(w, "Profiler active");
    hw_dur(w, r->active);
    hw_s(w, nproc > 1 ? " <span class=note>(wall time less the profiler's own overhead, summed over the "
                        "processes)</span>"
                      : " <span class=note>(wall time less the profiler's own overhead)</span>");
    char note[160];
    bool sampled = cli_sampled_note(p, note, sizeof note) != NULL;
    if (sampled) {
        /* times are estimates, counts are not known: none are shown */
        dt(w, "Sampled");
        hw_esc(w, note, strlen(note));
        hw_s(w, " <span class=note>(times are estimated from samples of the running line and "
                "sub stack; how often statements ran and subs were called is not known, so "
                "counts show as ?)</span>");
    }
    dt(w, "Statements");
    if (!sampled) {
        hw_count(w, p->total_stmts_measured - p->total_stmts_discounted);
        hw_s(w, " executed in ");
    }
    hw_dur(w, p->total_stmts_duration);
    dt(w, "Subroutines");
    uint32_t called = 0;
    for (uint32_t i = 0; i < p->n_subs; i++)
        called += p->subs[i].calls > 0;
    hw_count(w, p->n_subs);
    hw_s(w, " (");
    hw_count(w, called);
    if (sampled) {
        hw_s(w, " seen running)");
    } else {
        hw_s(w, " called), ");
        hw_count(w, p->total_sub_calls);
        hw_s(w, " calls");
    }
    dt(w, "Source files");
    hw_u(w, r->n_source_files);
    hw_s(w, ", ");
    hw_u(w, r->n_evals);
    hw_s(w, " string evals");
    if (r->n_empty_files) {
        hw_s(w, "; ");
        hw_count(w, r->n_empty_files);
        hw_s(w, r->n_empty_files == 1 ? " more file with no data (no page)" : " more files with no data (no pages)");
    }
    dt(w, "Processes");
    hw_u(w, p->n_procs);
    for (uint32_t i = 0; i < p->n_procs && i < 20; i++) {
        hw_s(w, i ? ", " : ": ");
        hw_s(w, "pid ");
        hw_u(w, p->procs[i].pid);
        if (p->procs[i].ppid) {
            hw_s(w, " (parent ");
            hw_u(w, p->procs[i].ppid);
            hw_s(w, ")");
        }
    }
    if (p->n_procs > 20)
        hw_s(w, ", \xE2\x80\xA6");
    if (p->n_inputs > 1) {
        hw_s(w, " from ");
        hw_u(w, p->n_inputs);
        hw_s(w, " profile files");
    }
    if (r->cmp) {
        /* --base: what this profile is compared with */
        const comparison *C = &r->cmp->C;
        dt(w, "Compared with");
        for (int i = 0; i < r->cmp->n_base; i++) {
            if (i)
                hw_s(w, ", ");
            hw_s(w, "<code>");
            hw_esc(w, r->cmp->base[i], strlen(r->cmp->base[i]));
            hw_s(w, "</code>");
        }
        hw_s(w, " <span class=note>(BASE: ");
        html_runs(w, C->s[0].n);
        hw_s(w, "; this profile: ");
        html_runs(w, C->s[1].n);
        size_t paired = pathmap_paired(C->paths);
        if (paired) {
            hw_s(w, "; ");
            hw_u(w, paired);
            hw_s(w, paired == 1 ? " file matched by its path's end" : " files matched by their path's end");
        }
        hw_s(w, ")</span>");
        if (r->cmp->sampled[0] || r->cmp->sampled[1]) {
            /* times measured two ways, or both estimated: said where the
             * comparison is, not only on the profile's own line */
            dt(w, "Sampled");
            for (int k = 0; k < 2; k++) {
                if (!r->cmp->sampled[k])
                    continue;
                hw_s(w, "<strong class=warn>");
                hw_s(w, k ? "this profile" : "BASE");
                hw_s(w, "</strong>: ");
                hw_esc(w, r->cmp->sampled_note[k], strlen(r->cmp->sampled_note[k]));
                hw_s(w, k || !r->cmp->sampled[1] ? "" : "; ");
            }
            if (r->cmp->sampled[0] != r->cmp->sampled[1])
                hw_s(w, r->cmp->sampled[0] ? "; this profile traced" : "; BASE traced");
            hw_s(w, " <span class=note>(sampled times are estimates, and xsubs have none of "
                    "their own there: their callers have it)</span>");
        }
        dt(w, "Total change");
        const cmp_row *tot = &C->total;
        enum cmp_q q = html_q(r);
        for (int k = 0; k < 2; k++) {
            if (q == CMP_TIME)
                hw_dur(w, tot->centre[k][q]);
            else
                hw_nv(w, tot->centre[k][q]);
            if (!k)
                hw_s(w, " \xE2\x86\x92 ");
        }
        hw_s(w, " (");
        html_change_words(r, w, tot, q);
        hw_s(w, ")");
        hw_s(w, q != CMP_TIME         ? (q == CMP_STMTS ? " <span class=note>statements executed</span>"
                                                        : " <span class=note>calls</span>")
                : C->total_is_stmts ? " <span class=note>statement time</span>"
                                    : " <span class=note>time in subs</span>");
    }
    dt(w, "Complete");
    hw_s(w, p->complete ? "yes"
                        : "<strong class=warn>no</strong> \xE2\x80\x94 the profile was cut short "
                          "(the process died or is still running); what came before the cut is shown");
    hw_s(w, "</dl>\n");
}

int html_write_index(html_report *r)
{
    const nytp_profile *p = r->p;
    hw w;
    if (!html_page_open(r, &w, "index.html"))
        return EXIT_BAD_INPUT;
    const char *app = nytp_profile_attr(p, "application");
    if (!app)
        app = "profile";
    html_page_head(&w, app, strlen(app));
    hw_s(&w, "<header>");
    html_nav(r, &w, "index");
    hw_s(&w, "<h1>Profile of ");
    hw_esc(&w, app, strlen(app));
    hw_s(&w, "</h1></header>\n<main>\n");
    html_index_lead(r, &w);
    summary(r, &w);
    if (r->flame) {
        hw_s(&w, "<section id=flame><h2>Flame graph</h2><p class=note>Each box is a sub called along "
                 "one call path; its width is the time spent in it and in what it called, the boxes "
                 "above it are the subs it called. Click a box to zoom in, click it again (or "
                 "Ctrl-click) to open that sub; Ctrl-F in the graph searches.</p>");
        if (r->flame_sites)
            hw_s(&w, "<p class=note>The profile has no sub return events (it was made with calls=0): "
                     "the graph shows the caller;called paths of its call-site data, not whole "
                     "call stacks.</p>");
        hw_s(&w, "<object data=flame.svg type=\"image/svg+xml\" class=flame style=\"max-width:");
        hw_u(&w, r->flame_w);
        hw_s(&w, "px;aspect-ratio:");
        hw_u(&w, r->flame_w);
        hw_s(&w, "/");
        hw_u(&w, r->flame_h ? r->flame_h : r->flame_w / 4);
        hw_s(&w, "\"><a href=flame.svg>flame graph</a></object></section>\n");
    }

    if (r->flame_empty)
        hw_s(&w, "<p class=note>No flame graph: the profile has no sub return events and no "
                 "call-site data (it was made with subs=0).</p>\n");
    uint32_t top = p->n_subs < 25 ? p->n_subs : 25;
    hw_s(&w, "<section><h2>Top subroutines by exclusive time</h2>\n");
    html_change_note(r, &w);
    html_subs_table(r, &w, r->by_excl, top, false, "topsubs");
    if (r->dot)
        hw_s(&w, "<p class=note>Graphviz call graphs (--dot): <a href=packages-callgraph.dot>between "
                 "packages</a>, <a href=subs-callgraph.dot>between all subs</a>; each file page links "
                 "its own.</p>\n");
    hw_s(&w, "<p><a href=subs.html>Show all ");
    hw_u(&w, p->n_subs);
    hw_s(&w, " subroutines</a></p></section>\n");
    html_packages_section(r, &w);

    /* source files */
    uint32_t *fids = malloc((p->n_files + 1) * sizeof *fids);
    if (!fids) {
        w.err = NYTP_E_NOMEM;
        return html_page_close(r, &w, "index.html");
    }
    uint32_t nf = 0;
    double total = 0;
    int64_t stmts = 0;
    for (uint32_t fid = 1; fid < p->n_files; fid++)
        if (r->page[fid] && !p->files[fid].eval_fid) {
            fids[nf++] = fid;
            total += r->all_time[fid];
            stmts += r->all_stmts[fid];
        }
    qsort_r(fids, nf, sizeof *fids, cmp_files_time, r);
    hw_s(&w, "<section><h2>Source files</h2>\n<table class=\"sort files\" id=files><thead><tr>"
             "<th class=n title=\"statements executed\">Statements");
    html_sum_label(r, &w);
    hw_s(&w, "<th class=n title=\"time executing statements on its lines and in its string evals\">Time");
    html_sum_label(r, &w);
    hw_s(&w, "<th class=n title=\"share of all statement time\">%"
             "<th class=n title=\"time per statement\">Per statement"
             "<th class=n title=\"subroutines defined in it\">Subs"
             "<th>Reports<th>File");
    html_change_heads(r, &w, html_q_words(r, "statement time"));
    hw_s(&w, "</thead>\n<tbody>\n");
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t fid = fids[i];
        const nytp_file *f = &p->files[fid];
        hw_s(&w, "<tr data-fid=");
        hw_u(&w, fid);
        if (p->counts_unknown) {
            hw_s(&w, ">");
            html_td_count(&w, p, 0);
        } else {
            hw_s(&w, "><td data-v=");
            hw_u(&w, (uint64_t)r->all_stmts[fid]);
            hw_s(&w, ">");
            hw_u(&w, (uint64_t)r->all_stmts[fid]);
        }
        html_td_dur(&w, r->all_time[fid]);
        hw_s(&w, "<td>");
        hw_pct(&w, r->all_time[fid], total);
        if (p->counts_unknown)
            html_td_count(&w, p, 0);
        else
            html_td_dur(&w, r->all_stmts[fid] ? r->all_time[fid] / (double)r->all_stmts[fid] : 0);
        uint32_t defined = 0; /* not the xsubs and opcodes only listed with it */
        for (uint32_t k = 0; k < f->n_subs; k++)
            defined += html_sub_defined_here(p, &p->subs[f->subs[k]]);
        html_td_u(&w, defined);
        hw_s(&w, "<td class=views><a href=\"");
        hw_s(&w, r->page[fid]);
        hw_s(&w, "\">line</a>");
        if (p->has_blocks && !r->minimal) {
            char name[96];
            for (int v = VIEW_BLOCK; v <= VIEW_SUB; v++) {
                html_page_name(r, fid, (enum html_view)v, name);
                hw_s(&w, " <a href=\"");
                hw_s(&w, name);
                hw_s(&w, v == VIEW_BLOCK ? "\">block</a>" : "\">sub</a>");
            }
        }
        hw_s(&w, "<td class=name>");
        html_file_link(r, &w, fid);
        uint32_t ne = 0;
        for (uint32_t k = 0; k < f->n_evals; k++)
            ne += 1 + p->files[f->evals[k]].merged_evals;
        if (ne) {
            hw_s(&w, " <span class=note>(with ");
            hw_u(&w, ne);
            hw_s(&w, ne == 1 ? " string eval)</span>" : " string evals)</span>");
        }
        html_change_cells(r, &w, html_cmp_file(r, fid), html_q(r));
        hw_s(&w, "\n");
    }
    hw_s(&w, "</tbody><tfoot><tr><td>");
    hw_u(&w, (uint64_t)stmts);
    hw_s(&w, "<td>");
    hw_dur(&w, total);
    hw_s(&w, "<td>100%<td>");
    hw_dur(&w, stmts ? total / (double)stmts : 0);
    hw_s(&w, "<td><td><td>Total");
    if (r->cmp)
        html_change_cells(r, &w, &r->cmp->C.total, html_q(r));
    hw_s(&w, "</tfoot></table></section>\n</main>\n");
    free(fids);
    html_page_foot(&w);
    return html_page_close(r, &w, "index.html");
}

int html_write_subs(html_report *r)
{
    hw w;
    if (!html_page_open(r, &w, "subs.html"))
        return EXIT_BAD_INPUT;
    static const char title[] = "All subroutines";
    html_page_head(&w, title, sizeof title - 1);
    hw_s(&w, "<header>");
    html_nav(r, &w, "subs");
    hw_s(&w, "<h1>All ");
    hw_u(&w, r->p->n_subs);
    hw_s(&w, " subroutines</h1><p class=note>Sorted by exclusive time. P: places called from; F: files "
             "called from. <span class=op>opcode</span> marks perl opcodes profiled as subs (slowops), "
             "<span class=xs>xsub</span> subs written in C.</p></header>\n<main>\n"
             "<p><input type=search class=filter data-table=allsubs placeholder=\"Filter by name\" "
             "aria-label=\"Show only the subroutines whose name contains\"></p>\n");
    html_change_note(r, &w);
    html_subs_table(r, &w, r->by_excl, r->p->n_subs, true, "allsubs");
    hw_s(&w, "</main>\n");
    html_page_foot(&w);
    return html_page_close(r, &w, "subs.html");
}
