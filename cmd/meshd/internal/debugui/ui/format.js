// Formatting numbers, times and Go type names for display.

export function fmtNum(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + 'M';
  if (n >= 1e4) return (n / 1e3).toFixed(n >= 1e5 ? 0 : 1) + 'k';
  return String(n);
}

export function fmtRate(r) {
  if (!r) return '0/s';
  if (r < 0.1) return '<0.1/s';
  return (r < 10 ? r.toFixed(1) : Math.round(r)) + '/s';
}

export function fmtTime(t) {
  if (!t) return '';
  return new Date(t).toLocaleTimeString([], { hour12: false });
}

export function fmtAgo(t) {
  if (!t) return '—';
  const s = Math.max(0, (Date.now() - new Date(t).getTime()) / 1000);
  if (s < 1) return 'just now';
  if (s < 60) return Math.floor(s) + 's ago';
  if (s < 3600) return Math.floor(s / 60) + 'm ago';
  if (s < 86400) return Math.floor(s / 3600) + 'h ago';
  return Math.floor(s / 86400) + 'd ago';
}

// fmtUntil is fmtAgo for a time to come: "in 3h", or "expired 2m ago".
export function fmtUntil(t) {
  if (!t) return '—';
  const s = (new Date(t).getTime() - Date.now()) / 1000;
  if (s <= 0) return 'expired ' + fmtAgo(t);
  if (s < 60) return 'in ' + Math.floor(s) + 's';
  if (s < 3600) return 'in ' + Math.floor(s / 60) + 'm';
  if (s < 86400) return 'in ' + Math.floor(s / 3600) + 'h';
  return 'in ' + Math.floor(s / 86400) + 'd';
}

// shortType drops import paths from a Go type name, type arguments
// included: "collections.Resource[*github.com/x/cluster/v3.Cluster]"
// becomes "collections.Resource[*v3.Cluster]".
export function shortType(t) {
  return t.replace(/(?:[\w.~-]+\/)+/g, '');
}

// nodeType is the shorter form a node shows: without the package of the
// outer type either ("Resource[*v3.Cluster]").
export function nodeType(t) {
  return shortType(t).replace(/^(\*?)\w+\./, '$1');
}

export function shortTypeURL(u) {
  const i = u.lastIndexOf('.');
  return i >= 0 ? u.slice(i + 1) : u;
}

// shortVersion abbreviates a version digest (32 hex digits) for a table;
// the cell's title holds it whole.
export function shortVersion(v) {
  if (!v) return '—';
  return v.length > 12 ? v.slice(0, 12) + '…' : v;
}

export function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

export function pretty(v) { return JSON.stringify(v, null, 2); }

export function plural(n, word) { return `${n} ${word}${n === 1 ? '' : 's'}`; }
