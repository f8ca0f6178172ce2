// The graph tab: the collections as nodes laid out left to right by dagre
// (the vendored global), their edges, live numbers, and the highlight of
// what is selected or explained.

import { $, sv, svText } from './dom.js';
import { fmtNum, fmtRate, nodeType, clip } from './format.js';
import { state } from './state.js';
import { NODE_W, NODE_H, setLayout, fit, fitUnlessMoved } from './view.js';

let structure = '';      // nodes and edges of the laid-out graph, to spot changes
let onSelect = () => {}; // called with a collection's name when its node is chosen

// initGraph sets what choosing a node does.
export function initGraph(select) { onSelect = select; }

// showSummary draws a GraphSummary: anew when collections or edges
// changed, else by updating the numbers of the drawn nodes.
export function showSummary(s) {
  const first = !state.summary;
  state.summary = s;
  state.byName = new Map(s.collections.map((c) => [c.name, c]));
  state.byId = new Map(s.collections.map((c) => [c.id, c]));
  state.edges = mergeEdges(s.edges);
  $('graph-count').textContent = s.collections.length;
  $('graph-empty').hidden = s.collections.length > 0;
  const errs = s.collections.filter(isFailing).length;
  // A stalled transformation holds every later write: say which, and for
  // how long (for is in nanoseconds); its stack is in the tooltip.
  const stall = s.stalled ? ` · stalled: ${s.stalled.collection} ${s.stalled.key} for ${Math.round(s.stalled.for / 1e9)}s` : '';
  // Queued writes waiting say the engine is behind its sources; dropped
  // ones are a bug (the log has their stacks).
  const q = s.queue;
  const queued = (q.waiting ? ` · ${q.waiting} writes queued` : '') + (q.dropped ? ` · ${q.dropped} queued writes dropped` : '');
  $('graph-meta').textContent = `version ${s.version} · ${s.collections.length} collections · ${state.edges.length} edges` +
    (errs ? ` · ${errs} failing` : '') + queued + stall;
  $('graph-meta').title = s.stalled ? s.stalled.stack : '';
  const now = JSON.stringify([s.collections.map((c) => [c.id, c.name, c.kind]), state.edges.map((e) => [e.from, e.to, e.kinds])]);
  if (now !== structure) {
    structure = now;
    layoutAndRender();
    if (first) fit();
    else fitUnlessMoved();
  } else {
    updateNodes();
  }
  applyHighlight();
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
    x.reads += e.reads;
  }
  const order = ['primary', 'join', 'index', 'fetch'];
  const out = [...m.values()];
  for (const e of out) e.kinds.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return out;
}

export function isFailing(c) { return c.failingInputs > 0 || c.conflicts > 0; }

// layout places the nodes with dagre and returns its graph.
function layout() {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 52, edgesep: 8, marginx: 24, marginy: 24, ranker: 'network-simplex' });
  g.setDefaultEdgeLabel(() => ({}));
  const hasIn = new Set(state.edges.map((e) => e.to));
  const hasOut = new Set(state.edges.map((e) => e.from));
  const cs = state.summary.collections;
  for (const c of cs) g.setNode('n' + c.id, { width: nodeWidth(c), height: NODE_H });
  for (const e of state.edges) g.setEdge('n' + e.from, 'n' + e.to, { weight: e.kinds.includes('primary') || e.kinds.includes('join') ? 3 : 1, minlen: 1 });
  // Pull sources (collections that read nothing) into the first column and
  // outputs (collections nobody reads) into the last, through invisible
  // anchors, so the picture reads left to right from inputs to xDS outputs.
  g.setNode('src', { width: 1, height: 1 });
  g.setNode('sink', { width: 1, height: 1 });
  for (const c of cs) {
    if (!hasIn.has(c.id)) g.setEdge('src', 'n' + c.id, { weight: 8, minlen: 1 });
    if (!hasOut.has(c.id) && hasIn.has(c.id)) g.setEdge('n' + c.id, 'sink', { weight: 8, minlen: 1 });
  }
  dagre.layout(g);
  return g;
}

function layoutAndRender() {
  const g = layout();
  const pos = new Map();
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  const nodes = [];
  for (const c of state.summary.collections) {
    const n = g.node('n' + c.id);
    pos.set(c.name, { x: n.x, y: n.y, w: n.width });
    minX = Math.min(minX, n.x - n.width / 2); maxX = Math.max(maxX, n.x + n.width / 2);
    minY = Math.min(minY, n.y - NODE_H / 2); maxY = Math.max(maxY, n.y + NODE_H / 2);
    nodes.push(renderNode(c, n.x, n.y, n.width));
  }
  $('nodes').replaceChildren(...nodes);
  fitNodeTexts();
  $('edges').replaceChildren(...state.edges.map((e) => renderEdge(e, g.edge('n' + e.from, 'n' + e.to).points)));
  setLayout(pos, nodes.length ? { minX, minY, maxX, maxY } : null);
  updateNodes();
}

// The name's font (.node .name in style.css), and the room around it:
// the stripe on the left, the sync dot and the badge on the right.
const NAME_FONT = '600 13.5px';
const NAME_ROOM = 44;
let measurer = null;

// nodeWidth is the width of c's node: wide enough for its whole name,
// which is never cut, and at least NODE_W. The name is measured on a
// canvas, which works while the graph is hidden too.
function nodeWidth(c) {
  if (!measurer) {
    measurer = document.createElement('canvas').getContext('2d');
    measurer.font = NAME_FONT + ' ' + getComputedStyle(document.documentElement).getPropertyValue('--sans');
  }
  return Math.max(NODE_W, Math.ceil(measurer.measureText(c.name).width) + NAME_ROOM);
}

function renderEdge(e, points) {
  const from = state.byId.get(e.from).name;
  const to = state.byId.get(e.to).name;
  const p = sv('path', {
    class: 'edge ' + e.kinds.map((k) => 'ek-' + k).join(' '),
    d: curve(points),
    'marker-end': 'url(#arrow)',
    dataset: { from, to, kinds: e.kinds.join(',') },
  });
  p.append(svText('title', {}, `${from} → ${to} (${e.kinds.join(', ')}${e.reads ? ', ' + e.reads + ' reads' : ''})`));
  return p;
}

// curve draws a smooth path through dagre's edge points.
function curve(pts) {
  const last = pts[pts.length - 1];
  if (pts.length < 3) return `M${pts[0].x},${pts[0].y}L${last.x},${last.y}`;
  let d = `M${pts[0].x},${pts[0].y}`;
  for (let i = 1; i < pts.length - 1; i++) {
    const end = i === pts.length - 2;
    const mx = end ? pts[i + 1].x : (pts[i].x + pts[i + 1].x) / 2;
    const my = end ? pts[i + 1].y : (pts[i].y + pts[i + 1].y) / 2;
    d += `Q${pts[i].x},${pts[i].y} ${mx},${my}`;
  }
  return d;
}

function renderNode(c, x, y, w) {
  const g = sv('g', {
    class: 'node kind-' + c.kind,
    transform: `translate(${x - w / 2},${y - NODE_H / 2})`,
    dataset: { name: c.name, id: String(c.id) },
    tabindex: '0',
  });
  const stats = sv('text', { class: 'stats', x: 18, y: 55 });
  stats.append(sv('tspan', { class: 'size' }), svText('tspan', { class: 'sep' }, ' · '), sv('tspan', { class: 'rate' }));
  const badge = sv('g', { class: 'badge', transform: `translate(${w - 3},3)` });
  badge.append(sv('circle', { r: 10 }), sv('text', { class: 'badge-text', 'text-anchor': 'middle', y: 4 }));
  g.append(
    sv('rect', { class: 'box', width: w, height: NODE_H, rx: 8, ry: 8 }),
    sv('rect', { class: 'stripe', width: 5, height: NODE_H - 12, x: 5, y: 6, rx: 2.5 }),
    svText('text', { class: 'name', x: 18, y: 21 }, c.name),
    svText('text', { class: 'meta', x: 18, y: 38 }, clip(`${c.kind} · ${nodeType(c.type)}`, 40)),
    stats, badge,
    sv('circle', { class: 'sync', cx: w - 12, cy: 16, r: 3.5 }),
    sv('title'));
  g.addEventListener('click', (ev) => { ev.stopPropagation(); onSelect(c.name); });
  g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') onSelect(c.name); });
  g._last = null;
  g._w = w;
  return g;
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

// fitNodeTexts fits the kind and type lines of the nodes not fitted yet:
// those drawn while another tab was showing are fitted when the graph
// shows again.
export function fitNodeTexts() {
  for (const g of $('nodes').children) {
    if (g._fitted) continue;
    // The name is never cut (nodeWidth made room); the kind and type may be.
    g._fitted = fitText(g.querySelector('.meta'), g._w - 26);
  }
}

// updateNodes refreshes the numbers and error state of the drawn nodes in
// place, without a new layout.
function updateNodes() {
  for (const g of $('nodes').children) {
    const c = state.byName.get(g.dataset.name);
    if (c) updateNode(g, c);
  }
}

function updateNode(g, c) {
  g.querySelector('.size').textContent = `${fmtNum(c.size)} item${c.size === 1 ? '' : 's'}`;
  g.querySelector('.rate').textContent = `${fmtRate(c.eventRate)} · ${fmtNum(c.eventsEmitted)} ev`;
  g.classList.toggle('failing', isFailing(c));
  g.classList.toggle('had-errors', c.errors > 0 && !isFailing(c));
  g.classList.toggle('unsynced', !c.synced);
  // Problems the collection's items have, such as rejected routes, mark
  // the node when no transformation error does.
  g.classList.toggle('has-problems', c.problems > 0 && c.errors === 0 && !isFailing(c));
  g.classList.toggle('active', c.eventRate > 0);
  const badge = g.querySelector('.badge');
  badge.style.display = c.errors > 0 || isFailing(c) || c.problems > 0 ? '' : 'none';
  badge.querySelector('text').textContent = fmtNum(Math.max(c.errors, c.failingInputs + c.conflicts, c.problems));
  g.querySelector('title').textContent = nodeTitle(c);
  const sig = c.eventsEmitted + '/' + c.size + '/' + c.errors;
  if (g._last !== null && g._last !== sig) {
    g.classList.remove('pulse');
    void g.getBoundingClientRect(); // restart the animation
    g.classList.add('pulse');
  }
  g._last = sig;
}

function nodeTitle(c) {
  return `${c.name}\n${c.kind} of ${c.type}\n${c.size} items, ${c.synced ? 'synced' : 'NOT synced'}\n` +
    `${c.eventsEmitted} events, ${c.recomputes} recomputes, ${c.errors} errors` +
    (c.failingInputs ? `\n${c.failingInputs} failing inputs` : '') +
    (c.conflicts ? `\n${c.conflicts} key conflicts` : '') +
    (c.problems ? `\n${c.problems} problems (see the Problems tab)` : '') +
    (c.lastError ? `\nlast error: ${c.lastError}` : '');
}

// applyHighlight marks the selected collection and its neighbours, or the
// collections an explanation involves, and dims the rest.
export function applyHighlight() {
  const sel = state.selected;
  const hi = state.highlight;
  const focus = sel || hi.size > 0;
  const near = new Set(sel ? [sel] : []);
  for (const e of sel ? state.edges : []) {
    const f = state.byId.get(e.from).name, t = state.byId.get(e.to).name;
    if (f === sel) near.add(t);
    if (t === sel) near.add(f);
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
