#!/usr/bin/python3
"""Layering you can draw (issue 24, docs/architecture.md): every folder of the product sits on
a floor, and a file may include, and a library link, only its own folder or folders on floors
below its own. Back ends (one floor) never include each other; nothing includes upwards; so
there are no cycles.

usage: layers_test.py REPO_ROOT
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1])

# The floors, bottom up; docs/architecture.md draws the same table.
FLOORS = [
    ["rules", "input", "fileio"],
    ["compiler/base", "stdlib", "runtime/rules", "kube"],
    ["compiler/syntax", "compiler/ir", "compiler/package", "runtime/launcher"],
    ["compiler/sema", "compiler/client", "compiler/shell", "compiler/preflight"],
    ["compiler/training"],
    ["compiler/lower", "compiler/emit/yaml"],
    ["compiler/emit/argo", "compiler/emit/kfpv2", "compiler/local"],
    ["compiler/compile"],
    ["compiler/tools"],
    ["compiler/driver"],
]
FLOOR = {module: i for i, floor in enumerate(FLOORS) for module in floor}

# runtime/ holds two libraries: the rules and renderers that the compiler links too
# (pipec_jobrender, no I/O) and the launcher's own code (pipec_runtime). kube/ is the
# Kubernetes API client (curl) that the launcher and the KFP client both link.
RUNTIME_RULES = {"job_reasons", "job_render", "metric_series", "metrics", "tf_pods", "trainer_status", "trainer_v2", "visual_outputs"}

LIBRARIES = {
    "pipec_rules": "rules", "pipec_input": "input", "pipec_fileio": "fileio", "pipec_input_yaml": "input", "pipec_base": "compiler/base", "pipec_sha256": "compiler/base", "pipec_stdlib": "stdlib", "pipec_jobrender": "runtime/rules",
    "pipec_kube": "kube",
    "pipec_runtime": "runtime/launcher", "pipec_syntax": "compiler/syntax", "pipec_ir": "compiler/ir",
    "pipec_package": "compiler/package", "pipec_sema": "compiler/sema", "pipec_params": "compiler/client",
    "pipec_client": "compiler/client", "pipec_lower": "compiler/lower", "pipec_emit_yaml": "compiler/emit/yaml",
    "pipec_shell": "compiler/shell", "pipec_preflight_needs": "compiler/preflight", "pipec_training": "compiler/training",
    "pipec_emit_argo": "compiler/emit/argo", "pipec_emit_kfpv2": "compiler/emit/kfpv2",
    "pipec_local": "compiler/local", "pipec_compile": "compiler/compile", "pipec_tools": "compiler/tools", "pipec_driver": "compiler/driver",
    "pipec_driver_kfp": "compiler/driver",
}


# Folders that do no I/O of their own (issue 35): what checking needs of the machine, a
# Python interpreter and the component cache, is passed in (compiler/sema/host.hpp).
NO_IO = {"compiler/sema"}
IO_CALL = re.compile(r"\b(posix_spawnp?|fork|execv[pe]?|execl[pe]?|popen|system|getenv|secure_getenv|"
                     r"write_file_atomically|create_directories|remove_all)\s*\(|std::ofstream|"
                     r"#\s*include\s+[<\"](spawn\.h|fileio/)")


def module_of(path):
    """The module of a repository path (a file or a folder), or None outside the product."""
    parts = path.split("/")
    if parts[0] == "runtime":
        if len(parts) == 1:
            return None
        stem = os.path.splitext(parts[1])[0]
        return "runtime/rules" if stem in RUNTIME_RULES else "runtime/launcher"
    for depth in (3, 2, 1):
        candidate = "/".join(parts[:depth])
        if candidate in FLOOR:
            return candidate
    return None


def allowed(source, target):
    return source == target or FLOOR[target] < FLOOR[source]


def main():
    problems = []
    files = 0
    for top in ("rules", "input", "fileio", "kube", "compiler", "runtime", "stdlib"):
        for base, _, names in os.walk(os.path.join(ROOT, top)):
            for name in sorted(names):
                path = os.path.relpath(os.path.join(base, name), ROOT)
                source = module_of(path)
                if source is None:
                    if path == "compiler/CMakeLists.txt":  # only adds the folders
                        continue
                    if name.endswith((".cpp", ".hpp", ".h", ".def")) or name == "CMakeLists.txt":
                        problems.append(f"{path}: in no module of the floor table; add its folder to a floor")
                    continue
                if name.endswith((".cpp", ".hpp", ".h", ".def", ".in")):
                    files += 1
                    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                        for number, line in enumerate(f, 1):
                            code = line.split("//", 1)[0] if not line.lstrip().startswith("#") else line
                            if source in NO_IO and IO_CALL.search(code):
                                problems.append(f"{path}:{number}: {source} does no I/O of its own "
                                                f"(pass it in, as sema::Host is): {line.strip()}")
                            m = re.match(r'\s*#\s*include\s+"((?:rules|input|fileio|kube|compiler|runtime|stdlib)/[^"]+)"', line)
                            if not m:
                                continue
                            target = module_of(m.group(1))
                            if target is None:
                                problems.append(f"{path}:{number}: includes {m.group(1)}, in no module")
                            elif not allowed(source, target):
                                problems.append(f"{path}:{number}: {source} (floor {FLOOR[source]}) includes "
                                                f"{m.group(1)} of {target} (floor {FLOOR[target]})")
                elif name == "CMakeLists.txt":
                    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                        text = f.read()
                    for m in re.finditer(r"target_link_libraries\(\s*(\S+)([^)]*)\)", text):
                        owner = LIBRARIES.get(m.group(1), source)
                        for lib in re.findall(r"\bpipec_\w+", m.group(2)):
                            target = LIBRARIES.get(lib)
                            if target is None:
                                problems.append(f"{path}: links {lib}, a library in no module")
                            elif not allowed(owner, target):
                                problems.append(f"{path}: {m.group(1)} ({owner}, floor {FLOOR[owner]}) links "
                                                f"{lib} ({target}, floor {FLOOR[target]})")
    for p in problems:
        print(p)
    print(f"{files} files, {len(problems)} upward or unplaced dependencies")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
