// Table cost model (see table_model.h).
#include "gpu_cost/table_model.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tensat::cost {

namespace {

bool read_text(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

std::string fmt_ms(double ms) {
  std::ostringstream s;
  s << ms;
  return s.str();
}

}  // namespace

TableModel::TableModel(const std::string& path, const std::string& device, const DeviceProfile& fallback)
    : origin_(path), fallback_(fallback) {
  if (path.empty()) throw std::invalid_argument("cost model 'table' needs a cost table file");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw std::invalid_argument("cost table " + path + " does not exist");
  std::string text;
  if (!read_text(path, &text)) {
    problem_ = "cannot be read";
    device_ = label_ = device.empty() ? "?" : device;
    spdlog::warn("cost table {} cannot be read; every kernel is priced by roofline {}", path, fallback_.name);
    return;
  }
  load(text, device);
}

TableModel::TableModel(const EmbeddedTable& table, const DeviceProfile& fallback)
    : label_(table.profile), origin_("built-in " + std::string(table.file)), fallback_(fallback) {
  load(std::string(table.text), "");
}

TableModel::~TableModel() = default;

void TableModel::load(const std::string& text, const std::string& device) {
  auto unusable = [&](const std::string& why) {
    problem_ = why;
    if (device_.empty()) device_ = device.empty() ? "?" : device;
    if (label_.empty()) label_ = device_;
    spdlog::warn("cost table {} cannot be used ({}); every kernel is priced by roofline {}", origin_, why,
                 fallback_.name);
  };
  std::string error;
  auto parsed = parse_cost_cache(text, &error);
  if (!parsed) return unusable(error.rfind("version ", 0) == 0 ? error : "corrupted: " + error);
  version_ = parsed->version;
  if (device.empty()) {
    if (parsed->devices.empty()) return unusable("it holds no device");
    device_ = parsed->devices.begin()->first;
    if (parsed->devices.size() > 1)
      spdlog::warn("cost table {} holds {} devices; using \"{}\" (choose one with the table device option)", origin_,
                   parsed->devices.size(), device_);
  } else {
    if (!parsed->devices.count(device))
      throw std::invalid_argument("cost table " + origin_ + " has no entries for device \"" + device + "\"");
    device_ = device;
  }
  if (label_.empty()) label_ = device_;
  const CostCache::Device& d = parsed->devices.at(device_);
  method_ = d.method;
  entries_ = d.costs;
  index_.reserve(entries_.size());
  for (const auto& [sig, ms] : entries_) index_.emplace(sig, Indexed{ms});
  if (auto it = d.launch_ms.find("graph"); it != d.launch_ms.end()) launch_ms_ = it->second;
  if (entries_.empty()) return unusable("no costs for device \"" + device_ + "\"");
  if (const DeviceProfile* p = match_profile(device_)) fallback_ = *p;
  usable_ = true;
}

std::string TableModel::detail() const {
  if (!usable_) return "unusable table (" + problem_ + "): every kernel priced by roofline:" + fallback_.name + " (" + origin_ + ")";
  std::string s = method_ + ", v" + std::to_string(version_) + "; " + std::to_string(entries_.size()) +
                  " signatures measured on " + device_ + " (" + origin_ + ")";
  if (launch_ms_ > 0) s += "; + " + fmt_ms(launch_ms_) + " ms per kernel launch (graph)";
  return s;
}

std::string TableModel::fallback_name() const {
  if (!usable_) return "roofline:" + fallback_.name;
  return "the model calibrated to " + name();
}

std::vector<FallbackPrice> TableModel::fallback_prices() const {
  std::vector<FallbackPrice> out;
  out.reserve(missed_.size());
  for (const auto& [sig, p] : missed_) out.push_back(p);
  return out;
}

const CalibratedModel& TableModel::calibrated() const {
  if (!calibrated_) calibrated_ = std::make_unique<CalibratedModel>(entries_, fallback_);
  return *calibrated_;
}

bool TableModel::covers(const std::vector<std::string>& signatures) const {
  for (const auto& s : signatures)
    if (!entries_.count(s)) return false;
  return true;
}

Price TableModel::kernel_price(Op op, const Children& c, const std::string& sig) {
  if (auto it = index_.find(sig); it != index_.end()) {
    ++hits_;
    if (launch_ms_ <= 0) return {it->second.ms, false};
    if (it->second.kernels < 0) it->second.kernels = op_work(op, c).kernels;
    return {it->second.ms + launch_ms_ * it->second.kernels, false};
  }
  ++misses_;
  auto m = missed_.find(sig);
  if (m == missed_.end()) {
    const double launch = launch_ms_ > 0 ? launch_ms_ * op_work(op, c).kernels : 0.0;
    FallbackPrice fp;
    fp.signature = sig;
    if (usable_) {
      auto e = calibrated().estimate(op, c);
      fp.ms = e.ms + launch;
      fp.by = e.by;
    } else {
      fp.ms = roofline_ms(op_work(op, c), fallback_);
      fp.by = "roofline:" + fallback_.name;
    }
    spdlog::debug("cost table {}: no entry for {}; {}: {:.4f} ms", name(), sig, fp.by, fp.ms);
    m = missed_.emplace(sig, std::move(fp)).first;
  }
  return {m->second.ms, true};
}

}  // namespace tensat::cost
