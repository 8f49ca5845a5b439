// Costing implementation (see costing.h).
#include "pipeline/costing.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "lang/runtime_fusion.h"
#include "onnx_model/model_context.h"

namespace tensat {

namespace {

// ONNX Runtime's IsOperationDeterministic list: never constant-folded.
constexpr std::array<std::string_view, 6> kNonDeterministic = {"RandomNormal",     "RandomUniform", "RandomNormalLike",
                                                                 "RandomUniformLike", "Multinomial",   "Bernoulli"};

bool has_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

}  // namespace

std::vector<OpaqueFolding> opaque_folding(const ModelContext& ctx) {
  std::vector<OpaqueFolding> out;
  out.reserve(ctx.opaque.size());
  for (const auto& o : ctx.opaque) {
    const onnx::NodeProto& n = o.node;
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    const std::string& t = n.op_type();
    if (!default_domain || has_subgraph(n) || !o.implicit_inputs.empty() ||
        std::find(kNonDeterministic.begin(), kNonDeterministic.end(), t) != kNonDeterministic.end())
      out.push_back(OpaqueFolding::Never);
    else if (t == "Shape" || t == "Size")
      out.push_back(OpaqueFolding::Always);
    else
      out.push_back(OpaqueFolding::WhenInputsConstant);
  }
  return out;
}

Costing::Costing(cost::CostModel& model, std::vector<OpaqueFolding> opaque)
    : model_(model), opaque_(std::move(opaque)) {}

bool Costing::constant(Op op, const std::string* opaque_id, bool all_children_constant, bool has_tensor_child) const {
  if (op == Op::Opaque) {
    auto id = opaque_id ? parse_opaque_id(*opaque_id) : std::nullopt;
    if (!id || id->index < 0 || static_cast<size_t>(id->index) >= opaque_.size()) return false;
    switch (opaque_[static_cast<size_t>(id->index)]) {
      case OpaqueFolding::Never: return false;
      case OpaqueFolding::Always: return true;
      case OpaqueFolding::WhenInputsConstant: return has_tensor_child && all_children_constant;
    }
    return false;
  }
  if (op == Op::Select) return all_children_constant;  // a part of a constant opaque node
  return is_weight_only(op, all_children_constant);
}

GraphPrice Costing::price(const ir::Graph& g) const {
  std::lock_guard lock(mu_);
  ir::Graph c = g.compact();
  std::vector<bool> konst = weight_only_nodes(c);
  // A conv that only a relu reads is one call at run time (runtime_fusion.h): priced there.
  const std::vector<int64_t> absorbs = ir::relu_conv_fusions(c);
  std::vector<bool> absorbed(c.size(), false);
  for (int64_t a : absorbs)
    if (a >= 0) absorbed[static_cast<size_t>(a)] = true;
  GraphPrice out;
  std::vector<const ValueType*> kids;
  for (ir::NodeId i = 0; i < c.size(); ++i) {  // children first
    const ir::Node& n = c.node(i);
    kids.clear();
    bool all = true, tensor_child = false;
    for (size_t k = 0; k < n.children.size(); ++k) {
      ir::NodeId ch = n.children[k];
      kids.push_back(&c.type(ch));
      if (is_param_leaf(c.node(ch).op)) continue;
      tensor_child = true;
      all = all && konst[ch];
    }
    const std::string* id = n.op == Op::Opaque && !n.children.empty() ? &c.type(n.children[0]).sym : nullptr;
    if (!konst[i]) konst[i] = constant(n.op, id, all, tensor_child);
    if (konst[i] || absorbed[i]) continue;
    const int64_t conv = absorbs[i];
    cost::Price p = conv < 0 ? model_.price(n.op, kids)
                             : model_.price(Op::Conv, ir::fused_conv_children(c, static_cast<ir::NodeId>(conv)));
    out.total += p.ms;
    if (p.fallback) out.fallback += p.ms;
  }
  return out;
}

ENodePrices Costing::price(const EGraph& eg) const {
  std::lock_guard lock(mu_);
  // Constant classes: weight-only ones (the analysis), then, to a fixpoint, classes with a
  // node that computes a constant from constant classes.
  std::vector<char> konst(eg.class_capacity(), 0);
  for (EClassId c : eg.class_ids()) konst[c.v] = eg.data(c).weight_only ? 1 : 0;
  auto node_constant = [&](const ENode& e) {
    bool all = true, tensor_child = false;
    for (auto ch : e.children) {
      if (eg.type(ch).kind == Kind::Int || eg.type(ch).kind == Kind::Sym) continue;
      tensor_child = true;
      all = all && konst[eg.find(ch).v];
    }
    const std::string* id = e.op == Op::Opaque && !e.children.empty() ? &eg.type(e.children[0]).sym : nullptr;
    return constant(e.op, id, all, tensor_child);
  };
  if (!opaque_.empty()) {
    for (bool changed = true; changed;) {
      changed = false;
      for (EClassId c : eg.class_ids()) {
        if (konst[c.v]) continue;
        for (ENodeId n : eg.eclass(c).nodes)
          if (node_constant(eg.node(n))) {
            konst[c.v] = 1;
            changed = true;
            break;
          }
      }
    }
  }
  ENodePrices out;
  out.cost.assign(eg.node_capacity(), 0.0);
  out.fallback.assign(eg.node_capacity(), 0.0);
  std::vector<const ValueType*> kids;
  for (EClassId c : eg.class_ids()) {
    for (ENodeId n : eg.eclass(c).nodes) {
      const ENode& e = eg.node(n);
      // Constant per node (not per class): the node itself is computable ahead of time.
      if (node_constant(e)) continue;
      kids.clear();
      for (auto ch : e.children) kids.push_back(&eg.type(ch));
      cost::Price p = model_.price(e.op, kids);
      out.cost[n.v] = p.ms;
      if (p.fallback) out.fallback[n.v] = p.ms;
    }
  }
  return out;
}

double graph_cost(const ir::Graph& g, cost::CostModel& model) { return Costing(model).price(g).total; }

bool comparison_robust(const GraphPrice& before, const GraphPrice& after) {
  for (double s : {1.0 / kFallbackSpread, 1.0, kFallbackSpread}) {
    double b = before.total - before.fallback + s * before.fallback;
    double a = after.total - after.fallback + s * after.fallback;
    if (a > b * (1 + 1e-12)) return false;
  }
  return true;
}

FallbackDecisions analyze_fallback_decisions(const extract::ExtractGraph& g, const std::vector<double>& fallback_cost,
                                             const extract::Choice& choice,
                                             const std::function<std::string(extract::NodeIdx)>& describe) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const size_t nc = g.classes.size();
  // Marginal cost of computing each class given the solution: 0 for classes it computes,
  // else the cheapest node's cost plus its children's marginal costs (relaxed to a fixpoint).
  // Bounded passes (classes still infinite afterwards only lose their alternatives).
  constexpr int kMaxPasses = 200;
  std::vector<double> m(nc, kInf), mf(nc, 0.0);
  for (size_t c = 0; c < nc && c < choice.size(); ++c)
    if (choice[c] >= 0) m[c] = 0.0;
  std::vector<std::vector<extract::ClassIdx>> kids(g.nodes.size());
  for (extract::NodeIdx n = 0; n < g.nodes.size(); ++n)
    if (g.usable(n)) kids[n] = g.child_classes(n);
  bool changed = true;
  for (int pass = 0; changed && pass < kMaxPasses; ++pass) {
    changed = false;
    for (extract::NodeIdx n = 0; n < g.nodes.size(); ++n) {
      const extract::ENode& e = g.nodes[n];
      if (m[e.eclass] == 0.0 || !g.usable(n)) continue;
      double total = e.cost, fb = fallback_cost[n];
      for (auto ch : kids[n]) {
        total += m[ch];
        fb += mf[ch];
      }
      if (total < m[e.eclass] * (1 - 1e-12)) {
        m[e.eclass] = total;
        mf[e.eclass] = fb;
        changed = true;
      }
    }
  }
  FallbackDecisions out;
  std::vector<FallbackDecision> found;
  for (size_t c = 0; c < nc && c < choice.size(); ++c) {
    if (choice[c] < 0) continue;
    const auto k = static_cast<extract::NodeIdx>(choice[c]);
    const double cm = g.nodes[k].cost - fallback_cost[k], cf = fallback_cost[k];
    // The closest alternative: the one with the least marginal cost.
    double best = kInf, best_f = 0;
    extract::NodeIdx best_n = k;
    bool sensitive = false;
    for (extract::NodeIdx a : g.classes[c].nodes) {
      if (a == k || !g.usable(a)) continue;
      double total = g.nodes[a].cost, fb = fallback_cost[a];
      bool self = false;
      for (auto ch : kids[a]) {
        self = self || ch == c;
        total += m[ch];
        fb += mf[ch];
      }
      if (self || !std::isfinite(total)) continue;
      if (total < best) {
        best = total;
        best_f = fb;
        best_n = a;
      }
      // The chosen node looks no worse at the estimates as given; does scaling them reverse it?
      if (fb > 0 || cf > 0) {
        auto diff = [&](double s) { return (total - fb + s * fb) - (cm + s * cf); };
        if (diff(1.0) >= 0 && (diff(1.0 / kFallbackSpread) < 0 || diff(kFallbackSpread) < 0)) sensitive = true;
      }
    }
    if (best_n == k || (cf == 0 && best_f == 0 && !sensitive)) continue;
    FallbackDecision d;
    d.eclass = extract::class_name(g, static_cast<extract::ClassIdx>(c));
    d.chosen = describe(k);
    d.alternative = describe(best_n);
    d.chosen_ms = g.nodes[k].cost;
    d.chosen_fallback_ms = cf;
    d.alternative_ms = best;
    d.alternative_fallback_ms = best_f;
    d.both_sides = cf > 0 && best_f > 0;
    d.sensitive = sensitive;
    ++out.decisions;
    out.both_sides += d.both_sides;
    out.sensitive += d.sensitive;
    found.push_back(std::move(d));
  }
  std::stable_sort(found.begin(), found.end(), [](const FallbackDecision& a, const FallbackDecision& b) {
    return std::make_pair(a.sensitive, a.both_sides) > std::make_pair(b.sensitive, b.both_sides);
  });
  if (found.size() > FallbackDecisions::kMaxExamples) found.resize(FallbackDecisions::kMaxExamples);
  out.examples = std::move(found);
  return out;
}

}  // namespace tensat
