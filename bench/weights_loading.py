"""What reading .webnn weights into memory (the default) costs against memory-mapping them.

Two models, each saved once, then loaded in fresh processes (the file in the page cache):
- "gather table": a float32 [N, 1024] table read in place at run time (embedding-style);
- "conv net": 20 3x3 convolutions of 256 channels (their weights are packed at build, so the
  file's bytes are not kept in either mode).
For each mode: load time (read / map), the process's RSS after load and after the first dispatch
(minus its RSS after imports), and the ratio read / map. Mapped pages count in RSS once touched but
are shared with other processes through the page cache; read ones are the process's own.

    python bench/weights_loading.py [--table-mib 256]
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import webnn

CHILD = """
import json, sys, time
import numpy as np
import webnn
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * 4096 / 2**20
path, mode, feeds = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
ctx = webnn.ml.create_context()
base = rss()
start = time.perf_counter()
graph = webnn.load(path, ctx, map_weights=(mode == 'map'))
load = time.perf_counter() - start
after_load = rss() - base
graph.compute({k: np.broadcast_to(np.array(v['data'], v['dtype']), v['shape']).copy() for k, v in feeds.items()})
print(json.dumps({'load': load, 'after_load': after_load, 'after_run': rss() - base}))
"""


def save_table(folder, mib):
    rows = mib * (1 << 20) // 4096
    b = webnn.MLGraphBuilder(webnn.ml.create_context())
    ids = b.input("ids", {"dataType": "int32", "shape": [64]})
    table = np.random.default_rng(0).standard_normal((rows, 1024), dtype=np.float32)
    path = str(Path(folder) / "table.webnn")
    webnn.save(path, {"y": b.gather(b.constant(table), ids)})
    return path, {"ids": {"data": list(range(0, rows, rows // 64))[:64], "dtype": "int32", "shape": [64]}}


def save_convs(folder):
    b = webnn.MLGraphBuilder(webnn.ml.create_context())
    x = b.input("x", {"dataType": "float32", "shape": [1, 256, 14, 14]})
    rng = np.random.default_rng(1)
    for _ in range(20):
        w = (rng.standard_normal((256, 256, 3, 3), dtype=np.float32) / 48).astype(np.float32)
        x = b.relu(b.conv2d(x, b.constant(w), padding=[1, 1, 1, 1]))
    path = str(Path(folder) / "convs.webnn")
    webnn.save(path, {"y": x})
    return path, {"x": {"data": 0.5, "dtype": "float32", "shape": [1, 256, 14, 14]}}


def measure(path, mode, feeds, rounds=3):
    runs = []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, "-c", CHILD, path, mode, json.dumps(feeds)], capture_output=True,
                             text=True, check=True).stdout
        runs.append(json.loads(out))
    return {key: min(r[key] for r in runs) for key in runs[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table-mib", type=int, default=256)
    args = parser.parse_args()
    print(f"webnn {webnn.__version__}, isa {webnn._core.active_isa()}; best of 3 fresh processes each")
    with tempfile.TemporaryDirectory() as folder:
        for name, (path, feeds) in {"gather table": save_table(folder, args.table_mib),
                                    "conv net": save_convs(folder)}.items():
            size = sum(f.stat().st_size for f in Path(folder).glob(Path(path).stem + ".*")) / 2**20
            read, mapped = measure(path, "read", feeds), measure(path, "map", feeds)
            print(f"\n{name} ({size:.0f} MiB on disk)      read     map   read/map")
            print(f"  load s               {read['load']:8.3f} {mapped['load']:7.3f} {read['load'] / mapped['load']:8.2f}")
            for key in ("after_load", "after_run"):
                print(f"  RSS MiB {key.replace('_', ' '):<12} {read[key]:8.0f} {mapped[key]:7.0f} "
                      f"{read[key] / max(mapped[key], 1):8.2f}")


if __name__ == "__main__":
    main()
