// Pan and zoom of the graph: the viewport's transform, fitting the graph
// to the window, and keeping a node in sight.

import { $ } from './dom.js';

// The size of a node, in graph units: its least width (a long name widens
// it) and its height.
export const NODE_W = 188;
export const NODE_H = 64;

const view = { x: 0, y: 0, k: 1 };
let userMoved = false; // the user placed the view: do not refit it
let bounds = null;     // the laid-out graph's extent
let pos = new Map();   // name -> laid-out centre of its node

// setLayout records where the layout put the nodes, and the extent.
export function setLayout(positions, extent) {
  pos = positions;
  bounds = extent;
}

function applyView() {
  $('viewport').setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.k})`);
}

// visibleWidth is the graph's width: the side panel sits beside it, not
// over it.
function visibleWidth() { return $('graph').clientWidth; }

// fit scales and centres the graph in the visible part of the window.
export function fit() {
  const svg = $('graph');
  const w = visibleWidth(), h = svg.clientHeight;
  if (!bounds || !w || !h) return;
  // Room for the zoom buttons above and the legend below.
  const pad = { top: 48, bottom: 48, left: 20, right: 20 };
  const gw = bounds.maxX - bounds.minX, gh = bounds.maxY - bounds.minY;
  const k = Math.min(1.25, (w - pad.left - pad.right) / gw, (h - pad.top - pad.bottom) / gh);
  view.k = k;
  view.x = pad.left + (w - pad.left - pad.right - gw * k) / 2 - bounds.minX * k;
  view.y = pad.top + (h - pad.top - pad.bottom - gh * k) / 2 - bounds.minY * k;
  applyView();
}

// fitUnlessMoved fits the graph unless the user has placed the view.
export function fitUnlessMoved() {
  if (!userMoved) fit();
}

// ensureVisible pans, without zooming, so that the node of the named
// collection is not outside the view.
export function ensureVisible(name) {
  const c = pos.get(name);
  if (!c) return;
  const w = visibleWidth(), h = $('graph').clientHeight;
  const x = view.x + c.x * view.k, y = view.y + c.y * view.k;
  const hw = ((c.w || NODE_W) / 2) * view.k + 16, hh = (NODE_H / 2) * view.k + 16;
  if (x - hw >= 0 && x + hw <= w && y - hh >= 0 && y + hh <= h) return;
  if (x - hw < 0 || x + hw > w) view.x += w / 2 - x;
  if (y - hh < 0 || y + hh > h) view.y += h / 2 - y;
  applyView();
}

function zoomAt(factor, cx, cy) {
  const k = Math.min(4, Math.max(0.1, view.k * factor));
  view.x = cx - (cx - view.x) * (k / view.k);
  view.y = cy - (cy - view.y) * (k / view.k);
  view.k = k;
  userMoved = true;
  applyView();
}

// setupPanZoom wires the wheel, dragging and the zoom buttons; a click on
// the background, not a drag, calls onBackgroundClick.
export function setupPanZoom(onBackgroundClick) {
  const svg = $('graph');
  svg.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  setupDrag(svg, onBackgroundClick);
  $('fit').addEventListener('click', () => { userMoved = false; fit(); });
  $('zoom-in').addEventListener('click', () => zoomAt(1.25, svg.clientWidth / 2, svg.clientHeight / 2));
  $('zoom-out').addEventListener('click', () => zoomAt(0.8, svg.clientWidth / 2, svg.clientHeight / 2));
  // Refit when the window changes size, unless the user has placed the
  // view themselves.
  new ResizeObserver(fitUnlessMoved).observe(svg);
}

function setupDrag(svg, onBackgroundClick) {
  let drag = null;
  svg.addEventListener('pointerdown', (ev) => {
    if (ev.target.closest('.node')) return;
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false };
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    if (drag.moved) { userMoved = true; svg.classList.add('panning'); }
    applyView();
  });
  svg.addEventListener('pointerup', () => {
    if (drag && !drag.moved) onBackgroundClick();
    drag = null;
    svg.classList.remove('panning');
  });
  svg.addEventListener('pointercancel', () => { drag = null; svg.classList.remove('panning'); });
}
