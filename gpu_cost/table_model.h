// The table cost model: costs measured elsewhere (a cuda run's cache file), looked up by
// signature; a miss falls back to the roofline model with a warning that names the
// signature (once per signature) and is counted, so a report can say how much was guessed.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "gpu_cost/cost_cache.h"
#include "gpu_cost/cost_model.h"
#include "gpu_cost/roofline.h"

namespace tensat::cost {

class TableModel : public CostModel {
 public:
  /// Reads `path`. device: which device's entries to use; "" = the file's only device (or,
  /// with several, the first by name, with a warning). Throws std::invalid_argument if the
  /// file does not exist or names no such device. A corrupted file gives a warning and an
  /// empty table (every lookup falls back).
  TableModel(const std::string& path, const std::string& device, const DeviceProfile& fallback);

  std::string name() const override { return "table:" + device_; }
  const std::string& device() const { return device_; }

  /// True if every signature is in the table (pass those of real kernels: structural_cost
  /// nullopt).
  bool covers(const std::vector<std::string>& signatures) const;
  size_t size() const { return entries_.size(); }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }
  /// Distinct signatures that missed, sorted.
  const std::set<std::string>& missed() const { return missed_; }

 protected:
  double kernel_cost(Op op, const Children& c, const std::string& sig) override;

 private:
  std::string device_;
  CostCache::Entries entries_;
  RooflineModel fallback_;
  size_t hits_ = 0, misses_ = 0;
  std::set<std::string> missed_;
};

}  // namespace tensat::cost
