// Runtime fusion: what the runtimes a model is deployed on fuse when they load it, so that the
// costs the tool predicts and the times its executor measures compare like with like.
//
// A Conv that only a Relu reads runs as one call, the convolution with the relu fused: ONNX
// Runtime's Conv+Activation fusion (FusedConv on its CUDA provider), TensorRT, cuDNN's
// conv+bias+activation. The tensor language can write such a pair either way, (relu (conv ..
// none ..)) or (conv .. relu ..), but an ONNX file only the first: an ONNX Conv has no
// activation, so the exporter writes (conv .. relu ..) as a Conv and a Relu. Without this rule a
// model's "before" would be charged a relu kernel per convolution that its "after" is not,
// although both files are the same Conv+Relu pairs to a runtime (a PyTorch ResNet-50 export:
// 6.6% predicted, 0.0% measured, H100, 2026-11-27).
//
// Only relu: ONNX Runtime's CUDA FusedConv and cuDNN's fused call take no other activation.
#pragma once

#include <cstdint>
#include <vector>

#include "lang/graph.h"

namespace tensat::ir {

/// Per node of g: the conv node that node absorbs, or -1. A relu absorbs its operand when the
/// operand is a conv with ACT none, no graph output, that no other node reads (counting the
/// nodes with live[id] set; every node without `live`). The pair then runs, and is priced, as
/// the conv with ACT relu (fused_conv_children), computing the relu's value; the conv's own
/// value is never computed. TENSAT_RUNTIME_FUSION=0 in the environment turns the rule off (for
/// comparisons; read once).
std::vector<int64_t> relu_conv_fusions(const Graph& g, const std::vector<bool>* live = nullptr);

/// Whether the rule applies (TENSAT_RUNTIME_FUSION is not "0"; read once).
bool runtime_fusion_enabled();

/// The child types of the fused call that relu node `relu` runs in place of conv `conv`: the
/// conv's child types with its ACT parameter relu. The pointers are into g and a static value.
std::vector<const ValueType*> fused_conv_children(const Graph& g, NodeId conv);

}  // namespace tensat::ir
