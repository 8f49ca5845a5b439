// Table cost model (see table_model.h).
#include "gpu_cost/table_model.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

namespace tensat::cost {

TableModel::TableModel(const std::string& path, const std::string& device, const DeviceProfile& fallback)
    : device_(device), fallback_(fallback) {
  if (path.empty()) throw std::invalid_argument("cost model 'table' needs a cost table file");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw std::invalid_argument("cost table " + path + " does not exist");
  CostCache cache(path);
  if (cache.load_failed()) {
    spdlog::warn("cost table {} could not be used; every cost falls back to roofline {}", path, fallback.name);
    if (device_.empty()) device_ = "?";
    return;
  }
  auto devices = cache.devices();
  if (device_.empty()) {
    if (devices.empty()) {
      spdlog::warn("cost table {} is empty; every cost falls back to roofline {}", path, fallback.name);
      device_ = "?";
      return;
    }
    device_ = devices.front();
    if (devices.size() > 1)
      spdlog::warn("cost table {} holds {} devices; using \"{}\" (choose one with the table device option)", path,
                   devices.size(), device_);
  }
  const CostCache::Entries* e = cache.entries(device_);
  if (!e) throw std::invalid_argument("cost table " + path + " has no entries for device \"" + device_ + "\"");
  entries_ = *e;
}

bool TableModel::covers(const std::vector<std::string>& signatures) const {
  for (const auto& s : signatures)
    if (!entries_.count(s)) return false;
  return true;
}

double TableModel::kernel_cost(Op op, const Children& c, const std::string& sig) {
  auto it = entries_.find(sig);
  if (it != entries_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  double ms = fallback_.op_cost(op, c);
  if (missed_.insert(sig).second)
    spdlog::warn("cost table ({}): no entry for {}; using roofline {}: {:.4f} ms", device_, sig,
                 fallback_.profile().name, ms);
  return ms;
}

}  // namespace tensat::cost
