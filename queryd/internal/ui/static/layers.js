// layers.js: the Layers page (/ui/).
'use strict';
(function () {
  const { el, api } = window.strata;
  const box = document.getElementById('layers');
  api('/v1/layers').then((page) => {
    box.replaceChildren(el('ul', null, page.layers.map((l) => el('li', null, l.name + ': ' + l.documents + ' documents'))));
  }).catch(() => box.replaceChildren(el('p', { class: 'reason' }, 'The layers could not be read.')));
})();
