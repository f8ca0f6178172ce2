// The proxies tab: is each proxy connected, up to date, or rejecting
// config; per resource type what was sent and acknowledged; config dumps.

import { $, el, showAbsent } from './dom.js';
import { fmtAgo, fmtUntil, shortTypeURL, shortVersion, pretty } from './format.js';
import { api } from './api.js';
import { links } from './location.js';

const VERDICT_TEXT = {
  'up-to-date': 'up to date',
  pending: 'awaiting ACK',
  rejecting: 'rejecting config',
  stale: 'stale',
  disconnected: 'disconnected',
};

const verdictText = (v) => VERDICT_TEXT[v] || v;

let result = null; // the latest ProxiesResult
let focused = null; // the node id a link asked for
let scrollPending = false;

// focusProxy marks the proxy with the node id and scrolls to it, now or
// once it shows.
export function focusProxy(id) {
  focused = id;
  scrollPending = true;
  showProxies();
}

// showProxies shows a ProxiesResult; with none, it redraws the last one,
// to keep relative times current.
export function showProxies(res) {
  if (res) result = res;
  if (!result) return;
  if (!result.available) {
    showAbsent('proxies', 'No xDS server is attached to this debug UI.', { id: 'no-xds' });
    return;
  }
  const box = $('proxies');
  const count = $('proxies-count');
  const ps = result.proxies;
  count.textContent = ps.length;
  count.classList.toggle('bad', ps.some((p) => p.verdict === 'rejecting' || p.verdict === 'stale'));
  if (!ps.length) {
    box.replaceChildren(el('div', { class: 'empty-box' }, 'No proxy has connected yet.'));
    return;
  }
  box.replaceChildren(renderSummary(ps), ...ps.map(renderProxy));
  const card = box.querySelector('.proxy.focused');
  if (card && scrollPending) {
    scrollPending = false;
    card.scrollIntoView({ block: 'start' });
  }
}

// hasProxies reports whether an answer was shown yet.
export function hasProxies() { return result !== null; }

function renderSummary(ps) {
  const counts = {};
  for (const p of ps) counts[p.verdict] = (counts[p.verdict] || 0) + 1;
  return el('div', { class: 'proxy-summary' },
    Object.entries(counts).map(([v, n]) => el('span', { class: 'verdict v-' + v }, `${n} ${verdictText(v)}`)),
    ps.every((p) => p.verdict === 'up-to-date') ? el('span', { class: 'muted' }, 'all proxies are up to date') : null);
}

function renderProxy(p) {
  const ago = (label, t) => el('span', {}, label + ' ', el('b', { title: t }, fmtAgo(t)));
  const meta = Object.entries(p.metadata).sort();
  return el('div', { class: 'proxy v-' + p.verdict + (p.nodeId === focused ? ' focused' : ''), dataset: { node: p.nodeId } },
    el('div', { class: 'proxy-head' },
      el('span', { class: 'verdict v-' + p.verdict }, verdictText(p.verdict)),
      el('a', { class: 'node-link', href: links.proxy(p.nodeId), title: 'link to this proxy' }, el('code', { class: 'node-id' }, p.nodeId)),
      el('span', { class: 'muted' }, [p.cluster, p.address, p.protocol, p.variant && 'variant ' + p.variant].filter(Boolean).join(' · ')),
      el('button', { type: 'button', class: 'dump-btn', onclick: () => showDump(p.nodeId) }, 'Config dump')),
    renderIdentity(p),
    p.state === 'disconnected' ? renderClose(p) : null,
    el('div', { class: 'proxy-times' },
      p.state === 'disconnected' ? ago('disconnected', p.disconnectedAt) : ago('connected', p.connectedSince),
      ago('last push', p.lastPush),
      p.pendingPushes ? el('span', {}, 'pending pushes ', el('b', {}, p.pendingPushes)) : null,
      meta.length
        ? el('details', { class: 'meta' }, el('summary', {}, `metadata (${meta.length})`),
          el('div', { class: 'meta-list' }, meta.map(([k, v]) => el('code', {}, `${k}=${v}`))))
        : null),
    renderHistory(p.history),
    el('table', { class: 'types' },
      el('thead', {}, el('tr', {}, ['type', 'subscribed', 'sent', 'ACKed', 'last NACK'].map((h) => el('th', {}, h)))),
      el('tbody', {}, p.types.map(renderType))));
}

// renderClose says why the proxy's stream ended, with the error meshd
// ended it with, if any.
function renderClose(p) {
  return el('div', { class: 'close-reason' + (p.closeError ? ' close-error' : '') },
    'closed: ', el('b', {}, p.closeReason || 'unknown'),
    p.closeError ? ' — ' + p.closeError : null);
}

// renderHistory lists the proxy's earlier streams under its node id,
// newest first: a proxy that reconnects is one proxy with a history.
function renderHistory(h) {
  if (!h.length) return null;
  return el('details', { class: 'history' },
    el('summary', {}, `${h.length} earlier connection${h.length > 1 ? 's' : ''} · last closed: ${h[0].closeReason}`),
    el('ol', {}, h.map((s) => el('li', {},
      el('b', { class: 'close-reason' }, s.closeReason), ' ',
      el('span', { class: 'muted' }, [s.protocol, s.address].filter(Boolean).join(' · ')), ' ',
      el('span', { title: s.connectedSince }, 'connected ' + fmtAgo(s.connectedSince)), ', ',
      el('span', { title: s.disconnectedAt }, 'ended ' + fmtAgo(s.disconnectedAt)),
      s.closeError ? el('div', { class: 'close-error' }, s.closeError) : null))));
}

// renderSubscribed shows a type's subscription: all of it, or the names,
// which unfold.
function renderSubscribed(t) {
  if (t.wildcard) return 'all (wildcard)';
  if (!t.subscribed.length) return '0 named';
  return el('details', { class: 'subscribed' }, el('summary', {}, `${t.subscribed.length} named`),
    el('ul', {}, t.subscribed.map((n) => el('li', {}, el('code', {}, n)))));
}

// renderIdentity shows who the proxy proved to be: the SPIFFE ID of its
// client certificate and when that expires, or that it is anonymous;
// and its workload's mTLS mode.
function renderIdentity(p) {
  return el('div', { class: 'proxy-identity' },
    p.identity
      ? [el('span', {}, 'identity ', el('code', { class: 'identity' }, p.identity)),
        el('span', {}, 'certificate expires ', el('b', { title: p.certificateExpiry }, fmtUntil(p.certificateExpiry)))]
      : el('span', { class: 'muted identity' }, 'anonymous: no client certificate'),
    p.mtlsMode ? el('span', {}, 'mTLS ', el('b', { class: 'mtls-mode' }, p.mtlsMode)) : null);
}

function renderType(t) {
  const rejecting = t.lastNack && (!t.lastAck || new Date(t.lastNack.time) >= new Date(t.lastAck));
  return el('tr', { class: rejecting ? 'rejecting' : (t.sentVersion !== t.ackedVersion ? 'pending' : '') },
    el('td', { title: t.typeUrl }, shortTypeURL(t.typeUrl)),
    el('td', {}, renderSubscribed(t)),
    el('td', {}, el('code', { title: t.sentVersion }, shortVersion(t.sentVersion)),
      el('span', { class: 'muted' }, ` · ${t.pushes} pushes`),
      t.resumed ? el('span', { class: 'muted', title: 'reconnected holding the current config: nothing was re-sent' }, ' · resumed') : null),
    el('td', {}, el('code', { title: t.ackedVersion }, shortVersion(t.ackedVersion))),
    el('td', { class: 'nack' }, t.lastNack ? renderNack(t, rejecting) : el('span', { class: 'muted' }, 'none')));
}

function renderNack(t, rejecting) {
  const n = t.lastNack;
  return [el('code', {}, n.version || '?'), ' ', el('span', { class: 'muted' }, fmtAgo(n.time)),
    el('div', { class: 'nack-reason' + (rejecting ? '' : ' old') }, n.reason),
    t.rejected.length
      ? el('div', { class: 'muted', title: t.rejected.join('\n') }, `held at an older version: ${t.rejected.length}`)
      : null];
}

async function showDump(id) {
  $('dump').hidden = false;
  $('dump-title').textContent = 'Config dump of ' + id;
  $('dump-body').textContent = 'loading…';
  try {
    $('dump-body').textContent = pretty(await api.configDump(id));
  } catch (err) {
    $('dump-body').textContent = err.message;
  }
}
