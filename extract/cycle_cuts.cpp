// Strongly connected components and short cycles of the class graph (see cycle_cuts.h).
#include "extract/cycle_cuts.h"

#include <algorithm>

namespace tensat::extract {

std::vector<uint32_t> strongly_connected_components(const std::vector<std::vector<ClassIdx>>& succ) {
  const size_t V = succ.size();
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> index(V, kNone), low(V, 0), comp(V, kNone);
  std::vector<ClassIdx> stack;
  std::vector<char> on_stack(V, 0);
  std::vector<std::pair<ClassIdx, size_t>> call;
  uint32_t next = 0, ncomp = 0;
  for (ClassIdx root = 0; root < V; ++root) {
    if (index[root] != kNone) continue;
    call.push_back({root, 0});
    while (!call.empty()) {
      auto& [v, i] = call.back();
      if (i == 0 && index[v] == kNone) {
        index[v] = low[v] = next++;
        stack.push_back(v);
        on_stack[v] = 1;
      }
      if (i < succ[v].size()) {
        const ClassIdx w = succ[v][i++];
        if (index[w] == kNone) {
          call.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        ClassIdx w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          comp[w] = ncomp;
        } while (w != v);
        ++ncomp;
      }
      const ClassIdx done = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
    }
  }
  return comp;
}

bool short_cycles(const std::vector<std::vector<ClassIdx>>& succ, size_t max_len,
                  const std::function<bool(const std::vector<ClassIdx>&)>& emit) {
  const size_t C = succ.size();
  const std::vector<uint32_t> comp = strongly_connected_components(succ);
  std::vector<ClassIdx> path;
  std::vector<char> on_path(C, 0);
  // Depth-first from `start` through larger classes of the same component.
  auto dfs = [&](auto&& self, ClassIdx start, ClassIdx v) -> bool {
    for (ClassIdx w : succ[v]) {
      if (comp[w] != comp[start]) continue;
      if (w == start) {
        if (!emit(path)) return false;
      } else if (w > start && !on_path[w] && path.size() < max_len) {
        path.push_back(w);
        on_path[w] = 1;
        const bool go_on = self(self, start, w);
        on_path[w] = 0;
        path.pop_back();
        if (!go_on) return false;
      }
    }
    return true;
  };
  for (ClassIdx s = 0; s < C; ++s) {
    path = {s};
    on_path[s] = 1;
    const bool go_on = dfs(dfs, s, s);
    on_path[s] = 0;
    if (!go_on) return false;
  }
  return true;
}

}  // namespace tensat::extract
