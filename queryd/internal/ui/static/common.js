// common.js: what every page of the StrataKB explorer uses.
//
//   el(tag, attrs, ...children)  builds an element; children that are not
//                                nodes become text nodes, never HTML.
//   api(path, body)              calls the JSON HTTP API with this tab's
//                                bearer token (GET without a body, POST with
//                                one); a 401 asks for a token and retries; an
//                                error answer is shown and thrown.
//   fill(node, ...children)      replaces node's children, as el treats them.
//   citeLink(target, label)      a link to the Document page at a span:
//                                target is a ref ("d12:100-180~9f86d081") or
//                                {document_id, lines: "30-31"}.
//
// Document text is untrusted: no code here or in the pages assigns
// innerHTML, and the server's Content-Security-Policy allows no inline
// script, so text that looks like markup stays text.
'use strict';

(function () {
  const TOKEN_KEY = 'stratakb.token';

  // el builds an element. attrs: class, dataset (an object), on<event>
  // (a function), a boolean true for an empty attribute; null, undefined
  // and false leave the attribute out. An href must be a path on this
  // server or a fragment.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') {
        node.className = value;
      } else if (key === 'dataset') {
        Object.assign(node.dataset, value);
      } else if (key.startsWith('on')) {
        if (typeof value !== 'function') throw new Error('el: ' + key + ' takes a function');
        node.addEventListener(key.slice(2), value);
      } else {
        if ((key === 'href' || key === 'src') && !/^(\/(?!\/)|#)/.test(String(value))) {
          throw new Error('el: ' + key + ' must be a path on this server: ' + value);
        }
        node.setAttribute(key, value === true ? '' : String(value));
      }
    }
    append(node, children);
    return node;
  }

  // fill replaces node's children with children, as el treats them.
  function fill(node, ...children) {
    node.replaceChildren();
    return append(node, children);
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // ApiError is an error answer of the API: status, code, message and the
  // argument it names, if any.
  class ApiError extends Error {
    constructor(status, code, message, argument) {
      super(message);
      this.status = status;
      this.code = code;
      this.argument = argument || '';
    }
  }

  function showError(err) {
    const box = document.getElementById('error');
    if (box) {
      const what = err.status ? 'Error ' + err.status + ' (' + err.code + ')' : 'Error';
      box.replaceChildren(el('strong', null, what + ': '), err.message,
        err.argument ? ' [argument: ' + err.argument + ']' : '');
      box.hidden = false;
    }
    return err;
  }

  function clearError() {
    const box = document.getElementById('error');
    if (box) { box.hidden = true; box.replaceChildren(); }
  }

  // askToken shows the token form and resolves once a token is entered;
  // calls waiting at the same time share one prompt.
  let pending = null;
  function askToken(why) {
    if (pending) return pending;
    const form = document.getElementById('token-form');
    const input = document.getElementById('token-input');
    document.getElementById('token-why').textContent = why;
    form.hidden = false;
    input.value = '';
    input.focus();
    pending = new Promise((resolve) => {
      form.addEventListener('submit', function onSubmit(ev) {
        ev.preventDefault();
        const token = input.value.trim();
        if (!token) return;
        sessionStorage.setItem(TOKEN_KEY, token);
        form.removeEventListener('submit', onSubmit);
        form.hidden = true;
        pending = null;
        resolve(token);
      });
    });
    return pending;
  }

  async function api(path, body) {
    for (;;) {
      const token = sessionStorage.getItem(TOKEN_KEY);
      const headers = { Accept: 'application/json' };
      if (token) headers.Authorization = 'Bearer ' + token;
      const init = { headers, credentials: 'omit', cache: 'no-store' };
      if (body !== undefined) {
        init.method = 'POST';
        headers['Content-Type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      let resp;
      try {
        resp = await fetch(path, init);
      } catch (e) {
        throw showError(new ApiError(0, 'unreachable', 'queryd did not answer (' + e.message + ')'));
      }
      if (resp.status === 401) {
        sessionStorage.removeItem(TOKEN_KEY);
        await askToken(token ? 'The server refused that token; enter another.' : 'This server needs a bearer token.');
        continue;
      }
      const data = await resp.json().catch(() => null);
      if (!resp.ok) {
        const e = (data && data.error) || {};
        throw showError(new ApiError(resp.status, e.code || 'http_' + resp.status, e.message || resp.statusText, e.argument));
      }
      clearError();
      return data;
    }
  }

  const REF = /^d(\d+):(\d+)-(\d+)(?:~[0-9a-f]{8})?$/;

  // docHref is the Document page's address for target (see citeLink), or
  // null when target names no document.
  function docHref(target) {
    if (typeof target === 'string') {
      const m = REF.exec(target.trim());
      return m ? '/ui/doc/' + m[1] + '#r' + m[2] + '-' + m[3] : null;
    }
    const id = Number(target && (target.document_id ?? target.doc));
    if (!Number.isSafeInteger(id) || id <= 0) return null;
    const lines = /^(\d+)(?:-(\d+))?$/.exec(String(target.lines || ''));
    if (!lines) return '/ui/doc/' + id;
    return '/ui/doc/' + id + '#L' + lines[1] + '-' + (lines[2] || lines[1]);
  }

  // citeLink returns a link to the cited span, labelled with label (or
  // the target itself); a target naming no document gives plain text.
  function citeLink(target, label) {
    const href = docHref(target);
    const text = label || (typeof target === 'string' ? target : 'document ' + (target && (target.document_id ?? target.doc)));
    return href ? el('a', { href, class: 'cite' }, text) : el('span', { class: 'cite' }, text);
  }

  // table builds a table from column headings and rows of cells (nodes or
  // text), with a caption for screen readers.
  function table(caption, headings, rows) {
    return el('div', { class: 'table-wrap' },
      el('table', null,
        el('caption', null, caption),
        el('thead', null, el('tr', null, headings.map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', null, rows.map((r) => el('tr', null, r.map((c) => el('td', null, c)))))));
  }

  window.strata = { el, append, fill, api, ApiError, showError, clearError, citeLink, docHref, table, askToken };
})();
