#!/usr/bin/python3
"""`pipec lsp` on a program that uses a KFP component: no diagnostics, and hover on the
component's op shows its signature and the component's description.

Usage: lsp_hover.py PIPEC PROGRAM.pipe OP
"""
import json
import os
import subprocess
import sys

pipec, program, op = sys.argv[1:4]
proc = subprocess.Popen([pipec, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def send(message):
    body = json.dumps(message).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive():
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        head += proc.stdout.read(1)
    length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    return json.loads(proc.stdout.read(length))


uri = "file://" + os.path.abspath(program)
text = open(program).read()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
receive()
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
    "uri": uri, "languageId": "pipe", "version": 1, "text": text}}})
diagnostics = receive()["params"]["diagnostics"]
lines = text.splitlines()
line = next(i for i, l in enumerate(lines) if l.lstrip().startswith("step ") and op + "(" in l)
send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
    "textDocument": {"uri": uri}, "position": {"line": line, "character": lines[line].index(op) + 1}}})
hover = receive()["result"]["contents"]["value"]
send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
receive()
send({"jsonrpc": "2.0", "method": "exit"})
proc.wait()
print(hover)
problems = []
if diagnostics:
    problems.append(f"diagnostics: {diagnostics}")
if f"op {op}(" not in hover:
    problems.append("the hover has no signature")
if "Runs a tool with options." not in hover:
    problems.append("the hover has no description")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
