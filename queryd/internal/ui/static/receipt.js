// receipt.js: the Receipt page (/ui/receipts/{id}), the link `queryd
// receipt` prints. It opens the receipt (GET /v1/receipts/{id}, which is
// strata_get_receipt) and shows whether its signature holds and whether
// any passage changed since it was issued, the draft with each quote and
// fact marked, each passage as the server read it with what matched
// marked, and the sentences nothing was checked in.
'use strict';
(function () {
  const { el, api, citeLink, table, fill } = window.strata;
  const box = document.getElementById('receipt');

  function badge(text, kind) {
    return el('span', { class: 'badge ' + (kind || '') }, text);
  }

  // marked returns text's nodes with the ranges [start, end) (indexes into
  // text) wrapped in <mark>; a range inside an earlier one is left to it.
  function marked(text, ranges) {
    const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start || b.end - a.end);
    const nodes = [];
    let at = 0;
    for (const r of sorted) {
      if (r.start < at) continue;
      if (r.start > at) nodes.push(text.slice(at, r.start));
      nodes.push(el('mark', { class: 'hit ' + r.kind, title: r.title, dataset: { check: String(r.check) } }, text.slice(r.start, r.end)));
      at = r.end;
    }
    nodes.push(text.slice(at));
    return nodes;
  }

  // draftRanges finds each check's text in the draft, in order.
  function draftRanges(draft, checks) {
    const ranges = [];
    let from = 0;
    checks.forEach((c, i) => {
      if (!c.text) return;
      let at = draft.indexOf(c.text, from);
      if (at < 0) at = draft.indexOf(c.text);
      if (at < 0) return;
      ranges.push({ start: at, end: at + c.text.length, kind: kindClass(c), title: c.kind + ' in ' + c.passage, check: i });
      from = c.kind === 'quote' ? at : at + c.text.length;
    });
    return ranges;
  }

  function kindClass(c) {
    return c.kind === 'quote' ? 'quote' : 'fact';
  }

  // passageRanges turns the checks' byte offsets into the passage's text
  // into string indexes.
  function passageRanges(text, checks, id) {
    const bytes = new TextEncoder().encode(text);
    const dec = new TextDecoder();
    const index = (b) => dec.decode(bytes.slice(0, Math.max(0, Math.min(b, bytes.length)))).length;
    const ranges = [];
    checks.forEach((c, i) => {
      if (c.passage !== id || c.kind === 'sentence' || !(c.end > c.start)) return;
      ranges.push({ start: index(c.start), end: index(c.end), kind: kindClass(c), title: c.kind + ': ' + c.text, check: i });
    });
    return ranges;
  }

  function show(r) {
    const checks = r.checks || [];
    const extractive = checks.some((c) => c.kind === 'sentence');
    const changed = r.passages.filter((p) => !p.unchanged);
    const sig = r.signature || {};
    document.getElementById('receipt-title').textContent = 'Receipt ' + r.receipt_id;
    document.title = 'Receipt ' + r.receipt_id + ' · StrataKB explorer';
    const verdict = el('section', { class: 'panel verdict', 'aria-labelledby': 'receipt-verdict' },
      el('h2', { id: 'receipt-verdict' }, 'What it proves'),
      el('p', { id: 'receipt-signature' }, sig.holds ? badge('signature holds', 'ok') : badge('signature does not hold: ' + (sig.state || 'unknown'), 'bad'),
        ' ', sig.message || ''),
      el('p', { id: 'receipt-changed' }, changed.length
        ? [badge(changed.length + ' of ' + r.passages.length + ' passages changed', 'bad'), ' The documents no longer read this way at ', changed.map((p) => p.id).join(', '), '; the receipt shows what was read when it was issued.']
        : [badge('unchanged', 'ok'), ' Every passage still reads the same in the stored documents.']),
      el('dl', { class: 'facts' },
        el('dt', null, 'Issued'), el('dd', null, r.created_at + ' by ' + r.tool),
        el('dt', null, 'Status'), el('dd', null, r.status + ', ' + r.checked + (extractive ? ' sentences quoted from the documents' : ' quotes and facts checked')),
        sig.key_id ? [el('dt', null, 'Key'), el('dd', null, sig.algorithm + ', key ' + sig.key_id)] : null));
    const draft = el('section', { 'aria-labelledby': 'receipt-draft' },
      el('h2', { id: 'receipt-draft' }, extractive ? 'Question' : 'Draft'),
      el('p', { class: 'hint' }, extractive ? 'The answer is the passages below, word for word.' : 'Quotes and facts that were checked are marked; the table below says where each was found.'),
      el('div', { class: 'draft', id: 'draft-text' }, extractive ? r.draft : marked(r.draft, draftRanges(r.draft, checks))));
    const passages = el('section', { 'aria-labelledby': 'receipt-passages' },
      el('h2', { id: 'receipt-passages' }, 'Passages as read'),
      r.passages.map((p) => el('article', { class: 'passage', id: 'passage-' + p.id, 'aria-labelledby': 'ph-' + p.id },
        el('h3', { id: 'ph-' + p.id }, '[' + p.id + '] ', citeLink(p.ref, p.layer + '/' + p.file), ' ',
          p.unchanged ? badge('still reads the same', 'ok') : badge('changed since', 'bad')),
        el('pre', { class: 'passage-text' }, extractive ? p.text : marked(p.text, passageRanges(p.text, checks, p.id))))));
    const listed = checks.filter((c) => c.kind !== 'sentence');
    const checked = listed.length ? el('section', { 'aria-labelledby': 'receipt-checks' },
      el('h2', { id: 'receipt-checks' }, 'Quotes and facts'),
      table('Each quote and fact, and what it matched', ['Kind', 'In the draft', 'Sentence', 'Passage', 'Matched'],
        listed.map((c) => [c.kind, c.text, String(c.sentence), c.passage, c.matched]))) : null;
    const unchecked = el('section', { 'aria-labelledby': 'receipt-unchecked' },
      el('h2', { id: 'receipt-unchecked' }, 'Not checked'),
      r.unchecked_sentences && r.unchecked_sentences.length
        ? [el('p', { class: 'hint' }, 'These sentences hold no quote or fact to compare: nothing vouches for them.'),
          el('ul', { id: 'unchecked' }, r.unchecked_sentences.map((s) => el('li', null, s)))]
        : el('p', { class: 'muted' }, 'Every sentence held something that was checked.'));
    fill(box, verdict, draft, checked, passages, unchecked);
  }

  (async function start() {
    const id = decodeURIComponent(location.pathname.replace(/^\/ui\/receipts\//, ''));
    try {
      show(await api('/v1/receipts/' + encodeURIComponent(id)));
    } catch (e) {
      fill(box, el('p', { class: 'reason' }, 'This receipt cannot be opened: ' + e.message));
    }
  })();
})();
