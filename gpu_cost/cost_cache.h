// CostCache: measured operator costs on disk, keyed by device name and signature.
//
// File format (JSON, keys sorted so equal content gives equal bytes):
//   {"format": "onnx-tensat-cost-cache", "version": 1,
//    "devices": {"NVIDIA H100 80GB HBM3": {"conv(1,1,same,relu,...)": 0.0123, ...}, ...}}
// Loading never throws: a missing file is an empty cache; an unreadable or corrupted one is
// an empty cache with a warning (the costs are re-measured and the file rewritten); single
// entries that are not non-negative finite numbers are skipped with a warning. Saving is
// atomic (a temporary file in the same folder, then rename) and merges entries another
// process saved meanwhile, ours winning.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tensat::cost {

class CostCache {
 public:
  using Entries = std::map<std::string, double>;  ///< signature -> ms

  /// Loads `path` ("" = in memory only, never saved).
  explicit CostCache(std::string path = "");

  std::optional<double> get(const std::string& device, const std::string& sig) const;
  void put(const std::string& device, const std::string& sig, double ms);

  /// Writes the file atomically if anything changed since load/save. Returns false (with a
  /// warning) if it could not be written; the cache stays usable in memory.
  bool save();

  const std::string& path() const { return path_; }
  bool dirty() const { return dirty_; }
  /// True if the file existed but could not be parsed (its contents were ignored).
  bool load_failed() const { return load_failed_; }
  const std::string& load_error() const { return load_error_; }
  std::vector<std::string> devices() const;
  const Entries* entries(const std::string& device) const;
  size_t size() const;  ///< all entries of all devices

 private:
  std::string path_;
  std::map<std::string, Entries> devices_;
  bool dirty_ = false;
  bool load_failed_ = false;
  std::string load_error_;
};

/// Parses cache-file text into device -> entries; nullopt (error set) if it is not a cache.
std::optional<std::map<std::string, CostCache::Entries>> parse_cost_cache(const std::string& text,
                                                                          std::string* error);

}  // namespace tensat::cost
