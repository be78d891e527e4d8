// learning.cjs: open the Learning page with TOKEN and report its tables
// and whether the reset is offered. With RESET_LAYER (an admin's token),
// ask to reset that layer, cancel the confirmation, ask again, confirm,
// and report what the page said and the tables after.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

function tables(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#learning section')].map((s) => [s.querySelector('h2').id,
    [...s.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent))])));
}

main(() => run(async (page) => {
  const { headers } = await open(page, '/ui/learning');
  await giveToken(page);
  await page.locator('#learned-synonyms').waitFor();
  // The page decides on the reset once the stats are shown.
  await page.waitForFunction(() => window.strata && document.readyState === 'complete');
  await page.waitForTimeout(500);
  const before = await tables(page);
  const resetShown = await page.locator('#reset').isVisible();
  const found = { headers, before, resetShown };
  const layer = process.env.RESET_LAYER;
  if (layer && resetShown) {
    await page.getByLabel('Layer', { exact: true }).fill(layer);
    await page.getByRole('button', { name: 'Reset…' }).click();
    const dialog = page.locator('#reset-confirm');
    await dialog.waitFor();
    found.confirmText = await page.locator('#reset-confirm-text').textContent();
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.getElementById('reset-result').textContent !== '');
    found.cancelled = await page.locator('#reset-result').textContent();
    await page.getByRole('button', { name: 'Reset…' }).click();
    await dialog.waitFor();
    await page.getByRole('button', { name: 'Yes, reset' }).click();
    await page.waitForFunction(() => document.getElementById('reset-result').textContent.startsWith('Reset '));
    found.result = await page.locator('#reset-result').textContent();
    found.after = await tables(page);
  }
  return found;
}));
