#!/usr/bin/env python3
"""Every folder of compiler/ with code has its unit tests in tests/unit/ (issue 35):
compiler/X/ in tests/unit/X/, and compiler/emit/Y/ in tests/unit/emit_Y/, each a
CMakeLists.txt with at least one test source, so `ctest -L unit` reaches every folder."""
import os
import sys

ROOT = os.path.abspath(sys.argv[1])


def has_code(path):
    return any(f.endswith(".cpp") for f in os.listdir(path))


def main():
    compiler = os.path.join(ROOT, "compiler")
    wanted = []
    for name in sorted(os.listdir(compiler)):
        path = os.path.join(compiler, name)
        if not os.path.isdir(path):
            continue
        if has_code(path):
            wanted.append((f"compiler/{name}", name))
        for sub in sorted(os.listdir(path)):
            if os.path.isdir(os.path.join(path, sub)) and has_code(os.path.join(path, sub)) and name == "emit":
                wanted.append((f"compiler/{name}/{sub}", f"{name}_{sub}"))
    missing = []
    for folder, unit in wanted:
        test_dir = os.path.join(ROOT, "tests", "unit", unit)
        ok = (os.path.isfile(os.path.join(test_dir, "CMakeLists.txt"))
              and any(f.endswith("_test.cpp") for f in os.listdir(test_dir)))
        if not ok:
            missing.append(f"{folder}: no tests/unit/{unit}/ with a *_test.cpp")
    for line in missing:
        print(line)
    print(f"{len(wanted)} folders with code, {len(missing)} without unit tests")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
