// Deep links: what the page shows lives in its URL's fragment, so that a
// link to a collection, an explanation or a proxy opens it, and a reload
// shows it again. The fragment, with each name URL-encoded:
//
//   #/collection/NAME          the graph, with NAME's panel open
//   #/explain/KEY[?in=NAME]    the explanation of KEY (in NAME only)
//   #/proxies                  the proxies tab
//   #/proxy/NODE-ID            the proxies tab, scrolled to that proxy
//   #/problems                 the problems tab
//   #/clusters                 the clusters tab
//   #/ (or none)               the graph

const enc = encodeURIComponent;

// links builds the fragments above.
export const links = {
  graph: () => '#/',
  collection: (name) => '#/collection/' + enc(name),
  explain: (key, collection) => '#/explain/' + enc(key) + (collection ? '?in=' + enc(collection) : ''),
  tab: (name) => (name === 'graph' ? '#/' : '#/' + name),
  proxy: (id) => '#/proxy/' + enc(id),
};

// setLink makes fragment the page's URL, as a new history entry, unless
// it is already.
export function setLink(fragment) {
  if (location.hash !== fragment && !(fragment === '#/' && location.hash === '')) history.pushState(null, '', fragment);
}

// currentLink parses the page's fragment into {view, name, collection};
// view is 'graph' for anything it does not know.
export function currentLink() {
  const m = /^#\/([a-z]+)(?:\/([^?]*))?(?:\?in=(.*))?$/.exec(location.hash);
  if (!m) return { view: 'graph' };
  const dec = (s) => { try { return decodeURIComponent(s); } catch { return null; } };
  const name = m[2] === undefined ? '' : dec(m[2]);
  const collection = m[3] === undefined ? '' : dec(m[3]);
  if (name === null || collection === null) return { view: 'graph' };
  switch (m[1]) {
    case 'collection': case 'explain': case 'proxy':
      return name ? { view: m[1], name, collection } : { view: 'graph' };
    case 'proxies': case 'problems': case 'clusters':
      return { view: m[1] };
  }
  return { view: 'graph' };
}
