#!/usr/bin/env python3
"""Times `pipec build` on the synthetic pipelines written by gen_pipeline.py.

For each N it runs `pipec build gen_N.pipe -o OUT.yaml -q` R times on one core and keeps
the fastest run (wall time, and the peak RSS of that run) and the least CPU time (user +
sys), then does the same with `-o OUT.tar.gz` (R/2 times) for the package's time and size.
The .yaml runs of all sizes are interleaved (round 1 of every N, then round 2, ...), so a
slow spell of the machine falls on every size alike rather than on one.
Each run goes through runstat (runstat.c): it pins itself to the core, forks, execs pipec
and reports CLOCK_MONOTONIC wall time and wait4's ru_maxrss and CPU times of the child.

Time per step: every build pays a fixed cost (exec, dynamic loading, the stdlib, the ops
and parameters of the program) that does not depend on N. The row "base" builds the same
program with one step; the time per step of N is then (T(N) - T(1)) / (N - 1), the time
the N - 1 further steps took, and that is what the flatness target is checked on. The
end-to-end figure T(N) / N is printed beside it. A row "start" times `pipec --version`, a
row "seed" the README's first build (dsl-examples/mpi_run.pipe into a .tar.gz, 41 runs).

usage: measure.py PIPEC WORKDIR --runstat RUNSTAT [--sizes 10,100,...] [--cpu 0]
                  [--reps R] [--validate VALIDATOR] [--target kfp-v1|kfp-v2]
Exits 1 when a target of issue 3 is missed. Python stdlib only.
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNSTAT = ""  # the runstat binary (runstat.c), from --runstat
CPU = 0
TARGET_N = 5000
TARGET_MS = 60.0
TARGET_MIB = 64.0
FLAT_FROM, FLAT_TO, FLAT_TOL = 100, 50000, 0.20


def run_once(argv):
    """Runs argv under runstat; returns (wall_s, maxrss_kib, cpu_s). Exits on failure."""
    p = subprocess.run([RUNSTAT, str(CPU)] + argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    lines = [l for l in p.stderr.splitlines() if l.startswith("runstat: ")]
    if p.returncode != 0 or not lines:
        sys.exit("measure: runstat failed for %s:\n%s" % (" ".join(argv), p.stderr))
    wall_ns, rss, user_us, sys_us, code = (int(x) for x in lines[-1].split()[1:])
    if code != 0:
        sys.exit("measure: %s exited with %d:\n%s" % (" ".join(argv), code, p.stderr))
    return wall_ns / 1e9, rss, (user_us + sys_us) / 1e6


def best_of(argv, reps):
    runs = [run_once(argv) for _ in range(reps)]
    return min(runs, key=lambda r: r[0]), runs


def repetitions(n):
    """Pairs per N: many where the signal (N - 1 steps) is small against the noise of a
    process start (a few tenths of a millisecond here), few where it is large."""
    if n <= 100:
        return 201
    if n <= 1000:
        return 61
    if n <= 5000:
        return 21
    if n <= 10000:
        return 11
    return 5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pipec")
    ap.add_argument("workdir")
    ap.add_argument("--sizes", default="10,100,1000,5000,10000,50000")
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--validate", default="")
    ap.add_argument("--runstat", required=True)
    ap.add_argument("--reps", type=int, default=0, help="runs per N (default 7, 5, 3 by size)")
    ap.add_argument("--target", default="kfp-v1", help="pipec build --target (kfp-v1 or kfp-v2)")
    args = ap.parse_args()
    global RUNSTAT, CPU
    RUNSTAT, CPU = os.path.abspath(args.runstat), args.cpu

    pipec = os.path.abspath(args.pipec)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    pinned = "pinned to cpu %d" % args.cpu if args.cpu >= 0 else "not pinned"

    gen = os.path.join(HERE, "gen_pipeline.py")
    rows = []
    startup = [run_once([pipec, "--version"]) for _ in range(15)]
    start_wall = min(r[0] for r in startup)
    start_cpu = min(r[2] for r in startup)
    start_rss = min(r[1] for r in startup)

    def source(n):
        src = os.path.join(args.workdir, "gen_%d.pipe" % n)
        subprocess.run([sys.executable, gen, str(n), src], check=True)
        return src

    # The seed, as the README's first command builds it: a training step, into a .tar.gz.
    seed_src = os.path.join(HERE, "..", "..", "dsl-examples", "mpi_run.pipe")
    seed_argv = [pipec, "build", seed_src, "-o", os.path.join(args.workdir, "seed.tar.gz"), "-q",
                 "--target", args.target]
    run_once(seed_argv)
    seed_runs = [run_once(seed_argv) for _ in range(41)]

    base_src = source(1)
    base_out = os.path.join(args.workdir, "gen_1.yaml")
    # Big sizes exceed the servers' limits on purpose: measure anyway.
    target = ["--target", args.target, "--allow-oversize"]
    print("target: %s" % args.target)
    base_argv = [pipec, "build", base_src, "-o", base_out, "-q"] + target
    run_once(base_argv)  # warm the page cache
    base_runs = []
    for n in sizes:
        src = source(n)
        yaml_out = os.path.join(args.workdir, "gen_%d.yaml" % n)
        argv = [pipec, "build", src, "-o", yaml_out, "-q"] + target
        run_once(argv)
        reps = args.reps or repetitions(n)
        runs, diffs = [], []
        for _ in range(reps):  # pairs: the one-step build, then N
            b = run_once(base_argv)
            r = run_once(argv)
            base_runs.append(b)
            runs.append(r)
            diffs.append(r[0] - b[0])
        wall, rss, _ = min(runs, key=lambda r: r[0])
        median = statistics.median(r[0] for r in runs)
        cpu = min(r[2] for r in runs)
        tgz_out = os.path.join(args.workdir, "gen_%d.tar.gz" % n)
        (twall, trss, _), _ = best_of([pipec, "build", src, "-o", tgz_out, "-q"] + target,
                                      max(1, min(reps, 10) // 2))
        rows.append(dict(n=n, reps=reps, wall=wall, median=median, rss=rss, cpu=cpu,
                         extra=statistics.median(diffs),
                         src=os.path.getsize(src), yaml=os.path.getsize(yaml_out),
                         twall=twall, trss=trss, tgz=os.path.getsize(tgz_out)))
    base_wall, base_rss, _ = min(base_runs, key=lambda r: r[0])

    print("pipec: %s" % pipec)
    print("%s; wall: best of R runs (median beside it); RSS: peak of the best run; cpu: least"
          " user+sys of the R runs; sizes in MB = 10^6 bytes" % pinned)
    hdr = ("%6s %3s %9s %9s %10s %8s %8s %9s %8s %8s %9s | %8s %8s %8s"
           % ("N", "R", "wall ms", "median", "steps/s", "us/step", "e2e us/s", "cpu ms",
              "RSS MiB", "src MB", "yaml MB", "tgz ms", "tgz MB", "tgz RSS"))
    print(hdr)
    print("-" * len(hdr))
    print("%6s %3d %9.2f %9s %10s %8s %8s %9.2f %8.1f   (pipec --version)"
          % ("start", len(startup), start_wall * 1e3, "", "", "", "", start_cpu * 1e3,
             start_rss / 1024.0))
    print("%6s %3d %9.2f %9.2f %10s %8s %8s %9.2f %8.1f   (dsl-examples/mpi_run.pipe -o .tar.gz)"
          % ("seed", len(seed_runs), min(r[0] for r in seed_runs) * 1e3,
             statistics.median(r[0] for r in seed_runs) * 1e3, "", "", "",
             min(r[2] for r in seed_runs) * 1e3, min(r[1] for r in seed_runs) / 1024.0))
    print("%6s %3d %9.2f %9.2f %10s %8s %8s %9s %8.1f   (one step: the fixed cost)"
          % ("base", len(base_runs), base_wall * 1e3,
             statistics.median(r[0] for r in base_runs) * 1e3, "", "", "", "",
             base_rss / 1024.0))

    def per_step(r):
        """Microseconds each step past the first added: the median over the pairs of
        (T(N) - T(1)), over N - 1."""
        return r["extra"] / (r["n"] - 1) * 1e6 if r["n"] > 1 else float("nan")

    for r in rows:
        print("%6d %3d %9.2f %9.2f %10.0f %8.2f %8.2f %9.2f %8.1f %8.2f %9.2f | %8.2f %8.3f %8.1f"
              % (r["n"], r["reps"], r["wall"] * 1e3, r["median"] * 1e3,
                 (r["n"] - 1) / r["extra"] if r["n"] > 1 else 0, per_step(r),
                 r["wall"] / r["n"] * 1e6, r["cpu"] * 1e3,
                 r["rss"] / 1024.0, r["src"] / 1e6,
                 r["yaml"] / 1e6, r["twall"] * 1e3, r["tgz"] / 1e6, r["trss"] / 1024.0))
    print("R: pairs of runs (the one-step build, then N); wall: best, and median, of the N runs;"
          "\nsteps/s, us/step: the N - 1 steps past the first over the median of T(N) - T(1)"
          " of the pairs;\ne2e us/s: wall / N, the fixed cost included")

    by_n = {r["n"]: r for r in rows}
    ok = True
    if TARGET_N in by_n:
        r = by_n[TARGET_N]
        ms, mib = r["wall"] * 1e3, r["rss"] / 1024.0
        met = ms <= TARGET_MS and mib <= TARGET_MIB
        ok &= met
        print("target %d steps: %.2f ms (<= %.0f ms: %s), %.1f MiB (<= %.0f MiB: %s) -> %s"
              % (TARGET_N, ms, TARGET_MS, "yes" if ms <= TARGET_MS else "NO",
                 mib, TARGET_MIB, "yes" if mib <= TARGET_MIB else "NO",
                 "MET" if met else "NOT MET"))
        print("  cpu (user+sys) of the %d-step build: %.2f ms (<= %.0f ms: %s)"
              % (TARGET_N, r["cpu"] * 1e3, TARGET_MS, "yes" if r["cpu"] * 1e3 <= TARGET_MS else "NO"))
    flat = [r for r in rows if FLAT_FROM <= r["n"] <= FLAT_TO]
    if len(flat) >= 2:
        per = [per_step(r) for r in flat]
        lo, hi = min(per), max(per)
        spread = hi / lo - 1.0
        met = lo > 0 and spread <= FLAT_TOL  # lo <= 0: noise larger than the signal
        ok &= met
        print("us/step from N=%d to N=%d: min %.2f, max %.2f, spread %.0f%% (<= %.0f%%: %s)"
              % (flat[0]["n"], flat[-1]["n"], lo, hi, spread * 100, FLAT_TOL * 100,
                 "MET" if met else "NOT MET"))
        a, b = flat[0], flat[-1]
        print("  end to end (wall / N, the %.2f ms fixed cost included): %.2f us/step at N=%d,"
              " %.2f at N=%d" % (base_wall * 1e3, a["wall"] / a["n"] * 1e6, a["n"],
                                  b["wall"] / b["n"] * 1e6, b["n"]))

    # kfp 2.17's IR for the same shape (shared/reference/kfp-v2-compiled/README.md "Sizes"):
    # one component and one executor per task.
    kfp2_bytes = {10: 10812, 100: 106126, 1000: 1067334, 5000: 5375332}
    if args.target == "kfp-v2":
        for r in rows:
            if r["n"] in kfp2_bytes:
                print("  N=%d: pipec %.3f MB, kfp 2.17 %.3f MB (%.1fx)"
                      % (r["n"], r["yaml"] / 1e6, kfp2_bytes[r["n"]] / 1e6,
                         kfp2_bytes[r["n"]] / r["yaml"]))

    if args.validate and TARGET_N in by_n:
        outs = ("gen_%d.yaml" % TARGET_N,) if args.target == "kfp-v2" else \
            ("gen_%d.yaml" % TARGET_N, "gen_%d.tar.gz" % TARGET_N)
        for out in outs:
            path = os.path.join(args.workdir, out)
            p = subprocess.run([args.validate, path], capture_output=True, text=True)
            text = (p.stdout + p.stderr).strip().replace(args.workdir + "/", "")
            lines = text.splitlines()
            if len(lines) > 10:
                lines = lines[:10] + ["... %d more lines" % (len(lines) - 10)]
            print("validate %s: exit %d: %s" % (out, p.returncode, "\n  ".join(lines)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
