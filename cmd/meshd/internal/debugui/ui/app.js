// meshd debug UI: the live dependency graph of the krt collections, their
// items, events and errors, "explain" for one key, the xDS proxies and the
// source problems. Plain modern JS, no build step; dagre (vendored) lays the
// graph out. Every URL is relative, so the page works under any prefix.
'use strict';

const NODE_W = 188;
const NODE_H = 64;
const PAGE = 50;

const state = {
  summary: null,     // the latest GraphSummary
  structure: '',     // nodes and edges of the laid-out graph, to spot changes
  byName: new Map(), // name -> CollectionSummary
  byId: new Map(),   // id -> CollectionSummary
  edges: [],         // merged edges: {from, to, kinds: [], reads}
  selected: null,    // the selected collection's name
  panel: null,       // 'collection' | 'explain' | null
  items: { prefix: '', offset: 0 },
  itemsVersion: -1,  // the graph version the shown items were loaded at
  explain: null,     // {key, collection} of the explanation shown
  highlight: new Set(),
  pos: new Map(),    // name -> laid-out centre of its node
  view: { x: 0, y: 0, k: 1 },
  userMoved: false,
  bounds: null,
  proxies: null,
  problems: null,
  replica: null,     // the latest ReplicaResult
};

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function sv(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  setAttrs(e, attrs);
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

async function getJSON(url) {
  const r = await fetch(url, { headers: { Accept: 'application/json' } });
  let body = null;
  try { body = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const err = new Error((body && body.error) || `${r.status} ${r.statusText}`);
    err.status = r.status;
    throw err;
  }
  return body;
}

const enc = encodeURIComponent;

// ---- formatting -----------------------------------------------------------

function fmtNum(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + 'M';
  if (n >= 1e4) return (n / 1e3).toFixed(n >= 1e5 ? 0 : 1) + 'k';
  return String(n);
}

function fmtRate(r) {
  if (!r) return '0/s';
  if (r < 0.1) return '<0.1/s';
  return (r < 10 ? r.toFixed(1) : Math.round(r)) + '/s';
}

function fmtTime(t) {
  if (!t) return '';
  const d = new Date(t);
  return d.toLocaleTimeString([], { hour12: false });
}

function fmtAgo(t) {
  if (!t) return '—';
  const s = Math.max(0, (Date.now() - new Date(t).getTime()) / 1000);
  if (s < 1) return 'just now';
  if (s < 60) return Math.floor(s) + 's ago';
  if (s < 3600) return Math.floor(s / 60) + 'm ago';
  if (s < 86400) return Math.floor(s / 3600) + 'h ago';
  return Math.floor(s / 86400) + 'd ago';
}

// shortType drops import paths from a Go type name, type arguments
// included: "collections.Resource[*github.com/x/cluster/v3.Cluster]"
// becomes "collections.Resource[*v3.Cluster]".
function shortType(t) {
  return t.replace(/(?:[\w.~-]+\/)+/g, '');
}

// nodeType is the shorter form a node shows: without the package of the
// outer type either ("Resource[*v3.Cluster]").
function nodeType(t) {
  return shortType(t).replace(/^(\*?)\w+\./, '$1');
}

function shortTypeURL(u) {
  const i = u.lastIndexOf('.');
  return i >= 0 ? u.slice(i + 1) : u;
}

// fitText shortens an SVG text with an ellipsis until it fits width. It
// needs the text laid out, and reports false while the graph is hidden.
function fitText(t, width) {
  if (t.getComputedTextLength() === 0) return false;
  const full = t.textContent;
  let n = full.length;
  while (n > 4 && t.getComputedTextLength() > width) {
    n--;
    t.textContent = full.slice(0, n) + '…';
  }
  return true;
}

// fitNodeTexts fits the labels of the nodes not fitted yet: those drawn
// while another tab was showing are fitted when the graph shows again.
function fitNodeTexts() {
  for (const g of $('nodes').children) {
    if (g._fitted) continue;
    g._fitted = fitText(g.querySelector('.name'), NODE_W - 40) && fitText(g.querySelector('.meta'), NODE_W - 26);
  }
}

function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

function pretty(v) { return JSON.stringify(v, null, 2); }

// ---- tabs -----------------------------------------------------------------

function showTab(name) {
  for (const b of document.querySelectorAll('.tab-button')) b.classList.toggle('active', b.dataset.tab === name);
  for (const p of document.querySelectorAll('.tab-pane')) p.classList.toggle('active', p.id === 'tab-' + name);
  document.body.dataset.tab = name;
  if (name === 'graph') {
    fitNodeTexts();
    if (!state.userMoved) fit();
  }
}

// ---- the graph ------------------------------------------------------------

function applySummary(s) {
  const first = !state.summary;
  state.summary = s;
  state.byName = new Map(s.collections.map((c) => [c.name, c]));
  state.byId = new Map(s.collections.map((c) => [c.id, c]));
  state.edges = mergeEdges(s.edges);
  $('graph-count').textContent = s.collections.length;
  $('graph-empty').hidden = s.collections.length > 0;
  const errs = s.collections.filter(isFailing).length;
  $('graph-meta').textContent = `version ${s.version} · ${s.collections.length} collections · ${state.edges.length} edges` +
    (errs ? ` · ${errs} failing` : '');
  updateCollectionSelect();

  const structure = JSON.stringify([s.collections.map((c) => [c.id, c.name, c.kind]), state.edges.map((e) => [e.from, e.to, e.kinds])]);
  if (structure !== state.structure) {
    state.structure = structure;
    layoutAndRender();
    if (first || !state.userMoved) fit();
  } else {
    updateNodes();
  }
  applyHighlight();
  if (state.panel === 'collection' && state.selected) {
    if (!state.byName.has(state.selected)) closePanel();
    else refreshCollectionPanel();
  }
}

// mergeEdges folds the engine's edges (one per from, to and kind) into one
// drawn edge per pair of collections.
function mergeEdges(edges) {
  const m = new Map();
  for (const e of edges) {
    if (e.from === e.to) continue;
    const k = e.from + '>' + e.to;
    let x = m.get(k);
    if (!x) { x = { from: e.from, to: e.to, kinds: [], reads: 0 }; m.set(k, x); }
    if (!x.kinds.includes(e.kind)) x.kinds.push(e.kind);
    x.reads += e.reads || 0;
  }
  const order = ['primary', 'join', 'index', 'fetch'];
  const out = [...m.values()];
  for (const e of out) e.kinds.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return out;
}

function isFailing(c) { return c.failingInputs > 0 || c.conflicts > 0; }

function layoutAndRender() {
  const s = state.summary;
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 52, edgesep: 8, marginx: 24, marginy: 24, ranker: 'network-simplex' });
  g.setDefaultEdgeLabel(() => ({}));
  const hasIn = new Set(state.edges.map((e) => e.to));
  const hasOut = new Set(state.edges.map((e) => e.from));
  state.pos = new Map();
  for (const c of s.collections) g.setNode('n' + c.id, { width: NODE_W, height: NODE_H });
  for (const e of state.edges) g.setEdge('n' + e.from, 'n' + e.to, { weight: e.kinds.includes('primary') || e.kinds.includes('join') ? 3 : 1, minlen: 1 });
  // Pull sources (collections that read nothing) into the first column and
  // outputs (collections nobody reads) into the last, through invisible
  // anchors, so the picture reads left to right from inputs to xDS outputs.
  g.setNode('src', { width: 1, height: 1 });
  g.setNode('sink', { width: 1, height: 1 });
  for (const c of s.collections) {
    if (!hasIn.has(c.id)) g.setEdge('src', 'n' + c.id, { weight: 8, minlen: 1 });
    if (!hasOut.has(c.id) && hasIn.has(c.id)) g.setEdge('n' + c.id, 'sink', { weight: 8, minlen: 1 });
  }
  dagre.layout(g);

  const nodes = $('nodes');
  const edges = $('edges');
  nodes.replaceChildren();
  edges.replaceChildren();
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const c of s.collections) {
    const n = g.node('n' + c.id);
    state.pos.set(c.name, { x: n.x, y: n.y });
    minX = Math.min(minX, n.x - NODE_W / 2); maxX = Math.max(maxX, n.x + NODE_W / 2);
    minY = Math.min(minY, n.y - NODE_H / 2); maxY = Math.max(maxY, n.y + NODE_H / 2);
    nodes.append(renderNode(c, n.x, n.y));
  }
  fitNodeTexts();
  for (const e of state.edges) {
    const pts = g.edge('n' + e.from, 'n' + e.to).points;
    const from = state.byId.get(e.from).name;
    const to = state.byId.get(e.to).name;
    const p = sv('path', {
      class: 'edge ' + e.kinds.map((k) => 'ek-' + k).join(' '),
      d: curve(pts),
      'marker-end': 'url(#arrow)',
      dataset: { from, to, kinds: e.kinds.join(',') },
    });
    const t = sv('title');
    t.textContent = `${from} → ${to} (${e.kinds.join(', ')}${e.reads ? ', ' + e.reads + ' reads' : ''})`;
    p.append(t);
    edges.append(p);
  }
  state.bounds = s.collections.length ? { minX, minY, maxX, maxY } : null;
  updateNodes();
}

// curve draws a smooth path through dagre's edge points.
function curve(pts) {
  if (pts.length < 3) return `M${pts[0].x},${pts[0].y}L${pts[pts.length - 1].x},${pts[pts.length - 1].y}`;
  let d = `M${pts[0].x},${pts[0].y}`;
  for (let i = 1; i < pts.length - 1; i++) {
    const mx = (pts[i].x + pts[i + 1].x) / 2;
    const my = (pts[i].y + pts[i + 1].y) / 2;
    d += `Q${pts[i].x},${pts[i].y} ${i === pts.length - 2 ? pts[i + 1].x : mx},${i === pts.length - 2 ? pts[i + 1].y : my}`;
  }
  return d;
}

function renderNode(c, x, y) {
  const g = sv('g', {
    class: 'node kind-' + c.kind,
    transform: `translate(${x - NODE_W / 2},${y - NODE_H / 2})`,
    dataset: { name: c.name, id: String(c.id) },
    tabindex: '0',
  });
  g.append(sv('rect', { class: 'box', width: NODE_W, height: NODE_H, rx: 8, ry: 8 }));
  g.append(sv('rect', { class: 'stripe', width: 5, height: NODE_H - 12, x: 5, y: 6, rx: 2.5 }));
  const name = sv('text', { class: 'name', x: 18, y: 21 });
  name.textContent = clip(c.name, 30);
  const meta = sv('text', { class: 'meta', x: 18, y: 38 });
  meta.textContent = clip(`${c.kind} · ${nodeType(c.type)}`, 40);
  const stats = sv('text', { class: 'stats', x: 18, y: 55 });
  const size = sv('tspan', { class: 'size' });
  const sep = sv('tspan', { class: 'sep' });
  sep.textContent = ' · ';
  const rate = sv('tspan', { class: 'rate' });
  stats.append(size, sep, rate);
  const badge = sv('g', { class: 'badge', transform: `translate(${NODE_W - 3},3)` });
  badge.append(sv('circle', { r: 10 }), sv('text', { class: 'badge-text', 'text-anchor': 'middle', y: 4 }));
  const sync = sv('circle', { class: 'sync', cx: NODE_W - 12, cy: 16, r: 3.5 });
  const title = sv('title');
  g.append(name, meta, stats, badge, sync, title);
  g.addEventListener('click', (ev) => { ev.stopPropagation(); selectCollection(c.name); });
  g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') selectCollection(c.name); });
  g._last = null;
  return g;
}

// updateNodes refreshes the numbers and error state of the drawn nodes in
// place, without a new layout.
function updateNodes() {
  for (const g of $('nodes').children) {
    const c = state.byName.get(g.dataset.name);
    if (!c) continue;
    g.querySelector('.size').textContent = `${fmtNum(c.size)} item${c.size === 1 ? '' : 's'}`;
    g.querySelector('.rate').textContent = `${fmtRate(c.eventRate)} · ${fmtNum(c.eventsEmitted)} ev`;
    g.classList.toggle('failing', isFailing(c));
    g.classList.toggle('had-errors', c.errors > 0 && !isFailing(c));
    g.classList.toggle('unsynced', !c.synced);
    g.classList.toggle('active', c.eventRate > 0);
    const badge = g.querySelector('.badge');
    badge.style.display = c.errors > 0 || isFailing(c) ? '' : 'none';
    badge.querySelector('text').textContent = fmtNum(Math.max(c.errors, c.failingInputs + c.conflicts));
    g.querySelector('title').textContent =
      `${c.name}\n${c.kind} of ${c.type}\n${c.size} items, ${c.synced ? 'synced' : 'NOT synced'}\n` +
      `${c.eventsEmitted} events, ${c.recomputes} recomputes, ${c.errors} errors` +
      (c.failingInputs ? `\n${c.failingInputs} failing inputs` : '') +
      (c.conflicts ? `\n${c.conflicts} key conflicts` : '') +
      (c.lastError ? `\nlast error: ${c.lastError}` : '');
    const sig = c.eventsEmitted + '/' + c.size + '/' + c.errors;
    if (g._last !== null && g._last !== sig) {
      g.classList.remove('pulse');
      void g.getBoundingClientRect(); // restart the animation
      g.classList.add('pulse');
    }
    g._last = sig;
  }
}

function applyHighlight() {
  const sel = state.selected;
  const hi = state.highlight;
  const focus = sel || hi.size > 0;
  const near = new Set();
  if (sel) {
    near.add(sel);
    for (const e of state.edges) {
      const f = state.byId.get(e.from).name, t = state.byId.get(e.to).name;
      if (f === sel) near.add(t);
      if (t === sel) near.add(f);
    }
  }
  for (const g of $('nodes').children) {
    const n = g.dataset.name;
    g.classList.toggle('selected', n === sel);
    g.classList.toggle('explained', hi.has(n));
    g.classList.toggle('dim', focus && !near.has(n) && !hi.has(n));
  }
  for (const p of $('edges').children) {
    const on = sel && (p.dataset.from === sel || p.dataset.to === sel);
    const ex = hi.size > 0 && hi.has(p.dataset.from) && hi.has(p.dataset.to);
    p.classList.toggle('hi', !!(on || ex));
    p.classList.toggle('dim', focus && !on && !ex);
    p.setAttribute('marker-end', on || ex ? 'url(#arrow-hi)' : 'url(#arrow)');
  }
}

// ---- pan and zoom ---------------------------------------------------------

function applyView() {
  const v = state.view;
  $('viewport').setAttribute('transform', `translate(${v.x},${v.y}) scale(${v.k})`);
}

// visibleWidth is the width of the graph not covered by the side panel.
function visibleWidth() {
  const w = $('graph').clientWidth;
  return state.panel ? Math.max(200, w - $('panel').offsetWidth) : w;
}

function fit() {
  const b = state.bounds;
  const svg = $('graph');
  const w = visibleWidth(), h = svg.clientHeight;
  if (!b || !w || !h) return;
  // Room for the zoom buttons above and the legend below.
  const pad = { top: 48, bottom: 48, left: 20, right: 20 };
  const gw = b.maxX - b.minX, gh = b.maxY - b.minY;
  const k = Math.min(1.25, (w - pad.left - pad.right) / gw, (h - pad.top - pad.bottom) / gh);
  state.view = {
    k,
    x: pad.left + (w - pad.left - pad.right - gw * k) / 2 - b.minX * k,
    y: pad.top + (h - pad.top - pad.bottom - gh * k) / 2 - b.minY * k,
  };
  applyView();
}

// ensureVisible pans, without zooming, so that the node of the named
// collection is not hidden under the side panel or outside the view.
function ensureVisible(name) {
  const c = state.pos.get(name);
  if (!c) return;
  const v = state.view;
  const w = visibleWidth(), h = $('graph').clientHeight;
  const x = v.x + c.x * v.k, y = v.y + c.y * v.k;
  const hw = (NODE_W / 2) * v.k + 16, hh = (NODE_H / 2) * v.k + 16;
  if (x - hw >= 0 && x + hw <= w && y - hh >= 0 && y + hh <= h) return;
  if (x - hw < 0 || x + hw > w) v.x += w / 2 - x;
  if (y - hh < 0 || y + hh > h) v.y += h / 2 - y;
  applyView();
}

function zoomAt(factor, cx, cy) {
  const v = state.view;
  const k = Math.min(4, Math.max(0.1, v.k * factor));
  v.x = cx - (cx - v.x) * (k / v.k);
  v.y = cy - (cy - v.y) * (k / v.k);
  v.k = k;
  state.userMoved = true;
  applyView();
}

function setupPanZoom() {
  const svg = $('graph');
  svg.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  let drag = null;
  svg.addEventListener('pointerdown', (ev) => {
    if (ev.target.closest('.node')) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: state.view.x, vy: state.view.y, moved: false };
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    state.view.x = drag.vx + dx;
    state.view.y = drag.vy + dy;
    if (drag.moved) { state.userMoved = true; svg.classList.add('panning'); }
    applyView();
  });
  const end = () => {
    if (drag && !drag.moved && state.panel) closePanel();
    drag = null;
    svg.classList.remove('panning');
  };
  svg.addEventListener('pointerup', end);
  svg.addEventListener('pointercancel', () => { drag = null; svg.classList.remove('panning'); });
  $('fit').addEventListener('click', () => { state.userMoved = false; fit(); });
  $('zoom-in').addEventListener('click', () => zoomAt(1.25, svg.clientWidth / 2, svg.clientHeight / 2));
  $('zoom-out').addEventListener('click', () => zoomAt(0.8, svg.clientWidth / 2, svg.clientHeight / 2));
  // Refit when the window changes size, unless the user has placed the
  // view themselves.
  new ResizeObserver(() => { if (!state.userMoved) fit(); }).observe(svg);
}

// ---- the side panel: one collection ----------------------------------------

function openPanel(kind) {
  state.panel = kind;
  $('panel').hidden = false;
  document.body.classList.add('panel-open');
}

function closePanel() {
  state.panel = null;
  state.selected = null;
  state.explain = null;
  state.highlight = new Set();
  $('panel').hidden = true;
  document.body.classList.remove('panel-open');
  applyHighlight();
}

function selectCollection(name) {
  showTab('graph');
  if (state.selected !== name) state.items = { prefix: '', offset: 0 };
  state.selected = name;
  state.explain = null;
  state.highlight = new Set();
  openPanel('collection');
  applyHighlight();
  ensureVisible(name);
  renderCollectionShell(name);
  state.itemsVersion = -1;
  refreshCollectionPanel();
}

function renderCollectionShell(name) {
  const body = $('panel-body');
  body.replaceChildren(
    el('div', { class: 'panel-head' },
      el('div', { class: 'eyebrow', id: 'p-kind' }),
      el('h2', { id: 'p-name', text: name }),
      el('div', { class: 'p-type', id: 'p-type' })),
    el('div', { class: 'stat-grid', id: 'p-stats' }),
    el('section', { class: 'p-sec' },
      el('h3', {}, 'Reads from'), el('div', { class: 'chips', id: 'p-up' })),
    el('section', { class: 'p-sec' },
      el('h3', {}, 'Read by'), el('div', { class: 'chips', id: 'p-down' })),
    el('section', { class: 'p-sec', id: 'p-errors-sec' },
      el('h3', {}, 'Recent errors ', el('span', { class: 'count', id: 'p-errors-count' })),
      el('div', { id: 'p-errors' })),
    el('section', { class: 'p-sec' },
      el('h3', {}, 'Items ', el('span', { class: 'count', id: 'p-items-count' })),
      el('div', { class: 'items-bar' },
        el('input', {
          id: 'p-prefix', type: 'search', placeholder: 'filter by key prefix', value: state.items.prefix,
          oninput: debounce((ev) => { state.items = { prefix: ev.target.value, offset: 0 }; loadItems(); }, 200),
        }),
        el('div', { class: 'pager', id: 'p-pager' })),
      el('div', { class: 'items', id: 'p-items' })),
    el('section', { class: 'p-sec' },
      el('h3', {}, 'Recent events ', el('span', { class: 'count', id: 'p-events-count' })),
      el('div', { id: 'p-events' })),
  );
}

let detailSeq = 0;

async function refreshCollectionPanel() {
  const name = state.selected;
  const seq = ++detailSeq;
  let d;
  try {
    d = await getJSON('api/collections/' + enc(name));
  } catch (err) {
    if (seq === detailSeq && state.selected === name) $('p-stats').replaceChildren(el('div', { class: 'error-text' }, err.message));
    return;
  }
  if (seq !== detailSeq || state.selected !== name || state.panel !== 'collection') return;
  $('p-kind').textContent = d.kind + (d.synced ? ' · synced' : ' · not synced');
  $('p-kind').className = 'eyebrow kind-' + d.kind;
  $('p-type').textContent = shortType(d.type);
  $('p-type').title = d.type;
  const stat = (label, value, cls) => el('div', { class: 'stat ' + (cls || '') }, el('b', {}, value), el('span', {}, label));
  $('p-stats').replaceChildren(
    stat('items', fmtNum(d.size)),
    stat('events/s', fmtRate(d.eventRate).replace('/s', '')),
    stat('events', fmtNum(d.eventsEmitted)),
    stat('inputs', fmtNum(d.inputsProcessed)),
    stat('recomputes', fmtNum(d.recomputes)),
    stat('errors', fmtNum(d.errors), d.errors ? 'bad' : ''),
    stat('failing inputs', fmtNum(d.failingInputs), d.failingInputs ? 'bad' : ''),
    stat('handlers', fmtNum(d.handlers)),
  );
  const chip = (l) => el('button', {
    type: 'button', class: 'chip', title: l.kind + (l.reads ? `, ${l.reads} reads` : ''),
    onclick: () => selectCollection(l.name),
  }, l.name, el('small', {}, l.kind));
  // Sections are rebuilt only when their content changed, so that what the
  // user opened (a stack, an item) stays open while updates stream in.
  replaceIfChanged('p-up', [d.upstreams, d.kind], () => d.upstreams.length ? d.upstreams.map(chip) : [el('span', { class: 'muted' }, d.kind === 'static' ? 'nothing: a source' : 'nothing')]);
  replaceIfChanged('p-down', d.downstreams, () => d.downstreams.length ? d.downstreams.map(chip) : [el('span', { class: 'muted' }, 'nothing: an output')]);

  const errs = (d.recentErrors || []).slice().reverse();
  $('p-errors-count').textContent = errs.length ? errs.length : '';
  $('p-errors-sec').classList.toggle('has-errors', errs.length > 0);
  replaceIfChanged('p-errors', errs, () => errs.length ? errs.map(renderError) : [el('div', { class: 'muted' }, 'none recorded')]);

  const evs = (d.recentEvents || []).slice().reverse();
  $('p-events-count').textContent = evs.length ? evs.length : '';
  replaceIfChanged('p-events', evs, () => [evs.length
    ? el('table', { class: 'events' },
      el('tbody', {}, evs.map((e) => el('tr', {},
        el('td', { class: 'time' }, fmtTime(e.time)),
        el('td', { class: 'ver' }, 'v' + e.version),
        el('td', {}, el('span', { class: 'ev ev-' + e.type }, e.type)),
        el('td', { class: 'key' }, e.key)))))
    : el('div', { class: 'muted' }, 'none recorded')]);
  // Items change only with the version.
  const v = state.summary ? state.summary.version : 0;
  if (state.itemsVersion !== v || !$('p-items').hasChildNodes()) {
    state.itemsVersion = v;
    loadItems();
  }
}

// replaceIfChanged replaces the children of the element id with build()
// unless data is the same as the last time.
function replaceIfChanged(id, data, build) {
  const e = $(id);
  const key = JSON.stringify(data);
  if (e._key === key) return;
  e._key = key;
  e.replaceChildren(...build());
}

function renderError(e) {
  return el('details', { class: 'err' },
    el('summary', {},
      el('span', { class: 'time' }, fmtTime(e.time)),
      e.key ? el('code', {}, e.key) : null,
      el('span', { class: 'msg' }, e.error)),
    e.stack ? el('pre', { class: 'stack' }, e.stack) : el('div', { class: 'muted' }, 'no stack recorded'));
}

let itemsSeq = 0;

async function loadItems() {
  const name = state.selected;
  if (!name) return;
  const { prefix, offset } = state.items;
  const seq = ++itemsSeq;
  let page;
  try {
    page = await getJSON(`api/collections/${enc(name)}/items?prefix=${enc(prefix)}&offset=${offset}&limit=${PAGE}`);
  } catch (err) {
    if (seq === itemsSeq) $('p-items').replaceChildren(el('div', { class: 'error-text' }, err.message));
    return;
  }
  if (seq !== itemsSeq || state.selected !== name) return;
  const open = new Set([...document.querySelectorAll('#p-items details[open]')].map((d) => d.dataset.key));
  $('p-items-count').textContent = page.total;
  $('p-items').replaceChildren(...(page.items.length
    ? page.items.map((it) => el('details', { class: 'item', dataset: { key: it.key }, open: open.has(it.key) },
      el('summary', {}, el('code', {}, it.key)),
      el('pre', {}, pretty(it.value))))
    : [el('div', { class: 'muted' }, prefix ? `no key starts with “${prefix}”` : 'empty')]));
  const last = Math.min(page.offset + page.items.length, page.total);
  $('p-pager').replaceChildren(
    el('button', {
      type: 'button', id: 'p-prev', disabled: page.offset === 0,
      onclick: () => { state.items.offset = Math.max(0, page.offset - PAGE); loadItems(); },
    }, '‹'),
    el('span', { class: 'range' }, page.total ? `${page.offset + 1}–${last} of ${page.total}` : '0 of 0'),
    el('button', {
      type: 'button', id: 'p-next', disabled: last >= page.total,
      onclick: () => { state.items.offset = page.offset + PAGE; loadItems(); },
    }, '›'),
  );
}

function debounce(fn, ms) {
  let t = null;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}

// ---- the side panel: explain ----------------------------------------------

function updateCollectionSelect() {
  const sel = $('explain-collection');
  const names = state.summary.collections.map((c) => c.name).sort();
  const have = [...sel.options].slice(1).map((o) => o.value);
  if (have.join('\n') === names.join('\n')) return;
  const cur = sel.value;
  sel.replaceChildren(el('option', { value: '' }, 'in any collection'), ...names.map((n) => el('option', { value: n }, n)));
  sel.value = names.includes(cur) ? cur : '';
}

async function explain(key, collection) {
  showTab('graph');
  state.selected = null;
  state.explain = { key, collection };
  openPanel('explain');
  const body = $('panel-body');
  body.replaceChildren(el('div', { class: 'panel-head' }, el('div', { class: 'eyebrow' }, 'explain'), el('h2', {}, key)), el('div', { class: 'muted' }, 'looking…'));
  let res;
  try {
    res = await getJSON(`api/explain?key=${enc(key)}${collection ? '&collection=' + enc(collection) : ''}`);
  } catch (err) {
    state.highlight = new Set();
    applyHighlight();
    body.replaceChildren(
      el('div', { class: 'panel-head' }, el('div', { class: 'eyebrow' }, 'explain'), el('h2', {}, key)),
      el('div', { class: 'notfound', id: 'explain-error' }, err.status === 404 ? `Not found: ${err.message}` : err.message));
    return;
  }
  const hi = new Set();
  const cards = res.results.map((r) => {
    hi.add(r.collection);
    if (r.inputFrom) hi.add(r.inputFrom);
    for (const rd of r.reads || []) hi.add(rd.collection);
    return renderExplanation(r);
  });
  state.highlight = hi;
  applyHighlight();
  body.replaceChildren(
    el('div', { class: 'panel-head' }, el('div', { class: 'eyebrow' }, 'explain'), el('h2', {}, key),
      el('div', { class: 'p-type' }, `found in ${res.results.length} collection${res.results.length === 1 ? '' : 's'}` +
        (state.summary ? ` · as of version ${state.summary.version}` : ''))),
    ...cards);
}

function renderExplanation(r) {
  const link = (name) => el('button', { type: 'button', class: 'chip', onclick: () => selectCollection(name) }, name);
  const c = state.byName.get(r.collection);
  const rows = [];
  if (r.input) {
    rows.push(el('p', { class: 'why' }, 'Produced by input ', el('code', { class: 'input-key' }, r.input),
      r.inputFrom ? [' of ', link(r.inputFrom)] : null, '.'));
  } else if (c && c.kind === 'static') {
    rows.push(el('p', { class: 'why' }, 'A source item: it was written to this static collection directly.'));
  } else {
    rows.push(el('p', { class: 'why' }, 'No recorded producer.'));
  }
  if (r.reads && r.reads.length) {
    rows.push(el('h4', {}, 'Its last computation read'),
      el('table', { class: 'reads' }, el('tbody', {}, r.reads.map((rd) => el('tr', {},
        el('td', {}, link(rd.collection)), el('td', {}, el('code', {}, rd.filter)))))));
  } else if (r.input) {
    rows.push(el('p', { class: 'muted' }, 'Its last computation read nothing but its input.'));
  }
  if (r.contenders && r.contenders.length) {
    rows.push(el('p', { class: 'warn' }, 'Also claimed by inputs: ', r.contenders.join(', ')));
  }
  if (r.lastError) {
    rows.push(el('p', { class: 'error-text' }, 'Failing: ', r.lastError.error, ' (serving the last good output)'));
  }
  if (r.value !== undefined) rows.push(el('details', { class: 'item', open: true }, el('summary', {}, 'value'), el('pre', {}, pretty(r.value))));
  if (r.inputValue !== undefined) rows.push(el('details', { class: 'item' }, el('summary', {}, 'input value'), el('pre', {}, pretty(r.inputValue))));
  return el('div', { class: 'explain-card', dataset: { collection: r.collection } },
    el('div', { class: 'explain-title' }, link(r.collection), c ? el('span', { class: 'muted' }, c.kind + ' · ' + shortType(c.type)) : null),
    rows);
}

// ---- proxies --------------------------------------------------------------

const VERDICT_TEXT = {
  'up-to-date': 'up to date',
  pending: 'awaiting ACK',
  rejecting: 'rejecting config',
  stale: 'stale',
  disconnected: 'disconnected',
};

function renderProxies() {
  const res = state.proxies;
  const box = $('proxies');
  if (!res) return;
  if (!res.available) {
    $('proxies-count').textContent = '';
    box.replaceChildren(el('div', { class: 'empty-box', id: 'no-xds' }, 'No xDS server is attached to this debug UI.'));
    return;
  }
  const ps = res.proxies;
  const bad = ps.filter((p) => p.verdict !== 'up-to-date').length;
  $('proxies-count').textContent = ps.length;
  $('proxies-count').classList.toggle('bad', ps.some((p) => p.verdict === 'rejecting' || p.verdict === 'stale'));
  if (!ps.length) {
    box.replaceChildren(el('div', { class: 'empty-box' }, 'No proxy has connected yet.'));
    return;
  }
  const counts = {};
  for (const p of ps) counts[p.verdict] = (counts[p.verdict] || 0) + 1;
  const summary = el('div', { class: 'proxy-summary' },
    Object.entries(counts).map(([v, n]) => el('span', { class: 'verdict v-' + v }, `${n} ${VERDICT_TEXT[v] || v}`)),
    bad ? null : el('span', { class: 'muted' }, 'all proxies are up to date'));
  const cards = ps.map((p) => el('div', { class: 'proxy v-' + p.verdict, dataset: { node: p.nodeId } },
    el('div', { class: 'proxy-head' },
      el('span', { class: 'verdict v-' + p.verdict }, VERDICT_TEXT[p.verdict] || p.verdict),
      el('code', { class: 'node-id' }, p.nodeId),
      el('span', { class: 'muted' }, [p.cluster, p.address, p.protocol].filter(Boolean).join(' · ')),
      el('button', { type: 'button', class: 'dump-btn', onclick: () => showDump(p.nodeId) }, 'Config dump')),
    el('div', { class: 'proxy-times' },
      p.state === 'disconnected'
        ? el('span', {}, 'disconnected ', el('b', { title: p.disconnectedAt || '' }, fmtAgo(p.disconnectedAt)))
        : el('span', {}, 'connected ', el('b', { title: p.connectedSince || '' }, fmtAgo(p.connectedSince))),
      el('span', {}, 'last push ', el('b', { title: p.lastPush || '' }, fmtAgo(p.lastPush))),
      p.pendingPushes ? el('span', {}, 'pending pushes ', el('b', {}, p.pendingPushes)) : null,
      p.metadata && Object.keys(p.metadata).length
        ? el('details', { class: 'meta' }, el('summary', {}, `metadata (${Object.keys(p.metadata).length})`),
          el('div', { class: 'meta-list' }, Object.entries(p.metadata).sort().map(([k, v]) => el('code', {}, `${k}=${v}`))))
        : null),
    el('table', { class: 'types' },
      el('thead', {}, el('tr', {}, el('th', {}, 'type'), el('th', {}, 'subscribed'), el('th', {}, 'sent'), el('th', {}, 'ACKed'), el('th', {}, 'last NACK'))),
      el('tbody', {}, (p.types || []).map((t) => {
        const rejecting = t.lastNack && (!t.lastAck || new Date(t.lastNack.time) >= new Date(t.lastAck));
        return el('tr', { class: rejecting ? 'rejecting' : (t.sentVersion !== t.ackedVersion ? 'pending' : '') },
          el('td', { title: t.typeUrl }, shortTypeURL(t.typeUrl)),
          el('td', {}, t.wildcard ? 'all (wildcard)' : `${(t.subscribed || []).length} named`),
          el('td', {}, el('code', { title: t.sentVersion || '' }, shortVersion(t.sentVersion)),
            el('span', { class: 'muted' }, ` · ${t.pushes || 0} pushes`),
            t.resumed ? el('span', { class: 'muted', title: 'reconnected holding the current config: nothing was re-sent' }, ' · resumed') : null),
          el('td', {}, el('code', { title: t.ackedVersion || '' }, shortVersion(t.ackedVersion))),
          el('td', { class: 'nack' }, t.lastNack
            ? [el('code', {}, t.lastNack.version || '?'), ' ', el('span', { class: 'muted' }, fmtAgo(t.lastNack.time)),
              el('div', { class: 'nack-reason' + (rejecting ? '' : ' old') }, t.lastNack.reason),
              t.rejected && t.rejected.length
                ? el('div', { class: 'muted', title: t.rejected.join('\n') }, `held at an older version: ${t.rejected.length}`)
                : null]
            : el('span', { class: 'muted' }, 'none')));
      })))));
  box.replaceChildren(summary, ...cards);
}

// shortVersion abbreviates a version digest (32 hex digits) for the table;
// the cell's title holds it whole.
function shortVersion(v) {
  if (!v) return '—';
  return v.length > 12 ? v.slice(0, 12) + '…' : v;
}

async function showDump(id) {
  $('dump').hidden = false;
  $('dump-title').textContent = 'Config dump of ' + id;
  $('dump-body').textContent = 'loading…';
  try {
    const d = await getJSON('api/proxies/' + enc(id) + '/config');
    $('dump-body').textContent = pretty(d);
  } catch (err) {
    $('dump-body').textContent = err.message;
  }
}

// ---- problems -------------------------------------------------------------

function renderProblems() {
  const res = state.problems;
  const box = $('problems');
  if (!res) return;
  if (!res.available) {
    $('problems-count').textContent = '';
    box.replaceChildren(el('div', { class: 'empty-box' }, 'No source reports problems to this debug UI.'));
    return;
  }
  const ps = res.problems;
  $('problems-count').textContent = ps.length || '';
  $('problems-count').classList.toggle('bad', ps.length > 0);
  if (!ps.length) {
    box.replaceChildren(el('div', { class: 'empty-box ok' }, 'No problems: every source is readable and valid.'));
    return;
  }
  box.replaceChildren(el('table', { class: 'problems' },
    el('thead', {}, el('tr', {}, el('th', {}, 'source'), el('th', {}, 'object'), el('th', {}, 'error'), el('th', {}, 'since'))),
    el('tbody', {}, ps.map((p) => el('tr', {},
      el('td', {}, el('code', {}, p.source)),
      el('td', {}, p.object || ''),
      el('td', { class: 'error-text' }, p.error),
      el('td', { class: 'time', title: p.since || '' }, fmtAgo(p.since)))))));
}

// ---- replica --------------------------------------------------------------

// renderReplica shows in the header whether this replica leads the
// replicas' election (and so writes to the cluster) or stands by; the badge
// stays hidden when the binary runs without leader election.
function renderReplica() {
  const res = state.replica;
  const badge = $('replica');
  if (!res) return;
  if (!res.available || !res.replica) {
    badge.hidden = true;
    badge.dataset.role = 'none';
    return;
  }
  const r = res.replica;
  const self = r.leader && r.leader === r.identity;
  let text = 'leader';
  if (!r.leading) {
    if (!r.leader) text = 'standby · no leader seen yet';
    else text = 'standby · leader: ' + r.leader + (self ? ' (this replica)' : '');
  }
  const since = r.since ? `${new Date(r.since).toLocaleString([], { hour12: false })} (${fmtAgo(r.since)})` : '';
  const lines = [
    r.leading ? 'This replica leads: it serves xDS and writes to the cluster.'
      : 'This replica stands by: it serves xDS; only the leader writes to the cluster.',
    `lease: ${r.lease}`,
    `this replica: ${r.identity}`,
    `leader: ${r.leader || 'none seen yet'}${since ? ', since ' + since : ''}`,
    `terms won by this replica: ${r.terms}`,
  ];
  if (self && !r.leading) lines.push('The Lease still names this replica, which is not leading: its term is ending or starting.');
  badge.textContent = text;
  badge.title = lines.join('\n');
  badge.dataset.role = r.leading ? 'leader' : 'standby';
  badge.hidden = false;
}

// ---- live updates ---------------------------------------------------------

function setStatus(s, text) {
  $('status').dataset.state = s;
  $('status-text').textContent = text;
  // While the stream is down the role shown may be out of date.
  $('replica').classList.toggle('stale', s === 'down');
}

function connect() {
  const es = new EventSource('api/stream');
  es.addEventListener('open', () => setStatus('live', 'live'));
  es.addEventListener('graph', (ev) => {
    const s = JSON.parse(ev.data);
    setStatus('live', 'live · v' + s.version);
    applySummary(s);
  });
  es.addEventListener('proxies', (ev) => { state.proxies = JSON.parse(ev.data); renderProxies(); });
  es.addEventListener('problems', (ev) => { state.problems = JSON.parse(ev.data); renderProblems(); });
  es.addEventListener('replica', (ev) => { state.replica = JSON.parse(ev.data); renderReplica(); });
  es.addEventListener('error', () => setStatus('down', 'reconnecting…'));
}

function init() {
  for (const b of document.querySelectorAll('.tab-button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  $('panel-close').addEventListener('click', closePanel);
  $('dump-close').addEventListener('click', () => { $('dump').hidden = true; });
  $('explain-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = $('explain-key').value.trim();
    if (key) explain(key, $('explain-collection').value);
  });
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && state.panel) closePanel(); });
  setupPanZoom();
  document.body.dataset.tab = 'graph';
  // The stream sends proxies and problems only when a source is attached;
  // ask once so that the tabs can say when none is.
  getJSON('api/proxies').then((r) => { if (!state.proxies) { state.proxies = r; renderProxies(); } }).catch(() => {});
  getJSON('api/problems').then((r) => { if (!state.problems) { state.problems = r; renderProblems(); } }).catch(() => {});
  getJSON('api/replica').then((r) => { if (!state.replica) { state.replica = r; renderReplica(); } }).catch(() => {});
  connect();
  // Keep relative times ("12s ago") current.
  setInterval(() => {
    if (document.body.dataset.tab === 'proxies') renderProxies();
    renderReplica();
  }, 5000);
}

init();
