// learning.js: the Learning page (/ui/learning). strata_learning_stats
// (POST /v1/learning/stats) as tables: synonyms with their usage,
// rewrites, layer affinities, the ratings and the promoter's last run.
// The reset (strata_reset_learning, admins only) shows only when the
// server says this token may call it, and runs after a confirmation.
'use strict';
(function () {
  const { el, api, table, fill, clearError } = window.strata;
  const box = document.getElementById('learning');
  const filter = document.getElementById('learning-filter');
  const layerInput = document.getElementById('learning-layer');
  const reset = document.getElementById('reset');
  const resetForm = document.getElementById('reset-form');
  const resetLayer = document.getElementById('reset-layer');
  const resetResult = document.getElementById('reset-result');
  const confirmBox = document.getElementById('reset-confirm');

  function when(ts) {
    return ts ? new Date(ts).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : 'never';
  }

  function section(id, title, what, rows) {
    return el('section', { 'aria-labelledby': id },
      el('h2', { id }, title + ' (' + rows.length + ')'),
      rows.length ? what(rows) : el('p', { class: 'muted' }, 'Nothing learned yet.'));
  }

  function show(s) {
    const fb = s.feedback || {};
    const run = s.promoter_last_run;
    fill(box,
      section('learned-synonyms', 'Synonyms', (rows) => table('Synonyms, most used first in each layer',
        ['Term', 'Synonym', 'Layer', 'Used', 'Callers', 'Learned'],
        rows.map((r) => [r.term, r.synonym, r.layer || 'any', String(r.usage_count), String(r.callers), when(r.learned_at)])), s.synonyms || []),
      section('learned-rewrites', 'Rewrites', (rows) => table('Rewordings that found an answer',
        ['Question', 'Rewrite', 'Layer', 'Proofs', 'Callers', 'Used', 'Found', 'Last used'],
        rows.map((r) => [r.question, r.rewrite, r.layer || 'any', String(r.proofs), String(r.callers), String(r.use_count), String(r.success_count), when(r.last_used_at)])), s.rewrites || []),
      section('learned-affinities', 'Layer affinities', (rows) => table('Terms and the layers they belong to',
        ['Term', 'Layer', 'Evidence', 'Switches', 'Corrections', 'Helpful'],
        rows.map((r) => [r.term, r.layer, String(r.evidence), String(r.switches), String(r.corrections), String(r.helpful)])), s.affinities || []),
      el('section', { 'aria-labelledby': 'learned-feedback' },
        el('h2', { id: 'learned-feedback' }, 'Ratings and the promoter'),
        table('Ratings given', ['Ratings', 'Helpful', 'Not helpful', 'Passages useful', 'Wrong', 'Outdated'],
          [[fb.ratings, fb.helpful, fb.not_helpful, fb.chunks_useful, fb.chunks_wrong, fb.chunks_outdated].map((n) => String(n ?? 0))]),
        el('p', null, run
          ? 'The promoter last ran ' + when(run.finished_at) + ': ' + run.interactions + ' interactions read, ' + run.synonyms_learned + ' synonyms, ' +
            run.rewrites_learned + ' rewrites and ' + run.affinities_learned + ' affinities learned.'
          : 'The promoter has not run yet.'),
        s.pending_resets ? el('p', { class: 'warning' }, s.pending_resets + ' reset(s) wait for the promoter\'s next run.') : null,
        s.note ? el('p', { class: 'hint' }, s.note) : null));
  }

  async function load() {
    const body = layerInput.value.trim() ? { layer: layerInput.value.trim() } : {};
    try {
      show(await api('/v1/learning/stats', body));
    } catch (e) {
      fill(box, el('p', { class: 'reason' }, 'What was learned cannot be shown: ' + e.message));
    }
  }

  // mayReset asks the server whether this token may reset: a reset request
  // that names no scope resets nothing; the server refuses it as
  // incomplete (400) for an admin and as forbidden (403) for anyone else.
  async function mayReset() {
    try {
      await api('/v1/learning/reset', {});
      return true; // not expected: the server accepted an empty reset
    } catch (e) {
      clearError();
      return e.status === 400;
    }
  }

  function resetRequest() {
    return resetForm.elements.scope.value === 'all' ? { scope: 'all' } : { layer: resetLayer.value.trim() };
  }

  resetForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const req = resetRequest();
    if (req.layer === '') {
      resetResult.textContent = 'Name the layer to reset, or choose everything.';
      resetLayer.focus();
      return;
    }
    document.getElementById('reset-confirm-text').textContent = req.scope === 'all'
      ? 'Everything learned, in every layer, stops being applied now and is deleted for good on the promoter\'s next run.'
      : 'What was learned for the layer "' + req.layer + '" stops being applied now and is deleted on the promoter\'s next run; the history is kept.';
    confirmBox.returnValue = '';
    confirmBox.showModal();
    document.getElementById('reset-confirm-yes').focus();
  });

  confirmBox.addEventListener('close', async () => {
    if (confirmBox.returnValue !== 'reset') {
      resetResult.textContent = 'Nothing was reset.';
      return;
    }
    try {
      const r = await api('/v1/learning/reset', resetRequest());
      // The tables are shown again first, so that the result line never
      // stands beside tables from before the reset.
      await load();
      resetResult.textContent = 'Reset ' + r.reset_id + ' (' + r.scope + (r.layer ? ' ' + r.layer : '') + '): ' + r.note;
    } catch (e) {
      resetResult.textContent = e.status === 403
        ? 'The server refused: resetting what was learned is for admin tokens only, and this tab\'s token is not one.'
        : 'Nothing was reset: ' + e.message;
    }
  });

  filter.addEventListener('submit', (ev) => { ev.preventDefault(); load(); });

  (async function start() {
    await load();
    reset.hidden = !(await mayReset());
  })();
})();
