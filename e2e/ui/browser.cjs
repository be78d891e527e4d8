// browser.cjs: what every scenario script shares. It launches Debian's
// Chromium through playwright-core (never a downloaded browser) with the
// flags this machine needs, opens a page, records what the browser
// reports, and prints the scenario's findings as JSON on stdout.
//
// Environment (set by the Go test): STRATA_E2E_DIR (where
// scripts/setup-e2e.sh installed playwright-core), CHROMIUM, BASE_URL,
// PAGE_PATH, TOKEN, SHOT (the screenshot's path).
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const { chromium } = require(path.join(process.env.STRATA_E2E_DIR, 'node_modules', 'playwright-core'));

// Without the background-networking flags Chromium keeps trying hosts
// this machine cannot reach; --no-sandbox because tests run as root.
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// run opens the browser, hands scenario a fresh page with the problems
// list, and prints {problems, ...what scenario returned}. The browser is
// closed and its profile folder removed whatever happens.
async function run(scenario, { width = 1280, height = 900 } = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'stratakb-ui-chromium-'));
  // A persistent context on a fresh, empty profile folder: Playwright's
  // way of passing --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM, args: FLAGS, timeout: 20000,
    viewport: { width, height }, baseURL: process.env.BASE_URL,
  });
  const problems = [];
  try {
    const page = context.pages()[0] || await context.newPage();
    page.setDefaultTimeout(15000);
    // A 401 is how the page learns that the server wants a token: the
    // browser logs it, and it is no problem.
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 401 \(Unauthorized\)/.test(m.text())) problems.push('console: ' + m.text());
    });
    page.on('pageerror', (e) => problems.push('uncaught: ' + e.message));
    page.on('requestfailed', (r) => problems.push('request failed: ' + r.url() + ' ' + (r.failure() || {}).errorText));
    const found = await scenario(page, { problems, context });
    if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT, fullPage: true });
    process.stdout.write(JSON.stringify({ problems, ...found }) + '\n');
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

// open goes to PAGE_PATH (or p) and returns the document response's
// security headers.
async function open(page, p) {
  const resp = await page.goto(p || process.env.PAGE_PATH);
  const h = resp.headers();
  return {
    status: resp.status(),
    headers: {
      'content-security-policy': h['content-security-policy'] || '',
      'x-content-type-options': h['x-content-type-options'] || '',
      'referrer-policy': h['referrer-policy'] || '',
    },
  };
}

// giveToken answers the page's token prompt, which a server with tokens
// shows on the first API call.
async function giveToken(page) {
  await page.getByLabel('Bearer token').fill(process.env.TOKEN);
  await page.getByRole('button', { name: 'Use this token' }).click();
}

function main(fn) {
  fn().catch((e) => {
    process.stderr.write((e && e.stack) || String(e));
    process.stderr.write('\n');
    process.exit(1);
  });
}

module.exports = { run, open, giveToken, main };
