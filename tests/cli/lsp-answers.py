#!/usr/bin/env python3
"""Prints one line per message `pipec lsp` wrote (the stdout of an lsp-*.test case):
`id=N result` or `id=N error CODE MESSAGE`, notifications as `notification METHOD`.
Fails if the stream is not well framed."""
import json
import sys

data = open(sys.argv[1], "rb").read()
while data:
    header, sep, rest = data.partition(b"\r\n\r\n")
    if not sep or not header.startswith(b"Content-Length: "):
        sys.exit("badly framed output: %r" % data[:80])
    length = int(header[len(b"Content-Length: "):])
    message = json.loads(rest[:length])
    data = rest[length:]
    if "method" in message:
        print("notification", message["method"])
    elif "error" in message:
        print("id=%s error %d %s" % (json.dumps(message["id"]), message["error"]["code"], message["error"]["message"]))
    else:
        print("id=%s result" % json.dumps(message["id"]))
