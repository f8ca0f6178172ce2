// The JSON the UI reads, in one place: every field of every API answer it
// uses, and nothing else. api.js decodes each answer through these types,
// so a field missing here is undefined in the rest of the UI, and a field
// declared here that the server stops sending is reported on the console.
// fields_test.go checks this file against the Go structs the server
// encodes, so keep its format exact; one entry a line:
//
//   TypeName: {           opens a type; "TypeName: { // all" says the UI
//                         uses every field of the Go struct, which the test
//                         then holds to in both directions
//     field: 'type',      a field, as the Go json tag names it
//   },                    closes the type
//
// A type is 'string', 'number', 'bool', 'time' (RFC 3339 text), 'map' (of
// strings to strings), 'any' (shown as JSON, never read into), the name of
// another type here, or '[]' before any of these for a list. ',omitempty'
// after it says the server may leave the field out (omitempty or omitzero
// in Go); the decoder then puts in the type's zero value: '', 0, false, an
// empty list or map, null for a type here, undefined for 'any'.

export const types = {
  GraphSummary: { // all
    version: 'number',
    collections: '[]CollectionSummary',
    edges: '[]Edge',
    stalled: 'Stall,omitempty',
    queue: 'QueueInfo',
  },
  QueueInfo: { // all
    waiting: 'number',
    committed: 'number',
    batches: 'number',
    dropped: 'number',
  },
  Stall: { // all
    collection: 'string',
    key: 'string',
    since: 'time',
    for: 'number',
    stack: 'string',
  },
  CollectionSummary: {
    id: 'number',
    name: 'string',
    kind: 'string',
    type: 'string',
    size: 'number',
    synced: 'bool',
    recomputes: 'number',
    eventsEmitted: 'number',
    errors: 'number',
    failingInputs: 'number',
    conflicts: 'number',
    eventRate: 'number',
    lastError: 'string,omitempty',
    problems: 'number,omitempty',
  },
  Edge: { // all
    from: 'number',
    to: 'number',
    kind: 'string',
    reads: 'number,omitempty',
  },
  CollectionDetail: {
    kind: 'string',
    type: 'string',
    size: 'number',
    synced: 'bool',
    handlers: 'number',
    recomputes: 'number',
    eventsEmitted: 'number',
    errors: 'number',
    failingInputs: 'number',
    conflicts: 'number',
    eventRate: 'number',
    upstreams: '[]Link',
    downstreams: '[]Link',
    recentErrors: '[]ErrorRecord,omitempty',
    recentEvents: '[]EventRecord,omitempty',
  },
  Link: { // all
    name: 'string',
    kind: 'string',
    reads: 'number,omitempty',
  },
  ErrorRecord: { // all
    time: 'time',
    key: 'string,omitempty',
    error: 'string',
    stack: 'string,omitempty',
  },
  EventRecord: { // all
    time: 'time',
    version: 'number',
    type: 'string',
    key: 'string',
  },
  ItemsPage: {
    offset: 'number',
    total: 'number',
    items: '[]ItemJSON',
  },
  ItemJSON: { // all
    key: 'string',
    value: 'any',
  },
  ExplainResult: {
    results: '[]Explanation',
  },
  Explanation: {
    collection: 'string',
    input: 'string,omitempty',
    inputFrom: 'string,omitempty',
    reads: '[]Read,omitempty',
    contenders: '[]string,omitempty',
    lastError: 'ErrorRecord,omitempty',
    value: 'any,omitempty',
    inputValue: 'any,omitempty',
  },
  Read: { // all
    collection: 'string',
    filter: 'string',
  },
  ProxiesResult: { // all
    available: 'bool',
    proxies: '[]ProxyEntry',
  },
  ProxyEntry: { // all
    nodeId: 'string',
    cluster: 'string,omitempty',
    address: 'string,omitempty',
    protocol: 'string,omitempty',
    metadata: 'map,omitempty',
    identity: 'string,omitempty',
    certificateExpiry: 'time,omitempty',
    mtlsMode: 'string,omitempty',
    variant: 'string,omitempty',
    state: 'string',
    connectedSince: 'time,omitempty',
    disconnectedAt: 'time,omitempty',
    closeReason: 'string,omitempty',
    closeError: 'string,omitempty',
    history: '[]Session,omitempty',
    lastPush: 'time,omitempty',
    pendingPushes: 'number,omitempty',
    types: '[]TypeStatus',
    verdict: 'string',
  },
  Session: { // all
    protocol: 'string,omitempty',
    address: 'string,omitempty',
    connectedSince: 'time',
    disconnectedAt: 'time',
    closeReason: 'string',
    closeError: 'string,omitempty',
  },
  TypeStatus: {
    typeUrl: 'string',
    wildcard: 'bool,omitempty',
    subscribed: '[]string,omitempty',
    sentVersion: 'string,omitempty',
    pushes: 'number',
    resumed: 'bool,omitempty',
    ackedVersion: 'string,omitempty',
    lastAck: 'time,omitempty',
    lastNack: 'NACK,omitempty',
    rejected: '[]string,omitempty',
  },
  NACK: {
    time: 'time',
    version: 'string,omitempty',
    reason: 'string',
  },
  ProblemsResult: { // all
    available: 'bool',
    problems: '[]Problem',
  },
  Problem: { // all
    source: 'string',
    object: 'string,omitempty',
    error: 'string',
    since: 'time,omitempty',
    severity: 'string,omitempty',
    collection: 'string,omitempty',
  },
  ReplicaResult: { // all
    available: 'bool',
    replica: 'Replica,omitempty',
  },
  Replica: { // all
    lease: 'string',
    identity: 'string',
    leading: 'bool',
    leader: 'string,omitempty',
    since: 'time,omitempty',
    terms: 'number',
  },
  ClustersResult: { // all
    available: 'bool',
    local: 'string,omitempty',
    clusters: '[]ClusterStatus,omitempty',
  },
  ClusterStatus: { // all
    name: 'string',
    origin: 'string',
    state: 'string',
    generation: 'number',
    rotating: 'bool,omitempty',
    syncTimedOut: 'bool,omitempty',
    since: 'time',
    error: 'string,omitempty',
    objects: 'ObjectCounts',
    lastList: 'time,omitempty',
    lastWatch: 'time,omitempty',
    lastError: 'string,omitempty',
    lastErrorAt: 'time,omitempty',
    failingSince: 'time,omitempty',
    errors: 'number',
    consecutiveErrors: 'number',
  },
  ObjectCounts: { // all
    services: 'number',
    pods: 'number',
    endpointSlices: 'number',
    nodes: 'number',
  },
  ErrorBody: { // all
    error: 'string',
  },
};

// The type of each answer: of the APIs, by route ({x} is a path segment),
// and of the events of api/stream, by name.
export const routes = {
  'api/graph': 'GraphSummary',
  'api/collections/{name}': 'CollectionDetail',
  'api/collections/{name}/items': 'ItemsPage',
  'api/explain': 'ExplainResult',
  'api/proxies': 'ProxiesResult',
  'api/proxies/{id}/config': 'any',
  'api/problems': 'ProblemsResult',
  'api/replica': 'ReplicaResult',
  'api/clusters': 'ClustersResult',
};

export const events = {
  graph: 'GraphSummary',
  proxies: 'ProxiesResult',
  problems: 'ProblemsResult',
  replica: 'ReplicaResult',
  clusters: 'ClustersResult',
};
