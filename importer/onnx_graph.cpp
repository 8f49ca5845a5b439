// Helpers over ONNX graphs (see onnx_graph.h).
#include "importer/onnx_graph.h"

#include <algorithm>
#include <unordered_set>

namespace tensat::detail {

void collect_outer_refs(const onnx::GraphProto& sub, std::vector<std::string>& out) {
  std::unordered_set<std::string> defined;
  for (const auto& i : sub.input()) defined.insert(i.name());
  for (const auto& i : sub.initializer()) defined.insert(i.name());
  for (const auto& n : sub.node())
    for (const auto& o : n.output()) defined.insert(o);
  auto note = [&](const std::string& s) {
    if (!s.empty() && !defined.count(s) && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  for (const auto& n : sub.node()) {
    for (const auto& i : n.input()) note(i);
    for (const auto& a : n.attribute()) {
      std::vector<std::string> inner;
      if (a.has_g()) collect_outer_refs(a.g(), inner);
      for (const auto& gg : a.graphs()) collect_outer_refs(gg, inner);
      for (const auto& s : inner) note(s);
    }
  }
  for (const auto& o : sub.output()) note(o.name());
}

bool has_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

std::vector<std::string> node_reads(const onnx::NodeProto& n) {
  std::vector<std::string> reads;
  for (const auto& i : n.input())
    if (!i.empty()) reads.push_back(i);
  for (const auto& a : n.attribute()) {
    if (a.has_g()) collect_outer_refs(a.g(), reads);
    for (const auto& gg : a.graphs()) collect_outer_refs(gg, reads);
  }
  return reads;
}

std::optional<std::vector<int64_t>> split_chunks(int64_t dim, int64_t parts) {
  if (parts <= 0) return std::nullopt;
  const int64_t chunk = (dim + parts - 1) / parts;
  if (chunk * (parts - 1) > dim) return std::nullopt;
  std::vector<int64_t> sizes;
  for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(chunk, dim - k * chunk));
  return sizes;
}

}  // namespace tensat::detail
