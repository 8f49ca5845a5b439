// WeightStore: the constant tensors (initializers, Constant nodes, folded weights) that
// `weight` leaves name. Data is kept as raw little-endian bytes so that large models move
// their initializers in without copying; f32() views float32 data in place.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "lang/types.h"

namespace tensat {

struct WeightData {
  TensorType type;
  std::string bytes;  ///< num_elements(type.shape) * element size bytes

  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
  float* f32_mut() { return reinterpret_cast<float*>(bytes.data()); }
  size_t count() const { return static_cast<size_t>(num_elements(type.shape)); }
};

size_t dtype_size(DType d);

class WeightStore {
 public:
  /// Adds or replaces a weight. Asserts the byte size matches the type.
  void put(const std::string& name, WeightData data);
  /// Convenience for float32 data.
  void put_f32(const std::string& name, Shape shape, const std::vector<float>& values);
  bool contains(const std::string& name) const { return map_.count(name) != 0; }
  const WeightData& get(const std::string& name) const;  ///< throws std::out_of_range
  WeightData& get_mut(const std::string& name);
  std::vector<std::string> names() const;               ///< sorted
  size_t size() const { return map_.size(); }
  size_t total_bytes() const;
  /// A name not yet used, derived from `base`.
  std::string fresh_name(const std::string& base) const;

 private:
  std::unordered_map<std::string, WeightData> map_;
};

}  // namespace tensat
