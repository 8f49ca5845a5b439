// GraphIndex construction (see graph_index.h).
#include "extract/graph_index.h"

#include <algorithm>

namespace tensat::extract {

GraphIndex::GraphIndex(const ExtractGraph& g) {
  const size_t N = g.nodes.size(), C = g.classes.size();
  usable_.resize(N);
  eclass_.resize(N);
  kid_start_.assign(N + 1, 0);
  size_t total = 0;
  for (const ENode& e : g.nodes) total += e.children.size();
  kids_.reserve(total);
  std::vector<uint32_t> count(C + 1, 0);
  for (NodeIdx n = 0; n < N; ++n) {
    usable_[n] = g.usable(n);
    eclass_[n] = g.nodes[n].eclass;
    g.append_child_classes(n, kids_);
    kid_start_[n + 1] = static_cast<uint32_t>(kids_.size());
    if (usable_[n])
      for (ClassIdx c : kids(n)) ++count[c + 1];
  }
  for (size_t c = 0; c < C; ++c) count[c + 1] += count[c];
  parent_start_ = count;
  parents_.resize(count[C]);
  for (NodeIdx n = 0; n < N; ++n)  // by increasing n, so each list is sorted
    if (usable_[n])
      for (ClassIdx c : kids(n)) parents_[count[c]++] = n;
}

}  // namespace tensat::extract
