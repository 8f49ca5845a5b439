#!/usr/bin/env python3
"""Exports real networks to ONNX the ways users get them, for tools/check_exports.py.

Two exporters per network: PyTorch's TorchScript exporter (`ts_`, opset 17, constant folding,
no value_info) and its torch.export-based one (`dyn_`, opset 20 as torch 2.9 writes it, with
onnxscript's optimizer and value_info). Networks: torchvision classification, segmentation,
video and optical-flow models, SSDLite (whose post-processing has data-dependent shapes: a
clear refusal is expected), and transformers' encoders and decoders built from their configs
(BERT, RoBERTa, DistilBERT, GPT-2, Llama, Mistral, T5, BART, Whisper, ViT, MobileViT, CLIP)
with a few layers. Weights are random (torch.manual_seed(0)): the graph is what is tested.
Batch 1, float32, static shapes.

Needs torch, torchvision, transformers and onnxscript, which the tests do not install (not in
requirements.txt: several GB). Measured with torch 2.9.1, torchvision 0.24.1, transformers
5.24.0, onnxscript 0.7.2 in a virtual environment beside the project's requirements:
    python3 -m venv --system-site-packages /tmp/venv-torch
    /tmp/venv-torch/bin/pip install torch==2.9.1 torchvision==0.24.1 transformers==5.24.0 onnxscript==0.7.2

With --dynamic, every input's first dimension is the symbolic "batch", and a text model's
second one "seq" (TorchScript's dynamic_axes, torch.export's Dim), as deployed models are
exported; the files are tsd_/dynd_<name>.onnx. tools/check_exports.py fixes them with
--input-shape and checks the output at other values too.

usage: export_zoo.py OUT_DIR [--only NAME,...] [--exporters ts,dyn] [--ts-opset 17] [--dynamic]
Writes OUT_DIR/<exporter>_<name>.onnx (existing files are kept); prints one line per export;
an export PyTorch itself cannot do is printed as "skip" with its reason (exit 0).
"""
from __future__ import annotations

import argparse
import os
import re
import sys

import torch

TV_CLASSIFY = {
    "resnet18": 224, "resnet50": 224, "resnext50_32x4d": 224, "wide_resnet50_2": 224, "alexnet": 224,
    "vgg11_bn": 224, "squeezenet1_1": 224, "densenet121": 224, "googlenet": 224, "inception_v3": 299,
    "mobilenet_v2": 224, "mobilenet_v3_small": 224, "mobilenet_v3_large": 224, "mnasnet0_5": 224,
    "shufflenet_v2_x1_0": 224, "efficientnet_b0": 224, "efficientnet_v2_s": 224, "regnet_x_400mf": 224,
    "regnet_y_400mf": 224, "convnext_tiny": 224, "vit_b_16": 224, "swin_t": 224, "maxvit_t": 224,
}
TV_OTHER = ["deeplabv3_mobilenet_v3_large", "fcn_resnet50", "lraspp_mobilenet_v3_large", "r3d_18", "raft_small",
            "ssdlite"]
HF = ["bert", "roberta", "distilbert", "gpt2", "llama", "mistral", "t5_encoder", "bart_encoder", "whisper_encoder",
      "vit_hf", "mobilevit", "clip_text"]
NN = ["lstm", "transformer_encoder"]


class SegmentationOut(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


class TextModel(torch.nn.Module):
    """input_ids, attention_mask -> last_hidden_state, without a key/value cache."""

    def __init__(self, m, cache):
        super().__init__()
        self.m = m
        self.cache = cache

    def forward(self, ids, mask):
        kw = {"use_cache": False} if self.cache else {}
        return self.m(input_ids=ids, attention_mask=mask, **kw).last_hidden_state


class LSTMNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(64, 128, 2, batch_first=True)
        self.fc = torch.nn.Linear(128, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class EncoderNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 3)

    def forward(self, x):
        return self.enc(x)


def build(name):
    """(module, example args, input names)"""
    import torchvision
    if name in TV_CLASSIFY:
        kw = {"weights": None}
        if name in ("googlenet", "inception_v3"):
            kw.update(aux_logits=False, init_weights=False)
        s = TV_CLASSIFY[name]
        return getattr(torchvision.models, name)(**kw), (torch.randn(1, 3, s, s),), ["input"]
    if name in ("deeplabv3_mobilenet_v3_large", "fcn_resnet50", "lraspp_mobilenet_v3_large"):
        m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None)
        return SegmentationOut(m), (torch.randn(1, 3, 224, 224),), ["input"]
    if name == "r3d_18":
        return torchvision.models.video.r3d_18(weights=None), (torch.randn(1, 3, 8, 112, 112),), ["input"]
    if name == "raft_small":
        m = torchvision.models.optical_flow.raft_small(weights=None)
        return m, (torch.randn(1, 3, 128, 128), torch.randn(1, 3, 128, 128)), ["image1", "image2"]
    if name == "ssdlite":
        m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
        return m, ([torch.randn(3, 320, 320)],), ["input"]
    if name == "lstm":
        return LSTMNet(), (torch.randn(1, 20, 64),), ["x"]
    if name == "transformer_encoder":
        return EncoderNet(), (torch.randn(1, 32, 256),), ["x"]
    import transformers as T
    if name == "vit_hf":
        return T.ViTModel(T.ViTConfig(num_hidden_layers=4)), (torch.randn(1, 3, 224, 224),), ["pixel_values"]
    if name == "mobilevit":
        return T.MobileViTModel(T.MobileViTConfig()), (torch.randn(1, 3, 256, 256),), ["pixel_values"]
    if name == "whisper_encoder":
        cfg = T.WhisperConfig(encoder_layers=2, decoder_layers=2, d_model=384, encoder_attention_heads=6,
                              decoder_attention_heads=6)
        return T.WhisperModel(cfg).get_encoder(), (torch.randn(1, 80, 3000),), ["input_features"]
    configs = {
        "bert": lambda: T.BertModel(T.BertConfig(num_hidden_layers=4)),
        "roberta": lambda: T.RobertaModel(T.RobertaConfig(num_hidden_layers=4)),
        "distilbert": lambda: T.DistilBertModel(T.DistilBertConfig()),
        "gpt2": lambda: T.GPT2Model(T.GPT2Config(n_layer=4)),
        "llama": lambda: T.LlamaModel(T.LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                                                     num_attention_heads=8, num_key_value_heads=4, vocab_size=32000)),
        "mistral": lambda: T.MistralModel(T.MistralConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
                                                          num_attention_heads=8, num_key_value_heads=2,
                                                          vocab_size=32000)),
        "t5_encoder": lambda: T.T5EncoderModel(T.T5Config(num_layers=4, d_model=512, d_ff=2048, num_heads=8)),
        "bart_encoder": lambda: T.BartModel(T.BartConfig(encoder_layers=2, decoder_layers=2)).get_encoder(),
        "clip_text": lambda: T.CLIPTextModel(T.CLIPTextConfig(num_hidden_layers=4)),
    }
    m = configs[name]()
    ids = torch.randint(0, 1000, (1, 64))
    mask = torch.ones(1, 64, dtype=torch.long)
    if name == "clip_text":
        class Ids(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, ids):
                return self.m(input_ids=ids).last_hidden_state
        return Ids(m), (ids,), ["input_ids"]
    return TextModel(m, name in ("gpt2", "llama", "mistral")), (ids, mask), ["input_ids", "attention_mask"]


def symbolic_axes(name, args):
    """Per input: {axis: symbol}: the batch, and a text model's sequence."""
    text = name in HF and name not in ("vit_hf", "mobilevit", "whisper_encoder")
    return [{0: "batch", 1: "seq"} if text else {0: "batch"} for _ in args]


def export(name, exporter, path, ts_opset=17, dynamic=False):
    torch.manual_seed(0)
    m, args, names = build(name)
    m.eval()
    tmp = path + ".tmp"
    axes = symbolic_axes(name, args) if dynamic else None
    if dynamic:  # at batch 2: torch.export specializes a dimension it sees as 1
        args = tuple(torch.cat([a, a]) if isinstance(a, torch.Tensor) else a for a in args)
    with torch.no_grad():
        if exporter == "ts":
            torch.onnx.export(m, args, tmp, dynamo=False, opset_version=ts_opset, do_constant_folding=True,
                              input_names=names, dynamic_axes=dict(zip(names, axes)) if axes else None)
        else:
            shapes = None
            if axes:
                dims = {"batch": torch.export.Dim("batch", max=64), "seq": torch.export.Dim("seq", max=512)}
                shapes = tuple({a: dims[s] for a, s in ax.items()} for ax in axes)
            torch.onnx.export(m, args, tmp, dynamo=True, input_names=names, external_data=False, optimize=True,
                              dynamic_shapes=shapes)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--exporters", default="ts,dyn")
    ap.add_argument("--ts-opset", type=int, default=17, help="the TorchScript exporter's opset (files ts<N>_ if not 17)")
    ap.add_argument("--dynamic", action="store_true", help="symbolic batch (and sequence) dimensions: tsd_/dynd_ files")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    names = [n for n in a.only.split(",") if n] or list(TV_CLASSIFY) + TV_OTHER + HF + NN
    for exporter in a.exporters.split(","):
        for name in names:
            prefix = f"ts{a.ts_opset}" if exporter == "ts" and a.ts_opset != 17 else exporter
            prefix += "d" if a.dynamic else ""
            path = os.path.join(a.out_dir, f"{prefix}_{name}.onnx")
            if os.path.exists(path):
                continue
            try:
                export(name, exporter, path, a.ts_opset, a.dynamic)
                print(f"ok   {path}", flush=True)
            except Exception as e:  # noqa: BLE001 - PyTorch cannot export some networks one way
                msg = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(str(e).split()))[:200]  # without colours
                print(f"skip {prefix}_{name}: {type(e).__name__}: {msg}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
