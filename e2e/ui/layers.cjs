// layers.cjs: the Layers page. Give the token, choose the fixture layer
// with the keyboard, keep only the problems, and report the cards, the
// files, the skipped files and the documents as the page shows them; then
// check the page at 320 px wide.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

function rows(page, caption) {
  return page.locator('table', { has: page.locator('caption', { hasText: caption }) }).locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
}

main(() => run(async (page) => {
  const { headers } = await open(page, '/ui/');
  await giveToken(page);
  const link = page.getByRole('link', { name: 'explorer', exact: true });
  await link.focus();
  await page.keyboard.press('Enter');
  await page.locator('caption', { hasText: 'Documents of explorer' }).waitFor();
  const card = await page.locator('article.card').first().innerText();
  const documents = await rows(page, 'Documents of explorer');
  await page.getByLabel('Only failed files and files with warnings').check();
  await page.getByRole('heading', { name: 'Failed files and warnings' }).waitFor();
  const failedRows = await rows(page, 'Files of explorer');
  const skipped = await rows(page, 'Files the last run of explorer skipped');
  const hash = await page.evaluate(() => location.hash);
  const mainText = await page.locator('main').innerText();
  // One column at 320 px: nothing wider than the screen but the tables,
  // which scroll inside their own box.
  await page.setViewportSize({ width: 320, height: 800 });
  const narrow = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.setViewportSize({ width: 1280, height: 900 });
  return { headers, card, documents, failedRows, skipped, hash, narrow, mainText };
}));
