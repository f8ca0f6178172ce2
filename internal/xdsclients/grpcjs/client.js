// client.js drives @grpc/grpc-js with @grpc/grpc-js-xds for meshd's tests.
// It reads one JSON command per line on stdin and answers each with one
// JSON line on stdout: {"results":[{"backend","code","message"}...]}.
// A command is {"target","method","metadata":{},"timeoutMs","count"}: count
// sequential unary calls with an empty request, on a channel kept per
// target so that its xDS watches persist between commands. The
// bootstrap comes from GRPC_XDS_BOOTSTRAP.
//
// With the arguments "serve HOST:PORT" it is an xDS server instead: it
// serves grpc.health.v1.Health/Check (an empty response) on HOST:PORT
// with xDS server credentials, its listener fetched from the control
// plane, answering each call with the header x-peer-identity: the
// caller's SPIFFE ID, or "plaintext". It prints {"serving":true} once the
// port is serving (its listener arrived), {"error"} if the address is
// refused, and stops when stdin closes.
'use strict';

const grpc = require('@grpc/grpc-js');
const xds = require('@grpc/grpc-js-xds');
xds.register();
const readline = require('readline');

// peerIdentity is the URI SAN of the caller's verified certificate.
function peerIdentity(call) {
  const cert = call.getAuthContext().sslPeerCertificate;
  const san = (cert && cert.subjectaltname) || '';
  const uri = san.split(', ').find((s) => s.startsWith('URI:'));
  return uri ? uri.slice('URI:'.length) : 'plaintext';
}

function serve(addr) {
  const server = new xds.XdsServer();
  const method = {
    path: '/grpc.health.v1.Health/Check', requestStream: false, responseStream: false,
    requestSerialize: identity, requestDeserialize: identity,
    responseSerialize: identity, responseDeserialize: identity,
  };
  server.addService({ Check: method }, {
    Check: (call, callback) => {
      const md = new grpc.Metadata();
      md.set('x-peer-identity', peerIdentity(call));
      call.sendMetadata(md);
      callback(null, Buffer.alloc(0));
    },
  });
  // The callback comes once the port serves: the listener arrived.
  try {
    server.bindAsync(addr, new xds.XdsServerCredentials(grpc.ServerCredentials.createInsecure()), () => {
      process.stdout.write(JSON.stringify({ serving: true }) + '\n');
    });
  } catch (e) {
    process.stdout.write(JSON.stringify({ error: String(e) }) + '\n');
  }
  // Listeners join the port bindAsync made; later changes are logged.
  server.addServingStateListener(addr, (s) => {
    process.stderr.write(`serving state of ${addr}: ${s.code} ${s.details}\n`);
  });
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', () => {});
  lines.on('close', () => {
    server.forceShutdown();
    process.exit(0);
  });
}

const channels = new Map();

function identity(b) {
  return b;
}

function client(target) {
  let c = channels.get(target);
  if (!c) {
    c = new grpc.Client(target, grpc.credentials.createInsecure());
    channels.set(target, c);
  }
  return c;
}

function call(cmd) {
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(cmd.metadata || {})) {
      md.set(k, v);
    }
    const deadline = new Date(Date.now() + cmd.timeoutMs);
    client(cmd.target).makeUnaryRequest(cmd.method, identity, identity, Buffer.alloc(0), md, { deadline },
      (err, resp) => {
        if (err) {
          resolve({ backend: '', code: err.code, message: err.details || String(err) });
        } else {
          resolve({ backend: resp.toString(), code: 0, message: '' });
        }
      });
  });
}

async function run(cmd) {
  const results = [];
  for (let i = 0; i < cmd.count; i++) {
    results.push(await call(cmd));
  }
  return results;
}

// runClient runs commands one at a time, in order.
function runClient() {
  let queue = Promise.resolve();
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    queue = queue.then(async () => {
      let out;
      try {
        out = { results: await run(JSON.parse(line)) };
      } catch (e) {
        out = { error: String(e) };
      }
      process.stdout.write(JSON.stringify(out) + '\n');
    });
  });
  lines.on('close', () => {
    queue.then(() => {
      for (const c of channels.values()) {
        c.close();
      }
      process.exit(0);
    });
  });
}

if (process.argv[2] === 'serve') {
  serve(process.argv[3]);
} else {
  runClient();
}
