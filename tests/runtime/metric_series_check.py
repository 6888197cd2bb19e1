#!/usr/bin/python3
"""The metric series (docs/runtime.md "Metric series") against an independent parser.

Generates a synthetic training log with 10 metrics (step, global_step and epoch tokens,
progress-bar redraws, lines without a step), runs `pipec-metrics --from LOG` on it and
checks that metric-series.json holds the points this script reads with its own regular
expressions, thinned as documented: the smallest power-of-two stride that leaves at most
BOUND multiples among the orders, plus the first, the last, and the first least and
greatest values, exactly.

usage: metric_series_check.py PIPEC_METRICS LOG_OUT_DIR [LINES] [SEED]
   or: metric_series_check.py --generate LOG LINES SEED   (bench/scrape uses it)
       metric_series_check.py --compare LOG SERIES_JSON
"""
import json
import os
import random
import re
import subprocess
import sys

NAMES = ["loss", "acc", "val_loss", "val_acc", "lr", "grad_norm", "images/sec",
         "top5", "Final Cost", "f1"]
BOUND = 1024
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
BOUNDARY = " \t,;([{\"'|:="
END = r"(?=$|[ \t,;)\]}\"'%|])"


def generate(path, lines, seed):
    rnd = random.Random(seed)
    with open(path, "w", newline="") as f:
        for i in range(lines):
            kind = rnd.randrange(6)
            names = rnd.sample(NAMES, rnd.randrange(1, 4)) if kind else []
            vals = " ".join(f"{n}={rnd.uniform(-2, 9):.{rnd.randrange(1, 7)}f}" if rnd.randrange(2)
                            else f"{n}: {rnd.uniform(0, 1):.3e}" for n in names)
            step = [f"step={i}", f"global_step: {i * 8}", f"Epoch {i // 100}/50 step {i}",
                    f"epoch={i // 100}", "", f"INFO:root:Step {i}"][rnd.randrange(6)]
            if kind == 1:
                f.write(f"\r 50%|#| [{vals}]\r100%|##| [{vals} {step}]\n")
            elif kind == 0:
                f.write(f"2026-11-29 01:00:00 host:port file.py:{i} no metric here\n")
            else:
                f.write(f"{step} {vals}\n" if rnd.randrange(2) else f"[{vals}] {step}\n")


def steps(line):
    def first(words):
        m = re.search(r"(?:^|(?<=[" + re.escape(BOUNDARY) + r"]))(?:" + words +
                      r")[ \t]*[=:]?[ \t]*(\d{1,18})(?![\d.])", line)
        return int(m.group(1)) if m else None
    g = first("global_step|Global_step")
    return (g if g is not None else first("step|Step")), first("epoch|Epoch")


def parse(path):
    series = {n: [] for n in NAMES}
    with open(path, newline="") as f:
        for raw in f:
            for line in re.split(r"[\r\n]", raw):
                found = []
                for n in NAMES:
                    pat = (r"(?:^|(?<=[" + re.escape(BOUNDARY) + r"]))" + re.escape(n) +
                           r"(?:[ \t]*=|:)[ \t]*(" + NUMBER + ")" + END)
                    found += [(m.start(), n, float(m.group(1))) for m in re.finditer(pat, line)]
                if not found:
                    continue
                step, epoch = steps(line)
                for _, n, v in sorted(found):
                    series[n].append((v if v != 0 else 0.0, step, epoch))
    return series


def thin(values):
    n = len(values)
    stride = 1
    while (n + stride - 1) // stride > BOUND:
        stride *= 2
    keep = {o for o in range(0, n, stride)}
    if n:
        keep |= {n - 1, min(range(n), key=lambda o: (values[o][0], o)),
                 min(range(n), key=lambda o: (-values[o][0], o))}
    points = []
    for o in sorted(keep):
        v, step, epoch = values[o]
        p = {"order": o, "value": v}
        if step is not None:
            p["step"] = step
        if epoch is not None:
            p["epoch"] = epoch
        points.append(p)
    return stride, points


def reported(name):
    return re.sub(r"[^-_a-zA-Z0-9]+", "-", name).strip("-_")


def compare(log, series_file):
    expected = parse(log)
    doc = json.load(open(series_file))
    problems = []
    if doc.get("format") != "pipec-metric-series/1" or doc.get("bound") != BOUND:
        problems.append(f"header {doc.get('format')} {doc.get('bound')}")
    got = {m["name"]: m for m in doc["metrics"]}
    for n in NAMES:
        vals = expected[n]
        if not vals:
            continue
        m = got.get(reported(n))
        stride, points = thin(vals)
        if m is None:
            problems.append(f"{n}: missing")
        elif m["count"] != len(vals) or m["stride"] != stride or m["points"] != points:
            diff = next((i for i, (a, b) in enumerate(zip(m["points"], points)) if a != b), None)
            problems.append(f"{n}: count {m['count']}/{len(vals)} stride {m['stride']}/{stride} "
                            f"points {len(m['points'])}/{len(points)} first difference at {diff}")
    return problems, sum(len(v) for v in expected.values())


def main():
    if sys.argv[1] == "--generate":
        generate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    if sys.argv[1] == "--compare":
        problems, total = compare(sys.argv[2], sys.argv[3])
        print("\n".join(problems) or f"series equal ({total} values)")
        return 1 if problems else 0
    tool, work = sys.argv[1], os.path.abspath(sys.argv[2])
    lines = int(sys.argv[3]) if len(sys.argv) > 3 else 12000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 39
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "train.log")
    generate(log, lines, seed)
    specs = [a for n in NAMES for a in ("--metric", n)]
    p = subprocess.run([tool, *specs, "--from", log, "--metrics-file",
                        os.path.join(work, "out", "metrics.json"), "--", "true"],
                       capture_output=True, timeout=60)
    if p.returncode != 0:
        print("pipec-metrics failed:", p.returncode, p.stderr.decode())
        return 1
    problems, total = compare(log, os.path.join(work, "out", "metric-series.json"))
    print("\n".join(problems) or f"series equal ({total} values)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
