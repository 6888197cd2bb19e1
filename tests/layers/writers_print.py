#!/usr/bin/env python3
"""Writers only print (issue 35, docs/architecture.md): every diagnostic that
compiler/emit/** reports names a limit of its own target, and the training lowering
(compiler/training) reports none: sema checks a training op's arguments.

Each place in compiler/emit and compiler/training that reports a diagnostic (a writer's `error(...)`, or
`diags_.error/warning/note(...)`) is read with the text of its message (the string
literals of the call, joined). The list must equal writers_print.allow, one site a line
as `FILE: MESSAGE-START`; an error or warning there must name its target (Argo, KFP,
kfp-v2). So a check added to a writer fails here: it belongs in sema.

Usage: writers_print.py SOURCE_DIR
"""
import pathlib
import re
import sys

CALL = re.compile(r"(?<![\w.])(?:diags_?\s*\.\s*)?(error|warning|note)\s*\(")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
TARGET = re.compile(r"\bArgo\b|\bKFP\b|kfp-v2")


def call_args(text, start):
    """The text between the '(' at start-1 and its matching ')'."""
    depth, i = 1, start
    while i < len(text) and depth:
        c = text[i]
        if c == '"':
            m = STRING.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c == "'":
            i = text.index("'", i + 2) + 1 if text[i + 1] == "\\" else i + 3
            continue
        depth += c == "("
        depth -= c == ")"
        i += 1
    return text[start:i - 1]


def sites(root):
    out = []
    paths = [*(root / "compiler" / "emit").rglob("*"), *(root / "compiler" / "training").rglob("*")]
    for path in sorted(paths):
        if path.suffix not in (".cpp", ".hpp"):
            continue
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root).as_posix()
        for m in CALL.finditer(text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            before = text[line_start:m.start()]
            if re.search(r"\bvoid\s*$", before) or before.lstrip().startswith("//"):
                continue  # the helper's own definition, or a comment
            args = call_args(text, m.end())
            if "std::move(message)" in args:
                continue  # the helper forwarding its message
            message = "".join(STRING.findall(args))
            out.append((rel, m.group(1), message))
    return out


def main():
    root = pathlib.Path(sys.argv[1])
    allow_path = pathlib.Path(__file__).with_name("writers_print.allow")
    allowed = [line for line in allow_path.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")]
    found = sites(root)
    problems = []
    remaining = list(allowed)
    for rel, kind, message in found:
        if kind != "note" and not TARGET.search(message):
            problems.append(f"{rel}: {kind} '{message}' names no target's limit: "
                            "a check of the program is sema's")
        entry = next((a for a in remaining
                      if a.split(": ", 1)[0] == rel and message.startswith(a.split(": ", 1)[1])), None)
        if entry is None:
            problems.append(f"{rel}: {kind} '{message}' is not in writers_print.allow")
        else:
            remaining.remove(entry)
    for entry in remaining:
        problems.append(f"writers_print.allow: '{entry}' matches no diagnostic of compiler/emit")
    if len(found) < 10:
        problems.append(f"only {len(found)} diagnostic sites found: the scan is broken")
    for p in problems:
        print(p)
    print(f"{len(found)} diagnostic sites in compiler/emit and compiler/training, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
