// ask.cjs: on the Ask page, choose the fixture layer and ask a question
// with the keyboard alone; open the first passage's explain chart and read
// its bars and marks; measure the page at 320 px; follow the passage's
// citation to the Document page and read the highlighted lines; go back
// (the question is in the address, so the answer comes again); then run
// the same words as a search (mode=search in the address) and read that
// chart too. The screenshot is the Ask page with the chart open.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

async function readChart(page, article) {
  await article.locator('details.explain summary').focus();
  await page.keyboard.press('Enter');
  const svg = article.locator('svg.chart');
  await svg.waitFor();
  return svg.evaluate((s) => ({
    label: s.getAttribute('aria-label'),
    bars: [...s.querySelectorAll('rect.bar')].map((r) => ({ row: r.closest('g').dataset.row, value: Number(r.dataset.value), width: Number(r.getAttribute('width')) })),
    marks: [...s.querySelectorAll('line.mark')].map((l) => ({ row: l.closest('g').dataset.row, mark: l.dataset.mark, at: Number(l.dataset.at) })),
    rows: [...s.querySelectorAll('g.row')].map((g) => g.dataset.row),
    facts: [...s.parentElement.querySelectorAll('dl.facts dt')].map((dt) => dt.textContent + ': ' + dt.nextElementSibling.textContent),
    shown: s.getBoundingClientRect().width > 0,
  }));
}

main(() => run(async (page) => {
  const { headers } = await open(page, '/ui/ask');
  await giveToken(page);
  const box = page.getByLabel('explorer', { exact: true });
  await box.waitFor();
  await box.focus();
  await page.keyboard.press('Space');
  await page.getByLabel('Question or search terms').focus();
  await page.keyboard.type(process.env.QUESTION);
  await page.keyboard.press('Enter');
  const first = page.locator('article.passage').first();
  await first.waitFor();
  const url = page.url();
  const answer = await page.evaluate(() => ({
    status: document.getElementById('ask-status').textContent,
    summary: document.querySelector('.summary').textContent,
    passages: [...document.querySelectorAll('article.passage')].map((a) => ({
      title: a.querySelector('h3').textContent,
      href: a.querySelector('a.cite') ? a.querySelector('a.cite').getAttribute('href') : '',
      labels: [...a.querySelectorAll('.labels .badge')].map((b) => b.textContent),
      text: a.querySelector('.passage-text').textContent,
    })),
  }));
  const chart = await readChart(page, first);
  await page.setViewportSize({ width: 320, height: 800 });
  const narrow = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.setViewportSize({ width: 1280, height: 900 });

  await first.locator('a.cite').click();
  await page.waitForURL(/\/ui\/doc\/\d+#r\d+-\d+$/);
  await page.locator('#doc-text li.hl').first().waitFor();
  const doc = await page.evaluate(() => ({
    url: location.pathname + location.hash,
    highlighted: [...document.querySelectorAll('#doc-text li.hl')].map((li) => li.querySelector('.tx').textContent).join('\n'),
  }));

  await page.goBack();
  await page.locator('article.passage').first().waitFor();
  const again = await page.locator('#ask-q').inputValue();

  const p = new URLSearchParams({ q: process.env.QUESTION, layers: 'explorer', mode: 'search', top_k: '3' });
  await open(page, '/ui/ask?' + p.toString());
  const hit = page.locator('article.passage').first();
  await hit.waitFor();
  const searchChart = await readChart(page, hit);
  const searchMode = await page.locator('#mode-search').isChecked();
  const results = await page.locator('article.passage').count();

  await page.goBack();
  const back = page.locator('article.passage').first();
  await back.waitFor();
  await readChart(page, back);
  return { headers, url, answer, chart, narrow, doc, again, searchChart, searchMode, results };
}));
