// Importer: file loading, validation, the walk over the ONNX graph, opaque nodes.
#include "importer/importer.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <queue>
#include <set>

#include "importer/const_fold.h"
#include "importer/cse.h"
#include "importer/dce.h"
#include "importer/importer_impl.h"
#include "importer/onnx_graph.h"
#include "importer/shape_fallback.h"
#include "importer/tensor_proto.h"
#include "onnx_model/dtype.h"
#include "onnx_model/external_data.h"
#include "onnx_model/shape_op.h"
#include "support/atomic_file.h"
#include "support/file_bytes.h"

namespace tensat {

namespace {

std::optional<TensorType> type_from_value_info(const onnx::TypeProto& tp) {
  if (!tp.has_tensor_type()) return std::nullopt;
  const auto& tt = tp.tensor_type();
  if (!tt.has_shape() || tt.elem_type() == 0) return std::nullopt;
  TensorType t;
  t.dtype = dtype_or_other(tt.elem_type());
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    t.shape.push_back(d.dim_value());
  }
  return t;
}

}  // namespace

std::pair<std::string, Shape> parse_input_shape_flag(const std::string& flag) {
  auto colon = flag.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= flag.size())
    throw ImportError("--input-shape '" + flag + "': expected NAME:1x3x224x224");
  Shape s;
  std::string dims = flag.substr(colon + 1);
  size_t start = 0;
  while (start <= dims.size()) {
    size_t x = dims.find('x', start);
    std::string part = dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
    try {
      size_t used = 0;
      long long v = std::stoll(part, &used);
      if (used != part.size() || v <= 0) throw std::invalid_argument("bad");
      s.push_back(v);
    } catch (const std::exception&) {
      throw ImportError("--input-shape '" + flag + "': dimension '" + part + "' is not a positive integer");
    }
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return {flag.substr(0, colon), s};
}

ImportResult import_onnx_file(const std::string& path, const ImportOptions& opts) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw ImportError(path + ": no such file");
  if (S_ISDIR(st.st_mode)) throw ImportError(path + ": is a directory, not an ONNX file");
  if (st.st_size == 0) throw ImportError(path + ": file is empty, not an ONNX model");
  if (st.st_size > INT32_MAX)
    throw ImportError(path + ": larger than 2 GiB, protobuf's limit for one message; an ONNX model that large "
                             "keeps its weights in external data files");
  onnx::ModelProto model;
  bool ok = false;
  try {
    // One contiguous buffer: protobuf then copies each weight's raw data once (file_bytes.h).
    const FileBytes bytes(path);
    if (bytes.size() > INT32_MAX) throw ImportError(path + ": grew past 2 GiB while it was read");
    ok = model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  } catch (const FileError& e) {
    throw ImportError(e.what());
  }
  if (!ok) throw ImportError(path + ": not a valid ONNX model (protobuf parse failed; truncated or not ONNX)");
  ImportOptions o = opts;
  if (o.external_data_dir.empty()) o.external_data_dir = std::filesystem::path(path).parent_path().string();
  if (o.external_data_dir.empty()) o.external_data_dir = ".";
  return import_onnx_model(std::move(model), path, o);
}

ImportResult import_onnx_model(onnx::ModelProto model, const std::string& source, const ImportOptions& opts) {
  ImportResult out;
  bool external = false;
  for_each_tensor(model, [&](onnx::TensorProto& t) { external = external || uses_external_data(t); });
  if (external) {
    if (opts.external_data_dir.empty())
      throw ImportError(source + ": the model keeps tensors in external data files, but has no folder to read them from");
    try {
      out.ctx.external_data_files = load_external_data(model, opts.external_data_dir, opts.external_data_files);
    } catch (const ExternalDataError& e) {
      throw ImportError(source + ": " + e.what());
    }
  }
  detail::Importer im(out, source);
  im.run(model, opts);
  return out;
}

namespace detail {

std::string Importer::where(const onnx::NodeProto& n) const {
  std::string s = source_ + ": node '" + (n.name().empty() ? (n.output_size() ? n.output(0) : "?") : n.name()) +
                  "' (" + (n.domain().empty() ? "" : n.domain() + ":") + n.op_type() + ")";
  return s;
}

ir::NodeId Importer::value(const onnx::NodeProto& n, int i) const {
  const std::string& name = n.input(i);
  auto it = env_.find(name);
  if (it == env_.end()) throw ImportError(where(n) + " reads undefined tensor '" + name + "'");
  return it->second;
}

const WeightData* Importer::constant(const onnx::NodeProto& n, int i) {
  const WeightData* w = shape_constant(n, i);
  if (w && out_.ctx.shape_derived.count(n.input(i)))
    out_.fixed_dim_uses.push_back(
        {std::nullopt, 0, where(n) + ": reads '" + n.input(i) + "', computed from the input shapes", "", false});
  return w;
}

const WeightData* Importer::size_constant(const onnx::NodeProto& n, int i, bool may_follow) {
  const WeightData* w = shape_constant(n, i);
  if (w && out_.ctx.shape_derived.count(n.input(i)))
    out_.fixed_dim_uses.push_back({std::nullopt, 0,
                                   where(n) + ": its sizes come from '" + n.input(i) +
                                       "', computed from the input shapes",
                                   n.input(i), may_follow});
  return w;
}

const WeightData* Importer::shape_constant(const onnx::NodeProto& n, int i) const {
  if (!has_input(n, i)) return nullptr;
  ir::NodeId id = value(n, i);
  const ir::Node& node = g_.node(id);
  if (node.op != Op::Weight && node.op != Op::Input) return nullptr;
  auto leaf = parse_leaf_id(g_.node(node.children[0]).sym);
  if (!leaf || !out_.weights.contains(leaf->name)) return nullptr;
  // An input leaf has a value here only if it is a shape value (computed at run time in an
  // output with symbolic dimensions, its value at the fixed shapes in the store).
  if (node.op == Op::Input && !out_.ctx.shape_values.count(leaf->name)) return nullptr;
  return &out_.weights.get(leaf->name);
}

int Importer::consumers(const std::string& name) const {
  auto it = consumers_.find(name);
  return it == consumers_.end() ? 0 : it->second;
}

bool Importer::is_plain_conv(ir::NodeId id) const { return plain_convs_.count(id) != 0; }

ir::NodeId Importer::new_weight(const std::string& base, Shape shape, std::vector<float> data) {
  std::string name = out_.weights.fresh_name(base);
  TensorType t{DType::F32, shape};
  out_.weights.put_f32(name, std::move(shape), data);
  return g_.weight(name, t);
}

ir::NodeId Importer::add(Op op, std::vector<ir::NodeId> kids) {
  ir::NodeId id = 0;
  std::string err;
  if (!g_.try_add(ir::Node{op, std::move(kids), 0, {}}, &id, &err)) throw NotLowerable{err};
  if (op == Op::Conv) plain_convs_.insert(id);
  return id;
}

std::optional<TensorType> Importer::value_type(const std::string& name) const {
  auto it = value_types_.find(name);
  if (it == value_types_.end()) return std::nullopt;
  return it->second;
}

void Importer::load_initializers(onnx::GraphProto& graph, const ImportOptions&) {
  std::unordered_set<std::string> input_names;
  for (const auto& i : graph.input()) input_names.insert(i.name());
  for (auto& t : *graph.mutable_initializer()) {
    if (t.name().empty()) throw ImportError(source_ + ": an initializer has no name");
    if (input_names.count(t.name())) {
      out_.ctx.overridable_initializers.push_back(t);  // stays an input; default kept verbatim
      continue;
    }
    if (!dtype_from_onnx(t.data_type()) || t.data_location() == onnx::TensorProto::EXTERNAL) {
      if (t.data_location() == onnx::TensorProto::EXTERNAL)
        throw ImportError(source_ + ": initializer '" + t.name() +
                          "' uses external data; save the model with all data embedded");
      TensorType type{DType::Other, {}};
      for (auto d : t.dims()) type.shape.push_back(d);
      for (auto d : type.shape)
        if (d <= 0) throw ImportError(source_ + ": initializer '" + t.name() + "' has an empty or negative dimension");
      env_[t.name()] = g_.weight(t.name(), type);
      out_.ctx.raw_initializers[t.name()] = t;
      continue;
    }
    std::optional<WeightData> data = take_tensor_data(t, source_);
    if (!data) throw ImportError(source_ + ": initializer '" + t.name() + "': tensor data type " +
                                 std::to_string(t.data_type()) + " not supported");
    WeightData w = std::move(*data);
    TensorType type = w.type;
    out_.weights.put(t.name(), std::move(w));
    if (out_.ctx.shape_values.count(t.name())) {
      env_[t.name()] = g_.input(t.name(), type);  // ImportOptions::shape_values_at_run_time
      continue;
    }
    env_[t.name()] = g_.weight(t.name(), type);
    weight_names_.insert(t.name());
  }
  graph.clear_initializer();
}

void Importer::load_inputs(onnx::GraphProto& graph, const ImportOptions& opts) {
  std::unordered_set<std::string> seen;
  for (auto& [name, shape] : opts.input_shapes) {
    bool found = false;
    for (const auto& i : graph.input()) found |= i.name() == name;
    if (!found && ir3_initializer_inputs_.count(name))
      throw ImportError(source_ + ": --input-shape names '" + name +
                        "', an initializer: under IR version < 4 it is declared an input too, but it is a constant "
                        "weight (as ONNX Runtime takes it), whose shape is its data's");
    if (!found) throw ImportError(source_ + ": --input-shape names '" + name + "', which is not a graph input");
  }
  for (auto& in : *graph.mutable_input()) {
    if (!seen.insert(in.name()).second) throw ImportError(source_ + ": graph input '" + in.name() + "' is declared twice");
    out_.ctx.input_names.push_back(in.name());
    if (!in.type().has_tensor_type())
      throw ImportError(source_ + ": graph input '" + in.name() + "' is not a tensor (sequences/maps are not supported)");
    auto* tt = in.mutable_type()->mutable_tensor_type();
    auto over = opts.input_shapes.find(in.name());
    if (over != opts.input_shapes.end()) {
      if (tt->has_shape() && tt->shape().dim_size() != static_cast<int>(over->second.size()))
        throw ImportError(source_ + ": --input-shape for '" + in.name() + "' has rank " +
                          std::to_string(over->second.size()) + ", the model declares rank " +
                          std::to_string(tt->shape().dim_size()));
      tt->clear_shape();
      for (auto d : over->second) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    if (!tt->has_shape())
      throw ImportError(source_ + ": graph input '" + in.name() + "' has no shape; give one with --input-shape " +
                        in.name() + ":1x3x224x224");
    Shape s;
    for (const auto& d : tt->shape().dim()) {
      if (d.has_dim_value() && d.dim_value() == 0)
        throw ImportError(source_ + ": graph input '" + in.name() +
                          "' has a dimension of size 0; tensors without elements are not supported");
      if (!d.has_dim_value() || d.dim_value() < 0) {
        std::string sym = d.has_dim_param() ? "'" + d.dim_param() + "'" : "unknown";
        // Suggest the declared shape with 1 for every dimension that is not a number.
        std::string example;
        for (const auto& e : tt->shape().dim())
          example += (example.empty() ? "" : "x") +
                     (e.has_dim_value() && e.dim_value() > 0 ? std::to_string(e.dim_value()) : std::string("1"));
        throw ImportError(source_ + ": graph input '" + in.name() + "' has a symbolic dimension (" + sym +
                          "); fix it with --input-shape " + in.name() + ":" + example +
                          " (one number per dimension)");
      }
      s.push_back(d.dim_value());
    }
    TensorType t{dtype_or_other(tt->elem_type()), s};
    env_[in.name()] = g_.input(in.name(), t);
    value_types_[in.name()] = t;
  }
}

void Importer::collect_value_types(const onnx::GraphProto& graph) {
  for (const auto& vi : graph.value_info()) {
    if (auto t = type_from_value_info(vi.type())) {
      value_types_[vi.name()] = *t;
      value_infos_[vi.name()] = vi;
    }
  }
  for (const auto& vi : graph.output())
    if (auto t = type_from_value_info(vi.type())) value_types_[vi.name()] = *t;
}

std::vector<int> Importer::topo_order(const onnx::GraphProto& graph) const {
  // Kahn's algorithm over the nodes, keeping the file order among ready nodes.
  int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : graph.node(i).output())
      if (!o.empty()) {
        if (producer.count(o) || env_.count(o))
          throw ImportError(source_ + ": tensor '" + o + "' is produced twice (node '" + graph.node(i).name() + "')");
        producer[o] = i;
      }
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  std::vector<int> indeg(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    std::vector<std::string> reads(graph.node(i).input().begin(), graph.node(i).input().end());
    for (const auto& a : graph.node(i).attribute()) {
      if (a.has_g()) collect_outer_refs(a.g(), reads);
      for (const auto& gg : a.graphs()) collect_outer_refs(gg, reads);
    }
    std::unordered_set<int> deps;
    for (const auto& in : reads) {
      auto it = producer.find(in);
      if (it != producer.end() && it->second != i) deps.insert(it->second);
      if (it != producer.end() && it->second == i)
        throw ImportError(source_ + ": node '" + graph.node(i).name() + "' reads its own output '" + in + "' (cycle)");
    }
    for (int d : deps) {
      users[static_cast<size_t>(d)].push_back(i);
      indeg[static_cast<size_t>(i)]++;
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (indeg[static_cast<size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[static_cast<size_t>(i)])
      if (--indeg[static_cast<size_t>(u)] == 0) ready.push(u);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (indeg[static_cast<size_t>(i)] > 0)
        throw ImportError(source_ + ": the graph has a cycle through node '" +
                          (graph.node(i).name().empty() ? graph.node(i).op_type() : graph.node(i).name()) + "'");
  }
  return order;
}

void Importer::make_opaque(const onnx::NodeProto& n, const std::string& reason) {
  OpaqueNode op;
  op.node = n;
  std::vector<ir::NodeId> kids;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) continue;
    kids.push_back(value(n, i));
    op.child_inputs.push_back(n.input(i));
  }
  for (const auto& a : n.attribute()) {
    if (a.has_g()) collect_outer_refs(a.g(), op.implicit_inputs);
    for (const auto& gg : a.graphs()) collect_outer_refs(gg, op.implicit_inputs);
  }
  for (const auto& name : op.implicit_inputs) {
    auto it = env_.find(name);
    if (it == env_.end()) throw ImportError(where(n) + ": its subgraph reads undefined tensor '" + name + "'");
    kids.push_back(it->second);
  }
  std::vector<TensorType> outs;
  for (const auto& o : n.output()) {
    if (o.empty()) {
      outs.push_back(TensorType{DType::F32, {1}});  // unused optional output; never read
      continue;
    }
    auto t = value_type(o);
    static const std::set<std::string> kDataDependent = {"NonZero", "NonMaxSuppression", "Unique", "Compress"};
    if (!t && kDataDependent.count(n.op_type()))
      throw ImportError(where(n) + ": the shape of its output '" + o +
                        "' depends on the input's values, and onnx-tensat needs static shapes; optimize the "
                        "model without this part (e.g. a detector's post-processing: export its backbone and head)");
    // No schema at all: not an ONNX operator (a converter's leftover, e.g. tf2onnx's
    // PartitionedCall), or one newer than libonnx 1.12's opset 17 that nothing here types.
    if (!t && default_domain(n) &&
        !onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(out_.ctx.default_opset), ""))
      throw ImportError(where(n) + ": cannot determine the type and static shape of its output '" + o + "': '" +
                        n.op_type() +
                        "' is not an ONNX operator that libonnx 1.12 knows (an invalid model, or an operator of an "
                        "opset above 17)");
    if (!t && hidden_from_libonnx(n, out_.ctx.default_opset))
      throw ImportError(where(n) + ": cannot determine the type and static shape of its output '" + o +
                        "': libonnx 1.12 has only the opset 17 shape rules for " + n.op_type() +
                        ", and onnx-tensat's own do not cover this node; export the model at opset 17, or with "
                        "value_info for its outputs");
    // Another domain's operator: ONNX Runtime's fused ones (its graph optimizations write
    // them), which libonnx has no shape rules for and shape_fallback.h covers a few of, or
    // another domain's that ONNX shape inference did not type.
    if (!t && n.domain() == "com.microsoft")
      throw ImportError(where(n) + ": cannot determine the type and static shape of its output '" + o +
                        "': ONNX has no shape rules for ONNX Runtime's operators (domain 'com.microsoft'), and "
                        "onnx-tensat's own cover only " +
                        contrib_ops_typed() +
                        ", where their inputs have static types; write the model with value_info for the outputs of "
                        "such nodes, or run onnx-tensat on it before ONNX Runtime's graph optimizations");
    if (!t && !default_domain(n))
      throw ImportError(where(n) + ": cannot determine the type and static shape of its output '" + o +
                        "': neither ONNX's shape rules nor onnx-tensat's give one for this operator of domain '" +
                        n.domain() + "'; write the model with value_info for the outputs of such nodes");
    if (!t)
      throw ImportError(where(n) + ": cannot determine the type and static shape of its output '" + o +
                        "' (ONNX shape inference gave none); fix input shapes with --input-shape, or run onnxsim first");
    outs.push_back(*t);
    if (auto vi = value_infos_.find(o); vi != value_infos_.end()) op.output_info.push_back(vi->second);
  }
  if (outs.empty()) throw ImportError(where(n) + ": node has no outputs");
  int64_t index = static_cast<int64_t>(out_.ctx.opaque.size());
  out_.ctx.opaque.push_back(std::move(op));
  kids.insert(kids.begin(), g_.sym(make_opaque_id(index, outs)));
  ir::NodeId id = g_.add(ir::Node{Op::Opaque, std::move(kids), 0, {}});
  if (n.output_size() == 1) {
    env_[n.output(0)] = id;
  } else {
    for (int k = 0; k < n.output_size(); ++k)
      if (!n.output(k).empty()) env_[n.output(k)] = g_.op(Op::Select, {g_.num(k), id});
  }
  out_.stats.opaque_nodes++;
  out_.stats.opaque_reasons[n.op_type() + ": " + reason]++;
}

void Importer::import_node(const onnx::NodeProto& n) {
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty()) (void)value(n, i);  // undefined inputs are an error either way
  bool covered = n.domain().empty() || n.domain() == "ai.onnx";
  if (covered) {
    const size_t uses = out_.fixed_dim_uses.size();  // a node kept opaque resolves nothing
    try {
      if (lower_node(*this, n)) return;
      out_.fixed_dim_uses.resize(uses);
      make_opaque(n, "not in the tensor language");
      return;
    } catch (const NotLowerable& e) {
      out_.fixed_dim_uses.resize(uses);
      spdlog::debug("{}: kept opaque: {}", where(n), e.reason);
      make_opaque(n, e.reason);
      return;
    } catch (const InvalidNode& e) {
      throw ImportError(where(n) + ": invalid node: " + e.reason);
    }
  }
  make_opaque(n, "domain '" + n.domain() + "'");
}

void Importer::check_names(const onnx::GraphProto& graph) const {
  std::unordered_set<std::string> defined;
  for (const auto& i : graph.input()) defined.insert(i.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& n : graph.node())
    for (const auto& o : n.output()) defined.insert(o);
  for (const auto& n : graph.node())
    for (const auto& name : node_reads(n))
      if (!defined.count(name)) throw ImportError(where(n) + " reads undefined tensor '" + name + "'");
}

void Importer::infer_shapes(onnx::ModelProto& model) {
  // ONNX shape inference gives the types of intermediate tensors (needed for opaque nodes).
  // It runs while the initializers are still in the graph (it needs their shapes, and their
  // values for data propagation, e.g. a Reshape target), after the --input-shape overrides.
  // Errors here are not fatal: our own inference covers the lowered nodes.
  // Nodes libonnx 1.12 would infer wrongly or crash on (shape_fallback.h) are hidden from it
  // under another op type for the call; shape_fallback types what it can of them.
  std::vector<std::pair<onnx::NodeProto*, std::string>> hidden;
  for (int k : nodes_hidden_from_libonnx(model)) {
    onnx::NodeProto* n = model.mutable_graph()->mutable_node(k);
    hidden.emplace_back(n, n->op_type());
    n->set_op_type("TensatHiddenFromLibonnx" + n->op_type());
  }
  try {
    onnx::ShapeInferenceOptions sio{false, 0, true};
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), sio);
  } catch (const std::exception& e) {
    spdlog::warn("{}: ONNX shape inference failed ({}); continuing with declared shapes", source_, e.what());
  }
  for (auto& [n, op] : hidden) n->set_op_type(op);
}

// The types a model declares for its intermediate values and outputs, where they name an
// input's symbolic dimension ("N"), at the value --input-shape gave that dimension: in ONNX one
// name is one value throughout a graph. (torch.export writes value_info for every value; with a
// dynamic batch its dimensions are symbolic, and an opset 20 AveragePool or DFT, which libonnx
// 1.12 cannot type, is typed by them.) A symbol given two values is left alone.
void Importer::resolve_symbolic_value_info(onnx::GraphProto& graph) const {
  std::map<std::string, std::optional<int64_t>> value;  // symbol -> its value (nullopt: two)
  for (const auto& d : out_.ctx.declared_inputs) {
    const auto* given = [&]() -> const onnx::ValueInfoProto* {
      for (const auto& in : graph.input())
        if (in.name() == d.name()) return &in;
      return nullptr;
    }();
    if (!given || !d.type().has_tensor_type() || !given->type().tensor_type().has_shape()) continue;
    const auto& ds = d.type().tensor_type().shape();
    const auto& gs = given->type().tensor_type().shape();
    for (int a = 0; a < ds.dim_size() && a < gs.dim_size(); ++a) {
      if (ds.dim(a).dim_param().empty() || !gs.dim(a).has_dim_value()) continue;
      auto [it, added] = value.emplace(ds.dim(a).dim_param(), gs.dim(a).dim_value());
      if (!added && it->second != gs.dim(a).dim_value()) it->second = std::nullopt;
    }
  }
  if (value.empty()) return;
  auto resolve = [&](onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (auto& dim : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (dim.has_dim_value() || dim.dim_param().empty()) continue;
      auto it = value.find(dim.dim_param());
      if (it != value.end() && it->second) dim.set_dim_value(*it->second);
    }
  };
  for (auto& vi : *graph.mutable_value_info()) resolve(vi);
  for (auto& vi : *graph.mutable_output()) resolve(vi);
}

// A value_info without every dimension (one that shape inference wrote in an earlier round,
// before a folded constant fixed the rest, or the exporter's symbolic one) goes before the next
// round: libonnx 1.12 does not refine it (RAFT's Tile stayed [unk, 2, 16, 16] after its input
// was folded to [1, 2, 16, 16]). Only static types are used.
void Importer::drop_incomplete_value_info(onnx::GraphProto& graph) {
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (auto& vi : *graph.mutable_value_info())
    if (!vi.type().has_tensor_type() || type_from_value_info(vi.type())) kept.Add()->Swap(&vi);
  graph.mutable_value_info()->Swap(&kept);
}

void Importer::simplify(onnx::ModelProto& model) {
  // Constant folding and shape inference feed each other: a folded Reshape target or Slice
  // bound lets shape inference type the node's output, whose Shape then folds in the next
  // round. libonnx 1.12's data propagation (enabled) covers part of the chains itself; where a
  // block's shapes come from the block before it, each block takes a round (PyTorch's Swin-T:
  // 17). Every round but the last folds a node or types a value, so this ends; the cap only
  // bounds the time.
  onnx::GraphProto& graph = *model.mutable_graph();
  constexpr int kMaxRounds = 1000;
  int round = 0;
  for (; round < kMaxRounds; ++round) {
    drop_incomplete_value_info(graph);
    infer_shapes(model);
    // What libonnx 1.12 cannot type (shape_fallback.h), typed here before folding reads the
    // types, and again after it: the next round goes on from there.
    int typed = infer_missing_types(graph, out_.ctx.default_opset);
    std::unordered_map<std::string, TensorType> types = value_types_;  // the graph inputs
    for (const auto& vi : graph.value_info())
      if (auto t = type_from_value_info(vi.type())) types.emplace(vi.name(), *t);
    int folded = fold_constants(graph, out_.ctx.default_opset, types, source_, out_.ctx.shape_derived,
                                shape_values_at_run_time_ ? &shapes_of_run_time_ : nullptr);
    out_.stats.folded_nodes += folded;
    typed += infer_missing_types(graph, out_.ctx.default_opset);
    if (folded == 0 && typed == 0) break;
    if (round + 1 == kMaxRounds) {
      spdlog::warn("{}: constant folding still folding after {} rounds; stopped there", source_, kMaxRounds);
      infer_shapes(model);
    }
  }
  spdlog::debug("{}: constant folding and shape inference: {} rounds", source_, std::min(round + 1, kMaxRounds));
  if (shape_values_at_run_time_) collect_shape_values(graph);
  out_.stats.cse_merged = eliminate_common_subexpressions(graph, out_.ctx.shape_derived, !shape_values_at_run_time_);
  out_.stats.dead_nodes = eliminate_dead_code(graph);
  if (out_.stats.folded_nodes || out_.stats.cse_merged || out_.stats.dead_nodes)
    spdlog::info("{}: before lowering: {} nodes folded to constants, {} merged (CSE), {} dead nodes removed",
                 source_, out_.stats.folded_nodes, out_.stats.cse_merged, out_.stats.dead_nodes);
}

// The constants folded from the input shapes that a node left in the graph reads, each with
// its computation from the source (ImportOptions::shape_values_at_run_time). Runs after the
// folding and before CSE and DCE drop the source constants the computations read.
void Importer::collect_shape_values(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> read;
  for (const auto& n : graph.node())
    for (const auto& r : node_reads(n)) read.insert(r);
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : graph.initializer()) inits[t.name()] = &t;
  std::unordered_map<std::string, TensorType> types = value_types_;
  for (const auto& vi : graph.value_info())
    if (auto t = type_from_value_info(vi.type())) types.emplace(vi.name(), *t);
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < snapshot_.size(); ++i)
    for (const auto& o : snapshot_[i].output())
      if (!o.empty()) producer.emplace(o, i);
  std::unordered_set<std::string> inputs;
  for (const auto& i : graph.input()) inputs.insert(i.name());

  for (const auto& t : graph.initializer()) {
    const std::string& name = t.name();
    if (!out_.ctx.shape_derived.count(name) || !read.count(name)) continue;
    ShapeValue sv;
    std::unordered_set<std::string> done;
    std::string why;
    // Depth first from the value to the source's constants and the shapes of run-time tensors.
    std::function<bool(const std::string&)> visit = [&](const std::string& v) -> bool {
      if (!done.insert(v).second) return true;
      auto p = producer.find(v);
      if (p == producer.end()) {
        auto c = inits.find(v);
        if (c != inits.end() && !inputs.count(v) && !out_.ctx.shape_derived.count(v)) {
          sv.initializers.push_back(*c->second);
          return true;
        }
        why = "it reads '" + v + "', which is not a constant of the source";
        return false;
      }
      const onnx::NodeProto& n = snapshot_[p->second];
      // Shape or Size of a tensor computed at run time (one folded in a later round is a constant).
      if (shapes_of_run_time_.count(v) && !inits.count(n.input(0))) {
        const std::string& x = n.input(0);
        auto ty = types.find(x);
        if (ty == types.end()) {
          why = "it reads the shape of '" + x + "', whose type is not known";
          return false;
        }
        sv.shape_reads[x].fixed.assign(ty->second.shape.begin(), ty->second.shape.end());
      } else {
        if (!default_domain(n) || has_subgraph(n)) {
          why = "node '" + n.name() + "' (" + n.op_type() + ") computes it";
          return false;
        }
        for (const auto& in : n.input())
          if (!in.empty() && !visit(in)) return false;
      }
      sv.nodes.push_back(n);
      return true;
    };
    if (visit(name)) {
      std::unordered_set<std::string> from_shapes;  // values a shape read reaches
      for (const auto& n : sv.nodes) {
        bool reached = n.input_size() == 1 && sv.shape_reads.count(n.input(0)) &&
                       (n.op_type() == "Shape" || n.op_type() == "Size");
        bool selecting_reached = false;
        for (const auto& in : n.input())
          if (from_shapes.count(in)) {
            reached = true;
            selecting_reached = selecting_reached || selecting_op(n.op_type());
          }
        sv.may_select = sv.may_select || selecting_reached;
        if (reached)
          for (const auto& o : n.output()) from_shapes.insert(o);
      }
      out_.ctx.shape_values.emplace(name, std::move(sv));
    } else {
      spdlog::debug("{}: '{}', computed from the input shapes, stays a constant: {}", source_, name, why);
    }
  }
}

// IR < 4: the initializers are declared graph inputs too, yet they are constants (ONNX
// Runtime lists only the other inputs, and reads them as weights). Their declarations go; the
// import runs as IR 4 (ONNX shape inference reads an IR 3 initializer's type only from its input
// declaration), and run() gives the header back the source's IR version for the exporter.
void Importer::take_ir3_initializers_as_constants(onnx::ModelProto& model) {
  out_.ctx.initializers_as_inputs = true;
  onnx::GraphProto& graph = *model.mutable_graph();
  std::unordered_set<std::string> inits;
  for (const auto& t : graph.initializer()) inits.insert(t.name());
  auto* ins = graph.mutable_input();
  for (const auto& i : *ins)
    if (inits.count(i.name())) ir3_initializer_inputs_.insert(i.name());
  ins->erase(std::remove_if(ins->begin(), ins->end(),
                            [&](const onnx::ValueInfoProto& i) { return inits.count(i.name()) != 0; }),
             ins->end());
  model.set_ir_version(4);
}

// An initializer without elements (Resize's empty roi, as exporters write it) becomes the
// Constant node other exporters write for it: the language has no tensors without elements, and
// such a Constant stays an opaque node, written back verbatim. (As an overridable input it is
// refused with the input.)
void Importer::empty_initializers_to_constants(onnx::GraphProto& graph) {
  std::unordered_set<std::string> input_names;
  for (const auto& i : graph.input()) input_names.insert(i.name());
  auto* inits = graph.mutable_initializer();
  for (int i = 0; i < inits->size();) {
    const onnx::TensorProto& t = inits->Get(i);
    const bool empty = std::any_of(t.dims().begin(), t.dims().end(), [](int64_t d) { return d == 0; });
    if (!empty || input_names.count(t.name())) {
      ++i;
      continue;
    }
    onnx::NodeProto* c = graph.add_node();
    c->set_op_type("Constant");
    c->set_name(t.name());
    c->add_output(t.name());
    onnx::AttributeProto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = t;
    inits->DeleteSubrange(i, 1);
  }
}

void Importer::run(onnx::ModelProto& model, const ImportOptions& opts) {
  ModelContext& ctx = out_.ctx;
  ctx.source_path = source_;
  if (!model.has_graph()) throw ImportError(source_ + ": model has no graph (not an ONNX model?)");
  if (model.ir_version() <= 0) throw ImportError(source_ + ": model has no IR version (not an ONNX model?)");
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") ctx.default_opset = o.version();
  onnx::GraphProto& graph = *model.mutable_graph();
  std::unordered_set<std::string> domains;
  for (const auto& o : model.opset_import()) domains.insert(o.domain() == "ai.onnx" ? "" : o.domain());
  for (const auto& n : graph.node()) {
    std::string d = n.domain() == "ai.onnx" ? "" : n.domain();
    if (!domains.count(d))
      throw ImportError(source_ + ": node '" + (n.name().empty() ? n.op_type() : n.name()) + "' (" + n.op_type() +
                        ") uses operator domain '" + d + "', which the model does not import (opset_import)");
  }
  if (graph.output_size() == 0) throw ImportError(source_ + ": graph has no outputs");
  const int64_t ir_version = model.ir_version();
  if (ir_version < 4) take_ir3_initializers_as_constants(model);
  empty_initializers_to_constants(graph);

  ctx.declared_inputs.assign(graph.input().begin(), graph.input().end());
  ctx.declared_outputs.assign(graph.output().begin(), graph.output().end());
  load_inputs(graph, opts);
  resolve_symbolic_value_info(graph);
  for (const auto& n : graph.node()) out_.stats.onnx_op_counts[n.op_type()]++;  // of the source model
  out_.stats.onnx_nodes = graph.node_size();
  check_names(graph);
  // Refuses cycles and tensors produced twice before the passes run, and puts the nodes in
  // topological order: libonnx 1.12's data propagation crashes on a Shape listed before the
  // node producing its input, and the passes type and fold in node order.
  {
    const std::vector<int> order = topo_order(graph);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
    for (int i : order) sorted.Add()->Swap(graph.mutable_node(i));
    graph.mutable_node()->Swap(&sorted);
  }
  if (opts.shape_values_at_run_time) {
    shape_values_at_run_time_ = true;
    snapshot_.assign(graph.node().begin(), graph.node().end());
  }
  simplify(model);
  collect_value_types(graph);
  load_initializers(graph, opts);
  // Overridable initializers are inputs (their names are graph inputs, loaded above).

  for (const auto& n : graph.node())
    for (const auto& i : n.input())
      if (!i.empty()) consumers_[i]++;
  for (const auto& o : graph.output()) consumers_[o.name()]++;

  for (int i : topo_order(graph)) import_node(graph.node(i));
  for (const auto& [name, sv] : ctx.shape_values)
    for (const auto& [t, read] : sv.shape_reads)
      if (auto it = env_.find(t); it != env_.end()) out_.shape_read_nodes[t] = it->second;

  std::vector<ir::NodeId> outs;
  std::unordered_set<std::string> seen_out;
  for (const auto& o : graph.output()) {
    if (!seen_out.insert(o.name()).second) throw ImportError(source_ + ": graph output '" + o.name() + "' is declared twice");
    auto it = env_.find(o.name());
    if (it == env_.end()) throw ImportError(source_ + ": graph output '" + o.name() + "' is not produced by any node");
    if (g_.type(it->second).kind != Kind::Tensor)
      throw ImportError(source_ + ": graph output '" + o.name() + "' is not a tensor");
    outs.push_back(it->second);
    ctx.output_names.push_back(o.name());
  }
  g_.set_root(g_.op(Op::Noop, outs));

  // Keep the header, interface and metadata; drop what the graph now holds.
  graph.clear_node();
  graph.clear_value_info();
  ctx.header = std::move(model);
  ctx.header.set_ir_version(ir_version);
  std::vector<int64_t> remap;
  out_.graph = out_.graph.compact(&remap);
  std::vector<FixedDimUse> uses;
  for (auto& u : out_.fixed_dim_uses) {
    if (u.node && remap[*u.node] < 0) continue;  // read by nothing that stayed
    if (u.node) u.node = static_cast<ir::NodeId>(remap[*u.node]);
    uses.push_back(std::move(u));
  }
  out_.fixed_dim_uses = std::move(uses);
  for (auto it = out_.shape_read_nodes.begin(); it != out_.shape_read_nodes.end();) {
    if (remap[it->second] < 0) {
      it = out_.shape_read_nodes.erase(it);
    } else {
      it->second = static_cast<ir::NodeId>(remap[it->second]);
      ++it;
    }
  }
  // Shape values only lowering read (a Reshape target) are not in the graph.
  if (!ctx.shape_values.empty()) {
    std::unordered_set<std::string> leaves;
    for (const auto& n : out_.graph.nodes())
      if (n.op == Op::Input)
        if (auto leaf = parse_leaf_id(out_.graph.node(n.children[0]).sym)) leaves.insert(leaf->name);
    for (const auto& u : out_.fixed_dim_uses)
      if (!u.value.empty()) leaves.insert(u.value);  // read by lowering as sizes: labelled too
    std::erase_if(ctx.shape_values, [&](const auto& kv) { return !leaves.count(kv.first); });
  }
  spdlog::debug("{}: imported {} ONNX nodes into {} graph nodes ({} opaque)", source_, out_.stats.onnx_nodes,
                out_.graph.size(), out_.stats.opaque_nodes);
}

}  // namespace detail
}  // namespace tensat
