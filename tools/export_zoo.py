#!/usr/bin/env python3
"""Exports real networks to ONNX the ways users get them, for tools/check_exports.py.

Two exporters per network: PyTorch's TorchScript exporter (`ts_`, opset 17, constant folding,
no value_info) and its torch.export-based one (`dyn_`, opset 20 as torch 2.9 writes it, with
onnxscript's optimizer and value_info). Networks: torchvision classification, segmentation,
video and optical-flow models, SSDLite (whose post-processing has data-dependent shapes: a
clear refusal is expected), and transformers' encoders and decoders built from their configs
(BERT, RoBERTa, DistilBERT, GPT-2, Llama, Mistral, T5, BART, Whisper, ViT, MobileViT, CLIP;
ALBERT, ELECTRA, DeBERTa-v2, MobileBERT, ConvBERT, OPT, BLOOM, GPT-NeoX, Phi, Qwen2, Gemma,
Falcon, MPNet, SqueezeBERT, Funnel, FNet, GPT-J, XLNet, Nystromformer, GPTBigCode, BigBird;
SegFormer, ConvNeXt V2, DINOv2, Swin V2, DeiT, BEiT, LeViT, PoolFormer, ResNet, RegNet, YOLOS,
MobileViT V2, EfficientNet, BiT; wav2vec 2.0, HuBERT) with a few layers. Weights are random
(torch.manual_seed(0)): the graph is what is tested.
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
    "regnet_y_400mf": 224, "convnext_tiny": 224, "vit_b_16": 224, "swin_t": 224, "maxvit_t": 224, "vit_b_32": 224,
}
TV_OTHER = ["deeplabv3_mobilenet_v3_large", "fcn_resnet50", "lraspp_mobilenet_v3_large", "r3d_18", "raft_small",
            "ssdlite", "r2plus1d_18", "mc3_18", "s3d", "mvit_v2_s"]
TV_VIDEO = {"r3d_18": (8, 112), "r2plus1d_18": (8, 112), "mc3_18": (8, 112), "s3d": (16, 224), "mvit_v2_s": (16, 224)}
HF = ["bert", "roberta", "distilbert", "gpt2", "llama", "mistral", "t5_encoder", "bart_encoder", "whisper_encoder",
      "vit_hf", "mobilevit", "clip_text", "albert", "electra", "deberta_v2", "mobilebert", "convbert", "opt", "bloom",
      "gpt_neox", "phi", "qwen2", "gemma", "falcon", "mpnet", "squeezebert", "funnel", "segformer", "convnextv2",
      "dinov2", "swinv2", "deit", "beit", "levit", "poolformer", "resnet_hf", "regnet_hf", "wav2vec2", "hubert",
      "yolos", "fnet", "gptj", "xlnet", "nystromformer", "gpt_bigcode", "big_bird", "mobilevitv2", "efficientnet_hf",
      "bit"]
HF_IMAGE = {  # name: (model class, config class, config arguments, image size)
    "segformer": ("SegformerModel", "SegformerConfig", {}, 224),
    "convnextv2": ("ConvNextV2Model", "ConvNextV2Config", dict(depths=[2, 2, 6, 2], hidden_sizes=[40, 80, 160, 320]),
                   224),
    "dinov2": ("Dinov2Model", "Dinov2Config", dict(num_hidden_layers=4, hidden_size=384, num_attention_heads=6), 224),
    "swinv2": ("Swinv2Model", "Swinv2Config", dict(depths=[2, 2, 2, 2], embed_dim=48), 224),
    "deit": ("DeiTModel", "DeiTConfig", dict(num_hidden_layers=4, hidden_size=192, num_attention_heads=3,
                                             intermediate_size=768), 224),
    "beit": ("BeitModel", "BeitConfig", dict(num_hidden_layers=4, hidden_size=192, num_attention_heads=3,
                                             intermediate_size=768, use_relative_position_bias=True), 224),
    "levit": ("LevitModel", "LevitConfig", {}, 224),
    "poolformer": ("PoolFormerModel", "PoolFormerConfig", dict(depths=[2, 2, 4, 2]), 224),
    "resnet_hf": ("ResNetModel", "ResNetConfig", {}, 224),
    "regnet_hf": ("RegNetModel", "RegNetConfig", dict(depths=[1, 2, 4, 1]), 224),
    "yolos": ("YolosModel", "YolosConfig", dict(num_hidden_layers=4, hidden_size=192, num_attention_heads=3,
                                               intermediate_size=768, image_size=[224, 224], num_detection_tokens=10),
              224),
    "mobilevitv2": ("MobileViTV2Model", "MobileViTV2Config", {}, 256),
    "efficientnet_hf": ("EfficientNetModel", "EfficientNetConfig", dict(width_coefficient=1.0, depth_coefficient=1.0,
                                                                         hidden_dim=1280), 224),
    "bit": ("BitModel", "BitConfig", dict(depths=[1, 1, 1, 1]), 224),
}
HF_AUDIO = {  # raw 1 s of 16 kHz waveform
    "wav2vec2": ("Wav2Vec2Model", "Wav2Vec2Config"),
    "hubert": ("HubertModel", "HubertConfig"),
}
DECODERS = ["gpt2", "llama", "mistral", "opt", "bloom", "gpt_neox", "phi", "qwen2", "gemma", "falcon", "gptj",
            "gpt_bigcode"]
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
    if name in TV_VIDEO:
        t, s = TV_VIDEO[name]
        return getattr(torchvision.models.video, name)(weights=None), (torch.randn(1, 3, t, s, s),), ["input"]
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
    if name in HF_IMAGE:
        model, config, kw, s = HF_IMAGE[name]
        return getattr(T, model)(getattr(T, config)(**kw)), (torch.randn(1, 3, s, s),), ["pixel_values"]
    if name in HF_AUDIO:
        model, config = HF_AUDIO[name]
        cfg = getattr(T, config)(num_hidden_layers=2, hidden_size=256, num_attention_heads=4, intermediate_size=1024)
        return getattr(T, model)(cfg), (torch.randn(1, 16000),), ["input_values"]
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
        "albert": lambda: T.AlbertModel(T.AlbertConfig(hidden_size=256, num_attention_heads=4, intermediate_size=1024,
                                                       num_hidden_layers=4)),
        "electra": lambda: T.ElectraModel(T.ElectraConfig(num_hidden_layers=4)),
        "deberta_v2": lambda: T.DebertaV2Model(T.DebertaV2Config(
            hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=1024, vocab_size=32000,
            relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=256, norm_rel_ebd="layer_norm",
            share_att_key=True, max_relative_positions=-1)),
        "mobilebert": lambda: T.MobileBertModel(T.MobileBertConfig(num_hidden_layers=4)),
        "convbert": lambda: T.ConvBertModel(T.ConvBertConfig(hidden_size=256, embedding_size=256, num_attention_heads=4,
                                                             intermediate_size=1024, num_hidden_layers=2)),
        "opt": lambda: T.OPTModel(T.OPTConfig(hidden_size=256, num_hidden_layers=2, ffn_dim=1024,
                                              num_attention_heads=4, word_embed_proj_dim=256, vocab_size=32000)),
        "bloom": lambda: T.BloomModel(T.BloomConfig(hidden_size=256, n_layer=2, n_head=4, vocab_size=32000)),
        "gpt_neox": lambda: T.GPTNeoXModel(T.GPTNeoXConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                                                           intermediate_size=1024, vocab_size=32000)),
        "phi": lambda: T.PhiModel(T.PhiConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                                              intermediate_size=1024, vocab_size=32000)),
        "qwen2": lambda: T.Qwen2Model(T.Qwen2Config(hidden_size=256, intermediate_size=704, num_hidden_layers=2,
                                                    num_attention_heads=4, num_key_value_heads=2, vocab_size=32000)),
        "gemma": lambda: T.GemmaModel(T.GemmaConfig(hidden_size=256, intermediate_size=1024, num_hidden_layers=2,
                                                    num_attention_heads=4, num_key_value_heads=1, head_dim=64,
                                                    vocab_size=32000)),
        "falcon": lambda: T.FalconModel(T.FalconConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                                                       vocab_size=32000)),
        "mpnet": lambda: T.MPNetModel(T.MPNetConfig(hidden_size=256, num_attention_heads=4, intermediate_size=1024,
                                                    num_hidden_layers=2)),
        "squeezebert": lambda: T.SqueezeBertModel(T.SqueezeBertConfig(hidden_size=256, embedding_size=256,
                                                                      num_attention_heads=4, intermediate_size=1024,
                                                                      num_hidden_layers=2)),
        "funnel": lambda: T.FunnelModel(T.FunnelConfig(block_sizes=[1, 1, 1], d_model=256, n_head=4, d_head=64,
                                                       d_inner=1024, num_decoder_layers=1)),
        "fnet": lambda: T.FNetModel(T.FNetConfig(hidden_size=256, intermediate_size=1024, num_hidden_layers=2)),
        "gptj": lambda: T.GPTJModel(T.GPTJConfig(n_embd=256, n_layer=2, n_head=4, rotary_dim=32, vocab_size=32000)),
        "xlnet": lambda: T.XLNetModel(T.XLNetConfig(d_model=256, n_layer=2, n_head=4, d_inner=1024, vocab_size=32000)),
        "nystromformer": lambda: T.NystromformerModel(T.NystromformerConfig(
            hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=1024, num_landmarks=16)),
        "gpt_bigcode": lambda: T.GPTBigCodeModel(T.GPTBigCodeConfig(n_embd=256, n_layer=2, n_head=4,
                                                                    vocab_size=32000)),
        "big_bird": lambda: T.BigBirdModel(T.BigBirdConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                                                           intermediate_size=1024, attention_type="original_full")),
    }
    m = configs[name]()
    ids = torch.randint(0, 1000, (1, 64))
    mask = torch.ones(1, 64, dtype=torch.long)
    if name in ("clip_text", "fnet"):  # no attention mask
        class Ids(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, ids):
                return self.m(input_ids=ids).last_hidden_state
        return Ids(m), (ids,), ["input_ids"]
    return TextModel(m, name in DECODERS), (ids, mask), ["input_ids", "attention_mask"]


def symbolic_axes(name, args):
    """Per input: {axis: symbol}: the batch, and a text model's sequence."""
    text = name in HF and name not in ("vit_hf", "mobilevit", "whisper_encoder", *HF_IMAGE, *HF_AUDIO)
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
