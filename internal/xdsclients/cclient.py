"""cclient.py drives gRPC C-core, through the grpcio Python package, for
meshd's tests. It reads one JSON command per line on stdin and answers
each with one JSON line on stdout: {"results":[{"backend","code",
"message"}...]}. A command is {"target","method","metadata":{},
"timeoutMs","count"}: count sequential unary calls with an empty request,
on a channel kept per target so that its xDS watches persist between
commands. The bootstrap comes from GRPC_XDS_BOOTSTRAP.

With the arguments "serve HOST:PORT" it is an xDS server instead: it
serves grpc.health.v1.Health/Check (an empty response) on HOST:PORT with
xDS server credentials, its listener fetched from the control plane,
answering each call with the header x-peer-identity: the caller's
SPIFFE ID, or "plaintext". It prints {"started":true} once started
(grpcio has no serving-state callback: the caller tells serving by
calling it) and stops when stdin closes."""

import json
import sys
from concurrent import futures

import grpc

channels = {}


def channel(target):
    ch = channels.get(target)
    if ch is None:
        ch = grpc.insecure_channel(target)
        channels[target] = ch
    return ch


def call(cmd):
    method = channel(cmd["target"]).unary_unary(cmd["method"])
    metadata = tuple((k, v) for k, v in (cmd.get("metadata") or {}).items())
    try:
        resp = method(b"", timeout=cmd["timeoutMs"] / 1000.0, metadata=metadata)
        return {"backend": resp.decode(), "code": 0, "message": ""}
    except grpc.RpcError as e:
        return {"backend": "", "code": e.code().value[0], "message": e.details() or ""}


def peer_identity(context):
    ids = context.auth_context().get("peer_spiffe_id") or []
    return ids[0].decode() if ids else "plaintext"


def check(_request, context):
    context.send_initial_metadata((("x-peer-identity", peer_identity(context)),))
    return b""


def serve(addr):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), xds=True)
    handler = grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health", {"Check": grpc.unary_unary_rpc_method_handler(check)})
    server.add_generic_rpc_handlers((handler,))
    creds = grpc.xds_server_credentials(grpc.insecure_server_credentials())
    server.add_secure_port(addr, creds)
    server.start()
    sys.stdout.write(json.dumps({"started": True}) + "\n")
    sys.stdout.flush()
    for _ in sys.stdin:
        pass
    server.stop(0).wait()


def main():
    for line in sys.stdin:
        try:
            cmd = json.loads(line)
            out = {"results": [call(cmd) for _ in range(cmd["count"])]}
        except Exception as e:  # reported to the test, which fails on it
            out = {"error": repr(e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    for ch in channels.values():
        ch.close()


if sys.argv[1:2] == ["serve"]:
    serve(sys.argv[2])
else:
    main()
