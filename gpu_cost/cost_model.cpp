// Signatures, structural costs and the cost-model factory (see cost_model.h).
#include "gpu_cost/cost_model.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "gpu_cost/cuda_model.h"
#include "gpu_cost/gpu_runtime.h"
#include "gpu_cost/op_params.h"
#include "gpu_cost/roofline.h"
#include "gpu_cost/table_model.h"

namespace tensat::cost {

namespace {

void append_tensor(std::string& s, const TensorType& t) {
  s += dtype_name(t.dtype);
  s += shape_str(t.shape);
}

}  // namespace

std::string signature(Op op, const Children& children) {
  std::string s(op_name(op));
  s += "(";
  for (size_t i = 0; i < children.size(); ++i) {
    if (i) s += ",";
    const ValueType& v = *children[i];
    switch (v.kind) {
      case Kind::Int: s += std::to_string(v.num); break;
      case Kind::Sym: s += v.sym; break;
      case Kind::Tensor: append_tensor(s, v.tensor); break;
      case Kind::Tuple:
        s += "(";
        for (size_t k = 0; k < v.tuple.size(); ++k) {
          if (k) s += ",";
          append_tensor(s, v.tuple[k]);
        }
        s += ")";
        break;
    }
  }
  return s + ")";
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

double CostModel::op_cost(Op op, const Children& children) {
  if (auto s = structural_cost(op, children)) return *s;
  return kernel_cost(op, children, signature(op, children));
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
  auto profile = [&]() -> const DeviceProfile& {
    const DeviceProfile* p = find_profile(opts.profile);
    if (!p) throw std::invalid_argument("unknown device profile '" + opts.profile + "' (known: " + profile_list() + ")");
    return *p;
  };
  switch (kind) {
    case CostModelKind::Roofline: return std::make_unique<RooflineModel>(profile());
    case CostModelKind::Cuda:
      if (!gpu::available()) throw std::invalid_argument("cost model 'cuda' needs a GPU, and none was found");
      return std::make_unique<CudaCostModel>(opts);
    case CostModelKind::Table: return std::make_unique<TableModel>(opts.table_path, opts.table_device, profile());
    case CostModelKind::Auto: break;
  }
  if (gpu::available()) {
    try {
      return std::make_unique<CudaCostModel>(opts);
    } catch (const gpu::GpuError& e) {
      spdlog::warn("cost model auto: the GPU could not be used ({}); trying the table, then roofline", e.what());
    }
  }
  const DeviceProfile& p = profile();
  if (!opts.table_path.empty()) {
    try {
      auto table = std::make_unique<TableModel>(opts.table_path, opts.table_device, p);
      if (table->covers(opts.required)) return table;
      spdlog::info("cost model auto: table {} does not cover every signature; using roofline {}", opts.table_path,
                   opts.profile);
    } catch (const std::invalid_argument& e) {
      spdlog::warn("cost model auto: {}; using roofline {}", e.what(), opts.profile);
    }
  }
  return std::make_unique<RooflineModel>(p);
}

}  // namespace tensat::cost
