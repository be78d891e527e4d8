// doc.js: the Document page (/ui/doc/{id}). The stored text with line
// numbers (GET /v1/documents/{id}), the structure map as a tree of
// sections, the pages of a PDF with where their text came from. The
// fragment opens a span: #L30-31 (lines, as citations give them) or
// #r1830-1905 (a ref's byte offsets); its lines are highlighted and
// scrolled to. The text is inserted as text nodes only.
'use strict';
(function () {
  const { el, api, citeLink } = window.strata;
  const textBox = document.getElementById('doc-text');
  const m = /^\/ui\/doc\/(\d+)$/.exec(location.pathname);
  let doc = null;

  function meta(d) {
    const pages = d.page_spans.length;
    const pairs = [
      ['Layer', el('a', { href: '/ui/#layer=' + encodeURIComponent(d.layer) }, d.layer)],
      ['File', d.file],
      ['Date', d.date ? d.date + ' (' + (d.date_source === 'front_matter' ? 'front matter' : 'file time') + ')' : 'unknown'],
      ['Replaced by', d.replaced_by || '—'],
      ['Archived', d.archived ? 'yes' : 'no'],
      pages ? ['Pages', String(pages)] : null,
      ['Text', d.text_origin === 'text' ? 'from the file' : d.text_origin === 'ocr' ? 'made by OCR' : 'partly made by OCR'],
      ['Lines', String(d.lines.length) + (d.truncated ? ' (the text is longer; only its start is shown)' : '')],
    ];
    return el('dl', { class: 'facts' }, pairs.filter((p) => p).map(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
  }

  function sectionList(nodes) {
    return el('ul', null, nodes.map((s) => el('li', null,
      el('a', { href: '#L' + s.line_start + '-' + s.line_end, title: s.clause_path },
        [s.number, s.title].filter((x) => x).join(' ') || s.kind),
      s.children.length ? sectionList(s.children) : null)));
  }

  function pageLabel(p) {
    const conf = p.ocr_confidence === null ? '' : ', confidence ' + Math.round(p.ocr_confidence * 100) + '%';
    return 'Page ' + p.number + (p.text_origin === 'ocr' ? ' (text by OCR' + conf + ')' : '');
  }

  function render(d) {
    document.getElementById('doc-title').textContent = d.title || d.file;
    document.title = (d.title || d.file) + ' · StrataKB explorer';
    document.getElementById('doc-meta').replaceChildren(meta(d));
    if (d.sections.length) {
      const nav = document.getElementById('doc-sections');
      nav.replaceChildren(el('h2', null, 'Sections'), sectionList(d.sections));
      nav.hidden = false;
    }
    const pageAt = new Map(d.page_spans.map((p) => [p.line_start, p]));
    const list = el('ol', null);
    d.lines.forEach((line, i) => {
      const n = i + 1;
      const p = pageAt.get(n);
      if (p) list.append(el('li', { class: 'page-mark', 'aria-hidden': 'true' }, el('span', { class: 'ln' }), el('span', { class: 'tx' }, '— ' + pageLabel(p) + ' —')));
      list.append(el('li', { id: 'L' + n, dataset: { line: String(n) }, class: p ? 'page-start' : null },
        el('a', { class: 'ln', href: '#L' + n, 'aria-label': 'Line ' + n }, String(n)),
        el('span', { class: 'tx' }, line)));
    });
    textBox.replaceChildren(list);
  }

  // span reads the fragment: the first and last line to highlight.
  function span(d) {
    const lines = /^#L(\d+)(?:-L?(\d+))?$/.exec(location.hash);
    if (lines) {
      const a = Number(lines[1]);
      const b = Number(lines[2] || lines[1]);
      return [Math.min(a, b), Math.max(a, b)];
    }
    const ref = /^#r(\d+)-(\d+)$/.exec(location.hash);
    if (!ref) return null;
    const start = Number(ref[1]);
    const end = Math.max(start + 1, Number(ref[2]));
    const offs = d.line_offsets;
    let first = 0;
    let last = 0;
    for (let i = 0; i < offs.length; i++) {
      if (offs[i] < end) last = i + 1;
      if (offs[i] <= start) first = i + 1;
    }
    return first ? [first, Math.max(first, last)] : null;
  }

  function highlight() {
    if (!doc) return;
    for (const li of textBox.querySelectorAll('li.hl')) li.classList.remove('hl');
    const status = document.getElementById('doc-span');
    const s = span(doc);
    if (!s) { status.hidden = true; return; }
    const [a, b] = [Math.max(1, s[0]), Math.min(doc.lines.length, s[1])];
    if (a > b) {
      status.textContent = 'The span ' + location.hash.slice(1) + ' is outside this document.';
      status.hidden = false;
      return;
    }
    for (let n = a; n <= b; n++) document.getElementById('L' + n).classList.add('hl');
    status.replaceChildren('Highlighted: ', a === b ? 'line ' + a : 'lines ' + a + '–' + b, ' · ',
      citeLink({ document_id: doc.id, lines: a + '-' + b }, 'link to this span'));
    status.hidden = false;
    const first = document.getElementById('L' + a);
    first.scrollIntoView({ block: 'center' });
    first.querySelector('a.ln').focus({ preventScroll: true });
  }

  if (!m) {
    textBox.replaceChildren(el('p', { class: 'reason' }, 'No document id in this address.'));
    return;
  }
  api('/v1/documents/' + m[1]).then((d) => {
    doc = d;
    render(d);
    highlight();
  }).catch((e) => textBox.replaceChildren(el('p', { class: 'reason' }, 'The document could not be read: ' + e.message)));
  window.addEventListener('hashchange', highlight);
})();
