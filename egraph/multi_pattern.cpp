// Multi-pattern search and match combination (see multi_pattern.h).
#include "egraph/multi_pattern.h"

#include <algorithm>
#include <cassert>

namespace tensat {

Pattern canonicalize_pattern(const Pattern& p, std::vector<int>* var_map) {
  std::vector<int> order = p.vars_in_order();
  Pattern out = p;
  for (auto& n : out.nodes) {
    if (n.kind != PatNode::Kind::Var) continue;
    n.var = static_cast<int>(std::find(order.begin(), order.end(), n.var) - order.begin());
  }
  if (var_map) *var_map = order;
  return out;
}

namespace {
std::string canonical_key(const Pattern& p, size_t nvars) {
  VarTable t;
  for (size_t i = 0; i < nvars; ++i) t.names.push_back(std::to_string(i));
  return p.str(t);
}
}  // namespace

MultiPatternSearcher::MultiPatternSearcher(const std::vector<const Rewrite*>& rules) {
  std::unordered_map<std::string, size_t> seen;
  for (const Rewrite* rw : rules) {
    if (!rw->is_multi()) continue;
    Rule r{rw, {}};
    std::vector<bool> bound(rw->nvars(), false);
    for (const auto& lhs : rw->lhs) {
      Side s;
      Pattern canon = canonicalize_pattern(lhs, &s.var_map);
      std::string key = canonical_key(canon, s.var_map.size());
      auto [it, inserted] = seen.emplace(key, patterns_.size());
      if (inserted) {
        patterns_.push_back(std::move(canon));
        pattern_nvars_.push_back(s.var_map.size());
      }
      s.pattern = it->second;
      for (size_t j = 0; j < s.var_map.size(); ++j) {
        if (!bound[static_cast<size_t>(s.var_map[j])]) continue;
        assert(j < 64 && "the join handles 64 variables per pattern");
        s.shared.push_back(static_cast<int>(j));
        s.shared_mask |= uint64_t{1} << j;
      }
      for (int v : s.var_map) bound[static_cast<size_t>(v)] = true;
      r.sides.push_back(std::move(s));
    }
    rules_.push_back(std::move(r));
  }
  matches_.resize(patterns_.size());
  indexes_.resize(patterns_.size());
  for (size_t i = 0; i < patterns_.size(); ++i) compiled_.emplace_back(patterns_[i], pattern_nvars_[i]);
}

void MultiPatternSearcher::search(const EGraph& eg, const SearchOptions& opt) {
  for (size_t i = 0; i < patterns_.size(); ++i) {
    matches_[i].reset(pattern_nvars_[i]);
    search_compiled(eg, compiled_[i], matches_[i], opt);
    indexes_[i].clear();
  }
}

// Hash of the classes of canonical vars `vars`: classes[j] for a match's substitution, or
// classes[map[j]] for the rule substitution being built.
uint64_t MultiPatternSearcher::key_hash(const EClassId* classes, const std::vector<int>& vars, const int* map) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int j : vars) {
    const uint32_t c = classes[map ? map[j] : j].v;
    h = (h ^ c) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  return h;
}

void MultiPatternSearcher::visit(size_t r, size_t level, const Visit& f, size_t limit, size_t& count) {
  const Rule& rule = rules_[r];
  if (level == rule.sides.size()) {
    ++count;
    f(roots_.data(), subst_.data());
    return;
  }
  const Side& side = rule.sides[level];
  const Matches& ms = matches_[side.pattern];
  auto try_match = [&](size_t mi) {
    EClassId root = ms.root(mi);
    for (size_t l = 0; l < level; ++l)
      if (roots_[l] == root) return;  // two patterns on the same e-class
    const EClassId* s = ms.subst(mi);
    // Bind, checking agreement; remember which variables this level bound.
    uint64_t newly = 0;
    bool ok = true;
    for (size_t j = 0; j < side.var_map.size(); ++j) {
      EClassId& slot = subst_[static_cast<size_t>(side.var_map[j])];
      if (!slot.valid()) {
        slot = s[j];
        newly |= uint64_t{1} << j;
      } else if (slot != s[j]) {
        ok = false;
        break;
      }
    }
    if (ok) {
      roots_[level] = root;
      visit(r, level + 1, f, limit, count);
    }
    for (size_t j = 0; j < side.var_map.size(); ++j)
      if (newly & (uint64_t{1} << j)) subst_[static_cast<size_t>(side.var_map[j])] = EClassId();
  };
  if (side.shared.empty()) {
    for (size_t mi = 0; mi < ms.size() && count < limit; ++mi) try_match(mi);
    return;
  }
  auto& idx_map = indexes_[side.pattern];
  auto it = idx_map.find(side.shared_mask);
  if (it == idx_map.end()) {
    Index idx;
    idx.by_key.reserve(ms.size());
    for (size_t mi = 0; mi < ms.size(); ++mi)
      idx.by_key.push_back({key_hash(ms.subst(mi), side.shared, nullptr), static_cast<uint32_t>(mi)});
    std::sort(idx.by_key.begin(), idx.by_key.end());
    it = idx_map.emplace(side.shared_mask, std::move(idx)).first;
  }
  const uint64_t key = key_hash(subst_.data(), side.shared, side.var_map.data());
  const auto& by_key = it->second.by_key;
  for (auto p = std::lower_bound(by_key.begin(), by_key.end(), std::pair<uint64_t, uint32_t>{key, 0});
       p != by_key.end() && p->first == key; ++p) {
    if (count >= limit) break;
    try_match(p->second);
  }
}

size_t MultiPatternSearcher::for_each_combination(size_t r, const Visit& f, size_t limit) {
  const Rule& rule = rules_[r];
  subst_.assign(rule.rw->nvars(), EClassId());
  roots_.assign(rule.sides.size(), EClassId());
  size_t count = 0;
  visit(r, 0, f, limit, count);
  return count;
}

}  // namespace tensat
