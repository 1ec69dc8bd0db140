"""gru, gruCell, lstm and lstmCell against step-by-step float64 NumPy references written from the
spec's equations (digest §3), covering every option and the three directions."""
import itertools

import numpy as np
import pytest

import webnn
from conftest import run

FLOAT_TYPES = ["float32", "float16"]
ACTIVATIONS = {
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}
GRU_BLOCKS = {"zrn": {"z": 0, "r": 1, "n": 2}, "rzn": {"r": 0, "z": 1, "n": 2}}
LSTM_BLOCKS = {"iofg": {"i": 0, "o": 1, "f": 2, "g": 3}, "ifgo": {"i": 0, "f": 1, "g": 2, "o": 3}}

_names = itertools.count()


# ---------------------------------------------------------------- references
def _f64(a):
    return None if a is None else a.astype(np.float64)


def gru_cell_ref(x, weight, recurrent_weight, hidden, hidden_size, bias=None, recurrent_bias=None,
                 reset_after=True, layout="zrn", activations=("sigmoid", "tanh")):
    x, w, r, h = _f64(x), _f64(weight), _f64(recurrent_weight), _f64(hidden)
    H = hidden_size
    b = np.zeros(3 * H) if bias is None else _f64(bias)
    rb = np.zeros(3 * H) if recurrent_bias is None else _f64(recurrent_bias)
    f, g = ACTIVATIONS[activations[0]], ACTIVATIONS[activations[1]]
    block = GRU_BLOCKS[layout]

    def rows(m, gate):
        return m[block[gate] * H:(block[gate] + 1) * H]

    z = f(x @ rows(w, "z").T + h @ rows(r, "z").T + rows(b, "z") + rows(rb, "z"))
    rg = f(x @ rows(w, "r").T + h @ rows(r, "r").T + rows(b, "r") + rows(rb, "r"))
    if reset_after:
        n = g(x @ rows(w, "n").T + rows(b, "n") + rg * (h @ rows(r, "n").T + rows(rb, "n")))
    else:
        n = g(x @ rows(w, "n").T + rows(b, "n") + rows(rb, "n") + (rg * h) @ rows(r, "n").T)
    return z * h + (1 - z) * n


def lstm_cell_ref(x, weight, recurrent_weight, hidden, cell, hidden_size, bias=None, recurrent_bias=None,
                  peephole_weight=None, layout="iofg", activations=("sigmoid", "tanh", "tanh")):
    x, w, r, h, c = _f64(x), _f64(weight), _f64(recurrent_weight), _f64(hidden), _f64(cell)
    H = hidden_size
    b = np.zeros(4 * H) if bias is None else _f64(bias)
    rb = np.zeros(4 * H) if recurrent_bias is None else _f64(recurrent_bias)
    p = np.zeros(3 * H) if peephole_weight is None else _f64(peephole_weight)
    p_i, p_o, p_f = p[:H], p[H:2 * H], p[2 * H:]  # always i, o, f
    f0, f1, f2 = (ACTIVATIONS[a] for a in activations)
    block = LSTM_BLOCKS[layout]

    def pre(gate):
        s = slice(block[gate] * H, (block[gate] + 1) * H)
        return x @ w[s].T + h @ r[s].T + b[s] + rb[s]

    i = f0(pre("i") + p_i * c)
    f = f0(pre("f") + p_f * c)
    g = f1(pre("g"))
    o = f0(pre("o") + p_o * c)  # the previous cell state, as in the spec
    c_next = f * c + i * g
    return o * f2(c_next), c_next


def _sequence_ref(cell_fn, x, steps, directions, reverse_only, initial_states):
    """Runs `cell_fn(x_t, d, *states) -> states` over time; returns the final states and the
    hidden-state sequence indexed by the original time step."""
    sequence = np.zeros((steps, directions) + initial_states[0].shape[1:])
    finals = []
    for d in range(directions):
        states = [s[d].astype(np.float64) for s in initial_states]
        backward = reverse_only or d == 1
        for step in range(steps):
            t = steps - 1 - step if backward else step
            states = cell_fn(x[t], d, *states)
            sequence[t, d] = states[0]
        finals.append(states)
    return [np.stack([f[k] for f in finals]) for k in range(len(initial_states))], sequence


def gru_ref(x, weight, recurrent_weight, steps, hidden_size, bias=None, recurrent_bias=None,
            initial_hidden_state=None, reset_after=True, return_sequence=False, direction="forward",
            layout="zrn", activations=("sigmoid", "tanh")):
    D = 2 if direction == "both" else 1
    h0 = np.zeros((D, x.shape[1], hidden_size)) if initial_hidden_state is None else initial_hidden_state

    def cell(x_t, d, h):
        return [gru_cell_ref(x_t, weight[d], recurrent_weight[d], h, hidden_size,
                             None if bias is None else bias[d],
                             None if recurrent_bias is None else recurrent_bias[d],
                             reset_after, layout, activations)]

    (hidden,), sequence = _sequence_ref(cell, x, steps, D, direction == "backward", [h0])
    return [hidden, sequence] if return_sequence else [hidden]


def lstm_ref(x, weight, recurrent_weight, steps, hidden_size, bias=None, recurrent_bias=None,
             peephole_weight=None, initial_hidden_state=None, initial_cell_state=None, return_sequence=False,
             direction="forward", layout="iofg", activations=("sigmoid", "tanh", "tanh")):
    D = 2 if direction == "both" else 1
    zeros = np.zeros((D, x.shape[1], hidden_size))
    h0 = zeros if initial_hidden_state is None else initial_hidden_state
    c0 = zeros if initial_cell_state is None else initial_cell_state

    def cell(x_t, d, h, c):
        pick = lambda a: None if a is None else a[d]  # noqa: E731
        return list(lstm_cell_ref(x_t, weight[d], recurrent_weight[d], h, c, hidden_size, pick(bias),
                                  pick(recurrent_bias), pick(peephole_weight), layout, activations))

    (hidden, cell_state), sequence = _sequence_ref(cell, x, steps, D, direction == "backward", [h0, c0])
    return [hidden, cell_state, sequence] if return_sequence else [hidden, cell_state]


# ---------------------------------------------------------------- helpers
def _random(rng, shape, dtype, scale=1.0):
    return (rng.uniform(-scale, scale, size=shape)).astype(dtype)


def _assert_close(actual, expected, dtype):
    assert actual.dtype == np.dtype(dtype)
    assert actual.shape == expected.shape
    tol = 2e-5 if dtype == "float32" else 4e-3
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=tol, atol=tol)


class GraphInputs:
    """Collects graph inputs (fed at run time) and their NumPy values."""

    def __init__(self, builder):
        self.builder, self.feeds = builder, {}

    def input(self, array):
        name = f"in{next(_names)}"
        self.feeds[name] = array
        return self.builder.input(name, {"dataType": str(array.dtype), "shape": list(array.shape)})

    def run(self, outputs):
        results = run(self.builder, {f"out{i}": o for i, o in enumerate(outputs)}, self.feeds)
        return [results[f"out{i}"] for i in range(len(outputs))]


def _check_outputs(outputs, results, expected, dtype):
    assert len(outputs) == len(expected)
    for operand, actual, ref in zip(outputs, results, expected):
        assert operand.data_type == dtype and operand.shape == list(ref.shape)
        _assert_close(actual, ref, dtype)


# ---------------------------------------------------------------- gru
@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
@pytest.mark.parametrize("layout", ["zrn", "rzn"])
@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_all_options(builder, dtype, direction, layout, reset_after):
    rng = np.random.default_rng(10)
    steps, B, I, H = 3, 2, 3, 4
    D = 2 if direction == "both" else 1
    arrays = {
        "weight": _random(rng, [D, 3 * H, I], dtype), "recurrent_weight": _random(rng, [D, 3 * H, H], dtype),
        "bias": _random(rng, [D, 3 * H], dtype), "recurrent_bias": _random(rng, [D, 3 * H], dtype),
        "initial_hidden_state": _random(rng, [D, B, H], dtype),
    }
    x = _random(rng, [steps, B, I], dtype)
    g = GraphInputs(builder)
    activations = ["sigmoid", "relu"] if layout == "rzn" else ["tanh", "sigmoid"]
    outputs = builder.gru(g.input(x), g.input(arrays["weight"]), g.input(arrays["recurrent_weight"]), steps, H,
                          bias=g.input(arrays["bias"]), recurrent_bias=g.input(arrays["recurrent_bias"]),
                          initial_hidden_state=g.input(arrays["initial_hidden_state"]), reset_after=reset_after,
                          return_sequence=True, direction=direction, layout=layout, activations=activations)
    expected = gru_ref(x, steps=steps, hidden_size=H, reset_after=reset_after, return_sequence=True,
                       direction=direction, layout=layout, activations=activations, **arrays)
    _check_outputs(outputs, g.run(outputs), expected, dtype)


@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
def test_gru_defaults(builder, direction):
    rng = np.random.default_rng(11)
    steps, B, I, H = 4, 1, 2, 3
    D = 2 if direction == "both" else 1
    x = _random(rng, [steps, B, I], "float32")
    w, r = _random(rng, [D, 3 * H, I], "float32"), _random(rng, [D, 3 * H, H], "float32")
    outputs = builder.gru(builder.constant(x), builder.constant(w), builder.constant(r), steps, H,
                          {"direction": direction})
    assert isinstance(outputs, list) and len(outputs) == 1
    _check_outputs(outputs, [run(builder, {"h": outputs[0]})["h"]],
                   gru_ref(x, w, r, steps, H, direction=direction), "float32")


def test_gru_batch_parallel(builder):
    # Enough batch rows to split across threads; every row must recur independently.
    rng = np.random.default_rng(12)
    steps, B, I, H = 5, 37, 8, 16
    arrays = {"weight": _random(rng, [2, 3 * H, I], "float32"),
              "recurrent_weight": _random(rng, [2, 3 * H, H], "float32"),
              "bias": _random(rng, [2, 3 * H], "float32")}
    x = _random(rng, [steps, B, I], "float32")
    g = GraphInputs(builder)
    outputs = builder.gru(g.input(x), g.input(arrays["weight"]), g.input(arrays["recurrent_weight"]), steps, H,
                          bias=g.input(arrays["bias"]), direction="both", return_sequence=True, reset_after=False)
    expected = gru_ref(x, steps=steps, hidden_size=H, direction="both", return_sequence=True, reset_after=False,
                       **arrays)
    _check_outputs(outputs, g.run(outputs), expected, "float32")


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("layout", ["zrn", "rzn"])
@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("with_biases", [True, False])
def test_gru_cell(builder, dtype, layout, reset_after, with_biases):
    rng = np.random.default_rng(13)
    B, I, H = 3, 5, 2
    x, h = _random(rng, [B, I], dtype), _random(rng, [B, H], dtype)
    w, r = _random(rng, [3 * H, I], dtype), _random(rng, [3 * H, H], dtype)
    b, rb = _random(rng, [3 * H], dtype), _random(rng, [3 * H], dtype)
    g = GraphInputs(builder)
    options = {"reset_after": reset_after, "layout": layout, "activations": ["relu", "tanh"]}
    if with_biases:
        options.update(bias=g.input(b), recurrent_bias=g.input(rb))
    out = builder.gru_cell(g.input(x), g.input(w), g.input(r), g.input(h), H, **options)
    assert isinstance(out, webnn.MLOperand)
    expected = gru_cell_ref(x, w, r, h, H, b if with_biases else None, rb if with_biases else None, reset_after,
                            layout, ("relu", "tanh"))
    _check_outputs([out], g.run([out]), [expected], dtype)


def test_gru_cell_defaults_size_one(builder):
    x, h = np.array([[0.5]], np.float32), np.array([[-0.25]], np.float32)
    w, r = np.array([[1.0], [-2.0], [0.5]], np.float32), np.array([[0.3], [0.7], [-1.1]], np.float32)
    out = builder.gruCell(builder.constant(x), builder.constant(w), builder.constant(r), builder.constant(h), 1)
    _check_outputs([out], [run(builder, {"o": out})["o"]], [gru_cell_ref(x, w, r, h, 1)], "float32")


# ---------------------------------------------------------------- lstm
@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
def test_lstm_all_options(builder, dtype, direction, layout):
    rng = np.random.default_rng(20)
    steps, B, I, H = 3, 2, 3, 4
    D = 2 if direction == "both" else 1
    arrays = {
        "weight": _random(rng, [D, 4 * H, I], dtype), "recurrent_weight": _random(rng, [D, 4 * H, H], dtype),
        "bias": _random(rng, [D, 4 * H], dtype), "recurrent_bias": _random(rng, [D, 4 * H], dtype),
        "peephole_weight": _random(rng, [D, 3 * H], dtype),
        "initial_hidden_state": _random(rng, [D, B, H], dtype),
        "initial_cell_state": _random(rng, [D, B, H], dtype),
    }
    x = _random(rng, [steps, B, I], dtype)
    g = GraphInputs(builder)
    activations = ["sigmoid", "relu", "tanh"] if layout == "ifgo" else ["tanh", "sigmoid", "relu"]
    outputs = builder.lstm(g.input(x), g.input(arrays["weight"]), g.input(arrays["recurrent_weight"]), steps, H,
                           bias=g.input(arrays["bias"]), recurrent_bias=g.input(arrays["recurrent_bias"]),
                           peephole_weight=g.input(arrays["peephole_weight"]),
                           initial_hidden_state=g.input(arrays["initial_hidden_state"]),
                           initial_cell_state=g.input(arrays["initial_cell_state"]), return_sequence=True,
                           direction=direction, layout=layout, activations=activations)
    expected = lstm_ref(x, steps=steps, hidden_size=H, return_sequence=True, direction=direction, layout=layout,
                        activations=activations, **arrays)
    _check_outputs(outputs, g.run(outputs), expected, dtype)


@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
@pytest.mark.parametrize("option", [None, "bias", "recurrent_bias", "peephole_weight", "initial_hidden_state",
                                    "initial_cell_state"])
def test_lstm_single_options(builder, direction, option):
    rng = np.random.default_rng(21)
    steps, B, I, H = 2, 3, 2, 3
    D = 2 if direction == "both" else 1
    shapes = {"bias": [D, 4 * H], "recurrent_bias": [D, 4 * H], "peephole_weight": [D, 3 * H],
              "initial_hidden_state": [D, B, H], "initial_cell_state": [D, B, H]}
    x = _random(rng, [steps, B, I], "float32")
    w, r = _random(rng, [D, 4 * H, I], "float32"), _random(rng, [D, 4 * H, H], "float32")
    g = GraphInputs(builder)
    options = {"direction": direction}
    ref_options = dict(options)
    if option:
        value = _random(rng, shapes[option], "float32", scale=2.0)
        options[option], ref_options[option] = g.input(value), value
    outputs = builder.lstm(g.input(x), g.input(w), g.input(r), steps, H, **options)
    assert len(outputs) == 2
    _check_outputs(outputs, g.run(outputs), lstm_ref(x, w, r, steps, H, **ref_options), "float32")


def test_lstm_peephole_uses_previous_cell_state(builder):
    # With zero weights every gate sees only its peephole term, so the output gate exposes which
    # cell state it used: o = sigmoid(p_o * c_prev), not sigmoid(p_o * c_next).
    H = 1
    x = np.zeros([1, 1, 1], np.float32)
    w, r = np.zeros([1, 4, 1], np.float32), np.zeros([1, 4, 1], np.float32)
    bias = np.array([[0, 0, 0, 0.5]], np.float32)  # g = tanh(0.5) so the cell state changes
    peephole = np.array([[0, 3, 0]], np.float32)
    c0 = np.array([[[-1.0]]], np.float32)
    outputs = builder.lstm(builder.constant(x), builder.constant(w), builder.constant(r), 1, H,
                           bias=builder.constant(bias), peephole_weight=builder.constant(peephole),
                           initial_cell_state=builder.constant(c0))
    results = run(builder, {"h": outputs[0], "c": outputs[1]})
    hidden, cell = results["h"], results["c"]
    c_next = 0.5 * -1.0 + 0.5 * np.tanh(0.5)
    expected_h = 1 / (1 + np.exp(-3.0 * -1.0)) * np.tanh(c_next)
    np.testing.assert_allclose(hidden.reshape(-1), [expected_h], rtol=1e-5)
    np.testing.assert_allclose(cell.reshape(-1), [c_next], rtol=1e-5)


def test_lstm_batch_parallel(builder):
    rng = np.random.default_rng(22)
    steps, B, I, H = 4, 41, 6, 12
    arrays = {"weight": _random(rng, [2, 4 * H, I], "float32"),
              "recurrent_weight": _random(rng, [2, 4 * H, H], "float32"),
              "peephole_weight": _random(rng, [2, 3 * H], "float32")}
    x = _random(rng, [steps, B, I], "float32")
    g = GraphInputs(builder)
    outputs = builder.lstm(g.input(x), g.input(arrays["weight"]), g.input(arrays["recurrent_weight"]), steps, H,
                           peephole_weight=g.input(arrays["peephole_weight"]), direction="both",
                           return_sequence=True)
    expected = lstm_ref(x, steps=steps, hidden_size=H, direction="both", return_sequence=True, **arrays)
    _check_outputs(outputs, g.run(outputs), expected, "float32")


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
@pytest.mark.parametrize("with_options", [True, False])
def test_lstm_cell(builder, dtype, layout, with_options):
    rng = np.random.default_rng(23)
    B, I, H = 2, 3, 5
    x, h, c = _random(rng, [B, I], dtype), _random(rng, [B, H], dtype), _random(rng, [B, H], dtype)
    w, r = _random(rng, [4 * H, I], dtype), _random(rng, [4 * H, H], dtype)
    b, rb, p = _random(rng, [4 * H], dtype), _random(rng, [4 * H], dtype), _random(rng, [3 * H], dtype)
    g = GraphInputs(builder)
    options, ref_options = {"layout": layout}, {"layout": layout}
    if with_options:
        options.update(bias=g.input(b), recurrent_bias=g.input(rb), peephole_weight=g.input(p),
                       activations=["relu", "sigmoid", "tanh"])
        ref_options.update(bias=b, recurrent_bias=rb, peephole_weight=p, activations=("relu", "sigmoid", "tanh"))
    outputs = builder.lstm_cell(g.input(x), g.input(w), g.input(r), g.input(h), g.input(c), H, **options)
    assert isinstance(outputs, list) and len(outputs) == 2
    expected = lstm_cell_ref(x, w, r, h, c, H, **ref_options)
    _check_outputs(outputs, g.run(outputs), list(expected), dtype)


def test_recurrent_nan_propagates(builder):
    x = np.array([[np.nan, 1.0]], np.float32)
    h = np.zeros([1, 2], np.float32)
    w, r = np.ones([6, 2], np.float32), np.ones([6, 2], np.float32)
    out = builder.gru_cell(builder.constant(x), builder.constant(w), builder.constant(r), builder.constant(h), 2)
    assert np.isnan(run(builder, {"o": out})["o"]).all()


# ---------------------------------------------------------------- limits and validation
@pytest.mark.parametrize("op,members", [
    ("gru", {"input": 3, "weight": 3, "recurrentWeight": 3, "bias": 2, "recurrentBias": 2,
             "initialHiddenState": 3, "output0": 3, "output1": 4}),
    ("gruCell", {"input": 2, "weight": 2, "recurrentWeight": 2, "hiddenState": 2, "bias": 1, "recurrentBias": 1,
                 "output": 2}),
    ("lstm", {"input": 3, "weight": 3, "recurrentWeight": 3, "bias": 2, "recurrentBias": 2, "peepholeWeight": 2,
              "initialHiddenState": 3, "initialCellState": 3, "output0": 3, "output1": 3, "output2": 4}),
    ("lstmCell", {"input": 2, "weight": 2, "recurrentWeight": 2, "hiddenState": 2, "cellState": 2, "bias": 1,
                  "recurrentBias": 1, "peepholeWeight": 1, "output0": 2, "output1": 2}),
])
def test_recurrent_limits(context, op, members):
    limits = context.op_support_limits()[op]
    assert set(limits) == set(members)
    for name, rank in members.items():
        assert sorted(limits[name]["dataTypes"]) == ["float16", "float32"]
        assert limits[name]["rankRange"] == {"min": rank, "max": rank}


def _operand(builder, shape, dtype="float32"):
    return builder.input(f"v{next(_names)}", {"dataType": dtype, "shape": shape})


def _gru_args(builder, steps=2, B=3, I=4, H=5, D=1, **shapes):
    """Valid gru arguments (steps, B, I, H, D) with some operand shapes overridden."""
    default = {"input": [steps, B, I], "weight": [D, 3 * H, I], "recurrent_weight": [D, 3 * H, H]}
    default.update(shapes)
    return [_operand(builder, default[k]) for k in ("input", "weight", "recurrent_weight")]


@pytest.mark.parametrize("case", [
    dict(shapes={"weight": [1, 14, 4]}),
    dict(shapes={"weight": [2, 15, 4]}),
    dict(shapes={"weight": [1, 15, 3]}),
    dict(shapes={"recurrent_weight": [1, 15, 4]}),
    dict(shapes={"recurrent_weight": [1, 15]}),                  # rank
    dict(steps=3),                                               # input.shape[0] != steps
    dict(steps=0),
    dict(hidden=0),
    dict(hidden=2**29, shapes={"weight": [1, 3, 4], "recurrent_weight": [1, 3, 3]}),  # 6H too large
    dict(options={"bias": [1, 14]}),
    dict(options={"bias": [15]}),                                # rank
    dict(options={"recurrent_bias": [2, 15]}),
    dict(options={"initial_hidden_state": [1, 3, 4]}),
    dict(options={"initial_hidden_state": [2, 3, 5]}),
    dict(options={"direction": "both"}),                         # weights have D = 1
    dict(options={"activations": ["sigmoid"]}),
    dict(options={"activations": ["sigmoid", "tanh", "tanh"]}),
    dict(options={"activations": []}),
    dict(options={"activations": ["sigmoid", "gelu"]}),
    dict(options={"layout": "iofg"}),
    dict(options={"direction": "forwards"}),
    dict(options={"bias_dtype": "float16"}),
    dict(dtype="int32"),
])
def test_gru_invalid(builder, case):
    dtype = case.get("dtype", "float32")
    steps, H = 2, case.get("hidden", 5)
    shapes = {"input": [steps, 3, 4], "weight": [1, 15, 4], "recurrent_weight": [1, 15, 5]}
    shapes.update(case.get("shapes", {}))
    args = [_operand(builder, shapes[k], dtype) for k in ("input", "weight", "recurrent_weight")]
    options = {}
    for key, value in case.get("options", {}).items():
        if key == "bias_dtype":
            options["bias"] = _operand(builder, [1, 15], value)
        elif isinstance(value, list) and value and isinstance(value[0], int):
            options[key] = _operand(builder, value, dtype)
        else:
            options[key] = value
    with pytest.raises(TypeError, match=r"\[lbl\] gru:"):
        builder.gru(*args, case.get("steps", steps), H, label="lbl", **options)


@pytest.mark.parametrize("case", [
    dict(shapes={"weight": [2, 16, 4]}),
    dict(shapes={"recurrent_weight": [1, 16, 3]}),
    dict(steps=3),
    dict(steps=0),
    dict(hidden=0),
    dict(hidden=2**28, shapes={"weight": [1, 4, 4], "recurrent_weight": [1, 4, 4]}),  # 8H too large
    dict(options={"bias": [1, 15]}),
    dict(options={"recurrent_bias": [1, 16, 1]}),
    dict(options={"peephole_weight": [1, 16]}),
    dict(options={"peephole_weight": [12]}),
    dict(options={"initial_hidden_state": [1, 2, 4]}),
    dict(options={"initial_cell_state": [1, 3, 5]}),
    dict(options={"activations": ["sigmoid", "tanh"]}),
    dict(options={"layout": "zrn"}),
    dict(options={"peephole_dtype": "float16"}),
])
def test_lstm_invalid(builder, case):
    steps, H = 2, case.get("hidden", 4)
    shapes = {"input": [steps, 3, 4], "weight": [1, 16, 4], "recurrent_weight": [1, 16, 4]}
    shapes.update(case.get("shapes", {}))
    args = [_operand(builder, shapes[k]) for k in ("input", "weight", "recurrent_weight")]
    options = {}
    for key, value in case.get("options", {}).items():
        if key == "peephole_dtype":
            options["peephole_weight"] = _operand(builder, [1, 12], value)
        elif isinstance(value, list) and value and isinstance(value[0], int):
            options[key] = _operand(builder, value)
        else:
            options[key] = value
    with pytest.raises(TypeError, match=r"\[lbl\] lstm:"):
        builder.lstm(*args, case.get("steps", steps), H, label="lbl", **options)


@pytest.mark.parametrize("case", [
    {"weight": [6, 3]},
    {"weight": [1, 6, 4]},
    {"recurrent_weight": [6, 3]},
    {"hidden_state": [2, 3]},
    {"hidden_state": [3, 2, 1]},
    {"bias": [5]},
    {"recurrent_bias": [1, 6]},
    {"activations": ["tanh"]},
    {"hidden_size": 3},
    {"hidden_state_dtype": "float16"},
])
def test_gru_cell_invalid(builder, case):
    shapes = {"input": [3, 4], "weight": [6, 4], "recurrent_weight": [6, 2], "hidden_state": [3, 2]}
    shapes.update({k: v for k, v in case.items() if k in shapes})
    dtypes = {"hidden_state": case.get("hidden_state_dtype", "float32")}
    args = [_operand(builder, shapes[k], dtypes.get(k, "float32"))
            for k in ("input", "weight", "recurrent_weight", "hidden_state")]
    options = {k: (_operand(builder, v) if k.endswith("bias") else v) for k, v in case.items()
               if k in ("bias", "recurrent_bias", "activations")}
    with pytest.raises(TypeError, match=r"\[lbl\] gruCell:"):
        builder.gru_cell(*args, case.get("hidden_size", 2), label="lbl", **options)


@pytest.mark.parametrize("case", [
    {"weight": [7, 4]},
    {"recurrent_weight": [8, 3]},
    {"hidden_state": [2, 2]},
    {"cell_state": [3, 1]},
    {"bias": [7]},
    {"recurrent_bias": [8, 1]},
    {"peephole_weight": [8]},
    {"activations": ["tanh", "tanh"]},
    {"layout": "rzn"},
    {"hidden_size": 3},
    {"cell_state_dtype": "float16"},
])
def test_lstm_cell_invalid(builder, case):
    shapes = {"input": [3, 4], "weight": [8, 4], "recurrent_weight": [8, 2], "hidden_state": [3, 2],
              "cell_state": [3, 2]}
    shapes.update({k: v for k, v in case.items() if k in shapes})
    dtypes = {"cell_state": case.get("cell_state_dtype", "float32")}
    args = [_operand(builder, shapes[k], dtypes.get(k, "float32"))
            for k in ("input", "weight", "recurrent_weight", "hidden_state", "cell_state")]
    options = {k: (_operand(builder, v) if k in ("bias", "recurrent_bias", "peephole_weight") else v)
               for k, v in case.items() if k in ("bias", "recurrent_bias", "peephole_weight", "activations",
                                                  "layout")}
    with pytest.raises(TypeError, match=r"\[lbl\] lstmCell:"):
        builder.lstm_cell(*args, case.get("hidden_size", 2), label="lbl", **options)


def test_recurrent_operand_from_another_builder(builder, context):
    other = webnn.MLGraphBuilder(context)
    x, w, r = _operand(builder, [2, 3, 4]), _operand(builder, [1, 15, 4]), _operand(builder, [1, 15, 5])
    with pytest.raises(TypeError, match=r"\[lbl\]"):
        builder.gru(x, w, r, 2, 5, bias=_operand(other, [1, 15]), label="lbl")
