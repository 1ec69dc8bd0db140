"""The typed surface: the committed stubs (python/webnn/**/*.pyi) are what tools/gen_stubs.py makes
of the package now, they name exactly the runtime's public names, and the typed examples pass mypy."""
import ast
import importlib.util
import json
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest

import webnn

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "webnn"
STUBS = {"webnn": "__init__.pyi", "webnn.formats": "formats.pyi", "webnn.profiling": "profiling.pyi",
         "webnn.onnx": "onnx/__init__.pyi"}
EXAMPLES = ROOT / "examples" / "python"

# Run in a fresh interpreter: what `import webnn` alone defines, untouched by other tests.
RUNTIME_NAMES = r"""
import dataclasses, importlib, inspect, json, re, sys
modules = sys.argv[1:]

def defined_in(module, value):  # in the module (a package: anywhere in it), or a package's submodule
    if inspect.ismodule(value):
        return value.__name__.startswith(module.__name__ + ".")
    origin = getattr(value, "__module__", None)
    if origin is None or not (inspect.isclass(value) or callable(value)) or origin == module.__name__:
        return True
    return hasattr(module, "__path__") and origin.startswith(module.__name__ + ".")

def members(cls):
    names = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("webnn"):
            names |= set(vars(klass)) | set(getattr(klass, "__slots__", ()))
            try:
                names |= set(re.findall(r"self\.(\w+) =", inspect.getsource(klass)))
            except (OSError, TypeError):
                pass
    if dataclasses.is_dataclass(cls):
        names |= {f.name for f in dataclasses.fields(cls)}
    return sorted(n for n in names if not n.startswith("_"))

result = {}
for name in modules:  # each one's names right after its import (webnn.onnx is not part of webnn)
    module = importlib.import_module(name)
    public = {n: v for n, v in vars(module).items() if not n.startswith("_") and defined_in(module, v)}
    # a submodule without stubs of its own (webnn.onnx.ops) is an implementation detail
    public = {n: v for n, v in public.items() if not inspect.ismodule(v) or v.__name__ in modules}
    result[name] = {"names": sorted(public),
                    "classes": {n: members(v) for n, v in public.items() if inspect.isclass(v)}}
print(json.dumps(result))
"""


def run_python(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def stub_names(path):
    """{"names": public module-level names, "classes": {class: public members, bases' included}}."""
    tree = ast.parse(path.read_text())

    def defined(body):
        names = set()
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {a.asname for a in node.names if a.asname and a.asname == a.name.split(".")[-1]}
        return {n for n in names if not n.startswith("_")}

    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def members(name):
        node = classes[name]
        names = defined(node.body)
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                names |= members(base.id)
        return names

    return {"names": defined(tree.body), "classes": {name: members(name) for name in classes}}


def test_committed_stubs_are_current():
    result = run_python(str(ROOT / "tools" / "gen_stubs.py"), "--check")
    assert result.returncode == 0, (
        f"The stubs in python/webnn/ are stale: run `python tools/gen_stubs.py` and commit them.\n{result.stderr}")
    assert (PACKAGE / "py.typed").is_file()


def test_stubs_name_every_public_name_and_no_other():
    result = run_python("-c", RUNTIME_NAMES, *STUBS)
    assert result.returncode == 0, result.stderr
    runtime = json.loads(result.stdout)
    for module, stub in STUBS.items():
        declared = stub_names(PACKAGE / stub)
        names = set(runtime[module]["names"])
        assert names == declared["names"], (
            f"{stub}: missing {sorted(names - declared['names'])}, extra {sorted(declared['names'] - names)}; "
            "run `python tools/gen_stubs.py`")
        for cls, members in runtime[module]["classes"].items():
            got = declared["classes"].get(cls, set())
            assert set(members) == got, (
                f"{stub}: {cls} missing {sorted(set(members) - got)}, extra {sorted(got - set(members))}; "
                "run `python tools/gen_stubs.py`")


def test_installed_package_ships_its_stubs():
    """A wheel holds py.typed and the stubs beside the modules (wheel.packages copies the folder)."""
    installed = Path(webnn.__file__).resolve().parent
    for relative in ["py.typed", *STUBS.values()]:
        assert (installed / relative).is_file(), f"{installed / relative} is missing"


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_examples_pass_mypy_strict(tmp_path):
    env = dict(os.environ, MYPYPATH=str(ROOT / "python"))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), str(EXAMPLES)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_builder_docstrings_list_operand_types_ranks_and_options(context):
    """help(builder.op) gives every operand's data types and ranks (as op_support_limits() does),
    every option with its default, and the results."""
    limits = context.op_support_limits()
    for info in webnn._core.op_infos():
        op = info["name"]
        doc = getattr(webnn.MLGraphBuilder, webnn._api.snake_case(op)).__doc__
        lines = doc.splitlines()
        for name, operand in limits[op].items():
            if name in ("output", "outputs"):
                line = next((line for line in lines if line.startswith("Returns")), "")
            else:
                line = next((line for line in lines if line.startswith(f"- ``{webnn._api.snake_case(name)}``")
                             and ", rank " in line), "")
            low, high = operand["rankRange"]["min"], operand["rankRange"]["max"]
            assert f", rank {low}" in line and (low == high or f" to {high}" in line), (op, name, line)
            assert all(data_type in line for data_type in operand["dataTypes"]), (op, name, line)
        for option in info["options"]:
            assert any(line.startswith(f"- ``{webnn._api.snake_case(option['name'])}`` =") or
                       line.startswith(f"- ``{webnn._api.snake_case(option['name'])}``: absent") for line in lines), \
                (op, option["name"])
    text = pydoc.render_doc(webnn.MLGraphBuilder.conv2d, renderer=pydoc.plaintext)
    assert "- ``filter``: float32 or float16, rank 4" in text and "- ``groups`` = 1" in text
    assert "Returns an MLOperand: float32 or float16, rank 4." in text
