"""LSTM, GRU and RNN.

LSTM and GRU map onto WebNN ``lstm`` and ``gru``: ONNX's gate orders (LSTM i, o, f, c; GRU z, r, h)
are WebNN's default layouts "iofg" and "zrn", ``B`` splits into ``bias`` and ``recurrentBias``,
``linear_before_reset`` is ``resetAfter``, and ONNX's Y [steps, directions, batch, hidden] is WebNN's
sequence output as it is. Where WebNN's ops cannot say what the node says, the recurrence is unrolled
over the sequence (its length is static here) with matmul and element-wise ops: RNN (WebNN has no
plain recurrent op), a ``clip``, activations that differ between the two directions, and an LSTM
output-gate peephole (ONNX applies Po to the new cell state, WebNN's lstm to the previous one).
"""
import numpy as np

from .._registry import attributes, handles, is_float, reshape

# ONNX activation names (case-insensitive here, as in ONNX Runtime) -> WebNN recurrent activations.
_ACTIVATIONS = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh"}
_DIRECTIONS = {"forward": "forward", "reverse": "backward", "bidirectional": "both"}


# ---------------------------------------------------------------- values that are arrays or operands
def _slice(cv, value, starts, sizes):
    if isinstance(value, np.ndarray):
        return value[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]
    if list(starts) == [0] * len(starts) and list(sizes) == list(value.shape):
        return value
    return cv.op("slice", value, [int(s) for s in starts], [int(n) for n in sizes])


def _transpose(cv, value, permutation):
    if isinstance(value, np.ndarray):
        return value.transpose(permutation)
    return cv.op("transpose", value, permutation=list(permutation))


def _add(cv, a, b, data_type):
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a + b
    return cv.op("add", cv.operand(a, data_type), cv.operand(b, data_type))


def _concat(cv, parts, data_type):
    """The 1-D values concatenated."""
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)
    return cv.op("concat", [cv.operand(p, data_type) for p in parts], 0)


class _Recurrence:
    """What LSTM, GRU and RNN nodes share: X (time-major), the sizes, direction, layout,
    activations per direction, clip, and the check of sequence_lens."""

    def __init__(self, cv, node, gates, default_activations):
        self.cv, self.node, self.gates = cv, node, gates
        attrs = self.attrs = attributes(node)
        direction = attrs.get("direction", "forward")
        if direction not in _DIRECTIONS:
            raise TypeError(f"{cv.where()}: direction '{direction}' is not forward, reverse or bidirectional")
        self.direction = direction
        self.directions = 2 if direction == "bidirectional" else 1
        self.layout = int(attrs.get("layout", 0))
        if self.layout not in (0, 1):
            raise TypeError(f"{cv.where()}: layout {self.layout} is not 0 or 1")

        x = cv.operand(node.input[0])
        if not is_float(x.data_type):
            raise cv.unsupported(f"X is {x.data_type}; WebNN recurrent networks take float32 or float16")
        if len(x.shape) != 3:
            raise TypeError(f"{cv.where()}: X must have rank 3, got shape {list(x.shape)}")
        self.dtype = x.data_type
        self.x = cv.op("transpose", x, permutation=[1, 0, 2]) if self.layout else x  # [steps, batch, input]
        self.steps, self.batch, self.input_size = (int(d) for d in self.x.shape)

        r_shape = cv.shape(node.input[2])
        self.hidden = int(attrs.get("hidden_size", r_shape[-1]))
        D, GH, H = self.directions, gates * self.hidden, self.hidden
        for index, name, expected in ((1, "W", [D, GH, self.input_size]), (2, "R", [D, GH, H])):
            if cv.shape(node.input[index]) != expected:
                raise TypeError(f"{cv.where()}: {name} must have shape {expected} (directions, {gates} x hidden_size, "
                                f"{'input_size' if index == 1 else 'hidden_size'}), got {cv.shape(node.input[index])}")
        if cv.has(node, 3) and cv.shape(node.input[3]) != [D, 2 * GH]:
            raise TypeError(f"{cv.where()}: B must have shape {[D, 2 * GH]}, got {cv.shape(node.input[3])}")

        self.activations = self._activations(default_activations)
        clip = attrs.get("clip")
        self.clip = None if clip is None else float(clip)
        self._check_sequence_lens()

    def _activations(self, default):
        cv, count = self.cv, len(default)
        names = self.attrs.get("activations")
        names = list(default) * self.directions if names is None else \
            [n.decode() if isinstance(n, bytes) else str(n) for n in names]
        if len(names) == count and self.directions == 2:
            names = names * 2  # one set given for both directions
        if len(names) != count * self.directions:
            raise TypeError(f"{cv.where()}: activations must have {count * self.directions} names "
                            f"({count} per direction), got {len(names)}")
        for name in names:
            if name.lower() not in _ACTIVATIONS:
                raise cv.unsupported(f"activation '{name}' is not supported (WebNN recurrent networks take "
                                     "Relu, Sigmoid and Tanh)")
        webnn_names = [_ACTIVATIONS[n.lower()] for n in names]
        return [webnn_names[d * count:(d + 1) * count] for d in range(self.directions)]

    def _check_sequence_lens(self):
        cv, node = self.cv, self.node
        if not cv.has(node, 4):
            return
        lengths = np.asarray(cv.const(node.input[4], "sequence_lens")).reshape(-1)
        if lengths.size and not np.all(lengths == self.steps):
            raise cv.unsupported(f"sequence_lens {[int(n) for n in lengths]} are not all the sequence length "
                                 f"{self.steps}; WebNN recurrent networks run every sequence to its end")

    # ------------------------------------------------------------ inputs
    def same_activations(self):
        return all(a == self.activations[0] for a in self.activations)

    def wants(self, index):
        return index < len(self.node.output) and self.node.output[index] != ""

    def value(self, index):
        """Input ``index`` (an array or an operand), or None when absent."""
        return self.cv.value(self.node.input[index]) if self.cv.has(self.node, index) else None

    def operand(self, value):
        return None if value is None else self.cv.operand(value, self.dtype)

    def biases(self):
        """(Wb, Rb), each [directions, gates * hidden], or (None, None)."""
        b = self.value(3)
        if b is None:
            return None, None
        D, GH = self.directions, self.gates * self.hidden
        return _slice(self.cv, b, [0, 0], [D, GH]), _slice(self.cv, b, [0, GH], [D, GH])

    def state(self, index):
        """An initial state input as [directions, batch, hidden], or None."""
        value = self.value(index)
        if value is not None and self.layout:
            value = _transpose(self.cv, value, [1, 0, 2])
        return value

    # ------------------------------------------------------------ outputs
    def outputs(self, sequence, *states):
        """ONNX's (Y, Y_h[, Y_c]) from a [steps, directions, batch, hidden] sequence (None when
        not requested) and [directions, batch, hidden] final states."""
        cv = self.cv
        results = [sequence] + list(states)
        if self.layout:  # batch-major: Y [batch, steps, directions, hidden], states [batch, directions, hidden]
            results = [None if value is None else cv.op("transpose", value, permutation=perm)
                       for value, perm in zip(results, [[2, 0, 1, 3]] + [[1, 0, 2]] * len(states))]
        return [value if self.wants(i) else None for i, value in enumerate(results)]


# ---------------------------------------------------------------- LSTM
@handles("LSTM")
def lstm(cv, node, opset):
    rec = _Recurrence(cv, node, 4, ["sigmoid", "tanh", "tanh"])
    if int(rec.attrs.get("input_forget", 0)):
        raise cv.unsupported("input_forget=1 (the forget gate coupled to the input gate) is not supported")
    H = rec.hidden
    peephole = rec.value(7)
    if peephole is not None and cv.shape(node.input[7]) != [rec.directions, 3 * H]:
        raise TypeError(f"{cv.where()}: P must have shape {[rec.directions, 3 * H]}, got {cv.shape(node.input[7])}")
    # WebNN's output gate peeks at the previous cell state, ONNX's at the new one: the same only when
    # Po is zero.
    output_peephole_free = peephole is None or (isinstance(peephole, np.ndarray) and not np.any(peephole[:, H:2 * H]))
    if rec.clip is not None or not rec.same_activations() or not output_peephole_free:
        return _unroll(rec, "lstm", peephole=peephole)

    bias, recurrent_bias = rec.biases()
    options = {"direction": _DIRECTIONS[rec.direction], "layout": "iofg", "activations": rec.activations[0],
               "returnSequence": rec.wants(0)}
    for key, value in (("bias", bias), ("recurrentBias", recurrent_bias), ("peepholeWeight", peephole),
                       ("initialHiddenState", rec.state(5)), ("initialCellState", rec.state(6))):
        if value is not None:
            options[key] = rec.operand(value)
    results = cv.op("lstm", rec.x, rec.operand(rec.value(1)), rec.operand(rec.value(2)), rec.steps, H, **options)
    return rec.outputs(results[2] if rec.wants(0) else None, results[0], results[1])


# ---------------------------------------------------------------- GRU
@handles("GRU")
def gru(cv, node, opset):
    rec = _Recurrence(cv, node, 3, ["sigmoid", "tanh"])
    reset_after = bool(int(rec.attrs.get("linear_before_reset", 0)))
    if rec.clip is not None or not rec.same_activations():
        return _unroll(rec, "gru", reset_after=reset_after)

    bias, recurrent_bias = rec.biases()
    options = {"direction": _DIRECTIONS[rec.direction], "layout": "zrn", "activations": rec.activations[0],
               "resetAfter": reset_after, "returnSequence": rec.wants(0)}
    for key, value in (("bias", bias), ("recurrentBias", recurrent_bias), ("initialHiddenState", rec.state(5))):
        if value is not None:
            options[key] = rec.operand(value)
    results = cv.op("gru", rec.x, rec.operand(rec.value(1)), rec.operand(rec.value(2)), rec.steps, rec.hidden,
                    **options)
    return rec.outputs(results[1] if rec.wants(0) else None, results[0])


# ---------------------------------------------------------------- RNN
@handles("RNN")
def rnn(cv, node, opset):
    rec = _Recurrence(cv, node, 1, ["tanh"])
    return _unroll(rec, "rnn")


# ---------------------------------------------------------------- the unrolled recurrence
def _unroll(rec, cell, peephole=None, reset_after=False):
    """The node's equations step by step (ONNX's operator text, as ONNX Runtime computes them):
    RNN  h = f(x Wᵀ + h Rᵀ + Wb + Rb)
    GRU  z = f(x Wzᵀ + h Rzᵀ + Wbz + Rbz), r likewise, n = g(x Whᵀ + (r h) Rhᵀ + Rbh + Wbh), or with
         linear_before_reset g(x Whᵀ + r (h Rhᵀ + Rbh) + Wbh); h = (1 - z) n + z h
    LSTM i = f(x Wiᵀ + h Riᵀ + Pi c + Wbi + Rbi), f likewise with Pf, c' = f c + i g(x Wcᵀ + h Rcᵀ + ...),
         o = f(x Woᵀ + h Roᵀ + Po c' + Wbo + Rbo), h = o h(c')
    with every activation's input clipped to [-clip, clip] when clip is set."""
    cv, dtype = rec.cv, np.dtype(rec.dtype)
    S, B, I, H, G, D = rec.steps, rec.batch, rec.input_size, rec.hidden, rec.gates, rec.directions
    GH = G * H
    weight, recurrent_weight = rec.value(1), rec.value(2)
    bias, recurrent_bias = rec.biases()
    initial_h = rec.state(5)
    initial_c = rec.state(6) if cell == "lstm" else None
    x2d = reshape(cv, rec.x, [S * B, I])

    def direction(value, d, shape):
        """value[d] (a [D, ...] array or operand) with the leading dim dropped."""
        if value is None:
            return None
        return reshape(cv, _slice(cv, value, [d] + [0] * len(shape), [1] + list(shape)), shape)

    def clip(x):
        return x if rec.clip is None else cv.op("clamp", x, minValue=-rec.clip, maxValue=rec.clip)

    def activate(name, x):
        return cv.op(name, clip(x))

    def piece(value, start, size):  # columns [start, start + size) of a [rows, columns] value
        return _slice(cv, value, [0, start], [int(value.shape[0]), size])

    sequences, final_h, final_c = [], [], []
    for d in range(D):
        reverse = rec.direction == "reverse" or d == 1
        acts = rec.activations[d]
        w_t = rec.operand(_transpose(cv, direction(weight, d, [GH, I]), [1, 0]))          # [I, GH]
        r_t = _transpose(cv, direction(recurrent_weight, d, [GH, H]), [1, 0])             # [H, GH]
        wb, rb = direction(bias, d, [GH]), direction(recurrent_bias, d, [GH])
        h_bias = None  # GRU with linear_before_reset: Rbh stays inside r (h Rhᵀ + Rbh)
        if wb is None:
            x_bias = None
        elif cell == "gru" and reset_after:
            x_bias = _add(cv, wb, _concat(cv, [_slice(cv, rb, [0], [2 * H]), np.zeros(H, dtype)], rec.dtype), rec.dtype)
            h_bias = rec.operand(_slice(cv, rb, [2 * H], [H]))
        else:
            x_bias = _add(cv, wb, rb, rec.dtype)
        # x Wᵀ (+ biases) for every step at once, then one [B, GH] slice per step.
        projected = cv.op("matmul", x2d, w_t)
        if x_bias is not None:
            projected = cv.op("add", projected, rec.operand(x_bias))
        steps_x = [reshape(cv, part, [B, GH]) for part in
                   (cv.op("split", reshape(cv, projected, [S, B, GH]), S, axis=0) if S > 1 else
                    [projected])]
        if cell == "gru" and not reset_after:
            r_zr, r_h = rec.operand(piece(r_t, 0, 2 * H)), rec.operand(piece(r_t, 2 * H, H))
        else:
            r_t = rec.operand(r_t)
        if cell == "lstm" and peephole is not None:
            p = direction(peephole, d, [3 * H])
            p_i, p_o, p_f = (rec.operand(_slice(cv, p, [k * H], [H])) for k in range(3))

        h = rec.operand(direction(initial_h, d, [B, H]) if initial_h is not None else np.zeros((B, H), dtype))
        if cell == "lstm":
            c = rec.operand(direction(initial_c, d, [B, H]) if initial_c is not None else np.zeros((B, H), dtype))
        outputs = [None] * S
        for t in (range(S - 1, -1, -1) if reverse else range(S)):
            gx = steps_x[t]
            if cell == "rnn":
                h = activate(acts[0], cv.op("add", gx, cv.op("matmul", h, r_t)))
            elif cell == "gru":
                xz, xr, xh = cv.op("split", gx, 3, axis=1)
                if reset_after:
                    hz, hr, hh = cv.op("split", cv.op("matmul", h, r_t), 3, axis=1)
                else:
                    hz, hr = cv.op("split", cv.op("matmul", h, r_zr), 2, axis=1)
                z = activate(acts[0], cv.op("add", xz, hz))
                r = activate(acts[0], cv.op("add", xr, hr))
                if reset_after:
                    if h_bias is not None:
                        hh = cv.op("add", hh, h_bias)
                    n = activate(acts[1], cv.op("add", xh, cv.op("mul", r, hh)))
                else:
                    n = activate(acts[1], cv.op("add", xh, cv.op("matmul", cv.op("mul", r, h), r_h)))
                h = cv.op("add", n, cv.op("mul", z, cv.op("sub", h, n)))  # (1 - z) n + z h
            else:
                gi, go, gf, gc = cv.op("split", cv.op("add", gx, cv.op("matmul", h, r_t)), 4, axis=1)
                if peephole is not None:
                    gi = cv.op("add", gi, cv.op("mul", c, p_i))
                    gf = cv.op("add", gf, cv.op("mul", c, p_f))
                i = activate(acts[0], gi)
                f = activate(acts[0], gf)
                c = cv.op("add", cv.op("mul", f, c), cv.op("mul", i, activate(acts[1], gc)))
                if peephole is not None:
                    go = cv.op("add", go, cv.op("mul", c, p_o))
                h = cv.op("mul", activate(acts[0], go), cv.op(acts[2], c))  # ONNX does not clip h's input
            outputs[t] = h
        if rec.wants(0):
            sequence = [reshape(cv, o, [1, 1, B, H]) for o in outputs]
            sequences.append(cv.op("concat", sequence, 0) if S > 1 else sequence[0])
        final_h.append(reshape(cv, h, [1, B, H]))
        if cell == "lstm":
            final_c.append(reshape(cv, c, [1, B, H]))

    def join(parts, axis):
        return parts[0] if len(parts) == 1 else cv.op("concat", parts, axis)

    sequence = join(sequences, 1) if sequences else None
    if cell == "lstm":
        return rec.outputs(sequence, join(final_h, 0), join(final_c, 0))
    return rec.outputs(sequence, join(final_h, 0))


# ---------------------------------------------------------------- com.microsoft DynamicQuantizeLSTM
def _dequantized_gates(cv, node, index, scale_index, what):
    """DynamicQuantizeLSTM's W ([directions, input_size, 4 x hidden]) or R ([directions, hidden,
    4 x hidden]), uint8 or int8 with scale and zero point per direction (or per direction and gate
    column), dequantized as DequantizeLinear does (``dequantize_array``'s arithmetic) and transposed
    to LSTM's [directions, 4 x hidden, input_size or hidden]."""
    quantized = cv.const(node.input[index], what)
    scale = np.asarray(cv.const(node.input[scale_index], f"{what}_scale"))
    zero = np.asarray(cv.const(node.input[scale_index + 1], f"{what}_zero_point"))
    if quantized.dtype.name not in ("uint8", "int8") or scale.dtype != np.float32 or zero.dtype != quantized.dtype:
        raise cv.unsupported(f"{what} is {quantized.dtype.name} with a {scale.dtype.name} scale and a "
                             f"{zero.dtype.name} zero point; DynamicQuantizeLSTM takes uint8 or int8 weights, float32 "
                             "scales and zero points of the weights' type")
    if quantized.ndim != 3:
        raise TypeError(f"{cv.where()}: {what} must have rank 3, got shape {list(quantized.shape)}")
    directions, columns = quantized.shape[0], quantized.shape[2]
    for name, value in ((f"{what}_scale", scale), (f"{what}_zero_point", zero)):
        if value.size not in (1, directions, directions * columns):
            raise TypeError(f"{cv.where()}: {name} has shape {list(value.shape)}; it must have one value per "
                            f"direction ({directions}) or per direction and gate column ({directions}, {columns})")
    shape = [directions, 1, columns] if scale.size == directions * columns and scale.size != directions else \
        [directions if scale.size == directions else 1, 1, 1]
    zero_shape = [directions, 1, columns] if zero.size == directions * columns and zero.size != directions else \
        [directions if zero.size == directions else 1, 1, 1]
    with np.errstate(over="ignore"):
        centered = quantized.astype(np.int32) - zero.astype(np.int32).reshape(zero_shape)
        weights = centered.astype(np.float32) * scale.reshape(shape)
    return np.ascontiguousarray(weights.transpose(0, 2, 1))


@handles("DynamicQuantizeLSTM", domain="com.microsoft")
def dynamic_quantize_lstm(cv, node, opset):
    """ONNX Runtime's dynamically quantized LSTM (``quantize_dynamic`` writes it for LSTM): an LSTM
    whose W and R are uint8/int8 constants with scales and zero points (inputs 8 to 11), in a
    [directions, input, 4 x hidden] layout. The weights are dequantized at conversion and the node
    runs as ONNX LSTM on float32 (this module's mapping): the float computation the quantized one
    approximates (ONNX Runtime also quantizes X and the hidden state at each step, so its results
    differ from the float ones by that rounding)."""
    inputs = list(node.input) + [""] * (12 - len(node.input))
    if not all(inputs[i] for i in (1, 2, 8, 9, 10, 11)):
        raise TypeError(f"{cv.where()}: DynamicQuantizeLSTM needs W, R and their scales and zero points")
    lstm_node = type(node)()
    lstm_node.CopyFrom(node)
    lstm_node.op_type, lstm_node.domain = "LSTM", ""
    names = [f"{inputs[i]}\x00dequantized" for i in (1, 2)]
    for name, index, scale_index, what in zip(names, (1, 2), (8, 10), ("W", "R")):
        cv.set(name, _dequantized_gates(cv, node, index, scale_index, what))
    lstm_inputs = [inputs[0]] + names + inputs[3:8]
    while lstm_inputs and not lstm_inputs[-1]:
        lstm_inputs.pop()
    del lstm_node.input[:]
    lstm_node.input.extend(lstm_inputs)
    try:
        return lstm(cv, lstm_node, opset)
    finally:
        for name in names:
            cv.values.pop(name, None)
