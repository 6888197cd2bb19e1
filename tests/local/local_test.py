#!/usr/bin/python3
"""pipec run --local against real processes (tests/local/CMakeLists.txt).

usage: local_test.py PIPEC WORKDIR SCENARIO
Each scenario runs the real binary on a pipeline beside this file and checks what the
processes did: output files, logs, the summary, the exit status.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PIPEC, WORK, SCENARIO = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
RUN = os.path.join(WORK, SCENARIO)
# Quotes, $(...), backticks, a newline, Argo's braces, a shell variable: literal text.
HOSTILE = "a \"q\" 'b' $(touch /tmp/pwned) `id` {{workflow.name}}\nline2 ${HOME} \\ end"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(*args, expect, run_dir=None, env=None):
    subprocess.run(["rm", "-rf", run_dir or RUN])
    p = subprocess.run([PIPEC, "run", "--local", *args, "--run-dir", run_dir or RUN],
                       capture_output=True, text=True, timeout=240,
                       env=None if env is None else {**os.environ, **env})
    print(p.stdout)
    print(p.stderr, file=sys.stderr)
    if p.returncode != expect:
        fail(f"exit {p.returncode}, expected {expect}")
    return p


def read(path):
    with open(os.path.join(RUN, path), encoding="utf-8") as f:
        return f.read()


def outcomes():
    return {s["step"]: s["outcome"] for s in json.loads(read("summary.json"))["steps"]}


def params_file(values):
    path = os.path.join(WORK, SCENARIO + ".params.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(values, f)
    return path


def container():
    p = run(os.path.join(HERE, "pipeline.pipe"), "--params-file", params_file({"msg": HOSTILE}),
            "-p", "n=3", expect=0)
    got = outcomes()
    want = {"g": "succeeded", "first": "succeeded", "big": "succeeded", "small": "skipped",
            "bye": "succeeded"}
    for i in range(3):
        want[f"each.{i}"] = want[f"verify.{i}"] = "succeeded"
    if got != want:
        fail(f"outcomes {got}")
    # The value reached a shell script (first), an argv word and an env variable (big, via
    # first's output), exactly.
    if read("steps/first/outputs/copy") != HOSTILE:
        fail("shell-form value changed: " + repr(read("steps/first/outputs/copy")))
    if read("steps/big/outputs/argv") != HOSTILE or read("steps/big/outputs/env") != HOSTILE:
        fail("exec-form or env value changed")
    # The loop ran over gen's list output.
    for i in range(3):
        if read(f"steps/each.{i}/outputs/argv") != f"item s{i}":
            fail(f"item {i}: " + read(f"steps/each.{i}/outputs/argv"))
    if read("steps/bye/outputs/copy") != "bye " + HOSTILE:
        fail("finally did not get the value")
    # Logs are prefixed per step and kept raw in the run dir.
    if "[big] got: a \"q\"" not in p.stdout or not read("steps/big/log").startswith("got: " + HOSTILE):
        fail("log not prefixed or not kept")
    # The $(touch /tmp/pwned) never ran, and /data stayed private to the step.
    if os.path.exists(os.path.join(RUN, "steps/first/fs/tmp/pwned")) or os.path.exists("/data/x/f"):
        fail("a value ran as code, or a step wrote the host's /data")
    # A condition false: n=1 skips big and runs small.
    run(os.path.join(HERE, "pipeline.pipe"), "-p", "n=1", expect=0)
    got = outcomes()
    if got["big"] != "skipped" or got["small"] != "succeeded" or "each.1" in got:
        fail(f"n=1 outcomes {got}")


def python():
    # Python function ops: typed values in (an int beyond 2^53, floats, a bool, hostile
    # text, a list, a map), one and several outputs out, a file each way, exactly.
    n = 9007199254740993
    values = {"text": HOSTILE, "x": 0.1, "xs": [1, 2.5, 1e-300], "m": {"a": 1, "b": -n}}
    run(os.path.join(HERE, "python.pipe"), "--params-file", params_file(values), "-p", f"n={n}",
        "-p", "flag=true", expect=0)
    got = outcomes()
    if got != {"make": "succeeded", "total": "succeeded", "check": "succeeded"}:
        fail(f"outcomes {got}")
    total = n + 0.1
    want = {"total": repr(total), "same": HOSTILE, "ok": "false", "count": str(len(HOSTILE)),
            "items": json.dumps([1.0, 2.5, 1e-300, 0.1], separators=(",", ":")),
            "both": json.dumps({"a": 1, "b": -n, "n": n}, separators=(",", ":"))}
    for name, value in want.items():
        if read(f"steps/make/outputs/{name}") != value:
            fail(f"output {name}: {read(f'steps/make/outputs/{name}')!r}, expected {value!r}")
    with open(os.path.join(RUN, "steps/make/outputs/data"), "rb") as f:
        if f.read() != HOSTILE.encode() + b"\0\xff":
            fail("file output changed")
    if read("steps/total/outputs/doubled") != repr(float(repr(total)) * 2):
        fail("one output: " + read("steps/total/outputs/doubled"))
    if "checked " + repr(HOSTILE) not in read("steps/check/log"):
        fail("the file, the text or the list did not arrive: " + read("steps/check/log"))
    # A value never became code: $(touch /tmp/pwned) did not run.
    if any(os.path.exists(os.path.join(RUN, f"steps/{s}/fs/tmp/pwned")) for s in want):
        fail("a value ran as code")
    # A package this host lacks fails its step, named, before the function runs.
    run(os.path.join(HERE, "python_missing.pipe"), expect=1)
    log = read("steps/needs/log")
    if "'pipec-no-such-package'" not in log or "'numpy'" in log or "install it on this host" not in log:
        fail("missing package not named: " + log)
    if os.path.exists(os.path.join(RUN, "steps/needs/fs/tmp/ran")):
        fail("the function ran without its package")


def failure():
    run(os.path.join(HERE, "pipeline.pipe"), "-p", "fail_item=s1", expect=1)
    got = outcomes()
    if got["verify.1"] != "failed" or got["bye"] != "succeeded":
        fail(f"outcomes {got}")
    if "failing on s1" not in read("steps/verify.1/log"):
        fail("log of the failed step")


def interrupt(group=False):
    """Ctrl-C: to the run's process only, or (group) to its whole process group, as a
    terminal sends it: the steps' sandboxes (bwrap, or the spawner's helper) have process
    groups of their own, so only the run gets it and stops the steps itself."""
    subprocess.run(["rm", "-rf", RUN])
    # Sleeps of this test's own (the four interrupt tests may run at once, and each looks
    # for its own sleepers afterwards): the route and the signal pick the numbers.
    bwrap = os.environ.get("PIPEC_LOCAL_SANDBOX") == "bwrap"
    long_s = 612 + 10 * group + 20 * bwrap + 100 * (os.getpid() % 50)
    marks = [f"sleep {long_s} ", f"sleep {long_s + 1} "]
    p = subprocess.Popen([PIPEC, "run", "--local", os.path.join(HERE, "interrupt.pipe"), "--run-dir", RUN,
                          "-p", f"long_seconds={long_s}", "-p", f"replica_seconds={long_s + 1}"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=group)
    deadline = time.time() + 30
    while time.time() < deadline and not os.path.exists(os.path.join(RUN, "steps/long/log")):
        time.sleep(0.05)
    while time.time() < deadline and "sleeping" not in open(os.path.join(RUN, "steps/long/log")).read():
        time.sleep(0.05)
    logs = [os.path.join(RUN, "steps/replicas", f) for f in ("ps-0.log", "worker-0.log", "worker-1.log")]
    while time.time() < deadline and not all(os.path.exists(f) and "replica up" in open(f).read() for f in logs):
        time.sleep(0.05)
    t0 = time.time()
    if group:
        os.killpg(p.pid, signal.SIGINT)
    else:
        p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    print(out)
    if p.returncode != 130:
        fail(f"exit {p.returncode}, expected 130")
    if time.time() - t0 > 8:
        fail("the sleeping step was not stopped")
    got = outcomes()
    if (got.get("long") != "stopped" or got.get("later") != "not run" or got.get("replicas") != "stopped"
            or got.get("cleanup") != "succeeded"):
        fail(f"outcomes {got}")
    # Every process group is gone: no sleeper of either step is left.
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m in cmd + " " for m in marks):
            left.append(cmd)
    if left:
        fail(f"processes left: {left}")
    if read("steps/cleanup/outputs/copy") != "cleaned" or "woke" in read("steps/long/log"):
        fail("finally did not run, or the step was not stopped")


def params():
    p = run(os.path.join(HERE, "pipeline.pipe"), "-p", "n=three", "-p", "nn=1", expect=2)
    if "parameter 'n' (int)" not in p.stderr or "did you mean 'n'" not in p.stderr:
        fail("override errors")
    if os.path.exists(os.path.join(RUN, "steps")):
        fail("something ran")


def limits():
    t0 = time.time()
    run(os.path.join(HERE, "limits.pipe"), expect=1)
    if time.time() - t0 > 20:
        fail("the timeout did not stop the step")
    summary = {s["step"]: s for s in json.loads(read("summary.json"))["steps"]}
    if summary["flaky"]["outcome"] != "failed" or summary["slow"]["outcome"] != "failed":
        fail(f"outcomes {summary}")
    if summary["slow"]["message"] != "timed out after 1 s" or "finished" in read("steps/slow/log"):
        fail("timeout: " + summary["slow"]["message"])
    log = read("steps/flaky/log")
    if log.count("attempt") != 3 or "seen" in log:
        fail("three attempts, each on a fresh /tmp: " + log)
    # Backoff 1 s, factor 2: the attempts start about 1 s, then 2 s apart.
    at = [float(line[3:]) for line in read("steps/backoff/log").splitlines() if line.startswith("at=")]
    gaps = [b - a for a, b in zip(at, at[1:])]
    if len(at) != 3 or not (0.9 < gaps[0] < 1.8) or not (1.9 < gaps[1] < 2.8):
        fail(f"backoff: attempts at {at}")
    # max_duration 2 s: after the waits of 1 s and 2 s no third retry starts.
    if read("steps/give_up/log").count("try") != 2:
        fail("max_duration: " + read("steps/give_up/log"))
    # working_dir: the step runs in /job, its own directory.
    if read("steps/where/log").split() != ["/job", "home=/job"] or not os.path.exists(os.path.join(RUN, "steps/where/work/here")):
        fail("working_dir: " + read("steps/where/log"))


def retry_on():
    """retries {on: [...]} (rules/retry.hpp): SIGKILL (137) is OOM-like and retried on "oom";
    exit 1 is not, unless "exit:1" is listed; each retry line names the memory a pod gets."""
    p = run(os.path.join(HERE, "retry_on.pipe"), expect=1)
    counts = {step: read(f"steps/{step}/log").count("attempt") for step in ("killed", "exits_1", "listed", "grows")}
    if counts != {"killed": 3, "exits_1": 1, "listed": 2, "grows": 4}:
        fail(f"attempts per step: {counts}")
    out = p.stdout + p.stderr
    if "no retry: the failure is none of the retry reasons (oom, evicted)" not in out:
        fail("the refused retry is not said")
    for memory in ("4Gi", "6Gi"):
        if f"(memory {memory})" not in out:
            fail(f"memory {memory} not listed")
    if "(memory 8Gi)" in out:
        fail("memory above memory_max")


def progress():
    """On a terminal: "-- N/M done, R running, W waiting, T s: names", redrawn in place and
    erased before every other line; with -q (or through a pipe, as every other case runs)
    none, and no control character."""
    import pty

    def on_terminal(*extra):
        subprocess.run(["rm", "-rf", RUN])
        master, slave = pty.openpty()
        p = subprocess.Popen([PIPEC, "run", "--local", os.path.join(HERE, "pipeline.pipe"), "--run-dir", RUN, *extra],
                             stdout=slave, stderr=slave, env=dict(os.environ, TERM="xterm"))
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

    code, text = on_terminal()
    print(text)
    lines = re.findall(r"\r\x1b\[K-- (\d+)/(\d+) done, (\d+) running, (\d+) waiting, \d+ s", text)
    if code != 0 or len(lines) < 2:
        fail("no progress line on a terminal")
    for done, total, running, waiting in lines:
        if int(done) + int(running) + int(waiting) != int(total):
            fail("progress: N/M does not add up: " + repr((done, total, running, waiting)))
    # Erased before each step's line: no step line starts after a progress line's text.
    if re.search(r"-- \d+/\d+ done[^\r]*\[", text):
        fail("a line was written after the progress line without erasing it")
    code, text = on_terminal("-q")
    if code != 0 or "\x1b" in text:
        fail("-q: a progress line on a terminal: " + repr(text[:300]))


def tmpdir():
    """A pipeline and its script in a directory under /tmp, run from there with the
    default run dir: the script stays visible although /tmp is the step's own."""
    import tempfile
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        with open(os.path.join(d, "hi.sh"), "w") as f:
            f.write('echo "hi from $0" > /tmp/said\n')
        with open(os.path.join(d, "t.pipe"), "w") as f:
            f.write('op say(dir: string) -> (said: string) {\n  image "busybox:1.36"\n'
                    '  command ["sh", "${dir}/hi.sh"]\n  outputs {said: "/tmp/said"}\n}\n'
                    'pipeline t {\n  param dir: string\n  step say = say(dir: dir)\n}\n')
        p = subprocess.run([PIPEC, "run", "--local", "t.pipe", "-p", "dir=" + d], cwd=d,
                           capture_output=True, text=True, timeout=60)
        print(p.stdout, p.stderr)
        runs = os.listdir(os.path.join(d, "pipec-runs"))
        if p.returncode != 0 or len(runs) != 1 or not runs[0].startswith("t-"):
            fail("default run dir")
        said = open(os.path.join(d, "pipec-runs", runs[0], "steps/say/outputs/said")).read()
        if said != f"hi from {d}/hi.sh":
            fail("said " + said)


def volume():
    pipe = os.path.join(HERE, "volume.pipe")
    p = run(pipe, expect=2)
    if ("volume.pipe:12:80: error: step 'write' cannot run locally: 'data' mounts PersistentVolumeClaims, "
            "which exist only in the cluster; map claim 'store' to a directory with --volume store=DIR") not in p.stderr:
        fail("no located error for the unmapped claim")
    store = os.path.join(WORK, "store")
    subprocess.run(["rm", "-rf", store])
    os.makedirs(store)
    run(pipe, "--volume", "store=" + store, expect=0)
    if open(os.path.join(store, "f")).read() != "written\n" or "read written" not in read("steps/read/worker-0.log"):
        fail("the claim's directory was not shared")
    # The container op saw the claim at its own mount path, and its emptyDir.
    if open(os.path.join(store, "checked")).read() != 'checked written it\'s "$(id)"\n':
        fail("the container op's volumes were not mounted: " + repr(open(os.path.join(store, "checked")).read()))


def training(which, leader, metric):
    p = run(os.path.join(HERE, "training.pipe"), "-p", "dir=" + HERE, "-p", "which=" + which,
            "--params-file", params_file({"msg": HOSTILE}), expect=0)
    step = {"pytorch": "torch", "mpi": "mpi", "tf": "tf", "tf_master": "tfm"}[which]
    if outcomes()[step] != "succeeded":
        fail(f"outcomes {outcomes()}")
    log = read(f"steps/{step}/{leader}.log")
    if "arg=" + repr([HOSTILE]) not in log:
        fail("the value did not reach the process exactly: " + log)
    metrics = json.loads(read(f"steps/{step}/mlpipeline-metrics.json"))["metrics"]
    if metrics != [metric]:
        fail(f"metrics {metrics}")
    return p, log


def pytorch():
    p, log = training("pytorch", "master-0", {"name": "allreduce_sum", "numberValue": 3.0, "format": "RAW"})
    if "rank 0/2" not in log or "rank 1/2" not in read("steps/torch/worker-0.log"):
        fail("two ranks")
    if "[torch/worker-0] rank 1/2" not in p.stdout:
        fail("worker log prefix")
    envs = [dict(e.split("=", 1) for e in proc["env"]) for proc in json.loads(read("steps/torch/process.json"))]
    want = [("0", "2", "2", "1"), ("1", "2", "2", "1")]  # RANK, WORLD_SIZE, PET_NNODES, PET_NPROC_PER_NODE
    if [(e["RANK"], e["WORLD_SIZE"], e["PET_NNODES"], e["PET_NPROC_PER_NODE"]) for e in envs] != want:
        fail(f"operator environment {envs}")


def mpi():
    _, log = training("mpi", "launcher-0", {"name": "total", "numberValue": 3.0, "format": "RAW"})
    if "rank 1 of 2 sum=3" not in log:
        fail("two ranks")


def tf():
    _, log = training("tf", "worker-0", {"name": "reached", "numberValue": 1.0, "format": "RAW"})
    if "worker 1 reached ['ps0']" not in read("steps/tf/worker-1.log"):
        fail("worker 1 did not reach the ps")
    tf_config = json.loads(read("steps/tf/process.json"))
    if len(tf_config) != 3:
        fail("replicas")


def tf_master():
    """chief_role "master": the chief is "master" in TF_CONFIG, as the launcher's runtime
    "pods" writes it (one implementation, runtime/tf_pods)."""
    _, log = training("tf_master", "master-0", {"name": "reached", "numberValue": 1.0, "format": "RAW"})
    procs = {p["process"]: dict(e.split("=", 1) for e in p["env"]) for p in json.loads(read("steps/tfm/process.json"))}
    if sorted(procs) != ["tfm/master-0", "tfm/ps-0", "tfm/worker-0"]:
        fail(f"replicas {sorted(procs)}")
    cfg = json.loads(procs["tfm/master-0"]["TF_CONFIG"])
    if sorted(cfg["cluster"]) != ["master", "ps", "worker"] or cfg["task"] != {"type": "master", "index": 0}:
        fail(f"TF_CONFIG {cfg}")
    if "master 0 reached ['ps0']" not in log:
        fail("the master did not reach the ps: " + log)


def mpi_tmp():
    """--run-dir under /tmp: the launcher's sandbox has its own /tmp, yet finds the hostfile
    (at /etc/mpi/hostfile, where the mpi-operator mounts it)."""
    import tempfile
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        rd = os.path.join(d, "x")
        p = run(os.path.join(HERE, "training.pipe"), "-p", "dir=" + HERE, "-p", "which=mpi", expect=0, run_dir=rd)
        log = open(os.path.join(rd, "steps/mpi/launcher-0.log")).read()
        if "rank 1 of 2 sum=3" not in log:
            fail("two ranks: " + log)
        env = dict(e.split("=", 1) for e in json.load(open(os.path.join(rd, "steps/mpi/process.json")))[0]["env"])
        if env["OMPI_MCA_orte_default_hostfile"] != "/etc/mpi/hostfile":
            fail("hostfile " + env["OMPI_MCA_orte_default_hostfile"])


def podfs():
    pipe = os.path.join(HERE, "podfs.pipe")
    state = os.path.join(WORK, "podfs-state")
    subprocess.run(["rm", "-rf", state])
    os.makedirs(state)
    # A declared output's directory is not made for the step, as in a pod.
    p = run(pipe, "-p", "which=no_mkdir", "--volume", "state=" + state, expect=1)
    summary = {s["step"]: s for s in json.loads(read("summary.json"))["steps"]}
    msg = summary["no_mkdir"]["message"]
    if summary["no_mkdir"]["outcome"] != "failed" or "output 'x' was not written to /tmp/out/x" not in msg \
            or "/tmp/out does not exist" not in msg:
        fail("an output's directory was made for the step: " + msg)
    # The banner says what applies: parallelism 1, whatever -j.
    p = run(pipe, "-j", "4", "--volume", "state=" + state, expect=0)
    if " (1 at a time)" not in p.stdout.splitlines()[0]:
        fail("banner: " + p.stdout.splitlines()[0])
    if "assumed" not in p.stdout:
        fail("no word of what is assumed of the image")
    # New directories under the host's top-level /opt, /srv, /usr/local: as in a container.
    if read("steps/used/outputs/seen") != "/usr/local/app/x\npayload":
        fail("seen: " + repr(read("steps/used/outputs/seen")))
    if not os.path.exists(os.path.join(RUN, "steps/used/work/here")) or os.path.exists("/opt/app") \
            or os.path.exists("/srv/app") or os.path.exists("/usr/local/app"):
        fail("the step's directories are not its own")
    if "bwrap" in read("steps/used/log") or "res" not in read("steps/used/log").split():
        fail("log: " + read("steps/used/log"))
    # Undeclared writes under top-level directories, those the host has (/etc, /usr, /var;
    # /data, /srv, /opt where it has them) as those it lacks: the step's own, never the host's.
    p = run(pipe, "-p", "which=top_dirs", "--volume", "state=" + state, expect=0)
    if read("steps/top/outputs/done") != "/etc\n/data":
        fail("top-level directories: " + repr(read("steps/top/outputs/done")) + read("steps/top/log"))
    for d in ("/etc", "/usr", "/var", "/data", "/srv", "/opt", "/pipec-new"):
        if os.path.exists(d + "/pipec-podfs"):
            fail("the step wrote the host's " + d)
        if not os.path.exists(os.path.join(RUN, "steps/top/fs" + d + "/pipec-podfs/x/f")):
            fail("not kept in the step's root: " + d)
    # The host's /tmp, processes and shared memory stay hidden, also in the read-only view
    # of the host's / that the step's entries link into; nothing there can be written.
    marker = f"pipec-podfs-{os.getpid()}"
    made = ["/tmp/" + marker, "/dev/shm/" + marker]
    try:
        for m in made:
            if os.path.isdir(os.path.dirname(m)):
                open(m, "w").close()
        run(pipe, "-p", "which=hidden", "-p", "marker=" + marker, "--volume", "state=" + state, expect=0)
        if read("steps/hidden/outputs/seen") != "":
            fail("the step saw or wrote what it must not: " + read("steps/hidden/outputs/seen"))
    finally:
        for m in made:
            if os.path.exists(m):
                os.remove(m)
    # Retried, then succeeded: success with no message from the failed attempt.
    p = run(pipe, "-p", "which=retry", "--volume", "state=" + state, expect=0)
    summary = {s["step"]: s for s in json.loads(read("summary.json"))["steps"]}
    if summary["flaky"]["outcome"] != "succeeded" or summary["flaky"]["message"] != "":
        fail(f"retried step: {summary['flaky']}")
    row = [line for line in p.stdout.splitlines() if line.startswith("flaky ") or line.startswith("  flaky")]
    if not row or "exit code" in row[-1] or "succeeded" not in row[-1]:
        fail(f"table row: {row}")
    if "first attempt fails" not in read("steps/flaky/log"):
        fail("the first attempt's log")


def fanin():
    """A loop with `limit 2`, a step after the whole loop reading the list of an output of
    every iteration (and of a nested loop), a loop over such a list."""
    run(os.path.join(HERE, "fanin.pipe"), "-j", "8", expect=0)
    items = ["a", "b \"q\" $(id)", "c", "d", "e"]
    if json.loads(read("steps/g/outputs/results")) != ["done " + i for i in items]:
        fail("collected: " + read("steps/g/outputs/results"))
    if json.loads(read("steps/g/outputs/nested")) != [["1p", "1q"], ["2p", "2q"]]:
        fail("nested: " + read("steps/g/outputs/nested"))
    spans = [(float(read(f"steps/w.{i}/outputs/started")), float(read(f"steps/w.{i}/outputs/ended")))
             for i in range(5)]
    most = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
    if most != 2:
        fail(f"{most} iterations at once with limit 2 and -j 8: {spans}")
    if float(read("steps/g/outputs/at")) < max(b for _, b in spans):
        fail("g ran before the loop ended")
    for i, item in enumerate(items):
        if read(f"steps/again.{i}/outputs/out") != "again done " + item:
            fail(f"again.{i}: " + read(f"steps/again.{i}/outputs/out"))
    if outcomes()["last"] != "succeeded":
        fail("last")


def metrics():
    """Container ops' metrics, as pipec-metrics collects them: from the output (stderr too),
    a spec from a parameter, and from a file the command writes."""
    p = run(os.path.join(HERE, "metrics.pipe"), expect=0, env={"LC_ALL": "C.UTF-8"})
    # After the table, a sparkline per STEP.METRIC of the series (steps in the table's order).
    series = p.stdout.split("\nSERIES\n", 1)[-1].split("\n\n")[0].splitlines()
    want = ["evaluate.accuracy  " + "\u2581" * 12 + "\u2588" * 12 + "  0.5 \u2192 0.93  min 0.5  max 0.93  (2 values)",
            "evaluate.loss      " + "\u2581" * 24 + "  0.3 \u2192 0.3  min 0.3  max 0.3  (1 value)",
            "evaluate.f1        " + "\u2581" * 24 + "  0.88 \u2192 0.88  min 0.88  max 0.88  (1 value)",
            "score.rmse         " + "\u2581" * 24 + "  0.25 \u2192 0.25  min 0.25  max 0.25  (1 value)"]
    if "\nSERIES\n" not in p.stdout or sorted(series) != sorted(want):
        fail(f"series lines: {series}")
    # --ascii: the same in ASCII, whatever the locale.
    p = run(os.path.join(HERE, "metrics.pipe"), "--ascii", expect=0, env={"LC_ALL": "C.UTF-8"})
    if "evaluate.accuracy  " + "_" * 12 + "#" * 12 + "  0.5 -> 0.93  min 0.5  max 0.93  (2 values)\n" not in p.stdout:
        fail("--ascii: no ASCII sparkline")
    got = json.loads(read("steps/evaluate/mlpipeline-metrics.json"))["metrics"]
    if got != [{"format": "PERCENTAGE", "name": "accuracy", "numberValue": 0.93},
               {"format": "RAW", "name": "loss", "numberValue": 0.3},
               {"format": "RAW", "name": "f1", "numberValue": 0.88}]:
        fail(f"evaluate: {got}")
    got = json.loads(read("steps/score/mlpipeline-metrics.json"))["metrics"]
    if got != [{"format": "RAW", "name": "rmse", "numberValue": 0.25}]:
        fail(f"score (metrics_from): {got}")
    steps = {s["step"]: s for s in json.loads(read("summary.json"))["steps"]}
    if "accuracy=0.93" not in json.dumps(steps["evaluate"]):
        fail(f"summary: {steps['evaluate']}")


def metrics_quick():
    """A command that prints its metric and ends at once: the metric is read, in each of 32
    steps of 4 runs at once (a scraper attached after the start lost such lines now and then)."""
    runs = []
    for i in range(4):
        d = os.path.join(WORK, SCENARIO, str(i))
        subprocess.run(["rm", "-rf", d])
        runs.append((d, subprocess.Popen([PIPEC, "run", "--local", os.path.join(HERE, "metrics_quick.pipe"),
                                          "-j", "32", "--run-dir", d],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)))
    for d, p in runs:
        _, err = p.communicate(timeout=200)
        if p.returncode != 0:
            fail(f"run {d}: exit {p.returncode}: {err}")
        with open(os.path.join(d, "summary.json"), encoding="utf-8") as f:
            steps = json.load(f)["steps"]
        got = {s["step"]: s["metrics"] for s in steps}
        want = {f"q.{i}": f"score={i + 1}" for i in range(32)}
        if got != want:
            fail(f"run {d}: metrics {sorted(set(got.items()) ^ set(want.items()))[:6]}")


def order():
    """More ready steps than slots: they start in the order of the file, every run the same
    (-j 1: order.pipe's steps top to bottom, the one after two of them last). The table and
    summary.json list them in that order however they ran."""
    want = ["zeta", "alpha", "mid", "beta", "omega", "last"]
    for _ in range(3):
        run(os.path.join(HERE, "order.pipe"), "-j", "1", expect=0)
        steps = json.loads(read("summary.json"))["steps"]
        got = [s["step"] for s in sorted(steps, key=lambda s: s["started"])]
        if got != want:
            fail(f"started in the order {got}, expected {want}")
    # The table and summary.json list the steps in the order of the file, however they ran:
    # every step at once; loops item by item (fanin.pipe: a loop of 5, a nested 2 x 2, and a
    # loop over the first one's outputs, with steps between).
    for _ in range(3):
        p = run(os.path.join(HERE, "order.pipe"), "-j", "8", expect=0)
        got = [s["step"] for s in json.loads(read("summary.json"))["steps"]]
        table = [line.split()[0] for line in p.stdout.split("\nSTEP ", 1)[1].splitlines()[1:7]]
        if got != want or table != want:
            fail(f"summary.json lists {got}, the table {table}, expected {want}")
    run(os.path.join(HERE, "fanin.pipe"), "-j", "8", expect=0)
    got = [s["step"] for s in json.loads(read("summary.json"))["steps"]]
    want = ([f"w.{i}" for i in range(5)] + ["p.0.0", "p.0.1", "p.1.0", "p.1.1", "g"] +
            [f"again.{i}" for i in range(5)] + ["last"])
    if got != want:
        fail(f"fanin.pipe: summary.json lists {got}, expected {want}")


def files():
    """A binary file (NUL bytes, no final newline) passed whole between steps, at the
    consumer's path, into a loop body, and on again: every digest is the producer's."""
    run(os.path.join(HERE, "files.pipe"), expect=0)
    want = read("steps/make/outputs/sum")
    import hashlib
    with open(os.path.join(RUN, "steps/make/outputs/data"), "rb") as f:
        data = f.read()
    if hashlib.sha256(data).hexdigest() != want or b"\0" not in data or data.endswith(b"\n"):
        fail("the producer's file was not kept byte for byte")
    for step in ("direct", "chained", "inside.0", "inside.1"):
        if read(f"steps/{step}/outputs/sum") != want:
            fail(f"{step} got another file: {read(f'steps/{step}/outputs/sum')}")
    if "direct at /job/in/data.bin" not in read("steps/direct/log"):
        fail("not at the path 'inputs' gives: " + read("steps/direct/log"))


def pipes():
    """Pipelines as steps (dsl-examples/pipelines_as_steps.pipe): a call, a call two deep
    (compare -> train_eval), a call per loop item with the outputs of every iteration read
    after the loop (fan-in), a call under a condition, and a loop inside a called
    pipeline: the values that flow in and out of each call are the real ones."""
    example = os.path.join(HERE, "..", "..", "dsl-examples", "pipelines_as_steps.pipe")
    run(example, "-p", "lrs=[0.25, 0.5]", expect=0)
    got = outcomes()
    calls = {"baseline": "pipeline train_eval", "cmp": "pipeline compare", "cmp/a": "pipeline train_eval",
             "cmp/b": "pipeline train_eval", "sweep.0": "pipeline train_eval",
             "sweep.1": "pipeline train_eval", "check": "pipeline train_eval"}
    kinds = {s["step"]: s["kind"] for s in json.loads(read("summary.json"))["steps"]}
    for call, kind in calls.items():
        if kinds.get(call) != kind or got.get(call) != "succeeded":
            fail(f"call {call}: {kinds.get(call)} {got.get(call)}")
    if any(o != "succeeded" for o in got.values()):
        fail(f"outcomes {got}")
    # Arguments reach the called pipeline's steps, two calls deep and per loop item;
    # a default of the called pipeline fills what the call leaves out.
    models = {"baseline/t": "lr=0.05 data=s3://bucket/train\n", "cmp/a/t": "lr=0.01 data=s3://bucket/train\n",
              "cmp/b/t": "lr=0.02 data=s3://bucket/train\n", "sweep.0/t": "lr=0.25 data=s3://bucket/train\n",
              "sweep.1/t": "lr=0.5 data=s3://bucket/train\n", "check/t": "lr=0.5 data=s3://bucket/holdout\n"}
    for step, want in models.items():
        if read(f"steps/{step}/outputs/model") != want:
            fail(f"{step}: {read(f'steps/{step}/outputs/model')!r}")
    # Outputs come out of the calls: a file (check's model, to look), values (accuracies),
    # through a loop of the called pipeline (repeats) and of the caller (the sweep's list).
    if read("steps/look/outputs/text") != models["check/t"].rstrip("\n"):  # a value: one newline off
        fail("look did not get check's model: " + read("steps/look/outputs/text"))
    if read("steps/cmp/pick/outputs/best") != "0.99":
        fail("cmp/pick: " + read("steps/cmp/pick/outputs/best"))
    want = 'sweep=["0.75","0.50"] baseline=0.95 best=0.99 repeats=["0.99","0.99"]'
    if read("steps/summary/outputs/report") != want:
        fail("summary: " + read("steps/summary/outputs/report"))
    # Under a false condition the call and the steps of its branch are skipped.
    run(example, "-p", "holdout=false", expect=0)
    got = outcomes()
    if got.get("check") != "skipped" or got.get("look") != "skipped" or "check/t" in got:
        fail(f"holdout=false: {got}")
    if got.get("summary") != "succeeded":
        fail(f"holdout=false: summary {got.get('summary')}")


def outputs():
    """The outputs of the pipeline run: each kept in outputs/NAME (a value exactly, a file
    byte for byte), listed in summary.json and shown after the table, one line each with
    control characters escaped; none when the step they come from fails."""
    p = run(os.path.join(HERE, "outputs.pipe"), "--params-file", params_file({"msg": HOSTILE}), expect=0)
    summary = json.loads(read("summary.json"))
    if read("outputs/echo") != HOSTILE:
        fail("outputs/echo: " + repr(read("outputs/echo")))
    import hashlib
    with open(os.path.join(RUN, "outputs/data"), "rb") as f:
        data = f.read()
    if hashlib.sha256(data).hexdigest() != read("outputs/sum") or b"\0" not in data or data.endswith(b"\n"):
        fail("outputs/data is not the step's file byte for byte")
    with open(os.path.join(RUN, "steps/c/m/outputs/data"), "rb") as f:
        called = f.read()
    with open(os.path.join(RUN, "outputs/called_file"), "rb") as f:
        if f.read() != called:
            fail("outputs/called_file is not the called pipeline's file")
    want = {"echo": HOSTILE, "data": os.path.join(RUN, "outputs/data"), "sum": read("outputs/sum"),
            "squares": '["4","9"]', "called": "25", "called_file": os.path.join(RUN, "outputs/called_file"),
            "called_list": '["36","49"]'}
    if summary.get("outputs") != want:
        fail(f"summary.json outputs: {summary.get('outputs')!r}, want {want!r}")
    for name, value in want.items():
        if name not in ("echo", "data", "called_file") and read(f"outputs/{name}") != value:
            fail(f"outputs/{name}: {read(f'outputs/{name}')!r}")
    shown = HOSTILE.replace("\\", "\\\\").replace("\n", "\\n")
    table = p.stdout[p.stdout.index("\nOUTPUT "):p.stdout.index("\npipeline outputs succeeded")]
    lines = table.strip("\n").split("\n")
    if lines[0].split() != ["OUTPUT", "VALUE"] or [l.split()[0] for l in lines[1:]] != list(want):
        fail("the outputs shown: " + table)
    if f"echo         {shown}" not in lines or "squares      [\"4\",\"9\"]" not in lines:
        fail("the values shown: " + table)
    # A failed step: the run fails, and has no outputs (the same run dir again: none left).
    p = subprocess.run([PIPEC, "run", "--local", os.path.join(HERE, "outputs.pipe"), "-p", "fail=true",
                        "--run-dir", RUN], capture_output=True, text=True, timeout=240)
    if p.returncode != 1:
        fail(f"fail=true: exit {p.returncode}")
    if "OUTPUT" in p.stdout or os.path.exists(os.path.join(RUN, "outputs")) or \
            "outputs" in json.loads(read("summary.json")):
        fail("outputs of a failed run")


def cpu():
    """The steps' own CPU time is the run's: bwrap returns before its PID namespace's init
    (which reaped the step's command) ends, so the run reaps that init itself (a child
    subreaper); else /usr/bin/time and bench/local missed every step's CPU time."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(os.path.join(HERE, "cpu.pipe"), expect=0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if read("steps/b/outputs/out") != "a":
        fail("b did not get a's output")
    if used < 0.5:
        fail(f"the run's children used {used:.2f} s of CPU; the two steps alone burn 0.6 s")


def spawner():
    """The default sandbox route, the run's spawner: the step's promises (spawner.pipe), and
    no helper left after the run; PIPEC_LOCAL_SANDBOX=bwrap still runs the steps."""
    run(os.path.join(HERE, "spawner.pipe"), expect=0)
    if read("steps/b/outputs/out") != "a":
        fail("b did not get a's output")
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if (RUN + "/sandbox-spawner").encode() in f.read():
                    left.append(pid)
        except OSError:
            pass
    if left:
        fail(f"the spawner is still running after the run: {left}")
    # The step's root is an overlay over the run's tree of its entries: steps/STEP/fs holds
    # what the step made (its /tmp/out), none of the host's entries, and no work directory.
    for step in ("a", "b"):
        links = [os.path.join(d, n) for d, dirs, files in os.walk(os.path.join(RUN, "steps", step, "fs"))
                 for n in dirs + files if os.path.islink(os.path.join(d, n))]
        if links:
            fail(f"steps/{step}/fs holds {len(links)} entries of the host, e.g. {links[0]}")
        if os.listdir(os.path.join(RUN, "steps", step)).count("fs.work"):
            fail(f"steps/{step}/fs.work is left after the step")
        if not os.path.isfile(os.path.join(RUN, "steps", step, "fs/tmp/out")):
            fail(f"steps/{step}/fs/tmp/out is not kept")
    p = run(os.path.join(HERE, "pipeline.pipe"), expect=0, env={"PIPEC_LOCAL_SANDBOX": "bwrap"})
    if "note:" in p.stderr:
        fail("a note with PIPEC_LOCAL_SANDBOX=bwrap")


os.makedirs(WORK, exist_ok=True)
{"fanin": fanin, "files": files, "metrics": metrics, "metrics_quick": metrics_quick, "order": order, "container": container, "failure": failure, "interrupt": interrupt, "params": params,
 "pytorch": pytorch, "mpi": mpi, "tf": tf, "tf_master": tf_master, "mpi_tmp": mpi_tmp, "podfs": podfs, "limits": limits, "retry_on": retry_on, "progress": progress, "tmpdir": tmpdir, "volume": volume, "python": python, "pipes": pipes,
 "outputs": outputs, "cpu": cpu, "spawner": spawner,
 "interrupt_group": lambda: interrupt(group=True)}[SCENARIO]()
print("ok")
