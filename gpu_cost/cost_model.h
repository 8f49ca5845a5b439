// CostModel: the cost in milliseconds of one operator signature (TASO's cost model).
//
// A signature is an operator plus the ValueTypes of its children: parameter values and input
// shapes (lang/types.h). The graph cost is the sum of its nodes' costs (the paper's model),
// so a model only has to price single operators. Three implementations:
//   cuda      measured on this machine's GPU with cuDNN/cuBLAS, cached on disk (cuda_model.h)
//   table     costs measured on a GPU elsewhere: a built-in table of the device profile
//             (embedded_tables.h; h100) or a file; a miss is priced by a model calibrated to
//             the table (table_model.h, calibrated_model.h)
//   roofline  FLOPs and bytes against a device profile (roofline.h): devices without a
//             measured table, and the ablation
// and "auto": cuda if a GPU is present, else the table (--cost-table, else the profile's
// built-in one), else roofline of the profile. The default profile is h100.
//
// Costs that need no device are decided here, the same for every model (structural_cost):
//   0        num, sym, input, weight, zeros, noop, split_0, split_1, select, reshape, a
//            transpose that moves no data; and every weight-only node (node_cost's flag:
//            computed once at export, TASO/TENSAT count it as free)
//   opaque   opaque_cost_ms(output bytes): a fixed estimate (an ONNX node we never change,
//            so it cancels in before/after comparisons; it only has to be plausible)
// Everything else (conv, matmul, ew*, activations, pools, transpose, concat, split, enlarge,
// merge) is a real kernel priced by the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/op.h"
#include "lang/types.h"

namespace tensat::cost {

using Children = std::vector<const ValueType*>;

/// Canonical signature, the cache key: "op(child,child,...)", each child its integer, its
/// symbol, "f32[1,3,224,224]" for a tensor or "(f32[..],f32[..])" for a tuple. Stable across
/// runs and versions: changing it invalidates every cache file.
/// Example: "conv(1,1,same,relu,f32[1,64,56,56],f32[64,64,3,3],f32[64])".
std::string signature(Op op, const Children& children);

/// The opaque-node estimate: 0.01 ms launch plus reading and writing the output bytes once
/// at 300 GB/s (about a T4's effective bandwidth).
double opaque_cost_ms(int64_t output_bytes);

/// The cost fixed by structure alone (see the header comment), or nullopt for a real kernel.
std::optional<double> structural_cost(Op op, const Children& children);

/// A signature read back: the operator and its children's types (the inverse of
/// signature(); integers become Int, "f32[..]" tensors, "(..)" tuples, anything else Sym).
struct ParsedSignature {
  Op op = Op::Num;
  std::vector<ValueType> children;
  Children pointers() const;
};
/// nullopt (error set) if `sig` is not of the form signature() writes.
std::optional<ParsedSignature> parse_signature(std::string_view sig, std::string* error = nullptr);

/// One operator's price and whether a fallback (not a measurement) made it.
struct Price {
  double ms = 0;
  bool fallback = false;
};

/// A signature the model could not price from measurements: what it was charged and by what.
struct FallbackPrice {
  std::string signature;
  double ms = 0;
  std::string by;  ///< e.g. "fit:conv + 5 neighbours", "roofline:h100"
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// "cuda:<device>", "roofline:<profile>", "table:<device>".
  virtual std::string name() const = 0;

  /// One line for the report beside name(): how the costs were obtained (method, table
  /// version, size). Empty when name() says it all.
  virtual std::string detail() const { return {}; }

  /// Cost in ms of one operator signature (children: the types of its children).
  double op_cost(Op op, const Children& children) { return price(op, children).ms; }
  /// As op_cost, and whether a fallback priced it (a table miss).
  Price price(Op op, const Children& children);
  /// As op_cost, but 0 for a weight-only node (the caller knows from the e-class analysis).
  double node_cost(Op op, const Children& children, bool weight_only) {
    return weight_only ? 0.0 : op_cost(op, children);
  }
  /// Writes pending state (the cuda model's cache); also done on destruction.
  virtual void flush() {}
  /// Every distinct signature priced by a fallback so far, sorted by signature.
  virtual std::vector<FallbackPrice> fallback_prices() const { return {}; }
  /// What prices a miss, for the report ("" when the model never falls back).
  virtual std::string fallback_name() const { return {}; }

 protected:
  /// The cost of a real kernel (structural_cost returned nullopt); sig = signature(...).
  virtual double kernel_cost(Op op, const Children& children, const std::string& sig) = 0;
  /// As kernel_cost, saying whether a fallback priced it; models that can fall back override.
  virtual Price kernel_price(Op op, const Children& children, const std::string& sig) {
    return {kernel_cost(op, children, sig), false};
  }
};

/// The device costs are predicted for when no GPU is present (--device-profile): the one with
/// a built-in measured table.
inline constexpr const char* kDefaultProfile = "h100";

struct CostOptions {
  std::string profile = kDefaultProfile;  ///< device profile: its built-in table, else roofline
  std::string cache_path;             ///< cuda: persistent cache file ("" = memory only)
  std::string table_path;             ///< table / auto: a table file ("" = the profile's built-in one)
  std::string table_device;           ///< table: which device's entries ("" = the only/first)
  int warmup = 3;                     ///< cuda: untimed runs before timing
  int repeats = 10;                   ///< cuda: timed runs; the median is the cost
  bool allow_tf32 = false;            ///< cuda: let cuDNN/cuBLAS use TF32 tensor cores
};

/// Which cost model (--cost-model).
enum class CostModelKind { Auto, Cuda, Roofline, Table };
/// "auto" | "cuda" | "roofline" | "table" (case-insensitive); nullopt otherwise.
std::optional<CostModelKind> cost_model_kind_from_name(std::string_view name);
std::string_view cost_model_kind_name(CostModelKind k);

/// Throws std::invalid_argument for an unknown profile, a table file that does not exist, a
/// table for a profile without a built-in one and no file, or cuda on a machine without a GPU.
/// A table file that cannot be read (corrupted, a newer version) warns and falls back: to the
/// profile's built-in table if it has one, else the roofline prices every kernel.
std::unique_ptr<CostModel> make_cost_model(CostModelKind kind, const CostOptions& opts = {});
/// By name (cost_model_kind_from_name); also throws std::invalid_argument for an unknown name.
std::unique_ptr<CostModel> make_cost_model(std::string_view name, const CostOptions& opts = {});

}  // namespace tensat::cost
