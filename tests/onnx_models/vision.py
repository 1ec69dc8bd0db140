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

    def model(self, name, output, classes):
        graph = helper.make_graph(
            self.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", classes])], self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        return model


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
