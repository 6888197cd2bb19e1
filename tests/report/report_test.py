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
    print(f"ok: {out}: {len(charts)} charts, {len(shown)} numbers, all summary.json's")
    return page


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
        page = check_page(seed, os.path.join(WORK, SCENARIO, "seed.html")).decode("utf-8")
        # summary.json says what each step ran after; the DAG draws an arrow for each.
        with open(os.path.join(seed[0], "summary.json"), encoding="utf-8") as f:
            after = {s["step"]: s["after"] for s in json.load(f)["steps"]}
        if after != {"plan": [], "all_reduce": ["plan"], "report": ["all_reduce", "plan"]}:
            fail(f"summary.json's after: {after}")
        dag = page[page.index('<svg class="dag"'):]
        if dag[:dag.index("</svg>")].count("<polygon") != 3:
            fail("the seed's DAG should have 3 arrows")
        check_page(three, os.path.join(WORK, SCENARIO, "three.html"))
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
