// Signatures, structural costs and the cost-model factory (see cost_model.h).
#include "gpu_cost/cost_model.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "gpu_cost/cuda_model.h"
#include "gpu_cost/embedded_tables.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/op_params.h"
#include "gpu_cost/roofline.h"
#include "gpu_cost/table_model.h"

namespace tensat::cost {

namespace {

void append_int(std::string& s, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}

void append_tensor(std::string& s, const TensorType& t) {
  s += dtype_name(t.dtype);
  s += '[';
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ',';
    append_int(s, t.shape[i]);
  }
  s += ']';
}

}  // namespace

// Built with appends only (no temporaries): every e-node of an e-graph is priced by its
// signature.
std::string signature(Op op, const Children& children) {
  std::string s;
  s.reserve(64);
  s += op_name(op);
  s += '(';
  for (size_t i = 0; i < children.size(); ++i) {
    if (i) s += ',';
    const ValueType& v = *children[i];
    switch (v.kind) {
      case Kind::Int: append_int(s, v.num); break;
      case Kind::Sym: s += v.sym; break;
      case Kind::Tensor: append_tensor(s, v.tensor); break;
      case Kind::Tuple:
        s += '(';
        for (size_t k = 0; k < v.tuple.size(); ++k) {
          if (k) s += ',';
          append_tensor(s, v.tuple[k]);
        }
        s += ')';
        break;
    }
  }
  s += ')';
  return s;
}

double opaque_cost_ms(int64_t output_bytes) {
  constexpr double kLaunchMs = 0.01;
  constexpr double kBytesPerMs = 300e9 / 1e3;
  return kLaunchMs + 2.0 * static_cast<double>(output_bytes) / kBytesPerMs;
}

std::optional<double> structural_cost(Op op, const Children& c) {
  if (is_free_node(op, c)) return 0.0;
  if (op == Op::Opaque) {
    auto out = output_type(op, c);
    return opaque_cost_ms(out ? value_bytes(*out) : 0);
  }
  return std::nullopt;
}

Price CostModel::price(Op op, const Children& children) {
  if (auto s = structural_cost(op, children)) return {*s, false};
  return kernel_price(op, children, signature(op, children));
}

Children ParsedSignature::pointers() const {
  Children out;
  out.reserve(children.size());
  for (const auto& c : children) out.push_back(&c);
  return out;
}

namespace {

// Calls f(part) for each part of s between commas outside brackets and parentheses; stops
// (returns false) when f does.
template <class F>
bool for_each_top(std::string_view s, F&& f) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '(' || ch == '[') ++depth;
    if (ch == ')' || ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      if (!f(s.substr(start, i - start))) return false;
      start = i + 1;
    }
  }
  return f(s.substr(start));
}

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return s[0] == '-' ? -v : v;
}

// "f32[1,64,56,56]" (or "f32[]" for a scalar) into t; false if malformed.
bool parse_tensor(std::string_view s, TensorType& t) {
  const size_t lb = s.find('[');
  if (lb == std::string_view::npos || s.back() != ']') return false;
  auto dt = dtype_from_name(s.substr(0, lb));
  if (!dt) return false;
  t.dtype = *dt;
  t.shape.clear();
  const std::string_view inner = s.substr(lb + 1, s.size() - lb - 2);
  if (inner.empty()) return true;
  t.shape.reserve(static_cast<size_t>(std::count(inner.begin(), inner.end(), ',')) + 1);
  return for_each_top(inner, [&](std::string_view d) {
    auto v = parse_int(d);
    if (!v || *v < 0) return false;
    t.shape.push_back(*v);
    return true;
  });
}

}  // namespace

std::optional<ParsedSignature> parse_signature(std::string_view sig, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<ParsedSignature> {
    if (error) *error = "signature \"" + std::string(sig) + "\": " + why;
    return std::nullopt;
  };
  size_t lp = sig.find('(');
  if (lp == std::string_view::npos || sig.empty() || sig.back() != ')') return fail("not of the form op(children)");
  auto op = op_from_name(sig.substr(0, lp));
  if (!op) return fail("unknown operator");
  ParsedSignature out;
  out.op = *op;
  std::string_view inner = sig.substr(lp + 1, sig.size() - lp - 2);
  if (inner.empty()) return out;
  out.children.reserve(8);
  std::string why;
  const bool ok = for_each_top(inner, [&](std::string_view part) {
    if (part.empty()) {
      why = "an empty child";
      return false;
    }
    ValueType& v = out.children.emplace_back();
    if (part.front() == '(' && part.back() == ')') {
      v.kind = Kind::Tuple;
      return for_each_top(part.substr(1, part.size() - 2), [&](std::string_view t) {
        if (parse_tensor(t, v.tuple.emplace_back())) return true;
        why = "a malformed tuple part \"" + std::string(t) + "\"";
        return false;
      });
    }
    if (size_t lb = part.find('['); lb != std::string_view::npos && dtype_from_name(part.substr(0, lb))) {
      v.kind = Kind::Tensor;
      if (parse_tensor(part, v.tensor)) return true;
      why = "a malformed tensor \"" + std::string(part) + "\"";
      return false;
    }
    if (auto n = parse_int(part)) {
      v.kind = Kind::Int;
      v.num = *n;
    } else {
      v.kind = Kind::Sym;
      v.sym = std::string(part);
    }
    return true;
  });
  if (!ok) return fail(why);
  return out;
}

std::optional<CostModelKind> cost_model_kind_from_name(std::string_view name_in) {
  std::string name(name_in);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (name == "auto") return CostModelKind::Auto;
  if (name == "cuda") return CostModelKind::Cuda;
  if (name == "roofline") return CostModelKind::Roofline;
  if (name == "table") return CostModelKind::Table;
  return std::nullopt;
}

std::string_view cost_model_kind_name(CostModelKind k) {
  switch (k) {
    case CostModelKind::Auto: return "auto";
    case CostModelKind::Cuda: return "cuda";
    case CostModelKind::Roofline: return "roofline";
    case CostModelKind::Table: return "table";
  }
  return "?";
}

std::unique_ptr<CostModel> make_cost_model(std::string_view name, const CostOptions& opts) {
  auto kind = cost_model_kind_from_name(name);
  if (!kind) throw std::invalid_argument("unknown cost model '" + std::string(name) + "' (cuda, roofline, table, auto)");
  return make_cost_model(*kind, opts);
}

std::unique_ptr<CostModel> make_cost_model(CostModelKind kind, const CostOptions& opts) {
  const DeviceProfile* found = find_profile(opts.profile);
  if (!found)
    throw std::invalid_argument("unknown device profile '" + opts.profile + "' (known: " + profile_list() + ")");
  const DeviceProfile& p = *found;
  // The table: the file named, else the profile's built-in one; nullptr when there is neither.
  auto table = [&]() -> std::unique_ptr<CostModel> {
    const EmbeddedTable* builtin = embedded_table(p.name);
    if (!opts.table_path.empty()) {
      auto t = std::make_unique<TableModel>(opts.table_path, opts.table_device, p);
      if (t->usable() || !builtin) return t;
      spdlog::warn("cost table {} cannot be used; using the built-in table:{} ({}) instead", opts.table_path,
                   p.name, builtin->file);
    }
    if (!builtin) return nullptr;
    return std::make_unique<TableModel>(*builtin, p);
  };
  switch (kind) {
    case CostModelKind::Roofline: return std::make_unique<RooflineModel>(p);
    case CostModelKind::Cuda:
      if (!gpu::available()) throw std::invalid_argument("cost model 'cuda' needs a GPU, and none was found");
      return std::make_unique<CudaCostModel>(opts);
    case CostModelKind::Table:
      if (auto t = table()) return t;
      throw std::invalid_argument("cost model 'table': device profile '" + p.name +
                                  "' has no built-in measured table (built in: " + embedded_profile_list() +
                                  "); give a table file (--cost-table) or use the roofline model");
    case CostModelKind::Auto: break;
  }
  if (gpu::available()) {
    try {
      return std::make_unique<CudaCostModel>(opts);
    } catch (const gpu::GpuError& e) {
      spdlog::warn("cost model auto: the GPU could not be used ({}); using the table or roofline model", e.what());
    }
  }
  if (auto t = table()) return t;
  return std::make_unique<RooflineModel>(p);
}

}  // namespace tensat::cost
