// ModelBuilder: a small helper that writes TASO-style inference graphs as ONNX models.
//
// Each helper emits plain ONNX nodes (opset 13, default domain) and tracks the static shape of
// every value it creates, so that callers can ask for shapes (`x.shape`) and the builder can
// size weights from them. Convolutions and matmuls never fuse their activation: a Relu is a
// separate node (fusing is the optimizer's job).
//
// Weights are float32, drawn uniformly from [-b, b] with b = gain * sqrt(3 / fan_in), i.e.
// variance gain^2 / fan_in. The default gain is sqrt(2) in front of a ReLU (He) and 1
// otherwise, so that activations keep an O(1) second moment through deep nets.
// The random stream is splitmix64, seeded per model: the same seed gives the same bytes.
#pragma once

#include <onnx/onnx_pb.h>

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace gen {

using Shape = std::vector<int64_t>;

std::string shape_str(const Shape& s);
int64_t numel(const Shape& s);

// A value in the graph under construction: its ONNX name and static shape.
struct Tensor {
  std::string name;
  Shape shape;
  int64_t dim(size_t i) const { return shape.at(i); }
};

// splitmix64: tiny, fast, good enough for weights; deterministic across platforms.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Fills out[0..n) with floats uniform in [-bound, bound).
  void fill_uniform(float* out, size_t n, float bound);

 private:
  uint64_t state_;
};

// Pads in ONNX order for 2-D ops: {top, left, bottom, right}.
using Pads = std::array<int64_t, 4>;
// Symmetric "same" padding (k-1)/2 for odd kernels (the paper's PSAME).
inline Pads same_pads(int64_t kh, int64_t kw) { return {(kh - 1) / 2, (kw - 1) / 2, (kh - 1) / 2, (kw - 1) / 2}; }
inline Pads no_pads() { return {0, 0, 0, 0}; }

struct ConvSpec {
  int64_t cout = 0;
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;
  Pads pads{0, 0, 0, 0};
  int64_t groups = 1;
  bool bias = false;
  bool relu = false;
  float gain = 0.0f;  // 0: sqrt(2) if relu, else 1
};

struct ModelStats {
  std::map<std::string, int> op_counts;  // ONNX op_type -> number of nodes
  int64_t weight_count = 0;              // float initializers (not reshape shapes)
  int64_t weight_elems = 0;              // float parameters
  int64_t weight_bytes = 0;
  int nodes = 0;
  int count(const std::string& op) const {
    auto it = op_counts.find(op);
    return it == op_counts.end() ? 0 : it->second;
  }
};

class ModelBuilder {
 public:
  ModelBuilder(std::string graph_name, uint64_t seed);

  // Leaves.
  Tensor input(const std::string& name, const Shape& shape);
  // A float weight uniform in [-bound, bound].
  Tensor weight(const std::string& name, const Shape& shape, float bound);
  // A float weight with variance gain^2 / fan_in.
  Tensor weight_fan_in(const std::string& name, const Shape& shape, int64_t fan_in, float gain);
  Tensor int64_const(const std::string& name, const std::vector<int64_t>& values);

  // Operators. `name` names the node and its output value; weights get `name + ".weight"`.
  Tensor conv(const std::string& name, const Tensor& x, const ConvSpec& spec);
  Tensor matmul(const std::string& name, const Tensor& a, const Tensor& b);
  // x · W with a fresh weight W [K, n] (variance gain^2 / K), optional separate Relu.
  Tensor linear(const std::string& name, const Tensor& x, int64_t n, bool relu, float gain = 0.0f);
  Tensor add(const std::string& name, const Tensor& a, const Tensor& b);
  Tensor mul(const std::string& name, const Tensor& a, const Tensor& b);
  Tensor relu(const std::string& name, const Tensor& x);
  Tensor tanh(const std::string& name, const Tensor& x);
  Tensor sigmoid(const std::string& name, const Tensor& x);
  Tensor maxpool(const std::string& name, const Tensor& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                 const Pads& pads);
  // AveragePool with ONNX's default count_include_pad = 0 (as TASO's cuDNN
  // CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING).
  Tensor avgpool(const std::string& name, const Tensor& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                 const Pads& pads);
  Tensor concat(const std::string& name, const std::vector<Tensor>& xs, int64_t axis);
  // Inference BatchNormalization (epsilon 1e-5) with parameters near the identity: scale and
  // variance uniform in [0.9, 1.1], bias and mean in [-0.1, 0.1] (initializers name.scale,
  // name.B, name.mean, name.var).
  Tensor batchnorm(const std::string& name, const Tensor& x);
  // Reshape with the target shape as an int64 initializer `name + ".shape"`.
  Tensor reshape(const std::string& name, const Tensor& x, const Shape& shape);
  Tensor transpose(const std::string& name, const Tensor& x, const std::vector<int64_t>& perm);
  // Declares x as a graph output (its value keeps its name).
  void output(const Tensor& x);

  void set_doc(const std::string& doc) { doc_ = doc; }
  // The batch size the model builders give their inputs (1 unless `--batch N`). Weights do
  // not depend on it, so a model's weights are the same at every batch size.
  void set_batch(int64_t batch) { batch_ = batch; }
  int64_t batch() const { return batch_; }

  const ModelStats& stats() const { return stats_; }

  // Finishes the model (ir_version 8, opset 13), runs ONNX shape inference (strict, checking
  // that it agrees with the declared output shapes) and the ONNX checker; throws on failure.
  // Moves the model out: the builder is spent afterwards.
  onnx::ModelProto finish();

 private:
  onnx::NodeProto* node(const std::string& op, const std::string& name, const std::vector<std::string>& inputs,
                        const std::string& output, const Shape& shape);
  Tensor unary(const std::string& op, const std::string& name, const Tensor& x);
  Tensor binary(const std::string& op, const std::string& name, const Tensor& a, const Tensor& b);
  Tensor pool(const std::string& op, const std::string& name, const Tensor& x, int64_t kh, int64_t kw,
              int64_t sh, int64_t sw, const Pads& pads);
  void claim(const std::string& value_name);

  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
  Rng rng_;
  std::set<std::string> names_;
  std::unordered_map<std::string, Shape> shapes_;  // node outputs -> tracked shape
  std::string doc_;
  ModelStats stats_;
  int64_t batch_ = 1;
  bool finished_ = false;
};

}  // namespace gen
