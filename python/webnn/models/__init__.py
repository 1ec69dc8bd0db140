"""Models bundled with the package.

``DIGITS`` is a 64-32-10 multilayer perceptron for scikit-learn's 8x8 handwritten digits
(``tools/train_digits.py`` trains it): input ``x``, float32 ``[batch, 64]`` of pixel values 0..16
(``batch`` is a dynamic dimension: ``webnn.load(DIGITS, dims={"batch": n})``); output ``probs``,
float32 ``[batch, 10]``.
"""
import os
from typing import Tuple

import numpy as np
import numpy.typing as npt

_HERE = os.path.dirname(os.path.abspath(__file__))

DIGITS = os.path.join(_HERE, "digits.webnn")


def digits_samples() -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """200 held-out digits the model never saw: ``(images float32 [200, 64], labels int64 [200])``."""
    with np.load(os.path.join(_HERE, "digits_samples.npz"), allow_pickle=False) as data:
        return data["images"].astype(np.float32), data["labels"].astype(np.int64)


__all__ = ["DIGITS", "digits_samples"]
