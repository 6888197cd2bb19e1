#!/usr/bin/python3
"""`pipec component fetch` against a real HTTP server on loopback (Python's http.server).

Usage: fetch_test.py PIPEC GRAPH.yaml CACHED_COMPONENT

GRAPH.yaml is a graph component whose one componentRef by digest names CACHED_COMPONENT
(tests/cli/inputs/components/graph.yaml and its cache file). Checks: the component is
downloaded from the url, checked and saved in an empty cache, after which the graph
component imports offline; a url serving other bytes is an error at the componentRef and
saves nothing; a url nobody listens at and a 404 are clear errors.
"""
import functools
import hashlib
import http.server
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading

pipec, graph, cached = sys.argv[1:4]
digest = os.path.basename(cached)
body = open(cached, "rb").read()
assert hashlib.sha256(body).hexdigest() == digest
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        print(detail)


with tempfile.TemporaryDirectory() as tmp:
    served = os.path.join(tmp, "served")
    os.makedirs(served)
    with open(os.path.join(served, "good.yaml"), "wb") as f:
        f.write(body)
    with open(os.path.join(served, "other.yaml"), "wb") as f:
        f.write(body.replace(b"Upper-cases", b"Lower-cases"))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=served)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()  # nobody listens there now
    text = open(graph).read()
    url = re.search(r"url: '([^']*)'", text).group(1)

    def run(name, new_url, *args):
        path = os.path.join(tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(text.replace(url, new_url))
        cache = os.path.join(tmp, name + "-cache")
        env = dict(os.environ, PIPEC_COMPONENT_CACHE=cache, NO_COLOR="1")
        r = subprocess.run([pipec, "component", *args, path], capture_output=True, text=True, env=env, timeout=120)
        return r, cache

    r, cache = run("good", f"http://127.0.0.1:{port}/good.yaml", "fetch")
    saved = os.path.join(cache, digest)
    check("fetch downloads, checks and saves the component", r.returncode == 0 and os.path.isfile(saved)
          and open(saved, "rb").read() == body and f"saved {saved}" in r.stdout, r.stdout + r.stderr)
    env = dict(os.environ, PIPEC_COMPONENT_CACHE=cache)
    show = subprocess.run([pipec, "component", "show", os.path.join(tmp, "good.yaml")], capture_output=True,
                          text=True, env=env, timeout=60)
    check("then the graph component imports offline", show.returncode == 0 and "step upper = upper(" in show.stdout,
          show.stdout + show.stderr)
    again, _ = run("good", f"http://127.0.0.1:{port}/good.yaml", "fetch")
    check("a second fetch finds it in the cache", again.returncode == 0 and "saved" not in again.stdout,
          again.stdout + again.stderr)

    # On a terminal: a progress line while the download goes on, erased when it ends;
    # with -q none (through a pipe, as above, never).
    def on_terminal(name, *extra):
        import pty
        path = os.path.join(tmp, name + ".yaml")
        with open(path, "w") as f:
            f.write(text.replace(url, f"http://127.0.0.1:{port}/good.yaml"))
        env = dict(os.environ, PIPEC_COMPONENT_CACHE=os.path.join(tmp, name + "-cache"), TERM="xterm")
        master, slave = pty.openpty()
        p = subprocess.Popen([pipec, "component", "fetch", *extra, path], stdout=slave, stderr=slave, env=env)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        p.wait()
        return p.returncode, out.decode()

    code, out = on_terminal("tty")
    check("on a terminal, a progress line erased when the download ends",
          code == 0 and f"\r\x1b[K-- fetching 1: http://127.0.0.1:{port}/good.yaml (0 files, 0 bytes so far)\r\x1b[K"
          in out and "saved " in out, repr(out))
    code, out = on_terminal("tty-quiet", "-q")
    check("-q: no progress line on a terminal", code == 0 and "\x1b" not in out and "saved " in out, repr(out))
    check("through a pipe: no control character", "\x1b" not in r.stdout + r.stderr, repr(r.stdout + r.stderr))

    r, cache = run("other", f"http://127.0.0.1:{port}/other.yaml", "fetch")
    check("other bytes at the url: an error at the componentRef, nothing saved",
          r.returncode == 1 and re.search(r"other\.yaml:\d+:\d+: error: the file at http://\S+ \(task 'Upper'\) "
                                          r"has SHA-256 [0-9a-f]{64}, not the componentRef's digest " + digest,
                                          r.stderr) is not None and not os.path.exists(os.path.join(cache, digest)),
          r.stderr)

    r, cache = run("dead", f"http://127.0.0.1:{dead_port}/good.yaml", "fetch")
    check("a url nobody answers at: a clear error", r.returncode == 1 and "cannot fetch the component of task "
          "'Upper' from http://127.0.0.1:" in r.stderr and not os.path.exists(os.path.join(cache, digest)), r.stderr)

    r, cache = run("missing", f"http://127.0.0.1:{port}/missing.yaml", "fetch")
    check("a 404: a clear error", r.returncode == 1 and "the server answered HTTP 404" in r.stderr, r.stderr)

    r, cache = run("file", "file:///etc/passwd", "fetch")
    check("a file:// url is not fetched", r.returncode == 1 and "only http and https urls are fetched" in r.stderr,
          r.stderr)
    server.shutdown()

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
