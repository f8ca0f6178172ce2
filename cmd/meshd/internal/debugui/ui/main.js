// meshd debug UI: the live dependency graph of the krt collections, their
// items, events and errors, "explain" for one key, the xDS proxies, the
// source problems and the remote clusters. Plain modern JS modules, no build step; dagre (vendored)
// lays the graph out. Every URL is relative, so the page works under any
// prefix. This module wires the others to the page and the event stream.

import { $ } from './dom.js';
import { api, decodeEvent } from './api.js';
import { state } from './state.js';
import { initGraph, showSummary } from './graph.js';
import { setupPanZoom } from './view.js';
import { showTab } from './tabs.js';
import { selectCollection, closePanel, refreshPanel } from './panel.js';
import { explain, updateCollectionSelect } from './explain.js';
import { showProxies, hasProxies, focusProxy } from './proxies.js';
import { showProblems, hasProblems } from './problems.js';
import { showReplica, hasReplica } from './replica.js';
import { showClusters, hasClusters } from './clusters.js';
import { links, setLink, currentLink } from './location.js';

function setStatus(s, text) {
  $('status').dataset.state = s;
  $('status-text').textContent = text;
  // While the stream is down the role shown may be out of date.
  $('replica').classList.toggle('stale', s === 'down');
}

let linkShown = false; // the page's link was opened, once the graph came

function onGraph(s) {
  setStatus('live', 'live · v' + s.version);
  showSummary(s);
  updateCollectionSelect();
  refreshPanel();
  if (!linkShown) {
    linkShown = true;
    showLink();
  }
}

// showLink opens what the page's URL names (see location.js): on load,
// once the graph is known, and when the fragment changes.
function showLink() {
  const l = currentLink();
  switch (l.view) {
    case 'collection':
      if (state.selected !== l.name) selectCollection(l.name);
      break;
    case 'explain':
      explain(l.name, l.collection);
      break;
    case 'proxy':
      showTab('proxies');
      focusProxy(l.name);
      break;
    case 'proxies': case 'problems': case 'clusters':
      showTab(l.view);
      break;
    default:
      showTab('graph');
      if (state.panel) closePanel();
  }
}

function connect() {
  const es = new EventSource('api/stream');
  const on = (name, show) => es.addEventListener(name, (ev) => show(decodeEvent(name, ev.data)));
  es.addEventListener('open', () => setStatus('live', 'live'));
  on('graph', onGraph);
  on('proxies', showProxies);
  on('problems', showProblems);
  on('replica', showReplica);
  on('clusters', showClusters);
  es.addEventListener('error', () => setStatus('down', 'reconnecting…'));
}

function wireControls() {
  for (const b of document.querySelectorAll('.tab-button')) {
    b.addEventListener('click', () => {
      showTab(b.dataset.tab);
      // Back on the graph, the link is that of the panel still open.
      setLink(b.dataset.tab === 'graph' && state.panelLink ? state.panelLink : links.tab(b.dataset.tab));
    });
  }
  window.addEventListener('hashchange', () => { if (linkShown) showLink(); });
  $('panel-close').addEventListener('click', closePanel);
  $('dump-close').addEventListener('click', () => { $('dump').hidden = true; });
  $('explain-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = $('explain-key').value.trim();
    if (key) explain(key, $('explain-collection').value);
  });
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && state.panel) closePanel(); });
  setupPanZoom(() => { if (state.panel) closePanel(); });
}

function init() {
  wireControls();
  initGraph(selectCollection);
  document.body.dataset.tab = 'graph';
  // The stream sends proxies, problems and the replica only when a source
  // is attached; ask once so that the tabs can say when none is.
  const ask = (get, has, show) => get().then((r) => { if (!has()) show(r); }).catch(() => {});
  ask(api.proxies, hasProxies, showProxies);
  ask(api.problems, hasProblems, showProblems);
  ask(api.replica, hasReplica, showReplica);
  ask(api.clusters, hasClusters, showClusters);
  connect();
  // Keep relative times ("12s ago") current.
  setInterval(() => {
    if (document.body.dataset.tab === 'proxies') showProxies();
    if (document.body.dataset.tab === 'clusters') showClusters();
    showReplica();
  }, 5000);
}

init();
