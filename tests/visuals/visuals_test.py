#!/usr/bin/python3
"""Visual outputs (docs/language.md "Visual outputs") on each target, from visuals.pipe.

Usage: visuals_test.py PIPEC PIPEC_METRICS WORKDIR SCENARIO

  local  `pipec run --local` keeps each file byte for byte (the Markdown also in the step
         that reads it) and the step's mlpipeline-ui-metadata.json; `pipec report` embeds
         them: HTML in a frame without scripts or fetches, Markdown as its text, the table,
         the confusion matrix and the ROC curve drawn; no <script, no http(s) reference,
         xmllint. With the KFP sources (below) the metadata is also read by the KFP UI.
  v1     the Argo workflow validates, inject-check finds nothing, the step declares
         mlpipeline-ui-metadata and each file as an unarchived artifact; its container
         command, run as the workflow says (pipec-metrics as the init container puts it,
         /tmp private), writes UI metadata that the KFP 1.8 frontend's own parser
         (OutputArtifactLoader.load, kfp_v1_frontend.js) reads into the viewers expected,
         the Markdown byte for byte. Skipped (77) without the KFP sources.
  v2     the KFP v2 spec loads in kfp 2.17 (kfp-v2-validate) with the artifact types
         system.HTML, system.Markdown, system.Artifact, system.ClassificationMetrics; the
         task's command, with KFP's placeholders filled as its launcher fills them, writes
         the Markdown artifact byte for byte and the confusion matrix's and ROC curve's
         metadata (confusionMatrix, confidenceMetrics) into the executor output.

Environment: PIPEC_VALIDATE, PIPEC_INJECT_CHECK, PIPEC_KFPV2_VALIDATE (the shared tools);
PIPEC_KFP_SOURCE, a clone of kubeflow/pipelines holding the tag 1.8.5.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
PIPE = os.path.join(HERE, "visuals.pipe")
MD = b"# Notes\r\n\tcaf\xc3\xa9 <b>&amp;</b> https://example.org `x` ]]>\n\n| a | b |\n|---|---|\n| 1 | 2 |\nno final line end"
HTML = ('<h1>Evaluation</h1><script>document.title="x"</script><p style="color:#2e7d32">accuracy 0.92</p>'
        '<img src="https://example.org/x.png"/>')
TABLE = (["class", "precision", "recall"], [["cat", "0.91", "0.88"], ["dog, big", "0.85", "0.9"]])
ROC = [(0, 0, "1"), (0.05, 0.6, "0.8"), (0.2, 0.85, "0.5"), (0.5, 0.95, "0.2"), (1, 1, "0")]
KFP_TAG = "1.8.5"

pipec, pipec_metrics, work, scenario = sys.argv[1:5]
work = os.path.abspath(os.path.join(work, scenario))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def fail(msg):
    sys.exit(f"visuals.{scenario}: {msg}")


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(map(str, argv[:4]))} ... exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def kfp_source():
    src = os.environ.get("PIPEC_KFP_SOURCE", "")
    if src and subprocess.run(["git", "-C", src, "rev-parse", "--verify", "-q", KFP_TAG + "^{commit}"],
                              capture_output=True).returncode == 0:
        return src
    return None


def frontend(metadata_file):
    """What the KFP 1.8 UI makes of the file: its viewer configs."""
    env = dict(os.environ, NODE_PATH="/usr/share/nodejs")
    p = run(["node", os.path.join(HERE, "kfp_v1_frontend.js"), kfp_source(), KFP_TAG, metadata_file],
            env=env, text=True)
    got = json.loads(p.stdout)
    if got["errors"] or got["configs"] is None:
        fail(f"the KFP 1.8 frontend could not read {metadata_file}: {got['errors']}")
    return got["configs"]


def check_frontend(metadata_file):
    configs = frontend(metadata_file)
    types = [c["type"] for c in configs]
    if types != ["web-app", "markdown", "table", "confusion_matrix", "roc"]:
        fail(f"the KFP UI shows {types}")
    web, md, table, matrix, roc = configs
    if web["htmlContent"] != HTML:
        fail(f"the KFP UI's HTML is {web['htmlContent']!r}")
    if md["markdownContent"].encode() != MD:
        fail(f"the KFP UI's Markdown is {md['markdownContent'].encode()!r}, not the file's bytes")
    if (table["labels"], table["data"]) != TABLE:
        fail(f"the KFP UI's table is {table['labels']} {table['data']}")
    if matrix["labels"] != ["cat", "dog"] or matrix["data"] != [[50, 3], [7, 40]]:
        fail(f"the KFP UI's confusion matrix is {matrix['labels']} {matrix['data']}")
    if [(p["x"], p["y"], p["label"]) for p in roc["data"]] != ROC:
        fail(f"the KFP UI's ROC curve is {roc['data']}")
    print(f"visuals.{scenario}: the KFP {KFP_TAG} frontend's OutputArtifactLoader shows {types}")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sandboxed(argv, tmp, keep=()):
    """`argv` with a private /tmp (the host directory `tmp`), as in a pod. Each folder of
    `keep` (the test's own files: pipec-metrics, the work folder) stays where it is even
    when it lies under the host's /tmp, as a build in a clone under /tmp does."""
    if not shutil.which("bwrap"):
        fail("bwrap is needed (scripts/setup.sh installs bubblewrap)")
    os.makedirs(tmp, exist_ok=True)
    binds = []
    for folder in keep:
        folder = os.path.realpath(folder)
        if folder == "/tmp" or folder.startswith("/tmp/"):
            binds += ["--bind", folder, folder]
    return run(["bwrap", "--dev-bind", "/", "/", "--bind", tmp, "/tmp", *binds, "--die-with-parent", "--", *argv])


def check_report(page_file):
    page = read(page_file).decode()
    for bad in ("<script", "http://", "https://"):
        if bad in page.lower():
            fail(f"the report holds {bad!r}")
    if shutil.which("xmllint"):
        run(["xmllint", "--noout", page_file])
    root = ET.fromstring(page.split("\n", 1)[1])  # without the DOCTYPE line
    frames = root.findall(".//iframe")
    if len(frames) != 1 or frames[0].get("sandbox") != "":
        fail("the HTML output is not in one sandboxed frame (sandbox=\"\")")
    src = frames[0].get("src")
    prefix = "data:text/html;charset=utf-8;base64,"
    doc = base64.b64decode(src[len(prefix):]).decode() if src.startswith(prefix) else ""
    if not doc.endswith(HTML) or "Content-Security-Policy" not in doc or "default-src 'none'" not in doc:
        fail("the frame does not hold the HTML output behind a policy that fetches nothing")
    pres = [p for p in root.iter("pre") if p.get("class") == "markdown"]
    shown = MD.decode().replace("\r", "\ufffd")
    if len(pres) != 1 or pres[0].text != shown:
        fail(f"the Markdown is shown as {[p.text for p in pres]!r}")
    tables = [t for t in root.iter("table") if t.get("class") == "visual"]
    cells = [[c.text or "" for c in tr] for tr in tables[0]] if tables else []
    if cells != [TABLE[0]] + TABLE[1]:
        fail(f"the table is {cells}")
    svgs = {s.get("class"): s for s in root.iter("svg")}
    if "confusion" not in svgs or len(svgs["confusion"].findall("rect")) != 4:
        fail("the confusion matrix is not drawn as 2 x 2 cells")
    counts = [t.text for t in svgs["confusion"].findall("text")]
    if not all(c in counts for c in ("50", "3", "7", "40")):
        fail(f"the confusion matrix's cells read {counts}")
    lines = svgs["roc"].findall("polyline") if "roc" in svgs else []
    if len(lines) != 1 or len(lines[0].get("points").split()) != len(ROC):
        fail("the ROC curve is not drawn with a point per row")
    print(f"visuals.{scenario}: the report embeds the 5 visual outputs, no script, no http(s)")


def local():
    rundir = os.path.join(work, "run")
    run([pipec, "run", "--local", PIPE, "--run-dir", rundir, "-q"])
    for step, name in (("evaluate", "notes"), ("keep", "copy")):
        got = read(os.path.join(rundir, "steps", step, "outputs", name))
        if got != MD:
            fail(f"steps/{step}/outputs/{name} is {got!r}, not the Markdown's bytes")
    metadata = os.path.join(rundir, "steps", "evaluate", "mlpipeline-ui-metadata.json")
    doc = json.loads(read(metadata))
    if [o["type"] for o in doc["outputs"]] != ["web-app", "markdown", "table", "confusion_matrix", "roc"]:
        fail(f"{metadata}: {doc}")
    if doc["outputs"][1]["source"].encode() != MD:
        fail(f"{metadata}: the Markdown's source is not the file's bytes")
    if os.path.exists(os.path.join(rundir, "steps", "keep", "mlpipeline-ui-metadata.json")):
        fail("a step without visual outputs has UI metadata")
    print(f"visuals.{scenario}: the run keeps the Markdown byte for byte, in its step and in the step that reads it")
    page = os.path.join(work, "report.html")
    run([pipec, "report", rundir, "-o", page])
    check_report(page)
    if kfp_source():
        check_frontend(metadata)


def v1():
    if not kfp_source():
        print(f"visuals.v1: skipped: no clone of kubeflow/pipelines with tag {KFP_TAG} at PIPEC_KFP_SOURCE "
              f"({os.environ.get('PIPEC_KFP_SOURCE', '')!r})")
        sys.exit(77)
    out = os.path.join(work, "visuals.yaml")
    run([pipec, "build", PIPE, "-o", out, "-q"])
    for tool in ("PIPEC_VALIDATE", "PIPEC_INJECT_CHECK"):
        if os.environ.get(tool):
            run([os.environ[tool], out])
    workflow = yaml.safe_load(read(out))
    tmpl = next(t for t in workflow["spec"]["templates"] if t["name"] == "evaluate")
    arts = {a["name"]: a for a in tmpl["outputs"]["artifacts"]}
    meta = arts.get("mlpipeline-ui-metadata", {})
    if meta.get("path") != "/tmp/outputs/mlpipeline-ui-metadata.json" or not meta.get("optional"):
        fail(f"the step's artifacts are {list(arts)}: no optional mlpipeline-ui-metadata")
    for name in ("page", "notes", "scores", "matrix", "curve"):
        if arts.get(name, {}).get("archive") != {"none": {}}:
            fail(f"output {name} is not an unarchived artifact (Argo's UI shows the file): {arts.get(name)}")
    if [c["name"] for c in tmpl.get("initContainers", [])] != ["pipec-metrics"]:
        fail("no init container brings pipec-metrics")
    command = tmpl["container"]["command"]
    if command[0] != "/.pipec/pipec-metrics" or "--visual" not in command:
        fail(f"the command does not run under pipec-metrics --visual: {command[:6]}")
    tmp = os.path.join(work, "pod-tmp")
    sandboxed([pipec_metrics] + command[1:], tmp, keep=(os.path.dirname(pipec_metrics), work))
    metadata = os.path.join(tmp, "outputs", "mlpipeline-ui-metadata.json")
    if read(os.path.join(tmp, "vis", "notes.md")) != MD:
        fail("the Markdown artifact's file is not the bytes written")
    check_frontend(metadata)


def v2():
    spec_file = os.path.join(work, "visuals.yaml")
    run([pipec, "build", "--target", "kfp-v2", PIPE, "-o", spec_file, "-q"])
    run([os.environ["PIPEC_KFPV2_VALIDATE"], spec_file])
    spec = yaml.safe_load(read(spec_file))
    comp = spec["components"]["comp-evaluate"]["outputDefinitions"]["artifacts"]
    titles = {name: a["artifactType"]["schemaTitle"] for name, a in comp.items()}
    want = {"page": "system.HTML", "notes": "system.Markdown", "scores": "system.Artifact",
            "matrix": "system.ClassificationMetrics", "curve": "system.ClassificationMetrics"}
    if titles != want:
        fail(f"the artifact types are {titles}")
    executor = next(e for k, e in spec["deploymentSpec"]["executors"].items() if k == "exec-evaluate")
    argv = executor["container"]["command"] + executor["container"].get("args", [])
    # KFP's launcher: each artifact's local path, the executor input as JSON.
    arts_dir = os.path.join(work, "artifacts")
    out_file = os.path.join(work, "executor_output.json")
    artifacts = {name: {"artifacts": [{"name": name, "uri": f"minio://b/{name}", "type": {"schemaTitle": t},
                                        "metadata": {}}]} for name, t in want.items()}
    executor_input = json.dumps({"inputs": {}, "outputs": {"artifacts": artifacts, "outputFile": out_file}})
    filled = []
    for word in argv:
        word = re.sub(r"\{\{\$\.outputs\.artifacts\['(\w+)'\]\.path\}\}", lambda m: os.path.join(arts_dir, m[1]), word)
        filled.append(executor_input if word == "{{$}}" else word)
    if "pipec-metrics" not in filled:
        fail("the task does not run pipec-metrics for its classification metrics")
    filled[filled.index("pipec-metrics")] = pipec_metrics
    os.makedirs(arts_dir)
    sandboxed(filled, os.path.join(work, "pod-tmp"), keep=(os.path.dirname(pipec_metrics), work))
    if read(os.path.join(arts_dir, "notes")) != MD:
        fail("the Markdown artifact is not the bytes written")
    got = json.loads(read(out_file))["artifacts"]
    matrix = got["matrix"]["artifacts"][0]["metadata"]["confusionMatrix"]
    if matrix != {"annotationSpecs": [{"displayName": "cat"}, {"displayName": "dog"}],
                  "rows": [{"row": [50, 3]}, {"row": [7, 40]}]}:
        fail(f"the confusion matrix's metadata is {matrix}")
    curve = got["curve"]["artifacts"][0]["metadata"]["confidenceMetrics"]
    if [(c["falsePositiveRate"], c["recall"], c["confidenceThreshold"]) for c in curve] != \
            [(f, t, float(th)) for f, t, th in ROC]:
        fail(f"the ROC curve's metadata is {curve}")
    print("visuals.v2: system.HTML/Markdown/Artifact/ClassificationMetrics; the Markdown artifact byte for byte; "
          "confusionMatrix and confidenceMetrics in the executor output")


{"local": local, "v1": v1, "v2": v2}[scenario]()
