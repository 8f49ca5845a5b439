#!/usr/bin/env python3
"""Exports torchvision networks to ONNX the way users get them: torch.onnx.export of the model in
eval mode, batch 1, float32, opset 13, constant folding on, static shapes. Weights are random
(torch.manual_seed), which does not change the graph or its speed.

usage: export_torchvision.py OUT_DIR [--models resnet50,googlenet,...] [--opset 13]
Default models: the networks of shared/data/cost-tables/README.md (ResNet-50, ResNeXt-50, VGG-19,
GoogLeNet, Inception-v3, DenseNet-121, MobileNet-v2, ShuffleNet-v2, SqueezeNet-1.1).
Writes OUT_DIR/tv_<name>.onnx; prints one line per model; exit 1 if any export failed.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

MODELS = {
    "resnet50": 224, "resnext50_32x4d": 224, "vgg19": 224, "googlenet": 224, "inception_v3": 299,
    "densenet121": 224, "mobilenet_v2": 224, "shufflenet_v2_x1_0": 224, "squeezenet1_1": 224,
}


def build(name):
    import torchvision
    kwargs = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=False)
    return getattr(torchvision.models, name)(**kwargs).eval()


def export(name, size, path, opset):
    torch.manual_seed(0)
    model = build(name)
    x = torch.randn(1, 3, size, size)
    tmp = path + ".tmp"
    kwargs = dict(opset_version=opset, do_constant_folding=True, input_names=["input"], output_names=["output"])
    try:  # the TorchScript exporter, what most deployed models went through
        torch.onnx.export(model, (x,), tmp, dynamo=False, **kwargs)
    except TypeError:  # a torch without the dynamo switch
        torch.onnx.export(model, (x,), tmp, **kwargs)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--opset", type=int, default=13)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    failed = 0
    for name in [m for m in a.models.split(",") if m]:
        path = os.path.join(a.out_dir, f"tv_{name}.onnx")
        try:
            with torch.no_grad():
                export(name, MODELS.get(name, 224), path, a.opset)
            print(f"ok   {path}", flush=True)
        except Exception as e:  # noqa: BLE001 - report and go on with the next model
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:300]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
