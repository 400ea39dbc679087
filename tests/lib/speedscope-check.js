// speedscope-check.js FILE OUTDIR — what speedscope (the npm package, in
// tests/node_modules) makes of a speedscope file written by nytp:
//   1. the file validated against the schema the package ships
//      (dist/release/file-format-schema.json), with ajv;
//   2. the file opened in speedscope itself, from its installed files, in
//      Debian's headless chromium driven by playwright-core, no network:
//      console errors and page errors, the profile name it shows, the
//      sandwich view's symbol names, and the profile as speedscope exports
//      it again (Export button: its own reading of our file, to compare
//      totals with).
// Prints one JSON object on stdout.
'use strict';
const fs = require('fs');
const path = require('path');
const modules = path.join(__dirname, '..', 'node_modules');
const Ajv = require(path.join(modules, 'ajv'));
const { chromium } = require(path.join(modules, 'playwright-core'));

const [file, outdir] = process.argv.slice(2);
const release = path.join(modules, 'speedscope', 'dist', 'release');
const result = { schemaErrors: null, consoleErrors: [], pageErrors: [], requests: [] };

(async () => {
  const schema = JSON.parse(fs.readFileSync(path.join(release, 'file-format-schema.json'), 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validate = ajv.compile(schema);
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  result.schemaErrors = validate(data) ? [] : validate.errors.slice(0, 10);

  // the speedscope CLI's own way in: a script that hands the file over
  const loader = path.join(outdir, 'speedscope-load.js');
  fs.writeFileSync(loader, 'speedscope.loadFileFromBase64(' + JSON.stringify(path.basename(file)) +
    ', ' + JSON.stringify(fs.readFileSync(file).toString('base64')) + ')');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on('console', m => { if (m.type() === 'error') result.consoleErrors.push(m.text()); });
    page.on('pageerror', e => result.pageErrors.push(String(e)));
    page.on('request', r => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) result.requests.push(r.url()); });
    await page.goto('file://' + path.join(release, 'index.html') + '#localProfilePath=' + loader);
    const exp = page.getByText('Export', { exact: false });
    await exp.waitFor({ timeout: 60000 });
    result.title = await page.evaluate(() => document.body.innerText.split('\n').slice(0, 6).join('\n'));
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), exp.click()]);
    const exported = path.join(outdir, 'speedscope-exported.json');
    await download.saveAs(exported);
    result.exported = JSON.parse(fs.readFileSync(exported, 'utf8'));
    await page.getByText('Sandwich').click();
    await page.waitForTimeout(500);
    result.sandwich = await page.evaluate(() => document.body.innerText);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result));
})().catch(e => {
  result.fatal = String(e && e.stack || e);
  process.stdout.write(JSON.stringify(result));
  process.exitCode = 1;
});
