// The server's JSON APIs. Every answer is decoded through the types of
// fields.js: what the UI reads of an answer is what fields.js declares.

import { types, routes, events } from './fields.js';

const enc = encodeURIComponent;

// The items page size.
export const PAGE = 50;

export const api = {
  collection: (name) => get('api/collections/{name}', 'api/collections/' + enc(name)),
  items: (name, prefix, offset) => get('api/collections/{name}/items',
    `api/collections/${enc(name)}/items?prefix=${enc(prefix)}&offset=${offset}&limit=${PAGE}`),
  explain: (key, collection) => get('api/explain',
    `api/explain?key=${enc(key)}${collection ? '&collection=' + enc(collection) : ''}`),
  proxies: () => get('api/proxies', 'api/proxies'),
  configDump: (id) => get('api/proxies/{id}/config', 'api/proxies/' + enc(id) + '/config'),
  problems: () => get('api/problems', 'api/problems'),
  replica: () => get('api/replica', 'api/replica'),
  clusters: () => get('api/clusters', 'api/clusters'),
};

// get fetches url, an instance of route, and decodes the answer. A failed
// request throws an Error with the server's message and the HTTP status.
async function get(route, url) {
  const r = await fetch(url, { headers: { Accept: 'application/json' } });
  let body = null;
  try { body = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const msg = body ? decode('ErrorBody', body, url).error : '';
    const err = new Error(msg || `${r.status} ${r.statusText}`);
    err.status = r.status;
    throw err;
  }
  return decode(routes[route], body, url);
}

// decodeEvent decodes the data of an api/stream event.
export function decodeEvent(name, data) {
  return decode(events[name], JSON.parse(data), name + ' event');
}

const reported = new Set();

// report tells the console, once for each place, that an answer does not
// have the shape fields.js declares.
function report(where, what) {
  const msg = `meshd UI: ${where.replace(/\[\d+\]/g, '[]')}: ${what}`;
  if (reported.has(msg)) return;
  reported.add(msg);
  console.error(msg);
}

const kinds = { string: 'string', number: 'number', bool: 'boolean', time: 'string' };

// decode returns v, of the fields.js type, with only the fields declared
// and the zero value in place of those left out; where names v in reports.
export function decode(type, v, where) {
  if (type === 'any') return v;
  if (type.startsWith('[]')) {
    if (v == null) return [];
    if (!Array.isArray(v)) return mismatch(where, 'a list', type);
    return v.map((x, i) => decode(type.slice(2), x, `${where}[${i}]`));
  }
  if (type in kinds) return typeof v === kinds[type] ? v : mismatch(where, 'a ' + type, type);
  if (type === 'map') return v == null ? {} : { ...v };
  const fields = types[type];
  if (!fields) throw new Error(`fields.js declares no type ${type}`);
  if (v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) return mismatch(where, 'an object', type);
  return decodeFields(fields, v, where);
}

function decodeFields(fields, v, where) {
  const out = {};
  for (const [name, spec] of Object.entries(fields)) {
    const [type, omit] = spec.split(',');
    if (name in v) out[name] = decode(type, v[name], `${where}.${name}`);
    else {
      if (!omit) report(where, `no field ${name}`);
      out[name] = zero(type);
    }
  }
  return out;
}

function mismatch(where, want, type) {
  report(where, 'not ' + want);
  return zero(type);
}

function zero(type) {
  if (type.startsWith('[]')) return [];
  switch (type) {
    case 'string': case 'time': return '';
    case 'number': return 0;
    case 'bool': return false;
    case 'map': return {};
    case 'any': return undefined;
    default: return null;
  }
}
