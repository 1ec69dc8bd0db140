"""A loaded model survives what other processes do to its weights file.

webnn.load reads the weights into private memory, so truncating, rewriting in place, replacing or
deleting the file afterwards changes nothing: dispatches keep giving the right answer. Each case runs
in a subprocess, so that a crash (SIGBUS from a truncated mapping) fails the test instead of killing
pytest. map_weights=True keeps the memory-mapped mode, whose risk the docs state; it is tested on
an unchanged file and for a change-free replacement (a new file renamed over the old one).
"""
import os
import subprocess
import sys
import textwrap

import pytest

# A 64 MiB gather table, read in place at run time (a gather's table is not packed), and the rows
# a lookup must return.
CHILD = textwrap.dedent("""
    import os, sys
    import numpy as np
    import webnn

    folder, change, map_weights = sys.argv[1], sys.argv[2], sys.argv[3] == "map"
    path = os.path.join(folder, "table.webnn")
    rows, width = 1 << 14, 1 << 10
    table = np.arange(rows * width, dtype=np.float32).reshape(rows, width)
    ctx = webnn.ml.create_context()
    b = webnn.MLGraphBuilder(ctx)
    ids = b.input("ids", {"dataType": "int32", "shape": [3]})
    webnn.save(path, {"y": b.gather(b.constant(table), ids)})
    weights = os.path.join(folder, "table.weights")
    graph = webnn.load(path, ctx, map_weights=map_weights)
    feeds = {"ids": np.array([0, rows // 2, rows - 1], np.int32)}
    expected = table[feeds["ids"]]
    np.testing.assert_array_equal(graph.compute(feeds)["y"], expected)

    size = os.path.getsize(weights)
    if change == "truncate":
        os.truncate(weights, 16)
    elif change == "rewrite":  # the same length, other bytes, written in place
        with open(weights, "r+b") as f:
            f.seek(64)
            f.write(b"\\xff" * (size - 64))
    elif change == "replace":  # another file renamed over it
        with open(weights + ".new", "wb") as f:
            f.write(b"\\x00" * size)
        os.replace(weights + ".new", weights)
    elif change == "delete":
        os.remove(weights)
    for _ in range(3):
        np.testing.assert_array_equal(graph.compute(feeds)["y"], expected)
    print("ok")
""")


def _run(tmp_path, change, mode):
    result = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), change, mode], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", (
        f"{change} ({mode}): exit {result.returncode}\n{result.stdout}\n{result.stderr[-3000:]}")


@pytest.mark.parametrize("change", ["truncate", "rewrite", "replace", "delete"])
def test_loaded_model_ignores_changes_to_its_weights_file(tmp_path, change):
    _run(tmp_path, change, "read")


@pytest.mark.parametrize("change", ["none", "replace", "delete"])
def test_mapped_weights_survive_changes_that_keep_the_old_file(tmp_path, change):
    _run(tmp_path, change, "map")


def test_weights_that_shrink_while_read_are_a_data_error(tmp_path, context):
    """A weights file shorter than its manifest says raises DataError naming the file (also when it
    shrank between the manifest's read and the weights' read)."""
    import numpy as np

    import webnn
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", {"dataType": "float32", "shape": [4]})
    path = tmp_path / "m.webnn"
    webnn.save(str(path), {"y": b.add(x, b.constant(np.arange(4096, dtype=np.float32)[:4]))})
    weights = tmp_path / "m.weights"
    os.truncate(weights, os.path.getsize(weights) - 4)
    for map_weights in (False, True):
        with pytest.raises(webnn.DataError, match="m.weights"):
            webnn.load(str(path), context, map_weights=map_weights)


def test_map_weights_must_be_a_bool(tmp_path, context):
    import webnn
    with pytest.raises(TypeError, match="map_weights"):
        webnn.load_into(webnn.MLGraphBuilder(context), str(tmp_path / "x.webnn"), map_weights="yes")
