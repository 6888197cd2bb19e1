#!/usr/bin/env bash
# runtime/deploy/horovod-mpi.yaml: passes the Trainer v2.3.0 CRD schema (the shared
# validator), and is the runtime dsl-examples/mpi_trainer_v2.pipe names, with its image.
#   deploy_runtime_test.sh VALIDATE SOURCE_DIR
set -euo pipefail
validate=$1
src=$2
manifest=$src/runtime/deploy/horovod-mpi.yaml
example=$src/dsl-examples/mpi_trainer_v2.pipe
"$validate" "$manifest"
/usr/bin/python3 - "$manifest" "$example" <<'PY'
import re, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
pipe = open(sys.argv[2]).read()
runtime = re.search(r'param training_runtime: string = "([^"]+)"', pipe).group(1)
image = re.search(r'param image: string = "([^"]+)"', pipe).group(1)
assert doc["kind"] == "ClusterTrainingRuntime", doc["kind"]
assert doc["metadata"]["name"] == runtime, (doc["metadata"]["name"], runtime)
assert doc["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] == "OpenMPI"
jobs = {j["name"]: j for j in doc["spec"]["template"]["spec"]["replicatedJobs"]}
assert set(jobs) == {"node", "launcher"}, set(jobs)
for name, job in jobs.items():
    containers = job["template"]["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["node"], name
    assert containers[0]["image"] == image, (name, containers[0]["image"], image)
print("horovod-mpi: ok")
PY
