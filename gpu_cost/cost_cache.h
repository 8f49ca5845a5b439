// CostCache: measured operator costs on disk, keyed by device name and signature.
//
// File format, version 2 (JSON, keys sorted so equal content gives equal bytes):
//   {"format": "onnx-tensat-cost-cache", "version": 2,
//    "devices": {"NVIDIA H100 80GB HBM3": {
//        "method": "event-single-launch",          how the costs were measured
//        "launch_ms": {"eager": 0.004, "graph": 0.001},   optional: per-kernel launch overhead,
//                                                   measured once per device, kept apart
//        "costs": {"conv(1,1,same,relu,...)": 0.0123, ...}}}}
// Version 1 (the first format) has no method or launch overheads: "devices" maps a device
// straight to its costs, and its method is "event-single-launch" (kMethodSingleLaunch). Both
// versions load; saving writes version 2. A file of a later version is refused with a warning
// (an empty cache), never misread.
//
// The method names the measurement: costs of different methods must not be mixed, so a
// measuring model uses a device's costs only when their method is its own (CostCache::method).
//
// Loading never throws: a missing file is an empty cache; an unreadable or corrupted one is
// an empty cache with a warning (the costs are re-measured and the file rewritten); single
// entries that are not non-negative finite numbers are skipped with a warning. Saving is
// atomic (a temporary file in the same folder, then rename) and merges entries another
// process saved meanwhile for the same device and method, ours winning.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tensat::cost {

/// The method of every version-1 file: CUDA-event timing of single launches (warm-up, then
/// the median of timed launches), launch latency included in each cost.
inline constexpr const char* kMethodSingleLaunch = "event-single-launch";
/// The newest file version this build reads and the one it writes.
inline constexpr int kCostCacheVersion = 2;

class CostCache {
 public:
  using Entries = std::map<std::string, double>;  ///< signature -> ms
  /// One device's part of the file.
  struct Device {
    std::string method = kMethodSingleLaunch;
    std::map<std::string, double> launch_ms;  ///< mode ("eager", "graph") -> ms per kernel launch
    Entries costs;
  };

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
  /// The device's measurement method ("" for an unknown device).
  std::string method(const std::string& device) const;
  /// Sets the method; if it differs from the stored one, the device's costs and launch
  /// overheads are dropped (they were measured another way).
  void set_method(const std::string& device, const std::string& method);
  std::optional<double> launch_ms(const std::string& device, const std::string& mode) const;
  void set_launch_ms(const std::string& device, const std::string& mode, double ms);
  const Device* device(const std::string& name) const;
  /// Version of the file that was loaded (0: none was).
  int loaded_version() const { return loaded_version_; }

 private:
  std::string path_;
  std::map<std::string, Device> devices_;
  int loaded_version_ = 0;
  bool dirty_ = false;
  bool load_failed_ = false;
  std::string load_error_;
};

/// A parsed cache file.
struct CostCacheFile {
  int version = 0;
  std::map<std::string, CostCache::Device> devices;
};
/// Parses cache-file text (version 1 or 2); nullopt (error set) if it is not a cache this
/// build can read.
std::optional<CostCacheFile> parse_cost_cache(const std::string& text, std::string* error);

}  // namespace tensat::cost
