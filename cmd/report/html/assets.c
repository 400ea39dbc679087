/* assets.c — the style sheet and the script every page of 'nytp html'
 * loads (nytp.css, nytp.js), and their writing with the report's data
 * for the script.  Hand-written and small; no library, no CDN, so a
 * report works offline from file://. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "html.h"

const char html_css[] =
    ":root{--fg:#1d2330;--mute:#5b6475;--line:#d9dee7;--head:#eef1f6;--link:#0b57b5;--accent:#24476b}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:15px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:var(--fg);"
    "background:#fff}\n"
    "header{background:var(--accent);color:#fff;padding:.6em 1.2em .8em}\n"
    "header a{color:#cfe3ff}header h1{margin:.2em 0 .1em;font-size:1.5em;font-weight:600;"
    "word-break:break-all}\n"
    "header p{margin:.3em 0;color:#e3ebf5}header .note{color:#b9c9dc}\n"
    "nav{font-size:.9em}nav a,nav b{margin-right:1.2em}\n"
    "nav select.jump{font:inherit;max-width:28em;padding:.1em .3em;border-radius:4px;border:1px solid #8fa6c2;"
    "background:#f4f7fb;color:var(--fg)}\n"
    "main{padding:.8em 1.2em 2em}\n"
    "h2{font-size:1.15em;margin:1.4em 0 .5em;color:var(--accent)}\n"
    "a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}\n"
    ".note{color:var(--mute);font-size:.9em}\n"
    ".warn{color:#9b1c1c}p.warn{background:#fdecec;border-left:4px solid #d33;padding:.5em .8em}\n"
    /* --base: the change columns */
    "td.cmp{text-align:right;white-space:nowrap}th.cmp{background:#eef3fb}\n"
    "td.slower{color:#b91c1c;font-weight:600}td.faster{color:#15803d;font-weight:600}"
    "td.noise{color:var(--mute)}\n"
    "header a.path{color:#cfe3ff;text-decoration:underline dotted}\n"
    ".path{font-family:ui-monospace,\"DejaVu Sans Mono\",Menlo,monospace;font-size:.85em}\n"
    "dl.summary{display:grid;grid-template-columns:max-content auto;gap:.2em 1.2em;margin:.4em 0 1em}\n"
    "@media (min-width:900px){dl.summary{grid-template-columns:max-content minmax(0,1fr) max-content "
    "minmax(0,1fr);max-width:1400px}}\n"
    "dl.summary dt{font-weight:600;color:var(--mute)}dl.summary dd{margin:0}\n"
    "table{border-collapse:collapse;font-size:.9em}\n"
    "th,td{padding:.2em .6em;border:1px solid var(--line);text-align:right;vertical-align:top}\n"
    "th{background:var(--head);font-weight:600;text-align:center}\n"
    "td.name,td.views,table.subs td:last-child,table.files td:last-child{text-align:left}\n"
    "table.sort th button{all:inherit;cursor:pointer;border:0;padding:0}\n"
    "table.sort th button:focus-visible{outline:2px solid var(--link)}\n"
    "th[aria-sort=ascending] button::after{content:\" \\25B2\";font-size:.7em}\n"
    "th[aria-sort=descending] button::after{content:\" \\25BC\";font-size:.7em}\n"
    "tbody tr:hover{background:#f6f8fb}\n"
    "tfoot td{font-weight:600;background:var(--head)}\n"
    "td.bar{background:linear-gradient(90deg,#d6e4f5 var(--p),transparent var(--p))}\n"
    "input.filter{font:inherit;padding:.3em .6em;width:24em;max-width:100%;border:1px solid #b8c2d1;"
    "border-radius:4px}\n"
    ".op,.xs{font-size:.75em;padding:0 .35em;border-radius:3px;white-space:nowrap}\n"
    ".op{background:#fde7c7;color:#7a4300}.xs{background:#dcebfb;color:#0b3d73}\n"
    "details{margin:.6em 0 1em}summary{cursor:pointer;font-weight:600;color:var(--accent)}\n"
    "div.scroll{max-height:24em;overflow:auto;display:inline-block;border-bottom:1px solid var(--line)}\n"
    "div.scroll thead th{position:sticky;top:0;z-index:1}\n"
    "table.src{width:100%;font-size:.85em}\n"
    "table.src td{border:0;border-right:1px solid var(--line);padding:0 .5em;white-space:nowrap}\n"
    "table.src td:first-child{color:var(--mute)}\n"
    "table.src td:last-child{text-align:left;white-space:pre-wrap;width:100%;border-right:0;"
    "font-family:ui-monospace,\"DejaVu Sans Mono\",Menlo,monospace;tab-size:8}\n"
    "table.src th{white-space:nowrap}table.src th.code{text-align:left}\n"
    "table.src tr:target{background:#fff3b0}\n"
    "tr.sh td:last-child,tr.cn td:last-child{font-family:system-ui,sans-serif;font-size:.92em;"
    "color:#3f4a5c;white-space:normal}\n"
    "tr.sh td:last-child{background:#eef4fb;padding:.25em .6em;border-top:1px solid #c9d8ea}\n"
    "tr.sh:target td:last-child{background:#fff3b0}\n"
    "tr.sh .by{padding-left:1.5em}\n"
    "tr.cn td:last-child{padding:.05em .6em .25em 2.5em;color:#56627a}\n"
    "tr.gap td{color:var(--mute);text-align:center}\n"
    ".h1{background:#fff8e1}.h2{background:#ffecb3}.h3{background:#ffd180}.h4{background:#ffab6e}"
    ".h5{background:#ff7f66}\n"
    "svg.treemap{display:block;width:100%;max-width:1400px;height:auto;border:1px solid var(--line);"
    "background:#fff}\n"
    "svg.treemap rect{stroke:#fff;stroke-width:1}svg.treemap rect.sb{stroke:rgba(0,0,0,.25);stroke-width:.5}\n"
    "svg.treemap a:hover rect.sb,svg.treemap a:focus rect.sb{fill:#fff3b0}\n"
    "svg.treemap text{font:12px system-ui,sans-serif;fill:#1d2330;pointer-events:none}\n"
    "svg.treemap text.ph{font-weight:600}\n"
    "section.pkg h2 .note{font-weight:400}\n"
    "div.dist{display:flex;align-items:flex-end;gap:.6em;margin:.1em 0 .2em 1.5em}\n"
    "svg.hist rect{fill:#6d8fb8}svg.hist line{stroke:#9fb3cc}div.dist .pct{font-size:.9em;color:#3f4a5c}\n"
    "p.lead{font-size:1.1em;margin:.2em 0 .8em;padding:.5em .8em;background:#f4f7fb;border-left:4px solid "
    "var(--accent)}\n"
    "button.cgb{font:inherit;font-size:.8em;margin-left:.8em;padding:0 .5em;border:1px solid #9fb3cc;"
    "border-radius:3px;background:#fff;color:var(--link);cursor:pointer}\n"
    "div.cgbox{overflow-x:auto;margin:.3em 0 .4em}\n"
    "svg.cg{display:block;max-width:100%;height:auto;font:12px system-ui,sans-serif}\n"
    "svg.cg path{fill:none;stroke:#8fa6c2;opacity:.8}svg.cg path:hover{stroke:#0b57b5;opacity:1}\n"
    "svg.cg .n rect{fill:#eef4fb;stroke:#9fb3cc}svg.cg a.n:hover rect{fill:#fff3b0}\n"
    "svg.cg .me rect{fill:#ffd180;stroke:#c77800}svg.cg .more rect{fill:#f3f3f3;stroke-dasharray:3 2}\n"
    "svg.cg text{fill:#1d2330}svg.cg text.v{fill:#5b6475}svg.cg text.h{fill:#5b6475;font-style:italic}\n"
    "object.flame{display:block;width:100%;max-width:1400px;border:1px solid var(--line)}\n"
    "footer{color:var(--mute);font-size:.8em;padding:1em 1.2em;border-top:1px solid var(--line)}\n";

/* Sortable tables: a heading of a table of class "sort" becomes a button
 * (unless of class nosort); clicking it (or Enter/Space on it) sorts the
 * body by that column, numbers by a cell's data-v (exact value) or its text
 * (durations such as 1.23ms understood), first descending for numeric
 * columns (class n) unless also of class up.  Rows keep their order among
 * equals.  In a source table (class src) a line moves with the sub
 * headlines above it and the call notes below it.  An input of class
 * filter hides the rows of its data-table whose name cell lacks its text. */
const char html_js[] =
    "(function () {\n"
    "  \"use strict\";\n"
    "  // A shown duration (\"1.23ms\") in seconds, or NaN.\n"
    "  var units = { ns: 1e-9, \"\\u00b5s\": 1e-6, ms: 1e-3, s: 1 };\n"
    "  function seconds(t) {\n"
    "    var m = /^(-?[0-9.]+(?:e[-+]?[0-9]+)?)(ns|\\u00b5s|ms|s)$/.exec(t.trim());\n"
    "    return m ? parseFloat(m[1]) * units[m[2]] : NaN;\n"
    "  }\n"
    "  function key(row, col, num) {\n"
    "    var c = row.cells[col];\n"
    "    if (!c) return num ? -Infinity : \"\";\n"
    "    var v = c.getAttribute(\"data-v\");\n"
    "    if (v === null) v = c.textContent;\n"
    "    if (!num) return v.toLowerCase();\n"
    "    var x = parseFloat(v), d = seconds(v);\n"
    "    x = isNaN(d) ? x : d;\n"
    "    return isNaN(x) ? -Infinity : x;\n"
    "  }\n"
    "  // The units that move together: a row, or in a source table a line\n"
    "  // with the sub headlines above it and the call notes below it.\n"
    "  function units_of(body, lines) {\n"
    "    var all = [], cur = null;\n"
    "    Array.prototype.forEach.call(body.rows, function (r) {\n"
    "      if (!lines) { all.push({ main: r, rows: [r] }); return; }\n"
    "      var line = r.id.charAt(0) === \"L\";\n"
    "      if (!cur || (cur.main && (line || r.className === \"sh\"))) {\n"
    "        cur = { main: null, rows: [] };\n"
    "        all.push(cur);\n"
    "      }\n"
    "      cur.rows.push(r);\n"
    "      if (line) cur.main = r;\n"
    "    });\n"
    "    return all;\n"
    "  }\n"
    "  function sortBy(th) {\n"
    "    var table = th.closest(\"table\"), body = table.tBodies[0];\n"
    "    var col = th.cellIndex, num = th.classList.contains(\"n\");\n"
    "    var was = th.getAttribute(\"aria-sort\");\n"
    "    var dir = was === \"descending\" ? 1 : was === \"ascending\" ? -1 :\n"
    "      (num && !th.classList.contains(\"up\") ? -1 : 1);\n"
    "    var list = units_of(body, table.classList.contains(\"src\")).map(function (u, i) {\n"
    "      return [u.main ? key(u.main, col, num) : (num ? -Infinity : \"\"), i, u];\n"
    "    });\n"
    "    list.sort(function (a, b) {\n"
    "      return a[0] < b[0] ? -dir : a[0] > b[0] ? dir : a[1] - b[1];\n"
    "    });\n"
    "    var frag = document.createDocumentFragment();\n"
    "    list.forEach(function (e) {\n"
    "      e[2].rows.forEach(function (r) { frag.appendChild(r); });\n"
    "    });\n"
    "    body.appendChild(frag);\n"
    "    Array.prototype.forEach.call(th.parentNode.cells, function (h) {\n"
    "      h.removeAttribute(\"aria-sort\");\n"
    "    });\n"
    "    th.setAttribute(\"aria-sort\", dir > 0 ? \"ascending\" : \"descending\");\n"
    "  }\n"
    "  document.querySelectorAll(\"input.filter\").forEach(function (input) {\n"
    "    var table = document.getElementById(input.getAttribute(\"data-table\"));\n"
    "    if (!table) return;\n"
    "    input.addEventListener(\"input\", function () {\n"
    "      var q = input.value.toLowerCase();\n"
    "      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {\n"
    "        var c = r.querySelector(\"td.name\");\n"
    "        r.hidden = !!q && !!c && c.textContent.toLowerCase().indexOf(q) < 0;\n"
    "      });\n"
    "    });\n"
    "  });\n"
    "  // The jump-to-file menu in the navigation bar of every page, from the\n"
    "  // list of files (nytpFiles, [page, name]) at the top of this script.\n"
    "  var nav = document.querySelector(\"nav\");\n"
    "  if (nav && window.nytpFiles && window.nytpFiles.length) {\n"
    "    var sel = document.createElement(\"select\"), here = location.pathname.split(\"/\").pop();\n"
    "    sel.className = \"jump\";\n"
    "    sel.setAttribute(\"aria-label\", \"Jump to file\");\n"
    "    var first = document.createElement(\"option\");\n"
    "    first.value = \"\";\n"
    "    first.textContent = \"Jump to file\\u2026\";\n"
    "    sel.appendChild(first);\n"
    "    window.nytpFiles.forEach(function (f) {\n"
    "      var o = document.createElement(\"option\");\n"
    "      o.value = f[0];\n"
    "      o.textContent = f[1];\n"
    "      if (f[0] === here) o.selected = true;\n"
    "      sel.appendChild(o);\n"
    "    });\n"
    "    sel.addEventListener(\"change\", function () {\n"
    "      if (sel.value) location.href = sel.value;\n"
    "    });\n"
    "    nav.appendChild(sel);\n"
    "  }\n"
    "  // Call graphs: a button on each sub headline draws its callers (left)\n"
    "  // and the subs it called (right) as SVG, from nytpSubs ([name, url] by\n"
    "  // sub id) and nytpEdges ([caller, called, calls, inclusive seconds]).\n"
    "  // Names are set as text, never parsed as markup.\n"
    "  var subs = window.nytpSubs, edges = window.nytpEdges;\n"
    "  var NS = \"http://www.w3.org/2000/svg\";\n"
    "  function dur(s) {\n"
    "    if (!(s > 0)) return \"0s\";\n"
    "    var u = s >= 1 ? [1, \"s\"] : s >= 1e-3 ? [1e-3, \"ms\"] : s >= 1e-6 ? [1e-6, \"\\u00b5s\"] : [1e-9, \"ns\"];\n"
    "    var v = s / u[0];\n"
    "    return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + u[1];\n"
    "  }\n"
    "  function el(name, attrs, parent) {\n"
    "    var e = document.createElementNS(NS, name);\n"
    "    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });\n"
    "    if (parent) parent.appendChild(e);\n"
    "    return e;\n"
    "  }\n"
    "  function cut(s, n) { return s.length > n ? s.slice(0, n - 1) + \"\\u2026\" : s; }\n"
    "  // a count and its word; nothing for null (a sampled profile: not known)\n"
    "  function cnt(c, one, many) { return c === null ? \"\" : c + (c === 1 ? one : many); }\n"
    "  function callGraph(sid, ins, outs) {\n"
    "    var MAX = 12, W = 980, NW = 300, NH = 22, GAP = 6;\n"
    "    function side(list) {\n"
    "      var l = (list || []).filter(function (e) { return e[0] !== e[1]; });\n"
    "      l.sort(function (a, b) { return b[3] - a[3] || b[2] - a[2]; });\n"
    "      return l.length > MAX ? { list: l.slice(0, MAX - 1), more: l.slice(MAX - 1) } : { list: l, more: [] };\n"
    "    }\n"
    "    var left = side(ins[sid]), right = side(outs[sid]);\n"
    "    var nl = left.list.length + (left.more.length ? 1 : 0), nr = right.list.length + (right.more.length ? 1 : 0);\n"
    "    var H = Math.max(nl, nr, 1) * (NH + GAP) + GAP + 16;\n"
    "    var svg = el(\"svg\", { \"class\": \"cg\", viewBox: \"0 0 \" + W + \" \" + H, width: W, height: H });\n"
    "    var max = 0;\n"
    "    left.list.concat(right.list).forEach(function (e) { if (e[3] > max) max = e[3]; });\n"
    "    var midX = (W - NW) / 2, midY = (H + 16 - NH) / 2;\n"    "    // boxes of the sub's own package show the name without it\n"
    "    var pkg = (/^(.*::)[^:]+$/.exec(subs[sid][0].split(\"[\")[0]) || [\"\", \"\"])[1];\n"
    "    [[\"callers\", 0, \"start\"], [\"called\", W, \"end\"]].forEach(function (h) {\n"
    "      el(\"text\", { x: h[1], y: 12, \"class\": \"h\", \"text-anchor\": h[2] }, svg).textContent = h[0];\n"
    "    });\n"
    "    function node(x, y, id, name, nums, title, cls) {\n"
    "      var g = el(id === null ? \"g\" : \"a\", id === null ? {} : { href: subs[id][1], \"data-sid\": id }, svg);\n"
    "      g.setAttribute(\"class\", cls);\n"
    "      el(\"rect\", { x: x, y: y, width: NW, height: NH, rx: 4 }, g);\n"
    "      if (cls !== \"n me\" && pkg && name.indexOf(pkg) === 0 && name.length > pkg.length) name = name.slice(pkg.length);\n"
    "      el(\"text\", { x: x + 6, y: y + 15 }, g).textContent = cut(name, nums ? 30 : 44);\n"
    "      if (nums) el(\"text\", { x: x + NW - 6, y: y + 15, \"text-anchor\": \"end\", \"class\": \"v\" }, g).textContent = nums;\n"
    "      el(\"title\", {}, g).textContent = title;\n"
    "    }\n"
    "    function edge(x1, y1, x2, y2, e) {\n"
    "      var mx = (x1 + x2) / 2;\n"
    "      var p = el(\"path\", { d: \"M\" + x1 + \",\" + y1 + \" C\" + mx + \",\" + y1 + \" \" + mx + \",\" + y2 + \" \" + x2 + \",\" + y2,\n"
    "        \"stroke-width\": (max > 0 ? 1 + 5 * e[3] / max : 1).toFixed(1) }, svg);\n"
    "      el(\"title\", {}, p).textContent = subs[e[0]][0] + \" \\u2192 \" + subs[e[1]][0] + \": \" +\n"
    "        cnt(e[2], \" call, \", \" calls, \") + dur(e[3]);\n"
    "    }\n"
    "    function column(s, x, isLeft) {\n"
    "      var n = s.list.length + (s.more.length ? 1 : 0), y0 = 16 + (H - 16 - n * (NH + GAP) + GAP) / 2;\n"
    "      s.list.forEach(function (e, i) {\n"
    "        var y = y0 + i * (NH + GAP), other = isLeft ? e[0] : e[1];\n"
    "        if (isLeft) edge(x + NW, y + NH / 2, midX, midY + NH / 2, e);\n"
    "        else edge(midX + NW, midY + NH / 2, x, y + NH / 2, e);\n"
    "        node(x, y, other, subs[other][0], cnt(e[2], \"\\u00d7 \", \"\\u00d7 \") + dur(e[3]),\n"
    "          subs[other][0] + \": \" + cnt(e[2], \" call, \", \" calls, \") + dur(e[3]), \"n \" + (isLeft ? \"in\" : \"out\"));\n"
    "      });\n"
    "      if (s.more.length) {\n"
    "        var calls = 0, t = 0;\n"
    "        s.more.forEach(function (e) { calls = calls === null || e[2] === null ? null : calls + e[2]; t += e[3]; });\n"
    "        node(x, y0 + s.list.length * (NH + GAP), null, \"and \" + s.more.length + \" more\", cnt(calls, \"\\u00d7 \", \"\\u00d7 \") + dur(t),\n"
    "          s.more.map(function (e) { return subs[isLeft ? e[0] : e[1]][0]; }).join(\"\\n\"), \"n more\");\n"
    "      }\n"
    "    }\n"
    "    column(left, 0, true);\n"
    "    column(right, W - NW, false);\n"
    "    var self = (outs[sid] || []).filter(function (e) { return e[1] === sid; })[0];\n"
    "    node(midX, midY, null, subs[sid][0], self ? \"+\" + cnt(self[2], \"\\u00d7 \", \"\\u00d7 \") + \"itself\" : \"\",\n"
    "      subs[sid][0] + (self ? \": calls itself\" + (self[2] === null ? \"\" : \" \" + cnt(self[2], \" time\", \" times\")) : \"\"), \"n me\");\n"
    "    return svg;\n"
    "  }\n"
    "  var heads = document.querySelectorAll(\"tr.sh\");\n"
    "  if (heads.length && subs && edges) {\n"
    "    var ins = {}, outs = {};\n"
    "    edges.forEach(function (e) {\n"
    "      (outs[e[0]] = outs[e[0]] || []).push(e);\n"
    "      (ins[e[1]] = ins[e[1]] || []).push(e);\n"
    "    });\n"
    "    Array.prototype.forEach.call(heads, function (tr) {\n"
    "      var sid = +tr.id.slice(1), cell = tr.cells[tr.cells.length - 1], box = null;\n"
    "      var others = (ins[sid] || []).concat(outs[sid] || []).filter(function (e) { return e[0] !== e[1]; });\n"
    "      if (!subs[sid] || !others.length) return;\n"
    "      var b = document.createElement(\"button\");\n"
    "      b.type = \"button\";\n"
    "      b.className = \"cgb\";\n"
    "      b.textContent = \"call graph\";\n"
    "      b.setAttribute(\"aria-expanded\", \"false\");\n"
    "      b.addEventListener(\"click\", function () {\n"
    "        if (!box) {\n"
    "          box = document.createElement(\"div\");\n"
    "          box.className = \"cgbox\";\n"
    "          box.appendChild(callGraph(sid, ins, outs));\n"
    "          cell.insertBefore(box, cell.children[1] || null);\n"
    "        } else box.hidden = !box.hidden;\n"
    "        b.setAttribute(\"aria-expanded\", box.hidden ? \"false\" : \"true\");\n"
    "      });\n"
    "      cell.firstChild.appendChild(b);\n"
    "    });\n"
    "  }\n"
    "  document.querySelectorAll(\"table.sort thead th\").forEach(function (th) {\n"
    "    if (th.classList.contains(\"nosort\")) return;\n"
    "    var b = document.createElement(\"button\");\n"
    "    b.type = \"button\";\n"
    "    while (th.firstChild) b.appendChild(th.firstChild);\n"
    "    th.appendChild(b);\n"
    "    b.addEventListener(\"click\", function () { sortBy(th); });\n"
    "  });\n"
    "})();\n";

/* ---- assets ---------------------------------------------------------------------- */

static int write_asset(html_report *r, const char *name, const char *text)
{
    hw w;
    if (!html_page_open(r, &w, name))
        return EXIT_BAD_INPUT;
    hw_s(&w, text);
    return html_page_close(r, &w, name);
}

static int cmp_files_shown(const void *a, const void *b, void *ctx)
{
    const html_report *r = ctx;
    return strcmp(r->shown[*(const uint32_t *)a], r->shown[*(const uint32_t *)b]);
}

/* nytp.js: the source files for the jump-to-file menu of every page (by
 * name; string evals are reached from their files), then the script. */
static int write_script(html_report *r)
{
    const nytp_profile *p = r->p;
    hw w;
    if (!html_page_open(r, &w, "nytp.js"))
        return EXIT_BAD_INPUT;
    uint32_t *fids = malloc(((size_t)p->n_files + 1) * sizeof *fids), n = 0;
    if (!fids)
        w.err = NYTP_E_NOMEM;
    for (uint32_t fid = 1; fids && fid < p->n_files; fid++)
        if (r->page[fid] && !p->files[fid].eval_fid)
            fids[n++] = fid;
    if (fids)
        qsort_r(fids, n, sizeof *fids, cmp_files_shown, r);
    hw_s(&w, "var nytpFiles = ");
    json j;
    json_init(&j, w.out);
    json_array(&j);
    for (uint32_t i = 0; i < n; i++) {
        json_break(&j, "\n");
        json_array(&j);
        json_cstr(&j, r->page[fids[i]]);
        json_cstr(&j, r->shown[fids[i]]);
        json_end(&j);
    }
    json_end(&j);
    hw_s(&w, ";\n");
    html_callgraph_script(r, &w);
    hw_s(&w, html_js);
    free(fids);
    return html_page_close(r, &w, "nytp.js");
}

int html_write_assets(html_report *r)
{
    int rc = write_asset(r, "nytp.css", html_css);
    if (rc == EXIT_OK)
        rc = write_script(r);
    return rc;
}
