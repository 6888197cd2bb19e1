#!/usr/bin/env python3
"""At most LIMIT translation units parse <nlohmann/json.hpp> (issue 35): the others load
it precompiled, or are files of a unity batch, one unit (cmake/json_pch.cmake).

Read from a built Ninja build directory, nothing compiled: a unit parses the header when
its dependencies (`ninja -t deps`, the compiler's own list of the files it read) name
json.hpp and it is either one that builds a precompiled header (cmake_pch.hxx.gch/.pch)
or one compiled without one (build.ninja gives it no cmake_pch.hxx.gch/.pch input). A unit
compiled with one does not parse it: GCC loads the .gch (`-H` prints `!` before it; the
header, included again, is skipped by its include guard) and clang the .pch (its list
names the header's files, read from the .pch). A .pch clang rejects is an error, a .gch
GCC rejects a -Winvalid-pch warning (the build is warning-free).

Usage: json_parsers.py BUILD_DIR LIMIT [--list]      ($NINJA: the ninja to ask, default ninja)
Prints the number of units that parse the header and of all units; fails when the first is
over LIMIT, or when no unit names the header (the directory is not built).
"""
import os
import pathlib
import subprocess
import sys

HEADER = "nlohmann/json.hpp"
PCH_SUFFIXES = ("cmake_pch.hxx.gch", "cmake_pch.hxx.pch")


def objects_reading_header(build):
    """Every output of the deps log, and whether its dependencies name the header."""
    out = subprocess.run([os.environ.get("NINJA", "ninja"), "-C", str(build), "-t", "deps"], check=True,
                         capture_output=True, text=True).stdout
    reads, current = {}, None
    for line in out.splitlines():
        if line and not line[0].isspace() and ": #deps" in line:
            current = line.split(": #deps", 1)[0]
            reads[current] = False
        elif current and line.strip().endswith(HEADER):
            reads[current] = True
    return reads


def outputs_of(build):
    """Every output of build.ninja, and the set of those with a precompiled header among
    their inputs."""
    outputs, with_pch = set(), set()
    for line in (build / "build.ninja").read_text().splitlines():
        if not line.startswith("build ") or ": " not in line:
            continue
        these, inputs = line[len("build "):].split(": ", 1)
        these = [word for word in these.split() if word != "|"]
        outputs.update(these)
        if any(word.endswith(PCH_SUFFIXES) for word in inputs.split()):
            with_pch.update(these)
    return outputs, with_pch


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: json_parsers.py BUILD_DIR LIMIT [--list]")
    build, limit = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    outputs, with_pch = outputs_of(build)
    # Units of the build only: the log keeps those of files since removed.
    reads = {obj: read for obj, read in objects_reading_header(build).items()
             if obj in outputs and obj.endswith((".o",) + PCH_SUFFIXES)}
    parsers = sorted(obj for obj, read in reads.items()
                     if read and (obj.endswith(PCH_SUFFIXES) or obj not in with_pch))
    units = list(reads)
    if "--list" in sys.argv:
        print("\n".join(parsers))
    print(f"{len(parsers)} of {len(units)} translation units parse {HEADER} "
          f"({sum(reads.values())} read it; at most {limit} may parse it)")
    if not any(reads.values()):
        sys.exit(f"no unit of {build} names {HEADER}: build it first")
    if len(parsers) > limit:
        sys.exit(f"over the limit: {len(parsers)} > {limit}; give the target the "
                 "precompiled header or unity batches (cmake/json_pch.cmake), or include "
                 "nlohmann/json_fwd.hpp")


if __name__ == "__main__":
    main()
