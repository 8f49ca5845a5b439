"""Seeded random ONNX model generator for random_models.py (the fuzzer of the whole tool).

generate(seed, size) -> (family, ModelProto): model i depends on its seed alone. Families:
"conv" (NCHW, batch 1, 8..16 spatial, 3..32 channels), "mm" (rank-2 [M,K] activations), "mm3d"
(rank-3 [1,S,K]), "rnn" (unrolled cells, shared weights), "mixed" (conv trunk -> pooled or
reshaped features -> matmul / Gemm head). Builder is the small onnx.helper wrapper the families
(and hand-built regression models) use. See random_models.py for what the blocks aim at.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


class Builder:
    """A graph under construction; tracks every tensor's shape."""

    def __init__(self, rng, opset, size=1):
        self.rng = rng
        self.size = size  # multiplies the number of blocks (manual runs: --size)
        self.opset = opset
        self.nodes = []
        self.inits = []
        self.inputs = []
        self.outputs = []
        self.shape = {}
        self.n = 0

    # ---- bookkeeping -------------------------------------------------------------------
    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def node(self, op, ins, shape, prefix=None, **attrs):
        out = self.fresh(prefix or op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=self.fresh("n_" + op), **attrs))
        self.shape[out] = list(shape)
        return out

    def input(self, shape, name=None):
        name = name or f"in{len(self.inputs)}"
        self.inputs.append(helper.make_tensor_value_info(name, F, list(shape)))
        self.shape[name] = list(shape)
        return name

    def init(self, arr, prefix="w"):
        name = self.fresh(prefix)
        arr = np.asarray(arr)
        self.inits.append(numpy_helper.from_array(arr, name))
        self.shape[name] = list(arr.shape)
        return name

    def weight(self, *shape, fan_in=None, prefix="w"):
        fan_in = fan_in or (int(np.prod(shape[1:])) if len(shape) > 1 else 1)
        scale = 1.0 / np.sqrt(max(fan_in, 1))
        return self.init((self.rng.standard_normal(shape) * scale).astype(np.float32), prefix)

    def ints(self, values, prefix="c"):
        return self.init(np.array(values, dtype=np.int64), prefix)

    def output(self, name):
        if name in [i.name for i in self.inputs]:
            name = self.act(name, "relu")
        if name in [o.name for o in self.outputs]:
            return
        self.outputs.append(helper.make_tensor_value_info(name, F, self.shape[name]))

    def model(self):
        g = helper.make_graph(self.nodes, "random", self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="random_models")
        m.ir_version = 8
        onnx.checker.check_model(m, full_check=True)
        return m

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def p(self, prob):
        return bool(self.rng.random() < prob)

    # ---- operators -----------------------------------------------------------------------
    def conv(self, x, cout, k=3, stride=1, group=1, bias=None, w=None, b=None, auto_pad=False,
             pad="same"):
        """k: int or (kh, kw); pad: "same" (centred; even kernels: one more at the end),
        "valid", "upper" / "lower" (auto_pad SAME_UPPER / SAME_LOWER)."""
        n, c, h, wd = self.shape[x]
        kh, kw = (k, k) if isinstance(k, int) else k
        if w is None:
            w = self.weight(cout, c // group, kh, kw, fan_in=c // group * kh * kw)
        cout, _, kh, kw = self.shape[w]
        if bias is None:
            bias = self.p(0.5)
        ins = [x, w]
        if b is not None:
            ins.append(b)
        elif bias:
            ins.append(self.weight(cout, fan_in=4, prefix="b"))
        if auto_pad and pad == "same":
            pad = "upper"
        if pad == "valid" and (kh > h or kw > wd):
            pad = "same"  # would leave no output
        attrs = dict(kernel_shape=[kh, kw])
        if stride != 1:
            attrs["strides"] = [stride, stride]
        if group != 1:
            attrs["group"] = group
        if pad in ("upper", "lower"):
            attrs["auto_pad"] = "SAME_UPPER" if pad == "upper" else "SAME_LOWER"
            oh, ow = -(-h // stride), -(-wd // stride)
        else:
            if pad == "same":
                pads = [(kh - 1) // 2, (kw - 1) // 2, kh // 2, kw // 2]
            else:
                pads = [0, 0, 0, 0]
            if any(pads):
                attrs["pads"] = pads
            oh = (h + pads[0] + pads[2] - kh) // stride + 1
            ow = (wd + pads[1] + pads[3] - kw) // stride + 1
        return self.node("Conv", ins, [n, cout, oh, ow], **attrs)

    def act(self, x, kind):
        if kind == "none":
            return x
        op = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid"}[kind]
        return self.node(op, [x], self.shape[x])

    def unary(self, op, x, **attrs):
        return self.node(op, [x], self.shape[x], **attrs)

    def binary(self, op, a, b):
        sa, sb = self.shape[a], self.shape[b]
        r = max(len(sa), len(sb))
        sa = [1] * (r - len(sa)) + sa
        sb = [1] * (r - len(sb)) + sb
        out = [max(u, v) for u, v in zip(sa, sb)]
        return self.node(op, [a, b], out)

    def concat(self, xs, axis):
        s = list(self.shape[xs[0]])
        ax = axis % len(s)
        s[ax] = sum(self.shape[x][ax] for x in xs)
        return self.node("Concat", xs, s, axis=axis)

    def split(self, x, axis, sizes):
        s = self.shape[x]
        ax = axis % len(s)
        assert sum(sizes) == s[ax]
        outs = [self.fresh("split") for _ in sizes]
        equal = len(set(sizes)) == 1
        ins = [x]
        attrs = dict(axis=axis)
        if self.opset >= 13:
            if not equal or self.p(0.5):
                ins.append(self.ints(sizes, "splits"))
        else:
            if not equal or self.p(0.5):
                attrs["split"] = list(sizes)
        if self.opset >= 18 and len(ins) == 1:
            attrs["num_outputs"] = len(sizes)
        self.nodes.append(helper.make_node("Split", ins, outs, name=self.fresh("n_Split"), **attrs))
        for o, sz in zip(outs, sizes):
            t = list(s)
            t[ax] = sz
            self.shape[o] = t
        return outs

    def transpose(self, x, perm):
        s = self.shape[x]
        return self.node("Transpose", [x], [s[p] for p in perm], perm=list(perm))

    def reshape(self, x, shape):
        assert int(np.prod(shape)) == int(np.prod(self.shape[x]))
        spec = list(shape)
        if self.p(0.3):
            spec[-1] = -1
        if self.p(0.3) and len(shape) > 1 and len(self.shape[x]) > 0 and self.shape[x][0] == shape[0]:
            spec[0] = 0  # copy the leading dimension
        return self.node("Reshape", [x, self.ints(spec, "shape")], shape)

    def matmul(self, x, w):
        sx, sw = self.shape[x], self.shape[w]
        assert sx[-1] == sw[-2] and len(sx) >= 2 and len(sw) >= 2, (sx, sw)
        batch = sx[:-2] if len(sx) >= len(sw) else sw[:-2]
        return self.node("MatMul", [x, w], batch + [sx[-2], sw[-1]])

    def gemm(self, x, n_out, trans_b=True, bias=True, alpha=1.0, beta=1.0):
        m, k = self.shape[x]
        w = self.weight(n_out, k, fan_in=k) if trans_b else self.weight(k, n_out, fan_in=k)
        ins = [x, w]
        if bias:
            bshape = self.choice([[n_out], [1, n_out]])
            ins.append(self.weight(*bshape, fan_in=4, prefix="b"))
        attrs = {}
        if trans_b:
            attrs["transB"] = 1
        if alpha != 1.0:
            attrs["alpha"] = alpha
        if beta != 1.0 and bias:
            attrs["beta"] = beta
        return self.node("Gemm", ins, [m, n_out], **attrs)

    def batchnorm(self, x):
        c = self.shape[x][1]
        scale = self.init(self.rng.uniform(0.5, 1.5, c).astype(np.float32), "bn_s")
        bias = self.init((self.rng.standard_normal(c) * 0.1).astype(np.float32), "bn_b")
        mean = self.init((self.rng.standard_normal(c) * 0.1).astype(np.float32), "bn_m")
        var = self.init(self.rng.uniform(0.5, 1.5, c).astype(np.float32), "bn_v")
        return self.node("BatchNormalization", [x, scale, bias, mean, var], self.shape[x],
                         epsilon=1e-5)

    def pool(self, x, kind, k, stride, pad):
        n, c, h, w = self.shape[x]
        oh = (h + 2 * pad - k) // stride + 1
        ow = (w + 2 * pad - k) // stride + 1
        attrs = dict(kernel_shape=[k, k], strides=[stride, stride])
        if pad:
            attrs["pads"] = [pad] * 4
        if kind == "AveragePool" and pad and self.p(0.5):
            attrs["count_include_pad"] = 1
        return self.node(kind, [x], [n, c, oh, ow], **attrs)

    def opaque(self, x):
        r = len(self.shape[x])
        op = self.choice(["Softmax", "LeakyRelu", "Exp", "Abs", "Neg", "Sqrt", "Elu", "Softsign"])
        if op == "Softmax":
            return self.node("Softmax", [x], self.shape[x], axis=r - 1)  # same meaning in every opset
        if op == "LeakyRelu":
            return self.node("LeakyRelu", [x], self.shape[x], alpha=0.1)
        if op == "Exp":
            return self.node("Exp", [self.unary("Tanh", x)], self.shape[x])
        if op == "Sqrt":
            return self.node("Sqrt", [self.unary("Abs", x)], self.shape[x])
        return self.node(op, [x], self.shape[x])


ACTS = ["relu", "tanh", "sigmoid", "none"]


def chan_bcast(b, c):
    """A bias-like broadcast operand for an NCHW tensor with c channels."""
    shape = b.choice([[c, 1, 1], [1, c, 1, 1], []])
    if not shape:
        return b.init(np.array(b.rng.uniform(0.5, 1.5), dtype=np.float32), "s")
    return b.init((b.rng.standard_normal(shape) * 0.5).astype(np.float32), "cb")


def feat_bcast(b, n):
    shape = b.choice([[n], [1, n], []])
    if not shape:
        return b.init(np.array(b.rng.uniform(0.5, 1.5), dtype=np.float32), "s")
    return b.init((b.rng.standard_normal(shape) * 0.5).astype(np.float32), "fb")


def combine(b, xs, axis):
    """Combines branch tensors: concat, pairwise Add / Mul when shapes agree, or graph outputs.
    Tensors whose other dimensions do not agree with the first one's become graph outputs."""
    ax = axis % len(b.shape[xs[0]])
    key = lambda t: [d for i, d in enumerate(b.shape[t]) if i != ax]  # noqa: E731
    odd = [x for x in xs if key(x) != key(xs[0])]
    xs = [x for x in xs if key(x) == key(xs[0])]
    for x in odd:
        b.output(x)
    shapes = [tuple(b.shape[x]) for x in xs]
    how = b.choice(["concat", "concat", "add", "mul", "outputs"])
    if how in ("add", "mul") and len(set(shapes)) == 1:
        y = xs[0]
        for x in xs[1:]:
            y = b.binary("Add" if how == "add" or b.p(0.3) else "Mul", y, x)
        return y
    if how == "outputs" and len(xs) > 1:
        for x in xs[1:]:
            b.output(x)
        return xs[0]
    if len(xs) == 1:
        return xs[0]
    return b.concat(xs, axis)


# ---- conv family ------------------------------------------------------------------------------
def conv_fanout(b, x):
    """Several convolutions reading x (the conv-merge / enlarge-merge targets)."""
    c = b.shape[x][1]
    nb = int(b.rng.integers(2, 5))
    stride = 2 if b.shape[x][2] >= 8 and b.p(0.25) else 1
    shared_act = b.choice(ACTS)
    same_cout = b.p(0.5)
    cout0 = b.choice([4, 8, 12, 16])
    bias_mode = b.choice(["all", "none", "mixed"])
    outs = []
    exotic = b.p(0.3)  # non-square / even kernels, valid and auto pads
    pad0 = b.choice(["same", "same", "valid", "upper", "lower"]) if exotic else "same"
    for i in range(nb):
        k = b.choice([1, 3, 3, 3, 1, 5])
        pad = pad0
        if exotic:
            k = b.choice([1, 3, (1, 3), (3, 1), (3, 3), 2, (1, 5), (5, 1)])
            if b.p(0.3):
                pad = b.choice(["same", "valid", "upper", "lower"])
        cout = cout0 if same_cout else b.choice([4, 8, 12, 16])
        bias = {"all": True, "none": False, "mixed": b.p(0.5)}[bias_mode]
        group = b.choice([g for g in (2, 4) if c % g == 0 and cout % g == 0] or [1]) if b.p(0.15) else 1
        y = b.conv(x, cout, k, stride=stride, group=group, bias=bias, auto_pad=b.p(0.1), pad=pad)
        if b.p(0.2):
            y = b.batchnorm(y)
        y = b.act(y, shared_act if b.p(0.8) else b.choice(ACTS))
        outs.append(y)
    if len(outs) > 2 and b.p(0.3):
        # pool each branch the same way, then concat (poolmax-concat)
        kind = b.choice(["MaxPool", "AveragePool"])
        outs = [b.pool(y, kind, 3, 1, 1) if min(b.shape[y][2:]) >= 2 else y for y in outs]
    return combine(b, outs, 1)


def conv_bn_act(b, x):
    c = b.shape[x][1]
    y = b.conv(x, b.choice([c, 2 * c if c <= 16 else c, max(4, c // 2)]), b.choice([1, 3]),
               bias=b.p(0.3))
    y = b.batchnorm(y)
    return b.act(y, b.choice(["relu", "relu", "tanh", "sigmoid"]))


def grouped(b, x):
    c = b.shape[x][1]
    groups = [g for g in (2, 4, c) if c % g == 0]
    g = b.choice(groups)
    cout = c if g == c else b.choice([c, 2 * c if c <= 16 else c])
    y = b.conv(x, cout, b.choice([1, 3, 3]), stride=b.choice([1, 1, 2]) if b.shape[x][2] >= 8 else 1,
               group=g)
    return b.act(y, b.choice(ACTS))


def residual(b, x):
    """y = act(conv(x)) (+|*) x, with a broadcast per-channel term somewhere."""
    c = b.shape[x][1]
    y = b.conv(x, c, b.choice([1, 3]))
    if b.p(0.5):
        y = b.binary(b.choice(["Add", "Mul"]), y, chan_bcast(b, c))
    y = b.act(y, b.choice(ACTS))
    if b.p(0.5):
        y2 = b.conv(x, c, b.choice([1, 3]))
        y = b.binary("Add", y, y2)
    out = b.binary(b.choice(["Add", "Add", "Mul"]), y, x)
    if b.p(0.3):
        out = b.binary(b.choice(["Add", "Mul"]), chan_bcast(b, c), out)
    return out


def split_convs(b, x):
    """Split on channels (equal or uneven), a conv per part, concat or add back."""
    c = b.shape[x][1]
    if c < 4:
        return x
    if b.p(0.5) and c % 2 == 0:
        sizes = [c // 2, c // 2]
    else:
        first = int(b.rng.integers(1, c))
        sizes = [first, c - first]
        if c >= 6 and b.p(0.4):
            a = int(b.rng.integers(1, c - 1))
            bb = int(b.rng.integers(1, c - a))
            sizes = [a, bb, c - a - bb]
    parts = b.split(x, 1, sizes)
    cout = b.choice([4, 8])
    act = b.choice(ACTS)
    ys = []
    for p in parts:
        ys.append(b.act(b.conv(p, cout, b.choice([1, 3])), act) if b.p(0.8) else p)
    if len(set(tuple(b.shape[y]) for y in ys)) == 1 and b.p(0.5):
        y = ys[0]
        for z in ys[1:]:
            y = b.binary("Add", y, z)
        return y
    return b.concat(ys, 1)


def two_input_sums(b, x1, x2):
    """sum of convs over the same two inputs (conv-sum-concat / conv-sum-merge)."""
    ys = []
    k = b.choice([1, 3])
    for _ in range(int(b.rng.integers(1, 3))):
        cout = b.choice([4, 8])
        ys.append(b.act(b.binary("Add", b.conv(x1, cout, k, bias=False),
                                 b.conv(x2, cout, k, bias=b.p(0.5))), b.choice(ACTS)))
    return combine(b, ys, 1)


def shared_weight_convs(b, x1, x2):
    """one weight used on two inputs (conv-merge-batch)."""
    c = b.shape[x1][1]
    w = b.weight(b.choice([4, 8]), c, 3, 3, fan_in=c * 9)
    bias = b.weight(b.shape[w][0], fan_in=4, prefix="b") if b.p(0.5) else None
    act = b.choice(ACTS)
    y1 = b.act(b.conv(x1, 0, w=w, b=bias), act)
    y2 = b.act(b.conv(x2, 0, w=w, b=bias), act)
    return combine(b, [y1, y2], 1)


def weight_sum_conv(b, x):
    """conv(x, w1 + w2): a weight-only subgraph (conv-linear-weight, constant folding)."""
    c = b.shape[x][1]
    cout = b.choice([4, 8])
    w1 = b.weight(cout, c, 3, 3, fan_in=c * 9)
    w2 = b.weight(cout, c, 3, 3, fan_in=c * 9)
    w = b.binary("Add", w1, w2)
    return b.act(b.conv(x, 0, w=w, bias=b.p(0.5)), b.choice(ACTS))


def scalar_mul_conv(b, x):
    c = b.shape[x][1]
    y = b.conv(x, b.choice([4, 8, c]), b.choice([1, 3]))
    s = b.init(np.array(b.rng.uniform(0.5, 2.0), dtype=np.float32), "s")
    y = b.binary("Mul", y, s) if b.p(0.5) else b.binary("Mul", s, y)
    return b.act(y, b.choice(ACTS))


def spatial_transpose(b, x):
    """Transpose H/W, an activation / add, transpose back."""
    perm = [0, 1, 3, 2]
    t = b.transpose(x, perm)
    t = b.act(t, b.choice(["relu", "tanh", "sigmoid"]))
    if b.p(0.5):
        t = b.binary("Add", t, chan_bcast(b, b.shape[x][1]))
    return b.transpose(t, perm)


def squeeze_excite(b, x):
    """x * sigmoid(conv(relu(conv(GAP(x))))): a computed [1,C,1,1] broadcast operand."""
    n, c, h, w = b.shape[x]
    g = b.node("GlobalAveragePool", [x], [n, c, 1, 1])
    r = b.act(b.conv(g, max(2, c // 4), 1, bias=True), "relu")
    s = b.act(b.conv(r, c, 1, bias=True), "sigmoid")
    return b.binary("Mul", x, s) if b.p(0.5) else b.binary("Mul", s, x)


def batch_concat(b, x):
    """Two tensors stacked on the batch axis, a conv, split back (conv-concat-batch)."""
    c = b.shape[x][1]
    other = b.act(b.conv(x, c, 3), b.choice(ACTS))
    cat = b.concat([x, other], 0)
    y = b.act(b.conv(cat, b.choice([4, 8]), b.choice([1, 3])), b.choice(ACTS))
    y0, y1 = b.split(y, 0, [1, 1])
    if b.p(0.3):
        b.output(y1)
        return y0
    return b.binary(b.choice(["Add", "Mul"]), y0, y1)


def self_ops(b, x):
    """The same tensor twice in one node: Add(x, x), Mul(x, x), Concat(x, x)."""
    how = b.choice(["Add", "Mul", "Concat"])
    if how == "Concat":
        y = b.concat([x, x], 1)
        return b.act(b.conv(y, b.choice([4, 8]), 1), b.choice(ACTS))
    y = b.binary(how, x, x)
    return b.act(y, b.choice(["tanh", "sigmoid"]))


def layout_transpose(b, x):
    """NCHW -> NHWC -> act / broadcast add -> NCHW (non-involutive permutations)."""
    c = b.shape[x][1]
    t = b.transpose(x, [0, 2, 3, 1])
    t = b.act(t, b.choice(["relu", "tanh", "sigmoid"]))
    if b.p(0.5):
        t = b.binary("Add", t, b.init((b.rng.standard_normal([c]) * 0.5).astype(np.float32), "fb"))
    return b.transpose(t, [0, 3, 1, 2])


def opaque_binary(b, x):
    """An opaque two-input op between two conv branches."""
    c = b.shape[x][1]
    y1 = b.act(b.conv(x, c, 1), b.choice(ACTS))
    y2 = b.act(b.conv(x, c, 3), "sigmoid")
    op = b.choice(["Sub", "Max", "Min", "Div"])
    if op == "Div":
        y2 = b.binary("Add", y2, b.init(np.array(1.0, dtype=np.float32), "one"))
    return b.node(op, [y1, y2], b.shape[y1])


def pool_block(b, x):
    h = min(b.shape[x][2:])
    if b.p(0.3):  # relu before / after max pooling (poolmax-relu)
        x = b.act(x, "relu")
        y = b.pool(x, "MaxPool", 3, 1, 1)
        return b.act(b.conv(y, b.choice([4, 8]), 3), b.choice(ACTS))
    if h >= 8 and b.p(0.5):
        return b.pool(x, b.choice(["MaxPool", "AveragePool"]), 2, 2, 0)
    return b.pool(x, b.choice(["MaxPool", "AveragePool"]), 3, 1, 1)


def conv_trunk(b, x, steps):
    """A random sequence of conv blocks; returns the last tensor and a list of side tensors."""
    side = []
    for _ in range(steps):
        if b.shape[x][1] > 32:  # keep channels small
            x = b.act(b.conv(x, b.choice([8, 16]), 1), b.choice(ACTS))
        c = b.shape[x][1]
        kind = b.choice(["fanout", "fanout", "fanout", "bn", "grouped", "residual", "split",
                         "sums", "shared", "wsum", "scalar", "transpose", "pool", "opaque",
                         "fanout", "residual", "se", "batch", "self", "layout", "opaque2",
                         "resplit"])
        if kind == "fanout":
            y = conv_fanout(b, x)
        elif kind == "bn":
            y = conv_bn_act(b, x)
        elif kind == "grouped":
            y = grouped(b, x)
        elif kind == "residual":
            y = residual(b, x)
        elif kind == "split":
            y = split_convs(b, x)
        elif kind == "sums":
            other = side[-1] if side and b.shape[side[-1]][2:] == b.shape[x][2:] else None
            if other is None:
                other = b.act(b.conv(x, b.choice([4, 8]), 1), "relu")
            y = two_input_sums(b, x, other)
        elif kind == "shared":
            other = b.act(b.conv(x, c, 1), b.choice(ACTS))
            y = shared_weight_convs(b, x, other)
        elif kind == "wsum":
            y = weight_sum_conv(b, x)
        elif kind == "scalar":
            y = scalar_mul_conv(b, x)
        elif kind == "transpose":
            y = spatial_transpose(b, x)
        elif kind == "pool":
            y = pool_block(b, x)
        elif kind == "se":
            y = squeeze_excite(b, x)
        elif kind == "batch":
            y = batch_concat(b, x)
        elif kind == "self":
            y = self_ops(b, x)
        elif kind == "layout":
            y = layout_transpose(b, x)
        elif kind == "resplit":
            y = resplit(b, x, 1)
        elif kind == "opaque2":
            y = opaque_binary(b, x)
        elif b.p(0.3):
            y = b.node("Dropout", [x], b.shape[x]) if b.p(0.5) else b.node("Identity", [x], b.shape[x])
        else:
            y = b.opaque(x)
        if b.p(0.2):
            b.output(y)  # an intermediate that is also consumed further
        side.append(x)
        x = y
    return x, side


def gen_conv(b):
    c = b.choice([3, 4, 8, 16])
    hw = b.choice([8, 9, 10, 12, 15, 16])
    wd = hw if b.p(0.7) else b.choice([8, 11, 12, 16])
    x = b.input([1, c, hw, wd], "image")
    if b.p(0.2):
        x2 = b.input([1, c, hw, wd], "image2")
        y = two_input_sums(b, x, x2) if b.p(0.5) else shared_weight_convs(b, x, x2)
        x = y
    x, side = conv_trunk(b, x, int(b.rng.integers(2, 5)) * b.size)
    if b.p(0.4):
        # classifier head: GAP -> Flatten -> Gemm(transB)
        g = b.node("GlobalAveragePool", [x], b.shape[x][:2] + [1, 1])
        f = b.node("Flatten", [g], b.shape[x][:2], axis=1)
        y = b.gemm(f, b.choice([5, 10]), trans_b=b.p(0.8))
        b.output(y)
        if b.p(0.3):
            b.output(x)
    else:
        b.output(x)
    if side and b.p(0.3):
        b.output(b.act(b.conv(side[-1], 4, 1), "relu"))


# ---- matmul families ----------------------------------------------------------------------------
def mm_fanout(b, x, three_d=False):
    k = b.shape[x][-1]
    nb = int(b.rng.integers(2, 5))
    shared_act = b.choice(ACTS)
    same_n = b.p(0.5)
    n0 = b.choice([8, 16, 24, 32])
    use_gemm = (not three_d) and b.p(0.3)
    outs = []
    for i in range(nb):
        n = n0 if same_n else b.choice([8, 16, 24, 32])
        if use_gemm:
            y = b.gemm(x, n, trans_b=b.p(0.7), bias=b.p(0.7))
        else:
            y = b.matmul(x, b.weight(k, n, fan_in=k))
            if b.p(0.5):
                y = b.binary("Add", y, b.weight(n, fan_in=4, prefix="b"))
        y = b.act(y, shared_act if b.p(0.8) else b.choice(ACTS))
        outs.append(y)
    return combine(b, outs, -1)


def mm_chain(b, x):
    """x @ A @ B (associativity) or (x @ A) * s (scalar)."""
    k = b.shape[x][-1]
    m = b.choice([8, 16])
    y = b.matmul(x, b.weight(k, m, fan_in=k))
    if b.p(0.4):
        s = b.init(np.array(b.rng.uniform(0.5, 2.0), dtype=np.float32), "s")
        y = b.binary("Mul", y, s)
    y = b.matmul(y, b.weight(m, b.choice([8, 16, 24]), fan_in=m))
    return b.act(y, b.choice(ACTS))


def mm_transpose(b, x):
    """Transpose of a product, used as a right operand, transposed back (rank 2 or 3)."""
    s = b.shape[x]
    k = s[-1]
    perm = [1, 0] if len(s) == 2 else [0, 2, 1]
    y = b.matmul(x, b.weight(k, b.choice([8, 16]), fan_in=k))  # [.., m, n]
    t = b.transpose(y, perm)  # [.., n, m]
    t = b.act(t, b.choice(ACTS))
    if b.p(0.5):
        # V @ t: [p, n] @ [.., n, m] -> [.., p, m]
        n = b.shape[t][-2]
        t = b.matmul(b.weight(b.choice([8, 16]), n, fan_in=n), t)
    return b.transpose(t, perm)


def mm_reshape(b, x):
    s = b.shape[x]
    k = s[-1]
    if k % 2:
        return x
    if len(s) == 2:
        r = b.reshape(x, [s[0], k // 2, 2])
        if b.p(0.5):
            r = b.transpose(r, [0, 2, 1])
            r = b.act(r, b.choice(ACTS))
            r = b.transpose(r, [0, 2, 1])
        if b.p(0.3):
            r = b.reshape(r, [s[0] * k // 2, 2])
        return b.reshape(r, [s[0], k])
    r = b.reshape(x, [s[0] * s[1], k])
    r = b.act(b.matmul(r, b.weight(k, k, fan_in=k)), b.choice(ACTS))
    return b.reshape(r, s)


def mm_split(b, x):
    k = b.shape[x][-1]
    if k < 4:
        return x
    if k % 2 == 0 and b.p(0.5):
        sizes = [k // 2, k // 2]
    else:
        a = int(b.rng.integers(1, k))
        sizes = [a, k - a]
    parts = b.split(x, -1 if b.p(0.5) else len(b.shape[x]) - 1, sizes)
    act = b.choice(ACTS)
    n = b.choice([8, 16])
    ys = [b.act(b.matmul(p, b.weight(b.shape[p][-1], n)), act) for p in parts]
    return combine(b, ys, -1)


def mm_attention(b, x):
    """softmax((x Wq)(x Wk)^T) (x Wv): products of two activations (rank 2 or 3)."""
    s = b.shape[x]
    k = s[-1]
    d = b.choice([8, 16])
    q = b.matmul(x, b.weight(k, d, fan_in=k))
    kk = b.matmul(x, b.weight(k, d, fan_in=k))
    v = b.matmul(x, b.weight(k, d, fan_in=k))
    perm = [1, 0] if len(s) == 2 else [0, 2, 1]
    kt = b.transpose(kk, perm)
    sc = b.matmul(q, kt)
    if b.p(0.5):
        sc = b.binary("Mul", sc, b.init(np.array(1 / np.sqrt(d), dtype=np.float32), "s"))
    sm = b.node("Softmax", [sc], b.shape[sc], axis=len(s) - 1) if b.p(0.7) else b.act(sc, "sigmoid")
    return b.matmul(sm, v)


def mm_gemm_transa(b, x):
    """Gemm(transA) on a transposed activation."""
    m, k = b.shape[x]
    t = b.transpose(x, [1, 0])
    n = b.choice([8, 16])
    w = b.weight(k, n, fan_in=k)
    ins = [t, w] + ([b.weight(n, fan_in=4, prefix="b")] if b.p(0.5) else [])
    return b.act(b.node("Gemm", ins, [m, n], transA=1), b.choice(ACTS))


def resplit(b, x, axis):
    """Concat of branches, a Split whose boundaries differ from the concat's, the parts
    concatenated back in another order (split trees vs concat associativity)."""
    ax = axis % len(b.shape[x])
    parts = [b.act(x, b.choice(["relu", "tanh", "sigmoid"])), x]
    if b.p(0.5):
        parts.append(b.act(x, b.choice(["relu", "tanh", "sigmoid"])))
    cat = b.concat(parts, axis)
    total = b.shape[cat][ax]
    cuts = sorted(set(int(v) for v in b.rng.integers(1, total, size=int(b.rng.integers(1, 3)))))
    sizes = [e - s_ for s_, e in zip([0] + cuts, cuts + [total])]
    pieces = b.split(cat, axis, sizes)
    pieces = [b.act(p, b.choice(ACTS)) for p in pieces]
    if b.p(0.5):
        pieces = pieces[::-1]
    return b.concat(pieces, axis) if len(pieces) > 1 else pieces[0]


def mm_bias_mul(b, x):
    n = b.shape[x][-1]
    y = b.binary(b.choice(["Add", "Mul"]), x, feat_bcast(b, n))
    return b.act(y, b.choice(ACTS))


def mm_trunk(b, x, steps, three_d=False):
    for _ in range(steps):
        if b.shape[x][-1] > 48:
            x = b.act(b.matmul(x, b.weight(b.shape[x][-1], 16)), b.choice(ACTS))
        kind = b.choice(["fanout", "fanout", "fanout", "chain", "transpose", "reshape", "split",
                         "bias", "opaque", "gemm", "attention", "transa", "self", "resplit"])
        if kind == "transa" and (three_d or len(b.shape[x]) != 2):
            kind = "fanout"
        if kind == "fanout":
            y = mm_fanout(b, x, three_d)
        elif kind == "chain":
            y = mm_chain(b, x)
        elif kind == "transpose":
            y = mm_transpose(b, x)
        elif kind == "reshape":
            y = mm_reshape(b, x)
        elif kind == "split":
            y = mm_split(b, x)
        elif kind == "bias":
            y = mm_bias_mul(b, x)
        elif kind == "resplit":
            y = resplit(b, x, -1)
            if b.shape[y][-1] > 32:
                y = b.act(b.matmul(y, b.weight(b.shape[y][-1], 16)), b.choice(ACTS))
        elif kind == "attention":
            y = mm_attention(b, x)
        elif kind == "transa":
            y = mm_gemm_transa(b, x)
        elif kind == "self":
            how = b.choice(["Add", "Mul", "Concat"])
            y = b.concat([x, x], -1) if how == "Concat" else b.act(b.binary(how, x, x), "tanh")
        elif kind == "gemm" and not three_d:
            y = b.act(b.gemm(x, b.choice([8, 16, 24]), trans_b=b.p(0.7), bias=b.p(0.7),
                             alpha=b.choice([1.0, 1.0, 0.5]), beta=b.choice([1.0, 1.0, 2.0])),
                      b.choice(ACTS))
        else:
            y = b.opaque(x)
        if b.p(0.2):
            b.output(y)
        x = y
    return x


def gen_mm(b):
    m = b.choice([1, 1, 2, 4, 8])
    k = b.choice([8, 12, 16, 32])
    x = b.input([m, k], "x")
    y = mm_trunk(b, x, int(b.rng.integers(2, 5)) * b.size)
    b.output(y)


def gen_mm3d(b):
    s = b.choice([2, 4, 8])
    k = b.choice([8, 16, 32])
    x = b.input([1, s, k], "x")
    y = mm_trunk(b, x, int(b.rng.integers(2, 5)) * b.size, three_d=True)
    b.output(y)


def gen_rnn(b):
    """An unrolled RNN / GRU / LSTM-like cell: x_t @ Wx + h @ Wh (+ b), gates, shared weights."""
    steps = int(b.rng.integers(2, 5)) * b.size
    k = b.choice([8, 16])
    hd = b.choice([8, 16])
    ngates = b.choice([1, 2, 3, 4])
    cell = b.choice(["split", "separate"])
    # inputs: one [T, K] tensor split on axis 0, or one graph input per step
    if b.p(0.5):
        xs = b.split(b.input([steps, k], "xs"), 0, [1] * steps)
    else:
        xs = [b.input([1, k], f"x{t}") for t in range(steps)]
    h = b.input([1, hd], "h0") if b.p(0.5) else b.init(np.zeros((1, hd), np.float32), "h0")
    c = b.init(np.zeros((1, hd), np.float32), "c0")
    if cell == "split":
        wx = b.weight(k, ngates * hd, fan_in=k)
        use_gemm = b.p(0.5)
        wh = b.weight(ngates * hd, hd, fan_in=hd) if use_gemm else b.weight(hd, ngates * hd, fan_in=hd)
        bias = b.weight(ngates * hd, fan_in=4, prefix="b") if b.p(0.7) else None
    else:
        wx = [b.weight(k, hd, fan_in=k) for _ in range(ngates)]
        wh = [b.weight(hd, hd, fan_in=hd) for _ in range(ngates)]
        bias = [b.weight(hd, fan_in=4, prefix="b") if b.p(0.5) else None for _ in range(ngates)]
    for t, x in enumerate(xs):
        if cell == "split":
            a = b.matmul(x, wx)
            if use_gemm:
                ins = [h, wh] + ([bias] if bias else [])
                hh = b.node("Gemm", ins, [1, ngates * hd], transB=1)
            else:
                hh = b.matmul(h, wh)
                if bias:
                    hh = b.binary("Add", hh, bias)
            g = b.binary("Add", a, hh)
            gates = b.split(g, 1, [hd] * ngates) if ngates > 1 else [g]
        else:
            gates = []
            for i in range(ngates):
                g = b.binary("Add", b.matmul(x, wx[i]), b.matmul(h, wh[i]))
                if bias[i]:
                    g = b.binary("Add", g, bias[i])
                gates.append(g)
        if ngates == 1:
            h = b.act(gates[0], "tanh")
        elif ngates == 2:  # h' = z * h + (1 - z)-ish: z * h + tanh(n)
            z = b.act(gates[0], "sigmoid")
            n = b.act(gates[1], "tanh")
            h = b.binary("Add", b.binary("Mul", z, h), n)
        elif ngates == 3:
            z = b.act(gates[0], "sigmoid")
            r = b.act(gates[1], "sigmoid")
            n = b.act(gates[2], "tanh")
            h = b.binary("Add", b.binary("Mul", z, h), b.binary("Mul", r, n))
        else:
            i_, f_, o_ = (b.act(g, "sigmoid") for g in gates[:3])
            cc = b.act(gates[3], "tanh")
            c = b.binary("Add", b.binary("Mul", f_, c), b.binary("Mul", i_, cc))
            h = b.binary("Mul", o_, b.act(c, "tanh"))
        if b.p(0.25) and t < len(xs) - 1:
            b.output(h)  # per-step output that also feeds the next step
    if b.p(0.3):
        h = b.opaque(h)
    if b.p(0.4):
        h = b.gemm(h, b.choice([4, 10]), trans_b=True)
    b.output(h)


def gen_mixed(b):
    c = b.choice([3, 4, 8])
    hw = b.choice([8, 12])
    x = b.input([1, c, hw, hw], "image")
    x, _ = conv_trunk(b, x, int(b.rng.integers(1, 3)) * b.size)
    n, c, h, w = b.shape[x]
    if b.p(0.5):
        g = b.node("GlobalAveragePool", [x], [n, c, 1, 1])
        f = b.node("Flatten", [g], [n, c], axis=1) if b.p(0.5) else b.reshape(g, [n, c])
    else:
        # [1, C, H, W] -> [C, H*W]: rows are channels
        f = b.reshape(x, [c, h * w])
    y = mm_trunk(b, f, int(b.rng.integers(1, 3)) * b.size)
    b.output(y)


FAMILIES = [("conv", gen_conv), ("conv", gen_conv), ("mm", gen_mm), ("mm3d", gen_mm3d),
            ("rnn", gen_rnn), ("mixed", gen_mixed)]


def generate(seed, size=1):
    rng = np.random.default_rng(seed)
    fam, fn = FAMILIES[seed % len(FAMILIES)]
    opset = [11, 13, 13, 17][int(rng.integers(4))]
    b = Builder(rng, opset, size)
    fn(b)
    return fam, b.model()
