// The graph walk of the CPU reference executor: which nodes are needed, where leaf values
// come from, one kernel call per node in topological order, and freeing each value after
// its last consumer has run.
//
// Values that the caller or the WeightStore owns (inputs, weights, provided values) are
// read in place, never copied. A node whose value is provided is not computed, and neither
// is anything only it needs: that is how verification cuts a graph at opaque nodes.
#include <algorithm>
#include <cassert>

#include "exec/opaque_plan.h"
#include "refexec/executor.h"
#include "refexec/kernels.h"

namespace tensat::refexec {

namespace {

using ir::NodeId;

// One tensor of a node's value: owned, or borrowed from the caller / the WeightStore.
struct Slot {
  Shape shape;
  std::vector<float> owned;
  const float* ext = nullptr;

  const float* data() const { return ext ? ext : owned.data(); }
  View view() const { return View(shape, data()); }
  static Slot own(Tensor t) { return Slot{std::move(t.shape), std::move(t.data), nullptr}; }
  static Slot borrow(Shape s, const float* d) { return Slot{std::move(s), {}, d}; }
};

// A node's value: one slot for a tensor, several for a tuple (split); none for a constant of
// another element type than float32 (an opaque shape computation, read only as a parameter).
struct Value {
  std::vector<Slot> parts;
  bool ready = false;
};

// "%12 (conv)", or with the identifier for leaves and opaque nodes.
std::string describe(const ir::Graph& g, NodeId id) {
  const ir::Node& n = g.node(id);
  std::string s = "%" + std::to_string(id) + " (" + std::string(op_name(n.op));
  if ((n.op == Op::Input || n.op == Op::Weight || n.op == Op::Opaque) && !n.children.empty() &&
      g.node(n.children[0]).op == Op::Sym)
    s += " " + g.node(n.children[0]).sym;
  return s + ")";
}

// True if node n reads the value of its k-th child: not for Num/Sym parameters, and not
// for enlarge's reference kernel, of which only the (static) shape is used.
bool reads_child(const ir::Graph& g, const ir::Node& n, size_t k) {
  if (n.op == Op::Enlarge && k == 1) return false;
  return !is_param_leaf(g.node(n.children[k]).op);
}

class Runner {
 public:
  Runner(const ir::Graph& g, const WeightStore& w,
         const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts)
      : g_(g), weights_(w), inputs_(inputs), opts_(opts), values_(g.size()), uses_(g.size(), 0),
        opaque_(g, w, opts.opaque, opts.provided) {}

  RunResult run() {
    if (!g_.has_root()) throw ExecError("refexec: the graph has no root");
    outputs_ = g_.outputs();
    for (NodeId o : outputs_)
      if (!g_.type(o).is_tensor())
        throw ExecError("refexec: output " + describe(g_, o) + " is not a tensor");
    check_provided();
    find_transposed_b();
    mark_live();
    for (NodeId i = 0; i < g_.size(); ++i) {
      if (!live_[i]) continue;
      evaluate(i);
      release_children(i);
    }
    return collect();
  }

 private:
  void check_provided() {
    for (const auto& [id, t] : opts_.provided) {
      if (id >= g_.size())
        throw ExecError("refexec: provided value for node %" + std::to_string(id) +
                        ", which is not in the graph");
      const ValueType& ty = g_.type(id);
      if (!ty.is_tensor())
        throw ExecError("refexec: provided value for " + describe(g_, id) + " of type " +
                        ty.str() + ": only tensor values can be provided");
      if (t.shape != ty.shape() || t.data.size() != static_cast<size_t>(num_elements(t.shape)))
        throw ExecError("refexec: provided value for " + describe(g_, id) + " has shape " +
                        shape_str(t.shape) + " (" + std::to_string(t.data.size()) +
                        " values); expected " + shape_str(ty.shape()));
    }
  }

  bool provided(NodeId i) const { return opts_.provided.count(i) != 0; }

  // The transposes of a weight matrix that only matmuls read, and as B: Gemm's transB, how the
  // importer reads PyTorch's nn.Linear. Such a matmul reads the weight in place as a
  // transposed B (children_read gives it the weight) and the transpose is never computed:
  // VGG-11-BN copied 411 MB for it in every run. (Not with keep_all: every value is kept.)
  void find_transposed_b() {
    if (opts_.keep_all) {
      trans_b_.assign(g_.size(), false);
      return;
    }
    trans_b_ = ir::transposed_weights_read_as_b(g_, /*matrix_a=*/false);  // (A's batches fold into rows)
    for (const auto& [id, t] : opts_.provided) trans_b_[id] = false;  // its given value is read
  }

  // Marks the nodes the outputs need (stopping at provided values), counts their uses, and
  // fails early on values that cannot be computed here.
  void mark_live() {
    live_.assign(g_.size(), false);
    for (NodeId o : outputs_) live_[o] = true;
    for (NodeId i = static_cast<NodeId>(g_.size()); i-- > 0;) {
      if (!live_[i] || provided(i)) continue;
      const ir::Node& n = g_.node(i);
      if (n.op == Op::Opaque && opaque_.how(i) != exec::OpaqueHow::Boundary) {
        for (NodeId c : children_read(i)) {
          live_[c] = true;
          ++uses_[c];
        }
        continue;
      }
      if (n.op == Op::Opaque) {
        const ValueType& ty = g_.type(i);
        if (ty.kind == Kind::Tuple)
          throw ExecError("refexec: opaque node " + describe(g_, i) + " has " +
                          std::to_string(ty.tuple.size()) +
                          " outputs and cannot run here: provide the values of its select nodes"
                          " in RunOptions::provided");
        throw ExecError("refexec: opaque node " + describe(g_, i) + " cannot run here (" + opaque_.why(i) +
                        "): provide its value in RunOptions::provided");
      }
      if (n.op == Op::Noop)
        throw ExecError("refexec: " + describe(g_, i) + " is used as a value; noop may only be the root");
      for (NodeId c : children_read(i)) {
        live_[c] = true;
        ++uses_[c];
      }
    }
    for (NodeId o : outputs_) ++uses_[o];
  }

  // The children whose values node i reads when it is evaluated (see reads_child; an opaque
  // node reads its run-time data operands only: its parameters are constants).
  std::vector<NodeId> children_read(NodeId i) const {
    const ir::Node& n = g_.node(i);
    if (n.op == Op::Opaque) {
      if (opaque_.how(i) == exec::OpaqueHow::Kernel) return opaque_.data_children(i);
      return {};
    }
    std::vector<NodeId> v;
    for (size_t k = 0; k < n.children.size(); ++k)
      if (reads_child(g_, n, k)) v.push_back(n.children[k]);
    if (n.op == Op::Matmul && trans_b_[n.children[2]]) v[1] = g_.node(n.children[2]).children[1];  // (a, b, [bias])
    return v;
  }

  const Slot& slot(NodeId c, size_t part = 0) const {
    const Value& v = values_[c];
    assert(v.ready && part < v.parts.size());
    return v.parts[part];
  }
  View view(NodeId c) const { return slot(c).view(); }
  NodeId child(NodeId i, size_t k) const { return g_.node(i).children.at(k); }
  Act act_param(NodeId i, size_t k) const {
    auto a = act_from_name(g_.param_sym(i, k));
    assert(a);
    return *a;
  }
  // Bias operand: the symbol none (null) or an f32 vector.
  const float* bias_param(NodeId i, size_t k) const {
    NodeId b = child(i, k);
    if (g_.node(b).op == Op::Sym) return nullptr;
    return slot(b).data();
  }
  Pads pads_param(NodeId i, size_t k, int64_t kh, int64_t kw) const {
    auto p = resolve_pads(g_.param_sym(i, k), kh, kw);
    assert(p && "pad symbol was accepted by shape inference");
    return *p;
  }
  std::vector<int64_t> dims_param(NodeId i, size_t k) const {
    auto d = parse_dims(g_.type(child(i, k)));
    assert(d);
    return *d;
  }

  // A tensor leaf's value, borrowed from the caller's inputs or the WeightStore.
  Slot leaf(NodeId i) {
    const ir::Node& n = g_.node(i);
    const std::string& id = g_.param_sym(i, 0);
    auto leaf_id = parse_leaf_id(id);
    assert(leaf_id);
    const Shape& shape = leaf_id->type.shape;
    const char* kind = n.op == Op::Input ? "input" : "weight";
    if (leaf_id->type.dtype != DType::F32)
      throw ExecError(std::string("refexec: ") + kind + " '" + leaf_id->name + "' (" +
                      describe(g_, i) + ") is " + std::string(dtype_name(leaf_id->type.dtype)) +
                      "; only f32 tensors can be computed with (provide the consumer's value)");
    if (n.op == Op::Input) {
      auto it = inputs_.find(leaf_id->name);
      if (it == inputs_.end())
        throw ExecError("refexec: no value given for input '" + leaf_id->name + "' (" +
                        describe(g_, i) + ")");
      const Tensor& t = it->second;
      if (t.shape != shape || t.data.size() != static_cast<size_t>(num_elements(shape)))
        throw ExecError("refexec: input '" + leaf_id->name + "' has shape " +
                        shape_str(t.shape) + " (" + std::to_string(t.data.size()) +
                        " values); the graph declares " + shape_str(shape));
      return Slot::borrow(shape, t.data.data());
    }
    if (!weights_.contains(leaf_id->name))
      throw ExecError("refexec: weight '" + leaf_id->name + "' (" + describe(g_, i) +
                      ") is not in the WeightStore");
    const WeightData& w = weights_.get(leaf_id->name);
    if (w.type.dtype != DType::F32)
      throw ExecError("refexec: weight '" + leaf_id->name + "' is stored as " +
                      std::string(dtype_name(w.type.dtype)) + "; only f32 is supported");
    if (w.type.shape != shape || w.bytes.size() != w.count() * sizeof(float))
      throw ExecError("refexec: weight '" + leaf_id->name + "' is stored with shape " +
                      shape_str(w.type.shape) + "; the graph declares " + shape_str(shape));
    return Slot::borrow(shape, w.f32());
  }

  // Part `part` of child c's value, moved out if this is its last use, else copied.
  Slot take(NodeId c, size_t part) {
    Slot& s = values_[c].parts.at(part);
    if (!opts_.keep_all && uses_[c] == 1 && !s.ext) {
      Slot out{s.shape, std::move(s.owned), nullptr};
      s.owned.clear();
      return out;
    }
    if (s.ext) return Slot::borrow(s.shape, s.ext);
    count_bytes(s.owned.size());
    return Slot{s.shape, s.owned, nullptr};
  }

  void evaluate(NodeId i) {
    Value& v = values_[i];
    if (auto it = opts_.provided.find(i); it != opts_.provided.end()) {
      v.parts.push_back(Slot::borrow(it->second.shape, it->second.data.data()));
      v.ready = true;
      return;
    }
    const ir::Node& n = g_.node(i);
    auto own = [&](Tensor t) {
      count_bytes(t.data.size());
      v.parts.push_back(Slot::own(std::move(t)));
    };
    switch (n.op) {
      case Op::Num:
      case Op::Sym:
        return;  // parameters are read from the graph, never evaluated
      case Op::Input:
      case Op::Weight:
        v.parts.push_back(leaf(i));
        break;
      case Op::Zeros:
        own(Tensor(Shape{g_.param_int(i, 0)}));
        break;
      case Op::Ewadd:
      case Op::Ewmul:
        own(binary(n.op == Op::Ewadd ? BinOp::Add : BinOp::Mul, view(child(i, 0)),
                   view(child(i, 1))));
        break;
      case Op::Matmul:
        if (const NodeId b = child(i, 2); trans_b_[b]) {
          own(matmul_transposed_b(view(child(i, 1)), view(child(b, 1)), bias_param(i, 3), act_param(i, 0)));
        } else {
          own(matmul(view(child(i, 1)), view(child(i, 2)), bias_param(i, 3), act_param(i, 0)));
        }
        break;
      case Op::Conv: {
        View w = view(child(i, 5));
        own(conv2d(view(child(i, 4)), w, bias_param(i, 6), g_.param_int(i, 0),
                   g_.param_int(i, 1), pads_param(i, 2, w.shape[2], w.shape[3]),
                   act_param(i, 3)));
        break;
      }
      case Op::Relu: own(unary(view(child(i, 0)), Act::Relu)); break;
      case Op::Tanh: own(unary(view(child(i, 0)), Act::Tanh)); break;
      case Op::Sigmoid: own(unary(view(child(i, 0)), Act::Sigmoid)); break;
      case Op::Act: own(unary(view(child(i, 1)), act_param(i, 0))); break;
      case Op::Poolmax:
      case Op::Poolavg: {
        int64_t kh = g_.param_int(i, 0), kw = g_.param_int(i, 1);
        int64_t sh = g_.param_int(i, 2), sw = g_.param_int(i, 3);
        Pads p = pads_param(i, 4, kh, kw);
        if (n.op == Op::Poolmax) {
          own(pool_max(view(child(i, 5)), kh, kw, sh, sw, p));
        } else {
          own(pool_avg(view(child(i, 6)), kh, kw, sh, sw, p, g_.param_int(i, 5) != 0));
        }
        break;
      }
      case Op::Transpose: own(transpose(view(child(i, 1)), dims_param(i, 0))); break;
      case Op::Reshape: own(reshape(view(child(i, 1)), dims_param(i, 0))); break;
      case Op::Enlarge: {
        const Shape& ref = g_.type(child(i, 1)).shape();
        own(enlarge(view(child(i, 0)), ref[2], ref[3]));
        break;
      }
      case Op::Concat:
        own(concat(g_.param_int(i, 0), view(child(i, 1)), view(child(i, 2))));
        break;
      case Op::Split: {
        auto [a, b] = split(g_.param_int(i, 0), g_.param_int(i, 1), view(child(i, 2)));
        own(std::move(a));
        own(std::move(b));
        break;
      }
      case Op::Split0: v.parts.push_back(take(child(i, 0), 0)); break;
      case Op::Split1: v.parts.push_back(take(child(i, 0), 1)); break;
      case Op::Select:
        v.parts.push_back(take(child(i, 1), static_cast<size_t>(g_.param_int(i, 0))));
        break;
      case Op::Merge: own(merge(g_.param_int(i, 0), view(child(i, 1)))); break;
      case Op::Opaque:
        evaluate_opaque(i, v);
        break;
      case Op::Noop:
        assert(false && "rejected by mark_live");
        break;
    }
    v.ready = true;
#ifndef NDEBUG
    // The executor and types.cpp must agree on every shape.
    const ValueType& ty = g_.type(i);
    if (ty.is_tensor() && v.parts.empty()) {
      assert(n.op == Op::Opaque && ty.tensor.dtype != DType::F32);
    } else if (ty.is_tensor()) {
      assert(v.parts.size() == 1 && v.parts[0].shape == ty.shape());
    } else {
      assert(v.parts.size() == ty.tuple.size());
      for (size_t k = 0; k < v.parts.size(); ++k) assert(v.parts[k].shape == ty.tuple[k].shape);
    }
#endif
  }

  // A runnable opaque node: a host constant (borrowed; a non-f32 one has no slot: only
  // opaque nodes read it, as a parameter) or an opaque kernel on its data operands.
  void evaluate_opaque(NodeId i, Value& v) {
    if (opaque_.how(i) == exec::OpaqueHow::Host) {
      const WeightData* w = opaque_.constant(i);
      if (w->type.dtype == DType::F32) v.parts.push_back(Slot::borrow(w->type.shape, w->f32()));
      return;
    }
    std::vector<View> data;
    for (NodeId c : opaque_.data_children(i)) data.push_back(view(c));
    Tensor t = opaque_kernel(opaque_.decoded(i), data, g_.type(i).shape());
    count_bytes(t.data.size());
    v.parts.push_back(Slot::own(std::move(t)));
  }

  // Drops the values of i's children that no later node needs.
  void release_children(NodeId i) {
    if (provided(i)) return;  // a provided node did not consume its children
    for (NodeId c : children_read(i)) {
      assert(uses_[c] > 0);
      if (--uses_[c] == 0 && !opts_.keep_all) {
        for (const Slot& s : values_[c].parts) cur_bytes_ -= s.owned.size() * sizeof(float);
        values_[c].parts = {};
      }
    }
  }

  void count_bytes(size_t floats) {
    cur_bytes_ += floats * sizeof(float);
    peak_bytes_ = std::max(peak_bytes_, cur_bytes_);
  }

  RunResult collect() {
    RunResult r;
    r.peak_bytes = peak_bytes_;
    for (NodeId o : outputs_) {
      if (values_[o].parts.empty())
        throw ExecError("refexec: output " + describe(g_, o) + " is " +
                        std::string(dtype_name(g_.type(o).tensor.dtype)) + "; only float32 values are returned");
      Slot s = take(o, 0);
      --uses_[o];
      Tensor t(s.shape, {});
      if (s.ext) {
        t.data.assign(s.ext, s.ext + num_elements(s.shape));
      } else {
        t.data = std::move(s.owned);
      }
      r.outputs.push_back(std::move(t));
    }
    if (opts_.keep_all) {
      for (NodeId i = 0; i < g_.size(); ++i) {
        const Value& v = values_[i];
        if (!v.ready || v.parts.size() != 1 || !g_.type(i).is_tensor()) continue;
        const Slot& s = v.parts[0];
        r.values.emplace(i, Tensor(s.shape, std::vector<float>(s.data(), s.data() + num_elements(s.shape))));
      }
    }
    return r;
  }

  const ir::Graph& g_;
  const WeightStore& weights_;
  const std::unordered_map<std::string, Tensor>& inputs_;
  const RunOptions& opts_;
  std::vector<NodeId> outputs_;
  std::vector<Value> values_;
  std::vector<uint32_t> uses_;
  std::vector<bool> live_;
  std::vector<bool> trans_b_;  // find_transposed_b()
  exec::OpaquePlan opaque_;
  size_t cur_bytes_ = 0, peak_bytes_ = 0;  // owned value bytes now / at most
};

}  // namespace

RunResult run(const ir::Graph& g, const WeightStore& weights,
              const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts) {
  return Runner(g, weights, inputs, opts).run();
}

}  // namespace tensat::refexec
