// base.cjs: open the explorer at /, which redirects to /ui/; the server
// has tokens, so the page asks for one; a wrong one is refused and asked
// for again; give the right one and see the page load.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

main(() => run(async (page) => {
  const { headers, status } = await open(page, '/');
  const url = page.url();
  await page.getByLabel('Bearer token').waitFor();
  const asked = await page.locator('#token-form').isVisible();
  await page.getByLabel('Bearer token').fill('not-the-token-0000000000');
  await page.getByRole('button', { name: 'Use this token' }).click();
  await page.locator('#token-why', { hasText: 'refused' }).waitFor();
  const askedAgain = await page.locator('#token-why').textContent();
  await giveToken(page);
  await page.locator('#token-form').waitFor({ state: 'hidden' });
  const nav = await page.getByRole('navigation', { name: 'Explorer pages' }).getByRole('link').allTextContents();
  const stored = await page.evaluate(() => sessionStorage.getItem('stratakb.token') !== null);
  const local = await page.evaluate(() => localStorage.length);
  return { status, headers, url, asked, askedAgain, nav, stored, local, h1: await page.locator('h1').textContent() };
}));
