"""The kfp 2.17 pipeline that tests/kfpv2/root_outputs.pipe is in pipec: a pipeline that
returns outputs (a step's value and artifact, a loop's values collected, a called pipeline's
value and artifact, and a called pipeline's value collected from a loop).
Compiled by root_outputs_test.py with the vendored SDK (kfp-dsl-compile)."""
from typing import List, NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, Output


@dsl.container_component
def train(lr: float, model: Output[Artifact], accuracy: dsl.OutputPath(float)):
    return dsl.ContainerSpec(image='busybox:1.36', command=['sh', '-c', 'true'], args=[lr, model.path, accuracy])


@dsl.container_component
def measure(lr: float, bytes: dsl.OutputPath(int)):
    return dsl.ContainerSpec(image='busybox:1.36', command=['sh', '-c', 'true'], args=[lr, bytes])


class TrainMeasure(NamedTuple):
    model: Artifact
    accuracy: float
    bytes: int


@dsl.pipeline
def train_measure(lr: float = 0.1) -> TrainMeasure:
    t = train(lr=lr)
    m = measure(lr=lr)
    return TrainMeasure(model=t.outputs['model'], accuracy=t.outputs['accuracy'], bytes=m.outputs['bytes'])


class Outputs(NamedTuple):
    baseline_model: Artifact
    baseline_accuracy: float
    sweep: List[float]
    best_model: Artifact
    best_bytes: int
    called: List[float]


@dsl.pipeline(name='root-outputs')
def root_outputs(lrs: List[float] = [0.1, 0.2, 0.3]) -> Outputs:
    baseline = train(lr=0.05)
    with dsl.ParallelFor(lrs) as lr:
        each = train(lr=lr)
    best = train_measure(lr=0.01)
    with dsl.ParallelFor(lrs) as lr2:
        call = train_measure(lr=lr2)
    return Outputs(baseline_model=baseline.outputs['model'], baseline_accuracy=baseline.outputs['accuracy'],
                   sweep=dsl.Collected(each.outputs['accuracy']), best_model=best.outputs['model'],
                   best_bytes=best.outputs['bytes'], called=dsl.Collected(call.outputs['accuracy']))
