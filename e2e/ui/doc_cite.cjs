// doc_cite.cjs: search through the API from the page (strata_search, as
// any client), put the top result's citation link on the page with
// citeLink, follow it, and report the Document page's highlighted lines.
'use strict';
const { run, open, giveToken, main } = require('./browser.cjs');

main(() => run(async (page) => {
  await open(page, '/ui/');
  await giveToken(page);
  await page.locator('article.card').first().waitFor();
  const hit = await page.evaluate(async (query) => {
    const resp = await window.strata.api('/v1/search', { query, layers: ['explorer'], top_k: 3 });
    const top = resp.results[0];
    const link = window.strata.citeLink(top.ref, 'Open the citation');
    link.id = 'cite-under-test';
    document.querySelector('main').prepend(link);
    return { ref: top.ref, file: top.file, lines: top.lines, href: link.getAttribute('href') };
  }, process.env.SEARCH_QUERY);
  await page.locator('#cite-under-test').click();
  await page.waitForURL(/\/ui\/doc\/\d+#r\d+-\d+$/);
  await page.locator('#doc-text li.hl').first().waitFor();
  const found = await page.evaluate(() => {
    const hl = [...document.querySelectorAll('#doc-text li.hl')];
    const r = hl[0].getBoundingClientRect();
    return {
      highlighted: hl.map((li) => Number(li.dataset.line)),
      text: hl.map((li) => li.querySelector('.tx').textContent).join('\n'),
      visible: r.top >= 0 && r.bottom <= window.innerHeight,
      focused: document.activeElement && document.activeElement.closest('li') === hl[0],
      status: document.getElementById('doc-span').textContent,
      sections: [...document.querySelectorAll('#doc-sections a')].map((a) => a.textContent),
      title: document.getElementById('doc-title').textContent,
      url: location.pathname + location.hash,
    };
  });
  // The same span by lines, as a citation's lines give it.
  await page.evaluate((l) => { location.hash = '#L' + l; }, hit.lines);
  await page.waitForFunction((l) => document.getElementById('doc-span').textContent.includes(l.replace('-', '–')), hit.lines);
  const byLines = await page.evaluate(() => [...document.querySelectorAll('#doc-text li.hl')].map((li) => Number(li.dataset.line)));
  await page.setViewportSize({ width: 320, height: 800 });
  const narrow = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.setViewportSize({ width: 1280, height: 900 });
  const docHeaders = await page.evaluate(async () => {
    const r = await fetch(location.pathname);
    return { 'content-security-policy': r.headers.get('content-security-policy') || '' };
  });
  return { headers: docHeaders, hit, ...found, byLines, narrow };
}));
