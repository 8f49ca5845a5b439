// Common-subexpression elimination before lowering (see cse.h).
#include "importer/cse.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "importer/onnx_graph.h"

namespace tensat::detail {

namespace {

bool random_op(const std::string& op) {
  static const std::unordered_set<std::string> ops = {"RandomNormal",     "RandomUniform", "RandomNormalLike",
                                                      "RandomUniformLike", "Multinomial",  "Bernoulli",
                                                      "Dropout"};
  return ops.count(op) != 0;
}

// Names that must survive: graph outputs and whatever a subgraph reads by name.
std::unordered_set<std::string> pinned_names(const onnx::GraphProto& g) {
  std::unordered_set<std::string> pinned;
  for (const auto& o : g.output()) pinned.insert(o.name());
  for (const auto& n : g.node()) {
    if (!has_subgraph(n)) continue;
    std::vector<std::string> refs;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_outer_refs(a.g(), refs);
      for (const auto& gg : a.graphs()) collect_outer_refs(gg, refs);
    }
    pinned.insert(refs.begin(), refs.end());
  }
  return pinned;
}

std::string node_key(const onnx::NodeProto& n, const std::vector<std::string>& inputs) {
  std::string key = n.op_type() + '\x1f' + n.domain() + '\x1f' + std::to_string(n.output_size()) + '\x1f';
  std::vector<const onnx::AttributeProto*> attrs;
  for (const auto& a : n.attribute()) attrs.push_back(&a);
  std::sort(attrs.begin(), attrs.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  for (auto* a : attrs) {
    std::string s;
    a->SerializeToString(&s);
    key += std::to_string(s.size()) + ':' + s;
  }
  for (const auto& i : inputs) key += '\x1f' + i;
  return key;
}

}  // namespace

int eliminate_common_subexpressions(onnx::GraphProto& g, const std::unordered_set<std::string>& shape_derived,
                                    bool merge_shape_derived) {
  const std::unordered_set<std::string> pinned = pinned_names(g);
  std::unordered_set<std::string> inputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  std::unordered_map<std::string, std::string> alias;  // merged name -> the name kept
  int merged = 0;

  // Equal small initializers.
  {
    std::unordered_map<std::string, std::string> by_content;
    google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
    for (auto& t : *g.mutable_initializer()) {
      const bool derived = shape_derived.count(t.name()) != 0;
      bool candidate = !inputs.count(t.name()) && !pinned.count(t.name()) && t.ByteSizeLong() <= kCseMaxConstantBytes &&
                       (merge_shape_derived || !derived);
      if (candidate) {
        onnx::TensorProto anon = t;
        anon.clear_name();
        anon.clear_doc_string();
        std::string key;
        anon.SerializeToString(&key);
        key += derived ? 'd' : 'c';
        auto [it, fresh] = by_content.emplace(std::move(key), t.name());
        if (!fresh) {
          alias[t.name()] = it->second;
          ++merged;
          continue;
        }
      }
      kept.Add()->Swap(&t);
    }
    g.mutable_initializer()->Swap(&kept);
  }

  auto resolve = [&](const std::string& s) {
    auto it = alias.find(s);
    return it == alias.end() ? s : it->second;
  };
  std::unordered_map<std::string, int> first;  // key -> index of the node kept
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& n : *g.mutable_node()) {
    for (int i = 0; i < n.input_size(); ++i)
      if (!n.input(i).empty()) n.set_input(i, resolve(n.input(i)));
    bool candidate = default_domain(n) && !random_op(n.op_type()) && n.output_size() > 0;
    if (candidate) {
      std::vector<std::string> ins(n.input().begin(), n.input().end());
      auto [it, fresh] = first.emplace(node_key(n, ins), kept.size());
      if (!fresh) {
        const onnx::NodeProto& keep = kept.Get(it->second);
        for (int k = 0; k < n.output_size(); ++k) {
          const std::string& o = n.output(k);
          if (o.empty()) continue;
          if (keep.output(k).empty()) {  // the kept node does not produce it: no merge possible
            candidate = false;
            break;
          }
        }
        if (candidate) {
          for (int k = 0; k < n.output_size(); ++k) {
            const std::string& o = n.output(k);
            if (o.empty()) continue;
            if (pinned.count(o)) {
              onnx::NodeProto* id = kept.Add();
              id->set_op_type("Identity");
              id->set_name(n.name().empty() ? o + "/cse" : n.name() + "/cse_" + std::to_string(k));
              id->add_input(keep.output(k));
              id->add_output(o);
            } else {
              alias[o] = keep.output(k);
            }
          }
          ++merged;
          continue;
        }
      }
    }
    kept.Add()->Swap(&n);
  }
  g.mutable_node()->Swap(&kept);
  // Readers that came earlier in the file than the node they read (a graph not in order).
  if (!alias.empty())
    for (auto& n : *g.mutable_node())
      for (int i = 0; i < n.input_size(); ++i)
        if (!n.input(i).empty()) n.set_input(i, resolve(n.input(i)));
  return merged;
}

}  // namespace tensat::detail
