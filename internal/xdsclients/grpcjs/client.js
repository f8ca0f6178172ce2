// client.js drives @grpc/grpc-js with @grpc/grpc-js-xds for meshd's tests.
// It reads one JSON command per line on stdin and answers each with one
// JSON line on stdout: {"results":[{"backend","code","message"}...]}.
// A command is {"target","method","metadata":{},"timeoutMs","count"}: count
// sequential unary calls with an empty request, on a channel kept per
// target so that its xDS watches persist between commands. The
// bootstrap comes from GRPC_XDS_BOOTSTRAP.
'use strict';

const grpc = require('@grpc/grpc-js');
require('@grpc/grpc-js-xds').register();
const readline = require('readline');

const channels = new Map();

function client(target) {
  let c = channels.get(target);
  if (!c) {
    c = new grpc.Client(target, grpc.credentials.createInsecure());
    channels.set(target, c);
  }
  return c;
}

const identity = (b) => b;

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

// Commands run one at a time, in order.
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
