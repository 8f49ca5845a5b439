// GPU executor (see gpu_executor.h): a plan of prepared kernels over device buffers.
#include "gpu_cost/gpu_executor.h"

#include <memory>
#include <optional>
#include <vector>

#include "lang/weights.h"
#include "gpu_cost/gpu_ops.h"
#include "gpu_cost/op_params.h"

namespace tensat::gpu {

namespace {

struct Value {
  std::shared_ptr<DeviceBuffer> buf;
  size_t offset = 0;  ///< bytes
  const void* ptr() const { return buf ? static_cast<const char*>(buf->data()) + offset : nullptr; }
};

struct Step {
  ir::NodeId id;
  std::unique_ptr<Kernel> kernel;
  std::vector<ir::NodeId> children;
};

class Plan {
 public:
  Plan(Context& ctx, const ir::Graph& g, const WeightStore& weights,
       const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts)
      : ctx_(ctx), g_(g), values_(g.size()) {
    std::vector<bool> needed(g.size(), false);
    for (ir::NodeId o : g.outputs()) needed[o] = true;
    for (size_t i = g.size(); i-- > 0;) {
      if (!needed[i] || opts.provided.count(static_cast<ir::NodeId>(i))) continue;
      for (ir::NodeId c : g.node(static_cast<ir::NodeId>(i)).children) needed[c] = true;
    }
    for (size_t i = 0; i < g.size(); ++i) {
      if (needed[i]) build(static_cast<ir::NodeId>(i), weights, inputs, opts);
    }
    ctx_.synchronize();
  }

  void launch() {
    std::vector<const void*> args;
    for (auto& s : steps_) {
      args.clear();
      for (ir::NodeId c : s.children) args.push_back(values_[c].ptr());
      s.kernel->run(args, values_[s.id].buf->data());
    }
  }

  Tensor fetch(ir::NodeId id) {
    const ValueType& t = g_.type(id);
    if (t.kind != Kind::Tensor) throw ExecError("node " + std::to_string(id) + " is not a tensor");
    Tensor out(t.shape());
    download(ctx_, out.data.data(), values_[id].ptr(), out.size() * sizeof(float));
    return out;
  }

  bool has_value(ir::NodeId id) const { return values_[id].buf != nullptr; }

 private:
  static std::string describe(const ir::Graph& g, ir::NodeId id) {
    return std::string(op_name(g.node(id).op)) + " node " + std::to_string(id);
  }

  Value upload_tensor(const std::string& what, const TensorType& type, const float* data, size_t count) {
    if (type.dtype != DType::F32) throw ExecError(what + ": only f32 data runs on the GPU executor");
    if (count != static_cast<size_t>(num_elements(type.shape)))
      throw ExecError(what + ": expected " + shape_str(type.shape) + " (" + std::to_string(num_elements(type.shape)) +
                      " values), got " + std::to_string(count));
    Value v{std::make_shared<DeviceBuffer>(count * sizeof(float)), 0};
    upload(ctx_, v.buf->data(), data, count * sizeof(float));
    return v;
  }

  void build(ir::NodeId id, const WeightStore& weights, const std::unordered_map<std::string, Tensor>& inputs,
             const RunOptions& opts) {
    const ir::Node& n = g_.node(id);
    const ValueType& type = g_.type(id);
    if (auto p = opts.provided.find(id); p != opts.provided.end()) {
      if (type.kind != Kind::Tensor) throw ExecError("provided value for " + describe(g_, id) + " is not a tensor node");
      if (p->second.shape != type.shape())
        throw ExecError("provided value for " + describe(g_, id) + " has shape " + shape_str(p->second.shape) +
                        ", expected " + shape_str(type.shape()));
      values_[id] = upload_tensor("provided value for " + describe(g_, id), type.tensor, p->second.data.data(),
                                  p->second.size());
      return;
    }
    switch (n.op) {
      case Op::Num:
      case Op::Sym:
      case Op::Noop: return;
      case Op::Input: {
        auto leaf = parse_leaf_id(g_.node(n.children[0]).sym);
        auto it = inputs.find(leaf->name);
        if (it == inputs.end()) throw ExecError("input '" + leaf->name + "' was not supplied");
        if (it->second.shape != leaf->type.shape)
          throw ExecError("input '" + leaf->name + "' has shape " + shape_str(it->second.shape) + ", expected " +
                          shape_str(leaf->type.shape));
        values_[id] = upload_tensor("input '" + leaf->name + "'", leaf->type, it->second.data.data(), it->second.size());
        return;
      }
      case Op::Weight: {
        auto leaf = parse_leaf_id(g_.node(n.children[0]).sym);
        if (!weights.contains(leaf->name)) throw ExecError("weight '" + leaf->name + "' is not in the weight store");
        const WeightData& w = weights.get(leaf->name);
        if (w.type != leaf->type)
          throw ExecError("weight '" + leaf->name + "' is stored as " + std::string(dtype_name(w.type.dtype)) +
                          shape_str(w.type.shape) + ", the graph expects " + std::string(dtype_name(leaf->type.dtype)) +
                          shape_str(leaf->type.shape));
        values_[id] = upload_tensor("weight '" + leaf->name + "'", w.type, w.f32(), w.count());
        return;
      }
      case Op::Zeros: {
        values_[id] = Value{std::make_shared<DeviceBuffer>(static_cast<size_t>(cost::value_bytes(type))), 0};
        fill_zero(ctx_, values_[id].buf->data(), values_[id].buf->bytes());
        return;
      }
      case Op::Opaque:
      case Op::Select:
        throw ExecError(describe(g_, id) + " cannot run on the GPU: supply its value in RunOptions::provided");
      case Op::Reshape:
        values_[id] = values_[n.children[1]];
        return;
      case Op::Split0:
        values_[id] = values_[n.children[0]];
        return;
      case Op::Split1: {
        const ValueType& split = g_.type(n.children[0]);
        values_[id] = values_[n.children[0]];
        values_[id].offset += static_cast<size_t>(cost::tensor_bytes(split.tuple[0]));
        return;
      }
      default: break;
    }
    std::vector<const ValueType*> ct;
    for (ir::NodeId c : n.children) ct.push_back(&g_.type(c));
    if (n.op == Op::Transpose && !has_kernel(n.op, ct)) {
      values_[id] = values_[n.children[1]];
      return;
    }
    for (ir::NodeId c : n.children) {
      const ValueType& t = g_.type(c);
      if ((t.kind == Kind::Tensor || t.kind == Kind::Tuple) && !values_[c].buf)
        throw ExecError(describe(g_, id) + ": operand " + describe(g_, c) + " has no value");
    }
    Step s{id, prepare(ctx_, n.op, ct), n.children};
    values_[id] = Value{std::make_shared<DeviceBuffer>(static_cast<size_t>(cost::value_bytes(type))), 0};
    steps_.push_back(std::move(s));
  }

  Context& ctx_;
  const ir::Graph& g_;
  std::vector<Value> values_;
  std::vector<Step> steps_;
};

}  // namespace

RunResult run(Context& ctx, const ir::Graph& g, const WeightStore& weights,
              const std::unordered_map<std::string, Tensor>& inputs, const RunOptions& opts) {
  Plan plan(ctx, g, weights, inputs, opts);
  plan.launch();
  ctx.synchronize();
  RunResult r;
  for (ir::NodeId o : g.outputs()) r.outputs.push_back(plan.fetch(o));
  if (opts.keep_all) {
    for (size_t i = 0; i < g.size(); ++i) {
      auto id = static_cast<ir::NodeId>(i);
      if (g.type(id).kind == Kind::Tensor && plan.has_value(id)) r.values.emplace(id, plan.fetch(id));
    }
  }
  return r;
}

RunResult run(const ir::Graph& g, const WeightStore& weights, const std::unordered_map<std::string, Tensor>& inputs,
              const RunOptions& opts) {
  Context ctx;
  return run(ctx, g, weights, inputs, opts);
}

double time_ms(Context& ctx, const ir::Graph& g, const WeightStore& weights,
               const std::unordered_map<std::string, Tensor>& inputs, int warmup, int repeats, const RunOptions& opts) {
  Plan plan(ctx, g, weights, inputs, opts);
  return ctx.median_time_ms([&] { plan.launch(); }, warmup, repeats);
}

double time_ms(const ir::Graph& g, const WeightStore& weights, const std::unordered_map<std::string, Tensor>& inputs,
               int warmup, int repeats, const RunOptions& opts) {
  Context ctx;
  return time_ms(ctx, g, weights, inputs, warmup, repeats, opts);
}

}  // namespace tensat::gpu
