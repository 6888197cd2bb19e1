#!/usr/bin/python3
"""One diagnostics truth (issue 24): every command that reads a .pipe file reports the same
errors and warnings, at the same places, with the same text.

For every .pipe file of the repository this runs
  pipec check, pipec build, pipec graph, pipec run --local (stopped before it starts by an
  unknown parameter), and the LSP's publishDiagnostics          -- for the kfp-v1 target
  pipec check --target kfp-v2, pipec build --target kfp-v2       -- for the kfp-v2 target
and compares them: within a target, all alike; across targets, alike but for the
diagnostics that name their target. `run --local` may add its own refusals of what only a
cluster has (they say it cannot run locally, or name `--volume`), and nothing else.

usage: agree.py PIPEC REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

PIPEC, ROOT = sys.argv[1], os.path.abspath(sys.argv[2])
SKIP_DIRS = {"build", "node_modules", ".git"}
PROBE = "__agreement_probe__"


def programs():
    out = []
    for base, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        # Dot files are other tests' scratch copies (fmt writes .fmt-PID-NAME.pipe beside a file).
        out += [os.path.relpath(os.path.join(base, f), ROOT) for f in sorted(files)
                if f.endswith(".pipe") and not f.startswith(".")]
    return out


def diag_key(d, with_notes=True):
    loc = d.get("location") or {}
    key = (d["severity"], loc.get("file", ""), loc.get("line", 0), loc.get("column", 0), d["message"])
    if with_notes:
        key += (tuple(diag_key(n, False) for n in d.get("notes", [])),)
    return key


def run_cli(args, tmp):
    p = subprocess.run([PIPEC] + args + ["--diagnostics=json"], cwd=ROOT, capture_output=True, timeout=120,
                       env=dict(os.environ, HOME=tmp, TMPDIR=tmp))
    diags = []
    for line in p.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("{"):
            diags.append(json.loads(line))
    return p.returncode, [diag_key(d) for d in diags]


class Lsp:
    def __init__(self):
        self.p = subprocess.Popen([PIPEC, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
        self.id = 0
        self.request("initialize", {"processId": None, "rootUri": None,
                                    "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
        self.notify("initialized", {})

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the LSP server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.p.stdout.read(length))

    def request(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == self.id:
                return msg

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics(self, path):
        uri = "file://" + os.path.join(ROOT, path)
        with open(os.path.join(ROOT, path), "rb") as f:
            try:
                text = f.read().decode("utf-8")
            except UnicodeDecodeError:
                return None  # JSON-RPC carries UTF-8 text only: no editor can send this file
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "pipe", "version": 1,
                                                              "text": text}})
        while True:
            msg = self.read()
            if "error" in msg:
                raise RuntimeError(f"the LSP server refused {path}: {msg['error']}")
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                return msg["params"]["diagnostics"]

    def close(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.p.wait(timeout=30)


def lsp_key(d, path):
    start = d["range"]["start"]
    # The editor names the file by its absolute path; the command line as it was given.
    return ("error" if d["severity"] == 1 else "warning", path, start["line"] + 1, start["character"] + 1,
            d["message"].replace(ROOT + "/", ""))


def names_target(key):
    message = key[4]
    return any(word in message for word in ("kfp-v2", "KFP v2", "Argo", "KFP component", "KFP task", "KFP name"))


def is_local_only(key):
    message = key[4]
    return any(word in message for word in ("run --local", "--volume", "locally", "local run"))


def main():
    files = programs()
    problems = []
    lsp = Lsp()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.yaml")
        for path in files:
            _, check = run_cli(["check", path], tmp)
            _, check_v2 = run_cli(["check", "--target", "kfp-v2", path], tmp)
            _, build = run_cli(["build", "-q", "-o", out, path], tmp)
            _, build_v2 = run_cli(["build", "-q", "--target", "kfp-v2", "-o", out, path], tmp)
            _, graph = run_cli(["graph", "--format", "json", "-o", os.path.join(tmp, "g.json"), path], tmp)
            code, local = run_cli(["run", "--local", "--run-dir", os.path.join(tmp, "run"), path, "-p",
                                   PROBE + "=1"], tmp)
            published = lsp.diagnostics(path)
            # The LSP shows the diagnostics of the open file; notes become related information.
            check_here = [k[:5] for k in check if k[1] in (path, "")]
            check_here = [(k[0], path, k[2] or 1, k[3] or 1, k[4]) for k in check_here]

            def differ(name, got, want):
                if sorted(got) != sorted(want):
                    missing = [k for k in want if k not in got]
                    extra = [k for k in got if k not in want]
                    problems.append(f"{path}: {name} differs from check:\n    missing {missing}\n    extra {extra}")

            differ("build", build, check)
            differ("graph", graph, check)
            if published is not None:
                differ("lsp", [lsp_key(d, path) for d in published], check_here)
            differ("run --local", [k for k in local if not is_local_only(k)], check)
            differ("build --target kfp-v2", build_v2, check_v2)
            differ("check --target kfp-v2 (what names no target)", [k for k in check_v2 if not names_target(k)],
                   [k for k in check if not names_target(k)])
            if code not in (1, 2):
                problems.append(f"{path}: run --local exited {code}, not 1 (errors) or 2 (refused before running)")
    lsp.close()
    for p in problems:
        print(p)
    print(f"{len(files)} programs, {len(problems)} disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
