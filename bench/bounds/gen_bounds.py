#!/usr/bin/env python3
"""The worst cases of pipec's bounds on nesting and names (issue 42, points 11-13), as files.

usage: gen_bounds.py calls LEVELS DIR     pipelines calling the one below twice, LEVELS deep
                                          (2^LEVELS op steps as `pipec graph` draws them):
                                          DIR/calls.pipe
       gen_bounds.py graph LEVELS DIR     graph components, each with two tasks calling the
                                          one below by digest, LEVELS deep: DIR/top.yaml,
                                          DIR/graph.pipe and the cache DIR/cache/DIGEST
       gen_bounds.py inputs COUNT DIR     a component of COUNT inputs whose names all
                                          sanitize to `a_b` (`a b`, `a-b`, `a.b`, `a  b` ...):
                                          DIR/inputs.yaml and DIR/inputs.pipe
"""
import hashlib
import os
import sys


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def calls(levels, out):
    text = ["op leaf() -> (out: string) {\n  image \"busybox:1.36\"\n"
            "  command [\"sh\", \"-c\", \"echo x > /tmp/o\"]\n  outputs {out: \"/tmp/o\"}\n}\n\n",
            "pipeline p0 {\n  step s = leaf()\n}\n\n"]
    for k in range(1, levels + 1):
        text.append(f"pipeline p{k} {{\n  step a = p{k - 1}()\n  step b = p{k - 1}()\n}}\n\n")
    write(os.path.join(out, "calls.pipe"), "".join(text))


LEAF = """name: Leaf
inputs:
- {name: text, type: String}
outputs:
- {name: out, type: String}
implementation:
  container:
    image: busybox:1.36
    command: [sh, -c, 'mkdir -p "$(dirname "$1")" && echo "$0" > "$1"', {inputValue: text}, {outputPath: out}]
"""


def graph_level(k, digest):
    return (f"name: Level {k}\ninputs:\n- {{name: text, type: String}}\noutputs:\n- {{name: out, type: String}}\n"
            "implementation:\n  graph:\n    tasks:\n"
            f"      A:\n        componentRef: {{digest: {digest}}}\n"
            "        arguments: {text: {graphInput: {inputName: text}}}\n"
            f"      B:\n        componentRef: {{digest: {digest}}}\n"
            "        arguments: {text: {taskOutput: {taskId: A, outputName: out}}}\n"
            "    outputValues:\n      out: {taskOutput: {taskId: B, outputName: out}}\n")


def graph(levels, out):
    cache = os.path.join(out, "cache")
    os.makedirs(cache, exist_ok=True)
    text = LEAF
    for k in range(1, levels + 1):
        digest = hashlib.sha256(text.encode()).hexdigest()
        write(os.path.join(cache, digest), text)
        text = graph_level(k, digest)
    write(os.path.join(out, "top.yaml"), text)
    write(os.path.join(out, "graph.pipe"),
          f"use \"top.yaml\"\n\npipeline nested {{\n  step top = level_{levels}(text: \"x\")\n}}\n")


def inputs(count, out):
    # distinct KFP names that all sanitize to a_b: `a`, 1 to 5 characters of no letter or
    # digit (the digits of i in base 12), `b`
    seps = " -.~!@#%^&*+"
    names = []
    for i in range(count):
        sep, rest = "", i
        while True:
            sep += seps[rest % len(seps)]
            rest //= len(seps)
            if not rest:
                break
        names.append("a" + sep + "b")
    lines = ["name: Many inputs\ninputs:\n"]
    lines += [f"- {{name: '{n}', type: String, default: x}}\n" for n in names]
    lines.append("implementation:\n  container:\n    image: busybox:1.36\n    command: [echo, {inputValue: 'a b'}]\n")
    write(os.path.join(out, "inputs.yaml"), "".join(lines))
    write(os.path.join(out, "inputs.pipe"),
          "use \"inputs.yaml\"\n\npipeline many {\n  step m = many_inputs()\n}\n")


if __name__ == "__main__":
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    {"calls": calls, "graph": graph, "inputs": inputs}[kind](n, out)
