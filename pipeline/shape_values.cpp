// Labelling shape values (see shape_values.h).
#include "pipeline/shape_values.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <unordered_set>

#include "exec/opaque_decode.h"
#include "exporter/dim_labels.h"
#include "importer/const_fold.h"
#include "importer/tensor_proto.h"
#include "onnx_model/shape_op.h"

namespace tensat {

namespace {

using Assignment = std::map<std::string, int64_t>;  // input symbol -> its value

constexpr size_t kMaxValueLabels = 16;  // elements of an integer value labelled (a shape)
constexpr uint64_t kSampled = 10;       // sets of symbol values drawn for labelling

// The fixed values of the input symbols (the graph's input leaves), then the other sets: twice
// plus one (where the pipeline checks the output), 1 (distinct: 1, 2, ...), and kSampled sets
// drawn for each symbol on its own from 1 .. 4v + 16 (reproducibly, from the symbol's name): a
// size clamped to a bound in that range (Max(S, 4), Min(S, 32)) or another symbol's size only
// at some values (ceil(S / 8) = N at S = 8N) does not follow a symbol at all of them.
std::vector<Assignment> assignments(const ImportResult& imp) {
  const auto symbolic = symbolic_input_dims(imp.ctx);
  Assignment fixed;
  for (const auto& n : imp.graph.nodes()) {
    if (n.op != Op::Input) continue;
    auto leaf = parse_leaf_id(imp.graph.node(n.children[0]).sym);
    if (!leaf) continue;
    auto it = symbolic.find(leaf->name);
    if (it == symbolic.end()) continue;
    for (const auto& [axis, nm] : it->second)
      if (axis < leaf->type.shape.size()) fixed.emplace(nm, leaf->type.shape[axis]);
  }
  std::vector<Assignment> out{fixed};
  auto add = [&](const std::function<int64_t(const std::string&, int64_t)>& f) {
    Assignment a;
    std::set<int64_t> taken;
    for (const auto& [nm, v] : fixed) {
      int64_t x = f(nm, v);
      while (taken.count(x)) ++x;  // distinct
      taken.insert(x);
      a[nm] = x;
    }
    out.push_back(std::move(a));
  };
  add([](const std::string&, int64_t v) { return 2 * v + 1; });
  add([](const std::string&, int64_t) { return int64_t{1}; });
  for (uint64_t k = 0; k < kSampled; ++k)
    add([k](const std::string& nm, int64_t v) {
      uint64_t h = std::hash<std::string>()(nm) ^ (0x9e3779b97f4a7c15ULL * (k + 1));
      h ^= h >> 33;
      h *= 0xff51afd7ed558ccdULL;
      h ^= h >> 33;
      return 1 + static_cast<int64_t>(h % static_cast<uint64_t>(4 * v + 16));
    });
  return out;
}

// The value's computation with the symbols at `at`: every Shape or Size of a tensor computed at
// run time is a constant from its labels, and the constant folder evaluates the rest.
std::optional<WeightData> evaluate(const std::string& v, const ShapeValue& sv, const Assignment& at, int64_t opset,
                                   std::string& why, std::map<std::string, std::string>* all = nullptr) {
  onnx::GraphProto g;
  for (const auto& t : sv.initializers) *g.add_initializer() = t;
  for (const auto& n : sv.nodes) {
    auto r = n.input_size() == 1 ? sv.shape_reads.find(n.input(0)) : sv.shape_reads.end();
    if (r == sv.shape_reads.end() || (n.op_type() != "Shape" && n.op_type() != "Size")) {
      *g.add_node() = n;
      continue;
    }
    std::vector<int64_t> dims;
    for (size_t d = 0; d < r->second.fixed.size(); ++d) {
      const auto& factors = r->second.labels.at(d);
      int64_t size = factors.empty() ? r->second.fixed[d] : 1;
      for (const std::string& f : factors) size *= at.at(f);
      dims.push_back(size);
    }
    WeightData w;
    if (n.op_type() == "Size") {
      int64_t size = 1;
      for (int64_t d : dims) size *= d;
      w.type = TensorType{DType::I64, {}};
      w.bytes.assign(reinterpret_cast<const char*>(&size), sizeof size);
    } else {
      const auto [start, end] = shape_op_range(n, static_cast<int64_t>(dims.size()));
      std::vector<int64_t> part(dims.begin() + start, dims.begin() + end);
      w.type = TensorType{DType::I64, {static_cast<int64_t>(part.size())}};
      w.bytes.assign(reinterpret_cast<const char*>(part.data()), part.size() * sizeof(int64_t));
    }
    *g.add_initializer() = tensor_from_data(n.output(0), w);
  }
  std::unordered_set<std::string> derived;
  // Its shape is what is asked; the value may be larger than the import folds (a table of
  // position embeddings gathered at three times the sequence length).
  (void)detail::fold_constants(g, opset, {}, "shape value '" + v + "'", derived, nullptr, int64_t{1} << 24);
  if (all)
    for (const auto& t : g.initializer()) (*all)[t.name()] = t.SerializeAsString();
  for (const auto& t : g.initializer())
    if (t.name() == v) return tensor_data(t, "shape value '" + v + "'");
  why = "its computation could not be evaluated again";
  return std::nullopt;
}

std::string at_text(const Assignment& a) {
  std::string s;
  for (const auto& [nm, v] : a) s += (s.empty() ? "" : ", ") + nm + "=" + std::to_string(v);
  return s;
}

}  // namespace

size_t label_shape_values(ImportResult& imp) {
  auto& values = imp.ctx.shape_values;
  if (values.empty()) return 0;
  const std::vector<Assignment> at = assignments(imp);
  std::set<std::string> symbols;
  for (const auto& [in, axes] : symbolic_input_dims(imp.ctx))
    for (const auto& [axis, nm] : axes) symbols.insert(nm);
  std::set<std::string> busy;

  std::function<bool(const std::string&)> label = [&](const std::string& v) -> bool {
    ShapeValue& sv = values.at(v);
    if (sv.labelled) return true;
    if (!sv.why_not.empty()) return false;
    if (!busy.insert(v).second) {
      sv.why_not = "its computation reads its own shape";
      return false;
    }
    auto fail = [&](std::string why) {
      sv.why_not = std::move(why);
      busy.erase(v);
      return false;
    };
    // The tensors whose shapes it reads, and the shape values they are computed from, first.
    std::vector<ir::NodeId> roots;
    for (const auto& [t, read] : sv.shape_reads) {
      auto it = imp.shape_read_nodes.find(t);
      if (it == imp.shape_read_nodes.end())
        return fail("it reads the shape of '" + t + "', which the imported graph does not compute");
      roots.push_back(it->second);
    }
    {
      std::vector<bool> seen(imp.graph.size(), false);
      std::vector<ir::NodeId> stack = roots;
      while (!stack.empty()) {
        const ir::NodeId n = stack.back();
        stack.pop_back();
        if (seen[n]) continue;
        seen[n] = true;
        const ir::Node& nd = imp.graph.node(n);
        if (nd.op == Op::Input)
          if (auto leaf = parse_leaf_id(imp.graph.node(nd.children[0]).sym); leaf && values.count(leaf->name))
            if (!label(leaf->name))
              return fail("it reads a shape computed from '" + leaf->name + "': " + values.at(leaf->name).why_not);
        for (ir::NodeId c : nd.children) stack.push_back(c);
      }
    }
    if (!roots.empty()) {
      try {
        const DimLabels labels(imp.graph, imp.ctx, imp.weights, roots);
        for (auto& [t, read] : sv.shape_reads) {
          const DimLabelList& l = labels.of(imp.shape_read_nodes.at(t));
          if (l.size() != read.fixed.size()) return fail("the rank of '" + t + "' is not the one it reads");
          read.labels.assign(l.size(), {});
          for (size_t d = 0; d < l.size(); ++d) {
            if (l[d] == kStaticDim) continue;
            if (!labels.input_symbols_only(l[d]) || labels.const_factor(l[d]) != 1)
              return fail("dimension " + std::to_string(d) + " of '" + t + "' is " + labels.name(l[d]) +
                          ", not an input's dimension or a product of them");
            read.labels[d] = labels.factor_names(l[d]);
          }
        }
      } catch (const DimLabelError& e) {
        return fail(std::string("the shape it reads: ") + e.what());
      }
    }
    // Its computation at each set of values of the symbols.
    std::vector<Shape> shapes;
    std::vector<std::vector<int64_t>> ints;  // a small integer value's elements
    std::vector<std::map<std::string, std::string>> steps(at.size());  // every value computed
    for (size_t k = 0; k < at.size(); ++k) {
      std::string why;
      std::optional<WeightData> r = evaluate(v, sv, at[k], imp.ctx.default_opset, why, &steps[k]);
      if (!r) return fail(why + " at " + at_text(at[k]));
      if (k == 0) {
        const WeightData& w = imp.weights.get(v);
        if (r->type.dtype != w.type.dtype || r->type.shape != w.type.shape || r->bytes != w.bytes)
          return fail("computed again at the fixed shapes, it is not the value the import computed");
      }
      if (k > 0 && r->type.shape.size() != shapes[0].size())
        return fail("its rank changes with the input dimensions (at " + at_text(at[k]) + ")");
      shapes.push_back(r->type.shape);
      if (r->type.shape.size() <= 1 && r->count() <= kMaxValueLabels)
        if (auto e = exec::opaque::int_values(*r)) ints.push_back(std::move(*e));
    }
    // Does it select by the shapes: an operator that chooses between values, or rounds, on an
    // operand that changes with the symbols?
    sv.selects = false;
    for (const auto& node : sv.nodes) {
      if (!selecting_op(node.op_type())) continue;
      for (const auto& in : node.input())
        for (size_t k = 1; k < steps.size() && !in.empty() && !sv.selects; ++k)
          sv.selects = steps[k].count(in) && steps[0].count(in) && steps[k].at(in) != steps[0].at(in);
    }
    // Its elements, where it is a small integer vector or scalar of the same size everywhere.
    sv.values_labelled = false;
    sv.value_labels.clear();
    if (ints.size() == at.size() &&
        std::all_of(ints.begin(), ints.end(), [&](const auto& e) { return e.size() == ints[0].size(); })) {
      std::vector<std::string> vl(ints[0].size());
      bool ok = true;
      for (size_t i = 0; i < vl.size() && ok; ++i) {
        bool fixed = true;
        for (const auto& e : ints) fixed = fixed && e[i] == ints[0][i];
        if (fixed) continue;
        for (const std::string& sym : symbols) {
          bool all = at[0].count(sym) != 0;
          for (size_t k = 0; k < at.size() && all; ++k) all = at[k].at(sym) == ints[k][i];
          if (all) {
            vl[i] = sym;
            break;
          }
        }
        ok = !vl[i].empty();
      }
      if (ok) {
        sv.value_labels = std::move(vl);
        sv.values_labelled = true;
      }
    }
    std::vector<std::vector<std::string>> labels(shapes[0].size());
    for (size_t d = 0; d < labels.size(); ++d) {
      bool fixed = true;
      for (const auto& s : shapes) fixed = fixed && s[d] == shapes[0][d];
      if (fixed) continue;
      // One symbol, else a product of two (batch*seq).
      auto follows = [&](const std::vector<std::string>& f) {
        for (size_t k = 0; k < at.size(); ++k) {
          int64_t v = 1;
          for (const std::string& sym : f) {
            if (!at[k].count(sym)) return false;
            v *= at[k].at(sym);
          }
          if (v != shapes[k][d]) return false;
        }
        return true;
      };
      for (auto a = symbols.begin(); a != symbols.end() && labels[d].empty(); ++a) {
        if (follows({*a})) labels[d] = {*a};
        for (auto b = std::next(a); b != symbols.end() && labels[d].empty(); ++b)
          if (follows({*a, *b})) labels[d] = {*a, *b};
      }
      if (labels[d].empty()) {
        std::string sizes;
        for (size_t k = 0; k < at.size(); ++k)
          sizes += (k ? "; " : "") + std::to_string(shapes[k][d]) + " at " + at_text(at[k]);
        return fail("its dimension " + std::to_string(d) + " follows no input dimension (" + sizes + ")");
      }
    }
    sv.labels = std::move(labels);
    sv.labelled = true;
    busy.erase(v);
    return true;
  };

  if (imp.ctx.default_opset < 6) {  // Shape, Slice, Concat and Mul of int64 tensors
    for (auto& [v, sv] : values) sv.why_not = "its computation from the input's shape needs opset 6";
    return 0;
  }
  size_t labelled = 0;
  for (auto& [v, sv] : values) {
    if (label(v)) {
      ++labelled;
    } else {
      spdlog::debug("shape value '{}' not labelled: {}", v, sv.why_not);
    }
  }
  return labelled;
}

}  // namespace tensat
