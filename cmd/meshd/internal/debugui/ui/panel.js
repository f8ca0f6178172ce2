// The side panel of one collection: its counters, what it reads and what
// reads it, its recent errors and events, and its items page by page.

import { $, el, replaceIfChanged, debounce } from './dom.js';
import { fmtNum, fmtRate, fmtTime, shortType, pretty } from './format.js';
import { api, PAGE } from './api.js';
import { state } from './state.js';
import { applyHighlight } from './graph.js';
import { ensureVisible } from './view.js';
import { showTab } from './tabs.js';
import { links, setLink } from './location.js';

let items = { prefix: '', offset: 0 }; // the items shown
let itemsVersion = -1; // the graph version the shown items were loaded at
let detailSeq = 0;     // numbers requests, so that only the latest answer shows
let itemsSeq = 0;

export function openPanel(kind) {
  state.panel = kind;
  $('panel').hidden = false;
  document.body.classList.add('panel-open');
}

export function closePanel() {
  if (state.panel) setLink(links.graph());
  state.panel = null;
  state.panelLink = null;
  state.selected = null;
  state.highlight = new Set();
  $('panel').hidden = true;
  document.body.classList.remove('panel-open');
  applyHighlight();
}

// selectCollection opens the panel of the named collection.
export function selectCollection(name) {
  showTab('graph');
  if (state.selected !== name) items = { prefix: '', offset: 0 };
  state.selected = name;
  state.highlight = new Set();
  openPanel('collection');
  state.panelLink = links.collection(name);
  setLink(state.panelLink);
  applyHighlight();
  ensureVisible(name);
  renderShell(name);
  itemsVersion = -1;
  refreshPanel();
}

// refreshPanel updates an open collection panel after a graph update, or
// closes it when its collection is gone.
export function refreshPanel() {
  if (state.panel !== 'collection' || !state.selected) return;
  if (!state.byName.has(state.selected)) closePanel();
  else loadDetail();
}

function renderShell(name) {
  // A section with an id counts what it holds in its title.
  const section = (title, id, ...rest) => el('section', { class: 'p-sec', id: id && id + '-sec' },
    el('h3', {}, title, id ? [' ', el('span', { class: 'count', id: id + '-count' })] : null), ...rest);
  $('panel-body').replaceChildren(
    el('div', { class: 'panel-head' },
      el('div', { class: 'eyebrow', id: 'p-kind' }),
      el('h2', { id: 'p-name', text: name }),
      el('div', { class: 'p-type', id: 'p-type' })),
    el('div', { class: 'stat-grid', id: 'p-stats' }),
    section('Reads from', null, el('div', { class: 'chips', id: 'p-up' })),
    section('Read by', null, el('div', { class: 'chips', id: 'p-down' })),
    section('Recent errors', 'p-errors', el('div', { id: 'p-errors' })),
    section('Items', 'p-items',
      el('div', { class: 'items-bar' },
        el('input', {
          id: 'p-prefix', type: 'search', placeholder: 'filter by key prefix', value: items.prefix,
          oninput: debounce((ev) => { items = { prefix: ev.target.value, offset: 0 }; loadItems(); }, 200),
        }),
        el('div', { class: 'pager', id: 'p-pager' })),
      el('div', { class: 'items', id: 'p-items' })),
    section('Recent events', 'p-events', el('div', { id: 'p-events' })),
  );
}

async function loadDetail() {
  const name = state.selected;
  const seq = ++detailSeq;
  let d;
  try {
    d = await api.collection(name);
  } catch (err) {
    if (seq === detailSeq && state.selected === name) $('p-stats').replaceChildren(el('div', { class: 'error-text' }, err.message));
    return;
  }
  if (seq !== detailSeq || state.selected !== name || state.panel !== 'collection') return;
  renderHead(d);
  renderLinks(d);
  renderErrors(d.recentErrors.slice().reverse());
  renderEvents(d.recentEvents.slice().reverse());
  // Items change only with the version.
  const v = state.summary ? state.summary.version : 0;
  if (itemsVersion !== v || !$('p-items').hasChildNodes()) {
    itemsVersion = v;
    loadItems();
  }
}

function renderHead(d) {
  $('p-kind').textContent = d.kind + (d.synced ? ' · synced' : ' · not synced');
  $('p-kind').className = 'eyebrow kind-' + d.kind;
  $('p-type').textContent = shortType(d.type);
  $('p-type').title = d.type;
  const stat = (label, value, bad) => el('div', { class: 'stat ' + (bad ? 'bad' : '') }, el('b', {}, value), el('span', {}, label));
  $('p-stats').replaceChildren(
    stat('items', fmtNum(d.size)),
    stat('events/s', fmtRate(d.eventRate).replace('/s', '')),
    stat('events', fmtNum(d.eventsEmitted)),
    stat('recomputes', fmtNum(d.recomputes)),
    stat('errors', fmtNum(d.errors), d.errors),
    stat('failing inputs', fmtNum(d.failingInputs), d.failingInputs),
    stat('key conflicts', fmtNum(d.conflicts), d.conflicts),
    stat('handlers', fmtNum(d.handlers)),
  );
}

function renderLinks(d) {
  const chip = (l) => el('button', {
    type: 'button', class: 'chip', title: l.kind + (l.reads ? `, ${l.reads} reads` : ''),
    onclick: () => selectCollection(l.name),
  }, l.name, el('small', {}, l.kind));
  const none = (text) => [el('span', { class: 'muted' }, text)];
  replaceIfChanged('p-up', [d.upstreams, d.kind], () => d.upstreams.length ? d.upstreams.map(chip) : none(d.kind === 'static' ? 'nothing: a source' : 'nothing'));
  replaceIfChanged('p-down', d.downstreams, () => d.downstreams.length ? d.downstreams.map(chip) : none('nothing: an output'));
}

function renderErrors(errs) {
  $('p-errors-count').textContent = errs.length ? errs.length : '';
  $('p-errors-sec').classList.toggle('has-errors', errs.length > 0);
  replaceIfChanged('p-errors', errs, () => errs.length ? errs.map(renderError) : [el('div', { class: 'muted' }, 'none recorded')]);
}

function renderError(e) {
  return el('details', { class: 'err' },
    el('summary', {},
      el('span', { class: 'time' }, fmtTime(e.time)),
      e.key ? el('code', {}, e.key) : null,
      el('span', { class: 'msg' }, e.error)),
    e.stack ? el('pre', { class: 'stack' }, e.stack) : el('div', { class: 'muted' }, 'no stack recorded'));
}

function renderEvents(evs) {
  $('p-events-count').textContent = evs.length ? evs.length : '';
  replaceIfChanged('p-events', evs, () => [evs.length
    ? el('table', { class: 'events' },
      el('tbody', {}, evs.map((e) => el('tr', {},
        el('td', { class: 'time' }, fmtTime(e.time)),
        el('td', { class: 'ver' }, 'v' + e.version),
        el('td', {}, el('span', { class: 'ev ev-' + e.type }, e.type)),
        el('td', { class: 'key' }, e.key)))))
    : el('div', { class: 'muted' }, 'none recorded')]);
}

async function loadItems() {
  const name = state.selected;
  if (!name) return;
  const { prefix, offset } = items;
  const seq = ++itemsSeq;
  let page;
  try {
    page = await api.items(name, prefix, offset);
  } catch (err) {
    if (seq === itemsSeq) $('p-items').replaceChildren(el('div', { class: 'error-text' }, err.message));
    return;
  }
  if (seq !== itemsSeq || state.selected !== name) return;
  renderItems(page, prefix);
  renderPager(page);
}

function renderItems(page, prefix) {
  // Keep open what the user opened.
  const open = new Set([...document.querySelectorAll('#p-items details[open]')].map((d) => d.dataset.key));
  $('p-items-count').textContent = page.total;
  $('p-items').replaceChildren(...(page.items.length
    ? page.items.map((it) => el('details', { class: 'item', dataset: { key: it.key }, open: open.has(it.key) },
      el('summary', {}, el('code', {}, it.key)),
      el('pre', {}, pretty(it.value))))
    : [el('div', { class: 'muted' }, prefix ? `no key starts with “${prefix}”` : 'empty')]));
}

function renderPager(page) {
  const last = Math.min(page.offset + page.items.length, page.total);
  const go = (offset) => { items = { ...items, offset }; loadItems(); };
  $('p-pager').replaceChildren(
    el('button', {
      type: 'button', id: 'p-prev', disabled: page.offset === 0,
      onclick: () => go(Math.max(0, page.offset - PAGE)),
    }, '‹'),
    el('span', { class: 'range' }, page.total ? `${page.offset + 1}–${last} of ${page.total}` : '0 of 0'),
    el('button', {
      type: 'button', id: 'p-next', disabled: last >= page.total,
      onclick: () => go(page.offset + PAGE),
    }, '›'),
  );
}
