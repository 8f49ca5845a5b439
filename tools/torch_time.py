#!/usr/bin/env python3
"""Independent timing of ONNX models through PyTorch's cuDNN/cuBLAS operators.

Each model is loaded with `onnx` (not with onnx-tensat's importer) and interpreted node by
node with torch operators (F.conv2d, torch.matmul, F.max_pool2d, ...): one operator call per
ONNX node, the way an ONNX runtime executes a model. Nodes whose inputs are all constants
(initializers, Shape of a static tensor, and what is computed from them) are evaluated once
beforehand (ONNX Runtime folds them too), so the timed sequence holds only the nodes that
depend on the model's inputs. Transpose and Expand materialize their result (one copy
kernel), as an ONNX runtime does.

On a GPU (--device cuda, the default when one exists) the sequence is captured once as a
torch.cuda.CUDAGraph and replayed: --warmup replays, then --repeats replays back to back
with a CUDA event between consecutive replays; the report gives the median and the
interquartile range of the per-replay times (the same method as onnx-tensat --measure's graph
mode). The eager mode (one synchronized call of the sequence per sample) is reported too.
FP32 throughout: TF32 is off for cuDNN and cuBLAS, cudnn.benchmark picks the fastest
convolution algorithm (as cudnnFind does for onnx-tensat).

--check-ort runs the same random input through ONNX Runtime (CPU) and compares the outputs,
so a wrong interpretation of a node cannot go unnoticed. Without a GPU (--device cpu) the
script interprets and checks only, and reports the eager CPU time for information.

--fuse-conv-relu runs a Conv that only a Relu reads as one cuDNN conv+bias+relu call
(torch.cudnn_convolution_relu), as onnx-tensat's executor (and ONNX Runtime's CUDA provider)
runs it; plain PyTorch launches three kernels (conv, bias, relu). --profile N profiles N eager
passes with torch.profiler: the kernel time per ONNX op type and the costliest kernels.

usage: torch_time.py MODEL.onnx... [--repeats 100] [--warmup 10] [--device cuda|cpu]
                     [--check-ort] [--json OUT.json] [--input-shape NAME:1x3x224x224]
                     [--fuse-conv-relu] [--profile N]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

ONNX_TO_TORCH = {
    onnx.TensorProto.FLOAT: torch.float32,
    onnx.TensorProto.DOUBLE: torch.float64,
    onnx.TensorProto.FLOAT16: torch.float16,
    onnx.TensorProto.INT64: torch.int64,
    onnx.TensorProto.INT32: torch.int32,
    onnx.TensorProto.INT8: torch.int8,
    onnx.TensorProto.UINT8: torch.uint8,
    onnx.TensorProto.BOOL: torch.bool,
}


class Unsupported(Exception):
    pass


def attrs_of(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


# Integer values of the models' constants (shapes, axes, pads), read once on the host: reading
# a GPU tensor's values copies it to the host, which a CUDA-graph capture forbids. Keyed by
# id(tensor); the entry holds the tensor itself, so that id is never reused by another tensor.
_CONST_INTS = {}


def as_ints(t):
    known = _CONST_INTS.get(id(t))
    if known is not None and known[0] is t:
        return list(known[1])
    return [int(v) for v in t.reshape(-1).tolist()]


def norm_axis(a, r):
    return a + r if a < 0 else a


# ---- operators ---------------------------------------------------------------------------------

def pads_2d(a, x, kernel, strides, dilations=(1, 1)):
    """ONNX pads of a 2-D window op as (top, left, bottom, right)."""
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("NOTSET", ""):
        p = list(a.get("pads", [0, 0, 0, 0]))
        return p[0], p[1], p[2], p[3]
    if auto == "VALID":
        return 0, 0, 0, 0
    out = []
    for d in range(2):
        n, k, s, dl = x.shape[2 + d], kernel[d], strides[d], dilations[d]
        o = (n + s - 1) // s
        total = max(0, (o - 1) * s + (k - 1) * dl + 1 - n)
        lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
        out.append((lo, total - lo))
    return out[0][0], out[1][0], out[0][1], out[1][1]


_ZERO_BIAS = {}
_NO_RANGE = contextlib.nullcontext()  # reusable


def op_conv(ins, a, relu=False):
    """Conv (and, with relu, the Relu that reads it: one cuDNN conv+bias+relu call)."""
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 and ins[2] is not None else None
    k = list(w.shape[2:])
    if len(k) != 2:
        raise Unsupported("Conv: only 2-D")
    s = list(a.get("strides", [1, 1]))
    dl = list(a.get("dilations", [1, 1]))
    t, l, bo, r = pads_2d(a, x, k, s, dl)
    if t != bo or l != r:
        x = F.pad(x, (l, r, t, bo))
        t = l = 0
    g = int(a.get("group", 1))
    if relu and x.is_cuda:
        if b is None:  # a zero bias made once (outside any capture), not a fill kernel per call
            key = (w.shape[0], w.device)
            b = _ZERO_BIAS.get(key)
            if b is None:
                b = _ZERO_BIAS[key] = torch.zeros(w.shape[0], device=w.device, dtype=w.dtype)
        return torch.cudnn_convolution_relu(x, w, b, s, [t, l], dl, g)
    if relu:  # the same arithmetic where cuDNN is not (checks the interpretation)
        return F.relu(F.conv2d(x, w, b, stride=s, padding=(t, l), dilation=dl, groups=g))
    return F.conv2d(x, w, b, stride=s, padding=(t, l), dilation=dl, groups=g)


def op_gemm(ins, a):
    A, B = ins[0], ins[1]
    if a.get("transA", 0):
        A = A.t()
    if a.get("transB", 0):
        B = B.t()
    y = torch.matmul(A, B)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    if alpha != 1.0:
        y = y * alpha
    if len(ins) > 2 and ins[2] is not None:
        y = y + (ins[2] * beta if beta != 1.0 else ins[2])
    return y


def op_pool(ins, a, kind):
    x = ins[0]
    k = list(a["kernel_shape"])
    if len(k) != 2:
        raise Unsupported(f"{kind}: only 2-D")
    s = list(a.get("strides", [1, 1]))
    dl = list(a.get("dilations", [1, 1]))
    t, l, bo, r = pads_2d(a, x, k, s, dl)
    ceil = bool(a.get("ceil_mode", 0))
    if kind == "MaxPool":
        if t == bo and l == r and t <= k[0] // 2 and l <= k[1] // 2:
            return F.max_pool2d(x, k, s, (t, l), dl, ceil_mode=ceil)
        x = F.pad(x, (l, r, t, bo), value=-math.inf)
        return F.max_pool2d(x, k, s, 0, dl, ceil_mode=ceil)
    if dl != [1, 1]:
        raise Unsupported("AveragePool with dilations")
    cip = bool(a.get("count_include_pad", 0))
    if t == bo and l == r and t <= k[0] // 2 and l <= k[1] // 2:
        return F.avg_pool2d(x, k, s, (t, l), ceil_mode=ceil, count_include_pad=cip)
    raise Unsupported("AveragePool with asymmetric pads")


def op_softmax(ins, a, opset, log):
    x = ins[0]
    r = x.dim()
    if opset < 13:
        axis = norm_axis(int(a.get("axis", 1)), r)
        shape = x.shape
        y = x.reshape(int(np.prod(shape[:axis])) if axis else 1, -1)
        y = F.log_softmax(y, dim=1) if log else F.softmax(y, dim=1)
        return y.reshape(shape)
    axis = norm_axis(int(a.get("axis", -1)), r)
    return F.log_softmax(x, dim=axis) if log else F.softmax(x, dim=axis)


def reduce_axes(ins, a, opset, input_from):
    if opset >= input_from:
        axes = as_ints(ins[1]) if len(ins) > 1 and ins[1] is not None else []
        if not axes and a.get("noop_with_empty_axes", 0):
            return None
    else:
        axes = list(a.get("axes", []))
    return axes or list(range(ins[0].dim()))


def op_reduce(ins, a, opset, kind):
    input_from = 13 if kind == "ReduceSum" else 18
    axes = reduce_axes(ins, a, opset, input_from)
    x = ins[0]
    if axes is None:
        return x
    keep = bool(a.get("keepdims", 1))
    axes = [norm_axis(v, x.dim()) for v in axes]
    if kind == "ReduceMean":
        return torch.mean(x, dim=axes, keepdim=keep)
    if kind == "ReduceSum":
        return torch.sum(x, dim=axes, keepdim=keep)
    if kind == "ReduceMax":
        return torch.amax(x, dim=axes, keepdim=keep)
    raise Unsupported(kind)


def op_pad(ins, a, opset):
    x = ins[0]
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if opset < 11:
        pads = list(a.get("pads", a.get("paddings", [])))
        value = float(a.get("value", 0.0))
        axes = list(range(x.dim()))
    else:
        pads = as_ints(ins[1])
        value = float(ins[2].reshape(-1)[0]) if len(ins) > 2 and ins[2] is not None else 0.0
        axes = as_ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(x.dim()))
    r = x.dim()
    n = len(axes)
    begin, end = [0] * r, [0] * r
    for i, ax in enumerate(axes):
        ax = norm_axis(ax, r)
        begin[ax], end[ax] = pads[i], pads[i + n]
    # Negative pads crop first; then F.pad takes (last dim first) pairs.
    sl = tuple(slice(max(0, -b), x.shape[d] - max(0, -e)) for d, (b, e) in enumerate(zip(begin, end)))
    x = x[sl]
    tp = []
    for d in reversed(range(r)):
        tp += [max(0, begin[d]), max(0, end[d])]
    if not any(tp):
        return x
    tmode = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}.get(mode)
    if tmode is None:
        raise Unsupported(f"Pad mode {mode}")
    if tmode == "constant":
        return F.pad(x, tp, mode="constant", value=value)
    # reflect/replicate pad only the trailing dims in torch: move padded dims last.
    padded = [d for d in range(r) if begin[d] > 0 or end[d] > 0]
    if len(padded) > 3:
        raise Unsupported("Pad: more than three padded dims in reflect/edge mode")
    keep = [d for d in range(r) if d not in padded]
    perm = keep + padded
    y = x.permute(perm)
    lead = y.shape[:len(keep)]
    y = y.reshape((1, int(np.prod(lead)) if lead else 1) + tuple(y.shape[len(keep):]))
    tp2 = []
    for d in reversed(padded):
        tp2 += [begin[d], end[d]]
    y = F.pad(y, tp2, mode=tmode)
    y = y.reshape(tuple(lead) + tuple(y.shape[2:]))
    inv = [perm.index(d) for d in range(r)]
    return y.permute(inv).contiguous()


def op_slice(ins, a, opset):
    x = ins[0]
    if opset < 10:
        starts, ends = list(a["starts"]), list(a["ends"])
        axes = list(a.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = as_ints(ins[1]), as_ints(ins[2])
        axes = as_ints(ins[3]) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
        steps = as_ints(ins[4]) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    idx = [slice(None)] * x.dim()
    flips = []
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax = norm_axis(ax, x.dim())
        n = x.shape[ax]
        s = s + n if s < 0 else s
        e = e + n if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), n), min(max(e, 0), n)
            idx[ax] = slice(s, e, st)
        else:
            s, e = min(max(s, 0), n - 1), min(max(e, -1), n - 1)
            # x[s:e:st] with st < 0 == flip(x)[n-1-s : n-1-e : -st]
            flips.append(ax)
            idx[ax] = slice(n - 1 - s, n - 1 - e, -st)
    if flips:
        x = torch.flip(x, flips)
    return x[tuple(idx)].contiguous()


def op_batchnorm(ins, a):
    x, scale, bias, mean, var = ins[:5]
    if a.get("training_mode", 0):
        raise Unsupported("BatchNormalization in training mode")
    return F.batch_norm(x, mean, var, scale, bias, False, 0.0, float(a.get("epsilon", 1e-5)))


def op_split(ins, a, opset, n_out):
    x = ins[0]
    axis = norm_axis(int(a.get("axis", 0)), x.dim())
    if opset >= 13 and len(ins) > 1 and ins[1] is not None:
        sizes = as_ints(ins[1])
    elif "split" in a:
        sizes = list(a["split"])
    else:
        n = x.shape[axis]
        chunk = -(-n // n_out)
        sizes = [chunk] * (n_out - 1) + [n - chunk * (n_out - 1)]
    return [t.contiguous() for t in torch.split(x, sizes, dim=axis)]


def op_reshape(ins, a):
    x = ins[0]
    shape = as_ints(ins[1])
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
    return x.reshape(shape)


def run_node(node, ins, opset, n_out):
    """One ONNX node with torch operators; returns a list of outputs."""
    t = node.op_type
    a = attrs_of(node)
    x = ins[0] if ins else None
    simple = {"Relu": F.relu, "Tanh": torch.tanh, "Sigmoid": torch.sigmoid, "Sqrt": torch.sqrt, "Erf": torch.erf,
              "Exp": torch.exp, "Log": torch.log, "Neg": torch.neg, "Abs": torch.abs, "Floor": torch.floor,
              "Ceil": torch.ceil, "Reciprocal": torch.reciprocal, "Softplus": F.softplus,
              "HardSwish": F.hardswish, "Not": torch.logical_not}
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Pow": torch.pow, "Max": torch.maximum,
              "Min": torch.minimum, "Equal": torch.eq, "Less": torch.lt, "Greater": torch.gt,
              "And": torch.logical_and, "Or": torch.logical_or}
    if t in simple:
        return [simple[t](x)]
    if t in binary and len(ins) == 2:
        return [binary[t](ins[0], ins[1])]
    if t == "Div":
        if not torch.is_floating_point(ins[0]):
            return [torch.div(ins[0], ins[1], rounding_mode="trunc")]
        return [torch.div(ins[0], ins[1])]
    if t == "Conv":
        return [op_conv(ins, a)]
    if t == "Gemm":
        return [op_gemm(ins, a)]
    if t == "MatMul":
        return [torch.matmul(ins[0], ins[1])]
    if t in ("MaxPool", "AveragePool"):
        if n_out > 1:
            raise Unsupported("MaxPool Indices output")
        return [op_pool(ins, a, t)]
    if t == "GlobalAveragePool":
        return [torch.mean(x, dim=list(range(2, x.dim())), keepdim=True)]
    if t == "GlobalMaxPool":
        return [torch.amax(x, dim=list(range(2, x.dim())), keepdim=True)]
    if t in ("Softmax", "LogSoftmax"):
        return [op_softmax(ins, a, opset, t == "LogSoftmax")]
    if t in ("ReduceMean", "ReduceSum", "ReduceMax"):
        return [op_reduce(ins, a, opset, t)]
    if t == "Clip":
        if opset < 11:
            lo, hi = a.get("min", None), a.get("max", None)
        else:
            lo = ins[1].item() if len(ins) > 1 and ins[1] is not None else None
            hi = ins[2].item() if len(ins) > 2 and ins[2] is not None else None
        return [torch.clamp(x, min=lo, max=hi)]
    if t == "LeakyRelu":
        return [F.leaky_relu(x, float(a.get("alpha", 0.01)))]
    if t == "Elu":
        return [F.elu(x, float(a.get("alpha", 1.0)))]
    if t == "HardSigmoid":
        return [torch.clamp(x * float(a.get("alpha", 0.2)) + float(a.get("beta", 0.5)), 0, 1)]
    if t == "Gelu":
        approx = a.get("approximate", b"none")
        approx = approx.decode() if isinstance(approx, bytes) else approx
        return [F.gelu(x, approximate=approx)]
    if t == "BatchNormalization":
        return [op_batchnorm(ins, a)][:n_out]
    if t == "Pad":
        return [op_pad(ins, a, opset)]
    if t == "Concat":
        return [torch.cat([v for v in ins if v is not None], dim=int(a["axis"]))]
    if t == "Split":
        return op_split(ins, a, opset, n_out)
    if t == "Reshape":
        return [op_reshape(ins, a)]
    if t == "Flatten":
        axis = norm_axis(int(a.get("axis", 1)), x.dim())
        return [x.reshape(int(np.prod(x.shape[:axis])) if axis else 1, -1)]
    if t == "Transpose":
        perm = list(a.get("perm", reversed(range(x.dim()))))
        return [x.permute(perm).contiguous()]
    if t in ("Identity", "Dropout"):
        return [x] + ([torch.ones_like(x, dtype=torch.bool)] if n_out > 1 else [])
    if t == "Gather":
        idx = ins[1]
        axis = norm_axis(int(a.get("axis", 0)), x.dim())
        flat = torch.where(idx < 0, idx + x.shape[axis], idx).reshape(-1).to(torch.int64)
        y = torch.index_select(x, axis, flat)
        return [y.reshape(tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:]))]
    if t == "Unsqueeze":
        axes = as_ints(ins[1]) if opset >= 13 else list(a["axes"])
        r = x.dim() + len(axes)
        shape = list(x.shape)
        for ax in sorted(norm_axis(v, r) for v in axes):
            shape.insert(ax, 1)
        return [x.reshape(shape)]
    if t == "Squeeze":
        axes = (as_ints(ins[1]) if len(ins) > 1 and ins[1] is not None else None) if opset >= 13 else a.get("axes")
        if axes is None:
            return [x.reshape([d for d in x.shape if d != 1])]
        axes = {norm_axis(v, x.dim()) for v in axes}
        return [x.reshape([d for i, d in enumerate(x.shape) if i not in axes])]
    if t == "Slice":
        return [op_slice(ins, a, opset)]
    if t == "Shape":
        r = x.dim()
        s, e = int(a.get("start", 0)), int(a.get("end", r))
        s, e = max(0, min(r, s + r if s < 0 else s)), max(0, min(r, e + r if e < 0 else e))
        return [torch.tensor(list(x.shape)[s:e], dtype=torch.int64, device=x.device)]
    if t == "Size":
        return [torch.tensor(x.numel(), dtype=torch.int64, device=x.device)]
    if t == "Cast":
        return [x.to(ONNX_TO_TORCH[int(a["to"])])]
    if t == "Expand":
        shape = as_ints(ins[1])
        out = torch.broadcast_shapes(tuple(x.shape), tuple(shape))
        return [x.expand(out).contiguous()]
    if t == "ConstantOfShape":
        v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
        return [torch.full(as_ints(x), v.reshape(-1)[0].item(), dtype=ONNX_TO_TORCH[a["value"].data_type]
                           if "value" in a else torch.float32, device=x.device)]
    if t == "Where":
        return [torch.where(ins[0], ins[1], ins[2])]
    raise Unsupported(f"{t} (domain '{node.domain}')")


# ---- the interpreter ---------------------------------------------------------------------------

class Model:
    """An ONNX model prepared for torch: constants folded, the input-dependent nodes listed."""

    def __init__(self, path, device, input_shapes=None, fuse_conv_relu=False):
        m = onnx.load(path)
        self.path = path
        self.device = device
        self.opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 13)
        g = m.graph
        self.consts = {}
        for init in g.initializer:
            self.consts[init.name] = torch.from_numpy(numpy_helper.to_array(init).copy()).to(device)
        init_names = set(self.consts)
        self.inputs = []
        for i in g.input:
            if i.name in init_names:
                continue
            tt = i.type.tensor_type
            shape = (input_shapes or {}).get(i.name) or [d.dim_value if d.dim_value > 0 else 1 for d in tt.shape.dim]
            self.inputs.append((i.name, list(shape), ONNX_TO_TORCH.get(tt.elem_type, torch.float32)))
        self.outputs = [o.name for o in g.output]
        self.nodes = list(g.node)
        self.runtime = []  # the nodes that depend on an input, in order
        self.sample = self.random_inputs(seed=1)
        values = dict(self.consts)
        values.update(self.sample)
        live = set(self.sample)
        with torch.no_grad():
            for n in self.nodes:
                if n.op_type == "Constant":
                    a = attrs_of(n)
                    if "value" not in a:
                        raise Unsupported("Constant without a tensor value")
                    self.consts[n.output[0]] = torch.from_numpy(numpy_helper.to_array(a["value"]).copy()).to(device)
                    values[n.output[0]] = self.consts[n.output[0]]
                    continue
                ins = [values[v] if v else None for v in n.input]
                # Shape needs only the (static) shape: it is a constant too.
                depends = n.op_type != "Shape" and any(v in live for v in n.input if v)
                outs = run_node(n, ins, self.opset, len(n.output))
                for name, val in zip(n.output, outs):
                    if not name:
                        continue
                    values[name] = val
                    if depends:
                        live.add(name)
                    else:
                        self.consts[name] = val
                if depends:
                    self.runtime.append(n)
        # --fuse-conv-relu: a Conv whose output only a Relu reads (and which is no graph output)
        # runs with that Relu as one cuDNN conv+bias+relu call (torch.cudnn_convolution_relu),
        # as onnx-tensat's executor and ONNX Runtime's CUDA provider (FusedConv) run it.
        self.fused = {}  # position in runtime of such a Conv -> position of its Relu
        if fuse_conv_relu:
            if not hasattr(torch, "cudnn_convolution_relu"):
                raise Unsupported(f"--fuse-conv-relu: this torch ({torch.__version__}) has no cudnn_convolution_relu")
            readers = {}
            for i, n in enumerate(self.runtime):
                for v in n.input:
                    if v:
                        readers.setdefault(v, []).append(i)
            for i, n in enumerate(self.runtime):
                r = readers.get(n.output[0], [])
                if (n.op_type == "Conv" and n.output[0] not in self.outputs and len(r) == 1
                        and self.runtime[r[0]].op_type == "Relu"):
                    self.fused[i] = r[0]
        self.absorbed = set(self.fused.values())
        for v in self.consts.values():
            if not v.dtype.is_floating_point and v.dtype != torch.bool and v.numel() <= 4096:
                _CONST_INTS[id(v)] = (v, tuple(int(x) for x in v.reshape(-1).tolist()))

    def random_inputs(self, seed):
        gen = torch.Generator().manual_seed(seed)
        out = {}
        for name, shape, dt in self.inputs:
            if dt.is_floating_point:
                out[name] = torch.randn(shape, generator=gen).to(dt).to(self.device)
            else:
                out[name] = torch.randint(0, 4, shape, generator=gen).to(dt).to(self.device)
        return out

    def run(self, feeds, label=False):
        """One pass over the input-dependent nodes; label: each node in a profiler range
        named onnx::OP_TYPE (onnx::Conv+Relu for a fused pair)."""
        values = dict(self.consts)
        values.update(feeds)
        for i, n in enumerate(self.runtime):
            if i in self.absorbed:
                continue
            relu = self.runtime[self.fused[i]] if i in self.fused else None
            # (No range and no name where nothing is profiled: the eager timing is host-bound.)
            rng = (torch.profiler.record_function("onnx::" + n.op_type + ("+Relu" if relu is not None else ""))
                   if label else _NO_RANGE)
            with rng:
                ins = [values[v] if v else None for v in n.input]
                if relu is not None:
                    values[relu.output[0]] = op_conv(ins, attrs_of(n), relu=True)
                    continue
                outs = run_node(n, ins, self.opset, len(n.output))
            for name, val in zip(n.output, outs):
                if name:
                    values[name] = val
        return [values[o] for o in self.outputs]


def stats(samples):
    s = sorted(samples)
    q = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else [s[0]] * 3
    return {"median_ms": statistics.median(s), "q1_ms": q[0], "q3_ms": q[2], "iqr_ms": q[2] - q[0],
            "min_ms": s[0], "max_ms": s[-1], "samples": len(s)}


def time_cuda(model, warmup, repeats):
    feeds = {k: v.clone() for k, v in model.sample.items()}
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):  # cudnn.benchmark chooses algorithms here, outside the capture
                model.run(feeds)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = model.run(feeds)
        for _ in range(warmup):
            graph.replay()
        torch.cuda.synchronize()
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(repeats + 1)]
        graph.replay()  # the GPU is busy when the first event is recorded
        for i in range(repeats):
            ev[i].record()
            graph.replay()
        ev[repeats].record()
        torch.cuda.synchronize()
        g = [ev[i].elapsed_time(ev[i + 1]) for i in range(repeats)]
        # Eager: one synchronized call of the sequence per sample.
        e = []
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(warmup):
            model.run(feeds)
        torch.cuda.synchronize()
        for _ in range(repeats):
            start.record()
            model.run(feeds)
            stop.record()
            stop.synchronize()
            e.append(start.elapsed_time(stop))
    return stats(g), stats(e), [t.detach() for t in static_out]


def profile_gpu(model, iters):
    """Where the sequence's GPU time goes, run eagerly under torch.profiler (CUPTI kernel
    durations, which launch gaps do not inflate): per ONNX op type the kernel time per pass
    (ms), the nodes and the kernels they launch; and the kernels that take the most time."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    feeds = {k: v.clone() for k, v in model.sample.items()}
    with torch.no_grad():
        for _ in range(3):
            model.run(feeds)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                model.run(feeds, label=True)
            torch.cuda.synchronize()

    def kernels_under(e):
        return len(e.kernels) + sum(kernels_under(c) for c in e.cpu_children)

    kinds, kernels = {}, {}
    total = 0.0
    for e in prof.events():
        if e.device_type == DeviceType.CPU and e.name.startswith("onnx::"):
            k = kinds.setdefault(e.name[len("onnx::"):], {"ms": 0.0, "nodes": 0.0, "kernels": 0.0})
            k["ms"] += e.device_time_total / 1e3 / iters
            k["nodes"] += 1 / iters
            k["kernels"] += kernels_under(e) / iters
        elif (e.device_type != DeviceType.CPU and not getattr(e, "is_user_annotation", False)
              and not e.name.startswith("onnx::")):
            d = e.time_range.elapsed_us() / 1e3 / iters
            kk = kernels.setdefault(e.name, {"ms": 0.0, "count": 0.0})
            kk["ms"] += d
            kk["count"] += 1 / iters
            total += d
    top = sorted(kernels.items(), key=lambda kv: -kv[1]["ms"])[:15]
    return {"iters": iters, "kernel_ms": total, "kinds": kinds,
            "top_kernels": [{"name": n[:120], **v} for n, v in top]}


def print_profile(p):
    print(f"  profile ({p['iters']} eager passes, CUPTI kernel time): {p['kernel_ms']:.4f} ms of kernels per pass")
    for name, k in sorted(p["kinds"].items(), key=lambda kv: -kv[1]["ms"]):
        print(f"    {name:22s} {k['ms']:8.4f} ms  {k['nodes']:5.0f} nodes  {k['kernels']:5.0f} kernels")
    for k in p["top_kernels"]:
        print(f"    kernel {k['ms']:8.4f} ms  x{k['count']:<4.0f} {k['name']}")


def time_cpu(model, warmup, repeats):
    with torch.no_grad():
        for _ in range(max(1, warmup // 5)):
            model.run(model.sample)
        e = []
        for _ in range(max(3, repeats // 10)):
            t = time.perf_counter()
            model.run(model.sample)
            e.append((time.perf_counter() - t) * 1e3)
    return None, stats(e), None


def check_ort(model, outputs=None):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.path, so, providers=["CPUExecutionProvider"])
    feeds = {k: v.cpu().numpy() for k, v in model.sample.items()}
    ref = sess.run(None, feeds)
    with torch.no_grad():
        got = outputs if outputs is not None else model.run(model.sample)
    for name, r, g in zip(model.outputs, ref, got):
        g = g.detach().cpu().numpy()
        if r.shape != g.shape:
            return f"{name}: shape {g.shape} vs ONNX Runtime {r.shape}"
        if np.issubdtype(r.dtype, np.floating):
            scale = max(1.0, float(np.nanmax(np.abs(r))) if r.size else 1.0)
            bad = np.abs(g - r) > 1e-3 * np.abs(r) + 1e-4 * scale
            if np.any(bad):
                i = int(np.argmax(bad))
                return f"{name}: element {i} is {g.reshape(-1)[i]}, ONNX Runtime gives {r.reshape(-1)[i]}"
        elif not np.array_equal(r, g):
            return f"{name}: integer values differ"
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--check-ort", action="store_true", help="compare the outputs with ONNX Runtime (CPU)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--input-shape", action="append", default=[], help="NAME:1x3x224x224")
    ap.add_argument("--fuse-conv-relu", action="store_true",
                    help="a Conv read only by a Relu runs as one cuDNN conv+bias+relu call, as onnx-tensat's executor runs it")
    ap.add_argument("--profile", type=int, default=0, metavar="PASSES",
                    help="also profile PASSES eager passes (GPU only): kernel time per ONNX op type, top kernels")
    a = ap.parse_args()
    if a.device == "cuda":
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    shapes = {}
    for f in a.input_shape:
        n, s = f.rsplit(":", 1)
        shapes[n] = [int(v) for v in s.split("x")]
    results = {}
    status = 0
    for path in a.models:
        r = {"device": torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu", "torch": torch.__version__}
        try:
            m = Model(path, torch.device(a.device), shapes, a.fuse_conv_relu)
            r["nodes"] = len(m.nodes)
            if a.fuse_conv_relu:
                r["fused_conv_relu"] = len(m.fused)
            r["timed_nodes"] = len(m.runtime)
            timer = time_cuda if a.device == "cuda" else time_cpu
            g, e, outs = timer(m, a.warmup, a.repeats)
            if g:
                r["graph"] = g
            r["eager"] = e
            if a.profile and a.device == "cuda":
                try:
                    r["profile"] = profile_gpu(m, a.profile)
                except Exception as ex:  # a diagnostic: never fails the timing
                    r["profile_error"] = f"{type(ex).__name__}: {ex}"
            if a.check_ort:
                r["ort_check"] = check_ort(m, outs)
                if r["ort_check"] != "ok":
                    status = 1
        except Unsupported as ex:
            r["error"] = f"unsupported: {ex}"
            status = 1
        results[path] = r
        line = f"{path}: "
        if "error" in r:
            line += r["error"]
        else:
            if "graph" in r:
                line += f"graph {r['graph']['median_ms']:.4f} ms (IQR {r['graph']['iqr_ms']:.4f}), "
            line += f"eager {r['eager']['median_ms']:.4f} ms, {r['timed_nodes']}/{r['nodes']} nodes timed"
            if "fused_conv_relu" in r:
                line += f" ({r['fused_conv_relu']} Conv+Relu fused)"
            if "ort_check" in r:
                line += f", vs ONNX Runtime: {r['ort_check']}"
        print(line, flush=True)
        if "profile" in r:
            print_profile(r["profile"])
        elif "profile_error" in r:
            print(f"  profile failed: {r['profile_error']}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
