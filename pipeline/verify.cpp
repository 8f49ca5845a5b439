// Verification implementation (see verify.h).
#include "pipeline/verify.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include "exec/opaque_plan.h"
#include "gpu_cost/gpu_executor.h"
#include "pipeline/opaque_ops.h"
#include "refexec/executor.h"
#include "support/stopwatch.h"

namespace tensat {

namespace {

using Key = std::string;  // "out:NAME" | "opaque:FIRST_OUTPUT#CHILD" | "opq:FIRST_OUTPUT#K"

uint64_t seed_of(const std::string& s, uint64_t seed) { return std::hash<std::string>()(s) ^ (seed * 0x9e3779b97f4a7c15ULL); }

std::string first_output(const OpaqueNode& on) {
  for (const auto& o : on.node.output())
    if (!o.empty()) return o;
  return on.node.name();
}

struct Prepared {
  ir::Graph graph;                                     // root: noop over the computed points
  std::vector<Key> keys;                               // the compared points
  // Per key: its index among the root's children, or -1 for a float32 weight leaf (mostly the
  // input of an opaque node: an embedding table, a norm's scale; or an output that is a
  // weight), compared where it is stored: as a run's output it was copied (BART's 205 MB
  // embedding, in each model).
  std::vector<int> computed;
  std::vector<const WeightData*> stored;               // per key: that weight leaf's data, else null
  bool run = false;                                    // some point is computed
  std::unordered_map<ir::NodeId, exec::Tensor> provided;
  exec::OpaqueOps ops;                                 // the opaque nodes' descriptions
  std::map<std::string, ir::NodeId> opaque_by_name;    // single-output opaque nodes by first output
  std::map<std::string, ir::NodeId> selects_by_name;   // selects of multi-output ones by output name
  int opaque = 0;
};

// The float32 data of node n where it is a weight leaf of m, else null.
const WeightData* weight_leaf(const ImportResult& m, ir::NodeId n) {
  const ir::Node& nd = m.graph.node(n);
  if (nd.op != Op::Weight) return nullptr;
  const auto leaf = parse_leaf_id(m.graph.node(nd.children[0]).sym);
  if (!leaf || !m.weights.contains(leaf->name)) return nullptr;
  const WeightData& w = m.weights.get(leaf->name);
  return w.type.dtype == DType::F32 && w.type.shape == m.graph.type(n).tensor.shape ? &w : nullptr;
}

// Finds the comparison points and the opaque nodes of one imported model; the nodes that
// need provided values are decided later, for both models together (provide_boundaries).
// `known`: the opaque nodes (by first output) of the other model: only those shared by both
// have their inputs as comparison points.
Prepared prepare(const ImportResult& m, const std::set<std::string>& known) {
  Prepared p;
  p.graph = m.graph;
  p.ops = describe_opaque_ops(m.ctx);
  const ir::Graph& g = m.graph;
  std::map<Key, ir::NodeId> points;
  std::vector<ir::NodeId> outs = g.outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    const ValueType& t = g.type(outs[i]);
    if (t.tensor.dtype == DType::F32) points["out:" + m.ctx.output_names[i]] = outs[i];
  }
  for (ir::NodeId n = 0; n < g.size(); ++n) {
    const ir::Node& nd = g.node(n);
    if (nd.op == Op::Opaque) {
      auto id = parse_opaque_id(g.node(nd.children[0]).sym);
      const OpaqueNode& on = m.ctx.opaque.at(static_cast<size_t>(id->index));
      std::string name = first_output(on);
      p.opaque++;
      for (size_t c = 1; c < nd.children.size() && known.count(name); ++c) {
        const ValueType& t = g.type(nd.children[c]);
        if (t.kind == Kind::Tensor && t.tensor.dtype == DType::F32)
          points["opaque:" + name + "#" + std::to_string(c)] = nd.children[c];
      }
      if (id->outputs.size() == 1) p.opaque_by_name[name] = n;
    } else if (nd.op == Op::Select) {
      const ir::Node& t = g.node(nd.children[1]);
      if (t.op != Op::Opaque) continue;
      auto id = parse_opaque_id(g.node(t.children[0]).sym);
      const OpaqueNode& on = m.ctx.opaque.at(static_cast<size_t>(id->index));
      int64_t k = g.node(nd.children[0]).num;
      std::string name = on.node.output(static_cast<int>(k));
      p.selects_by_name[name] = n;
    }
  }
  std::vector<ir::NodeId> kids;
  for (auto& [k, v] : points) {
    p.keys.push_back(k);
    p.stored.push_back(weight_leaf(m, v));
    p.computed.push_back(p.stored.back() ? -1 : static_cast<int>(kids.size()));
    if (p.computed.back() >= 0) kids.push_back(v);
  }
  p.run = !kids.empty();
  if (!p.run) return p;
  p.graph.set_root(p.graph.op(Op::Noop, kids));
  // Provided ids stay valid: compact() would renumber, so keep the full graph (run() only
  // evaluates what the root needs).
  return p;
}

// Adds the names of the opaque values that the executors cannot compute in this model, given
// the values provided so far (a provided value is not a constant, so what reads it as a
// parameter becomes a boundary too).
void collect_boundaries(const Prepared& p, const WeightStore& w, std::set<std::string>& out) {
  exec::OpaquePlan plan(p.graph, w, &p.ops, p.provided);
  for (const auto& [name, id] : p.opaque_by_name)
    if (plan.how(id) == exec::OpaqueHow::Boundary) out.insert(name);
  for (const auto& [name, id] : p.selects_by_name) out.insert(name);
}

// Single-output opaque nodes of one model that compute what another of its opaque nodes does:
// the same operator and attributes on the same operand values (value numbering over the whole
// graph: the same node, constants of the same type and bytes, or nodes that compute the same in
// turn). A re-import merges such twins (CSE, importer/cse.h) where the first import kept them
// apart (their operands were an Identity apart, one constant was computed from the shapes, or
// they read twins): the twin the other model lacks is given its counterpart's value. Name ->
// the name of the twin the other model has. Random operators are never twins.
std::map<std::string, std::string> twins(const ImportResult& m, const std::set<std::string>& other) {
  const ir::Graph& g = m.graph;
  std::vector<ir::NodeId> canon(g.size());
  std::map<std::string, ir::NodeId> by_key;
  std::map<ir::NodeId, std::vector<std::string>> opaque_names;  // canonical node -> opaque names
  // Weights are numbered by content without copying their bytes into a key (a VGG's are half a
  // gigabyte): among the weights of the same type, the first with the same bytes.
  std::map<std::string, std::vector<std::pair<ir::NodeId, const WeightData*>>> weights_of_type;
  for (ir::NodeId n = 0; n < g.size(); ++n) {
    const ir::Node& nd = g.node(n);
    std::string key;
    size_t first_child = 0;  // the children that are operands (a weight's name is none)
    if (nd.op == Op::Weight) {
      first_child = nd.children.size();
      auto leaf = parse_leaf_id(g.node(nd.children[0]).sym);
      if (leaf && m.weights.contains(leaf->name)) {
        const WeightData& w = m.weights.get(leaf->name);
        auto& same_type = weights_of_type[std::string(dtype_name(w.type.dtype)) + shape_str(w.type.shape)];
        auto same = std::find_if(same_type.begin(), same_type.end(),
                                 [&](const auto& o) { return o.second->bytes == w.bytes; });
        if (same == same_type.end()) same = same_type.insert(same_type.end(), {n, &w});
        key = "w#" + std::to_string(same->first);
      }
    } else if (nd.op == Op::Num) {
      key = "num:" + std::to_string(nd.num);
    } else if (nd.op == Op::Sym) {
      key = "sym:" + nd.sym;
    } else if (nd.op == Op::Opaque) {
      auto id = parse_opaque_id(g.node(nd.children[0]).sym);
      const OpaqueNode* on = id ? &m.ctx.opaque.at(static_cast<size_t>(id->index)) : nullptr;
      if (on && on->node.op_type().rfind("Random", 0) != 0 && on->node.op_type() != "Multinomial" &&
          on->node.op_type() != "Bernoulli") {
        onnx::NodeProto op = on->node;  // what it computes, without its names
        op.clear_name();
        op.clear_input();
        op.clear_output();
        op.clear_doc_string();
        op.SerializeToString(&key);
        key = "o:" + key + "|" + (g.type(n).kind == Kind::Tensor ? shape_str(g.type(n).tensor.shape) : "tuple");
        first_child = 1;
      }
    } else if (nd.op != Op::Input) {
      key = "op:" + std::string(op_name(nd.op));
    }
    if (key.empty()) {  // an input, or something never merged
      canon[n] = n;
      continue;
    }
    for (size_t c = first_child; c < nd.children.size(); ++c) key += "|" + std::to_string(canon[nd.children[c]]);
    canon[n] = by_key.emplace(key, n).first->second;
    if (nd.op == Op::Opaque && first_child == 1)
      if (auto id = parse_opaque_id(g.node(nd.children[0]).sym); id && id->outputs.size() == 1)
        opaque_names[canon[n]].push_back(first_output(m.ctx.opaque.at(static_cast<size_t>(id->index))));
  }
  std::map<std::string, std::string> out;
  for (const auto& [rep, names] : opaque_names) {
    if (names.size() < 2) continue;
    auto shared = std::find_if(names.begin(), names.end(), [&](const std::string& nm) { return other.count(nm) != 0; });
    if (shared == names.end()) continue;
    for (const auto& nm : names)
      if (!other.count(nm)) out[nm] = *shared;
  }
  return out;
}

// Gives every region boundary (a node either model cannot compute) the same random value in
// both models (a twin its counterpart's); the other opaque nodes are computed by the executor in
// both.
void provide_boundaries(Prepared& p, const std::set<std::string>& boundaries, uint64_t seed,
                        const std::map<std::string, std::string>& twin) {
  for (const std::string& name : boundaries) {
    ir::NodeId id = 0;
    if (auto it = p.opaque_by_name.find(name); it != p.opaque_by_name.end()) {
      id = it->second;
    } else if (auto is = p.selects_by_name.find(name); is != p.selects_by_name.end()) {
      id = is->second;
    } else {
      continue;
    }
    if (p.provided.count(id)) continue;  // given in an earlier round of the fixpoint: the same value
    const auto t = twin.find(name);
    p.provided[id] =
        exec::random_tensor(p.graph.type(id).tensor.shape, seed_of(t == twin.end() ? name : t->second, seed));
  }
}

// Names the first comparison point only one of the two models has, for the failure message.
std::string key_difference(const std::vector<Key>& a, const std::vector<Key>& b) {
  const std::set<Key> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  auto describe = [](const Key& k) {
    if (k.rfind("out:", 0) == 0) return "output '" + k.substr(4) + "'";
    const std::string rest = k.substr(k.find(':') + 1);
    const size_t hash = rest.rfind('#');
    return "input " + rest.substr(hash + 1) + " of the opaque node writing '" + rest.substr(0, hash) + "'";
  };
  for (const Key& k : a)
    if (!sb.count(k)) return describe(k) + " is only in the original";
  for (const Key& k : b)
    if (!sa.count(k)) return describe(k) + " is only in the optimized model";
  return "the same points in another order";
}

exec::Inputs make_inputs(const ImportResult& m, uint64_t seed) {
  exec::Inputs in;
  for (const auto& n : m.graph.nodes()) {
    if (n.op != Op::Input) continue;
    auto leaf = parse_leaf_id(m.graph.node(n.children[0]).sym);
    if (!leaf || leaf->type.dtype != DType::F32) continue;
    in[leaf->name] = exec::random_tensor(leaf->type.shape, seed_of("input:" + leaf->name, seed));
  }
  return in;
}

// (The provided values are lent to the run, not copied: dyn_s3d's are 0.4 GB.)
exec::RunResult run_on(Executor on, Prepared& p, const WeightStore& w, const exec::Inputs& inputs) {
  if (!p.run) return {};  // every point is a weight leaf (or there is none)
  exec::RunOptions opts;
  opts.provided.swap(p.provided);
  struct GiveBack {
    exec::RunOptions& opts;
    Prepared& p;
    ~GiveBack() { p.provided.swap(opts.provided); }
  } give_back{opts, p};
  opts.opaque = &p.ops;
  if (on == Executor::Gpu) return gpu::run(p.graph, w, inputs, opts);
  return refexec::run(p.graph, w, inputs, opts);
}

}  // namespace

std::string_view executor_name(Executor e) { return e == Executor::Gpu ? "gpu" : "cpu"; }

VerifyResult verify_models(const ImportResult& original, const ImportResult& optimized, Executor on, uint64_t seed,
                           Tolerance tol) {
  const Stopwatch sw;
  VerifyResult r;
  r.method = std::string(executor_name(on));
  // An opaque node in only one of the two models has no counterpart to compare its inputs
  // with: the exporter adds some (a Pad enlarging a computed kernel), and the weight folding
  // can leave an original one with only constant inputs, which the re-import folds away.
  std::set<std::string> original_opaque, optimized_opaque;
  for (const auto& on : original.ctx.opaque) original_opaque.insert(first_output(on));
  for (const auto& on : optimized.ctx.opaque) optimized_opaque.insert(first_output(on));
  Prepared a = prepare(original, optimized_opaque), b = prepare(optimized, original_opaque);
  const std::map<std::string, std::string> twin_a = twins(original, optimized_opaque),
                                           twin_b = twins(optimized, original_opaque);
  std::set<std::string> boundaries;
  for (;;) {  // until no provided value makes another node a boundary
    const size_t known = boundaries.size();
    collect_boundaries(a, original.weights, boundaries);
    collect_boundaries(b, optimized.weights, boundaries);
    provide_boundaries(a, boundaries, seed, twin_a);
    provide_boundaries(b, boundaries, seed, twin_b);
    if (boundaries.size() == known) break;
  }
  r.opaque_regions = static_cast<int>(a.provided.size());
  r.opaque_computed = 0;
  for (const auto& [name, id] : a.opaque_by_name)
    if (!boundaries.count(name)) r.opaque_computed++;
  if (a.keys != b.keys) {
    r.failure = "the optimized model does not have the same outputs and opaque nodes as the original (" +
                key_difference(a.keys, b.keys) + ")";
    return r;
  }
  // An opaque node only one model has must be computed: a random value in its place would be
  // compared with the other model's real one. A multi-output one never is (its outputs are
  // always region boundaries).
  for (const auto& [which, model, other, twin] :
       {std::tuple{"original", &original, &optimized_opaque, &twin_a},
        std::tuple{"optimized", &optimized, &original_opaque, &twin_b}})
    for (const auto& on : model->ctx.opaque) {
      const std::string name = first_output(on);
      if (other->count(name) || (on.node.output_size() == 1 && !boundaries.count(name)) || twin->count(name)) continue;
      const bool multi = on.node.output_size() > 1;
      r.failure = std::string("the ") + which + " model has " + (multi ? "a multi-output opaque node" : "an opaque node") +
                  " the other model has not" + (multi ? "" : " and the executors cannot compute") + " ('" + name + "')";
      return r;
    }
  if (a.keys.empty()) {
    r.passed = true;
    return r;
  }
  auto inputs = make_inputs(original, seed);
  exec::RunResult ra = run_on(on, a, original.weights, inputs);
  exec::RunResult rb = run_on(on, b, optimized.weights, inputs);
  r.passed = true;
  // A point's shape and values: a run's output, or a weight leaf where it is stored.
  struct Values {
    const Shape* shape;
    std::span<const float> data;
  };
  auto values = [](const Prepared& p, const exec::RunResult& run, size_t i) {
    if (const int k = p.computed[i]; k >= 0) {
      const exec::Tensor& t = run.outputs.at(static_cast<size_t>(k));
      return Values{&t.shape, std::span<const float>(t.data)};
    }
    const WeightData* w = p.stored[i];
    return Values{&w->type.shape, std::span<const float>(w->f32(), w->count())};
  };
  for (size_t i = 0; i < a.keys.size(); ++i) {
    const Values x = values(a, ra, i), y = values(b, rb, i);
    r.compared++;
    const std::string what = a.keys[i].rfind("out:", 0) == 0 ? "output '" + a.keys[i].substr(4) + "'"
                                                              : "input " + a.keys[i].substr(7) + " of an opaque node";
    if (*x.shape != *y.shape) {
      r.passed = false;
      r.failure = what + ": shape " + shape_str(*y.shape) + " differs from the original " + shape_str(*x.shape);
      break;
    }
    // Equal bits: every error is 0 and the non-finite values agree (the loop below would say so).
    if (x.data.data() == y.data.data() ||
        (!x.data.empty() && std::memcmp(x.data.data(), y.data.data(), x.data.size_bytes()) == 0))
      continue;
    double scale = 0;
    for (float v : x.data)
      if (std::isfinite(v)) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    for (size_t k = 0; k < x.data.size(); ++k) {
      double u = x.data[k], v = y.data[k];
      if (std::isnan(u) != std::isnan(v) || (std::isinf(u) && u != v)) {
        r.passed = false;
        r.failure = what + ": non-finite values differ at element " + std::to_string(k);
        break;
      }
      if (!std::isfinite(u)) continue;
      double err = std::fabs(u - v);
      r.max_abs_err = std::max(r.max_abs_err, err);
      r.max_scaled_err = std::max(r.max_scaled_err, err / std::max(1.0, scale));
      if (err > tol.atol * std::max(1.0, scale) + tol.rtol * std::fabs(u)) {
        r.passed = false;
        r.failure = what + ": element " + std::to_string(k) + " is " + std::to_string(v) + ", the original gives " +
                    std::to_string(u) + " (abs error " + std::to_string(err) + ", output scale " +
                    std::to_string(scale) + ")";
        break;
      }
    }
    if (!r.passed) break;
  }
  r.time_s = sw.seconds();
  return r;
}

}  // namespace tensat
