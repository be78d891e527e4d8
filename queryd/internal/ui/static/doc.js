// doc.js: the Document page (/ui/doc/{id}).
'use strict';
(function () {
  const { el } = window.strata;
  document.getElementById('doc-text').replaceChildren(el('p', null, 'Not built yet.'));
})();
