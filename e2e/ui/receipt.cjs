// receipt.cjs: open a receipt's page (PAGE_PATH, /ui/receipts/{id}) and
// report what it shows: the signature and changed lines, the marks in the
// draft and in each passage, the checks table and the unchecked sentences.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

main(() => run(async (page) => {
  const { headers } = await open(page);
  await giveToken(page);
  await page.locator('#draft-text').waitFor();
  const found = await page.evaluate(() => ({
    title: document.getElementById('receipt-title').textContent,
    signature: document.getElementById('receipt-signature').textContent,
    changed: document.getElementById('receipt-changed').textContent,
    draft: document.getElementById('draft-text').textContent,
    draftMarks: [...document.querySelectorAll('#draft-text mark')].map((m) => m.className + ': ' + m.textContent),
    passageMarks: [...document.querySelectorAll('article.passage mark')].map((m) => m.className + ': ' + m.textContent),
    passageLinks: [...document.querySelectorAll('article.passage a.cite')].map((a) => a.getAttribute('href')),
    checks: [...document.querySelectorAll('table tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
    unchecked: [...document.querySelectorAll('#unchecked li')].map((li) => li.textContent),
  }));
  await page.setViewportSize({ width: 320, height: 800 });
  found.narrow = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.setViewportSize({ width: 1280, height: 900 });
  return { headers, ...found };
}));
