# Compiled into v2-container.yaml by kfp 2.17.0 (kfp dsl compile --function trainer), the
# SDK vendored in shared/tools/kfp-v2-validate (its kfp-dsl-compile).
from kfp import dsl
from kfp.dsl import Input, Output, Dataset, Model, Artifact

@dsl.container_component
def trainer(data: Input[Dataset], model: Output[Model], epochs: int = 3, lr: float = 0.1, name: str = "x", flag: bool = False, opt: str = None):
    return dsl.ContainerSpec(
        image="python:3.11",
        command=["sh", "-c", "train --data $0 --model $1 --epochs $2 $3", data.path, model.path, epochs, lr],
        args=[dsl.ConcatPlaceholder(["--name=", name]), data.uri, model.uri, dsl.IfPresentPlaceholder(input_name="opt", then=["--opt", opt], else_=["--noopt"])],
    )
