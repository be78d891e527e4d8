// layers.js: the Layers page (/ui/). Every layer as a card (GET
// /v1/layers); choosing one (#layer=NAME) shows its files with their
// states, warnings and errors, the files its last run skipped with the
// reasons (GET /v1/layers/{name}/files), and its documents (GET
// /v1/layers/{name}/documents), each list a page at a time.
'use strict';
(function () {
  const { el, api, citeLink, table, fill } = window.strata;
  const PAGE = 50;
  const box = document.getElementById('layers');
  const detail = document.getElementById('layer-detail');
  const problemsOnly = document.getElementById('problems-only');

  function when(ts) {
    return ts ? new Date(ts).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '';
  }

  function badge(status) {
    return el('span', { class: 'badge ' + status }, status);
  }

  function facts(pairs) {
    return el('dl', { class: 'facts' }, pairs.filter((p) => p).map(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
  }

  function lastRun(r) {
    if (!r) return 'never';
    return [badge(r.status), ' ', when(r.started_at), ' · ', r.files + ' files, ' + r.failed + ' failed, ' + r.skipped + ' skipped',
      r.error ? el('div', { class: 'reason' }, r.error) : null];
  }

  function card(l) {
    return el('article', { class: 'card', 'aria-labelledby': 'layer-' + l.name },
      el('h2', { id: 'layer-' + l.name }, el('a', { href: '#layer=' + encodeURIComponent(l.name) }, l.name)),
      l.description ? el('p', null, l.description) : el('p', { class: 'muted' }, 'No description.'),
      facts([
        ['Routes', l.routes.length ? l.routes.join(', ') : 'none'],
        ['Answer mode', l.answer_mode],
        ['Embedding model', l.embedding_model || 'none yet'],
        ['Documents', String(l.documents)],
        ['Failed files', l.failed_files ? el('span', { class: 'reason' }, String(l.failed_files)) : '0'],
        ['Chunks', String(l.chunks)],
        ['Pending vectors', String(l.pending_vectors)],
        l.archived_globs.length ? ['Archived', l.archived_globs.join(', ')] : null,
        ['Last run', lastRun(l.last_run)],
      ]));
  }

  async function loadLayers() {
    const page = await api('/v1/layers?limit=500');
    if (!page.layers.length) {
      box.replaceChildren(el('p', null, 'No layers yet: add one with ', el('code', null, 'ingestd add DIR --layer NAME'), '.'));
      return;
    }
    box.replaceChildren(...page.layers.map(card));
    if (page.total > page.layers.length) box.append(el('p', { class: 'muted' }, 'Showing ' + page.layers.length + ' of ' + page.total + ' layers.'));
  }

  // pager: Previous / Next buttons for a list at offset of total.
  function pager(label, offset, total, go) {
    const last = Math.min(offset + PAGE, total);
    return el('div', { class: 'pager', role: 'group', 'aria-label': label + ' pages' },
      el('span', null, total ? (offset + 1) + '–' + last + ' of ' + total : 'none'),
      offset > 0 ? el('button', { type: 'button', onclick: () => go(Math.max(0, offset - PAGE)) }, 'Previous ' + label) : null,
      last < total ? el('button', { type: 'button', onclick: () => go(offset + PAGE) }, 'Next ' + label) : null);
  }

  function fileDetail(f) {
    return [f.error ? el('div', { class: 'reason' }, f.error) : null,
      f.warnings.map((w) => el('div', { class: 'warning' }, 'warning: ' + w))];
  }

  async function loadFiles(name, offset) {
    const q = '?limit=' + PAGE + '&offset=' + offset + (problemsOnly.checked ? '&failed=true' : '');
    const page = await api('/v1/layers/' + encodeURIComponent(name) + '/files' + q);
    const target = document.getElementById('layer-files');
    fill(target, el('h3', null, problemsOnly.checked ? 'Failed files and warnings' : 'Files'),
      table('Files of ' + name, ['File', 'Status', 'Chunks', 'Parsed', 'Error or warnings'],
        page.files.map((f) => [f.status === 'ok' ? citeLink({ document_id: f.document_id }, f.file) : f.file, badge(f.status),
          String(f.chunks), when(f.parsed_at), fileDetail(f)])),
      pager('files', offset, page.total, (o) => loadFiles(name, o)));
    const skipped = document.getElementById('layer-skipped');
    fill(skipped, el('h3', null, 'Skipped by the last run'),
      page.skipped.length
        ? table('Files the last run of ' + name + ' skipped', ['File', 'Reason'], page.skipped.map((s) => [s.file, el('span', { class: 'reason' }, s.reason)]))
        : el('p', { class: 'muted' }, 'None.'),
      page.skipped_total > page.skipped.length ? el('p', { class: 'muted' }, page.skipped.length + ' of ' + page.skipped_total + ' shown.') : null);
  }

  function dated(d) {
    return d.date ? d.date + ' (' + (d.date_source === 'front_matter' ? 'front matter' : 'file time') + ')' : 'unknown';
  }

  async function loadDocuments(name, offset) {
    const page = await api('/v1/layers/' + encodeURIComponent(name) + '/documents?limit=' + PAGE + '&offset=' + offset);
    fill(document.getElementById('layer-documents'), el('h3', null, 'Documents'),
      table('Documents of ' + name, ['Document', 'Title', 'Date', 'Replaced by', 'Archived', 'Chunks'],
        page.documents.map((d) => [citeLink({ document_id: d.id }, d.file), d.title, dated(d), d.replaced_by || '—',
          d.archived ? el('span', { class: 'badge warn' }, 'archived') : 'no', String(d.chunks)])),
      pager('documents', offset, page.total, (o) => loadDocuments(name, o)));
  }

  function chosen() {
    const m = /^#layer=(.+)$/.exec(location.hash);
    return m ? decodeURIComponent(m[1]) : '';
  }

  async function showLayer() {
    const name = chosen();
    detail.hidden = !name;
    if (!name) return;
    const title = document.getElementById('layer-title');
    title.textContent = 'Layer ' + name;
    for (const a of box.querySelectorAll('h2 a')) {
      if (a.textContent === name) a.setAttribute('aria-current', 'true'); else a.removeAttribute('aria-current');
    }
    try {
      await Promise.all([loadFiles(name, 0), loadDocuments(name, 0)]);
      title.focus();
    } catch (e) { /* shown by api */ }
  }

  problemsOnly.addEventListener('change', () => { const n = chosen(); if (n) loadFiles(n, 0).catch(() => {}); });
  window.addEventListener('hashchange', showLayer);
  loadLayers().then(showLayer).catch(() => box.replaceChildren(el('p', { class: 'reason' }, 'The layers could not be read.')));
})();
