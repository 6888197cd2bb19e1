#!/usr/bin/env python3
"""Compares, in meaning, what pipec --target kfp-v2 writes for tests/kfpv2/reference/*.pipe
with what kfp 2.17 wrote for the same pipeline (shared/reference/kfp-v2-compiled/*.yaml).

The two specs are not alike text for text: pipec shares one component between the steps of
an op, wraps each conditional step in a condition DAG of its own with the whole condition
where kfp nests one DAG per `with dsl.If`, and names tasks after the steps. So each spec is
reduced to what a run does, and those are compared:
  - the root parameters: name, type, default (kfp writes integers as floats: 3.0 == 3);
  - the leaf tasks (containers), by name (a case may map pipec's names to kfp's);
  - for each leaf, the leaves it waits for (dependentTasks and producers of its inputs,
    through DAG tasks, which stand for all their leaves; inherited from enclosing DAGs);
  - for each leaf, the root parameters it reads, and the loops around it: items (raw JSON, or the parameter/output they come
    from) and parallelism;
  - which leaves run, for every assignment of the values the conditions read: each
    triggerPolicy.condition (CEL) is evaluated on its task's inputs, resolved through the
    DAGs to root parameters and step outputs;
  - which leaves run whatever the others' outcome (ALL_UPSTREAM_TASKS_COMPLETED on the
    leaf or a DAG around it), and after which leaves;
  - task options: retryPolicy.maxRetryCount, container resources and accelerator, env,
    and the platform spec's activeDeadlineSeconds of the leaf's executor.
What pipec cannot express (each case lists it, with the reason) is left out of the
comparison and printed.

usage: compare_reference.py PIPEC CASES_DIR REFERENCE_DIR
"""
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

# pipec's task that turns the main DAG's PipelineTaskFinalStatus into `run.status`: a task
# reading its output reads the final status, as kfp's exit task reads `taskFinalStatus`.
RUN_STATUS_COMPONENT = "comp-pipec-run-status"

# name -> what differs on purpose, and the values the conditions read.
CASES = {
    "conditions": {
        "ignore": {"say-5": "dsl.OneOf (the output of whichever branch ran) has no pipec form"},
        "rename": {},
        "assign": {("output", "flip", "out"): ["0", "1", "2"], ("param", "verbose"): [True, False]},
        "options": False,
    },
    "exit_handler": {
        "ignore": {},
        "rename": {"first": "step", "second": "step-2", "clean": "cleanup"},
        "assign": {},
        "unlike": {
            "cleanup": "kfp's ignore_upstream_failure() lets `cleanup` run after a failed "
                       "`step-2`; pipec has no such option (its `finally` runs whatever the outcome)",
        },
        "options": False,
    },
    "mpi_run": {
        "source": "dsl-examples/mpi_run.pipe",
        "ignore": {},
        "rename": {"all-reduce": "mpi-job"},
        "assign": {},
        "options": False,
        "not_compared": "the container itself: kfp's reference runs the arena launcher, pipec "
                        "its own (docs/kfp-v2.md)",
    },
    "parallel_for": {
        "ignore": {},
        "rename": {},
        "assign": {},
        "options": False,
    },
    "task_options": {
        "ignore": {},
        "rename": {},
        "assign": {},
        "options": True,
        "not_compared": "requests below limits (pipec's requests equal its limits) and the "
                        "display name 'retried, not cached' (pipec names a task after its step); "
                        "every other option is compared",
    },
}


def load(path):
    with open(path) as f:
        docs = list(yaml.safe_load_all(f))
    return docs[0], (docs[1] if len(docs) > 1 else {}) or {}


def number(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class Model:
    def __init__(self, spec, platform, rename):
        self.spec = spec
        self.components = spec.get("components", {})
        self.executors = spec.get("deploymentSpec", {}).get("executors", {})
        self.platform = (platform.get("platforms", {}).get("kubernetes", {})
                         .get("deploymentSpec", {}).get("executors", {}))
        self.rename = rename
        self.leaves = {}  # name -> dict(conds, loops, deps (raw), exitlike, task, scope)
        root = spec["root"]
        self.params = {}
        for name, d in root.get("inputDefinitions", {}).get("parameters", {}).items():
            self.params[name] = (d.get("parameterType"), number(d.get("defaultValue")))
        scope = {"bindings": {}, "tasks": root["dag"]["tasks"], "parent": None, "path": ()}
        self.walk(root["dag"], scope, conds=[], loops=[], deps=set(), exitlike=False)

    def name(self, key):
        return self.rename.get(key, key)

    def resolve(self, scope, source):
        """A task input's source -> ('param', p) | ('output', leaf, key) | ('const', v) | ('item', ...)."""
        if "componentInputParameter" in source:
            name = source["componentInputParameter"]
            if scope["parent"] is None:
                return ("param", name)
            return scope["bindings"].get(name, ("unbound", name))
        if "taskOutputParameter" in source:
            t = source["taskOutputParameter"]
            return self.output_of(scope, t["producerTask"], t["outputParameterKey"])
        if "runtimeValue" in source:
            return ("const", json.dumps(source["runtimeValue"].get("constant"), sort_keys=True))
        if "taskFinalStatus" in source:
            return ("final-status",)
        return ("unknown", json.dumps(source, sort_keys=True))

    def output_of(self, scope, task_key, key):
        task = scope["tasks"][task_key]
        if task["componentRef"]["name"] == RUN_STATUS_COMPONENT:
            return ("final-status",)
        comp = self.components[task["componentRef"]["name"]]
        if "dag" not in comp:
            return ("output", self.name(task_key), key)
        sub = comp["dag"].get("outputs", {}).get("parameters", {}).get(key, {})
        src = sub.get("valueFromParameter")
        if not src:
            return ("unknown-output", task_key, key)
        inner = {"bindings": {}, "tasks": comp["dag"]["tasks"], "parent": scope, "path": ()}
        return self.output_of(inner, src["producerSubtask"], src["outputParameterKey"])

    def leaves_under(self, scope, task_key):
        task = scope["tasks"][task_key]
        if task["componentRef"]["name"] == RUN_STATUS_COMPONENT:
            return set()
        comp = self.components[task["componentRef"]["name"]]
        if "dag" not in comp:
            return {self.name(task_key)}
        out = set()
        inner = {"bindings": {}, "tasks": comp["dag"]["tasks"], "parent": scope, "path": ()}
        for k in comp["dag"]["tasks"]:
            out |= self.leaves_under(inner, k)
        return out

    def walk(self, dag, scope, conds, loops, deps, exitlike):
        for key, task in dag["tasks"].items():
            inputs = task.get("inputs", {}).get("parameters", {})
            bindings = {n: self.resolve(scope, s) for n, s in inputs.items()}
            my_conds = list(conds)
            trigger = task.get("triggerPolicy", {})
            if "condition" in trigger:
                my_conds.append((trigger["condition"], bindings))
            my_exit = exitlike or trigger.get("strategy") == "ALL_UPSTREAM_TASKS_COMPLETED"
            my_deps = set(deps)
            for d in task.get("dependentTasks", []):
                my_deps |= self.leaves_under(scope, d)
            for b in bindings.values():
                if b[0] == "output":
                    my_deps.add(b[1])
            if task["componentRef"]["name"] == RUN_STATUS_COMPONENT:
                continue
            comp = self.components[task["componentRef"]["name"]]
            if "dag" not in comp:
                self.leaves[self.name(key)] = dict(conds=my_conds, loops=loops, deps=my_deps,
                                                   exitlike=my_exit, task=task, scope=scope,
                                                   bindings=bindings, component=comp)
                continue
            my_loops = list(loops)
            inner_bindings = dict(bindings)
            it = task.get("parameterIterator")
            if it:
                items = it.get("items", {})
                if "raw" in items:
                    source = ("raw", json.dumps(json.loads(items["raw"]), sort_keys=True))
                else:
                    source = bindings.get(items.get("inputParameter"), ("unbound",))
                limit = task.get("iteratorPolicy", {}).get("parallelismLimit", 0)
                my_loops.append((source, limit))
                inner_bindings[it.get("itemInput")] = ("item", len(my_loops) - 1)
            inner = {"bindings": inner_bindings, "tasks": comp["dag"]["tasks"], "parent": scope,
                     "path": scope["path"] + (key,)}
            self.walk(comp["dag"], inner, my_conds, my_loops, my_deps, my_exit)

    # --- what runs --------------------------------------------------------------------
    @staticmethod
    def cel(expr, values):
        """Evaluates the CEL subset KFP conditions use, with `values` for parameter_values."""
        py = re.sub(r"inputs\.parameter_values\['([^']+)'\]", lambda m: "V[%r]" % m.group(1), expr)
        py = py.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"!(?!=)", " not ", py)
        py = re.sub(r"\btrue\b", "True", py)
        py = re.sub(r"\bfalse\b", "False", py)
        return eval(py, {"__builtins__": {}, "int": int, "double": float, "V": values})  # noqa: S307

    def runs(self, assignment):
        ran = set()
        for name, leaf in self.leaves.items():
            ok = True
            for expr, bindings in leaf["conds"]:
                values = {}
                for channel, source in bindings.items():
                    if source in assignment:
                        values[channel] = assignment[source]
                    elif source[0] == "param":
                        values[channel] = self.params[source[1]][1]
                    elif source[0] == "const":
                        values[channel] = json.loads(source[1])
                if not self.cel(expr, values):
                    ok = False
                    break
            if ok:
                ran.add(name)
        return ran

    def options(self, name):
        leaf = self.leaves[name]
        executor_name = leaf["component"].get("executorLabel")
        container = self.executors.get(executor_name, {}).get("container", {})
        resources = container.get("resources", {})
        limits = {k: resources[k] for k in ("cpuLimit", "resourceCpuLimit", "memoryLimit",
                                              "resourceMemoryLimit") if k in resources}
        cpu = str(limits.get("resourceCpuLimit", limits.get("cpuLimit", "")))
        memory = str(limits.get("resourceMemoryLimit", limits.get("memoryLimit", "")))
        if memory.replace(".", "").isdigit():  # kfp's old float field: GB
            memory = "%dG" % float(memory)
        acc = resources.get("accelerator", {})
        retry = leaf["task"].get("retryPolicy", {})
        platform = self.platform.get(executor_name, {})
        return {
            "retries": retry.get("maxRetryCount", 0),
            "backoff": (retry.get("backoffDuration"), number(retry.get("backoffFactor")),
                        retry.get("backoffMaxDuration")),
            "cache": leaf["task"].get("cachingOptions", {}).get("enableCache", False),
            "node selector": platform.get("nodeSelector", {}).get("labels", {}),
            "tolerations": sorted(json.dumps(t, sort_keys=True) for t in platform.get("tolerations", [])),
            "secret env": sorted((s.get("secretName"), k["secretKey"], k["envVar"])
                                 for s in platform.get("secretAsEnv", []) for k in s.get("keyToEnv", [])),
            "pvc": sorted((p.get("constant", p.get("pvcNameParameter", {}).get("runtimeValue", {}).get("constant")),
                           p.get("mountPath")) for p in platform.get("pvcMount", [])),
            "pull policy": platform.get("imagePullPolicy", ""),
            "pod labels": platform.get("podMetadata", {}).get("labels", {}),
            "cpu": cpu,
            "memory": memory,
            "accelerator": (acc.get("resourceType", acc.get("type", "")),
                            int(acc.get("resourceCount", acc.get("count", 0)) or 0)),
            "env": sorted((e["name"], e["value"]) for e in container.get("env", [])),
            "deadline": int(self.platform.get(executor_name, {}).get("activeDeadlineSeconds", 0) or 0),
        }


def compare(case, pipec, cases_dir, reference_dir):
    config = CASES[case]
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, case + ".yaml")
        source = os.path.join(cases_dir, case + ".pipe")
        if "source" in config:  # relative to the repository (CASES_DIR is tests/kfpv2/reference)
            source = os.path.join(cases_dir, "..", "..", "..", config["source"])
        subprocess.run([pipec, "build", "-q", "--target", "kfp-v2", source, "-o", out], check=True)
        ours = Model(*load(out), config["rename"])
    theirs = Model(*load(os.path.join(reference_dir, case + ".yaml")), {})
    ignore = set(config["ignore"])
    for name, why in config["ignore"].items():
        print("%s: not compared: kfp task %s: %s" % (case, name, why))
    for name, why in config.get("unlike", {}).items():
        print("%s: known difference at %s: %s" % (case, name, why))
    if config.get("not_compared"):
        print("%s: not compared: %s" % (case, config["not_compared"]))

    def check(what, a, b):
        if a != b:
            problems.append("%s: %s differs:\n    pipec: %s\n    kfp:   %s" % (case, what, a, b))

    check("root parameters", ours.params, theirs.params)
    leaves = set(theirs.leaves) - ignore
    check("leaf tasks", set(ours.leaves), leaves)
    unlike = set(config.get("unlike", {}))
    for name in sorted(leaves & set(ours.leaves)):
        a, b = ours.leaves[name], theirs.leaves[name]
        if name not in unlike:
            check("what %s waits for" % name, sorted(a["deps"] - ignore), sorted(b["deps"] - ignore))
            check("whether %s runs whatever the outcome" % name, a["exitlike"], b["exitlike"])
        check("loops around %s" % name, a["loops"], b["loops"])
        check("whether %s reads the final status" % name,
              ("final-status",) in a["bindings"].values(), ("final-status",) in b["bindings"].values())
        check("root parameters %s reads" % name,
              sorted({v[1] for v in a["bindings"].values() if v[0] == "param"}),
              sorted({v[1] for v in b["bindings"].values() if v[0] == "param"}))
        if config["options"]:
            check("options of %s" % name, ours.options(name), theirs.options(name))
    sources = list(config["assign"])
    for combo in itertools.product(*(config["assign"][s] for s in sources)):
        assignment = dict(zip(sources, combo))
        shown = ", ".join("%s=%r" % ("/".join(map(str, s[1:])), v) for s, v in assignment.items())
        check("the tasks that run when %s" % (shown or "(always)"),
              sorted(ours.runs(assignment) - ignore), sorted(theirs.runs(assignment) - ignore))
    runs = len(list(itertools.product(*config["assign"].values())))
    print("%s: %d leaf tasks, %d assignments of the conditions' values: %s"
          % (case, len(leaves), runs, "same meaning" if not problems else "DIFFERENT"))
    return problems


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    pipec, cases_dir, reference_dir = sys.argv[1:]
    problems = []
    for case in sorted(CASES):
        problems += compare(case, pipec, cases_dir, reference_dir)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
