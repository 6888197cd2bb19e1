# The names kfp 2.17 gives values that cross DAGs (tests/kfpv2/names_test.py compiles this
# with the vendored SDK and compares it with names.pipe, the same pipeline in pipec; one
# component per task, so that kfp names each task as pipec names the step).
from typing import List, NamedTuple

from kfp import dsl

IMAGE = 'busybox:1.36'


@dsl.container_component
def gen(out: dsl.OutputPath(List[str])):
    return dsl.ContainerSpec(image=IMAGE, command=['sh', '-c', 'echo \'["a","b"]\' > "$0"'], args=[out])


@dsl.container_component
def pick(s: str, out: dsl.OutputPath(str)):
    return dsl.ContainerSpec(image=IMAGE, command=['sh', '-c', 'echo "$0" > "$1"'], args=[s, out])


@dsl.container_component
def work(s: str, t: str, u: str):
    return dsl.ContainerSpec(image=IMAGE, command=['echo', s, t, u])


@dsl.container_component
def lr(s: str):
    return dsl.ContainerSpec(image=IMAGE, command=['echo', s])


@dsl.container_component
def each_one(s: str, out: dsl.OutputPath(str)):
    return dsl.ContainerSpec(image=IMAGE, command=['sh', '-c', 'echo "$0" > "$1"'], args=[s, out])


@dsl.container_component
def gather(all: List[str]):
    return dsl.ContainerSpec(image=IMAGE, command=['echo', all])


@dsl.container_component
def first(s: str, out: dsl.OutputPath(str)):
    return dsl.ContainerSpec(image=IMAGE, command=['sh', '-c', 'echo "$0" > "$1"'], args=[s, out])


@dsl.container_component
def after_call(s: str):
    return dsl.ContainerSpec(image=IMAGE, command=['echo', s])


@dsl.container_component
def nested_one(s: str, t: str, out: dsl.OutputPath(str)):
    return dsl.ContainerSpec(image=IMAGE, command=['sh', '-c', 'echo "$0 $1" > "$2"'], args=[s, t, out])


@dsl.container_component
def gather_nested(all: List[List[str]]):
    return dsl.ContainerSpec(image=IMAGE, command=['echo', all])


@dsl.pipeline(name='inner')
def inner(msg: str, n: str) -> NamedTuple('Outputs', said=str):
    Outputs = NamedTuple('Outputs', said=str)
    return Outputs(said=first(s=msg).outputs['out'])


@dsl.pipeline(name='names')
def names(shards: List[str] = ['a', 'b'], cfgs: List[dict] = [{'lr': '0.1', 'tag': 'a'}], tag: str = 'x'):
    g = gen()
    h = pick(s=tag)
    with dsl.ParallelFor(shards) as shard:
        with dsl.ParallelFor(g.outputs['out']) as y:
            with dsl.If(tag == 'x'):
                work(s=shard, t=y, u=h.outputs['out'])
    with dsl.ParallelFor(cfgs) as cfg:
        with dsl.If(cfg.tag == 'a'):
            lr(s=cfg.lr)
    with dsl.ParallelFor(shards) as s2:
        e = each_one(s=s2)
    gather(all=dsl.Collected(e.outputs['out']))
    with dsl.ParallelFor(shards) as s3:
        with dsl.ParallelFor(g.outputs['out']) as t3:
            n = nested_one(s=s3, t=t3)
    gather_nested(all=dsl.Collected(n.outputs['out']))
    call = inner(msg=tag, n=h.outputs['out'])
    after_call(s=call.outputs['said'])
