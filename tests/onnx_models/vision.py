"""torchvision-style MobileNetV2 and ResNet-50 as ONNX graphs with deterministic random weights.

Conv + BatchNormalization are kept as separate nodes (as an unfused export has them), so the
importer's BatchNormalization mapping is exercised. Weights are He-initialized and the last BN of
each residual branch is scaled down, so activations stay in a sensible range through the network.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


class _Graph:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.initializers = [], []
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def weight(self, prefix, array):
        name = self.name(prefix)
        self.initializers.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def node(self, op_type, inputs, **attributes):
        output = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attributes))
        return output

    def conv(self, x, in_channels, out_channels, kernel, stride=1, groups=1, bias=False):
        fan_in = in_channels // groups * kernel * kernel
        w = self.rng.standard_normal((out_channels, in_channels // groups, kernel, kernel)) * np.sqrt(2.0 / fan_in)
        inputs = [x, self.weight("w", w)]
        if bias:
            inputs.append(self.weight("b", self.rng.standard_normal(out_channels) * 0.01))
        pad = kernel // 2
        return self.node("Conv", inputs, kernel_shape=[kernel, kernel], strides=[stride, stride],
                         pads=[pad, pad, pad, pad], group=groups)

    def batch_norm(self, x, channels, gamma_scale=1.0):
        rng = self.rng
        params = [rng.uniform(0.5, 1.0, channels) * gamma_scale, rng.standard_normal(channels) * 0.05,
                  rng.standard_normal(channels) * 0.05, rng.uniform(0.5, 1.5, channels)]
        names = [self.weight(p, v) for p, v in zip(("gamma", "beta", "mean", "var"), params)]
        return self.node("BatchNormalization", [x] + names, epsilon=1e-5)

    def relu6(self, x):
        low = self.weight("min", np.array(0.0))
        high = self.weight("max", np.array(6.0))
        return self.node("Clip", [x, low, high])

    def classifier(self, x, channels, classes, dropout=False):
        x = self.node("GlobalAveragePool", [x])
        x = self.node("Flatten", [x], axis=1)
        if dropout:
            x = self.node("Dropout", [x])
        w = self.weight("fc_w", self.rng.standard_normal((classes, channels)) * np.sqrt(1.0 / channels))
        b = self.weight("fc_b", self.rng.standard_normal(classes) * 0.01)
        return self.node("Gemm", [x, w, b], transB=1)

    def classifier_head(self, x, channels, classes):
        w = self.weight("fc_w", self.rng.standard_normal((classes, channels)) * np.sqrt(1.0 / channels))
        return self.node("Gemm", [x, w, self.weight("fc_b", self.rng.standard_normal(classes) * 0.01)], transB=1)

    def model(self, name, output, classes, size=224, opset=13):
        return self.graph_model(name, [(output, ["batch", classes])], size, opset)

    def graph_model(self, name, outputs, size, opset):
        """The ONNX model of the nodes so far: input "input" [batch, 3, size, size], float outputs."""
        graph = helper.make_graph(
            self.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, size, size])],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, shape) for out, shape in outputs],
            self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        return model

    def ints(self, prefix, values):
        name = self.name(prefix)
        self.initializers.append(numpy_helper.from_array(np.asarray(values, np.int64), name))
        return name

    def conv_bn(self, x, in_channels, out_channels, kernel, stride=1, groups=1, activation="Relu"):
        y = self.batch_norm(self.conv(x, in_channels, out_channels, kernel, stride, groups), out_channels)
        if activation == "SiLU":
            return self.node("Mul", [y, self.node("Sigmoid", [y])])
        return self.node(activation, [y]) if activation else y


def resnet50(seed=0, classes=1000):
    """ResNet-50 v1.5 (stride on the 3x3 conv of each bottleneck), as in torchvision."""
    g = _Graph(seed)
    x = g.node("Relu", [g.batch_norm(g.conv("input", 3, 64, 7, stride=2), 64)])
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    channels = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for block in range(blocks):
            s = stride if block == 0 else 1
            out = width * 4
            y = g.node("Relu", [g.batch_norm(g.conv(x, channels, width, 1), width)])
            y = g.node("Relu", [g.batch_norm(g.conv(y, width, width, 3, stride=s), width)])
            y = g.batch_norm(g.conv(y, width, out, 1), out, gamma_scale=0.2)
            shortcut = x
            if block == 0:
                shortcut = g.batch_norm(g.conv(x, channels, out, 1, stride=s), out)
            x = g.node("Relu", [g.node("Add", [y, shortcut])])
            channels = out
    return g.model("resnet50", g.classifier(x, channels, classes), classes)


def mobilenet_v2(seed=0, classes=1000):
    """MobileNetV2 (width 1.0) with ReLU6 as Clip(0, 6) and the classifier's Dropout."""
    g = _Graph(seed)
    x = g.relu6(g.batch_norm(g.conv("input", 3, 32, 3, stride=2), 32))
    channels = 32
    for expand, out, repeats, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                                         (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(repeats):
            s = stride if i == 0 else 1
            hidden = channels * expand
            y = x
            if expand != 1:
                y = g.relu6(g.batch_norm(g.conv(y, channels, hidden, 1), hidden))
            y = g.relu6(g.batch_norm(g.conv(y, hidden, hidden, 3, stride=s, groups=hidden), hidden))
            y = g.batch_norm(g.conv(y, hidden, out, 1), out, gamma_scale=0.3 if s == 1 and channels == out else 1.0)
            x = g.node("Add", [x, y]) if s == 1 and channels == out else y
            channels = out
    x = g.relu6(g.batch_norm(g.conv(x, channels, 1280, 1), 1280))
    return g.model("mobilenet_v2", g.classifier(x, 1280, classes, dropout=True), classes)


def _divisible(value, divisor=8):
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def mobilenet_v3(seed=0, classes=1000):
    """MobileNetV3-Large as in torchvision: hardswish, squeeze-excite (hardsigmoid gate), 5x5 depthwise."""
    g = _Graph(seed)
    x = g.conv_bn("input", 3, 16, 3, stride=2, activation="HardSwish")
    channels = 16
    for kernel, expanded, out, se, activation, stride in (
            (3, 16, 16, False, "Relu", 1), (3, 64, 24, False, "Relu", 2), (3, 72, 24, False, "Relu", 1),
            (5, 72, 40, True, "Relu", 2), (5, 120, 40, True, "Relu", 1), (5, 120, 40, True, "Relu", 1),
            (3, 240, 80, False, "HardSwish", 2), (3, 200, 80, False, "HardSwish", 1),
            (3, 184, 80, False, "HardSwish", 1), (3, 184, 80, False, "HardSwish", 1),
            (3, 480, 112, True, "HardSwish", 1), (3, 672, 112, True, "HardSwish", 1),
            (5, 672, 160, True, "HardSwish", 2), (5, 960, 160, True, "HardSwish", 1),
            (5, 960, 160, True, "HardSwish", 1)):
        y = x
        if expanded != channels:
            y = g.conv_bn(y, channels, expanded, 1, activation=activation)
        y = g.conv_bn(y, expanded, expanded, kernel, stride=stride, groups=expanded, activation=activation)
        if se:
            squeezed = _divisible(expanded // 4)
            gate = g.node("GlobalAveragePool", [y])
            gate = g.node("Relu", [g.conv(gate, expanded, squeezed, 1, bias=True)])
            gate = g.node("HardSigmoid", [g.conv(gate, squeezed, expanded, 1, bias=True)], alpha=1 / 6, beta=0.5)
            y = g.node("Mul", [y, gate])
        y = g.conv_bn(y, expanded, out, 1, activation=None)
        x = g.node("Add", [x, y]) if stride == 1 and channels == out else y
        channels = out
    x = g.conv_bn(x, channels, 960, 1, activation="HardSwish")
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x])], axis=1)
    w = g.weight("fc1_w", g.rng.standard_normal((1280, 960)) * np.sqrt(2.0 / 960))
    x = g.node("HardSwish", [g.node("Gemm", [x, w, g.weight("fc1_b", np.zeros(1280))], transB=1)])
    return g.model("mobilenet_v3", g.classifier_head(x, 1280, classes), classes, opset=14)


def yolov8(size=320, seed=0, classes=80):
    """A YOLOv8n-style detector: Conv-BN-SiLU, C2f (split, bottlenecks, concat), SPPF (three 5x5
    max-pools), an FPN/PAN neck (nearest 2x Resize, concat) and the anchor-free head with DFL (softmax
    over 16 bins, a 1x1 conv with weights 0..15) and box decoding. Output [batch, 4 + classes, anchors]."""
    g = _Graph(seed)

    def conv(x, c1, c2, k=1, s=1):
        return g.conv_bn(x, c1, c2, k, stride=s, activation="SiLU")

    def c2f(x, c1, c2, n, shortcut):
        c = c2 // 2
        pieces = list(_split(conv(x, c1, 2 * c), [c, c]))
        for _ in range(n):
            y = conv(conv(pieces[-1], c, c, 3), c, c, 3)
            pieces.append(g.node("Add", [pieces[-1], y]) if shortcut else y)
        return conv(g.node("Concat", pieces, axis=1), (2 + n) * c, c2)

    def _split(x, sizes):
        outputs = [g.name("split") for _ in sizes]
        g.nodes.append(helper.make_node("Split", [x, g.ints("sizes", sizes)], outputs, axis=1, name=outputs[0]))
        return outputs

    def upsample(x):
        scales = g.weight("scales", np.array([1, 1, 2, 2]))
        return g.node("Resize", [x, "", scales], mode="nearest")

    x = conv(conv("input", 3, 16, 3, 2), 16, 32, 3, 2)
    x = c2f(x, 32, 32, 1, True)
    p3 = c2f(conv(x, 32, 64, 3, 2), 64, 64, 2, True)
    p4 = c2f(conv(p3, 64, 128, 3, 2), 128, 128, 2, True)
    x = c2f(conv(p4, 128, 256, 3, 2), 256, 256, 1, True)
    half = conv(x, 256, 128)  # SPPF
    pools = [half]
    for _ in range(3):
        pools.append(g.node("MaxPool", [pools[-1]], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2]))
    p5 = conv(g.node("Concat", pools, axis=1), 512, 256)
    n4 = c2f(g.node("Concat", [upsample(p5), p4], axis=1), 384, 128, 1, False)
    n3 = c2f(g.node("Concat", [upsample(n4), p3], axis=1), 192, 64, 1, False)
    m4 = c2f(g.node("Concat", [conv(n3, 64, 64, 3, 2), n4], axis=1), 192, 128, 1, False)
    m5 = c2f(g.node("Concat", [conv(m4, 128, 128, 3, 2), p5], axis=1), 384, 256, 1, False)

    levels, anchors, strides = [], [], []
    for feature, channels, stride in ((n3, 64, 8), (m4, 128, 16), (m5, 256, 32)):
        box = conv(conv(feature, channels, 64, 3), 64, 64, 3)
        box = g.conv(box, 64, 64, 1, bias=True)
        cls = conv(conv(feature, channels, 80, 3), 80, 80, 3)
        cls = g.conv(cls, 80, classes, 1, bias=True)
        level = g.node("Concat", [box, cls], axis=1)
        levels.append(g.node("Reshape", [level, g.ints("shape", [0, 64 + classes, -1])]))
        cells = size // stride
        ys, xs = np.meshgrid(np.arange(cells) + 0.5, np.arange(cells) + 0.5, indexing="ij")
        anchors.append(np.stack([xs.ravel(), ys.ravel()]))
        strides.append(np.full(cells * cells, stride))
    head = g.node("Concat", levels, axis=2)
    box, cls = _split(head, [64, classes])
    dfl = g.node("Reshape", [box, g.ints("shape", [0, 4, 16, -1])])
    dfl = g.node("Softmax", [g.node("Transpose", [dfl], perm=[0, 2, 1, 3])], axis=1)
    bins = g.weight("dfl_w", np.arange(16).reshape(1, 16, 1, 1))
    dist = g.node("Reshape", [g.node("Conv", [dfl, bins]), g.ints("shape", [0, 4, -1])])
    left_top, right_bottom = _split(dist, [2, 2])
    anchor = g.weight("anchors", np.concatenate(anchors, 1))
    top_left = g.node("Sub", [anchor, left_top])
    bottom_right = g.node("Add", [anchor, right_bottom])
    center = g.node("Div", [g.node("Add", [top_left, bottom_right]), g.weight("two", np.array(2.0))])
    extent = g.node("Sub", [bottom_right, top_left])
    boxes = g.node("Mul", [g.node("Concat", [center, extent], axis=1), g.weight("strides", np.concatenate(strides))])
    output = g.node("Concat", [boxes, g.node("Sigmoid", [cls])], axis=1)
    count = sum(a.shape[1] for a in anchors)
    return g.graph_model("yolov8", [(output, ["batch", 4 + classes, count])], size, 13)
