#!/usr/bin/python3
"""kfp 1.8.22's own verdict on component files: load_component_from_file on each.

Usage: kfp_load.py SDK_DIR FILE...   (SDK_DIR: sdk/python of kubeflow/pipelines at 1.8.22)
Prints "ok PATH" or "fail PATH: error" per file.

Debian has neither kfp's generated protobuf package (kfp-pipeline-spec) nor several of
its client dependencies (kfp_server_api, requests_toolbelt, fire, ...). Loading a v1
component uses none of them (kfp/components/_structures.py, _components.py, _yaml_utils,
PyYAML), so modules that are missing are stood in for by empty ones whose attributes are
placeholders: kfp's loading code itself runs unchanged.
"""
import importlib.abc
import importlib.machinery
import sys
import types

MISSING = ("kfp.pipeline_spec", "docstring_parser", "absl", "cloudpickle", "fire", "typer",
           "jsonschema", "uritemplate", "strip_hints", "deprecated", "requests_toolbelt",
           "kfp_server_api", "google.api_core", "google.cloud", "google.protobuf.json_format")


class _Meta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        stub = _Meta(name, (_Stub,), {})
        setattr(cls, name, stub)  # the same class each time: isinstance() checks hold
        return stub


class _Stub(metaclass=_Meta):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return _Stub()

    def __call__(self, *args, **kwargs):
        return _Stub()


class _Any(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        stub = _Meta(name, (_Stub,), {})
        setattr(self, name, stub)
        return stub


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if any(name == m or name.startswith(m + ".") for m in MISSING):
            try:
                if importlib.machinery.PathFinder.find_spec(name, path):
                    return None
            except Exception:
                pass
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _Any(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


def main():
    sys.path.insert(0, sys.argv[1])
    sys.meta_path.insert(0, _Finder())
    import warnings
    warnings.simplefilter("ignore")
    from kfp.components import load_component_from_file
    for path in sys.argv[2:]:
        try:
            load_component_from_file(path)
            print("ok", path)
        except Exception as e:  # the verdict, whatever kfp raises
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            print("fail", path + ":", type(e).__name__, msg[:200])


main()
