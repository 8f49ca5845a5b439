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
  switch (op) {
    case Op::Num: case Op::Sym: case Op::Input: case Op::Weight: case Op::Zeros: case Op::Noop:
    case Op::Split0: case Op::Split1: case Op::Select: case Op::Reshape:
      return 0.0;
    case Op::Transpose: {
      auto perm = parse_dims(*c[0]);
      if (perm && c.size() == 2 && c[1]->kind == Kind::Tensor && perm->size() == c[1]->shape().size() &&
          !transpose_moves_data(*perm, c[1]->shape()))
        return 0.0;
      return std::nullopt;
    }
    case Op::Opaque: {
      auto out = output_type(op, c);
      return opaque_cost_ms(out ? value_bytes(*out) : 0);
    }
    default: return std::nullopt;
  }
}

double CostModel::op_cost(Op op, const Children& children) {
  if (auto s = structural_cost(op, children)) return *s;
  return kernel_cost(op, children, signature(op, children));
}

std::unique_ptr<CostModel> make_cost_model(std::string_view name_in, const CostOptions& opts) {
  std::string name(name_in);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  auto roofline = [&] {
    const DeviceProfile* p = find_profile(opts.profile);
    if (!p) throw std::invalid_argument("unknown device profile '" + opts.profile + "' (known: " + profile_list() + ")");
    return std::make_unique<RooflineModel>(*p);
  };
  if (name == "roofline") return roofline();
  if (name == "cuda") {
    if (!gpu::available()) throw std::invalid_argument("cost model 'cuda' needs a GPU, and none was found");
    return std::make_unique<CudaCostModel>(opts);
  }
  if (name == "table") {
    const DeviceProfile* p = find_profile(opts.profile);
    if (!p) throw std::invalid_argument("unknown device profile '" + opts.profile + "' (known: " + profile_list() + ")");
    return std::make_unique<TableModel>(opts.table_path, opts.table_device, *p);
  }
  if (name == "auto") {
    if (gpu::available()) {
      try {
        return std::make_unique<CudaCostModel>(opts);
      } catch (const gpu::GpuError& e) {
        spdlog::warn("cost model auto: the GPU could not be used ({}); trying the table, then roofline", e.what());
      }
    }
    if (!opts.table_path.empty()) {
      const DeviceProfile* p = find_profile(opts.profile);
      if (!p) throw std::invalid_argument("unknown device profile '" + opts.profile + "'");
      try {
        auto table = std::make_unique<TableModel>(opts.table_path, opts.table_device, *p);
        if (table->covers(opts.required)) return table;
        spdlog::info("cost model auto: table {} does not cover every signature; using roofline {}", opts.table_path,
                     opts.profile);
      } catch (const std::invalid_argument& e) {
        spdlog::warn("cost model auto: {}; using roofline {}", e.what(), opts.profile);
      }
    }
    return roofline();
  }
  throw std::invalid_argument("unknown cost model '" + std::string(name_in) + "' (cuda, roofline, table, auto)");
}

}  // namespace tensat::cost
