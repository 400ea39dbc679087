// html-browser.js REPORTDIR FILTER SEARCH [SORTSUBS [SPREAD]] — a report of 'nytp html' used as
// a person would, in Debian's headless chromium driven by playwright-core
// (tests/node_modules), from file://, no network.  Prints one JSON object
// of what it saw; tests/91-html-browser.t judges it:
//   pages     every .html page and flame.svg loaded: console errors, page
//             errors, failed requests, requests not to file: or data:;
//             with SPREAD N only one file page (f*.html) in N, the rest
//             listed in skipped (a page of a large file costs 0.2 s of
//             layout)
//   sorts     each heading of the sortable tables (class sort) of index,
//             packages (its first two tables), the page of file 1 (the
//             program) and, with SORTSUBS, subs.html (large: a second of
//             layout per sort: its first and last two headings and
//             Subroutine),
//             clicked twice: the column's values row by row after each
//             click, whether the column is numeric, aria-sort
//   filter    subs.html: FILTER typed in the filter box: the names of the
//             rows shown, and of all rows; then cleared
//   flame     flame.svg: Search clicked and SEARCH answered in its prompt:
//             the frames coloured; Reset search; a frame clicked: the
//             frames shown and where; Reset zoom; the same zoom in the
//             graph embedded in index.html
//   nav       index -> the top sub's link -> its caller's link -> back, back:
//             URLs, and whether each anchor names an element of its page
'use strict';
const fs = require('fs');
const path = require('path');
const modules = path.join(__dirname, '..', 'node_modules');
const { chromium } = require(path.join(modules, 'playwright-core'));

const [dir, filterTerm, searchTerm, sortSubs, spread] = process.argv.slice(2);
const result = { pages: {}, skipped: [], sorts: [], filter: null, flame: null, nav: null };

function watch(page, name) {
  const r = result.pages[name] = { console: [], pageErrors: [], failed: [], network: [] };
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') r.console.push(m.text()); });
  page.on('pageerror', e => r.pageErrors.push(String(e)));
  page.on('requestfailed', q => r.failed.push(q.url() + ': ' + (q.failure() || {}).errorText));
  page.on('request', q => {
    if (!q.url().startsWith('file:') && !q.url().startsWith('data:')) r.network.push(q.url());
  });
  return r;
}

// The values of a column, row by row: in a source table only the lines
// (their sub headlines and call notes move with them).
function columnValues(page, tableId, col) {
  return page.evaluate(([id, c]) => {
    const t = document.getElementById(id), src = t.classList.contains('src');
    return Array.from(t.tBodies[0].rows).filter(r => !src || r.id.charAt(0) === 'L').map(r => {
      const cell = r.cells[c];
      if (!cell) return null;
      const v = cell.getAttribute('data-v');
      return v === null ? cell.textContent : v;
    });
  }, [tableId, col]);
}

// few: only the first and last two headings and the one of names (on
// large pages each sort costs a second of layout)
async function sorts(page, name, maxTables, few) {
  const tables = await page.evaluate(n => Array.from(document.querySelectorAll('table.sort')).slice(0, n)
    .map(t => t.id), maxTables);
  for (const id of tables) {
    const ths = page.locator('#' + id + ' > thead th');
    const n = await ths.count();
    for (let i = 0; i < n; i++) {
      const th = ths.nth(i);
      const info = await th.evaluate(h => ({ col: h.cellIndex, num: h.classList.contains('n'),
        up: h.classList.contains('up'), nosort: h.classList.contains('nosort'),
        button: !!h.querySelector('button'), heading: h.textContent }));
      if (few && i > 0 && i < n - 2 && info.heading !== 'Subroutine') continue;
      const s = Object.assign({ page: name, table: id }, info);
      if (!info.nosort) {
        await th.locator('button').click();
        s.first = await columnValues(page, id, info.col);
        s.aria1 = await th.getAttribute('aria-sort');
        await th.locator('button').click();
        s.second = await columnValues(page, id, info.col);
        s.aria2 = await th.getAttribute('aria-sort');
      }
      result.sorts.push(s);
    }
  }
}

// What the flame graph in frame/page `f` shows: each frame's name, depth,
// x, width, fill and whether it is hidden or shown as a parent.
function frames(f) {
  return f.evaluate(() => Array.from(document.querySelectorAll('g.f')).map(g => {
    const r = g.querySelector('rect'), s = g.querySelector('title').textContent;
    return { name: s.substring(0, s.lastIndexOf('\n')), d: +g.getAttribute('data-d'), m: g.classList.contains('m'),
      x: +r.getAttribute('x'), w: +r.getAttribute('width'), fill: r.getAttribute('fill'),
      hidden: getComputedStyle(g).display === 'none', parent: g.classList.contains('parent') };
  }));
}

async function zoomIn(f, out) {
  // the widest frame at depth 2 (or 1): click it
  const all = await frames(f);
  let pick = -1;
  for (const depth of [2, 1]) {
    all.forEach((fr, i) => { if (fr.d === depth && !fr.m && (pick < 0 || fr.w > all[pick].w)) pick = i; });
    if (pick >= 0) break;
  }
  out.before = all;
  out.fw = await f.evaluate(() => +document.querySelector('svg').getAttribute('data-fw'));
  out.picked = pick;
  if (pick < 0) return;
  await f.locator('g.f').nth(pick).locator('rect').click();
  out.zoomed = await frames(f);
  out.unzoomShown = await f.locator('.nytp-unzoom').isVisible();
  await f.locator('.nytp-unzoom').click();
  out.unzoomed = await frames(f);
  out.unzoomHidden = !(await f.locator('.nytp-unzoom').isVisible());
}

const t0 = Date.now();
function lap(what) { if (process.env.NYTP_TIMING) process.stderr.write(what + ' ' + (Date.now() - t0) + 'ms\n'); }
(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const url = p => 'file://' + path.join(dir, p);
    const every = fs.readdirSync(dir).filter(n => /\.html$/.test(n) || n === 'flame.svg').sort();
    let fileNo = 0;
    const names = every.filter(n => !/^f\d+-/.test(n) || !(+spread > 1) || fileNo++ % +spread === 0);
    result.skipped = every.filter(n => !names.includes(n));

    // every page: loaded, four at a time
    let next = 0;
    async function worker() {
      const page = await context.newPage();
      for (;;) {
        const n = names[next++];
        if (n === undefined) break;
        const r = watch(page, n);
        try {
          await page.goto(url(n), { waitUntil: 'load', timeout: 60000 });
          r.ok = await page.evaluate(() => !!document.documentElement);
        } catch (e) { r.pageErrors.push(String(e)); }
        page.removeAllListeners('console');
        page.removeAllListeners('pageerror');
        page.removeAllListeners('requestfailed');
        page.removeAllListeners('request');
      }
      await page.close();
    }
    await Promise.all([worker(), worker(), worker(), worker()]);
    lap('pages');

    const page = await context.newPage();
    page.on('dialog', d => d.accept(searchTerm));

    // sorting
    const firstFile = names.filter(n => /^f1-.*\.html$/.test(n))[0];
    result.firstFile = firstFile;
    const list = [['index.html', 9], ['packages.html', 2], [firstFile, 9]];
    if (+sortSubs) list.push(['subs.html', 1, true]);
    for (const [p, n, few] of list) {
      if (!p) continue;
      await page.goto(url(p));
      await sorts(page, p, n, few);
      lap('sorts ' + p);
    }

    // the filter of subs.html, typed
    await page.goto(url('subs.html'));
    const names_ = () => page.evaluate(() => Array.from(document.querySelectorAll('#allsubs tbody tr'))
      .filter(r => r.getBoundingClientRect().height > 0 && !r.hidden)
      .map(r => r.querySelector('td.name').textContent));
    const all = await names_();
    await page.locator('input.filter').click();
    await page.keyboard.type(filterTerm, { delay: 5 });
    const shown = await names_();
    await page.locator('input.filter').fill('');
    result.filter = { all, shown, cleared: await names_() };
    lap('filter');

    // the flame graph: search, reset, zoom, reset zoom
    await page.goto(url('flame.svg'));
    const fl = result.flame = {};
    await page.locator('.nytp-search').click();
    fl.searched = await frames(page);
    fl.matched = await page.locator('.nytp-matched').textContent();
    fl.button = await page.locator('.nytp-search').textContent();
    await page.locator('.nytp-search').click();
    fl.reset = await frames(page);
    fl.standalone = {};
    await zoomIn(page, fl.standalone);
    lap('flame');
    // the graph embedded in the index
    await page.goto(url('index.html'));
    // (playwright's contentFrame() is for iframes: the <object>'s frame is
    // found by its URL)
    fl.object = await page.locator('object.flame').count();
    const inner = page.frames().find(f => f !== page.mainFrame() && f.url().endsWith('/flame.svg'));
    fl.embedded = {};
    if (inner) {
      await inner.waitForSelector('g.f');
      await zoomIn(inner, fl.embedded);
    }

    lap('embedded');
    // navigation: index -> a sub -> its caller -> back -> back
    const nav = result.nav = { steps: [] };
    const here = async () => page.evaluate(() => {
      const id = decodeURIComponent(location.hash.slice(1));
      return { url: location.pathname.split('/').pop() + location.hash, title: document.title,
        target: id ? !!document.getElementById(id) : null };
    });
    await page.goto(url('index.html'));
    nav.steps.push(await here());
    const subLink = page.locator('#topsubs tbody td.name a').first();
    nav.subHref = await subLink.getAttribute('href');
    await Promise.all([page.waitForURL(u => u.toString().endsWith(nav.subHref)), subLink.click()]);
    nav.steps.push(await here());
    // the caller of that sub: the first link of a "by" line of its headline
    // to a sub (#S), else to a line
    const id = nav.subHref.split('#')[1];
    const callers = page.locator('tr[id="' + id + '"] div.by a');
    const hrefs = await callers.evaluateAll(as => as.map(a => a.getAttribute('href')));
    nav.callerHrefs = hrefs;
    let k = hrefs.findIndex(h => /#S\d+$/.test(h));
    if (k < 0) k = 0;
    if (hrefs.length) {
      nav.callerHref = hrefs[k];
      await Promise.all([page.waitForURL(u => u.toString().endsWith(hrefs[k])), callers.nth(k).click()]);
      nav.steps.push(await here());
    }
    await page.goBack();
    nav.steps.push(await here());
    await page.goBack();
    nav.steps.push(await here());
    lap('nav');
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result));
})().catch(e => {
  result.fatal = String(e && e.stack || e);
  process.stdout.write(JSON.stringify(result));
  process.exitCode = 1;
});
