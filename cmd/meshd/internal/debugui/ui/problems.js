// The problems tab: files and objects the sources could not use (errors:
// the last good ones keep serving) or loaded maybe not as meant (warnings).

import { $, el, showAbsent } from './dom.js';
import { fmtAgo } from './format.js';

let shown = false;

export function showProblems(res) {
  shown = true;
  if (!res.available) {
    showAbsent('problems', 'No source reports problems to this debug UI.');
    return;
  }
  const box = $('problems');
  const count = $('problems-count');
  const ps = res.problems;
  // The tab's count is of errors, in red; warnings alone show their own
  // count, not red.
  const errors = ps.filter((p) => severity(p) === 'error').length;
  count.textContent = errors || (ps.length ? ps.length + ' warn' : '');
  count.classList.toggle('bad', errors > 0);
  count.title = `${errors} errors, ${ps.length - errors} warnings`;
  if (!ps.length) {
    box.replaceChildren(el('div', { class: 'empty-box ok' }, 'No problems: every source is readable and valid.'));
    return;
  }
  box.replaceChildren(el('table', { class: 'problems' },
    el('thead', {}, el('tr', {}, ['source', 'object', 'problem', 'since'].map((h) => el('th', {}, h)))),
    el('tbody', {}, ps.map(renderProblem))));
}

// hasProblems reports whether an answer was shown yet.
export function hasProblems() { return shown; }

// severity is the Go side's Severity, where empty means an error.
const severity = (p) => p.severity || 'error';

function renderProblem(p) {
  const sev = severity(p);
  return el('tr', { class: 'sev-' + sev },
    el('td', {}, el('code', {}, p.source)),
    el('td', {}, p.object, p.collection ? el('span', { class: 'muted' }, ' · in ' + p.collection) : ''),
    el('td', { class: sev === 'error' ? 'error-text' : 'warn-text' }, el('span', { class: 'sev' }, sev), p.error),
    el('td', { class: 'time', title: p.since }, fmtAgo(p.since)));
}
