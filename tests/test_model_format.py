"""The .webnn model format: loading, saving, round trips and malformed files."""
import json
import os
import re
import struct

import numpy as np
import pytest

import webnn

# ---------------------------------------------------------------- fixtures and helpers
TINY = """\
webnn_graph "tiny" v1 {
  inputs  { x: f32[2, 4]; }
  consts  { W: f32[4, 3] @weights("W"); b: f32[3] @weights("b"); two: f32[] @scalar(2.0); }
  nodes   { h = matmul(x, W); h2 = add(h, b); h3 = mul(h2, two);
            y = softmax(h3, axis=1); r = reshape(y, newShape=[3, 2]); }
  outputs { y; r; }
}
"""
W = (np.arange(12, dtype=np.float32).reshape(4, 3) - 6) / 10
B = np.array([1, -2, 3], np.float32)
X = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)


def tiny_reference(x=X):
    h3 = (x.astype(np.float64) @ W + B) * 2
    e = np.exp(h3 - h3.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    return y, y.reshape(3, 2)


def write_weights(stem, tensors, header=True):
    """Writes <stem>.manifest.json and <stem>.weights (independently of webnn's writer)."""
    blob = bytearray(b"WGWT" + struct.pack("<I", 1) if header else b"")
    manifest = {"format": "wg-weights-manifest", "version": 1, "endianness": "little", "tensors": {}}
    for key, array in tensors.items():
        manifest["tensors"][key] = {"dataType": array.dtype.name, "shape": list(array.shape),
                                    "byteOffset": len(blob), "byteLength": array.nbytes, "layout": "row-major"}
        blob += array.tobytes()
    with open(f"{stem}.manifest.json", "w") as f:
        json.dump(manifest, f)
    with open(f"{stem}.weights", "wb") as f:
        f.write(blob)
    return manifest


def write_safetensors(path, tensors):
    header, data, names = {}, bytearray(), {"float32": "F32", "float16": "F16", "int32": "I32", "int64": "I64",
                                            "uint8": "U8", "int8": "I8", "uint32": "U32", "uint64": "U64"}
    for key, array in tensors.items():
        header[key] = {"dtype": names[array.dtype.name], "shape": list(array.shape),
                       "data_offsets": [len(data), len(data) + array.nbytes]}
        data += array.tobytes()
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + data)


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.webnn"
    path.write_text(TINY)
    write_weights(str(tmp_path / "tiny"), {"W": W, "b": B})
    return path


def check_tiny(graph, x=X):
    out = graph.compute({"x": x})
    y, r = tiny_reference(x)
    np.testing.assert_allclose(out["y"], y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["r"], r, rtol=1e-5, atol=1e-6)


def load_error(path, **keywords):
    with pytest.raises(webnn.DataError) as info:
        webnn.load(path, **keywords)
    return str(info.value)


# ---------------------------------------------------------------- loading
def test_load_text_graph(tiny, context):
    graph = webnn.load(tiny, context)
    assert graph.input_descriptors == {"x": {"dataType": "float32", "shape": [2, 4]}}
    assert graph.output_descriptors["r"]["shape"] == [3, 2]
    check_tiny(graph)


def test_header_less_blob_and_manifest_json_names(tmp_path, context):
    (tmp_path / "model.webnn").write_text(TINY)
    write_weights(str(tmp_path / "other"), {"W": W, "b": B}, header=False)
    os.rename(tmp_path / "other.manifest.json", tmp_path / "manifest.json")
    os.rename(tmp_path / "other.weights", tmp_path / "model.weights")
    check_tiny(webnn.load(tmp_path / "model.webnn", context))


def test_safetensors_weights(tmp_path, context):
    (tmp_path / "m.webnn").write_text(TINY)
    write_safetensors(tmp_path / "m.safetensors", {"W": W, "b": B})
    check_tiny(webnn.load(tmp_path / "m.webnn", context))
    write_safetensors(tmp_path / "other.safetensors", {"W": W, "b": B})
    os.remove(tmp_path / "m.safetensors")
    check_tiny(webnn.load(tmp_path / "m.webnn", context, weights=tmp_path / "other.safetensors"))


def test_explicit_manifest_and_weights_paths(tmp_path, context):
    (tmp_path / "g.webnn").write_text(TINY)
    write_weights(str(tmp_path / "elsewhere"), {"W": W, "b": B})
    check_tiny(webnn.load(tmp_path / "g.webnn", context, manifest=tmp_path / "elsewhere.manifest.json",
                          weights=tmp_path / "elsewhere.weights"))


def test_json_twin(tmp_path, context):
    graph = {
        "format": "webnn-graph-json", "version": 2, "name": "tiny",
        "inputs": {"x": {"dataType": "float32", "shape": [2, 4]}},
        "consts": {"W": {"dataType": "float32", "shape": [4, 3], "init": {"kind": "weights", "ref": "W"}},
                   "b": {"dataType": "float32", "shape": [3], "init": {"kind": "weights", "ref": "b"}},
                   "two": {"dataType": "float32", "shape": [], "init": {"kind": "scalar", "value": 2.0}}},
        "nodes": [{"id": "h", "op": "matmul", "inputs": ["x", "W"], "options": {}},
                  {"id": "h2", "op": "add", "inputs": ["h", "b"]},
                  {"id": "h3", "op": "mul", "inputs": ["h2", "two"], "options": {}},
                  {"id": "y", "op": "softmax", "inputs": ["h3"], "options": {"axis": 1}},
                  {"id": "r", "op": "reshape", "inputs": ["y"], "options": {"newShape": [3, 2]}}],
        "outputs": {"y": "y", "r": "r"},
    }
    (tmp_path / "tiny.json").write_text(json.dumps(graph, indent=1))
    write_weights(str(tmp_path / "tiny"), {"W": W, "b": B})
    check_tiny(webnn.load(tmp_path / "tiny.json", context))


def test_argument_forms(tmp_path, context):
    """Positional literal arrays, concat's two spellings, operand options, cast aliases,
    comments, quoted names, multi-output statements and outputs naming inputs."""
    text = """\
# a comment
webnn_graph "forms" v2 {
  inputs { x: f32[2, 4]; "in:1": f32[2, 4]; }   # a quoted name
  consts { m: u8[3] @bytes([1, 2, 250]); f: f32[2] @scalar(0.5); k: i32[2, 4] @bytes([1, 0, 0, 0, 2, 0, 0, 0,
      3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0, 255, 255, 255, 255]); }
  nodes {
    a = add(x, "in:1");
    r = reshape(a, [4, 2]);
    c1 = concat([a, x], axis=0);
    c2 = concat(a, x, 0);
    [s0, s1] = split(x, [1, 3], axis=1);
    g = gemm(x, x, c=f, bTranspose=true, alpha=0.5);
    k1 = cast(k, to="Float32");
    k2 = cast(k, type="float32");
    k3 = cast(k, "f32");
    m2 = cast(m, dataType="int32");
    inf_clamp = clamp(a, minValue=-inf, maxValue=0.25);
  }
  outputs { r; c1; c2; s0; s1, g; k1; k2; k3; m2; inf_clamp; x; }
}
"""
    (tmp_path / "forms.webnn").write_text(text)
    x = X
    x1 = np.full((2, 4), 0.25, np.float32)
    out = webnn.load(tmp_path / "forms.webnn", context).compute({"x": x, "in:1": x1})
    a = x + x1
    np.testing.assert_array_equal(out["r"], a.reshape(4, 2))
    np.testing.assert_array_equal(out["c1"], np.concatenate([a, x]))
    np.testing.assert_array_equal(out["c2"], np.concatenate([a, x]))
    np.testing.assert_array_equal(out["s0"], x[:, :1])
    np.testing.assert_array_equal(out["s1"], x[:, 1:])
    np.testing.assert_allclose(out["g"], 0.5 * x @ x.T + 0.5, rtol=1e-6)
    k = np.array([1, 2, 3, 4, 5, 6, 7, -1], np.float32).reshape(2, 4)
    for name in ("k1", "k2", "k3"):
        np.testing.assert_array_equal(out[name], k)
    np.testing.assert_array_equal(out["m2"], [1, 2, 250])
    np.testing.assert_array_equal(out["inf_clamp"], np.minimum(a, 0.25))
    np.testing.assert_array_equal(out["x"], x)


def test_dynamic_dimensions(tmp_path, context):
    (tmp_path / "d.webnn").write_text(TINY.replace("x: f32[2, 4]", 'x: f32[dyn("batch", 8), 4]')
                                      .replace("newShape=[3, 2]", "newShape=[3, 5]"))
    write_weights(str(tmp_path / "d"), {"W": W, "b": B})
    x = np.linspace(-2, 2, 40, dtype=np.float32).reshape(10, 4)
    # Without dims the graph stays dynamic, and this reshape is only valid at one size.
    with pytest.raises(webnn.DataError, match=r"d\.webnn, line 5: \[r\] reshape: .*representative sizes batch=8"):
        webnn.load(tmp_path / "d.webnn", context)
    with pytest.raises(webnn.DataError, match=r"outside \[1, 8\]"):
        webnn.load(tmp_path / "d.webnn", context, dims={"batch": 10})
    graph = webnn.load(tmp_path / "d.webnn", context, dims={"batch": 5})
    assert graph.input_descriptors["x"]["shape"] == [5, 4]
    y = graph.compute({"x": x[:5]})["y"]
    h3 = (x[:5].astype(np.float64) @ W + B) * 2
    np.testing.assert_allclose(y, np.exp(h3) / np.exp(h3).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="dimension 'batch'"):
        webnn.load(tmp_path / "d.webnn", context, dims={"batch": 0})


def test_load_into_extends_a_builder(tiny, context):
    builder = webnn.MLGraphBuilder(context)
    outputs = webnn.load_into(builder, tiny)
    assert sorted(outputs) == ["r", "y"]
    z = builder.relu(builder.sub(outputs["y"], builder.constant("float32", 0.3)))
    out = builder.build({"z": z}).compute({"x": X})
    np.testing.assert_allclose(out["z"], np.maximum(tiny_reference()[0] - 0.3, 0), rtol=1e-5, atol=1e-6)


def test_errors_name_the_node_label(tmp_path, context):
    (tmp_path / "e.webnn").write_text(TINY.replace("axis=1", "axis=5"))
    write_weights(str(tmp_path / "e"), {"W": W, "b": B})
    assert re.search(r"e\.webnn, line 5: \[y\] softmax: .*axis", load_error(tmp_path / "e.webnn"))


def test_missing_file_and_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError):
        webnn.load(tmp_path / "nope.webnn")
    with pytest.raises(TypeError):
        webnn.load(42)
    with pytest.raises(TypeError):
        webnn.load_into("not a builder", tmp_path / "x.webnn")


# ---------------------------------------------------------------- malformed files: every error class
GRAPH_ERRORS = [
    # (change to TINY, expected message pattern)
    (("f32[2, 4]", "f32[2, 4] %"), r"line 2: unexpected character '%'"),
    (("matmul", "matmulx"), r"line 4: unknown operation 'matmulx'"),
    (("axis=1", "axis=1, foo=2"), r"line 5: unknown option 'foo' for softmax"),
    (("axis=1", 'axis="one"'), r"line 5: \[y\] softmax: axis must be an integer"),
    (("axis=1", "axis=1, axis=1"), r"line 5: the option 'axis' is given twice"),
    (("reshape(y, newShape=[3, 2])", "reshape(y, [3, 2], newShape=[3, 2])"), r"line 5: 'newShape' is given both"),
    (("reshape(y, newShape=[3, 2])", "reshape(y, [3, 2], [1])"), r"line 5: reshape takes at most 2 positional"),
    (("reshape(y, newShape=[3, 2])", "reshape(y)"), r"line 5: \[r\] reshape: .*newShape.*required"),
    (("outputs { y; r; }", ""), r"line 7: the graph has no 'outputs' block"),
    (("outputs { y; r; }", "outputs { }"), r"the 'outputs' block names no operand"),
    (("outputs { y; r; }", "outputs { y; q; }"), r"line 6: unknown operand 'q'"),
    (("outputs { y; r; }", "outputs { y; y; }"), r"the output 'y' is listed twice"),
    (("h2 = add(h, b)", "h2 = add(hh, b)"), r"line 4: unknown operand 'hh'"),
    (("h2 = add(h, b)", "h = add(h, b)"), r"line 4: 'h' is already defined on line 4"),
    (("webnn_graph", "webnn_grph"), r"line 1: the file must start with"),
    (("v1", "v3"), r"unsupported format version 'v3'"),
    (("v1", ""), r"expected the format version"),
    (("f32[2, 4]", "f33[2, 4]"), r"unknown data type 'f33'"),
    (("f32[2, 4]", "i4[2, 4]"), r"line 4: \[h\] matmul: a has unsupported data type int4"),
    (("f32[2, 4]", "f32[2, 0]"), r"a dimension is 0"),
    (("f32[2, 4]", "f32[2, 4294967296]"), r"out of range"),
    (("f32[2, 4]", "f32[2, -4]"), r"a dimension -4 is out of range"),
    (("f32[2, 4]", "f32[2, 1.5]"), r"expected a dimension"),
    (("f32[2, 4]", "f32[1, 1, 1, 1, 1, 1, 1, 1, 1]"), r"more than 8 dimensions"),
    (("f32[2, 4]", "f32[2, 4"), r"expected ',' or '\]' in the shape"),
    (("@scalar(2.0)", "@bytes([1, 2])"), r"line 3: constant 'two': @bytes holds 2 bytes but f32\[\] needs 4"),
    (("@scalar(2.0)", "@bytes([1, 2, 3, 256])"), r"@bytes\(\[...\]\) holds integers in \[0, 255\]"),
    (("@scalar(2.0)", "@scalar(two)"), r"@scalar\(...\) takes a number"),
    (("@scalar(2.0)", '@scalar(2.0) @weights("x")'), r"has a second initializer"),
    (("@scalar(2.0)", "@zeros()"), r"unknown constant annotation '@zeros'"),
    (("two: f32[]", "two: f32[65536, 65536]"), r"more than 2\^31-1 elements"),
    (("two: f32[]", "two: f32[16384, 16384]"), r"@scalar would expand to 1073741824 bytes"),
    (("two: f32[]", 'two: f32[dyn("n", 2)]'), r"dynamic dimensions are only allowed in inputs"),
    (("2.0", "2.0x"), r"malformed number '2.0x'"),
    (('"tiny"', '"tiny'), r"unterminated string"),
    (("nodes   {", "nodes   { y = ;"), r"expected an operation name"),
    (("h = matmul(x, W);", "h = matmul(x, W)"), r"expected ';' after the statement"),
    (("h = matmul(x, W);", "h = matmul(x, W"), r"expected ',' or '\)'"),
    (("h = matmul(x, W);", "h = matmul(x=x, W);"), r"a positional argument follows a named one"),
    (("h = matmul(x, W);", "h = matmul(1, W);"), r"'a' must name an operand"),
    (("h = matmul(x, W);", "[h, h9] = matmul(x, W);"), r"matmul returns 1 operand but the statement names 2"),
    (("h = matmul(x, W);", "h = matmul(x, W, label=3);"), r"'label' must be a string"),
    (("r = reshape(y, newShape=[3, 2])", "r = reshape(y, newShape=[[[3]]])"), r"cannot hold nested arrays"),
    (("r = reshape(y, newShape=[3, 2])", "r = reshape(y, newShape=[3, true])"), r"newShape"),
    (("r = reshape(y, newShape=[3, 2])", "r = reshape(y, newShape=[3, \"a\"])"), r"newShape\[1\] names the dynamic dimension 'a', which no input declares"),
    (("y = softmax(h3, axis=1);", "y = softmax(h3, axis=1); t = transpose(y, permutation=[1, \"a\"]);"),
     r"mixes numbers"),
    (("inputs  {", "inputs  { inputs {"), r"expected ':' after the input 'inputs'"),
    (("inputs  {", "inputs  { x: f32[1]; } inputs {"), r"a second 'inputs' block"),
    (("inputs  {", "weights { } inputs  {"), r"unknown block 'weights'"),
    (("outputs { y; r; }\n}\n", "outputs { y; r; }\n}\nextra\n"), r"line 8: unexpected 'extra' after the graph's closing"),
    (("  outputs { y; r; }\n}\n", "  outputs { y; r; }\n"), r"the file ends before the graph's closing"),
]


@pytest.mark.parametrize("change,pattern", GRAPH_ERRORS, ids=[c[1][:40] for c in GRAPH_ERRORS])
def test_malformed_graph(tmp_path, change, pattern):
    text = TINY.replace(*change)
    assert text != TINY
    (tmp_path / "bad.webnn").write_text(text)
    write_weights(str(tmp_path / "bad"), {"W": W, "b": B})
    message = load_error(tmp_path / "bad.webnn")
    assert message.startswith(str(tmp_path / "bad.webnn")), message
    assert re.search(pattern, message), message


def test_deep_nesting_is_rejected(tmp_path):
    (tmp_path / "deep.webnn").write_text(TINY.replace("newShape=[3, 2]", "newShape=" + "[" * 5000 + "]" * 5000))
    assert "nested too deeply" in load_error(tmp_path / "deep.webnn")
    (tmp_path / "deep.json").write_text('{"a": ' + "[" * 100000)
    assert "nesting is too deep" in load_error(tmp_path / "deep.json")


def tiny_with_manifest(tmp_path, edit=None, blob_edit=None, header=True):
    (tmp_path / "t.webnn").write_text(TINY)
    manifest = write_weights(str(tmp_path / "t"), {"W": W, "b": B}, header=header)
    if edit:
        edit(manifest)
        (tmp_path / "t.manifest.json").write_text(json.dumps(manifest))
    if blob_edit:
        data = (tmp_path / "t.weights").read_bytes()
        (tmp_path / "t.weights").write_bytes(blob_edit(data))
    return tmp_path / "t.webnn"


def _set(path, value):
    def edit(manifest):
        target = manifest
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


WEIGHTS_ERRORS = [
    (_set(["tensors", "b", "byteOffset"], 1000), None, r"t\.weights: tensor 'b': bytes \[1000, 1012\) lie outside"),
    (_set(["tensors", "b", "byteOffset"], 2 ** 64 - 1), None, r"tensor 'b': bytes .* lie outside"),
    (_set(["tensors", "b", "byteOffset"], 4), None, r"tensor 'b': byteOffset 4 points into the file's 8-byte header"),
    (_set(["tensors", "b", "byteOffset"], -8), None, r"tensor 'b': \"byteOffset\" must be a non-negative integer"),
    (_set(["tensors", "b", "byteOffset"], 8.5), None, r"\"byteOffset\" must be a non-negative integer"),
    (_set(["tensors", "b", "byteLength"], 8), None, r"tensor 'b': byteLength 8 does not match float32 \[3\] \(12 bytes\)"),
    (_set(["tensors", "b", "shape"], [3, 0]), None, r"tensor 'b': a dimension must be an integer in \[1,"),
    (_set(["tensors", "b", "dataType"], "bfloat16"), None, r"tensor 'b': unknown data type 'bfloat16'"),
    (_set(["tensors", "b", "dataType"], "int32"), None, r"line 3: constant 'b': the graph declares float32 \[3\] but "
                                                        r".*t\.manifest\.json has tensor 'b' as int32 \[3\]"),
    (_set(["tensors", "b", "layout"], "column-major"), None, r"tensor 'b': only the \"row-major\" layout"),
    (lambda m: m["tensors"].pop("b"), None, r"line 3: constant 'b': .*t\.manifest\.json has no tensor 'b'"),
    (lambda m: m["tensors"]["b"].pop("byteLength"), None, r"tensor 'b': has no \"byteLength\""),
    (_set(["format"], "something"), None, r"t\.manifest\.json: not a weights manifest"),
    (_set(["version"], 2), None, r"unsupported manifest version"),
    (_set(["endianness"], "big"), None, r"only little-endian"),
    (_set(["tensors"], []), None, r"no \"tensors\" object"),
    (None, lambda d: d[:30], r"t\.weights: tensor '\w': bytes \[\d+, \d+\) lie outside the file \(30 bytes; is it truncated"),
    (None, lambda d: d[:6], r"t\.weights: the WGWT header is truncated"),
    (None, lambda d: d[:4] + struct.pack("<I", 2) + d[8:], r"unsupported weights version 2"),
]


@pytest.mark.parametrize("edit,blob_edit,pattern", WEIGHTS_ERRORS, ids=[w[2][:40] for w in WEIGHTS_ERRORS])
def test_malformed_weights(tmp_path, edit, blob_edit, pattern):
    message = load_error(tiny_with_manifest(tmp_path, edit, blob_edit))
    assert re.search(pattern, message), message


def test_missing_weights_files(tmp_path):
    path = tiny_with_manifest(tmp_path)
    os.remove(tmp_path / "t.weights")
    assert re.search(r"t\.weights: cannot open the file", load_error(path))
    os.remove(tmp_path / "t.manifest.json")
    assert re.search(r"t\.webnn, line 3: constant 'W' reads weights, but no manifest", load_error(path))


def test_malformed_manifest_json(tmp_path):
    path = tiny_with_manifest(tmp_path)
    (tmp_path / "t.manifest.json").write_text('{"format": "wg-weights-manifest",\n "version": 1,\n "tensors": {"W": }}')
    assert re.search(r"t\.manifest\.json, line 3: unexpected character '}'", load_error(path))


SAFETENSORS_ERRORS = [
    (lambda d: d[:5], r"the file is truncated"),
    (lambda d: struct.pack("<Q", 10 ** 9) + d[8:], r"the header length 1000000000 exceeds the file"),
    (lambda d: d[:-4], r"tensor 'b': .*lie outside the file"),
    (lambda d: d.replace(b'"F32"', b'"BF1"', 1), r"unsupported dtype 'BF1'"),
    (lambda d: d.replace(b"data_offsets", b"data_offsetz", 1), r"\"data_offsets\" must be \[begin, end\]"),
]


@pytest.mark.parametrize("blob_edit,pattern", SAFETENSORS_ERRORS, ids=[s[1][:30] for s in SAFETENSORS_ERRORS])
def test_malformed_safetensors(tmp_path, blob_edit, pattern):
    (tmp_path / "s.webnn").write_text(TINY)
    write_safetensors(tmp_path / "s.safetensors", {"W": W, "b": B})
    data = (tmp_path / "s.safetensors").read_bytes()
    (tmp_path / "s.safetensors").write_bytes(blob_edit(data))
    message = load_error(tmp_path / "s.webnn")
    assert "s.safetensors" in message and re.search(pattern, message), message


JSON_ERRORS = [
    (lambda g: g.update(format="other"), r"\"format\" must be \"webnn-graph-json\""),
    (lambda g: g.update(version=9), r"unsupported format version 9"),
    (lambda g: g.pop("outputs"), r"the graph has no \"outputs\""),
    (lambda g: g["nodes"][0].pop("op"), r"a node has no \"op\""),
    (lambda g: g["nodes"][0].update(op="nope"), r"unknown operation 'nope'"),
    (lambda g: g["nodes"][0].update(inputs="x"), r"\"inputs\" must be an array"),
    (lambda g: g["nodes"][0].update(options={"axis": {"a": 1}}), r"an argument cannot be an object"),
    (lambda g: g["inputs"]["x"].update(dataType="float64"), r"unknown data type 'float64'"),
    (lambda g: g["inputs"]["x"].update(shape=[2, "4"]), r"a dimension must be an integer"),
    (lambda g: g["consts"]["two"]["init"].update(kind="zeros"), r"unknown init kind 'zeros'"),
    (lambda g: g["consts"]["two"].update(init={"kind": "inlineBytes", "bytes": [1]}), r"@bytes holds 1 bytes"),
    (lambda g: g["outputs"].update(y=3), r"output \"y\" must be a string"),
]


@pytest.mark.parametrize("edit,pattern", JSON_ERRORS, ids=[j[1][:30] for j in JSON_ERRORS])
def test_malformed_json_graph(tmp_path, edit, pattern):
    graph = {
        "format": "webnn-graph-json", "version": 1,
        "inputs": {"x": {"dataType": "float32", "shape": [2, 4]}},
        "consts": {"two": {"dataType": "float32", "shape": [], "init": {"kind": "scalar", "value": 2}}},
        "nodes": [{"id": "y", "op": "mul", "inputs": ["x", "two"], "options": {}}],
        "outputs": {"y": "y"},
    }
    edit(graph)
    (tmp_path / "g.json").write_text(json.dumps(graph, indent=1))
    message = load_error(tmp_path / "g.json")
    assert message.startswith(str(tmp_path / "g.json")) and re.search(pattern, message), message


@pytest.mark.parametrize("text,pattern", [
    ('{"format": "webnn-graph-json",\n "version": 1,\n "nodes": [1, 2,]}', r"line 3: unexpected character '\]'"),
    ('{"format": "webnn-graph-json", "format": 1}', r"duplicate member \"format\""),
    ('{"a": "\\q"}', r"bad escape"),
    ('{"a": "x\ny"}', r"control character in a string"),
    ('{"a": 1} 2', r"unexpected text after the JSON value"),
    ('{"a": 01.}', r"malformed number"),
    ('{"a": tru}', r"unexpected character 't'"),
])
def test_malformed_json_syntax(tmp_path, text, pattern):
    (tmp_path / "j.json").write_text(text)
    assert re.search(pattern, load_error(tmp_path / "j.json"))


# ---------------------------------------------------------------- fuzz-ish: only DataError, never a crash
def _load_or_data_error(path, context):
    try:
        webnn.load(path, context)
    except webnn.DataError:
        pass


def test_truncated_files_raise_data_error(tmp_path, context):
    path = tiny_with_manifest(tmp_path)
    files = {name: (tmp_path / name).read_bytes() for name in ("t.webnn", "t.manifest.json", "t.weights")}
    for name, data in files.items():
        for cut in range(0, len(data), 3 if name != "t.weights" else 1):
            (tmp_path / name).write_bytes(data[:cut])
            _load_or_data_error(path, context)
        (tmp_path / name).write_bytes(data)
    webnn.load(path, context)


def test_flipped_bytes_raise_data_error(tmp_path, context):
    path = tiny_with_manifest(tmp_path)
    rng = np.random.default_rng(1234)
    files = {name: (tmp_path / name).read_bytes() for name in ("t.webnn", "t.manifest.json", "t.weights")}
    for name, data in files.items():
        for _ in range(120):
            corrupt = bytearray(data)
            for _ in range(int(rng.integers(1, 4))):
                corrupt[int(rng.integers(len(corrupt)))] = int(rng.integers(256))
            (tmp_path / name).write_bytes(bytes(corrupt))
            _load_or_data_error(path, context)
        (tmp_path / name).write_bytes(data)


def test_fuzzed_json_and_safetensors_raise_data_error(tmp_path, context):
    (tmp_path / "s.webnn").write_text(TINY)
    write_safetensors(tmp_path / "s.safetensors", {"W": W, "b": B})
    webnn.save(tmp_path / "j.json", webnn.load(tmp_path / "s.webnn", context))
    rng = np.random.default_rng(99)
    for name, graph in (("s.safetensors", "s.webnn"), ("j.json", "j.json")):
        data = (tmp_path / name).read_bytes()
        for cut in range(0, len(data), 5):
            (tmp_path / name).write_bytes(data[:cut])
            _load_or_data_error(tmp_path / graph, context)
        for _ in range(100):
            corrupt = bytearray(data)
            corrupt[int(rng.integers(len(corrupt)))] = int(rng.integers(256))
            (tmp_path / name).write_bytes(bytes(corrupt))
            _load_or_data_error(tmp_path / graph, context)


# ---------------------------------------------------------------- saving and round trips
RICH = """\
webnn_graph "rich" v1 {
  inputs {
    x: f32[1, 2, 4, 4];
    v: f32[2, 3];
    seq: f32[1, 1, 2];
    n: i32[dyn("n", 16), 3];
  }
  consts {
    w: f32[3, 2, 3, 3] @weights("conv.w");
    bias: f32[3] @weights("conv.b");
    half: f16[2, 3] @weights("half");
    ints: i32[2, 3] @weights("ints");
    big: i64[2] @weights("big");
    u: u8[4] @bytes([1, 2, 3, 250]);
    two: f32[] @scalar(2.0);
    fill: f32[3] @scalar(0.5);
    huge: i64[] @scalar(-9007199254740993);
    gw: f32[1, 6, 2] @weights("gru.w");
    gr: f32[1, 6, 2] @weights("gru.r");
  }
  nodes {
    c = conv2d(x, w, padding=[1, 1, 1, 1], strides=[1, 1], groups=1, inputLayout="nchw", bias=bias);
    cl = clamp(c, minValue=-1.5, maxValue=2);
    m = mul(cl, two);
    rs = resample2d(m, mode="linear", scales=[2.0, 0.5]);
    g = gemm(v, v, c=fill, alpha=0.25, aTranspose=true);
    [s0, s1] = split(v, [1, 2], axis=1);
    [h0, h1] = split(v, 2);
    cat = concat([s0, s1, s0], 1);
    cs = cumulativeSum(v, axis=1, exclusive=true, reversed=true);
    tl = tile(v, repetitions=[2, 1]);
    tri = triangular(v, upper=false, diagonal=-1);
    am = argMax(v, axis=1, keepDimensions=true, outputDataType="int64");
    ci = cast(ints, dataType="float16");
    hv = add(half, ci);
    p = pad(v, beginningPadding=[1, 0], endingPadding=[0, 1], mode="reflection");
    pv = pad(v, beginningPadding=[1, 0], endingPadding=[0, 1], value=1.5);
    ln = layerNormalization(v, axes=[1], epsilon=0.001, label="layer norm");
    [gy] = gru(seq, gw, gr, steps=1, hiddenSize=2, activations=["tanh", "relu"]);
    bs = add(big, huge);
    us = cast(u, dataType="int32");
    ns = mul(n, n);
  }
  outputs { rs; g; h0; h1; cat; cs; tl; tri; am; hv; p; pv; ln; gy; bs; us; ns; }
}
"""


def rich_weights():
    rng = np.random.default_rng(7)
    return {
        "conv.w": rng.standard_normal((3, 2, 3, 3)).astype(np.float32),
        "conv.b": rng.standard_normal(3).astype(np.float32),
        "half": rng.standard_normal((2, 3)).astype(np.float16),
        "ints": np.arange(6, dtype=np.int32).reshape(2, 3) - 3,
        "big": np.array([2 ** 62, -(2 ** 62)], np.int64),
        "gru.w": rng.standard_normal((1, 6, 2)).astype(np.float32),
        "gru.r": rng.standard_normal((1, 6, 2)).astype(np.float32),
    }


def rich_inputs():
    rng = np.random.default_rng(8)
    return {"x": rng.standard_normal((1, 2, 4, 4)).astype(np.float32),
            "v": rng.standard_normal((2, 3)).astype(np.float32),
            "seq": rng.standard_normal((1, 1, 2)).astype(np.float32),
            "n": np.arange(9, dtype=np.int32).reshape(3, 3)}


def statements(text):
    """The graph's declarations and statements, whitespace-normalized, without the header."""
    body = re.sub(r"#[^\n]*", "", text.split("{", 1)[1])
    return sorted(s for s in (re.sub(r"\s+", " ", s).strip() for s in re.split(r"[;{}]", body)) if s)


def test_round_trip_every_option_and_constant_kind(tmp_path, context):
    (tmp_path / "rich.webnn").write_text(RICH)
    write_weights(str(tmp_path / "rich"), rich_weights())
    graph = webnn.load(tmp_path / "rich.webnn", context, dims={"n": 3})
    expected = graph.compute(rich_inputs())
    webnn.save(tmp_path / "copy.webnn", graph)
    text = (tmp_path / "copy.webnn").read_text()
    assert text.startswith('webnn_graph "rich" v1 {')
    # The same declarations and statements; operands by position, options by name, defaults omitted.
    original = statements(RICH)
    saved = statements(text)
    assert "ln = layerNormalization(v, axes=[1], epsilon=0.001, label=\"layer norm\")" in saved
    assert "[s0, s1] = split(v, splits=[1, 2], axis=1)" in saved
    assert "c = conv2d(x, w, padding=[1, 1, 1, 1], bias=bias)" in saved  # strides, groups, inputLayout: defaults
    assert 'n: i32[dyn("n", 16), 3]' in saved
    assert "u: u8[4] @bytes([1, 2, 3, 250])" in saved and "fill: f32[3] @scalar(0.5)" in saved
    assert "huge: i64[] @scalar(-9007199254740993)" in saved and 'w: f32[3, 2, 3, 3] @weights("conv.w")' in saved
    assert len(saved) == len(original)
    # The same weights, under the same keys.
    manifest = json.loads((tmp_path / "copy.manifest.json").read_text())
    blob = (tmp_path / "copy.weights").read_bytes()
    assert blob[:8] == b"WGWT\x01\x00\x00\x00"
    for key, array in rich_weights().items():
        entry = manifest["tensors"][key]
        assert blob[entry["byteOffset"]:entry["byteOffset"] + entry["byteLength"]] == array.tobytes()
    # Identical results, and saving again gives the same files.
    copy = webnn.load(tmp_path / "copy.webnn", context, dims={"n": 3})
    actual = copy.compute(rich_inputs())
    for name in expected:
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)
    webnn.save(tmp_path / "again.webnn", copy, name="copy")
    assert (tmp_path / "again.webnn").read_text().replace('"copy"', '"rich"') == text
    assert (tmp_path / "again.weights").read_bytes() == blob


@pytest.mark.parametrize("fmt,weights", [("text", "blob"), ("json", "blob"), ("text", "headerless"),
                                         ("json", "safetensors")])
def test_round_trip_formats(tmp_path, context, fmt, weights):
    (tmp_path / "rich.webnn").write_text(RICH)
    write_weights(str(tmp_path / "rich"), rich_weights())
    graph = webnn.load(tmp_path / "rich.webnn", context, dims={"n": 3})
    expected = graph.compute(rich_inputs())
    target = tmp_path / ("out.json" if fmt == "json" else "out.webnn")
    webnn.save(target, graph, weights=weights)
    if weights == "safetensors":
        assert (tmp_path / "out.safetensors").exists() and not (tmp_path / "out.weights").exists()
    if weights == "headerless":
        assert not (tmp_path / "out.weights").read_bytes().startswith(b"WGWT")
    actual = webnn.load(target, context, dims={"n": 3}).compute(rich_inputs())
    for name in expected:
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)


def test_save_exact_text_of_a_canonical_file(tmp_path, context):
    canonical = """\
webnn_graph "tiny" v1 {
  inputs {
    x: f32[2, 4];
  }
  consts {
    W: f32[4, 3] @weights("W");
    b: f32[3] @weights("b");
    two: f32[] @scalar(2.0);
  }
  nodes {
    h = matmul(x, W);
    h2 = add(h, b);
    h3 = mul(h2, two);
    y = softmax(h3, axis=1);
    r = reshape(y, newShape=[3, 2]);
  }
  outputs { y; r; }
}
"""
    (tmp_path / "tiny.webnn").write_text(canonical)
    write_weights(str(tmp_path / "tiny"), {"W": W, "b": B})
    webnn.save(tmp_path / "out.webnn", webnn.load(tmp_path / "tiny.webnn", context))
    assert (tmp_path / "out.webnn").read_text() == canonical


def test_save_a_builder_graph(tmp_path, context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("input:0", data_type="float32", shape=[2, 3])
    k = builder.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    h = builder.constant(np.array([[1.5, -2], [0.25, 3]], np.float16))
    s = builder.constant("float32", 0.1)            # a scalar: written inline
    nan = builder.constant("float32", float("nan"))  # no portable @scalar form: written as bytes
    i = builder.constant("int64", 2 ** 60 + 1)
    y = builder.add(builder.mul(x, k), s, label="scaled")
    z = builder.max(y, nan)
    r = builder.reduce_sum(builder.cast(h, "float32"), axes=[1], keep_dimensions=True)
    j = builder.add(builder.constant(np.array([1, 2], np.int64)), i)
    outputs = {"y": y, "z": z, "r": r, "j": j, "echo": y}
    graph = builder.build(outputs)
    data = {"input:0": np.array([[1, 2, 3], [-1, -2, -3]], np.float32)}
    expected = graph.compute(data)
    webnn.save(tmp_path / "b.webnn", outputs)  # after build
    text = (tmp_path / "b.webnn").read_text()
    assert '"input:0": f32[2, 3];' in text and "@scalar(0.1)" in text and "@scalar(1152921504606846977)" in text
    assert "@bytes([0, 0, 192, 127])" in text and "= mul(\"input:0\", const_0);" in text
    assert re.search(r"(echo = identity\(y\)|y = identity\(echo\));", text)
    assert '= add(mul_0, const_2, label="scaled");' in text
    actual = webnn.load(tmp_path / "b.webnn", context).compute(data)
    assert sorted(actual) == sorted(expected)
    for name in expected:
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)


def test_save_errors(tmp_path, context):
    builder = webnn.MLGraphBuilder(context)
    x = builder.input("x", data_type="float32", shape=[2])
    other = webnn.MLGraphBuilder(context).input("q", data_type="float32", shape=[2])
    y = builder.relu(x)
    with pytest.raises(TypeError, match="at least one output"):
        webnn.save(tmp_path / "e.webnn", {})
    with pytest.raises(TypeError, match="different MLGraphBuilders"):
        webnn.save(tmp_path / "e.webnn", {"y": y, "q": other})
    with pytest.raises(TypeError, match="already the name"):
        webnn.save(tmp_path / "e.webnn", {"x": y})
    with pytest.raises(TypeError, match="format"):
        webnn.save(tmp_path / "e.webnn", {"y": y}, format="xml")
    with pytest.raises(TypeError, match="weights"):
        webnn.save(tmp_path / "e.webnn", {"y": y}, weights="zip")
    with pytest.raises(TypeError, match="not loaded by webnn.load"):
        webnn.save(tmp_path / "e.webnn", builder.build({"y": y}))
    with pytest.raises(FileNotFoundError):
        webnn.save(tmp_path / "missing" / "e.webnn", {"y": y})


def test_summary_reads_no_weights(tmp_path):
    (tmp_path / "s.webnn").write_text(RICH)
    info = webnn.formats.summary(tmp_path / "s.webnn")
    assert info["name"] == "rich" and info["ops"][:3] == ["conv2d", "clamp", "mul"]
    assert info["inputs"][3]["shape"] == [{"name": "n", "max": 16}, 3]
    assert {c["init"] for c in info["consts"]} == {"weights", "bytes", "scalar"}


def test_bundled_digits_model(context):
    from webnn import models

    images, labels = models.digits_samples()
    assert images.shape == (200, 64) and labels.shape == (200,)
    graph = webnn.load(models.DIGITS, context, dims={"batch": 200})
    accuracy = np.mean(graph.compute({"x": images})["probs"].argmax(axis=1) == labels)
    assert accuracy > 0.9
    size = sum(os.path.getsize(os.path.join(os.path.dirname(models.DIGITS), n))
               for n in os.listdir(os.path.dirname(models.DIGITS)))
    assert size < 1_000_000


# ---------------------------------------------------------------- int4 / uint4 (nibble-packed in files)
FOUR_BIT = """\
webnn_graph "four" v1 {
  inputs  { x: f32[5]; }
  consts  { s: f32[1] @scalar(0.5); zq: i4[1] @bytes([9]); zu: u4[1] @scalar(3);
            q: i4[5] @weights("q"); u: u4[5] @weights("u"); }
  nodes   { a = dequantizeLinear(q, s, zq); b = dequantizeLinear(u, s, zu);
            c = quantizeLinear(x, s, zq); d = dequantizeLinear(c, s, zq); }
  outputs { a; b; d; }
}
"""
Q4 = np.array([-8, -1, 0, 7, 3], np.int8)
U4 = np.array([0, 15, 1, 8, 3], np.uint8)


def write_packed(stem, tensors):
    """A WGWT blob of nibble-packed (data type, values) tensors: element 2i low, 2i+1 high."""
    blob = bytearray(b"WGWT" + struct.pack("<I", 1))
    manifest = {"format": "wg-weights-manifest", "version": 1, "endianness": "little", "tensors": {}}
    for key, (data_type, values) in tensors.items():
        nibbles = [int(v) & 15 for v in values] + [0]
        packed = bytes(nibbles[i] | nibbles[i + 1] << 4 for i in range(0, len(values), 2))
        manifest["tensors"][key] = {"dataType": data_type, "shape": [len(values)], "byteOffset": len(blob),
                                    "byteLength": len(packed), "layout": "row-major"}
        blob += packed
    with open(stem + ".manifest.json", "w") as f:
        json.dump(manifest, f)
    with open(stem + ".weights", "wb") as f:
        f.write(blob)
    return blob


def four_bit_reference(x):
    s, zq, zu = 0.5, -7, 3  # @bytes([9]) is the nibble 9: int4 -7
    c = np.clip(np.rint(x.astype(np.float32) / np.float32(s)) + zq, -8, 7)
    return {"a": (Q4 - zq) * s, "b": (U4.astype(np.int64) - zu) * s, "d": (c - zq) * s}


def check_four_bit(graph):
    x = np.array([-10, -0.75, 0.25, 1.5, 9], np.float32)
    out = graph.compute({"x": x})
    for name, expected in four_bit_reference(x).items():
        np.testing.assert_array_equal(out[name], expected.astype(np.float32), err_msg=name)


def test_four_bit_constants_load_nibble_packed(tmp_path, context):
    (tmp_path / "four.webnn").write_text(FOUR_BIT)
    write_packed(str(tmp_path / "four"), {"q": ("int4", Q4), "u": ("uint4", U4)})
    check_four_bit(webnn.load(tmp_path / "four.webnn", context))


@pytest.mark.parametrize("fmt,path", [("text", "copy.webnn"), ("json", "copy.json")])
def test_four_bit_round_trip(tmp_path, context, fmt, path):
    (tmp_path / "four.webnn").write_text(FOUR_BIT)
    blob = write_packed(str(tmp_path / "four"), {"q": ("int4", Q4), "u": ("uint4", U4)})
    webnn.save(tmp_path / path, webnn.load(tmp_path / "four.webnn", context), format=fmt)
    stem = str(tmp_path / path).rsplit(".", 1)[0]
    manifest = json.loads(open(stem + ".manifest.json").read())
    assert {k: v["byteLength"] for k, v in manifest["tensors"].items()} == {"q": 3, "u": 3}
    assert open(stem + ".weights", "rb").read() == bytes(blob)  # the same packing, byte for byte
    text = (tmp_path / path).read_text()
    assert ("@bytes([9])" in text) if fmt == "text" else ('"bytes": [9]' in text)
    check_four_bit(webnn.load(tmp_path / path, context))


def test_four_bit_errors(tmp_path, context):
    (tmp_path / "four.webnn").write_text(FOUR_BIT)
    write_packed(str(tmp_path / "four"), {"q": ("int4", Q4), "u": ("uint4", U4)})
    manifest = json.loads((tmp_path / "four.manifest.json").read_text())
    manifest["tensors"]["q"]["byteLength"] = 5  # unpacked size
    (tmp_path / "four.manifest.json").write_text(json.dumps(manifest))
    assert re.search(r"byteLength 5 does not match int4 \[5\] \(3 bytes, nibble-packed\)",
                     load_error(tmp_path / "four.webnn"))
    (tmp_path / "bytes.webnn").write_text(FOUR_BIT.replace("@bytes([9])", "@bytes([9, 1])"))
    write_packed(str(tmp_path / "bytes"), {"q": ("int4", Q4), "u": ("uint4", U4)})
    assert "@bytes holds 2 bytes but i4[1] needs 1 (nibble-packed)" in load_error(tmp_path / "bytes.webnn")
    builder = webnn.MLGraphBuilder(context)
    q = builder.constant({"dataType": "int4", "shape": [5]}, Q4)
    y = builder.dequantize_linear(q, builder.constant(np.ones(5, np.float32)), builder.constant(
        {"dataType": "int4", "shape": [5]}, np.zeros(5, np.int8)))
    with pytest.raises(webnn.DataError, match="safetensors cannot hold"):
        webnn.save(tmp_path / "st.webnn", {"y": y}, weights="safetensors")


# ---------------------------------------------------------------- memory-mapped weights
def _rss_anon_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
@pytest.mark.parametrize("weights", ["blob", "safetensors"])
@pytest.mark.parametrize("map_weights", [True, False])
def test_weights_are_used_in_place(tmp_path, context, weights, map_weights):
    """map_weights=True maps the weights file: the builder's constants are its pages (shared with
    every process that maps it), not copies in private memory. By default the file is read once into
    private memory, and the constants are slices of that copy (not a second copy each). Results are
    the same."""
    rng = np.random.default_rng(0)
    big = rng.standard_normal((2048, 4096)).astype(np.float32)  # 32 MiB
    small = np.arange(3, dtype=np.int8)  # 3 bytes: the next tensor starts unaligned in a blob
    b = webnn.MLGraphBuilder(context)
    x = b.input("x", data_type="float32", shape=[2, 2048])
    k = b.input("k", data_type="int8", shape=[3])
    y = b.matmul(x, b.constant(big))
    z = b.add(k, b.constant(small))
    w = b.mul(x, b.constant(np.full((2, 2048), 0.5, np.float32)))  # after `small`: copied if unaligned
    path = tmp_path / "big.webnn"
    webnn.save(path, {"y": y, "z": z, "w": w}, weights=weights)
    weights_file = str(tmp_path / ("big.safetensors" if weights == "safetensors" else "big.weights"))
    del b, x, k, y, z, w
    before = _rss_anon_kib()
    builder = webnn.MLGraphBuilder(context)
    outputs = webnn.load_into(builder, path, map_weights=map_weights)
    grew = _rss_anon_kib() - before
    with open("/proc/self/maps") as maps:
        assert (weights_file in maps.read()) == map_weights
    if map_weights:
        assert grew < 16 * 1024, f"private memory grew by {grew} KiB for 32 MiB of weights"
    else:
        assert 32 * 1024 <= grew < 48 * 1024, f"private memory grew by {grew} KiB for 32 MiB of weights"
    graph = builder.build(outputs)
    xv = rng.standard_normal((2, 2048)).astype(np.float32)
    out = graph.compute({"x": xv, "k": np.array([1, 2, 3], np.int8)})
    np.testing.assert_allclose(out["y"], xv.astype(np.float64) @ big, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(out["z"], [1, 3, 5])
    np.testing.assert_array_equal(out["w"], xv * 0.5)
    # A model saved from the loaded operands writes the mapped bytes back out.
    webnn.save(tmp_path / "copy.webnn", outputs, weights=weights)
    again = webnn.load(tmp_path / "copy.webnn", context)
    np.testing.assert_array_equal(again.compute({"x": xv, "k": np.array([1, 2, 3], np.int8)})["y"], out["y"])
