#!/usr/bin/env python3
"""Writes to stdout an LSP session over FILE.pipe, as an editor sends it (a seed for
lsp_fuzzer): initialize, open, hover/definition/completion at a few places, symbols, a
change, shutdown, exit."""
import json
import sys

text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
uri = "file:///w/" + sys.argv[1].rsplit("/", 1)[-1]
lines = text.split("\n")
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "pipe", "version": 1, "text": text}}}]
n = 2
for line in range(0, len(lines), max(1, len(lines) // 4)):
    pos = {"line": line, "character": len(lines[line]) // 2}
    for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion"):
        msgs.append({"jsonrpc": "2.0", "id": n, "method": method,
                     "params": {"textDocument": {"uri": uri}, "position": pos}})
        n += 1
msgs.append({"jsonrpc": "2.0", "id": n, "method": "textDocument/documentSymbol",
             "params": {"textDocument": {"uri": uri}}})
msgs.append({"jsonrpc": "2.0", "method": "textDocument/didChange",
             "params": {"textDocument": {"uri": uri, "version": 2},
                        "contentChanges": [{"text": text.replace("step", "stp", 1)}]}})
msgs.append({"jsonrpc": "2.0", "id": n + 1, "method": "shutdown"})
msgs.append({"jsonrpc": "2.0", "method": "exit"})
out = sys.stdout.buffer
for m in msgs:
    body = json.dumps(m).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
