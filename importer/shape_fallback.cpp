// Output types libonnx 1.12 leaves out (see shape_fallback.h).
#include "importer/shape_fallback.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "importer/onnx_graph.h"
#include "importer/tensor_proto.h"
#include "onnx_model/window_attrs.h"

namespace tensat::detail {

namespace {

struct StaticType {
  int32_t elem = 0;
  std::vector<int64_t> dims;
};

std::optional<StaticType> static_type(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  StaticType s;
  s.elem = t.tensor_type().elem_type();
  if (s.elem == 0) return std::nullopt;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    s.dims.push_back(d.dim_value());
  }
  return s;
}

void set_type(onnx::ValueInfoProto& vi, const StaticType& s) {
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(s.elem);
  tt->clear_shape();
  auto* shape = tt->mutable_shape();
  for (int64_t d : s.dims) shape->add_dim()->set_dim_value(d);
}

// ---- Einsum -----------------------------------------------------------------------------------

// One operand's term: its labels in order, with -1 where the ellipsis stands.
std::optional<std::vector<int>> parse_term(const std::string& term) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (ellipsis || term.compare(i, 3, "...") != 0) return std::nullopt;
      ellipsis = true;
      labels.push_back(-1);
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      labels.push_back(static_cast<unsigned char>(c));
    } else {
      return std::nullopt;
    }
  }
  return labels;
}

// numpy broadcasting of two dimension lists (right-aligned); nullopt if they do not broadcast.
std::optional<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

std::optional<std::vector<int64_t>> einsum_dims(const std::string& equation, const std::vector<StaticType>& in) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    auto t = parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!t) return std::nullopt;
    terms.push_back(std::move(*t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != in.size()) return std::nullopt;
  std::map<int, int64_t> size;   // label -> dimension
  std::map<int, int> count;      // label -> occurrences over the operands
  std::vector<int64_t> ellipsis;  // broadcast of the operands' ellipsis dimensions
  bool any_ellipsis = false;
  for (size_t k = 0; k < terms.size(); ++k) {
    const std::vector<int>& t = terms[k];
    const std::vector<int64_t>& dims = in[k].dims;
    const bool has_ellipsis = std::find(t.begin(), t.end(), -1) != t.end();
    const size_t named = t.size() - (has_ellipsis ? 1 : 0);
    if (has_ellipsis ? dims.size() < named : dims.size() != named) return std::nullopt;
    const size_t spread = dims.size() - named;  // dimensions the ellipsis stands for
    size_t d = 0;
    for (int label : t) {
      if (label == -1) {
        auto b = broadcast(ellipsis, std::vector<int64_t>(dims.begin() + static_cast<std::ptrdiff_t>(d),
                                                         dims.begin() + static_cast<std::ptrdiff_t>(d + spread)));
        if (!b) return std::nullopt;
        ellipsis = *b;
        any_ellipsis = true;
        d += spread;
        continue;
      }
      auto [it, fresh] = size.emplace(label, dims[d]);
      if (!fresh && it->second != dims[d]) return std::nullopt;  // einsum does not broadcast labels
      count[label]++;
      d++;
    }
  }
  std::vector<int> out_labels;
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis, then the labels used once, in alphabetical order. With
    // both cases that order is disputed (numpy: ASCII; ONNX Runtime 1.32 refuses upper case
    // there), so such an equation is left untyped.
    if (any_ellipsis) out_labels.push_back(-1);
    bool upper = false, lower = false;
    for (const auto& [label, n] : count) {
      if (n != 1) continue;
      out_labels.push_back(label);  // std::map: in order
      (label < 'a' ? upper : lower) = true;
    }
    if (upper && lower) return std::nullopt;
  } else {
    auto t = parse_term(eq.substr(arrow + 2));
    if (!t) return std::nullopt;
    out_labels = *t;
  }
  std::vector<int64_t> out;
  std::unordered_set<int> seen;
  for (int label : out_labels) {
    if (!seen.insert(label).second) return std::nullopt;  // a label twice in the output
    if (label == -1) {
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
      continue;
    }
    auto it = size.find(label);
    if (it == size.end()) return std::nullopt;  // an output label no operand has
    out.push_back(it->second);
  }
  return out;
}

// ---- the pass -----------------------------------------------------------------------------------

std::optional<std::vector<int64_t>> int_values(const onnx::TensorProto* t) {
  if (!t) return std::nullopt;
  std::optional<WeightData> w;
  try {
    w = tensor_data(*t, t->name());
  } catch (const std::exception&) {
    return std::nullopt;  // malformed: left untyped, and the import names the node
  }
  if (!w) return std::nullopt;
  return integer_values(*w);
}

// Pad's output: pads (begin values, then end values) over `axes` (every axis when absent).
std::optional<std::vector<int64_t>> pad_dims(const std::vector<int64_t>& in, const std::vector<int64_t>& pads,
                                             std::optional<std::vector<int64_t>> axes) {
  const auto rank = static_cast<int64_t>(in.size());
  if (!axes) {
    axes.emplace();
    for (int64_t a = 0; a < rank; ++a) axes->push_back(a);
  }
  if (pads.size() != 2 * axes->size()) return std::nullopt;
  std::vector<int64_t> out = in;
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t a = (*axes)[i];
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
    const auto ua = static_cast<size_t>(a);
    if (seen[ua]) return std::nullopt;
    seen[ua] = true;
    int64_t grown = 0;
    if (__builtin_add_overflow(pads[i], pads[i + axes->size()], &grown) ||
        __builtin_add_overflow(out[ua], grown, &out[ua]) || out[ua] < 0)
      return std::nullopt;  // a malformed file
  }
  return out;
}

std::string string_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.s();
  return {};
}


std::optional<int64_t> int_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> ints_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return std::nullopt;
}

std::optional<size_t> axis_index(int64_t a, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) return std::nullopt;
  return static_cast<size_t>(a < 0 ? a + r : a);
}

const std::set<std::string>& reduce_ops() {
  static const std::set<std::string> ops = {"ReduceMax",  "ReduceMin",    "ReduceMean",      "ReduceProd",
                                            "ReduceL1",   "ReduceL2",     "ReduceLogSum",    "ReduceLogSumExp",
                                            "ReduceSumSquare", "ReduceSum"};
  return ops;
}

// A reduction whose axes are its input 1 (ReduceSum from opset 13, the others from 18).
std::optional<std::vector<int64_t>> reduce_dims(const onnx::NodeProto& n, const std::vector<int64_t>& in,
                                                const onnx::TensorProto* axes_init, bool axes_given,
                                                bool axes_empty) {
  std::vector<bool> reduced(in.size(), false);
  std::optional<std::vector<int64_t>> axes;
  if (axes_given && !axes_empty) {
    axes = int_values(axes_init);
    if (!axes) return std::nullopt;  // computed at run time
  }
  if (!axes || axes->empty()) {
    if (int_attribute(n, "noop_with_empty_axes").value_or(0) != 0) return in;
    reduced.assign(in.size(), true);
  } else {
    for (int64_t a : *axes) {  // a repeated axis is reduced once, as ONNX Runtime does
      auto i = axis_index(a, in.size());
      if (!i) return std::nullopt;
      reduced[*i] = true;
    }
  }
  const bool keep = int_attribute(n, "keepdims").value_or(1) != 0;
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d)
    if (!reduced[d] || keep) out.push_back(reduced[d] ? 1 : in[d]);
  return out;
}

// Split-18: sizes from input 1, or num_outputs chunks (the last one smaller), not both.
std::optional<std::vector<std::vector<int64_t>>> split_dims(const onnx::NodeProto& n, const std::vector<int64_t>& in,
                                                            const onnx::TensorProto* split_init, bool split_given) {
  auto axis = axis_index(int_attribute(n, "axis").value_or(0), in.size());
  if (!axis) return std::nullopt;
  const int64_t dim = in[*axis];
  const auto parts = static_cast<int64_t>(n.output_size());
  std::vector<int64_t> sizes;
  const std::optional<int64_t> num = int_attribute(n, "num_outputs");
  if (split_given == num.has_value()) return std::nullopt;  // Split-18 needs exactly one of them
  if (split_given) {
    auto v = int_values(split_init);
    if (!v || static_cast<int64_t>(v->size()) != parts) return std::nullopt;
    int64_t sum = 0;
    for (int64_t x : *v) {
      if (x < 0) return std::nullopt;
      sum += x;
    }
    if (sum != dim) return std::nullopt;
    sizes = *v;
  } else {
    if (*num != parts) return std::nullopt;
    auto chunks = split_chunks(dim, parts);
    if (!chunks) return std::nullopt;
    sizes = *chunks;
  }
  std::vector<std::vector<int64_t>> outs;
  for (int64_t size : sizes) {
    outs.push_back(in);
    outs.back()[*axis] = size;
  }
  return outs;
}

// The spatial output sizes of a window over `in` (N, C, spatial...) with `kernel` and the
// node's strides, dilations, pads and auto_pad; nullopt where they do not fit. With ceil_mode
// only explicit pads, and only where the last window starts inside the input or its left
// padding (where runtimes agree).
std::optional<std::vector<int64_t>> window_dims(const onnx::NodeProto& n, const std::vector<int64_t>& in,
                                                const std::vector<int64_t>& kernel, bool ceil) {
  if (in.size() != kernel.size() + 2) return std::nullopt;
  const size_t sp = kernel.size();
  const auto attrs = window_attrs(n, sp);
  if (!attrs) return std::nullopt;
  const auto& pads = attrs->pads;
  using AutoPad = WindowAttrs::AutoPad;
  std::vector<int64_t> out;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t k = kernel[i], s = attrs->strides[i], d = attrs->dilations[i], x = in[i + 2];
    if (k <= 0 || s <= 0 || d <= 0) return std::nullopt;
    const int64_t span = (k - 1) * d + 1;
    int64_t o = 0;
    if (attrs->auto_pad == AutoPad::NotSet) {
      const int64_t padded = x + pads[i] + pads[i + sp];
      if (padded < span) return std::nullopt;
      o = (ceil ? (padded - span + s - 1) / s : (padded - span) / s) + 1;
      // With ceil_mode a last window starting in the right padding is dropped by some runtimes
      // and kept by others: left untyped.
      if (ceil && (o - 1) * s >= x + pads[i]) return std::nullopt;
    } else if (ceil) {
      return std::nullopt;
    } else if (attrs->auto_pad == AutoPad::Valid) {
      if (x < span) return std::nullopt;
      o = (x - span) / s + 1;
    } else {  // SAME_UPPER, SAME_LOWER
      o = (x + s - 1) / s;
    }
    out.push_back(o);
  }
  return out;
}

// AveragePool-19 / LpPool-18 (dilations, ceil_mode): the output of an N-D pool.
std::optional<std::vector<int64_t>> pool_dims(const onnx::NodeProto& n, const std::vector<int64_t>& in) {
  auto kernel = ints_attribute(n, "kernel_shape");
  if (!kernel) return std::nullopt;
  auto spatial = window_dims(n, in, *kernel, int_attribute(n, "ceil_mode").value_or(0) != 0);
  if (!spatial) return std::nullopt;
  std::vector<int64_t> out(in.begin(), in.begin() + 2);
  out.insert(out.end(), spatial->begin(), spatial->end());
  return out;
}

// ---- ONNX Runtime's contrib operators (domain com.microsoft) ----------------------------------
// ONNX Runtime's graph optimizations (level "extended" and above, and its transformer
// optimizer) write fused operators of its own domain; libonnx has no schema for them. Typed
// here: those whose output follows from the inputs alone, by ONNX Runtime's definitions
// (docs/ContribOperators.md); anything else about them stays untyped.

// FusedConv: Conv (X, W, B) with an activation and an optional Z added: Conv's output.
std::optional<std::vector<int64_t>> fused_conv_dims(const onnx::NodeProto& n, const std::vector<int64_t>& x,
                                                    const std::vector<int64_t>& w) {
  if (x.size() < 3 || w.size() != x.size()) return std::nullopt;
  const int64_t group = int_attribute(n, "group").value_or(1);
  if (group <= 0 || w[1] * group != x[1] || w[0] % group != 0) return std::nullopt;
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (auto k = ints_attribute(n, "kernel_shape"); k && *k != kernel) return std::nullopt;
  auto spatial = window_dims(n, x, kernel, false);
  if (!spatial) return std::nullopt;
  std::vector<int64_t> out{x[0], w[0]};
  out.insert(out.end(), spatial->begin(), spatial->end());
  return out;
}

// FusedMatMul: alpha * op(A) op(B), op a transpose of the last two dimensions where transA /
// transB say so, the batch dimensions broadcast as MatMul's. transBatchA / transBatchB (which
// move batch dimensions too) and operands of rank 1 are not covered.
std::optional<std::vector<int64_t>> fused_matmul_dims(const onnx::NodeProto& n, std::vector<int64_t> a,
                                                      std::vector<int64_t> b) {
  if (int_attribute(n, "transBatchA").value_or(0) != 0 || int_attribute(n, "transBatchB").value_or(0) != 0)
    return std::nullopt;
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  if (int_attribute(n, "transA").value_or(0) != 0) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (int_attribute(n, "transB").value_or(0) != 0) std::swap(b[b.size() - 1], b[b.size() - 2]);
  if (a.back() != b[b.size() - 2]) return std::nullopt;
  auto batch = broadcast({a.begin(), a.end() - 2}, {b.begin(), b.end() - 2});
  if (!batch) return std::nullopt;
  batch->push_back(a[a.size() - 2]);
  batch->push_back(b.back());
  return batch;
}

// FusedGemm: Gemm (A, B, C) with an activation: [M, N] from op(A) [M, K] and op(B) [K, N].
std::optional<std::vector<int64_t>> fused_gemm_dims(const onnx::NodeProto& n, std::vector<int64_t> a,
                                                    std::vector<int64_t> b) {
  if (a.size() != 2 || b.size() != 2) return std::nullopt;
  if (int_attribute(n, "transA").value_or(0) != 0) std::swap(a[0], a[1]);
  if (int_attribute(n, "transB").value_or(0) != 0) std::swap(b[0], b[1]);
  if (a[1] != b[0]) return std::nullopt;
  return std::vector<int64_t>{a[0], b[1]};
}

std::optional<std::vector<StaticType>> contrib_output_types(
    const onnx::NodeProto& n, const std::vector<StaticType>& in,
    const std::function<const StaticType*(const onnx::NodeProto&, int)>& type_at) {
  const std::string& op = n.op_type();
  auto present = [&](int k) { return k < n.output_size() && !n.output(k).empty(); };
  auto one = [&](std::optional<std::vector<int64_t>> d) -> std::optional<std::vector<StaticType>> {
    if (!d || n.output_size() != 1) return std::nullopt;
    return std::vector<StaticType>{StaticType{in[0].elem, *d}};
  };
  // The first input's type (element-wise; FastGelu's and BiasGelu's bias is added along its
  // last dimension, which ONNX Runtime checks).
  if (op == "Gelu" || op == "FastGelu" || op == "BiasGelu" || op == "QuickGelu") return one(in[0].dims);
  if (op == "FusedConv" && in.size() >= 2) return one(fused_conv_dims(n, in[0].dims, in[1].dims));
  if (op == "FusedMatMul" && in.size() == 2) return one(fused_matmul_dims(n, in[0].dims, in[1].dims));
  if (op == "FusedGemm" && in.size() >= 2) return one(fused_gemm_dims(n, in[0].dims, in[1].dims));
  if (op == "SkipLayerNormalization" || op == "SkipSimplifiedLayerNormalization") {
    // Outputs: the normalized sum and, optionally, the mean, the inverse standard deviation
    // (training only; not covered) and the sum input + skip + bias, both of the input's shape.
    // (SkipSimplifiedLayerNormalization: the same without beta, an RMS normalization.)
    if (present(1) || present(2) || n.output_size() > 4) return std::nullopt;
    return std::vector<StaticType>(static_cast<size_t>(n.output_size()), in[0]);
  }
  if (op == "EmbedLayerNormalization") {
    // Inputs: input_ids [B, S], (segment_ids), word_embedding [V, H], ...; outputs: the
    // normalized embeddings [B, S, H], mask_index (int32 [B]) and, optionally, the embeddings'
    // sum [B, S, H] (as ONNX Runtime 1.32 gives them, whatever mask_index_type says).
    const StaticType* ids = type_at(n, 0);
    const StaticType* word = type_at(n, 2);
    if (!ids || !word || ids->dims.size() != 2 || word->dims.size() != 2 || n.output_size() > 3) return std::nullopt;
    const StaticType emb{word->elem, {ids->dims[0], ids->dims[1], word->dims[1]}};
    std::vector<StaticType> outs{emb, StaticType{onnx::TensorProto::INT32, {ids->dims[0]}}, emb};
    outs.resize(static_cast<size_t>(n.output_size()));
    return outs;
  }
  return std::nullopt;
}

// The output types of one node whose input types are known; nullopt if not covered.
std::optional<std::vector<StaticType>> output_types(
    const onnx::NodeProto& n, int64_t opset, const std::vector<StaticType>& in,
    const std::function<const onnx::TensorProto*(const onnx::NodeProto&, int)>& constant,
    const std::function<const StaticType*(const onnx::NodeProto&, int)>& type_at) {
  const std::string& op = n.op_type();
  auto given = [&](int k) { return k < n.input_size() && !n.input(k).empty(); };
  auto one = [&](std::optional<std::vector<int64_t>> d) -> std::optional<std::vector<StaticType>> {
    if (!d) return std::nullopt;
    return std::vector<StaticType>{StaticType{in[0].elem, *d}};
  };
  if (op == "Einsum") return one(einsum_dims(string_attribute(n, "equation"), in));
  if (op == "Gelu" || op == "Mish") return std::vector<StaticType>{in[0]};
  if (op == "SimplifiedLayerNormalization") {
    // ONNX Runtime's RMS normalization (its graph optimizations write it in the ONNX domain):
    // X's shape, the scale's element type (its schema's; not covered where X's differs); the
    // optional inv_std_var output (training) is not covered.
    for (int k = 1; k < n.output_size(); ++k)
      if (!n.output(k).empty()) return std::nullopt;
    if (in.size() < 2 || in[1].elem != in[0].elem) return std::nullopt;
    return std::vector<StaticType>(static_cast<size_t>(n.output_size()), in[0]);
  }
  if (op == "Pad" && given(1)) {
    auto pads = int_values(constant(n, 1));
    std::optional<std::vector<int64_t>> axes;
    if (given(3)) {
      axes = int_values(constant(n, 3));
      if (!axes) return std::nullopt;  // axes computed at run time
    }
    if (!pads) return std::nullopt;
    return one(pad_dims(in[0].dims, *pads, axes));
  }
  if (reduce_ops().count(op) && opset >= (op == "ReduceSum" ? 13 : 18)) {
    const StaticType* axes = given(1) ? type_at(n, 1) : nullptr;
    const bool empty = axes && std::find(axes->dims.begin(), axes->dims.end(), 0) != axes->dims.end();
    return one(reduce_dims(n, in[0].dims, constant(n, 1), given(1), empty));
  }
  if (op == "QuantizeLinear" && opset >= 19 && given(1)) {
    // output_dtype (21), else the zero point's type, else uint8
    int32_t elem = static_cast<int32_t>(int_attribute(n, "output_dtype").value_or(0));
    if (elem == 0 && given(2)) {
      const StaticType* zp = type_at(n, 2);
      if (!zp) return std::nullopt;
      elem = zp->elem;
    }
    return std::vector<StaticType>{StaticType{elem ? elem : onnx::TensorProto::UINT8, in[0].dims}};
  }
  if (op == "DequantizeLinear" && opset >= 19 && given(1)) {
    const StaticType* scale = type_at(n, 1);
    if (!scale) return std::nullopt;
    return std::vector<StaticType>{StaticType{scale->elem, in[0].dims}};
  }
  if (op == "Split" && opset >= 18) {
    auto parts = split_dims(n, in[0].dims, constant(n, 1), given(1));
    if (!parts) return std::nullopt;
    std::vector<StaticType> outs;
    for (auto& d : *parts) outs.push_back(StaticType{in[0].elem, d});
    return outs;
  }
  if ((op == "AveragePool" && opset >= 19) || (op == "LpPool" && opset >= 18)) return one(pool_dims(n, in[0].dims));
  return std::nullopt;
}

}  // namespace

std::string contrib_ops_typed() {
  return "FusedConv, FusedGemm, FusedMatMul (operands of rank 2 or more, without transBatchA/B), Gelu, FastGelu, "
         "BiasGelu, QuickGelu, SkipLayerNormalization and SkipSimplifiedLayerNormalization (without their mean and "
         "inv_std_var outputs) and EmbedLayerNormalization";
}

std::vector<int> nodes_hidden_from_libonnx(const onnx::ModelProto& m) {
  std::unordered_map<std::string, int64_t> opsets;
  for (const auto& o : m.opset_import()) opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  const onnx::GraphProto& g = m.graph();
  const int64_t opset = opsets.count("") ? opsets.at("") : 0;
  std::unordered_set<std::string> typed;  // values with a static type before inference
  for (const auto& i : g.input())
    if (static_type(i.type())) typed.insert(i.name());
  for (const auto& t : g.initializer()) typed.insert(t.name());
  for (const auto& vi : g.value_info())
    if (static_type(vi.type())) typed.insert(vi.name());
  for (const auto& o : g.output())
    if (static_type(o.type())) typed.insert(o.name());
  std::unordered_set<std::string> untyped;  // values libonnx cannot type in this pass
  std::vector<int> hidden;
  for (int k = 0; k < g.node_size(); ++k) {
    const onnx::NodeProto& n = g.node(k);
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    const auto version = opsets.find(domain);
    const bool schema = version != opsets.end() &&
                        onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(version->second), domain);
    bool reads_untyped = false;
    for (const auto& in : n.input()) reads_untyped = reads_untyped || (!in.empty() && untyped.count(in));
    const bool hide = hidden_from_libonnx(n, opset) || reads_untyped;
    if (hide) hidden.push_back(k);
    if (hide || !schema)
      for (const auto& o : n.output())
        if (!o.empty() && !typed.count(o)) untyped.insert(o);
  }
  return hidden;
}

bool hidden_from_libonnx(const onnx::NodeProto& n, int64_t opset) {
  if (!default_domain(n)) return false;
  const std::string& op = n.op_type();
  if (reduce_ops().count(op) && op != "ReduceSum") return opset >= 18;
  if (op == "Split" || op == "Pad" || op == "LpPool") return opset >= 18;
  // Resize-13's rules hold for Resize-18+ but for its new `axes` and aspect-ratio policy.
  if (op == "Resize")
    return opset >= 18 && (ints_attribute(n, "axes") || !string_attribute(n, "keep_aspect_ratio_policy").empty());
  if (op == "AveragePool") return opset >= 19;
  // Element types: Quantize/DequantizeLinear-19+ take theirs from output_dtype and the scale.
  if (op == "QuantizeLinear" || op == "DequantizeLinear") return opset >= 19;
  if (op == "DFT") return opset >= 20;
  return false;
}

int infer_missing_types(onnx::GraphProto& g, int64_t opset) {
  std::unordered_map<std::string, StaticType> known;
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  std::unordered_map<std::string, int> value_info_at;
  for (const auto& i : g.input())
    if (auto t = static_type(i.type())) known[i.name()] = *t;
  std::unordered_set<std::string> overridable;  // initializers also declared inputs (IR >= 4)
  for (const auto& i : g.input()) overridable.insert(i.name());
  for (const auto& t : g.initializer()) {
    known[t.name()] = StaticType{t.data_type(), {t.dims().begin(), t.dims().end()}};
    if (!overridable.count(t.name())) inits[t.name()] = &t;  // a value a user can replace is no constant
  }
  for (int k = 0; k < g.value_info_size(); ++k) {
    value_info_at[g.value_info(k).name()] = k;
    if (auto t = static_type(g.value_info(k).type())) known[g.value_info(k).name()] = *t;
  }
  for (const auto& o : g.output())
    if (auto t = static_type(o.type())) known[o.name()] = *t;
  auto constant = [&](const onnx::NodeProto& n, int k) -> const onnx::TensorProto* {
    if (k >= n.input_size() || n.input(k).empty()) return nullptr;
    auto it = inits.find(n.input(k));
    return it == inits.end() ? nullptr : it->second;
  };

  int typed = 0;
  for (const auto& n : g.node()) {
    const bool contrib = n.domain() == "com.microsoft";
    if ((!default_domain(n) && !contrib) || n.output_size() == 0) continue;
    bool missing = false;
    for (const auto& o : n.output()) missing = missing || (!o.empty() && !known.count(o));
    if (!missing) continue;
    std::vector<StaticType> in;
    bool ready = true;
    for (int k = 0; k < n.input_size() && ready; ++k) {
      if (n.input(k).empty()) continue;
      auto it = known.find(n.input(k));
      ready = it != known.end();
      if (ready) in.push_back(it->second);
    }
    if (!ready || in.empty()) continue;
    auto type_at = [&](const onnx::NodeProto& node, int k) -> const StaticType* {
      if (k >= node.input_size() || node.input(k).empty()) return nullptr;
      auto it = known.find(node.input(k));
      return it == known.end() ? nullptr : &it->second;
    };
    const std::optional<std::vector<StaticType>> outs =
        contrib ? contrib_output_types(n, in, type_at) : output_types(n, opset, in, constant, type_at);
    if (!outs || outs->size() != static_cast<size_t>(n.output_size())) continue;
    for (int k = 0; k < n.output_size(); ++k) {
      const std::string& name = n.output(k);
      if (name.empty() || known.count(name)) continue;
      auto at = value_info_at.find(name);
      onnx::ValueInfoProto* vi = nullptr;
      if (at != value_info_at.end()) {
        vi = g.mutable_value_info(at->second);
      } else {
        vi = g.add_value_info();
        vi->set_name(name);
        value_info_at[name] = g.value_info_size() - 1;
      }
      set_type(*vi, (*outs)[static_cast<size_t>(k)]);
      known[name] = (*outs)[static_cast<size_t>(k)];
      typed++;
    }
  }
  return typed;
}

}  // namespace tensat::detail
