// WeightStore implementation.
#include "lang/weights.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <stdexcept>

namespace tensat {

size_t dtype_size(DType d) {
  switch (d) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::F64: return 8;
    case DType::I64: return 8;
    case DType::I32: return 4;
    case DType::I8: return 1;
    case DType::U8: return 1;
    case DType::Bool: return 1;
    case DType::Other: return 1;
  }
  return 1;
}

void WeightStore::put(const std::string& name, WeightData data) {
  assert(data.type.dtype == DType::Other ||
         data.bytes.size() == static_cast<size_t>(num_elements(data.type.shape)) * dtype_size(data.type.dtype));
  map_[name] = std::move(data);
}

void WeightStore::put_f32(const std::string& name, Shape shape, const std::vector<float>& values) {
  WeightData d;
  d.type = TensorType{DType::F32, std::move(shape)};
  assert(values.size() == d.count());
  d.bytes.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(d.bytes.data(), values.data(), d.bytes.size());
  put(name, std::move(d));
}

const WeightData& WeightStore::get(const std::string& name) const {
  auto it = map_.find(name);
  if (it == map_.end()) throw std::out_of_range("no weight named '" + name + "'");
  return it->second;
}

WeightData& WeightStore::get_mut(const std::string& name) {
  auto it = map_.find(name);
  if (it == map_.end()) throw std::out_of_range("no weight named '" + name + "'");
  return it->second;
}

std::vector<std::string> WeightStore::names() const {
  std::vector<std::string> out;
  out.reserve(map_.size());
  for (const auto& [k, v] : map_) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

size_t WeightStore::total_bytes() const {
  size_t n = 0;
  for (const auto& [k, v] : map_) n += v.bytes.size();
  return n;
}

std::string WeightStore::fresh_name(const std::string& base) const {
  if (!contains(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!contains(n)) return n;
  }
}

}  // namespace tensat
