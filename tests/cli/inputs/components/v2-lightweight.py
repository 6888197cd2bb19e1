# Compiled into v2-lightweight.yaml by kfp 2.17.0 (kfp dsl compile --function add), the
# SDK vendored in shared/tools/kfp-v2-validate (its kfp-dsl-compile).
from kfp import dsl
from kfp.dsl import Input, Output, Dataset
from typing import NamedTuple

@dsl.component(base_image="python:3.11", packages_to_install=["pandas"])
def add(a: int, b: float, data: Input[Dataset], out: Output[Dataset], l: list = [1], d: dict = {"a": 1}) -> NamedTuple("O", [("s", float), ("t", str)]):
    """Adds numbers."""
    return (a + b, "x")
