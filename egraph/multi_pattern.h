// Multi-pattern rules (TENSAT Algorithm 1): search each distinct source pattern once per
// iteration, then combine matches.
//
// The left-hand patterns of all multi-pattern rules are canonicalized (variables renamed in
// order of first occurrence), so `(matmul ?act ?x ?w1 none)` and `(matmul ?a ?y ?w none)` are
// one search. For a rule with patterns p_1..p_n, the combinations are the Cartesian product of
// their match lists, kept where shared variables agree and no two patterns matched the same
// e-class. The product is computed as a join: pattern i's matches are indexed by all the
// variables it shares with p_1..p_{i-1}, so only fully agreeing combinations are enumerated
// (indexing by one shared variable, e.g. the activation `?act` that nearly all matmuls share,
// made the join close to the whole product).
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "egraph/ematch.h"
#include "egraph/rewrite.h"

namespace tensat {

class MultiPatternSearcher {
 public:
  /// `rules` must outlive the searcher; single-pattern rules in it are ignored.
  explicit MultiPatternSearcher(const std::vector<const Rewrite*>& rules);

  /// Searches every distinct canonical pattern once (the e-graph must be clean).
  void search(const EGraph& eg, const SearchOptions& opt = {});

  /// Number of distinct canonical source patterns.
  size_t num_patterns() const { return patterns_.size(); }
  /// Matches of canonical pattern i from the last search.
  const Matches& matches(size_t i) const { return matches_[i]; }

  /// Calls f(roots, subst) for each valid combination of rule r's patterns (r indexes the
  /// rules given to the constructor, multi-pattern ones only). roots has one class per lhs,
  /// subst one per rule variable. Stops after `limit` combinations; returns the count.
  using Visit = std::function<void(const EClassId* roots, const EClassId* subst)>;
  size_t for_each_combination(size_t r, const Visit& f, size_t limit = SIZE_MAX);

  size_t num_rules() const { return rules_.size(); }
  const Rewrite& rule(size_t r) const { return *rules_[r].rw; }

 private:
  struct Side {
    size_t pattern;            ///< canonical pattern index
    std::vector<int> var_map;  ///< canonical var j -> rule var
    /// Canonical vars also bound by earlier sides: the join key (empty: a full product).
    std::vector<int> shared;
    uint64_t shared_mask = 0;  ///< the same as a bit set (identifies the index)
  };
  struct Rule {
    const Rewrite* rw;
    std::vector<Side> sides;
  };
  // A pattern's matches by the classes of some of its variables: (hash of those classes,
  // match index), sorted, so that the matches agreeing with a partial combination on all the
  // shared variables are one run, in match order. (A hash collision only adds candidates
  // that the exact check then rejects.)
  struct Index {
    std::vector<std::pair<uint64_t, uint32_t>> by_key;
  };
  static uint64_t key_hash(const EClassId* classes, const std::vector<int>& vars, const int* map);
  void visit(size_t r, size_t level, const Visit& f, size_t limit, size_t& count);

  std::vector<Pattern> patterns_;
  std::vector<size_t> pattern_nvars_;
  std::vector<CompiledPattern> compiled_;  ///< patterns_, compiled once
  std::vector<Matches> matches_;
  std::vector<Rule> rules_;
  // scratch for the join
  std::vector<EClassId> subst_, roots_;
  std::vector<std::unordered_map<uint64_t, Index>> indexes_;  ///< per pattern: shared_mask -> index
};

/// Canonical form of a pattern: variables renumbered 0.. in order of first occurrence.
/// Returns the pattern; `var_map[j]` is the original variable of canonical variable j.
Pattern canonicalize_pattern(const Pattern& p, std::vector<int>* var_map);

}  // namespace tensat
