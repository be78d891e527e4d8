// doc_markup.cjs: open the fixture document full of HTML and script on the
// Document page, hover and click where its markup would act, and report
// whether anything ran and what the page shows.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

main(() => run(async (page, { problems }) => {
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  await open(page, '/ui/');
  await giveToken(page);
  await page.locator('article.card').first().waitFor();
  const id = await page.evaluate(async () => {
    const resp = await window.strata.api('/v1/layers/explorer/documents');
    return resp.documents.find((d) => d.file === 'markup-sample.md').id;
  });
  const { headers } = await open(page, '/ui/doc/' + id);
  await page.locator('#doc-text li').first().waitFor();
  // Where the markup would act if it were markup: hover the "bold" text,
  // click the "link". Best effort: if the markup did become elements, the
  // text is not there to find, and the findings below say what happened.
  await page.getByText('onmouseover', { exact: false }).first().hover({ timeout: 2000 }).catch(() => {});
  await page.getByText('click me', { exact: false }).first().click({ timeout: 2000 }).catch(() => {});
  await page.waitForTimeout(300);
  const found = await page.evaluate(() => ({
    pwned: window.__strataPwned === undefined ? null : String(window.__strataPwned),
    title: document.title,
    images: document.querySelectorAll('#doc-text img, main img').length,
    scripts: document.querySelectorAll('main script').length,
    anchors: [...document.querySelectorAll('#doc-text a')].filter((a) => !a.classList.contains('ln')).length,
    text: document.getElementById('doc-text').innerText,
    url: location.pathname,
  }));
  return { headers, id, dialogs, ...found, problemCount: problems.length };
}));
