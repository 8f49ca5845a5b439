// E-matching: all substitutions under which a pattern matches an e-class.
//
// A search starts only at classes holding the pattern's root operator (EGraph's operator
// index) and backtracks over the e-nodes of each class, reading the classes' packed e-node
// runs (EGraph::class_nodes). Patterns are compiled first (CompiledPattern: which child of
// each candidate e-node to compare with what, decided once). Literal parameters are resolved
// once per search to the class of their Num/Sym leaf (hash-consed, so there is at most one).
// Matches are stored flat (root class + one class per variable) to avoid an allocation per
// match, in a fixed order: root classes as given (ascending for a full search), each class's
// e-nodes in order, children left to right. The e-graph must be clean (rebuilt); a dirty one
// is refused with std::logic_error.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
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

/// A pattern compiled for the matcher: per operator node, the tests of its children made in
/// place on each candidate e-node and the sub-patterns to descend into (ematch.cpp). The
/// search functions taking a Pattern compile it on every call; the runner compiles each
/// rule's patterns once and searches them every iteration.
class CompiledPattern {
 public:
  CompiledPattern(const Pattern& p, size_t nvars);
  size_t nvars() const { return nvars_; }

  // The program (see ematch.cpp); public for the matcher only.
  struct Check {
    uint32_t pos;  ///< e-node child position
    uint32_t arg;  ///< literal: index into lits; equal/bind: variable; same: position; look: operator
  };
  struct Node {
    PatNode::Kind kind;
    Op op;
    bool check_arity;  ///< variadic operator: e-nodes of other arities exist
    uint32_t arity;    ///< e-node children ((split AXIS x) matches 3)
    int var;           ///< Kind::Var
    int lit;           ///< Kind::Num/Sym: index into lits
    /// Consecutive ranges of checks (literals, equals, sames, looks, binds) and of subs.
    uint32_t lit_b, eq_b, same_b, look_b, bind_b, bind_e, sub_b, sub_e;
  };
  struct Literal {
    PatNode::Kind kind;
    int64_t num;
    std::string sym;
  };
  std::vector<Node> nodes;  ///< indexed like the pattern's nodes
  std::vector<Check> checks;
  std::vector<std::pair<int, uint32_t>> subs;  ///< (pattern node, child position), reversed per node
  std::vector<Literal> lits;
  int root = -1;  ///< pattern node index of the root

 private:
  size_t nvars_ = 0;
};

/// Appends every match of `p` (variables indexed by a table of `nvars`) to `out`.
/// Returns the number of matches appended.
size_t search_pattern(const EGraph& eg, const Pattern& p, size_t nvars, Matches& out,
                      const SearchOptions& opt = {});

/// Matches of `p` rooted at the given classes only (canonical ids, each once).
size_t search_pattern_in(const EGraph& eg, const Pattern& p, size_t nvars,
                         const std::vector<EClassId>& roots, Matches& out, const SearchOptions& opt = {});

/// search_pattern / search_pattern_in of a compiled pattern.
size_t search_compiled(const EGraph& eg, const CompiledPattern& p, Matches& out, const SearchOptions& opt = {});
size_t search_compiled_in(const EGraph& eg, const CompiledPattern& p, const std::vector<EClassId>& roots,
                          Matches& out, const SearchOptions& opt = {});

/// Matches of `p` rooted at one class only.
size_t search_pattern_at(const EGraph& eg, const Pattern& p, size_t nvars, EClassId cls,
                         Matches& out, const SearchOptions& opt = {});

}  // namespace tensat
