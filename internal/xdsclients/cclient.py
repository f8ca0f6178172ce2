"""cclient.py drives gRPC C-core, through the grpcio Python package, for
meshd's tests. It reads one JSON command per line on stdin and answers
each with one JSON line on stdout: {"results":[{"backend","code",
"message"}...]}. A command is {"target","method","metadata":{},
"timeoutMs","count"}: count sequential unary calls with an empty request,
on a channel kept per target so that its xDS watches persist between
commands. The bootstrap comes from GRPC_XDS_BOOTSTRAP."""

import json
import sys

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


main()
