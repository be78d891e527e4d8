// ask.js: the Ask and search page (/ui/ask). The form runs strata_ask
// (POST /v1/ask, detailed) or strata_search (POST /v1/search, explain) and
// shows the status, notes and next step, the routing decision, and each
// passage with its citation, its labels and its explain chart: which
// channels found it and at which ranks, the fusion score, keyword slot and
// exact match, the reranker's (or similarity's) score against the marks,
// and the names check. The query lives in the address
// (?q=…&layers=a,b&mode=ask|search&top_k=N), so a result can be linked.
'use strict';
(function () {
  const { el, api, citeLink, fill } = window.strata;
  const SVG = 'http://www.w3.org/2000/svg';
  const form = document.getElementById('ask-form');
  const q = document.getElementById('ask-q');
  const topK = document.getElementById('ask-topk');
  const boxes = document.getElementById('ask-layer-boxes');
  const free = document.getElementById('ask-layers-free');
  const freeText = document.getElementById('ask-layers-text');
  const out = document.getElementById('ask-out');
  let known = null; // layer names from GET /v1/layers, or null: free text

  // --- the form and the address ---

  function state() {
    const p = new URLSearchParams(location.search);
    return {
      q: (p.get('q') || '').trim(),
      mode: p.get('mode') === 'search' ? 'search' : 'ask',
      layers: (p.get('layers') || '').split(',').map((s) => s.trim()).filter(Boolean),
      topK: /^\d+$/.test(p.get('top_k') || '') ? Number(p.get('top_k')) : null,
    };
  }

  function chosenLayers() {
    if (known) return [...boxes.querySelectorAll('input:checked')].map((b) => b.value);
    return freeText.value.split(',').map((s) => s.trim()).filter(Boolean);
  }

  function showState(s) {
    q.value = s.q;
    document.getElementById(s.mode === 'search' ? 'mode-search' : 'mode-ask').checked = true;
    topK.value = s.topK ? String(s.topK) : '';
    if (known) {
      for (const b of boxes.querySelectorAll('input')) b.checked = s.layers.includes(b.value);
    } else {
      freeText.value = s.layers.join(', ');
    }
  }

  async function loadLayers() {
    try {
      const page = await api('/v1/layers?limit=500');
      known = page.layers.map((l) => l.name);
    } catch (e) {
      window.strata.clearError();
      known = null;
    }
    if (!known || !known.length) {
      known = null;
      free.hidden = false;
      return;
    }
    fill(boxes, known.map((name, i) => el('span', { class: 'layer-box' },
      el('input', { id: 'ask-layer-' + i, type: 'checkbox', value: name, class: 'inline' }),
      el('label', { for: 'ask-layer-' + i, class: 'inline' }, name))));
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    p.set('q', q.value.trim());
    const layers = chosenLayers();
    if (layers.length) p.set('layers', layers.join(','));
    p.set('mode', form.elements.mode.value);
    if (topK.value) p.set('top_k', topK.value);
    history.pushState(null, '', '/ui/ask?' + p.toString());
    run(state());
  });
  window.addEventListener('popstate', () => { const s = state(); showState(s); run(s); });

  // --- running ---

  async function run(s) {
    if (!s.q) { out.replaceChildren(); return; }
    fill(out, el('p', { class: 'loading' }, s.mode === 'ask' ? 'Asking…' : 'Searching…'));
    const body = s.mode === 'ask'
      ? { question: s.q, response_format: 'detailed' }
      : { query: s.q, explain: true };
    if (s.layers.length) body.layers = s.layers;
    if (s.topK) body.top_k = s.topK;
    let resp;
    try {
      resp = await api(s.mode === 'ask' ? '/v1/ask' : '/v1/search', body);
    } catch (e) {
      fill(out, el('p', { class: 'reason' }, 'Nothing to show: ' + e.message));
      return;
    }
    const view = s.mode === 'ask' ? askView(resp, s) : searchView(resp, s);
    fill(out, view);
  }

  // --- what came back ---

  function facts(pairs) {
    return el('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
  }

  function badge(text, kind) {
    return el('span', { class: 'badge ' + (kind || '') }, text);
  }

  const STATUS_KIND = { found: 'ok', ok: 'ok', partly_found: 'warn', not_found: 'bad' };

  function routing(why, fallback) {
    const items = (why || []).map((w) => el('li', null, el('strong', null, w.layer), ': by ' + w.by,
      w.pattern ? ' (pattern ' + w.pattern + ')' : '', w.words && w.words.length ? ' (words: ' + w.words.join(', ') + ')' : ''));
    return [
      items.length ? el('ul', { class: 'routing' }, items) : 'the question named its layers, or none was routed',
      fallback ? el('p', { class: 'warning' }, 'Fallback: ' + fallback.reason + '; searched ' + fallback.searched_layers) : null,
    ];
  }

  function summary(status, pairs, notes, nextStep, warning) {
    return el('section', { class: 'panel summary', 'aria-labelledby': 'ask-status' },
      el('h2', { id: 'ask-status' }, 'Status: ', badge(status, STATUS_KIND[status] || 'warn')),
      warning ? el('p', { class: 'warning' }, warning) : null,
      notes && notes.length ? [el('h3', null, 'Notes'), el('ul', { class: 'notes' }, notes.map((n) => el('li', null, n)))] : null,
      nextStep ? el('p', { class: 'next-step' }, el('strong', null, 'Next step: '), nextStep) : null,
      facts(pairs));
  }

  function labels(c, extra) {
    const out = [];
    if (c.layer) out.push(badge('layer ' + c.layer));
    if (c.date) out.push(badge('dated ' + c.date + (c.date_source ? ' (' + c.date_source + ')' : '')));
    if (c.replaced_by) out.push(badge('replaced by ' + c.replaced_by, 'warn'));
    if (c.archived) out.push(badge('archived', 'warn'));
    if (c.page) out.push(badge('page ' + c.page));
    for (const x of extra) if (x) out.push(badge(x[0], x[1]));
    return el('p', { class: 'labels' }, out.map((b, i) => (i ? [' ', b] : b)));
  }

  function passage(n, ref, title, c, text, extra, chart) {
    return el('article', { class: 'passage', 'aria-labelledby': 'p-' + n },
      el('h3', { id: 'p-' + n }, title, ' · ', citeLink(ref, c.file + ' lines ' + c.lines)),
      c.clause_path ? el('p', { class: 'muted clause' }, c.clause_path) : null,
      labels(c, extra),
      el('pre', { class: 'passage-text' }, text),
      el('details', { class: 'explain' }, el('summary', null, 'Why it came back'), chart));
  }

  function askView(r, s) {
    const status = r.answer_status || r.status;
    const chunks = r.retrieved_chunks || [];
    const pairs = [
      ['Confidence', (r.confidence || '') + (r.basis ? ' (on ' + r.basis + ')' : '')],
      r.marks ? ['Marks', 'high ' + r.marks.high + ', medium ' + r.marks.medium] : null,
      ['Answer mode', r.mode],
      ['Searched layers', (r.searched_layers || []).join(', ') || 'none'],
      ['Routing', routing(r.routing, r.routing_fallback)],
      r.query_variants && r.query_variants.length > 1 ? ['Searches', r.query_variants.join(' | ')] : null,
      r.degraded && r.degraded.length ? ['Degraded', r.degraded.join('; ')] : null,
      r.receipt_id ? ['Receipt', el('a', { href: '/ui/receipts/' + encodeURIComponent(r.receipt_id) }, r.receipt_id)] : null,
    ];
    const answer = r.answer && r.answer.length
      ? el('section', { class: 'panel' }, el('h2', null, 'Answer'), el('ol', null, r.answer.map((a) => el('li', null, a.text))))
      : null;
    const list = (r.passages || []).map((p, i) => {
      const chunk = chunks.find((c) => c.passage === p.id) || chunks.find((c) => c.ref === p.ref);
      const extra = [p.match === 'exact' ? ['exact section', 'ok'] : null, p.match === 'names' ? ['holds the names asked about', 'ok'] : null,
        p.cut ? ['cut short', 'warn'] : null, p.outside_routing ? ['outside routing', 'warn'] : null];
      return passage(i, p.ref, p.id, p.citation, p.text, extra, askChart(p, chunk, r, s));
    });
    return [summary(status, pairs, r.notes, r.next_step, r.warning), answer,
      el('h2', null, list.length + (list.length === 1 ? ' passage' : ' passages')), list];
  }

  function searchView(r, s) {
    const e = r.explain || {};
    const pairs = [
      ['Confidence', r.confidence + (r.basis ? ' (on ' + r.basis + ')' : '')],
      ['Searched layers', (r.searched_layers || []).join(', ') || 'none'],
      ['Routing', routing(e.routing, r.routing_fallback)],
      ['Channels', (e.channels || []).join(' + ') + (e.keyword_slots ? ', ' + e.keyword_slots + ' keyword slot(s)' : '')],
      e.exact_terms && e.exact_terms.length ? ['Exact terms', e.exact_terms.join(', ')] : null,
      r.degraded ? ['Degraded', r.degraded_reason || 'yes'] : null,
    ];
    const notes = [r.note].filter(Boolean);
    const list = (r.results || []).map((x, i) => {
      const c = { file: x.file, lines: x.lines, clause_path: x.clause_path, layer: x.layer, page: x.page };
      const extra = [x.match === 'exact' ? ['exact section', 'ok'] : null, x.cut ? ['cut short', 'warn'] : null,
        x.outside_routing ? ['outside routing', 'warn'] : null];
      return passage(i, x.ref, 'Result ' + (i + 1), c, x.text, extra, searchChart(x, r, s));
    });
    return [summary(r.status, pairs, notes, '', r.warning),
      el('h2', null, list.length + (list.length === 1 ? ' result' : ' results')), list];
  }

  // --- the explain chart ---

  // explainText reads strata_ask's explain string ("lexical rank 1, vector
  // rank 3, merged rank 2 (fusion), …").
  function explainText(s) {
    const num = (re) => { const m = re.exec(s || ''); return m ? Number(m[1]) : null; };
    const merged = /merged rank (\d+) \(([a-z_]+)\)(?:, (.*))?/.exec(s || '');
    return {
      lexical: num(/lexical rank (\d+)/), vector: num(/vector rank (\d+)/),
      fusedRank: merged ? Number(merged[1]) : null, placement: merged ? merged[2] : '', more: merged && merged[3] ? merged[3] : '',
    };
  }

  const PLACEMENT = {
    fusion: 'placed by rank fusion', keyword_slot: 'kept a keyword slot (a best lexical match)',
    exact_match: 'an exact match of a section the question names', lexical_only: 'found by the lexical channel only',
  };

  function askChart(p, chunk, r, s) {
    const x = chunk ? explainText(chunk.explain) : explainText('');
    const scale = Math.max(s.topK || 10, x.lexical || 0, x.vector || 0, 1);
    const basisScore = r.basis === 'rerank' ? chunk && chunk.rerank_score : chunk && chunk.similarity;
    const rows = [
      rankRow('lexical', 'Lexical', x.lexical, scale, null),
      rankRow('vector', 'Vector', x.vector, scale, null),
      scoreRow('fusion', 'Fusion', chunk ? chunk.score : null, [], x.fusedRank ? 'merged rank ' + x.fusedRank : 'not in the merged list'),
      scoreRow('rerank', r.basis === 'rerank' ? 'Reranker' : 'Similarity', basisScore ?? null,
        r.marks ? [['high', r.marks.high], ['medium', r.marks.medium]] : [], r.basis ? 'on ' + r.basis : 'no basis'),
    ];
    const notes = [
      ['Placement', x.placement ? (PLACEMENT[x.placement] || x.placement) + (x.more ? '; ' + x.more : '') : 'not among the retrieved chunks (a named clause or a document brought in whole)'],
      ['Keyword slot', x.placement === 'keyword_slot' ? 'yes' : 'no'],
      ['Exact match', p.match === 'exact' || x.placement === 'exact_match' ? 'yes: a section the question names' : 'no'],
      ['Names check', p.match === 'names' ? 'brought in: it holds names the question gives that the other passages lack' : 'passed with the other passages'],
    ];
    return chart(rows, notes, 'Explain chart of ' + p.id);
  }

  function searchChart(x, r, s) {
    const e = x.explain || {};
    const scale = Math.max(s.topK || 5, (e.lexical || {}).rank || 0, (e.vector || {}).rank || 0, 1);
    const minSim = r.explain && r.explain.min_similarity;
    const rows = [
      rankRow('lexical', 'Lexical', e.lexical ? e.lexical.rank : null, scale, e.lexical ? 'BM25 ' + e.lexical.score : null),
      rankRow('vector', 'Vector', e.vector ? e.vector.rank : null, scale, e.vector ? 'cosine ' + e.vector.score : null),
      scoreRow('fusion', 'Fusion', x.score, [], 'RRF ' + (e.fused ?? '') + (e.fused_rank ? ', rank ' + e.fused_rank : '')),
      scoreRow('similarity', 'Similarity', x.similarity, minSim ? [['min', Math.round(minSim * 100) / 100]] : [], 'no reranker in strata_search'),
    ];
    const notes = [
      ['Placement', e.reason || e.placement || 'not explained'],
      ['Keyword slot', e.placement === 'keyword_slot' ? 'yes' : 'no'],
      ['Exact match', x.match === 'exact' || e.placement === 'exact_match' ? 'yes' : (e.exact_terms && e.exact_terms.length ? 'holds ' + e.exact_terms.join(', ') + ' as written' : 'no')],
      ['Names check', 'strata_ask only'],
    ];
    return chart(rows, notes, 'Explain chart of result ' + x.ref);
  }

  // A row: a channel's rank (a longer bar for a better rank, none when the
  // channel did not find it) or a score from 0 to 1 with marks.
  function rankRow(key, label, rank, scale, detail) {
    return { key, label, value: rank ? (scale - rank + 1) / scale : null,
      text: rank ? 'rank ' + rank + (detail ? ' · ' + detail : '') : 'not found by this channel', marks: [] };
  }

  function scoreRow(key, label, score, marks, detail) {
    const v = typeof score === 'number' ? Math.max(0, Math.min(1, score)) : null;
    return { key, label, value: v, text: (v === null ? 'no score' : String(score)) + (detail ? ' · ' + detail : ''), marks };
  }

  function svg(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    return n;
  }

  // chart draws the rows as an inline SVG (attributes only: the CSP
  // allows no style attribute) and lists the rest as text.
  function chart(rows, notes, title) {
    const W = 320, LABEL = 78, BAR = W - LABEL - 8, ROW = 34;
    const root = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + rows.length * ROW, role: 'img', 'aria-label': title });
    root.append(svg('title', {}, title + ': ' + rows.map((r) => r.label + ' ' + r.text).join('; ')));
    rows.forEach((r, i) => {
      const y = i * ROW;
      const g = svg('g', { class: 'row row-' + r.key, 'data-row': r.key });
      g.append(svg('text', { x: 0, y: y + 14, class: 'label' }, r.label));
      g.append(svg('rect', { x: LABEL, y: y + 4, width: BAR, height: 12, class: 'track' }));
      if (r.value !== null) {
        g.append(svg('rect', { x: LABEL, y: y + 4, width: Math.max(1, Math.round(BAR * r.value)), height: 12, class: 'bar bar-' + r.key, 'data-value': r.value }));
      }
      for (const [name, at] of r.marks) {
        const mx = LABEL + Math.round(BAR * Math.max(0, Math.min(1, at)));
        g.append(svg('line', { x1: mx, x2: mx, y1: y + 1, y2: y + 19, class: 'mark mark-' + name, 'data-mark': name, 'data-at': at }));
      }
      // The marks are named on one line under the bar, lowest first: two
      // labels at their lines would overlap when the marks are close.
      const named = r.marks.slice().sort((a, b) => a[1] - b[1]).map(([name, at]) => name + ' ' + at).join(' · ');
      g.append(svg('text', { x: LABEL, y: y + 30, class: r.marks.length ? 'mark-label' : 'value' }, r.marks.length ? 'marks: ' + named : r.text));
      root.append(g);
    });
    const list = facts(rows.filter((r) => r.marks.length).map((r) => [r.label, r.text]).concat(notes));
    return el('div', { class: 'chart-box' }, root, list);
  }

  (async function start() {
    await loadLayers();
    const s = state();
    showState(s);
    if (s.q) await run(s);
  })();
})();
