#!/usr/bin/env python3
"""Writes the input streams of the lsp-*.test cases (issue 25): hostile LSP messages
between a normal start and a normal end, so that a server that goes silent, dies or
stops reading shows as a missing answer to the final shutdown (id 99) or a wrong exit.
usage: lsp-gen.py KIND OUT
  method-not-string   a request whose "method" is a number (and one that is an object)
  unreadable-length   Content-Length missing, negative, not a number, 2^64+1, and over
                      64 MiB with its bytes, and a header line of 10,000 bytes
  deep-json           bodies nested 100,000 deep (in params, in the id, alone)
"""
import json
import sys

kind, out = sys.argv[1], sys.argv[2]


def frame(message):
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def raw(header, message):
    body = json.dumps(message).encode()
    return header + b"\r\n\r\n" + body


start = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
end = frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"})
hover = {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover"}
middle = b""
if kind == "method-not-string":
    middle = frame({"jsonrpc": "2.0", "id": 2, "method": 1}) + frame({"jsonrpc": "2.0", "id": 3, "method": {}})
    middle += frame({"jsonrpc": "2.0", "method": ["a notification: no answer"]})
elif kind == "unreadable-length":
    # Missing first: a server that skips to the next Content-Length after an unreadable one
    # would otherwise skip a message without one too.
    for header in [b"Content-Type: application/vscode-jsonrpc", b"Content-Length: -5", b"Content-Length: abc",
                   b"Content-Length: 18446744073709551617"]:
        middle += raw(header, hover)
    big = 64 * 1024 * 1024 + 1
    middle += b"Content-Length: %d\r\n\r\n" % big + b" " * big
    middle += b"X-Long: " + b"x" * 10000 + b"\r\n\r\n" + json.dumps(hover).encode()
elif kind == "deep-json":
    # A request whose params, one whose id, and a body that is only brackets: the first
    # two segfaulted (the answer echoing the id, the handler walking the params).
    deep = b"[" * 100000 + b"]" * 100000
    middle = frame(b'{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":' + deep + b"}")
    middle += frame(b'{"jsonrpc":"2.0","id":' + deep + b',"method":"nothing"}')
    middle += frame(deep)
else:
    sys.exit("unknown kind " + kind)
with open(out, "wb") as f:
    f.write(start + middle + end)
