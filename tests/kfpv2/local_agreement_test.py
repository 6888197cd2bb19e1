#!/usr/bin/env python3
"""The KFP v2 spec of a program, run by kfp 2.17's own local orchestrator
(shared/tools/kfp-local-run, with --backend-driver: conditions as the backend's driver
evaluates them), agrees with `pipec run --local` of the same program: both runs succeed (or
both fail, for a run that is to fail), the same container
steps run (so the same branches are taken) and each of their outputs has the same text, a
file the same bytes (so each step got the same values). The comparison is local_agreement.py's.

  local_agreement_test.py PIPEC KFP_LOCAL_RUN WORKDIR CASE.pipe

Each `# run: NAME=JSON ...` line of CASE.pipe is one run with those parameters (none: one
run with the defaults); a `# run failed: NAME=JSON ...` line one that both runners must end
failed (pipec exit 1, kfp.local STATUS FAILURE), with the same steps failed. A `# differs: STEP OUTPUT "LOCAL" "KFP"` line (JSON strings) names
an output whose texts differ as docs/local.md says: each must be exactly that. A
`# driver: kfp` line runs kfp.local's own loop and condition resolution (no
--backend-driver), which finds a loop's items by kfp's channel names. Exit 77 (skipped) when kfp-local-run or bwrap is missing.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import local_agreement  # noqa: E402

PIPEC, KFP_RUN, WORK, CASE = sys.argv[1:5]
NAME = os.path.splitext(os.path.basename(CASE))[0]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def runs():
    """(parameters, whether the run is to fail) of each run."""
    found = []
    with open(CASE, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# run:"):
                found.append((line[len("# run:"):].split(), False))
            elif line.startswith("# run failed:"):
                found.append((line[len("# run failed:"):].split(), True))
    return found or [([], False)]


def differences():
    found = {}
    with open(CASE, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# differs:"):
                step, output, rest = line[len("# differs:"):].split(None, 2)
                texts = json.loads("[" + rest.strip().replace('" "', '", "', 1) + "]")
                found[(step, output)] = tuple(texts)
    return found


def main():
    if not os.access(KFP_RUN, os.X_OK) or shutil.which("bwrap") is None:
        print("kfp-local-run or bwrap is missing: skipped")
        sys.exit(77)
    for i, (args, to_fail) in enumerate(runs()):
        out = os.path.join(WORK, f"{NAME}-{i}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        try:
            mine, rc = local_agreement.local(PIPEC, CASE, args, os.path.join(out, "local"))
            with open(CASE, encoding="utf-8") as f:
                own_driver = any(line.strip() == "# driver: kfp" for line in f)
            theirs, report = local_agreement.kfp(PIPEC, KFP_RUN, CASE, args, out, not own_driver)
        except local_agreement.Disagreement as e:
            fail(f"run {args}: {e}")
        print(f"run {args}: local {json.dumps(mine, sort_keys=True)}")
        print(f"run {args}: kfp.local {json.dumps(theirs, sort_keys=True)}")
        if (rc, report["status"]) != ((1, "FAILURE") if to_fail else (0, "SUCCESS")):
            fail(f"run {args}: pipec run --local exit {rc}, kfp.local {report['status']} {report['reason']}"
                 + (" (the run is to fail)" if to_fail else ""))
        problems = local_agreement.compare(mine, theirs, differences())
        if problems:
            fail(f"run {args}: " + "; ".join(problems))
    print("agree")


main()
