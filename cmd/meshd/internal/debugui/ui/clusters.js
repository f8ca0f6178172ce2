// The clusters tab: the local cluster's name and each remote cluster's
// state (syncing, synced, stale, expired, failed), when its API server
// last answered a list and a watch, what its informers hold, and its
// errors. The tab's count is of the remote clusters not synced.

import { $, el, showAbsent } from './dom.js';
import { fmtAgo, fmtNum } from './format.js';

let result = null; // the latest ClustersResult

// showClusters shows a ClustersResult; with none, it redraws the last
// one, to keep relative times current.
export function showClusters(res) {
  if (res) result = res;
  if (!result) return;
  if (!result.available) {
    showAbsent('clusters', 'This meshd joins no remote clusters (see --remote-secrets and --remote-kubeconfig).');
    return;
  }
  const cs = result.clusters;
  showCount(cs);
  const box = $('clusters');
  const local = el('p', { class: 'local-cluster' }, 'Local cluster: ',
    result.local ? el('code', {}, result.local) : el('span', { class: 'muted' }, 'unnamed (--cluster-name)'));
  if (!cs.length) {
    box.replaceChildren(local, el('div', { class: 'empty-box' }, 'No remote cluster is named yet.'));
    return;
  }
  box.replaceChildren(local, el('table', { class: 'clusters' },
    el('thead', {}, el('tr', {}, ['cluster', 'state', 'last list', 'last watch', 'objects', 'errors'].map((h) => el('th', {}, h)))),
    el('tbody', {}, cs.map(renderCluster))));
}

// showCount puts in the tab the clusters not synced, in red, of all.
function showCount(cs) {
  const count = $('clusters-count');
  const troubled = cs.filter((c) => c.state !== 'synced').length;
  count.textContent = troubled ? `${troubled}/${cs.length}` : String(cs.length || '');
  count.classList.toggle('bad', troubled > 0);
  count.title = `${cs.length} remote clusters, ${troubled} not synced`;
}

// hasClusters reports whether an answer was shown yet.
export function hasClusters() { return result !== null; }

// stateNotes say what a state means for the cluster's endpoints.
const stateNotes = {
  syncing: 'listing; it joins the mesh once listed',
  synced: 'joined; its API server answers',
  stale: 'its API server has not answered past the stale grace; its last endpoints are served, flagged stale',
  expired: 'unreachable past the stale timeout; its endpoints left the mesh until it answers',
  failed: 'not watched',
};

function renderCluster(c) {
  const o = c.objects;
  return el('tr', { class: 'state-' + c.state, 'data-name': c.name },
    el('td', {}, el('code', {}, c.name), el('div', { class: 'muted' }, c.origin + (c.generation > 1 ? ` · credentials #${c.generation}` : ''))),
    el('td', {}, el('span', { class: 'cluster-state', title: stateNotes[c.state] || '' }, c.state),
      c.rotating ? el('div', { class: 'muted' }, 'new credentials listing') : null,
      c.syncTimedOut ? el('div', { class: 'error-text' }, 'not listed within the sync timeout') : null,
      c.failingSince ? el('div', { class: 'muted' }, failingNote(c)) : null),
    el('td', { class: 'time', title: c.lastList }, fmtAgo(c.lastList)),
    el('td', { class: 'time', title: c.lastWatch }, fmtAgo(c.lastWatch)),
    el('td', { class: 'objects' }, `${fmtNum(o.services)} services · ${fmtNum(o.pods)} pods · ${fmtNum(o.endpointSlices)} slices · ${fmtNum(o.nodes)} nodes`),
    el('td', {}, renderErrors(c)));
}

// failingNote says since when, and how many requests in a row, a
// cluster has failed; a synced one is still within the stale grace.
function failingNote(c) {
  const note = `failing since ${fmtAgo(c.failingSince)} (${c.consecutiveErrors} in a row)`;
  return c.state === 'synced' ? note + ', within the stale grace' : note;
}

function renderErrors(c) {
  const parts = [];
  if (c.error) parts.push(el('div', { class: 'error-text' }, c.error));
  if (c.lastError) {
    parts.push(el('div', { class: c.failingSince ? 'error-text' : 'muted', title: c.lastErrorAt },
      `last: ${c.lastError} (${fmtAgo(c.lastErrorAt)})`));
  }
  parts.push(el('div', { class: 'muted' }, `${c.errors} failed requests`));
  return parts;
}
