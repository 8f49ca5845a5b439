// Output types libonnx 1.12 leaves out (see shape_fallback.h).
#include "importer/shape_fallback.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "importer/onnx_graph.h"
#include "importer/tensor_proto.h"

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
  if (!w || (w->type.dtype != DType::I64 && w->type.dtype != DType::I32)) return std::nullopt;
  std::vector<int64_t> v(w->count());
  for (size_t i = 0; i < v.size(); ++i) {
    if (w->type.dtype == DType::I64) {
      std::memcpy(&v[i], w->bytes.data() + i * 8, 8);
    } else {
      int32_t x = 0;
      std::memcpy(&x, w->bytes.data() + i * 4, 4);
      v[i] = x;
    }
  }
  return v;
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
    out[ua] += pads[i] + pads[i + axes->size()];
    if (out[ua] < 0) return std::nullopt;
  }
  return out;
}

std::string string_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.s();
  return {};
}

}  // namespace

int infer_missing_types(onnx::GraphProto& g) {
  std::unordered_map<std::string, StaticType> known;
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  std::unordered_map<std::string, int> value_info_at;
  for (const auto& i : g.input())
    if (auto t = static_type(i.type())) known[i.name()] = *t;
  for (const auto& t : g.initializer()) {
    known[t.name()] = StaticType{t.data_type(), {t.dims().begin(), t.dims().end()}};
    inits[t.name()] = &t;
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
    if (!default_domain(n) || n.output_size() != 1 || n.output(0).empty() || known.count(n.output(0))) continue;
    std::vector<StaticType> in;
    bool ready = true;
    for (int k = 0; k < n.input_size() && ready; ++k) {
      if (n.input(k).empty()) continue;
      auto it = known.find(n.input(k));
      ready = it != known.end();
      if (ready) in.push_back(it->second);
    }
    if (!ready || in.empty()) continue;
    std::optional<StaticType> out;
    const std::string& op = n.op_type();
    if (op == "Einsum") {
      if (auto d = einsum_dims(string_attribute(n, "equation"), in)) out = StaticType{in[0].elem, *d};
    } else if (op == "Gelu" || op == "Mish") {
      out = in[0];
    } else if (op == "Pad" && n.input_size() >= 2) {
      auto pads = int_values(constant(n, 1));
      std::optional<std::vector<int64_t>> axes;
      if (n.input_size() >= 4 && !n.input(3).empty()) {
        axes = int_values(constant(n, 3));
        if (!axes) continue;  // axes computed at run time
      }
      if (pads)
        if (auto d = pad_dims(in[0].dims, *pads, axes)) out = StaticType{in[0].elem, *d};
    }
    if (!out) continue;
    const std::string& name = n.output(0);
    auto at = value_info_at.find(name);
    onnx::ValueInfoProto* vi = nullptr;
    if (at != value_info_at.end()) {
      vi = g.mutable_value_info(at->second);
    } else {
      vi = g.add_value_info();
      vi->set_name(name);
      value_info_at[name] = g.value_info_size() - 1;
    }
    set_type(*vi, *out);
    known[name] = *out;
    typed++;
  }
  return typed;
}

}  // namespace tensat::detail
