#!/usr/bin/env python3
"""Writes the programs of the budget-*.test cases (scale budgets, issue 16).
usage: budget-gen.py KIND OUT
  param    a parameter whose default is 10,001 bytes (KFP's limit is 10,000)
  package  steps with large incompressible literals: a workflow just over 32 MiB
"""
import base64
import random
import sys

kind, out = sys.argv[1], sys.argv[2]
lines = ['op echo(msg: string) {', '  image "busybox:1.36"', '  command ["echo", "${msg}"]', '}', '']
if kind == "param":
    lines += ['pipeline big_param {', '  param blob: string = "%s"' % ("x" * 10001),
              '  step say = echo(msg: blob)', '}']
elif kind == "package":
    rng = random.Random(16)
    lines += ['pipeline big_package {']
    for i in range(340):
        blob = base64.b64encode(rng.randbytes(75_000)).decode()
        lines.append('  step s%d = echo(msg: "%s")' % (i, blob))
    lines.append('}')
else:
    sys.exit("unknown kind " + kind)
open(out, "w").write("\n".join(lines) + "\n")
