"""The C++ folders only point down: core <- kernels <- graph <- compiler <- runtime <- formats, and
Python's modules import each other without a cycle.

Read from each source file's own #include lines. Kernels are a leaf library over core: they
include nothing from graph/, compiler/, runtime/ or formats/. The builder (graph/) records; the
runtime compiles (runtime/graph_build.cc) and executes (runtime/executor.cc).
"""
import io
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "cpp" / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.MULTILINE)
# What each folder may include besides itself.
ALLOWED = {
    "core": set(),
    "kernels": {"core"},
    "graph": {"core", "kernels"},
    "compiler": {"core", "kernels", "graph"},
    "runtime": {"core", "kernels", "graph", "compiler"},
    "formats": {"core", "kernels", "graph", "compiler", "runtime"},
}


def includes_by_file(folder):
    for path in sorted((SRC / folder).rglob("*")):
        if path.suffix in (".h", ".cc"):
            yield path, set(INCLUDE.findall(path.read_text()))


@pytest.mark.skipif(not SRC.is_dir(), reason="the C++ sources are not beside the tests")
@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_folder_includes_only_lower_layers(folder):
    bad = {str(path.relative_to(SRC)): sorted(used - ALLOWED[folder] - {folder})
           for path, used in includes_by_file(folder) if used - ALLOWED[folder] - {folder}}
    assert not bad, f"{folder}/ must include only {sorted(ALLOWED[folder]) or 'itself'}: {bad}"


PYTHON = Path(__file__).resolve().parents[1] / "python" / "webnn"
RELATIVE = re.compile(r"^\s*from\s+(\.+)([\w.]*)\s+import\s+([\w, ()]+)", re.MULTILINE)


def _module_name(path):
    parts = path.relative_to(PYTHON.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _python_imports():
    """{module: {modules it imports}}, lazy (function-level) relative imports included."""
    graph = {}
    for path in sorted(PYTHON.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        targets = set()
        for dots, name, names in RELATIVE.findall(path.read_text()):
            base = package.split(".")[: len(package.split(".")) - (len(dots) - 1)]
            target = ".".join(base + ([name] if name else []))
            for item in re.findall(r"\w+", names):  # "from . import ops": the submodule
                if (PYTHON.parent / (target.replace(".", "/") + "/" + item + ".py")).exists() or \
                        (PYTHON.parent / (target.replace(".", "/") + "/" + item)).is_dir():
                    targets.add(target + "." + item)
            targets.add(target)
        graph[module] = targets - {module}
    return graph


@pytest.mark.skipif(not PYTHON.is_dir(), reason="the Python sources are not beside the tests")
def test_no_python_import_cycle():
    graph = _python_imports()
    assert "webnn.onnx._registry" in graph and "webnn.onnx.ops.shape" in graph

    def cycle_from(start):
        stack, on_path = [(start, iter(sorted(graph.get(start, ()))))], [start]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.pop()
            elif child in on_path:
                return on_path[on_path.index(child):] + [child]
            elif child in graph:
                stack.append((child, iter(sorted(graph[child]))))
                on_path.append(child)
        return None

    # A package importing its own submodules (webnn -> webnn._api) is not a cycle by itself; a
    # submodule importing its package back to reach a sibling is, unless the package is a namespace
    # of re-exports: only edges between modules count.
    for module in graph:
        graph[module] = {t for t in graph[module] if not module.startswith(t + ".")}
    cycles = [c for c in (cycle_from(m) for m in sorted(graph)) if c]
    assert not cycles, cycles[0]


@pytest.mark.skipif(not PYTHON.is_dir(), reason="the Python sources are not beside the tests")
def test_python_sources_pass_pyflakes():
    api = pytest.importorskip("pyflakes.api")
    reporter = pytest.importorskip("pyflakes.reporter")
    out = io.StringIO()
    count = api.checkRecursive([str(PYTHON)], reporter.Reporter(out, out))
    assert count == 0, out.getvalue()
