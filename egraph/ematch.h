// E-matching: all substitutions under which a pattern matches an e-class.
//
// A search starts only at classes holding the pattern's root operator (EGraph's operator
// index) and backtracks over the e-nodes of each class. Literal parameters are resolved once
// per search to the class of their Num/Sym leaf (hash-consed, so there is at most one).
// Matches are stored flat (root class + one class per variable) to avoid an allocation per
// match. The e-graph must be clean (rebuilt); a dirty one is refused with std::logic_error.
#pragma once

#include <cstddef>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/pattern.h"

namespace tensat {

/// Substitutions found by a search, flat: match i has root(i) and subst(i)[var].
class Matches {
 public:
  explicit Matches(size_t nvars = 0) : nvars_(nvars) {}
  void reset(size_t nvars) {
    nvars_ = nvars;
    roots_.clear();
    substs_.clear();
  }
  size_t size() const { return roots_.size(); }
  bool empty() const { return roots_.empty(); }
  size_t nvars() const { return nvars_; }
  EClassId root(size_t i) const { return roots_[i]; }
  const EClassId* subst(size_t i) const { return substs_.data() + i * nvars_; }
  void push(EClassId root, const EClassId* subst) {
    roots_.push_back(root);
    substs_.insert(substs_.end(), subst, subst + nvars_);
  }
  void truncate(size_t n) {
    roots_.resize(n);
    substs_.resize(n * nvars_);
  }

 private:
  size_t nvars_;
  std::vector<EClassId> roots_;
  std::vector<EClassId> substs_;
};

struct SearchOptions {
  bool skip_filtered = true;  ///< do not match through cycle-filtered e-nodes
  size_t limit = SIZE_MAX;    ///< stop after this many matches (the scheduler's cut-off)
};

/// Appends every match of `p` (variables indexed by a table of `nvars`) to `out`.
/// Returns the number of matches appended.
size_t search_pattern(const EGraph& eg, const Pattern& p, size_t nvars, Matches& out,
                      const SearchOptions& opt = {});

/// Matches of `p` rooted at the given classes only (canonical ids, each once).
size_t search_pattern_in(const EGraph& eg, const Pattern& p, size_t nvars,
                         const std::vector<EClassId>& roots, Matches& out, const SearchOptions& opt = {});

/// Matches of `p` rooted at one class only.
size_t search_pattern_at(const EGraph& eg, const Pattern& p, size_t nvars, EClassId cls,
                         Matches& out, const SearchOptions& opt = {});

}  // namespace tensat
