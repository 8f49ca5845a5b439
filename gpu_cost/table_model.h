// The table cost model: costs measured on a GPU elsewhere, looked up by signature.
//
// The table is a cost-cache file (cost_cache.h, version 1 or 2): a built-in one
// (embedded_tables.h; named "table:h100") or a file (named "table:<device>"). A signature the
// table lacks is priced by a model calibrated to the same table (calibrated_model.h), built on
// the first miss; each distinct miss is logged once (debug), counted and kept with its price
// and what made it (fallback_prices()), so the report can say how much was estimated.
//
// Launch overhead: a version-2 table may carry `launch_ms` for its device; then every price
// (measured or estimated) gets launch_ms["graph"] per kernel the operator launches
// (op_work().kernels), i.e. a prediction for graph-mode execution. Version-1 tables carry
// none: their costs include the launch latency already (event-single-launch).
//
// A table that cannot be used (corrupted, an unreadable file, a newer format version, no
// entries) is a warning, never an error: usable() is false and every kernel falls back (to
// the roofline model of the profile, as the calibrated model has nothing to fit).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpu_cost/calibrated_model.h"
#include "gpu_cost/cost_cache.h"
#include "gpu_cost/cost_model.h"
#include "gpu_cost/embedded_tables.h"
#include "gpu_cost/roofline.h"

namespace tensat::cost {

class TableModel : public CostModel {
 public:
  /// Reads the table file `path`. device: which device's entries to use; "" = the file's only
  /// device (or, with several, the first by name, with a warning). Throws
  /// std::invalid_argument if the file does not exist or has no such device. fallback: the
  /// roofline profile for what the calibrated model cannot fit (a device name that names a
  /// known GPU overrides it).
  TableModel(const std::string& path, const std::string& device, const DeviceProfile& fallback);
  /// A built-in table (its only or first device).
  TableModel(const EmbeddedTable& table, const DeviceProfile& fallback);
  ~TableModel() override;

  std::string name() const override { return "table:" + label_; }
  /// "event-single-launch, v1; 3883 signatures measured on NVIDIA H100 80GB HBM3 (built-in h100-fp32.json)".
  std::string detail() const override;
  std::vector<FallbackPrice> fallback_prices() const override;
  std::string fallback_name() const override;

  const std::string& device() const { return device_; }
  const std::string& method() const { return method_; }
  int version() const { return version_; }                 ///< the file's format version (0: unusable)
  bool usable() const { return usable_; }                   ///< false: every kernel falls back
  const std::string& problem() const { return problem_; }   ///< why it is unusable
  double launch_ms() const { return launch_ms_; }           ///< added per kernel (0: none)

  /// True if every signature is in the table (pass those of real kernels: structural_cost
  /// nullopt).
  bool covers(const std::vector<std::string>& signatures) const;
  size_t size() const { return entries_.size(); }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }  ///< lookups that missed (a signature may repeat)
  /// Distinct signatures that missed, with their estimated price, by signature.
  const std::map<std::string, FallbackPrice>& missed() const { return missed_; }
  /// The model fitted to this table (built now if no miss has built it yet).
  const CalibratedModel& calibrated() const;

 protected:
  double kernel_cost(Op op, const Children& c, const std::string& sig) override {
    return kernel_price(op, c, sig).ms;
  }
  Price kernel_price(Op op, const Children& c, const std::string& sig) override;

 private:
  // Parses the table text and picks the device; an unreadable table leaves it unusable.
  void load(const std::string& text, const std::string& device);

  std::string label_, origin_, device_, method_, problem_;
  int version_ = 0;
  bool usable_ = false;
  double launch_ms_ = 0;
  CostCache::Entries entries_;
  // entries_ by hash (every e-node is looked up; the keys are entries_'s), each with its kernel
  // count once a lookup needed it (op_work's, fixed by the signature; it infers the output type,
  // which took a third of NasRNN's pricing when done for each of its 13k e-nodes).
  struct Indexed {
    double ms = 0.0;
    int kernels = -1;  // -1: not yet known
  };
  std::unordered_map<std::string_view, Indexed> index_;
  DeviceProfile fallback_;
  mutable std::unique_ptr<CalibratedModel> calibrated_;
  size_t hits_ = 0, misses_ = 0;
  std::map<std::string, FallbackPrice> missed_;
};

}  // namespace tensat::cost
