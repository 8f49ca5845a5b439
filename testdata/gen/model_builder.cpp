#include "testdata/gen/model_builder.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace gen {

static_assert(std::endian::native == std::endian::little, "raw_data is written as little-endian floats");

namespace {

constexpr int64_t kIrVersion = 8;
constexpr int64_t kOpsetVersion = 13;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

void set_value_info(onnx::ValueInfoProto* vi, const std::string& name, const Shape& shape) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  auto* sh = tt->mutable_shape();
  for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
}

void add_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t x : v) a->add_ints(x);
}

void add_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(v);
}

int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1) {
  int64_t span = in + p0 + p1 - k;
  if (span < 0 || s <= 0) fail("window larger than padded input");
  return span / s + 1;
}

}  // namespace

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? "," : "") << s[i];
  os << ']';
  return os.str();
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

void Rng::fill_uniform(float* out, size_t n, float bound) {
  constexpr float kScale = 1.0f / 16777216.0f;  // 2^-24
  size_t i = 0;
  for (; i + 1 < n; i += 2) {
    uint64_t r = next();
    float u0 = static_cast<float>(r >> 40) * kScale;
    float u1 = static_cast<float>((r >> 8) & 0xFFFFFFu) * kScale;
    out[i] = (2.0f * u0 - 1.0f) * bound;
    out[i + 1] = (2.0f * u1 - 1.0f) * bound;
  }
  if (i < n) out[i] = (2.0f * static_cast<float>(next() >> 40) * kScale - 1.0f) * bound;
}

ModelBuilder::ModelBuilder(std::string graph_name, uint64_t seed) : graph_(model_.mutable_graph()), rng_(seed) {
  graph_->set_name(std::move(graph_name));
}

void ModelBuilder::claim(const std::string& value_name) {
  if (finished_) fail("ModelBuilder used after finish()");
  if (value_name.empty()) fail("empty value name");
  if (!names_.insert(value_name).second) fail("duplicate name '" + value_name + "'");
}

onnx::NodeProto* ModelBuilder::node(const std::string& op, const std::string& name,
                                    const std::vector<std::string>& inputs, const std::string& output,
                                    const Shape& shape) {
  claim(output);
  shapes_[output] = shape;
  auto* n = graph_->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& in : inputs) n->add_input(in);
  n->add_output(output);
  stats_.op_counts[op]++;
  stats_.nodes++;
  return n;
}

Tensor ModelBuilder::input(const std::string& name, const Shape& shape) {
  claim(name);
  set_value_info(graph_->add_input(), name, shape);
  return {name, shape};
}

Tensor ModelBuilder::weight(const std::string& name, const Shape& shape, float bound) {
  claim(name);
  auto* t = graph_->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  const size_t n = static_cast<size_t>(numel(shape));
  std::string* raw = t->mutable_raw_data();
  raw->resize(n * sizeof(float));
  // Fill in chunks through a float buffer (no type-punning of the string's storage).
  constexpr size_t kChunk = 1 << 16;
  std::vector<float> buf(std::min(n, kChunk));
  for (size_t off = 0; off < n; off += kChunk) {
    size_t m = std::min(kChunk, n - off);
    rng_.fill_uniform(buf.data(), m, bound);
    std::memcpy(raw->data() + off * sizeof(float), buf.data(), m * sizeof(float));
  }
  stats_.weight_count++;
  stats_.weight_elems += static_cast<int64_t>(n);
  stats_.weight_bytes += static_cast<int64_t>(n * sizeof(float));
  return {name, shape};
}

Tensor ModelBuilder::batchnorm(const std::string& name, const Tensor& x) {
  if (x.shape.size() < 2) fail(name + ": batchnorm input needs a channel axis");
  const Shape c{x.dim(1)};
  auto near = [&](const std::string& suffix, float centre) {
    Tensor t = weight(name + "." + suffix, c, 0.1f);
    auto* raw = graph_->mutable_initializer(graph_->initializer_size() - 1)->mutable_raw_data();
    for (size_t i = 0; i < raw->size(); i += sizeof(float)) {
      float v;
      std::memcpy(&v, raw->data() + i, sizeof(float));
      v += centre;
      std::memcpy(raw->data() + i, &v, sizeof(float));
    }
    return t;
  };
  Tensor scale = near("scale", 1.0f), bias = near("B", 0.0f), mean = near("mean", 0.0f), var = near("var", 1.0f);
  auto* n = node("BatchNormalization", name, {x.name, scale.name, bias.name, mean.name, var.name}, name, x.shape);
  auto* a = n->add_attribute();
  a->set_name("epsilon");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(1e-5f);
  return {name, x.shape};
}

Tensor ModelBuilder::weight_fan_in(const std::string& name, const Shape& shape, int64_t fan_in, float gain) {
  if (fan_in <= 0) fail("weight '" + name + "': fan_in must be positive");
  float bound = gain * std::sqrt(3.0f / static_cast<float>(fan_in));
  return weight(name, shape, bound);
}

Tensor ModelBuilder::int64_const(const std::string& name, const std::vector<int64_t>& values) {
  claim(name);
  auto* t = graph_->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return {name, {static_cast<int64_t>(values.size())}};
}

Tensor ModelBuilder::conv(const std::string& name, const Tensor& x, const ConvSpec& s) {
  if (x.shape.size() != 4) fail(name + ": conv input must be NCHW, got " + shape_str(x.shape));
  const int64_t cin = x.dim(1);
  if (s.groups <= 0 || cin % s.groups != 0 || s.cout % s.groups != 0)
    fail(name + ": groups " + std::to_string(s.groups) + " do not divide channels " + std::to_string(cin) +
         " -> " + std::to_string(s.cout));
  const int64_t cin_g = cin / s.groups;
  const float gain = s.gain > 0.0f ? s.gain : (s.relu ? std::sqrt(2.0f) : 1.0f);
  Tensor w = weight_fan_in(name + ".weight", {s.cout, cin_g, s.kh, s.kw}, cin_g * s.kh * s.kw, gain);
  std::vector<std::string> ins{x.name, w.name};
  if (s.bias) {
    Tensor b = weight_fan_in(name + ".bias", {s.cout}, cin_g * s.kh * s.kw, 1.0f);
    ins.push_back(b.name);
  }
  Shape out{x.dim(0), s.cout, conv_out(x.dim(2), s.kh, s.sh, s.pads[0], s.pads[2]),
            conv_out(x.dim(3), s.kw, s.sw, s.pads[1], s.pads[3])};
  auto* n = node("Conv", name, ins, name, out);
  add_ints(n, "kernel_shape", {s.kh, s.kw});
  add_ints(n, "strides", {s.sh, s.sw});
  add_ints(n, "pads", {s.pads[0], s.pads[1], s.pads[2], s.pads[3]});
  add_ints(n, "dilations", {1, 1});
  add_int(n, "group", s.groups);
  Tensor y{name, out};
  return s.relu ? relu(name + ".relu", y) : y;
}

Tensor ModelBuilder::matmul(const std::string& name, const Tensor& a, const Tensor& b) {
  const size_t r = a.shape.size();
  if (r < 2 || b.shape.size() != r) fail(name + ": matmul needs equal ranks >= 2");
  for (size_t i = 0; i + 2 < r; ++i)
    if (a.shape[i] != b.shape[i]) fail(name + ": matmul batch dims differ");
  if (a.shape[r - 1] != b.shape[r - 2])
    fail(name + ": matmul " + shape_str(a.shape) + " x " + shape_str(b.shape));
  Shape out = a.shape;
  out[r - 1] = b.shape[r - 1];
  node("MatMul", name, {a.name, b.name}, name, out);
  return {name, out};
}

Tensor ModelBuilder::linear(const std::string& name, const Tensor& x, int64_t n, bool relu_after, float gain) {
  const int64_t k = x.shape.back();
  const float g = gain > 0.0f ? gain : (relu_after ? std::sqrt(2.0f) : 1.0f);
  Tensor w = weight_fan_in(name + ".weight", {k, n}, k, g);
  Tensor y = matmul(name, x, w);
  return relu_after ? relu(name + ".relu", y) : y;
}

Tensor ModelBuilder::binary(const std::string& op, const std::string& name, const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape)
    fail(name + ": " + op + " of " + shape_str(a.shape) + " and " + shape_str(b.shape) + " (no broadcasting here)");
  node(op, name, {a.name, b.name}, name, a.shape);
  return {name, a.shape};
}

Tensor ModelBuilder::add(const std::string& name, const Tensor& a, const Tensor& b) { return binary("Add", name, a, b); }
Tensor ModelBuilder::mul(const std::string& name, const Tensor& a, const Tensor& b) { return binary("Mul", name, a, b); }

Tensor ModelBuilder::unary(const std::string& op, const std::string& name, const Tensor& x) {
  node(op, name, {x.name}, name, x.shape);
  return {name, x.shape};
}

Tensor ModelBuilder::relu(const std::string& name, const Tensor& x) { return unary("Relu", name, x); }
Tensor ModelBuilder::tanh(const std::string& name, const Tensor& x) { return unary("Tanh", name, x); }
Tensor ModelBuilder::sigmoid(const std::string& name, const Tensor& x) { return unary("Sigmoid", name, x); }

Tensor ModelBuilder::pool(const std::string& op, const std::string& name, const Tensor& x, int64_t kh, int64_t kw,
                          int64_t sh, int64_t sw, const Pads& pads) {
  if (x.shape.size() != 4) fail(name + ": pool input must be NCHW");
  if (pads[0] >= kh || pads[2] >= kh || pads[1] >= kw || pads[3] >= kw) fail(name + ": pad must be < kernel");
  Shape out{x.dim(0), x.dim(1), conv_out(x.dim(2), kh, sh, pads[0], pads[2]),
            conv_out(x.dim(3), kw, sw, pads[1], pads[3])};
  auto* n = node(op, name, {x.name}, name, out);
  add_ints(n, "kernel_shape", {kh, kw});
  add_ints(n, "strides", {sh, sw});
  add_ints(n, "pads", {pads[0], pads[1], pads[2], pads[3]});
  return {name, out};
}

Tensor ModelBuilder::maxpool(const std::string& name, const Tensor& x, int64_t kh, int64_t kw, int64_t sh,
                             int64_t sw, const Pads& pads) {
  return pool("MaxPool", name, x, kh, kw, sh, sw, pads);
}

Tensor ModelBuilder::avgpool(const std::string& name, const Tensor& x, int64_t kh, int64_t kw, int64_t sh,
                             int64_t sw, const Pads& pads) {
  return pool("AveragePool", name, x, kh, kw, sh, sw, pads);
}

Tensor ModelBuilder::concat(const std::string& name, const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) fail(name + ": concat of nothing");
  Shape out = xs[0].shape;
  const auto r = static_cast<int64_t>(out.size());
  if (axis < 0 || axis >= r) fail(name + ": concat axis out of range");
  std::vector<std::string> ins;
  out[axis] = 0;
  for (const auto& x : xs) {
    if (static_cast<int64_t>(x.shape.size()) != r) fail(name + ": concat rank mismatch");
    for (int64_t i = 0; i < r; ++i)
      if (i != axis && x.shape[i] != xs[0].shape[i])
        fail(name + ": concat of " + shape_str(xs[0].shape) + " and " + shape_str(x.shape));
    out[axis] += x.shape[axis];
    ins.push_back(x.name);
  }
  auto* n = node("Concat", name, ins, name, out);
  add_int(n, "axis", axis);
  return {name, out};
}

Tensor ModelBuilder::reshape(const std::string& name, const Tensor& x, const Shape& shape) {
  for (int64_t d : shape)
    if (d <= 0) fail(name + ": reshape target must be fully static and positive");
  if (numel(shape) != numel(x.shape)) fail(name + ": reshape " + shape_str(x.shape) + " -> " + shape_str(shape));
  Tensor s = int64_const(name + ".shape", shape);
  node("Reshape", name, {x.name, s.name}, name, shape);
  return {name, shape};
}

Tensor ModelBuilder::transpose(const std::string& name, const Tensor& x, const std::vector<int64_t>& perm) {
  if (perm.size() != x.shape.size()) fail(name + ": permutation rank mismatch");
  Shape out(perm.size());
  std::vector<bool> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size()) || seen[perm[i]]) fail(name + ": bad permutation");
    seen[perm[i]] = true;
    out[i] = x.shape[perm[i]];
  }
  auto* n = node("Transpose", name, {x.name}, name, out);
  add_ints(n, "perm", perm);
  return {name, out};
}

void ModelBuilder::output(const Tensor& x) {
  if (finished_) fail("ModelBuilder used after finish()");
  if (!names_.count(x.name)) fail("output '" + x.name + "' is not a value of this graph");
  set_value_info(graph_->add_output(), x.name, x.shape);
}

onnx::ModelProto ModelBuilder::finish() {
  if (finished_) fail("finish() called twice");
  if (graph_->output_size() == 0) fail("graph '" + graph_->name() + "' has no outputs");
  model_.set_ir_version(kIrVersion);
  model_.set_producer_name("onnx-tensat-gen");
  model_.set_producer_version("0.1.0");
  model_.set_model_version(1);
  if (!doc_.empty()) model_.set_doc_string(doc_);
  auto* opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpsetVersion);

  // Strict ONNX shape inference must agree with the shapes tracked here. Float weight bytes
  // are moved aside meanwhile (O(1) swaps), so that no copy of the weights is made.
  std::vector<std::string> stash(graph_->initializer_size());
  // (Only tensors that have raw_data: in proto2, mutable_raw_data() would mark the int64
  // shape constants as having empty raw data.)
  auto swap_weights = [&] {
    for (int i = 0; i < graph_->initializer_size(); ++i) {
      auto* t = graph_->mutable_initializer(i);
      if (t->has_raw_data()) stash[i].swap(*t->mutable_raw_data());
    }
  };
  swap_weights();
  try {
    onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1));
  } catch (const std::exception& e) {
    fail("ONNX shape inference failed on '" + graph_->name() + "': " + e.what());
  }
  // Every node output must have been inferred, with exactly the shape tracked here.
  std::unordered_map<std::string, Shape> inferred;
  auto collect = [&](const onnx::ValueInfoProto& vi) {
    Shape s;
    for (const auto& d : vi.type().tensor_type().shape().dim()) s.push_back(d.has_dim_value() ? d.dim_value() : -1);
    inferred[vi.name()] = s;
  };
  for (const auto& vi : graph_->value_info()) collect(vi);
  for (const auto& vi : graph_->output()) collect(vi);
  graph_->clear_value_info();
  swap_weights();
  for (const auto& [name, shape] : shapes_) {
    auto it = inferred.find(name);
    if (it == inferred.end()) fail("ONNX shape inference gave no shape for '" + name + "'");
    if (it->second != shape)
      fail("shape of '" + name + "': builder " + shape_str(shape) + ", ONNX " + shape_str(it->second));
  }

  try {
    onnx::checker::check_model(model_);
  } catch (const std::exception& e) {
    fail("ONNX checker rejected '" + graph_->name() + "': " + e.what());
  }
  finished_ = true;
  return std::move(model_);
}

}  // namespace gen
