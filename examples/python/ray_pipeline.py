"""A Ray Data pipeline on a local cluster: read a directory of images (.npy, one folder per
label) -> preprocess with NumPy (downscale, normalize) -> webnn (the bundled digits model, two
actors of one CPU each) -> write Parquet; then prints items/s and checks every written row.

    python examples/python/ray_pipeline.py

Needs Ray Data (``pip install "webnn[ray]"``); without it, says so and exits.
"""
import importlib.util
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np
import numpy.typing as npt

import webnn
from webnn.models import DIGITS, digits_samples


def write_images(folder: Path) -> int:
    """The 200 held-out digits as 16x16 uint8 images, ``folder/<label>/<n>.npy``."""
    images, labels = digits_samples()  # 8x8, values 0..16
    for n, (image, label) in enumerate(zip(images, labels)):
        big = np.kron(image.reshape(8, 8), np.ones((2, 2), np.float32)) * (255 / 16)
        (folder / str(label)).mkdir(parents=True, exist_ok=True)
        np.save(folder / str(label) / f"{n:04d}.npy", np.round(big).astype(np.uint8)[None])  # one row per file
    return len(images)


def pixels(images: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """[n, 16, 16] uint8 0..255 -> [n, 64] float32 0..16: the model's input (2x2 mean, rescaled)."""
    small: npt.NDArray[np.float32] = images.reshape(len(images), 8, 2, 8, 2).astype(np.float32).mean(axis=(2, 4))
    return (small * np.float32(16 / 255)).reshape(len(images), 64)


def preprocess(batch: Dict[str, Any]) -> Dict[str, Any]:
    return {"path": batch["path"], "pixels": pixels(batch["data"])}


def main(output: Optional[str] = None) -> Optional[Dict[str, float]]:
    if importlib.util.find_spec("ray") is None:
        print('Ray is not installed: pip install "webnn[ray]"')
        return None
    import ray
    import ray.data

    from webnn.ray import WebnnPredictor

    # Two CPUs for the two model actors (one webnn thread each), one for the read and write tasks:
    # with every CPU held by an actor, the reads would wait forever.
    ray.init(num_cpus=3, include_dashboard=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    with tempfile.TemporaryDirectory() as temp:
        images = Path(temp) / "images"
        count = write_images(images)
        out = output or os.path.join(temp, "predictions")

        start = time.perf_counter()
        ds = ray.data.read_numpy(str(images), include_paths=True)              # columns "data", "path"
        ds = ds.map_batches(preprocess, batch_format="numpy")                    # "path", "pixels"
        ds = ds.map_batches(WebnnPredictor, fn_constructor_kwargs={"model": DIGITS, "inputs": {"pixels": "x"}},
                            compute=ray.data.ActorPoolStrategy(size=2), num_cpus=1, batch_size=32,
                            batch_format="numpy")                                 # "path", "probs"
        ds.write_parquet(out)
        seconds = time.perf_counter() - start
        print(f"{count} images in {seconds:.2f} s: {count / seconds:.1f} items/s (Ray Data, 2 actors x 1 CPU)")

        # Every written row: the same prediction as webnn in this process, and mostly the right digit.
        rows = ray.data.read_parquet(out).take_all()
        assert len(rows) == count and len({r["path"] for r in rows}) == count
        files = np.stack([np.load(r["path"])[0] for r in rows])
        expected = webnn.load(DIGITS, dims={"batch": count}).compute({"x": pixels(files)})["probs"]
        probs = np.stack([r["probs"] for r in rows])
        np.testing.assert_allclose(probs, expected, rtol=1e-5, atol=1e-6)
        labels = np.array([int(Path(r["path"]).parent.name) for r in rows])
        accuracy = float((probs.argmax(axis=1) == labels).mean())
        print(f"accuracy {accuracy:.3f}")
        assert accuracy > 0.9
    ray.shutdown()
    return {"items": count, "items_per_second": count / seconds, "accuracy": accuracy}


if __name__ == "__main__":
    main()
