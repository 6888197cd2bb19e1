#!/usr/bin/python3
"""scheduling_test.py PIPEC VALIDATE_ARGO VALIDATE_KFPV2: a container op's scheduling fields
(docs/language.md, "Scheduling") on both targets. Argo: the Kueue queue label, the priority
class, the scheduler and a memory-backed /dev/shm on the pod, valid against Argo's schema.
KFP v2: the queue label (podMetadata) and the shared memory (enabledSharedMemory) in the
kfp-kubernetes platform spec, loaded by kfp 2.17; a priority class or a scheduler, which
that spec has no field for, is a located error naming the target. run --local says once
that it applies none of them."""
import os
import subprocess
import sys
import tempfile

import yaml

PROGRAM = """op f() {
  image "busybox"
  command ["echo", "hi"]
  queue "team-a"
  shm_size "2Gi"
  labels {team: "vision"}
  %s
}

pipeline p {
  step a = f()
  step b = f()
}
"""
CLUSTER_ONLY = 'priority_class "high"\n  scheduler "volcano"'


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def main():
    pipec, validate_argo, validate_v2 = sys.argv[1:4]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full.pipe")
        portable = os.path.join(tmp, "portable.pipe")
        open(full, "w").write(PROGRAM % CLUSTER_ONLY)
        open(portable, "w").write(PROGRAM % "")
        argo = os.path.join(tmp, "full.yaml")
        r = run(pipec, "build", full, "-o", argo, "-q")
        if r.returncode != 0:
            failures.append("argo build: " + r.stderr)
        else:
            v = run(validate_argo, argo)
            if v.returncode != 0:
                failures.append("argo validate: " + v.stdout + v.stderr)
            wf = yaml.safe_load(open(argo))
            t = next(t for t in wf["spec"]["templates"] if t["name"] == "f")
            checks = {
                "queue label": t["metadata"]["labels"].get("kueue.x-k8s.io/queue-name") == "team-a",
                "priorityClassName": t.get("priorityClassName") == "high",
                "schedulerName": t.get("schedulerName") == "volcano",
                "shm volume": {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}} in t["volumes"],
                "shm mount": {"name": "dshm", "mountPath": "/dev/shm"} in t["container"]["volumeMounts"],
            }
            failures += ["argo: " + k for k, ok in checks.items() if not ok]
        spec = os.path.join(tmp, "portable.yaml")
        r = run(pipec, "build", "--target", "kfp-v2", portable, "-o", spec, "-q")
        if r.returncode != 0:
            failures.append("kfp-v2 build: " + r.stderr)
        else:
            v = run(validate_v2, spec)
            if v.returncode != 0:
                failures.append("kfp-v2 validate: " + v.stdout + v.stderr)
            docs = list(yaml.safe_load_all(open(spec)))
            platform = docs[1]["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-f"]
            if platform.get("enabledSharedMemory") != {"volumeName": "dshm", "size": "2Gi"}:
                failures.append("kfp-v2: enabledSharedMemory %r" % platform.get("enabledSharedMemory"))
            if platform.get("podMetadata", {}).get("labels", {}).get("kueue.x-k8s.io/queue-name") != "team-a":
                failures.append("kfp-v2: podMetadata %r" % platform.get("podMetadata"))
        r = run(pipec, "build", "--target", "kfp-v2", full, "-o", os.path.join(tmp, "x.yaml"), "-q")
        for field in ("priority_class", "scheduler"):
            want = "full.pipe:1:4: error: on the kfp-v2 target op 'f' cannot set '%s'" % field
            if r.returncode == 0 or want not in r.stderr:
                failures.append("kfp-v2 refusal of %s: %s" % (field, r.stderr))
        r = run(pipec, "run", "--local", full, "--run-dir", os.path.join(tmp, "run"), "-q")
        for field in ("queue", "priority_class", "scheduler", "shm_size"):
            said = r.stderr.count("'%s' is not applied by a local run" % field)
            if said != 1:
                failures.append("run --local said %d times that '%s' is not applied: %s" % (said, field, r.stderr))
        if r.returncode != 0:
            failures.append("run --local: " + r.stderr)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
