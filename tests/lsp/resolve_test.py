#!/usr/bin/python3
"""`pipec lsp` resolves names as `pipec check` does (issue 24: the LSP reads sema's symbol
table): hover and go-to-definition on the places where a resolver of its own went wrong:
an op parameter used in its op's body, a step's output inside "${step.output}", a loop
variable's item type, a duplicate step (the first is the one `check` uses), and an op
declared both in a `use`d file and in the main file (the `use`d one is the one `check`
keeps, reporting the main file's as the duplicate).

usage: resolve_test.py PIPEC WORKDIR
"""
import json
import os
import subprocess
import sys

pipec, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
failures = []

LIB = """## Fetches a URL.
op fetch(url: string) -> (size: int) {
  image "curlimages/curl:8.5.0"
  command "curl -fsS ${url} | wc -c > /tmp/size"
  outputs {size: "/tmp/size"}
}
"""

MAIN = """use "lib.pipe"

## Counts.
op count(
  ## The text to count.
  text: string,
) -> (total: int) {
  image "alpine:3.19"
  command "echo ${text} | wc -c > /tmp/total"
  outputs {total: "/tmp/total"}
}

pipeline demo {
  param items: list<int> = [1, 2]
  step get = fetch(url: "https://example.com")
  for item in items {
    step each = count(text: "${item} ${get.size}")
  }
}
"""

# An error: a second step 'get'.
DUPLICATE_STEP = """pipeline demo {
  step get = fetch(url: "a")
  step get = fetch(url: "b")
  step after_get = fetch(url: "${get.size}")
}
"""

# An error: a second op 'fetch' (the lib's is loaded first). `check` stops after the ops;
# the editor still resolves the pipeline's names.
DUPLICATE_OP = """use "lib.pipe"

op fetch(url: string) -> (size: int) {
  image "alpine:3.19"
  command "true"
  outputs {size: "/tmp/size"}
}

pipeline demo {
  step get = fetch(url: "a")
}
"""

with open(os.path.join(work, "lib.pipe"), "w") as f:
    f.write(LIB)


class Client:
    def __init__(self):
        self.proc = subprocess.Popen([pipec, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0
        self.request("initialize", {"capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
        self.notify("initialized", {})

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self):
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            byte = self.proc.stdout.read(1)
            if not byte:
                raise SystemExit("FAIL: pipec lsp closed its output")
            head += byte
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        return json.loads(self.proc.stdout.read(length))

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id:
                return message.get("result")

    def open(self, uri, text):
        self.notify("textDocument/didOpen",
                    {"textDocument": {"uri": uri, "languageId": "pipe", "version": 1, "text": text}})
        while True:
            message = self.receive()
            if message.get("method") == "textDocument/publishDiagnostics":
                return message["params"]["diagnostics"]

    def close(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait()


def position(text, needle, offset=0, nth=0):
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += offset
    line = text.count("\n", 0, i)
    return {"line": line, "character": i - (text.rfind("\n", 0, i) + 1)}


def hover(client, uri, pos):
    result = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})
    return result["contents"]["value"] if result else None


def definition(client, uri, pos):
    return client.request("textDocument/definition", {"textDocument": {"uri": uri}, "position": pos})


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def expect_in(what, got, want):
    if got is None or want not in got:
        failures.append(f"{what}: got {got!r}, want it to hold {want!r}")


client = Client()
main_path = os.path.join(work, "main.pipe")
main_uri = "file://" + main_path
diagnostics = client.open(main_uri, MAIN)
expect("diagnostics of the good program", diagnostics, [])

# An op parameter used in its op's body.
at = position(MAIN, "${text}", 3)
expect_in("hover on ${text} in the op body", hover(client, main_uri, at), "op parameter text: string  (of op count)")
expect_in("hover on ${text} in the op body", hover(client, main_uri, at), "The text to count.")
d = definition(client, main_uri, at)
expect("definition of ${text} in the op body", d and d["range"]["start"], position(MAIN, "text: string"))

# "${get.size}": the step, and its op's output.
at = position(MAIN, "${get.size}", 3)
expect_in("hover on get in ${get.size}", hover(client, main_uri, at), "step get = fetch(...)")
at = position(MAIN, "${get.size}", 7)
expect_in("hover on size in ${get.size}", hover(client, main_uri, at), "output size: int  (of op fetch)")
d = definition(client, main_uri, at)
expect("definition of size in ${get.size}", d and (d["uri"], d["range"]["start"]),
       ("file://" + os.path.join(work, "lib.pipe"), position(LIB, "size: int")))

# A loop variable: its item type is what sema gave it.
expect_in("hover on the loop variable", hover(client, main_uri, position(MAIN, "${item}", 3)),
          "loop variable item: int")
d = definition(client, main_uri, position(MAIN, "${item}", 3))
expect("definition of ${item}", d and d["range"]["start"], position(MAIN, "item in"))

# Duplicates: a use means the declaration `pipec check` keeps.
def open_file(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    check = subprocess.run([pipec, "check", path], capture_output=True, text=True)
    return "file://" + path, client.open("file://" + path, text), check.stderr


DUPLICATE_STEP = 'use "lib.pipe"\n\n' + DUPLICATE_STEP
uri, diagnostics, stderr = open_file("dup_step.pipe", DUPLICATE_STEP)
expect_in("pipec check on a duplicate step", stderr, "duplicate step 'get'")
expect("diagnostics of a duplicate step", [x["message"] for x in diagnostics], ["duplicate step 'get'"])
d = definition(client, uri, position(DUPLICATE_STEP, "${get.size}", 3))
expect("definition of a duplicate step's use", d and d["range"]["start"], position(DUPLICATE_STEP, "get = fetch"))

uri, diagnostics, stderr = open_file("dup_op.pipe", DUPLICATE_OP)
expect_in("pipec check on a duplicate op", stderr, "duplicate op 'fetch'")
expect("diagnostics of a duplicate op", [x["message"] for x in diagnostics], ["duplicate op 'fetch'"])
d = definition(client, uri, position(DUPLICATE_OP, "fetch(url: \"a\")", 1))
expect("definition of an op declared twice", d and (d["uri"], d["range"]["start"]),
       ("file://" + os.path.join(work, "lib.pipe"), position(LIB, "fetch(")))

# Pipelines as steps: a call goes to the pipeline, of this file or of a `use`d one; hover
# shows its signature and doc; arguments and outputs go to its params and outputs.
LIB2 = """use "lib.pipe"

## Trains and evaluates.
pipeline train_eval -> (acc: int) {
  ## The learning rate.
  param lr: float = 0.1
  step f = fetch(url: "u")
  output acc = f.size
}
"""
CALLS = """use "lib2.pipe"

pipeline local_one -> (n: int) {
  step g = fetch(url: "x")
  output n = g.size
}

pipeline top {
  step a = local_one()
  step b = train_eval(lr: 0.5)
  step c = fetch(url: "${b.acc} ${a.n}")
}
"""
with open(os.path.join(work, "lib2.pipe"), "w") as f:
    f.write(LIB2)
lib2_uri = "file://" + os.path.join(work, "lib2.pipe")
uri, diagnostics, stderr = open_file("calls.pipe", CALLS)
expect("diagnostics of pipeline calls", diagnostics, [])
expect("pipec check on pipeline calls", stderr, "")
d = definition(client, uri, position(CALLS, "local_one()"))
expect("definition of a call of this file's pipeline", d and d["range"]["start"], position(CALLS, "local_one ->"))
d = definition(client, uri, position(CALLS, "train_eval(lr", 2))
expect("definition of a call of a used file's pipeline", d and (d["uri"], d["range"]["start"]),
       (lib2_uri, position(LIB2, "train_eval ->")))
h = hover(client, uri, position(CALLS, "train_eval(lr", 2))
expect_in("hover on a called pipeline", h, "pipeline train_eval(lr: float) -> (acc: int)")
expect_in("hover on a called pipeline", h, "Trains and evaluates.")
d = definition(client, uri, position(CALLS, "lr: 0.5"))
expect("definition of a call's argument", d and (d["uri"], d["range"]["start"]), (lib2_uri, position(LIB2, "lr: float")))
d = definition(client, uri, position(CALLS, "${b.acc}", 4))
expect("definition of a call's output", d and (d["uri"], d["range"]["start"]), (lib2_uri, position(LIB2, "acc: int")))

# A call that comes back: the same located error as `pipec check`.
CYCLE = """pipeline top {
  step p = ping()
}

pipeline ping {
  step q = pong()
}

pipeline pong {
  step p = ping()
}
"""
uri, diagnostics, stderr = open_file("cycle.pipe", CYCLE)
expect_in("pipec check on a call cycle", stderr, "cycle.pipe:10:12: error: pipeline 'ping' calls itself (ping -> pong -> ping)")
expect("diagnostics of a call cycle", [(x["range"]["start"], x["message"][:45]) for x in diagnostics],
       [(position(CYCLE, "ping()", 0, 1), "pipeline 'ping' calls itself (ping -> pong ->")])

client.close()
for failure in failures:
    print("FAIL:", failure)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
