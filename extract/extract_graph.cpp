// ExtractGraph construction, validation, and the checks and costs of a choice.
#include "extract/extract_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tensat::extract {

ClassIdx ExtractGraph::add_class(std::string json_id) {
  classes.push_back(EClass{{}, std::move(json_id)});
  return static_cast<ClassIdx>(classes.size() - 1);
}

NodeIdx ExtractGraph::add_node(ClassIdx eclass, std::string op, std::vector<ClassIdx> children,
                               double cost) {
  if (eclass >= classes.size()) throw InputError("add_node: class index out of range");
  for (ClassIdx c : children)
    if (c >= classes.size()) throw InputError("add_node: child class index out of range");
  const auto id = static_cast<NodeIdx>(nodes.size());
  nodes.push_back(ENode{std::move(op), std::move(children), cost, eclass, false, {}});
  classes[eclass].nodes.push_back(id);
  return id;
}

void ExtractGraph::validate() const {
  if (roots.empty()) throw InputError("e-graph has no root class");
  for (ClassIdx r : roots)
    if (r >= classes.size()) throw InputError("root class index out of range");
  for (size_t c = 0; c < classes.size(); ++c) {
    if (classes[c].nodes.empty())
      throw InputError("class " + class_name(*this, static_cast<ClassIdx>(c)) + " has no nodes");
    for (NodeIdx n : classes[c].nodes)
      if (n >= nodes.size() || nodes[n].eclass != c)
        throw InputError("class " + class_name(*this, static_cast<ClassIdx>(c)) +
                         " lists a node that is not in it");
  }
  size_t listed = 0;
  for (const auto& c : classes) listed += c.nodes.size();
  if (listed != nodes.size()) throw InputError("some nodes are in no class's node list");
  for (size_t n = 0; n < nodes.size(); ++n) {
    const ENode& e = nodes[n];
    if (std::isnan(e.cost) || e.cost < 0)
      throw InputError("node " + (e.json_id.empty() ? "#" + std::to_string(n) : e.json_id) +
                       " has a negative or NaN cost");
    for (ClassIdx c : e.children)
      if (c >= classes.size()) throw InputError("node child class index out of range");
  }
}

std::vector<ClassIdx> ExtractGraph::child_classes(NodeIdx n) const {
  std::vector<ClassIdx> cs;
  append_child_classes(n, cs);
  return cs;
}

void ExtractGraph::append_child_classes(NodeIdx n, std::vector<ClassIdx>& out) const {
  const auto first = static_cast<std::ptrdiff_t>(out.size());
  out.insert(out.end(), nodes[n].children.begin(), nodes[n].children.end());
  std::sort(out.begin() + first, out.end());
  out.erase(std::unique(out.begin() + first, out.end()), out.end());
}

bool ExtractGraph::usable(NodeIdx n) const {
  const ENode& e = nodes[n];
  if (e.filtered || !std::isfinite(e.cost)) return false;
  return std::find(e.children.begin(), e.children.end(), e.eclass) == e.children.end();
}

std::string class_name(const ExtractGraph& g, ClassIdx c) {
  if (c < g.classes.size() && !g.classes[c].json_id.empty()) return g.classes[c].json_id;
  return "#" + std::to_string(c);
}

Choice prune_to_roots(const ExtractGraph& g, const Choice& choice) {
  Choice out(g.classes.size(), -1);
  std::vector<ClassIdx> stack(g.roots.begin(), g.roots.end());
  std::vector<char> seen(g.classes.size(), 0);
  while (!stack.empty()) {
    ClassIdx c = stack.back();
    stack.pop_back();
    if (seen[c]) continue;
    seen[c] = 1;
    if (c >= choice.size() || choice[c] < 0) continue;
    out[c] = choice[c];
    for (ClassIdx k : g.nodes[static_cast<size_t>(choice[c])].children)
      if (!seen[k]) stack.push_back(k);
  }
  return out;
}

std::vector<double> node_costs(const ExtractGraph& g) {
  std::vector<double> costs(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) costs[n] = g.nodes[n].cost;
  return costs;
}

double dag_cost(const ExtractGraph& g, const Choice& choice) {
  const Choice reach = prune_to_roots(g, choice);
  double sum = 0.0;
  for (int64_t n : reach)
    if (n >= 0) sum += g.nodes[static_cast<size_t>(n)].cost;
  return sum;
}

double tree_cost(const ExtractGraph& g, const Choice& choice) {
  // Post-order over the (acyclic) chosen graph; memoised per class.
  std::vector<double> memo(g.classes.size(), -1.0);
  std::vector<std::pair<ClassIdx, size_t>> stack;
  double total = 0.0;
  for (ClassIdx r : g.roots) {
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [c, i] = stack.back();
      if (memo[c] >= 0) {
        stack.pop_back();
        continue;
      }
      if (choice[c] < 0) throw InternalError("tree_cost: class " + class_name(g, c) + " unchosen");
      const ENode& n = g.nodes[static_cast<size_t>(choice[c])];
      if (i < n.children.size()) {
        ClassIdx k = n.children[i++];
        if (memo[k] < 0) {
          if (stack.size() > g.classes.size()) throw InternalError("tree_cost: cyclic choice");
          stack.push_back({k, 0});
        }
        continue;
      }
      double s = n.cost;
      for (ClassIdx k : n.children) s += memo[k];
      memo[c] = s;
      stack.pop_back();
    }
    total += memo[r];
  }
  return total;
}

namespace {

// One iterative DFS over the chosen graph from the roots; calls on_back(cycle) for every
// back edge. Stops early when on_back returns false.
template <class F>
void dfs_cycles(const ExtractGraph& g, const Choice& choice, F&& on_back) {
  enum : char { kWhite, kGrey, kBlack };
  std::vector<char> color(g.classes.size(), kWhite);
  std::vector<std::pair<ClassIdx, size_t>> stack;  // class, next child position
  for (ClassIdx r : g.roots) {
    if (color[r] != kWhite || choice[r] < 0) continue;
    stack.push_back({r, 0});
    color[r] = kGrey;
    while (!stack.empty()) {
      auto [c, i] = stack.back();
      const ENode& n = g.nodes[static_cast<size_t>(choice[c])];
      if (i == n.children.size()) {
        color[c] = kBlack;
        stack.pop_back();
        continue;
      }
      stack.back().second++;
      ClassIdx k = n.children[i];
      if (color[k] == kGrey) {
        std::vector<ClassIdx> cycle;
        size_t j = stack.size();
        while (j > 0 && stack[j - 1].first != k) --j;
        for (size_t t = j - 1; t < stack.size(); ++t) cycle.push_back(stack[t].first);
        if (!on_back(std::move(cycle))) return;
      } else if (color[k] == kWhite && choice[k] >= 0) {
        color[k] = kGrey;
        stack.push_back({k, 0});
      }
    }
  }
}

}  // namespace

std::optional<std::vector<ClassIdx>> find_cycle(const ExtractGraph& g, const Choice& choice) {
  std::optional<std::vector<ClassIdx>> found;
  dfs_cycles(g, choice, [&](std::vector<ClassIdx> cyc) {
    found = std::move(cyc);
    return false;
  });
  return found;
}

std::vector<std::vector<ClassIdx>> find_cycles(const ExtractGraph& g, const Choice& choice) {
  std::vector<std::vector<ClassIdx>> all;
  dfs_cycles(g, choice, [&](std::vector<ClassIdx> cyc) {
    all.push_back(std::move(cyc));
    return true;
  });
  return all;
}

std::string extraction_problem(const ExtractGraph& g, const Choice& choice) {
  if (choice.size() != g.classes.size()) return "choice has the wrong size";
  for (ClassIdx r : g.roots)
    if (choice[r] < 0) return "root class " + class_name(g, r) + " has no chosen node";
  for (size_t c = 0; c < choice.size(); ++c) {
    const int64_t n = choice[c];
    if (n < 0) continue;
    if (static_cast<size_t>(n) >= g.nodes.size()) return "node index out of range";
    const ENode& e = g.nodes[static_cast<size_t>(n)];
    const std::string cn = class_name(g, static_cast<ClassIdx>(c));
    if (e.eclass != c) return "class " + cn + " chose a node of another class";
    if (e.filtered) return "class " + cn + " chose a filtered node";
    if (!std::isfinite(e.cost)) return "class " + cn + " chose a node of infinite cost";
    for (ClassIdx k : e.children)
      if (choice[k] < 0)
        return "class " + cn + " uses child class " + class_name(g, k) + " which has no chosen node";
  }
  const Choice reach = prune_to_roots(g, choice);
  for (size_t c = 0; c < choice.size(); ++c)
    if (choice[c] >= 0 && reach[c] < 0)
      return "class " + class_name(g, static_cast<ClassIdx>(c)) + " is chosen but unreachable";
  if (auto cyc = find_cycle(g, choice)) {
    std::string s = "cycle through classes";
    for (ClassIdx c : *cyc) s += " " + class_name(g, c);
    return s;
  }
  return {};
}

void check_extraction(const ExtractGraph& g, const Choice& choice, const std::string& who) {
  const std::string problem = extraction_problem(g, choice);
  if (!problem.empty()) throw InternalError(who + " produced an invalid extraction: " + problem);
}

void finish_result(const ExtractGraph& g, ExtractResult& r) {
  check_extraction(g, r.choice, r.method);
  r.acyclic = true;
  r.dag_cost = dag_cost(g, r.choice);
  r.tree_cost = tree_cost(g, r.choice);
}

}  // namespace tensat::extract
