#!/usr/bin/python3
"""pipec run --local --resume / --cache / --from against real processes (tests/local/CMakeLists.txt).

usage: resume_test.py PIPEC WORKDIR SCENARIO
Each scenario runs the real binary twice or more and checks which steps ran again and which
were reused (summary.json, the terminal lines), and that the outputs are those of a clean run.
"""
import filecmp
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PIPEC, WORK, SCENARIO = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
BASE = os.path.join(WORK, SCENARIO)
STEPS = [f"s{i}" for i in range(1, 21)]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(*args, expect):
    p = subprocess.run([PIPEC, "run", "--local", "-q", *args], capture_output=True, text=True, timeout=240)
    print(p.stdout)
    print(p.stderr, file=sys.stderr)
    if p.returncode != expect:
        fail(f"exit {p.returncode}, expected {expect}: {args}")
    return p


def path(*parts):
    return os.path.join(BASE, *parts)


def outcomes(run_dir):
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        return {s["step"]: s["outcome"] for s in json.load(f)["steps"]}


def expect_outcomes(run_dir, ran, reused, what):
    got = outcomes(run_dir)
    want = {**{s: "succeeded" for s in ran}, **{s: "reused" for s in reused}}
    if got != want:
        fail(f"{what}: outcomes {got}, expected {want}")


# A chain of 20 steps, each passing a file on (s1 from a parameter), and a step `side` after
# s2 only; `s15` runs the given command.
def chain_pipe(name, s15):
    text = f'''op start(seed: string) -> (out: file) {{
  image "busybox:1.36"
  command ["sh", "-c", "printf '%s\\\\n' \\"$0\\" > /tmp/out", "${{seed}}"]
  outputs {{out: "/tmp/out"}}
}}
op link(prev: file, i: string) -> (out: file) {{
  image "busybox:1.36"
  command ["sh", "-c", "cat /tmp/in > /tmp/out; echo \\"step $0\\" >> /tmp/out", "${{i}}"]
  inputs {{prev: "/tmp/in"}}
  outputs {{out: "/tmp/out"}}
}}
op fifteen(prev: file) -> (out: file) {{
  image "busybox:1.36"
  command ["sh", "-c", {json.dumps(s15)}]
  inputs {{prev: "/tmp/in"}}
  outputs {{out: "/tmp/out"}}
}}
pipeline chain {{
  param seed: string = "seed"
  step s1 = start(seed: seed)
'''
    for i in range(2, 21):
        call = "fifteen(prev: s14.out)" if i == 15 else 'link(prev: s%d.out, i: "%d")' % (i - 1, i)
        text += f"  step s{i} = {call}\n"
    text += '  step side = link(prev: s2.out, i: "side")\n}\n'
    file = path(name)
    with open(file, "w", encoding="utf-8") as f:
        f.write(text)
    return file


FIXED = 'cat /tmp/in > /tmp/out; echo fixed >> /tmp/out'


def same_outputs(a, b, steps):
    for s in steps:
        out_a, out_b = os.path.join(a, "steps", s, "outputs"), os.path.join(b, "steps", s, "outputs")
        names = sorted(os.listdir(out_a))
        if names != sorted(os.listdir(out_b)) or not names:
            fail(f"{s}: outputs {names} and {sorted(os.listdir(out_b))}")
        for n in names:
            if not filecmp.cmp(os.path.join(out_a, n), os.path.join(out_b, n), shallow=False):
                fail(f"{s}: output {n} differs from a clean run's")


def chain():
    """Fails at s15; after a fix to s15's command, --resume runs exactly s15-s20."""
    subprocess.run(["rm", "-rf", BASE])
    os.makedirs(BASE)
    broken, fixed = chain_pipe("broken.pipe", "exit 3"), chain_pipe("fixed.pipe", FIXED)
    run_dir, clean = path("run"), path("clean")
    run(broken, "--run-dir", run_dir, expect=1)
    got = outcomes(run_dir)
    if got["s14"] != "succeeded" or got["s15"] != "failed" or got["s16"] != "not run":
        fail(f"the broken run: {got}")
    p = run(fixed, "--resume", run_dir, expect=0)
    expect_outcomes(run_dir, STEPS[14:], STEPS[:14] + ["side"], "resumed after the fix")
    for s in STEPS[:14]:
        if f"[{s}] reused: not run" not in p.stdout:
            fail(f"the terminal does not say {s} was reused")
    if "[s15] succeeded" not in p.stdout:
        fail("the terminal does not say s15 ran")
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        s1 = json.load(f)["steps"][0]
    if s1.get("reused_from") != os.path.join(run_dir, "steps", "s1"):
        fail(f"reused_from {s1}")
    # Byte for byte what a clean run of the fixed pipeline gives; off by default (no reuse).
    run(fixed, "--run-dir", clean, expect=0)
    expect_outcomes(clean, STEPS + ["side"], [], "a clean run")
    same_outputs(run_dir, clean, STEPS + ["side"])
    # Nothing changed: every step reused, into another run dir (the files are placed there).
    again = path("again")
    run(fixed, "--resume", run_dir, "--run-dir", again, expect=0)
    expect_outcomes(again, [], STEPS + ["side"], "resumed with nothing changed")
    same_outputs(again, clean, STEPS + ["side"])
    # A result that is no longer whole (one byte of s10's output changed) is not taken: s10
    # runs again and gives the same bytes, so s11 is reused.
    with open(os.path.join(run_dir, "steps/s10/outputs/out"), "r+b") as f:
        f.write(b"X")
    run(fixed, "--resume", run_dir, expect=0)
    expect_outcomes(run_dir, ["s10"], [s for s in STEPS if s != "s10"] + ["side"], "s10's output changed")
    same_outputs(run_dir, clean, STEPS + ["side"])


def from_step():
    """--from s5 runs s5-s20 again, not s1-s4 or side (which depends on s2 only)."""
    subprocess.run(["rm", "-rf", BASE])
    os.makedirs(BASE)
    fixed, run_dir = chain_pipe("fixed.pipe", FIXED), path("run")
    run(fixed, "--run-dir", run_dir, expect=0)
    run(fixed, "--resume", run_dir, "--from", "s5", expect=0)
    expect_outcomes(run_dir, STEPS[4:], STEPS[:4] + ["side"], "--from s5")
    run(fixed, "--resume", run_dir, "--from", "s2", expect=0)
    expect_outcomes(run_dir, STEPS[1:] + ["side"], ["s1"], "--from s2")
    # A step the pipeline does not have, or nothing to reuse: usage errors, nothing runs.
    p = run(fixed, "--resume", run_dir, "--from", "s99", expect=2)
    if "--from: pipeline 'chain' has no step 's99'" not in p.stderr:
        fail("--from s99: " + p.stderr)
    p = run(fixed, "--run-dir", path("other"), "--from", "s2", expect=2)
    if "give --resume RUN_DIR or --cache DIR" not in p.stderr:
        fail("--from alone: " + p.stderr)
    p = run(fixed, "--resume", path("nothing"), expect=2)
    if "is not the run dir of a local run" not in p.stderr:
        fail("--resume of no run dir: " + p.stderr)


def interrupted():
    """A run killed (SIGKILL) while s10 runs: no summary.json, yet --resume reuses s1-s9."""
    subprocess.run(["rm", "-rf", BASE])
    os.makedirs(BASE)
    slow = chain_pipe("slow.pipe", FIXED)
    with open(slow, encoding="utf-8") as f:
        text = f.read().replace('step s10 = link(prev: s9.out, i: "10")', "step s10 = slow(prev: s9.out)")
    with open(slow, "w", encoding="utf-8") as f:
        f.write(text + 'op slow(prev: file) -> (out: file) {\n  image "busybox:1.36"\n  command ["sleep", "60"]\n'
                '  inputs {prev: "/tmp/in"}\n  outputs {out: "/tmp/out"}\n}\n')
    fixed, run_dir = chain_pipe("fixed.pipe", FIXED), path("run")
    p = subprocess.Popen([PIPEC, "run", "--local", "-q", slow, "--run-dir", run_dir, "-j", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 60
    while not os.path.exists(os.path.join(run_dir, "steps/s9/cache.json")):
        if time.time() > deadline or p.poll() is not None:
            os.killpg(p.pid, signal.SIGKILL)
            fail("s9 never finished in the slow run")
        time.sleep(0.05)
    time.sleep(0.3)  # s10 is running now
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    if os.path.exists(os.path.join(run_dir, "summary.json")):
        fail("the killed run wrote its summary")
    run(fixed, "--resume", run_dir, expect=0)
    reused = {s for s, o in outcomes(run_dir).items() if o == "reused"}
    # s1-s9 and side had kept their records; s10 (changed) and everything after it ran.
    if not set(STEPS[:9]) <= reused or reused & set(STEPS[9:]):
        fail(f"reused after the kill: {sorted(reused)}")


def input_bytes():
    """One byte of an input file changed: its consumers run again, the rest is reused. The
    producer reads a host file (not in its key), so it opts out with `cache false`."""
    subprocess.run(["rm", "-rf", BASE])
    os.makedirs(BASE)
    data = path("data.txt")
    with open(data, "wb") as f:
        f.write(b"alpha\nbeta\n")
    pipe = path("input.pipe")
    with open(pipe, "w", encoding="utf-8") as f:
        f.write('''op read(src: string) -> (out: file) {
  image "busybox:1.36"
  command ["sh", "-c", "cat \\"$0\\" > /tmp/out", "${src}"]
  outputs {out: "/tmp/out"}
  cache false
}
op count(f: file) -> (n: string, copy: file) {
  image "busybox:1.36"
  command ["sh", "-c", "wc -c < /tmp/f > /tmp/n; cp /tmp/f /tmp/copy"]
  inputs {f: "/tmp/f"}
  outputs {n: "/tmp/n", copy: "/tmp/copy"}
}
op say(text: string) -> (out: string) {
  image "busybox:1.36"
  command ["sh", "-c", "echo \\"$0\\" > /tmp/out", "${text}"]
  outputs {out: "/tmp/out"}
}
pipeline input {
  param src: string
  step read = read(src: src)
  step consume = count(f: read.out)
  step again = count(f: consume.copy)
  step size = say(text: consume.n)
  step other = say(text: "unrelated")
}
''')
    run_dir = path("run")
    run(pipe, "-p", "src=" + data, "--run-dir", run_dir, expect=0)
    # Nothing changed: the producer runs (cache false), gives the same bytes; the rest is reused.
    run(pipe, "-p", "src=" + data, "--resume", run_dir, expect=0)
    expect_outcomes(run_dir, ["read"], ["consume", "again", "size", "other"], "nothing changed")
    with open(data, "r+b") as f:
        f.seek(1)
        f.write(b"L")  # one byte, the same size: only the bytes tell
    run(pipe, "-p", "src=" + data, "--resume", run_dir, expect=0)
    # consume reads the changed bytes, and so does `again` (its copy); `size` gets the same
    # count (the same text), so it is reused, as is `other`.
    expect_outcomes(run_dir, ["read", "consume", "again"], ["size", "other"], "one byte changed")
    with open(os.path.join(run_dir, "steps/again/outputs/copy"), "rb") as f:
        if f.read() != b"aLpha\nbeta\n":
            fail("the consumer did not get the new bytes")


def torch_metrics(run_dir):
    """The metrics of step `torch` in summary.json (its steps are listed as they end: the
    skipped ones may come first)."""
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        return next(s["metrics"] for s in json.load(f)["steps"] if s["step"] == "torch")


def training():
    """A pytorch_job (2 local replicas) is reused with its metrics; a new value runs it again."""
    subprocess.run(["rm", "-rf", BASE])
    os.makedirs(BASE)
    pipe, run_dir = os.path.join(HERE, "training.pipe"), path("run")
    run(pipe, "-p", "dir=" + HERE, "-p", "which=pytorch", "--run-dir", run_dir, expect=0)
    metrics = torch_metrics(run_dir)
    p = run(pipe, "-p", "dir=" + HERE, "-p", "which=pytorch", "--resume", run_dir, expect=0)
    if outcomes(run_dir)["torch"] != "reused" or "[torch] reused" not in p.stdout:
        fail(f"resumed: {outcomes(run_dir)}")
    if torch_metrics(run_dir) != metrics or metrics != "allreduce_sum=3":
        fail(f"the reused step lost its metrics: {torch_metrics(run_dir)!r}, before {metrics!r}")
    if not os.path.exists(os.path.join(run_dir, "steps/torch/master-0.log")):
        fail("the reused step lost its logs")
    run(pipe, "-p", "dir=" + HERE, "-p", "which=pytorch", "-p", "msg=other", "--resume", run_dir, expect=0)
    if outcomes(run_dir)["torch"] != "succeeded":
        fail(f"a new msg: {outcomes(run_dir)}")


def python():
    """Python ops: a new `text` runs `make` again; `total` gets the same value (reused), `check`
    a new one (runs)."""
    subprocess.run(["rm", "-rf", BASE])
    os.makedirs(BASE)
    pipe, run_dir, clean = os.path.join(HERE, "python.pipe"), path("run"), path("clean")
    run(pipe, "--run-dir", run_dir, expect=0)
    run(pipe, "--resume", run_dir, expect=0)
    expect_outcomes(run_dir, [], ["make", "total", "check"], "Python ops, nothing changed")
    run(pipe, "-p", "text=new", "--resume", run_dir, expect=0)
    expect_outcomes(run_dir, ["make", "check"], ["total"], "Python ops, a new text")
    run(pipe, "-p", "text=new", "--run-dir", clean, expect=0)
    same_outputs(run_dir, clean, ["make", "total"])


def cache():
    """--cache DIR across run dirs: the second run reuses every step from the cache; `cache
    false` opts a step out."""
    subprocess.run(["rm", "-rf", BASE])
    os.makedirs(BASE)
    fixed, store = chain_pipe("fixed.pipe", FIXED), path("cache")
    run(fixed, "--cache", store, "--run-dir", path("one"), expect=0)
    p = run(fixed, "--cache", store, "--run-dir", path("two"), expect=0)
    expect_outcomes(path("two"), [], STEPS + ["side"], "the second run with --cache")
    if f"taken from {store}/" not in p.stdout:
        fail("the terminal does not name the cache entry")
    same_outputs(path("one"), path("two"), STEPS + ["side"])
    if any(n.startswith(".part-") for n in os.listdir(store)):
        fail("a partial cache entry was left")
    run(fixed, "--cache", store, "--run-dir", path("three"), "-p", "seed=other", expect=0)
    expect_outcomes(path("three"), STEPS + ["side"], [], "a new seed")


{"chain": chain, "from": from_step, "interrupted": interrupted, "input": input_bytes,
 "training": training, "python": python, "cache": cache}[SCENARIO]()
print("ok")
