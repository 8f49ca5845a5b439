// Concrete instances (through the numeric rule checker, rules/check) and the TASO completeness check.
#include "rules/taso/instances.h"

#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "rules/check/rule_check.h"
#include "rules/taso/taso_rules.h"

namespace tensat::taso {

namespace h = tensat::rules::check;

namespace {

bool is_var(const SExpr& e) { return e.is_atom && !e.quoted && e.atom.size() >= 2 && e.atom[0] == '?'; }

void collect_vars(const SExpr& e, std::set<std::string>& out) {
  if (is_var(e)) out.insert(e.atom.substr(1));
  if (!e.is_atom)
    for (const auto& c : e.list) collect_vars(c, out);
}

std::string describe(const ir::Graph& g, ir::NodeId n) {
  const ir::Node& node = g.node(n);
  if (node.op == Op::Num) return std::to_string(node.num);
  if (node.op == Op::Sym) return node.sym;
  std::string kind = node.op == Op::Weight ? "weight " : node.op == Op::Input ? "input " : "";
  return kind + g.type(n).str();
}

Goal goal_of(const h::Instance& inst) {
  Goal goal;
  goal.g = inst.w.g;
  for (size_t i = 0; i < inst.lhs.size(); ++i) goal.pairs.emplace_back(inst.lhs[i], inst.rhs[i]);
  for (const auto& [v, n] : inst.bind) goal.binding["?" + v] = describe(inst.w.g, n);
  return goal;
}

}  // namespace

std::string Goal::str() const {
  std::string s;
  for (const auto& [a, b] : pairs) s += print_term(g, a) + "  =?=  " + print_term(g, b) + "\n";
  return s;
}

std::optional<Goal> instantiate(const std::vector<SExpr>& lhs, const std::vector<SExpr>& rhs,
                                const std::vector<SExpr>& conditions,
                                const std::map<std::string, VarShape>& shapes, uint64_t seed,
                                std::string* why) {
  if (lhs.size() != rhs.size() || lhs.empty()) {
    if (why) *why = "need the same number (>= 1) of left and right terms";
    return std::nullopt;
  }
  RuleSpec spec;
  spec.name = "goal";
  spec.lhs = lhs;
  spec.rhs = rhs;
  spec.conditions = conditions;
  std::set<std::string> vars;
  for (const auto& e : lhs) collect_vars(e, vars);
  for (const auto& e : rhs) collect_vars(e, vars);
  for (const auto& [name, _] : shapes) {
    std::string v = name.rfind('?', 0) == 0 ? name.substr(1) : name;
    if (!vars.count(v)) {
      if (why) *why = "--shape names ?" + v + ", which the terms do not use";
      return std::nullopt;
    }
  }
  auto given = [&](const std::string& v) -> const VarShape* {
    auto it = shapes.find("?" + v);
    if (it == shapes.end()) it = shapes.find(v);
    return it == shapes.end() ? nullptr : &it->second;
  };
  bool all_given = true;
  for (const auto& v : vars) all_given = all_given && given(v) != nullptr;

  if (all_given) {
    h::Instance inst;
    for (const auto& v : vars) {
      const VarShape* s = given(v);
      TensorType t{DType::F32, s->shape};
      inst.bind[v] = s->weight ? inst.w.g.weight(v, t) : inst.w.g.input(v, t);
    }
    auto build = [&](const std::vector<SExpr>& side, std::vector<ir::NodeId>& out) {
      for (const auto& e : side) {
        std::string w;
        auto id = h::substitute(inst.w.g, e, inst.bind, &w);
        if (!id) {
          if (why) *why = "ill-typed with the given shapes: " + w;
          return false;
        }
        out.push_back(*id);
      }
      return true;
    };
    if (!build(lhs, inst.lhs) || !build(rhs, inst.rhs)) return std::nullopt;
    std::string w;
    if (!h::conditions_hold(inst.w.g, spec, inst.bind, &w)) {
      if (why) *why = w;
      return std::nullopt;
    }
    return goal_of(inst);
  }

  // Search: the harness draws random compatible shapes for every side that is an operator
  // term (the left and right terms all act as left-hand sides, so a variable of either is
  // bound); a side that is a bare variable takes its binding. Instances whose sides pair up
  // with equal types, and with the shapes given, are preferred.
  std::vector<SExpr> sides = lhs;
  sides.insert(sides.end(), rhs.begin(), rhs.end());
  RuleSpec search;
  search.name = "goal";
  search.conditions = conditions;
  for (const auto& e : sides)
    if (!is_var(e)) search.lhs.push_back(e);
  if (search.lhs.empty()) {
    if (why) *why = "every term is a bare variable";
    return std::nullopt;
  }
  search.rhs = search.lhs;
  std::mt19937_64 rng(seed);
  std::map<std::string, int> outcomes;
  std::string example;
  std::optional<Goal> fallback;  // well-typed sides whose types differ
  for (int attempt = 0; attempt < 20000; ++attempt) {
    h::Instance inst;
    h::Outcome o = h::draw(search, rng, &inst);
    if (o != h::Outcome::Ok) {
      ++outcomes[h::outcome_name(o)];
      if (example.empty()) example = inst.why;
      continue;
    }
    bool ok = true;
    for (const auto& [v, n] : inst.bind) {
      const VarShape* s = given(v);
      if (s && !(inst.w.g.type(n).is_tensor() && inst.w.g.type(n).shape() == s->shape)) ok = false;
    }
    if (!ok) {
      ++outcomes["shape-not-as-given"];
      continue;
    }
    std::vector<ir::NodeId> nodes;
    size_t k = 0;
    for (const auto& e : sides) {
      if (!is_var(e)) {
        nodes.push_back(inst.lhs[k++]);
        continue;
      }
      auto it = inst.bind.find(e.atom.substr(1));
      if (it == inst.bind.end()) {
        if (why) *why = "variable " + e.atom + " occurs only as a bare side";
        return std::nullopt;
      }
      nodes.push_back(it->second);
    }
    h::Instance paired = inst;
    paired.lhs.assign(nodes.begin(), nodes.begin() + static_cast<long>(lhs.size()));
    paired.rhs.assign(nodes.begin() + static_cast<long>(lhs.size()), nodes.end());
    bool same_types = true;
    for (size_t i = 0; i < lhs.size(); ++i)
      same_types = same_types && inst.w.g.type(paired.lhs[i]) == inst.w.g.type(paired.rhs[i]);
    if (same_types) return goal_of(paired);
    if (!fallback) fallback = goal_of(paired);
    ++outcomes["types-differ"];
  }
  if (fallback) return fallback;
  if (why) {
    std::string s = "no well-typed instance found by search (";
    for (const auto& [o, n] : outcomes) s += o + "=" + std::to_string(n) + " ";
    *why = s + ")" + (example.empty() ? "" : ", e.g. " + example);
  }
  return std::nullopt;
}

std::vector<Goal> rule_instances(const RuleSpec& r, int count, uint64_t seed, std::string* why) {
  std::mt19937_64 rng(seed);
  std::vector<Goal> out;
  std::string example;
  for (int attempt = 0; attempt < 4000 && static_cast<int>(out.size()) < count; ++attempt) {
    h::Instance inst;
    if (h::draw(r, rng, &inst) != h::Outcome::Ok) {
      if (example.empty()) example = inst.why;
      continue;
    }
    out.push_back(goal_of(inst));
  }
  if (out.empty() && why) *why = "no well-typed instance found (e.g. " + example + ")";
  return out;
}

size_t CompletenessReport::proved() const {
  size_t n = 0;
  for (const auto& e : entries) n += e.proved();
  return n;
}

std::string CompletenessReport::str() const {
  std::ostringstream os;
  os << file << ": the rule set proves " << proved() << " of " << total() << " TASO substitutions\n";
  for (const auto& e : entries) {
    if (e.proved()) continue;
    os << "  " << e.name << ": " << e.reason << "\n";
    if (!e.goal.empty()) {
      std::istringstream lines(e.goal);
      for (std::string l; std::getline(lines, l);) os << "      " << l << "\n";
    }
  }
  return os.str();
}

std::string CompletenessReport::json() const {
  nlohmann::json j;
  j["file"] = file;
  j["total"] = total();
  j["proved"] = proved();
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries) {
    nlohmann::json x;
    x["rule"] = e.index;
    x["imported"] = e.imported;
    x["instances"] = e.instances;
    x["proved_instances"] = e.proved_instances;
    x["proved"] = e.proved();
    x["iterations"] = e.last.iterations;
    x["nodes"] = e.last.nodes;
    x["seconds"] = e.last.seconds;
    if (!e.proved()) x["reason"] = e.reason;
    list.push_back(x);
  }
  j["rules"] = list;
  return j.dump();
}

CompletenessReport check_taso_completeness(const std::string& pb_path, const std::vector<Rewrite>& rules,
                                           const ProveLimits& limits, int instances, uint64_t seed,
                                           const std::vector<int>& only) {
  CompletenessReport rep;
  rep.file = pb_path;
  std::vector<TasoRule> coll = read_taso_collection(pb_path);
  for (size_t i = 0; i < coll.size(); ++i) {
    const int idx = static_cast<int>(i);
    if (!only.empty() && std::find(only.begin(), only.end(), idx) == only.end()) continue;
    CompletenessEntry e;
    e.index = idx;
    e.name = "taso-" + std::to_string(idx);
    RuleSpec spec;
    std::string why;
    e.imported = convert_taso_rule(coll[i], idx, pb_path, &spec, &why);
    if (!e.imported) {
      e.reason = "not expressible: " + why;
      rep.entries.push_back(std::move(e));
      continue;
    }
    std::vector<Goal> goals = rule_instances(spec, instances, seed + i, &why);
    e.instances = static_cast<int>(goals.size());
    if (goals.empty()) e.reason = why;
    bool failed = false;
    for (const Goal& goal : goals) {
      ProveResult r = prove(goal.g, goal.pairs, rules, limits);
      if (r.proved) {
        ++e.proved_instances;
        if (!failed) e.last = r;
      } else if (!failed) {
        failed = true;
        e.last = r;
        e.goal = goal.str();
        std::string pairs;
        for (size_t k = 0; k < r.pair_proved.size(); ++k)
          if (!r.pair_proved[k]) pairs += (pairs.empty() ? "" : ", ") + std::to_string(k + 1);
        e.reason = "not proved (stop: " + r.stop + ", " + std::to_string(r.iterations) + " iterations, " +
                   std::to_string(r.nodes) + " e-nodes; unproved output pair(s) " + pairs + ")" +
                   (r.detail.empty() ? "" : ": " + r.detail);
      }
    }
    if (!failed && e.instances > 0 && e.proved_instances < e.instances) e.reason = "proved on some instances only";
    rep.entries.push_back(std::move(e));
  }
  return rep;
}

}  // namespace tensat::taso
