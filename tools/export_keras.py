#!/usr/bin/env python3
"""Exports Keras applications to ONNX with tf2onnx (`tf_<Name>.onnx`, opset 13, batch 1, NHWC
input, random weights), for tools/check_exports.py: TensorFlow's converter writes other
patterns than PyTorch's (NHWC transposes around every convolution, BatchNormalization as Mul
and Add, Keras's own padding).

Needs tensorflow-cpu and tf2onnx, in a virtual environment of their own (tf2onnx pins a
protobuf the project's onnx cannot use); not installed by the tests. Measured with:
    python3 -m venv /tmp/venv-tf
    /tmp/venv-tf/bin/pip install tensorflow-cpu==2.15.1 tf2onnx==1.16.1

usage: /tmp/venv-tf/bin/python tools/export_keras.py OUT_DIR
"""
import os
import sys

import tensorflow as tf
import tf2onnx

APPS = {"ResNet50": 224, "MobileNetV2": 224, "MobileNetV3Small": 224, "EfficientNetB0": 224, "InceptionV3": 299,
        "DenseNet121": 224, "Xception": 299, "NASNetMobile": 224, "VGG16": 224, "ConvNeXtTiny": 224}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    tf.random.set_seed(0)
    for name, s in APPS.items():
        path = f"{out}/tf_{name}.onnx"
        if os.path.exists(path):
            continue
        try:
            m = getattr(tf.keras.applications, name)(weights=None, input_shape=(s, s, 3))
            spec = (tf.TensorSpec((1, s, s, 3), tf.float32, name="input"),)
            tf2onnx.convert.from_keras(m, input_signature=spec, opset=13, output_path=path)
            print(f"ok   {path}", flush=True)
        except Exception as e:  # noqa: BLE001 - report and go on with the next model
            print(f"skip tf_{name}: {type(e).__name__}: {' '.join(str(e).split())[:200]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
