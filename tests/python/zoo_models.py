"""A small model zoo written the way torch.onnx.export (opset 13, static input shapes) writes
real networks, built with onnx.helper (PyTorch is not a test dependency).

What makes them PyTorch-like, and what the importer must cope with:
- node names like '/stage2/stage2.1/Slice', values like '/stage2/stage2.1/Slice_output_0';
- shapes computed at run time: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, chunk() as
  Shape -> Gather -> Add/Div -> Unsqueeze -> Slice (or a Split with computed sizes);
- nn.Linear on 3-D inputs as MatMul + Add(bias), LayerNorm as ReduceMean/Sub/Pow/ReduceMean/
  Add/Sqrt/Div/Mul/Add, GELU as Div/Erf/Add/Mul/Mul, softmax attention;
- BatchNorm folded into the preceding Conv's bias (eval-mode export), ReLU6 as Clip(0, 6) with
  its bounds as Constant nodes.

Each builder returns an onnx.ModelProto that passes onnx.checker and runs in ONNX Runtime.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class Graph:
    """Collects nodes and initializers; names values as torch.onnx.export does."""

    def __init__(self, seed: int):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self.counts: dict[str, int] = {}

    def _name(self, scope: str, op: str) -> str:
        key = f"{scope}/{op}"
        k = self.counts.get(key, 0)
        self.counts[key] = k + 1
        return key if k == 0 else f"{key}_{k}"

    def op(self, scope: str, op: str, inputs: list[str], n_out: int = 1, **attrs) -> list[str] | str:
        name = self._name(scope, op)
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs if n_out > 1 else outs[0]

    def const(self, scope: str, value: np.ndarray) -> str:
        """A Constant node (as the exporter writes scalars and small index vectors)."""
        name = self._name(scope, "Constant")
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node("Constant", [], [out], name=name,
                                           value=numpy_helper.from_array(np.asarray(value))))
        return out

    def init(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name: str, shape, fan_in: int, gain: float = 1.0) -> str:
        bound = gain * np.sqrt(3.0 / fan_in)
        return self.init(name, self.rng.uniform(-bound, bound, shape).astype(np.float32))

    # ---- layers as PyTorch exports them ----------------------------------------------------

    def conv(self, scope, x, cin, cout, k, stride=1, pad=None, groups=1, bias=True, gain=1.0):
        pad = (k - 1) // 2 if pad is None else pad
        w = self.weight(f"{scope}.weight", (cout, cin // groups, k, k), cin // groups * k * k, gain)
        ins = [x, w]
        if bias:
            ins.append(self.init(f"{scope}.bias", self.rng.uniform(-0.1, 0.1, cout).astype(np.float32)))
        return self.op(scope, "Conv", ins, dilations=[1, 1], group=groups, kernel_shape=[k, k],
                       pads=[pad] * 4, strides=[stride, stride])

    def linear(self, scope, x, k, n, gain=1.0):
        """nn.Linear on a 3-D input: MatMul with the transposed weight, then Add(bias, ...)."""
        w = self.weight(f"onnx::MatMul_{scope}", (k, n), k, gain)
        y = self.op(scope, "MatMul", [x, w])
        b = self.init(f"{scope}.bias", self.rng.uniform(-0.1, 0.1, n).astype(np.float32))
        return self.op(scope, "Add", [b, y])

    def relu6(self, scope, x):
        lo = self.const(scope, np.array(0.0, dtype=np.float32))
        hi = self.const(scope, np.array(6.0, dtype=np.float32))
        return self.op(scope, "Clip", [x, lo, hi])

    def dim(self, scope, x, axis):
        """x.size(axis) as a 1-element int64 vector: Shape -> Gather -> Unsqueeze."""
        shape = self.op(scope, "Shape", [x])
        d = self.op(scope, "Gather", [shape, self.const(scope, np.array(axis, dtype=np.int64))], axis=0)
        return self.op(scope, "Unsqueeze", [d, self.const(scope, np.array([0], dtype=np.int64))])

    def reshape(self, scope, x, parts):
        """x.view(*parts): parts are value names (1-element int64) or ints."""
        vals = [p if isinstance(p, str) else self.const(scope, np.array([p], dtype=np.int64)) for p in parts]
        shape = self.op(scope, "Concat", vals, axis=0)
        return self.op(scope, "Reshape", [x, shape])

    def layer_norm(self, scope, x, e):
        mean = self.op(scope, "ReduceMean", [x], axes=[-1], keepdims=1)
        d = self.op(scope, "Sub", [x, mean])
        sq = self.op(scope, "Pow", [d, self.const(scope, np.array(2.0, dtype=np.float32))])
        var = self.op(scope, "ReduceMean", [sq], axes=[-1], keepdims=1)
        std = self.op(scope, "Sqrt", [self.op(scope, "Add", [var, self.const(scope, np.array(1e-5, dtype=np.float32))])])
        y = self.op(scope, "Div", [d, std])
        g = self.init(f"{scope}.weight", (1.0 + self.rng.uniform(-0.1, 0.1, e)).astype(np.float32))
        b = self.init(f"{scope}.bias", self.rng.uniform(-0.1, 0.1, e).astype(np.float32))
        return self.op(scope, "Add", [self.op(scope, "Mul", [y, g]), b])

    def gelu(self, scope, x):
        t = self.op(scope, "Div", [x, self.const(scope, np.array(1.4142135381698608, dtype=np.float32))])
        t = self.op(scope, "Add", [self.op(scope, "Erf", [t]), self.const(scope, np.array(1.0, dtype=np.float32))])
        t = self.op(scope, "Mul", [x, t])
        return self.op(scope, "Mul", [t, self.const(scope, np.array(0.5, dtype=np.float32))])

    def model(self, inputs, outputs, name: str) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="pytorch",
                              producer_version="2.1.0")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# ---- the models -----------------------------------------------------------------------------

def shape_chain(seed=0) -> onnx.ModelProto:
    """Two heads x.view(x.size(0), -1) @ W.T + b, and relu(x[:, : x.size(1) // 2]) (Slice bounds
    from Shape chains). The heads share their input, so merging them is a gain and the optimized
    model is written (a model whose only change is the folded shape chains, free either way, is
    kept as it was)."""
    g = Graph(seed)
    x = "input"
    flat = g.reshape("", x, [g.dim("", x, 0), -1])
    for head, out in (("fc", "logits"), ("fc2", "logits2")):
        g.op("/" + head, "Gemm", [flat, g.weight(head + ".weight", (10, 8 * 4 * 4), 128),
                                  g.init(head + ".bias", np.zeros(10, np.float32))], transB=1)
        g.nodes[-1].output[0] = out
    half = g.op("", "Div", [g.dim("", x, 1), g.const("", np.array([2], dtype=np.int64))])
    s = g.op("", "Slice", [x, g.const("", np.array([0], dtype=np.int64)), half,
                           g.const("", np.array([1], dtype=np.int64))])
    g.op("", "Relu", [s])
    g.nodes[-1].output[0] = "half"
    return g.model([_vi("input", [2, 8, 4, 4])], [_vi("logits", [2, 10]), _vi("logits2", [2, 10]), _vi("half", [2, 4, 4, 4])],
                   "shape_chain")


def _channel_shuffle(g: Graph, scope: str, x: str, groups: int) -> str:
    """torchvision channel_shuffle: view(b, g, c/g, h, w) -> transpose(1, 2) -> view(b, -1, h, w)."""
    b, c, h, w = (g.dim(scope, x, i) for i in range(4))
    per = g.op(scope, "Div", [c, g.const(scope, np.array([groups], dtype=np.int64))])
    v = g.reshape(scope, x, [b, groups, per, h, w])
    t = g.op(scope, "Transpose", [v], perm=[0, 2, 1, 3, 4])
    return g.reshape(scope, t, [b, -1, h, w])


def _chunk2(g: Graph, scope: str, x: str) -> tuple[str, str]:
    """x.chunk(2, dim=1) as Slices whose bounds are computed from x's shape."""
    c = g.dim(scope, x, 1)
    half = g.op(scope, "Div", [g.op(scope, "Add", [c, g.const(scope, np.array([1], dtype=np.int64))]),
                               g.const(scope, np.array([2], dtype=np.int64))])
    axes = g.const(scope, np.array([1], dtype=np.int64))
    x1 = g.op(scope, "Slice", [x, g.const(scope, np.array([0], dtype=np.int64)), half, axes])
    x2 = g.op(scope, "Slice", [x, half, c, axes])
    return x1, x2


def _branch(g: Graph, scope: str, x: str, cin: int, c: int, stride: int) -> str:
    """conv1x1-relu, depthwise 3x3 (stride), conv1x1-relu; BatchNorms folded into the biases."""
    h = g.op(f"{scope}/branch2/branch2.2", "Relu", [g.conv(f"{scope}/branch2/branch2.0", x, cin, c, 1, gain=1.4)])
    h = g.conv(f"{scope}/branch2/branch2.3", h, c, c, 3, stride=stride, groups=c)
    return g.op(f"{scope}/branch2/branch2.7", "Relu", [g.conv(f"{scope}/branch2/branch2.5", h, c, c, 1, gain=1.4)])


def shufflenet(seed=0) -> onnx.ModelProto:
    """A ShuffleNet-v2 stage: a stride-2 block, two stride-1 blocks (chunk, branch, concat,
    channel shuffle), the second one chunking through a Split with computed sizes."""
    g = Graph(seed)
    x = "input"
    cin, c = 24, 24
    # stride-2 block: both branches see the whole input
    s = "/stage2/stage2.0"
    b1 = g.conv(f"{s}/branch1/branch1.0", x, cin, cin, 3, stride=2, groups=cin)
    b1 = g.op(f"{s}/branch1/branch1.4", "Relu", [g.conv(f"{s}/branch1/branch1.2", b1, cin, c, 1, gain=1.4)])
    b2 = _branch(g, s, x, cin, c, 2)
    x = _channel_shuffle(g, s, g.op(s, "Concat", [b1, b2], axis=1), 2)
    # stride-1 block, chunk as Slices
    s = "/stage2/stage2.1"
    x1, x2 = _chunk2(g, s, x)
    x = _channel_shuffle(g, s, g.op(s, "Concat", [x1, _branch(g, s, x2, c, c, 1)], axis=1), 2)
    # stride-1 block, chunk as a Split with computed sizes (torch's opset-13 chunk symbolic)
    s = "/stage2/stage2.2"
    dim = g.op(s, "Gather", [g.op(s, "Shape", [x]), g.const(s, np.array(1, dtype=np.int64))], axis=0)
    size = g.op(s, "Div", [g.op(s, "Add", [dim, g.const(s, np.array(1, dtype=np.int64))]),
                           g.const(s, np.array(2, dtype=np.int64))])
    size = g.op(s, "Unsqueeze", [size, g.const(s, np.array([0], dtype=np.int64))])
    rest = g.op(s, "Sub", [g.op(s, "Unsqueeze", [dim, g.const(s, np.array([0], dtype=np.int64))]), size])
    sizes = g.op(s, "Concat", [size, rest], axis=0)
    x1, x2 = g.op(s, "Split", [x, sizes], n_out=2, axis=1)
    x = _channel_shuffle(g, s, g.op(s, "Concat", [x1, _branch(g, s, x2, c, c, 1)], axis=1), 2)
    g.nodes.append(helper.make_node("Identity", [x], ["output"], name="/Identity"))
    return g.model([_vi("input", [1, 24, 16, 16])], [_vi("output", [1, 48, 8, 8])], "shufflenet_stage")


def transformer_encoder(seed=0, batch=2, seq=16, embed=64, heads=4, ffn=128) -> onnx.ModelProto:
    """One nn.TransformerEncoderLayer (batch_first, post-norm, GELU) as exported: Q/K/V as
    MatMul + Add(bias), heads through shape-computed Reshapes, softmax attention, LayerNorm
    decomposed, GELU in its Erf form."""
    g = Graph(seed)
    x = "src"
    s = "/enc/layers.0/self_attn"
    hd = embed // heads
    bsz, slen = g.dim(s, x, 0), g.dim(s, x, 1)

    def heads_of(t, transpose_last=False):
        r = g.reshape(s, t, [bsz, slen, heads, hd])
        return g.op(s, "Transpose", [r], perm=[0, 2, 3, 1] if transpose_last else [0, 2, 1, 3])

    q = heads_of(g.linear(f"{s}/q_proj", x, embed, embed))
    k = heads_of(g.linear(f"{s}/k_proj", x, embed, embed), transpose_last=True)
    v = heads_of(g.linear(f"{s}/v_proj", x, embed, embed))
    scores = g.op(s, "Div", [g.op(s, "MatMul", [q, k]), g.const(s, np.array(np.sqrt(hd), dtype=np.float32))])
    attn = g.op(s, "MatMul", [g.op(s, "Softmax", [scores], axis=-1), v])
    attn = g.op(s, "Transpose", [attn], perm=[0, 2, 1, 3])
    # attn.reshape(x.shape[:2] + (embed,)): the leading dims through a Slice of the shape
    lead = g.op(s, "Slice", [g.op(s, "Shape", [x]), g.const(s, np.array([0], dtype=np.int64)),
                             g.const(s, np.array([2], dtype=np.int64)), g.const(s, np.array([0], dtype=np.int64))])
    attn = g.op(s, "Reshape", [attn, g.op(s, "Concat", [lead, g.const(s, np.array([embed], dtype=np.int64))], axis=0)])
    attn = g.linear(f"{s}/out_proj", attn, embed, embed)
    h = g.layer_norm("/enc/layers.0/norm1", g.op("/enc/layers.0", "Add", [x, attn]), embed)
    f = g.gelu("/enc/layers.0/activation", g.linear("/enc/layers.0/linear1", h, embed, ffn))
    f = g.linear("/enc/layers.0/linear2", f, ffn, embed)
    y = g.layer_norm("/enc/layers.0/norm2", g.op("/enc/layers.0", "Add", [h, f]), embed)
    g.nodes.append(helper.make_node("Identity", [y], ["output"], name="/Identity"))
    return g.model([_vi("src", [batch, seq, embed])], [_vi("output", [batch, seq, embed])], "transformer_encoder")


def dense_block(seed=0, layers=4, c0=16, growth=8) -> onnx.ModelProto:
    """A DenseNet block: each layer concatenates all earlier features -> BatchNorm -> ReLU ->
    1x1 (its BatchNorm folded) -> ReLU -> 3x3; the block's output is the concatenation of all."""
    g = Graph(seed)
    feats = ["input"]
    c = c0
    for i in range(layers):
        s = f"/features/denseblock1/denselayer{i + 1}"
        cat = feats[0] if len(feats) == 1 else g.op(s, "Concat", feats, axis=1)
        scale = g.init(f"{s}.norm1.weight", (1 + g.rng.uniform(-0.1, 0.1, c)).astype(np.float32))
        bias = g.init(f"{s}.norm1.bias", g.rng.uniform(-0.1, 0.1, c).astype(np.float32))
        mean = g.init(f"{s}.norm1.running_mean", g.rng.uniform(-0.1, 0.1, c).astype(np.float32))
        var = g.init(f"{s}.norm1.running_var", (1 + g.rng.uniform(-0.1, 0.1, c)).astype(np.float32))
        h = g.op(s, "BatchNormalization", [cat, scale, bias, mean, var], epsilon=1e-5)
        h = g.op(s, "Relu", [g.conv(f"{s}/conv1", g.op(s, "Relu", [h]), c, 4 * growth, 1, gain=1.4)])
        feats.append(g.conv(f"{s}/conv2", h, 4 * growth, growth, 3, bias=False, gain=1.4))
        c += growth
    g.op("/features/denseblock1", "Concat", feats, axis=1)
    g.nodes[-1].output[0] = "output"
    return g.model([_vi("input", [1, c0, 12, 12])], [_vi("output", [1, c, 12, 12])], "dense_block")


def mobilenet_block(seed=0, c=16, expand=6, activation="relu6") -> onnx.ModelProto:
    """Two MobileNet-v2 inverted residuals: 1x1 expand -> act -> depthwise 3x3 -> act -> 1x1
    project, + the input. The activation is ReLU6 (Clip(0, 6), bounds as Constant nodes) or
    LeakyReLU(0.1); BatchNorms folded into the convolutions' biases."""
    g = Graph(seed)
    x = "input"
    hid = c * expand

    def act(scope, t):
        if activation == "relu6":
            return g.relu6(scope, t)
        return g.op(scope, "LeakyRelu", [t], alpha=0.1)

    for i in range(2):
        s = f"/features/features.{i + 1}/conv"
        h = act(f"{s}/conv.0/conv.0.2", g.conv(f"{s}/conv.0/conv.0.0", x, c, hid, 1, gain=1.4))
        h = act(f"{s}/conv.1/conv.1.2", g.conv(f"{s}/conv.1/conv.1.0", h, hid, hid, 3, groups=hid, gain=1.4))
        h = g.conv(f"{s}/conv.2", h, hid, c, 1, gain=0.5)
        x = g.op(f"/features/features.{i + 1}", "Add", [x, h])
    g.nodes[-1].output[0] = "output"
    return g.model([_vi("input", [1, c, 14, 14])], [_vi("output", [1, c, 14, 14])], f"mobilenet_{activation}")


ZOO = {
    "shape_chain": shape_chain,
    "shufflenet": shufflenet,
    "transformer_encoder": transformer_encoder,
    "dense_block": dense_block,
    "mobilenet_relu6": lambda seed=0: mobilenet_block(seed, activation="relu6"),
    "mobilenet_leaky": lambda seed=0: mobilenet_block(seed, activation="leaky"),
}
