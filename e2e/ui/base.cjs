// base.cjs: open the explorer at /, which redirects to /ui/; the server
// has tokens, so the page asks for one; give it and see the page load.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

main(() => run(async (page) => {
  const { headers, status } = await open(page, '/');
  const url = page.url();
  await page.getByLabel('Bearer token').waitFor();
  const asked = await page.locator('#token-form').isVisible();
  await giveToken(page);
  await page.locator('#token-form').waitFor({ state: 'hidden' });
  const nav = await page.getByRole('navigation', { name: 'Explorer pages' }).getByRole('link').allTextContents();
  const stored = await page.evaluate(() => sessionStorage.getItem('stratakb.token') !== null);
  const local = await page.evaluate(() => localStorage.length);
  return { status, headers, url, asked, nav, stored, local, h1: await page.locator('h1').textContent() };
}));
