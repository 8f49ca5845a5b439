// CalibratedModel: prices the signatures a measured table lacks, fitted to that table.
//
// Unseen shapes are common (other batch sizes, real models' channel counts), so a miss is
// priced by a model of the same device's measurements rather than a datasheet roofline:
//
//   1. analytic   per operator kind, a least-squares fit of
//                   ms = a + b * (kernels - 1) + c * FLOPs + d * bytes      (a, b, c, d >= 0)
//                 (op_work's counts, roofline.h) minimising the relative error: a launch
//                 and fixed cost per call, what each further kernel adds, throughputs. A kind with
//                 fewer than kMinSamples measurements uses the fit pooled over every
//                 memory-bound kind (all but conv and matmul), or, for conv/matmul, the
//                 roofline model of the device's profile.
//   2. neighbours the analytic estimate times the measured/analytic ratio of the nearest
//                 measured signatures of the same kind and structure (same parameters and
//                 tensor ranks): distance = sum of squared differences of log dimensions and
//                 integer parameters, + 4 per differing symbol (pad, activation, bias). The
//                 kNeighbours nearest are weighted 1/(d + 0.05) against a prior weight of 1
//                 on the plain fit, so a close neighbour dominates and a far one barely
//                 matters (extrapolation, e.g. batch 8, stays with the fitted line).
//
// held_out_fit_report() measures this on the table itself: fit on four fifths, relative
// error on the fifth held out (a signature is held out when FNV-1a(signature) % 5 == 0).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu_cost/cost_cache.h"
#include "gpu_cost/cost_model.h"
#include "gpu_cost/roofline.h"

namespace tensat::cost {

/// ms = per_call + per_extra_kernel * (kernels - 1) + per_flop * flops + per_byte * bytes.
struct LinearFit {
  double per_call = 0, per_extra_kernel = 0, per_flop = 0, per_byte = 0;
  size_t samples = 0;
  double predict(const Work& w) const {
    return per_call + per_extra_kernel * (w.kernels - 1) + per_flop * w.flops + per_byte * w.bytes;
  }
};

/// Weighted non-negative least squares of ms against (1, kernels - 1, flops, bytes), relative
/// error. Exact: the best of the column subsets whose unconstrained solution is non-negative.
LinearFit fit_linear(const std::vector<Work>& work, const std::vector<double>& ms);

class CalibratedModel {
 public:
  static constexpr size_t kMinSamples = 8;
  static constexpr size_t kNeighbours = 5;

  /// Fits to one device's measured costs (signature -> ms). Entries that do not parse or
  /// type-check are skipped (unusable()). fallback: the roofline profile for conv/matmul
  /// when they have too few measurements. The measurements are only sorted by operator kind
  /// here; a kind is parsed and fitted when first priced (a model's misses are usually of one
  /// or two kinds, and parsing the whole built-in table took ~5 ms). Not thread-safe.
  CalibratedModel(const CostCache::Entries& measured, const DeviceProfile& fallback);

  struct Estimate {
    double ms = 0;
    std::string by;  ///< "fit:conv + 5 neighbours", "fit:memory-bound", "roofline:h100"
  };
  /// A real kernel's estimated cost (structural_cost(op, c) is nullopt). neighbours = false
  /// gives the analytic fit alone.
  Estimate estimate(Op op, const Children& c, bool neighbours = true) const;

  /// The fit of an operator kind, or nullptr when it had fewer than kMinSamples.
  const LinearFit* kind_fit(Op op) const;
  /// The fit pooled over the memory-bound kinds, or nullptr when they had too few.
  const LinearFit* pooled_fit() const;
  /// Measurements that parse and type-check (all kinds parsed for the count), and those that do not.
  size_t samples() const;
  size_t unusable() const;
  const DeviceProfile& fallback_profile() const { return roofline_.profile(); }

 private:
  struct Sample {
    Work work;
    std::vector<double> dims;         // log dimensions and log integer parameters
    std::vector<std::string> labels;  // symbols, tensor ranks
    double ms = 0;
  };
  // The measurements of one kind and one structure (numbers of features and labels), in
  // flat arrays for the neighbour scan: sample i's features are dims[i*nd, (i+1)*nd) and
  // labels[i*nl, (i+1)*nl) (interned symbols and ranks).
  struct Group {
    size_t nd = 0, nl = 0;
    std::vector<double> dims;
    std::vector<uint32_t> labels;
    std::vector<double> log_ratio;  ///< log(measured / analytic)
  };
  struct KindData {
    std::vector<std::pair<std::string, double>> measured;  // in the table's order
    bool parsed = false, grouped = false;
    std::vector<Sample> samples;  // parsed: the usable measurements
    LinearFit fit;                // parsed
    std::vector<Group> groups;    // grouped
  };
  // The label's id (kNoLabel for one no measurement has: it matches none).
  static constexpr uint32_t kNoLabel = UINT32_MAX;
  uint32_t label_id(const std::string& label) const;
  // The analytic estimate and what made it.
  double analytic(Op op, const Work& w, std::string* by) const;
  // Parses and fits kind k; then its neighbour groups (which need the analytic fit).
  KindData& parsed(size_t k) const;
  KindData& grouped(size_t k) const;

  mutable std::array<KindData, kNumOps> kinds_;
  mutable std::unordered_map<std::string, uint32_t> label_ids_;
  mutable std::optional<LinearFit> pooled_;
  RooflineModel roofline_;
  mutable size_t samples_ = 0, unusable_ = 0;
  size_t unknown_ops_ = 0;
};

/// True for the fifth of signatures held out by the fit report.
bool held_out(const std::string& signature);

/// Fit quality of one operator kind on the held-out fifth.
struct KindFitQuality {
  std::string kind;
  size_t train = 0, held_out = 0;
  double analytic_median = 0, analytic_p90 = 0;  ///< relative error of the analytic fit alone
  double median = 0, p90 = 0;                    ///< relative error with the neighbours
  std::string by;                                ///< what priced this kind's held-out signatures
  LinearFit fit;                                 ///< the kind's own fit (samples 0: none)
};
struct FitReport {
  size_t signatures = 0, unusable = 0;
  std::vector<KindFitQuality> kinds;  ///< kinds with at least one held-out signature, by name
};
/// Fits on the signatures not held_out() and measures the relative error |estimate - ms| / ms
/// on those held out.
FitReport held_out_fit_report(const CostCache::Entries& measured, const DeviceProfile& fallback);

}  // namespace tensat::cost
