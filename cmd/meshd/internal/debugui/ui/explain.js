// "Explain" in the side panel: for each collection holding an output key,
// the input that produced it and what its last computation read.

import { $, el } from './dom.js';
import { shortType, pretty } from './format.js';
import { api } from './api.js';
import { state } from './state.js';
import { applyHighlight } from './graph.js';
import { openPanel, selectCollection } from './panel.js';
import { showTab } from './tabs.js';
import { links, setLink } from './location.js';

// updateCollectionSelect keeps the form's list of collections current.
export function updateCollectionSelect() {
  const sel = $('explain-collection');
  const names = state.summary.collections.map((c) => c.name).sort();
  const have = [...sel.options].slice(1).map((o) => o.value);
  if (have.join('\n') === names.join('\n')) return;
  const cur = sel.value;
  sel.replaceChildren(el('option', { value: '' }, 'in any collection'), ...names.map((n) => el('option', { value: n }, n)));
  sel.value = names.includes(cur) ? cur : '';
}

const head = (key, ...rest) => el('div', { class: 'panel-head' }, el('div', { class: 'eyebrow' }, 'explain'), el('h2', {}, key), ...rest);

// explain shows why key exists, in collection or in any.
export async function explain(key, collection) {
  showTab('graph');
  state.selected = null;
  openPanel('explain');
  state.panelLink = links.explain(key, collection);
  setLink(state.panelLink);
  // Shown in the form too, as when it came from there.
  $('explain-key').value = key;
  if ([...$('explain-collection').options].some((o) => o.value === (collection || ''))) $('explain-collection').value = collection || '';
  const body = $('panel-body');
  body.replaceChildren(head(key), el('div', { class: 'muted' }, 'looking…'));
  let res;
  try {
    res = await api.explain(key, collection);
  } catch (err) {
    state.highlight = new Set();
    applyHighlight();
    body.replaceChildren(head(key),
      el('div', { class: 'notfound', id: 'explain-error' }, err.status === 404 ? `Not found: ${err.message}` : err.message));
    return;
  }
  state.highlight = new Set(res.results.flatMap((r) => [r.collection, r.inputFrom, ...r.reads.map((rd) => rd.collection)]).filter(Boolean));
  applyHighlight();
  const n = res.results.length;
  body.replaceChildren(
    head(key, el('div', { class: 'p-type' }, `found in ${n} collection${n === 1 ? '' : 's'}` +
      (state.summary ? ` · as of version ${state.summary.version}` : ''))),
    ...res.results.map(renderExplanation));
}

const link = (name) => el('button', { type: 'button', class: 'chip', onclick: () => selectCollection(name) }, name);

function renderExplanation(r) {
  const c = state.byName.get(r.collection);
  return el('div', { class: 'explain-card', dataset: { collection: r.collection } },
    el('div', { class: 'explain-title' }, link(r.collection), c ? el('span', { class: 'muted' }, c.kind + ' · ' + shortType(c.type)) : null),
    producer(r, c), reads(r),
    r.contenders.length ? el('p', { class: 'warn' }, 'Also claimed by inputs: ', r.contenders.join(', ')) : null,
    r.lastError ? el('p', { class: 'error-text' }, 'Failing: ', r.lastError.error, ' (serving the last good output)') : null,
    r.value !== undefined ? el('details', { class: 'item', open: true }, el('summary', {}, 'value'), el('pre', {}, pretty(r.value))) : null,
    r.inputValue !== undefined ? el('details', { class: 'item' }, el('summary', {}, 'input value'), el('pre', {}, pretty(r.inputValue))) : null);
}

function producer(r, c) {
  if (r.input) {
    return el('p', { class: 'why' }, 'Produced by input ', el('code', { class: 'input-key' }, r.input),
      r.inputFrom ? [' of ', link(r.inputFrom)] : null, '.');
  }
  if (c && c.kind === 'static') return el('p', { class: 'why' }, 'A source item: it was written to this static collection directly.');
  return el('p', { class: 'why' }, 'No recorded producer.');
}

function reads(r) {
  if (r.reads.length) {
    return [el('h4', {}, 'Its last computation read'),
      el('table', { class: 'reads' }, el('tbody', {}, r.reads.map((rd) => el('tr', {},
        el('td', {}, link(rd.collection)), el('td', {}, el('code', {}, rd.filter))))))];
  }
  return r.input ? el('p', { class: 'muted' }, 'Its last computation read nothing but its input.') : null;
}
