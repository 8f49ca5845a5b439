// Persistent cost cache (see cost_cache.h).
#include "gpu_cost/cost_cache.h"

#include "support/atomic_file.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tensat::cost {

namespace {

constexpr const char* kFormat = "onnx-tensat-cost-cache";

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

}  // namespace

namespace {

// Reads one device's signature -> ms object, skipping bad entries with a warning.
CostCache::Entries read_costs(const nlohmann::json& obj, const std::string& dev) {
  CostCache::Entries out;
  for (const auto& [sig, v] : obj.items()) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      spdlog::warn("cost cache: skipping entry \"{}\" of device \"{}\": not a non-negative number", sig, dev);
      continue;
    }
    out[sig] = v.get<double>();
  }
  return out;
}

}  // namespace

std::optional<CostCacheFile> parse_cost_cache(const std::string& text, std::string* error) try {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    *error = "not valid JSON";
    return std::nullopt;
  }
  if (!j.is_object() || j.value("format", "") != kFormat) {
    *error = std::string("not a cost cache (no \"format\": \"") + kFormat + "\")";
    return std::nullopt;
  }
  if (!j.contains("version") || !j["version"].is_number_integer()) {
    *error = "no integer \"version\"";
    return std::nullopt;
  }
  CostCacheFile out;
  out.version = j["version"].get<int>();
  if (out.version < 1 || out.version > kCostCacheVersion) {
    *error = "version " + std::to_string(out.version) + ", this onnx-tensat reads versions 1 to " +
             std::to_string(kCostCacheVersion) + (out.version > kCostCacheVersion ? " (made by a newer onnx-tensat?)" : "");
    return std::nullopt;
  }
  if (!j.contains("devices") || !j["devices"].is_object()) {
    *error = "no \"devices\" object";
    return std::nullopt;
  }
  for (const auto& [dev, d] : j["devices"].items()) {
    if (!d.is_object()) {
      *error = "device \"" + dev + "\" is not an object";
      return std::nullopt;
    }
    CostCache::Device& dst = out.devices[dev];
    if (out.version == 1) {
      dst.costs = read_costs(d, dev);
      continue;
    }
    if (!d.contains("method") || !d["method"].is_string() || d["method"].get<std::string>().empty()) {
      *error = "device \"" + dev + "\" has no \"method\"";
      return std::nullopt;
    }
    dst.method = d["method"].get<std::string>();
    if (d.contains("launch_ms")) {
      if (!d["launch_ms"].is_object()) {
        *error = "device \"" + dev + "\": \"launch_ms\" is not an object";
        return std::nullopt;
      }
      dst.launch_ms = read_costs(d["launch_ms"], dev);
    }
    if (!d.contains("costs") || !d["costs"].is_object()) {
      *error = "device \"" + dev + "\" has no \"costs\" object";
      return std::nullopt;
    }
    dst.costs = read_costs(d["costs"], dev);
  }
  return out;
} catch (const nlohmann::json::exception& e) {
  *error = e.what();
  return std::nullopt;
}

CostCache::CostCache(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return;
  std::string text;
  if (!read_file(path_, &text)) {
    load_failed_ = true;
    load_error_ = "cannot be read";
  } else if (auto parsed = parse_cost_cache(text, &load_error_)) {
    devices_ = std::move(parsed->devices);
    loaded_version_ = parsed->version;
    return;
  } else {
    load_failed_ = true;
  }
  spdlog::warn("cost cache {} is corrupted ({}): ignoring its contents; costs will be measured again and the file "
               "rewritten",
               path_, load_error_);
}

std::optional<double> CostCache::get(const std::string& device, const std::string& sig) const {
  auto d = devices_.find(device);
  if (d == devices_.end()) return std::nullopt;
  auto e = d->second.costs.find(sig);
  if (e == d->second.costs.end()) return std::nullopt;
  return e->second;
}

void CostCache::put(const std::string& device, const std::string& sig, double ms) {
  devices_[device].costs[sig] = ms;
  dirty_ = true;
}

std::string CostCache::method(const std::string& device) const {
  auto d = devices_.find(device);
  return d == devices_.end() ? std::string() : d->second.method;
}

void CostCache::set_method(const std::string& device, const std::string& method) {
  Device& d = devices_[device];
  if (d.method == method) return;
  if (!d.costs.empty())
    spdlog::info("cost cache: device \"{}\": {} costs measured by method {} dropped for method {}", device,
                 d.costs.size(), d.method, method);
  d = Device{};
  d.method = method;
  dirty_ = true;
}

std::optional<double> CostCache::launch_ms(const std::string& device, const std::string& mode) const {
  auto d = devices_.find(device);
  if (d == devices_.end()) return std::nullopt;
  auto e = d->second.launch_ms.find(mode);
  if (e == d->second.launch_ms.end()) return std::nullopt;
  return e->second;
}

void CostCache::set_launch_ms(const std::string& device, const std::string& mode, double ms) {
  devices_[device].launch_ms[mode] = ms;
  dirty_ = true;
}

const CostCache::Device* CostCache::device(const std::string& name) const {
  auto d = devices_.find(name);
  return d == devices_.end() ? nullptr : &d->second;
}

std::vector<std::string> CostCache::devices() const {
  std::vector<std::string> v;
  for (const auto& [d, e] : devices_) v.push_back(d);
  return v;
}

const CostCache::Entries* CostCache::entries(const std::string& device) const {
  auto d = devices_.find(device);
  return d == devices_.end() ? nullptr : &d->second.costs;
}

size_t CostCache::size() const {
  size_t n = 0;
  for (const auto& [d, e] : devices_) n += e.costs.size();
  return n;
}

bool CostCache::save() {
  if (path_.empty() || !dirty_) return true;
  namespace fs = std::filesystem;
  // Merge what another process may have written since we loaded (ours win), for devices
  // measured by the same method.
  std::string text, err;
  if (read_file(path_, &text)) {
    if (auto other = parse_cost_cache(text, &err)) {
      for (auto& [dev, theirs] : other->devices) {
        auto mine = devices_.find(dev);
        if (mine == devices_.end()) {
          devices_.emplace(dev, std::move(theirs));
          continue;
        }
        if (mine->second.method != theirs.method) continue;
        for (auto& [sig, ms] : theirs.costs) mine->second.costs.emplace(sig, ms);
        for (auto& [mode, ms] : theirs.launch_ms) mine->second.launch_ms.emplace(mode, ms);
      }
    }
  }
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kCostCacheVersion;
  j["devices"] = nlohmann::json::object();
  for (const auto& [dev, d] : devices_) {
    nlohmann::json e = nlohmann::json::object();
    e["method"] = d.method;
    if (!d.launch_ms.empty()) e["launch_ms"] = d.launch_ms;
    e["costs"] = d.costs;
    j["devices"][dev] = std::move(e);
  }
  std::error_code ec;
  fs::path target(path_);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  try {
    write_file_atomic(path_, j.dump(1) + "\n");
  } catch (const FileError& e) {
    spdlog::warn("cost cache: {}; the measurements of this run are not saved", e.what());
    return false;
  }
  dirty_ = false;
  load_failed_ = false;
  return true;
}

}  // namespace tensat::cost
