#!/usr/bin/python3
"""Failure policies, one program on three readers (tests/failure/CMakeLists.txt).

usage: failure_test.py PIPEC VALIDATE KFP_V2_VALIDATE WORKDIR PROGRAM
PROGRAM's comments hold its table: `# expect: STEP OUTCOME` (succeeded, failed, skipped,
not run) and `# expect run: STATUS`. The test checks that `pipec run --local` ends each step
and the run so; that the Argo workflow validates and encodes the policy (`failFast` in
each DAG template, and each `# expect argo: TASK continueOn failed`, `TASK depends EXPR`,
`TASK dependencies A,B` or `TASK arg VALUE` read back from the task of that name, or
`TEMPLATE/TASK` from that template's); that the check after a loop that tolerates failures
decides as the table (`# expect argo loop: TEMPLATE N items, K succeeded: holds|fails`: the
check task of that template is given N items, and its template's command is run here with
Argo's list of K succeeded iterations' outputs); and that the KFP v2 target either loads in
kfp 2.17 (with each `# expect kfp-v2: TASK triggerPolicy STRATEGY`, `TASK finalStatus PRODUCER`
or `TASK from PRODUCER.OUTPUT` read back from the task of that name, and each `# expect kfp-v2
state: STATE WORD` from the command that turns the main DAG's final state into `run.status`,
run here) or, where v2 has no form for a policy, stops with errors at FILE:LINE:COL of the forms
it cannot express and no others (one `# expect kfp-v2 error: LINE:COL TEXT` line each; on Argo
likewise `# expect argo error: LINE:COL TEXT`).
"""
import json
import os
import re
import subprocess
import sys

import yaml

PIPEC, VALIDATE, KFP_V2_VALIDATE, WORK, PROGRAM = sys.argv[1:6]
NAME = os.path.splitext(os.path.basename(PROGRAM))[0]
RUN = os.path.join(os.path.abspath(WORK), NAME)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def expectations(prefix):
    """The `# expect argo: ...` (or kfp-v2) lines: (task, what, value) each."""
    out = []
    for line in open(PROGRAM, encoding="utf-8"):
        if line.startswith(prefix):
            task, what, value = line[len(prefix):].strip().split(" ", 2)
            out.append((task, what, value))
    return out


def table():
    steps, status, kfp_error, argo_error = {}, None, [], []
    for line in open(PROGRAM, encoding="utf-8"):
        if m := re.match(r"# expect: (\S+)\s+(succeeded|failed|skipped|not run)\s*$", line):
            steps[m.group(1)] = m.group(2)
        elif m := re.match(r"# expect run: (succeeded|failed)\s*$", line):
            status = m.group(1)
        elif m := re.match(r"# expect kfp-v2 error: (\d+:\d+) (.*)$", line):
            kfp_error.append((m.group(1), m.group(2).strip()))
        elif m := re.match(r"# expect argo error: (\d+:\d+) (.*)$", line):
            argo_error.append((m.group(1), m.group(2).strip()))
    if not steps or not status:
        fail(f"{PROGRAM} has no table")
    return steps, status, kfp_error, argo_error


def local(steps, status):
    subprocess.run(["rm", "-rf", RUN])
    # Every ready step at once, as Argo starts them (no `parallelism` here): with as many
    # slots as the machine's cores (2 in CI), which ready step starts first is a race of
    # threads, and a table such as fail_fast.pipe's needs 'bad' to fail while 'slow' sleeps.
    p = subprocess.run([PIPEC, "run", "--local", PROGRAM, "--run-dir", RUN, "-j", "16"],
                       capture_output=True, text=True, timeout=120)
    print(p.stdout)
    print(p.stderr, file=sys.stderr)
    if p.returncode != (0 if status == "succeeded" else 1):
        fail(f"run --local exit {p.returncode} for a run that {status}")
    summary = json.load(open(os.path.join(RUN, "summary.json"), encoding="utf-8"))
    got = {s["step"]: s["outcome"] for s in summary["steps"]}
    if got != steps:
        fail(f"run --local outcomes {got}, expected {steps}")
    if summary["outcome"] != status:
        fail(f"run --local status {summary['outcome']}, expected {status}")


def build(target, out):
    return subprocess.run([PIPEC, "build", PROGRAM, "--target", target, "-o", out],
                          capture_output=True, text=True, timeout=60)


def fail_fast_setting():
    for line in open(PROGRAM, encoding="utf-8"):
        if m := re.match(r"\s*fail_fast (true|false)\s*$", line):
            return m.group(1) == "true"
    return True


def argo(argo_error):
    """The Argo Workflow (--target kfp-v1)."""
    out = os.path.join(RUN + ".argo.yaml")
    p = build("kfp-v1", out)
    if argo_error:
        located_error("argo", p, argo_error)
        return
    if p.returncode != 0:
        fail(f"argo build: {p.stderr}")
    v = subprocess.run([VALIDATE, out], capture_output=True, text=True, timeout=60)
    if v.returncode != 0:
        fail(f"argo output does not validate: {v.stdout}{v.stderr}")
    wf = yaml.safe_load(open(out, encoding="utf-8"))
    dags = [t for t in wf["spec"]["templates"] if "dag" in t]
    if not dags:
        fail("no DAG template")
    want = fail_fast_setting()
    for t in dags:
        # Argo's default is failFast true: the field is written only when false.
        got = t["dag"].get("failFast", True)
        if got != want:
            fail(f"template {t['name']}: failFast {got}, expected {want}")
        # Argo takes `depends` or `dependencies` in one DAG, never both.
        forms = {("depends" in task, "dependencies" in task) for task in t["dag"]["tasks"]}
        if (True, False) in forms and (False, True) in forms:
            fail(f"template {t['name']} mixes depends and dependencies")
    tasks = {task["name"]: task for t in dags for task in t["dag"]["tasks"]}
    tasks.update({t["name"] + "/" + task["name"]: task for t in dags for task in t["dag"]["tasks"]})
    for name, what, value in expectations("# expect argo: "):
        task = tasks.get(name)
        if task is None:
            fail(f"argo: no task {name}")
        if what == "continueOn":
            ok = task.get("continueOn", {}).get(value) is True
        elif what == "depends":
            ok = task.get("depends") == value
        elif what == "dependencies":
            ok = task.get("dependencies") == value.split(",")
        elif what == "arg":
            ok = value in [p.get("value") for p in task.get("arguments", {}).get("parameters", [])]
        else:
            fail(f"unknown expectation {what}")
        if not ok:
            fail(f"argo task {name}: expected {what} {value}, got {json.dumps(task)}")
    loop_checks({t["name"]: t for t in wf["spec"]["templates"]})


def loop_checks(templates):
    """Each `# expect argo loop:` line: the loop's check, run as Argo would run its pod."""
    for line in open(PROGRAM, encoding="utf-8"):
        m = re.match(r"# expect argo loop: (\S+) (\d+) items, (\d+) succeeded: (holds|fails)\s*$", line)
        if not m:
            continue
        name, items, succeeded, outcome = m.groups()
        tasks = [t for t in templates[name]["dag"]["tasks"] if t["template"] == "pipec-loop-check"]
        if len(tasks) != 1:
            fail(f"argo template {name}: no check task")
        args = {p["name"]: p["value"] for p in tasks[0]["arguments"]["parameters"]}
        loop = [t for t in templates[name]["dag"]["tasks"] if t is not tasks[0]][0]
        if args["items"] != items or args["succeeded"] != "{{tasks.%s.outputs.parameters}}" % loop["name"]:
            fail(f"argo check of {name}: arguments {args}")
        # Each iteration that succeeded gives an output, so that Argo lists it.
        body = templates[loop["template"]].get("outputs", {}).get("parameters", [])
        if "pipec-item-ok" not in [p["name"] for p in body]:
            fail(f"argo loop body {loop['template']}: no output pipec-item-ok")
        # Argo's list of the succeeded iterations' outputs: one object each, the marker in it.
        args["succeeded"] = json.dumps([{"pipec-item-ok": f"n{i}", "x": "a\\\"],{"} for i in range(int(succeeded))])
        command = [re.sub(r"\{\{inputs\.parameters\.([\w-]+)\}\}", lambda v: args[v.group(1)], word)
                   for word in templates["pipec-loop-check"]["container"]["command"]]
        p = subprocess.run(command, capture_output=True, text=True, timeout=30)
        print(p.stdout, p.stderr)
        if p.returncode != (0 if outcome == "holds" else 1):
            fail(f"argo check of {name} with {succeeded} of {items} succeeded: exit {p.returncode}, expected {outcome}")


def located_error(target, p, expected):
    """`p`, a build for `target`, stopped with the errors `expected` (LINE:COL, TEXT each)
    and no other: each error line of its stderr is at one of those places."""
    print(p.stderr)
    if p.returncode == 0:
        fail(f"{target} build succeeded; expected an error")
    stderr = p.stderr.replace(PROGRAM, os.path.basename(PROGRAM))
    for where, text in expected:
        if f"{os.path.basename(PROGRAM)}:{where}: error: {text}" not in stderr:
            fail(f"{target} error not at {where} with '{text}': {p.stderr}")
    places = {where for where, _ in expected}
    for m in re.finditer(r"^\S+?:(\d+:\d+): error: (.*)$", stderr, re.M):
        if m.group(1) not in places:
            fail(f"{target}: an error no '# expect {target} error' line names: {m.group(0)}")


def kfp_v2(kfp_error):
    out = os.path.join(RUN + ".kfpv2.yaml")
    p = build("kfp-v2", out)
    if kfp_error:
        located_error("kfp-v2", p, kfp_error)
        return
    if p.returncode != 0:
        fail(f"kfp-v2 build: {p.stderr}")
    v = subprocess.run([KFP_V2_VALIDATE, out], capture_output=True, text=True, timeout=120)
    if v.returncode != 0:
        fail(f"kfp-v2 output does not load in kfp: {v.stdout}{v.stderr}")
    spec = yaml.safe_load(open(out, encoding="utf-8"))
    dags = [spec["root"]["dag"]] + [c["dag"] for c in spec.get("components", {}).values() if "dag" in c]
    tasks = {name: task for d in dags for name, task in d["tasks"].items()}
    for name, what, value in expectations("# expect kfp-v2: "):
        task = tasks.get(name, {})
        inputs = task.get("inputs", {}).get("parameters", {}).values()
        if what == "triggerPolicy":
            ok = task.get(what, {}).get("strategy") == value
        elif what == "finalStatus":  # an input is the PipelineTaskFinalStatus of task `value`
            ok = {"taskFinalStatus": {"producerTask": value}} in inputs
        elif what == "from":  # an input is output KEY of task PRODUCER (`PRODUCER.KEY`)
            producer, key = value.split(".")
            ok = any(i.get("taskOutputParameter") == {"producerTask": producer, "outputParameterKey": key}
                     for i in inputs)
        else:
            fail(f"unknown expectation {what}")
        if not ok:
            fail(f"kfp-v2 task {name}: expected {what} {value}, got {json.dumps(task)}")
    run_states(spec)


def run_states(spec):
    """Each `# expect kfp-v2 state: STATE WORD`: the command of exec-pipec-run-status, run
    here with the state the driver selects from the PipelineTaskFinalStatus (STATE may be
    hostile text: it must come out as a word, and run nothing)."""
    for line in open(PROGRAM, encoding="utf-8"):
        if not line.startswith("# expect kfp-v2 state: "):
            continue
        state, word = line[len("# expect kfp-v2 state: "):].rstrip("\n").rsplit(" ", 1)
        work = os.path.join(RUN + ".state")
        subprocess.run(["rm", "-rf", work])
        os.makedirs(work)
        out = os.path.join(work, "status")
        command = [w.replace("{{$.inputs.parameters['state']}}", state)
                    .replace("{{$.outputs.parameters['status'].output_file}}", out)
                   for w in spec["deploymentSpec"]["executors"]["exec-pipec-run-status"]["container"]["command"]]
        p = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=30)
        got = open(out, encoding="utf-8").read() if os.path.exists(out) else None
        if p.returncode != 0 or got != word or sorted(os.listdir(work)) != ["status"]:
            fail(f"run status of state {state!r}: exit {p.returncode}, {got!r} (expected {word!r}), "
                 f"files {sorted(os.listdir(work))}")


steps, status, kfp_error, argo_error = table()
local(steps, status)
argo(argo_error)
kfp_v2(kfp_error)
print("ok", NAME)
