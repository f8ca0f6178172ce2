// Building the page's elements. Text always goes in as text nodes or
// textContent, never as markup, so nothing the server sends can become
// HTML.

const SVG = 'http://www.w3.org/2000/svg';

// $ returns the element with the id.
export const $ = (id) => document.getElementById(id);

// el makes an HTML element with attributes and children; a child is a
// node, or text; null and false children are skipped.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// sv makes an SVG element with attributes.
export function sv(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  setAttrs(e, attrs);
  return e;
}

// svText makes an SVG element holding text.
export function svText(tag, attrs, text) {
  const e = sv(tag, attrs);
  e.textContent = text;
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') e.setAttribute('class', v);
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : v);
  }
}

// replaceIfChanged replaces the children of the element id with build()
// unless data is the same as the last time, so that what the user opened
// (a stack, an item) stays open while updates stream in.
export function replaceIfChanged(id, data, build) {
  const e = $(id);
  const key = JSON.stringify(data);
  if (e._key === key) return;
  e._key = key;
  e.replaceChildren(...build());
}

// showAbsent empties the count of the tab whose box has the id tab and
// puts message in the box: the answer said its view is not available.
export function showAbsent(tab, message, attrs) {
  $(tab + '-count').textContent = '';
  $(tab).replaceChildren(el('div', { class: 'empty-box', ...attrs }, message));
}

export function debounce(fn, ms) {
  let t = null;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}
