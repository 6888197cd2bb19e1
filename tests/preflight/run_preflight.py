#!/usr/bin/python3
"""`pipec preflight` against the Kubernetes API stand-in (preflight_kube) on loopback.

usage: run_preflight.py PIPEC PREFLIGHT_KUBE SOURCE_DIR MODE [CASE.pipe]

MODE
  case FILE.pipe  the seeded defect of FILE.pipe, on the clean cluster (clean.json) changed
                  by FILE.json (a JSON merge patch, RFC 7386: null removes), is reported once,
                  at the place its `# expect: LINE:COL CHECK` comment gives, with its object
                  and HTTP status, and no other problem is; exit 1 (`# exit: N` otherwise).
                  `# expect: none`: no problem. Each `# skipped: LINE:COL CHECK` is a finding
                  `skipped` there (a value known only at run time). `# args: ...` adds options.
                  `# status: N`: the finding's HTTP status is N. Each `# sent: TEXT`: a
                  request the stand-in was sent holds TEXT.
  examples        every dsl-examples/*.pipe on the clean cluster: exit 0, no error, warning
                  or unknown.
  forbidden       every read answered 403: unknowns at 403, exit 0; with --strict, exit 1.
  run             `pipec run --preflight` stops before uploading when preflight finds an error.
Every mode checks that the stand-in was sent nothing but GETs (discovery among them), the
access-review POSTs, dryRun=All POSTs and the registry's HEADs.
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

PIPEC, KUBE, SOURCE = sys.argv[1:4]
MODE = sys.argv[4]
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp(prefix="preflight-")
failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def merge(base, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge(out.get(key), value)
    return out


class Cluster:
    """preflight_kube serving a fixture; stop() returns the requests it was sent."""

    def __init__(self, fixture):
        self.dir = tempfile.mkdtemp(dir=TMP)
        path = os.path.join(self.dir, "fixture.json")
        with open(path, "w") as f:
            json.dump(fixture, f)
        self.requests = os.path.join(self.dir, "requests")
        self.proc = subprocess.Popen([KUBE, path, self.requests], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: stand-in
  cluster:
    server: http://127.0.0.1:{self.port}
contexts:
- name: stand-in
  context:
    cluster: stand-in
    user: tester
    namespace: team
current-context: stand-in
users:
- name: tester
  user:
    token: preflight-test
""")

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        with open(self.requests) as f:
            sent = f.read().splitlines()
        for request in sent:
            method, _, path = request.partition(" ")
            ok = (method == "GET" or (method == "HEAD" and path.startswith("/v2/")) or
                  (method == "POST" and (path.endswith("accessreviews") or "?dryRun=All" in path)))
            if not ok:
                fail(f"preflight sent {request}")
        return sent


def clean():
    with open(os.path.join(HERE, "clean.json")) as f:
        return json.load(f)


def preflight(cluster, pipe, args=()):
    command = [PIPEC, "preflight", pipe, "--kubeconfig", cluster.kubeconfig, "--registry",
               f"127.0.0.1:{cluster.port}", "--diagnostics", "json", *args]
    r = subprocess.run(command, capture_output=True, text=True, timeout=60)
    findings = []
    for line in r.stderr.splitlines():
        try:
            findings.append(json.loads(line))
        except ValueError:
            fail(f"{os.path.basename(pipe)}: not a JSON diagnostic: {line}")
    return r.returncode, findings, r


def problems(findings):
    return [f for f in findings if f.get("verdict") not in ("skipped", "ok")]


def where(f):
    loc = f.get("location") or {}
    return f"{os.path.basename(loc.get('file', '?'))}:{loc.get('line')}:{loc.get('column')}"


def run_case(pipe):
    text = open(pipe).read()
    expect = re.search(r"^# expect: (?:(\d+):(\d+) (\S+)|none)$", text, re.M)
    exit_code = re.search(r"^# exit: (\d+)$", text, re.M)
    args = re.search(r"^# args: (.*)$", text, re.M)
    if not expect:
        return fail(f"{pipe} has no '# expect: LINE:COL CHECK' line")
    line, col, check = (int(expect[1]), int(expect[2]), expect[3]) if expect[1] else (0, 0, None)
    fixture = clean()
    patch = pipe[:-5] + ".json"
    if os.path.exists(patch):
        with open(patch) as f:
            fixture = merge(fixture, json.load(f))
    cluster = Cluster(fixture)
    code, findings, r = preflight(cluster, pipe, shlex.split(args[1]) if args else [])
    sent = cluster.stop()
    name = os.path.basename(pipe)
    for m in re.finditer(r"^# sent: (.+)$", text, re.M):
        if not any(m[1] in request for request in sent):
            fail(f"{name}: no request holds '{m[1]}': {sent}")
    found = problems(findings)
    want = int(exit_code[1]) if exit_code else 1
    if code != want:
        fail(f"{name}: exit {code}, expected {want}\n{r.stdout}{r.stderr}")
    skipped = sorted(f"{where(f)} {f.get('check')}" for f in findings if f.get("verdict") == "skipped")
    want_skipped = sorted(f"{name}:{m[1]} {m[2]}" for m in re.finditer(r"^# skipped: (\d+:\d+) (\S+)$", text, re.M))
    if skipped != want_skipped:
        fail(f"{name}: skipped {skipped}, expected {want_skipped}")
    for f in findings:
        if f.get("verdict") == "skipped":
            print(f"{name}: {where(f)} skipped: {f['message']}")
    if check is None:
        if found:
            fail(f"{name}: problems where none was expected: " + "; ".join(f"{where(f)} {f.get('check')}" for f in found))
        return
    if len(found) != 1:
        fail(f"{name}: {len(found)} problems, expected exactly one ({check}): " +
             "; ".join(f"{where(f)} {f.get('check')} {f.get('message')}" for f in found))
        return
    f = found[0]
    if f.get("check") != check or where(f) != f"{name}:{line}:{col}":
        fail(f"{name}: {where(f)} {f.get('check')}, expected {name}:{line}:{col} {check}: {f.get('message')}")
    if not f.get("object") or "http_status" not in f:
        fail(f"{name}: the finding has no object or HTTP status: {f}")
    status = re.search(r"^# status: (\d+)$", text, re.M)
    if status and f.get("http_status") != int(status[1]):
        fail(f"{name}: HTTP {f.get('http_status')}, expected {status[1]}: {f.get('message')}")
    print(f"{name}: {where(f)} {f['check']} ({f['verdict']}, HTTP {f['http_status']}) {f['object']}")


def run_examples():
    pipes = sorted(glob.glob(os.path.join(SOURCE, "dsl-examples", "*.pipe")))
    if not pipes:
        return fail("no dsl-examples")
    cluster = Cluster(clean())
    for pipe in pipes:
        code, findings, r = preflight(cluster, pipe)
        name = os.path.basename(pipe)
        if code != 0 or problems(findings):
            shown = "; ".join(f"{where(f)} {f.get('check')} {f.get('message')}" for f in problems(findings))
            fail(f"{name}: exit {code}: {shown or r.stderr[-2000:]}")
        else:
            print(f"{name}: {r.stdout.strip()}")
    sent = cluster.stop()
    if not any(s.startswith("HEAD /v2/") for s in sent) or not any("accessreviews" in s for s in sent):
        fail("the examples asked no registry or no access review")
    if not any("?dryRun=All" in s for s in sent) or not any(s.startswith("GET /api/v1/nodes") for s in sent):
        fail("the examples' training jobs were not sent as dry runs, or no node was asked about")


def run_forbidden():
    fixture = clean()
    fixture["reads_403"] = 1000000
    pipe = os.path.join(SOURCE, "dsl-examples", "mpi_run.pipe")
    for strict in (False, True):
        cluster = Cluster(fixture)
        code, findings, r = preflight(cluster, pipe, ["--strict"] if strict else [])
        cluster.stop()
        unknown = [f for f in findings if f.get("verdict") in ("unknown", "error") and f.get("http_status") == 403]
        others = [f for f in problems(findings) if f not in unknown]
        if not unknown or others:
            fail(f"403 reads{' --strict' if strict else ''}: {len(unknown)} unknowns, others: {others}")
        if strict and any(f["severity"] != "error" for f in unknown):
            fail("--strict: an unknown is not an error")
        if not strict and any(f["verdict"] != "unknown" for f in unknown):
            fail("a 403 is not reported as unknown")
        if code != (1 if strict else 0):
            fail(f"403 reads{' --strict' if strict else ''}: exit {code}\n{r.stderr}")
        print(f"403 reads{' --strict' if strict else ''}: exit {code}, {len(unknown)} unknown at 403")


def run_run():
    pipe = os.path.join(HERE, "cases", "missing_pvc.pipe")
    fixture = merge(clean(), json.load(open(pipe[:-5] + ".json")))
    cluster = Cluster(fixture)
    r = subprocess.run([PIPEC, "run", pipe, "--preflight", "--kubeconfig", cluster.kubeconfig, "--registry",
                        f"127.0.0.1:{cluster.port}", "--namespace", "team", "--host", "http://127.0.0.1:9"],
                       capture_output=True, text=True, timeout=60)
    cluster.stop()
    if r.returncode != 1 or "nothing was uploaded" not in r.stderr or "pvc.exists" not in r.stderr:
        fail(f"run --preflight: exit {r.returncode}\n{r.stdout}{r.stderr}")
    else:
        print("run --preflight stopped before uploading")


{"case": lambda: run_case(sys.argv[5]), "examples": run_examples, "forbidden": run_forbidden,
 "run": run_run}[MODE]()
subprocess.run(["rm", "-rf", TMP])
sys.exit(1 if failures else 0)
