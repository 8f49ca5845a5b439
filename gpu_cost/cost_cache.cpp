// Persistent cost cache (see cost_cache.h).
#include "gpu_cost/cost_cache.h"

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
constexpr int kVersion = 1;

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

}  // namespace

std::optional<std::map<std::string, CostCache::Entries>> parse_cost_cache(const std::string& text,
                                                                          std::string* error) try {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    *error = "not valid JSON";
    return std::nullopt;
  }
  if (!j.is_object() || j.value("format", "") != kFormat) {
    *error = std::string("not a cost cache (no \"format\": \"") + kFormat + "\")";
    return std::nullopt;
  }
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion) {
    *error = "unsupported cost cache version (expected " + std::to_string(kVersion) + ")";
    return std::nullopt;
  }
  if (!j.contains("devices") || !j["devices"].is_object()) {
    *error = "no \"devices\" object";
    return std::nullopt;
  }
  std::map<std::string, CostCache::Entries> out;
  for (const auto& [dev, entries] : j["devices"].items()) {
    if (!entries.is_object()) {
      *error = "device \"" + dev + "\" is not an object";
      return std::nullopt;
    }
    auto& dst = out[dev];
    for (const auto& [sig, v] : entries.items()) {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
        spdlog::warn("cost cache: skipping entry \"{}\" of device \"{}\": not a non-negative number", sig, dev);
        continue;
      }
      dst[sig] = v.get<double>();
    }
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
    devices_ = std::move(*parsed);
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
  auto e = d->second.find(sig);
  if (e == d->second.end()) return std::nullopt;
  return e->second;
}

void CostCache::put(const std::string& device, const std::string& sig, double ms) {
  devices_[device][sig] = ms;
  dirty_ = true;
}

std::vector<std::string> CostCache::devices() const {
  std::vector<std::string> v;
  for (const auto& [d, e] : devices_) v.push_back(d);
  return v;
}

const CostCache::Entries* CostCache::entries(const std::string& device) const {
  auto d = devices_.find(device);
  return d == devices_.end() ? nullptr : &d->second;
}

size_t CostCache::size() const {
  size_t n = 0;
  for (const auto& [d, e] : devices_) n += e.size();
  return n;
}

bool CostCache::save() {
  if (path_.empty() || !dirty_) return true;
  namespace fs = std::filesystem;
  // Merge what another process may have written since we loaded (ours win).
  std::string text, err;
  if (read_file(path_, &text)) {
    if (auto other = parse_cost_cache(text, &err)) {
      for (auto& [dev, entries] : *other) {
        auto& mine = devices_[dev];
        for (auto& [sig, ms] : entries) mine.emplace(sig, ms);
      }
    }
  }
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["devices"] = nlohmann::json::object();
  for (const auto& [dev, entries] : devices_) {
    nlohmann::json e = nlohmann::json::object();
    for (const auto& [sig, ms] : entries) e[sig] = ms;
    j["devices"][dev] = std::move(e);
  }
  std::error_code ec;
  fs::path target(path_);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << j.dump(1) << "\n";
    out.flush();
    if (!out) {
      spdlog::warn("cost cache: cannot write {}; the measurements of this run are not saved", tmp);
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    spdlog::warn("cost cache: cannot rename {} to {} ({}); the measurements of this run are not saved", tmp, path_,
                 ec.message());
    fs::remove(tmp, ec);
    return false;
  }
  dirty_ = false;
  load_failed_ = false;
  return true;
}

}  // namespace tensat::cost
