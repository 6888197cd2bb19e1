#!/usr/bin/python3
"""pipec report on real local runs (tests/report/CMakeLists.txt).

usage: report_test.py PIPEC WORKDIR SCENARIO
  page     the seed stand-in's run and 3 runs of compare.pipe: the same page
           twice for the same runs, xmllint parses it, no <script and no http(s)://, an SVG
           chart per metric, a DAG and a timeline per run, every number summary.json's text
  browser  headless Chromium draws every chart: hiding one chart's contents changes the
           screenshot (exit 77, skipped, where no chromium is installed)
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
PIPEC, WORK, SCENARIO = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def local_run(pipe, run_dir, *params):
    subprocess.run(["rm", "-rf", run_dir])
    args = [a for p in params for a in ("-p", p)]
    p = subprocess.run([PIPEC, "run", "--local", pipe, *args, "--run-dir", run_dir],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"run --local {pipe}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")


def report(dirs, out):
    p = subprocess.run([PIPEC, "report", *dirs, "-o", out], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        fail(f"pipec report: exit {p.returncode}: {p.stderr}")
    with open(out, "rb") as f:
        return f.read()


# Markup, an entity, a CDATA end, quotes and a control character: text on the page.
HOSTILE = "<b>x</b> &amp; ]]> \"q\" 'a' </table><script>\x01"


def runs():
    """The seed stand-in's run, and 3 runs of compare.pipe whose parameters and metrics differ."""
    seed = os.path.join(WORK, SCENARIO, "seed")
    local_run(os.path.join(HERE, "seed_local.pipe"), seed, "dir=" + HERE, "note=" + HOSTILE)
    three = []
    for lr, extra in [(1, "true"), (2, "false"), (4, "true")]:
        d = os.path.join(WORK, SCENARIO, f"lr-{lr}")
        local_run(os.path.join(HERE, "compare.pipe"), d, f"lr={lr}", "extra=" + extra)
        three.append(d)
    return [seed], three


def summary_numbers(run_dir):
    """Every number summary.json holds, as its text: the JSON numbers and the metric values."""
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        text = f.read()
    numbers = set(re.findall(r'": (-?[0-9][0-9.eE+-]*)', text))
    keys = set()
    for s in json.loads(text)["steps"]:
        for token in s["metrics"].split():
            name, value = token.rsplit("=", 1)
            numbers.add(value)
            keys.add(s["step"] + "." + name)
    return numbers, keys


def series_of(run_dir):
    """Each STEP.METRIC's series points (steps/STEP/metric-series.json), and every number the
    files hold (values, steps, epochs, orders) as a float."""
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        steps = [s["step"] for s in json.load(f)["steps"]]
    series, numbers = {}, set()
    for step in steps:
        path = os.path.join(run_dir, "steps", step, "metric-series.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for m in doc["metrics"]:
            if m["points"]:
                series[step + "." + m["name"]] = m["points"]
            for p in m["points"]:
                numbers |= {float(v) for v in p.values()}
    return series, numbers


def coords(points_attr):
    return [tuple(float(c) for c in xy.split(",")) for xy in points_attr.split()]


def monotone(pairs, what, key):
    """(data, pixel) pairs of one chart: equal data at equal pixels, more data further along
    (`sign` +1 to the right, -1 upwards): the runs share the axis."""
    sign = 1 if what == "x" else -1
    for a, pa in pairs:
        for b, pb in pairs:
            if a == b and pa != pb:
                fail(f"{key}: {what} {a} drawn at {pa} and at {pb}")
            if a < b and not sign * (pb - pa) > 0:
                fail(f"{key}: {what} {a} at {pa} is not before {b} at {pb}")


def check_series(root, dirs, summary_nums):
    """Each chart: a metric some run has a series of is a line per run through its points on
    shared axes (x: step, epoch or the value's order), a dot at its last point, a ring for a
    run without a series, a legend naming each run; a metric no run has a series of is a bar
    per run. The axes' numbers are the series files' or summary.json's."""
    runs = [(os.path.basename(d), *series_of(d)) for d in dirs]
    finals = {os.path.basename(d): summary_numbers(d)[1] for d in dirs}
    numbers = {float(n) for n in summary_nums}
    for _, _, n in runs:
        numbers |= n
    drawn = {"series": 0, "final": 0, "bar": 0}
    for svg in (e for e in root.iter("svg") if e.get("class") == "chart"):
        key = svg.get("data-metric")
        have = [(label, series[key]) for label, series, _ in runs if key in series]
        if not have:
            bars = [e for e in svg.iter("rect") if e.get("class") == "bar"]
            if not bars or svg.get("data-x") is not None:
                fail(f"{key}: no run has a series, expected a bar chart")
            drawn["bar"] += len(bars)
            continue
        points = [p for _, ps in have for p in ps]
        axis = ("step" if all("step" in p for p in points) else
                "epoch" if all("epoch" in p for p in points) else "order")
        if svg.get("data-x") != axis:
            fail(f"{key}: x axis {svg.get('data-x')!r}, expected {axis!r}")
        xs, ys = [], []
        for label, ps in have:
            lines = [e for e in svg.iter("polyline") if e.get("data-run") == label]
            last = [e for e in svg.iter("circle") if e.get("data-run") == label and e.get("class") == "last"]
            if len(lines) != (1 if len(ps) > 1 else 0) or len(last) != 1:
                fail(f"{key}: {label}: {len(lines)} lines and {len(last)} last dots for {len(ps)} points")
            xy = coords(lines[0].get("points")) if lines else [(float(last[0].get("cx")), float(last[0].get("cy")))]
            if len(xy) != len(ps) or xy[-1] != (float(last[0].get("cx")), float(last[0].get("cy"))):
                fail(f"{key}: {label}: {len(xy)} points drawn, the series has {len(ps)}")
            xs += [(p[axis], x) for p, (x, _) in zip(ps, xy)]
            ys += [(p["value"], y) for p, (_, y) in zip(ps, xy)]
            drawn["series"] += 1
        monotone(xs, "x", key)
        monotone(ys, "y", key)
        texts = ["".join(e.itertext()) for e in svg.iter("text")]
        for label, series, _ in runs:
            if label not in texts:
                fail(f"{key}: the legend does not name {label}")
            rings = [e for e in svg.iter("circle") if e.get("data-run") == label and e.get("class") == "final"]
            if len(rings) != (key not in series and key in finals[label]):
                fail(f"{key}: {label}: {len(rings)} rings of its final value")
            drawn["final"] += len(rings)
        for e in svg.iter("text"):
            if e.get("class") == "axis" and float("".join(e.itertext())) not in numbers:
                fail(f"{key}: the axis shows {''.join(e.itertext())}, a number of no series file")
    return drawn


def check_page(dirs, out):
    page = report(dirs, out)
    if report(dirs, out + ".again") != page:
        fail("two reports of the same runs differ")
    p = subprocess.run(["xmllint", "--noout", out], capture_output=True, text=True)
    if p.returncode != 0:
        fail("xmllint: " + p.stderr)
    text = page.decode("utf-8")
    for bad in ("<script", "http://", "https://"):
        if bad in text.lower():
            fail(f"the page holds {bad!r}")
    root = ET.fromstring(re.sub(r"^<!DOCTYPE html>", "", text))
    svgs = [e for e in root.iter("svg")]
    numbers, keys = set(), set()
    for d in dirs:
        n, k = summary_numbers(d)
        numbers |= n
        keys |= k
    charts = sorted(e.get("data-metric") for e in svgs if e.get("class") == "chart")
    if charts != sorted(keys):
        fail(f"charts {charts}, expected one per metric {sorted(keys)}")
    for kind in ("dag", "timeline"):
        if sum(e.get("class") == kind for e in svgs) != len(dirs):
            fail(f"expected one {kind} per run")
    cells = ["".join(e.itertext()) for e in root.iter("td")]
    if any("note" in c for c in cells) and HOSTILE.replace("\x01", "\ufffd") not in cells:
        fail("the parameter note is not shown as its text")
    shown = ["".join(e.itertext()) for e in root.iter() if e.get("class") == "num"]
    if not shown:
        fail("no number shown")
    for n in shown:
        if n not in numbers:
            fail(f"the page shows {n!r}, which is not a number of summary.json ({sorted(numbers)})")
    for d in dirs:
        with open(os.path.join(d, "summary.json"), encoding="utf-8") as f:
            s = json.load(f)
        for step in s["steps"]:
            for key in ("seconds", "started"):
                if not any(float(n) == step[key] for n in shown):
                    fail(f"{d}: step {step['step']}'s {key} {step[key]} is not shown")
    drawn = check_series(root, dirs, numbers)
    print(f"ok: {out}: {len(charts)} charts ({drawn}), {len(shown)} numbers, all summary.json's")
    return page, drawn


def png_rows(path):
    """The PNG's pixel data (inflated, still filtered): equal for equal pictures."""
    with open(path, "rb") as f:
        data = f.read()
    pos, idat = 8, b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return zlib.decompress(idat)


def shoot(chromium, html, png):
    profile = png + ".profile"
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--user-data-dir=" + profile, "--window-size=1100,5000", "--screenshot=" + png,
                        "file://" + html], capture_output=True, text=True, timeout=120)
    shutil.rmtree(profile, ignore_errors=True)
    if p.returncode != 0 or not os.path.exists(png):
        fail(f"chromium: exit {p.returncode}: {p.stderr[-2000:]}")
    return png_rows(png)


def check_browser(chromium, dirs, name, also):
    """The page, and for each chart a page with that chart's contents hidden, shot 3 at a
    time: each must differ from the page."""
    out = os.path.join(WORK, SCENARIO, name + ".html")
    page = report(dirs, out).decode("utf-8")
    metrics = re.findall(r'<svg class="chart" data-metric="([^"]*)"', page)
    if not metrics:
        fail("no chart in the page")
    kinds = also + metrics
    pages = [out]
    for i, kind in enumerate(kinds):
        css = (f'svg.chart[data-metric="{kind}"] > *' if kind in metrics else f"svg.{kind} > *")
        variant = f"{out}.hidden-{i}.html"
        with open(variant, "w", encoding="utf-8") as f:
            f.write(page.replace("</head>", f"<style>{css}{{visibility:hidden}}</style></head>", 1))
        pages.append(variant)
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        shots = list(pool.map(lambda h: shoot(chromium, h, h + ".png"), pages))
    for kind, shot in zip(kinds, shots[1:]):
        if shot == shots[0]:
            fail(f"{name}: the {kind} chart draws nothing: hiding its contents changes no pixel")
    print(f"ok: {name}: chromium draws {', '.join(also + [''])}{len(metrics)} charts")


def main():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if SCENARIO == "browser" and not chromium:
        print("SKIP: no chromium on PATH (Debian: apt-get install chromium); the page is still "
              "checked by report.page")
        sys.exit(77)
    seed, three = runs()
    if SCENARIO == "page":
        page = check_page(seed, os.path.join(WORK, SCENARIO, "seed.html"))[0].decode("utf-8")
        # summary.json says what each step ran after; the DAG draws an arrow for each.
        with open(os.path.join(seed[0], "summary.json"), encoding="utf-8") as f:
            after = {s["step"]: s["after"] for s in json.load(f)["steps"]}
        if after != {"plan": [], "all_reduce": ["plan"], "report": ["all_reduce", "plan"]}:
            fail(f"summary.json's after: {after}")
        dag = page[page.index('<svg class="dag"'):]
        if dag[:dag.index("</svg>")].count("<polygon") != 3:
            fail("the seed's DAG should have 3 arrows")
        _, drawn = check_page(three, os.path.join(WORK, SCENARIO, "three.html"))
        if drawn["series"] != 11:  # 3 runs x (2 metrics of 4 epochs, auc) + 2 runs' f1
            fail(f"three runs: expected 11 series drawn, {drawn}")
        # A run without series files (one from before them): a ring where the others have
        # lines, and bars where no run has one.
        bare = os.path.join(WORK, SCENARIO, "lr-2-bare")
        shutil.rmtree(bare, ignore_errors=True)
        os.makedirs(bare)
        for name in ("summary.json", "parameters.json"):
            shutil.copy(os.path.join(three[1], name), bare)
        _, drawn = check_page([three[0], bare], os.path.join(WORK, SCENARIO, "mixed.html"))
        if drawn["final"] != 3 or drawn["series"] != 4:  # lr-2 has no f1
            fail(f"a run without series beside one with: expected 3 rings and 4 lines, {drawn}")
        _, drawn = check_page([bare], os.path.join(WORK, SCENARIO, "bare.html"))
        if drawn["bar"] != 3:
            fail(f"a run without series: expected 3 bars, {drawn}")
        # A directory that is no run is refused by name.
        p = subprocess.run([PIPEC, "report", HERE, "-o", os.path.join(WORK, "x.html")],
                           capture_output=True, text=True)
        if p.returncode != 1 or "summary.json" not in p.stderr:
            fail(f"a directory without summary.json: exit {p.returncode}: {p.stderr}")
    elif SCENARIO == "browser":
        check_browser(chromium, seed, "seed", ["timeline", "dag"])
        check_browser(chromium, three, "three", [])
    else:
        fail("unknown scenario " + SCENARIO)


main()
