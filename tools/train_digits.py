"""Trains the bundled digits model and writes it into the package (python/webnn/models/).

    pip install scikit-learn      # needed only here, not to run or test webnn
    python tools/train_digits.py

A 64-32-10 multilayer perceptron on scikit-learn's 8x8 handwritten digits. It writes:

- ``digits.webnn``: the graph, in the text form of the webnn-graph tools, with a dynamic batch
  dimension (``dyn("batch", 65536)``);
- ``digits.manifest.json`` + ``digits.weights``: the weights (8-byte WGWT header, then the raw
  little-endian float32 tensors), written here independently of webnn's own writer so that the
  loader is checked against a second implementation of the format;
- ``digits_samples.npz``: 200 held-out images (uint8 pixels 0..16) and their labels.

It then loads the model with webnn and checks that it agrees with scikit-learn.
"""
import json
import os
import struct
import sys

import numpy as np

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "webnn", "models"))
SAMPLES = 200

GRAPH = """\
# A 64-32-10 multilayer perceptron for scikit-learn's 8x8 handwritten digits
# (tools/train_digits.py). x holds pixel values 0..16; probs the class probabilities.
webnn_graph "digits" v1 {{
  inputs {{
    x: f32[dyn("batch", 65536), 64];
  }}
  consts {{
    scale: f32[] @scalar(0.0625);
{consts}
  }}
  nodes {{
    pixels = mul(x, scale);
    h0 = matmul(pixels, W1);
    h1 = add(h0, b1);
    hidden = relu(h1);
    l0 = matmul(hidden, W2);
    logits = add(l0, b2);
    probs = softmax(logits, axis=1);
  }}
  outputs {{ probs; }}
}}
"""


def write_weights(tensors, stem):
    """The manifest and the blob: WGWT, version 1 (u32 LE), then the tensors back to back."""
    blob = bytearray(b"WGWT" + struct.pack("<I", 1))
    manifest = {"format": "wg-weights-manifest", "version": 1, "endianness": "little", "tensors": {}}
    for key, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        manifest["tensors"][key] = {"dataType": "float32", "shape": list(array.shape), "byteOffset": len(blob),
                                    "byteLength": len(data), "layout": "row-major"}
        blob += data
    with open(stem + ".manifest.json", "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    with open(stem + ".weights", "wb") as f:
        f.write(blob)


def main():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.data, digits.target, test_size=SAMPLES, random_state=0, stratify=digits.target)
    mlp = MLPClassifier(hidden_layer_sizes=(32,), activation="relu", alpha=1e-3, max_iter=2000, random_state=0)
    mlp.fit(x_train / 16.0, y_train)
    sklearn_accuracy = mlp.score(x_test / 16.0, y_test)

    tensors = {"W1": mlp.coefs_[0], "b1": mlp.intercepts_[0], "W2": mlp.coefs_[1], "b2": mlp.intercepts_[1]}
    consts = "\n".join(f"    {k}: f32[{', '.join(map(str, v.shape))}] @weights(\"{k}\");" for k, v in tensors.items())
    stem = os.path.join(OUT, "digits")
    with open(stem + ".webnn", "w") as f:
        f.write(GRAPH.format(consts=consts))
    write_weights(tensors, stem)
    np.savez_compressed(os.path.join(OUT, "digits_samples.npz"),
                        images=x_test.astype(np.uint8), labels=y_test.astype(np.uint8))

    import webnn

    images = x_test.astype(np.float32)
    graph = webnn.load(stem + ".webnn", dims={"batch": len(images)})
    probs = graph.compute({"x": images})["probs"]
    accuracy = float(np.mean(probs.argmax(axis=1) == y_test))
    reference = mlp.predict_proba(x_test / 16.0)
    print(f"scikit-learn accuracy {sklearn_accuracy:.3f}, webnn accuracy {accuracy:.3f}, "
          f"max |p_webnn - p_sklearn| {np.max(np.abs(probs - reference)):.2e}")
    size = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT) if n.startswith("digits"))
    print(f"wrote {OUT} ({size} bytes)")
    return 0 if abs(accuracy - sklearn_accuracy) < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
