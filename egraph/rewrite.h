// Rewrites: RuleSpecs compiled into patterns, and the applier that instantiates right-hand
// sides with shape checks.
//
// Applying a match (TASO-style shape check): the right-hand side is planned bottom-up first,
// computing every new node's analysis data (type via infer_type, split trees) without touching
// the e-graph; if any node is ill-typed, a split has no boundary, or the result type differs
// from the matched class's type, nothing is added and the application is rejected. Then the
// optional cycle guard (cycle_filter.h) is asked whether the union would make a class its own
// ancestor. Only then are the new nodes added and the classes merged.
//
// A multi-pattern rule (TENSAT Algorithm 1) has lhs[i] => rhs[i] for i = 0..n-1 over one
// substitution; it applies only if every side passes, then merges lhs_i's class with rhs_i's.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/pattern.h"
#include "lang/rule_spec.h"

namespace tensat {

struct Rewrite {
  std::string name;
  std::string file;
  int line = 0;
  VarTable vars;
  std::vector<Pattern> lhs, rhs;  ///< same length; lhs[i] => rhs[i]
  std::vector<Condition> conditions;

  bool is_multi() const { return lhs.size() > 1; }
  /// A right-hand side has `(split AXIS x)`: planning it reads x's split tree (analysis data
  /// that can grow), not only types.
  bool rhs_reads_split_tree() const;
  size_t nvars() const { return vars.size(); }
  std::string str() const;
};

/// Validates and compiles a rule (unknown operators, arity, literals in tensor positions,
/// unbound right-hand variables, malformed conditions). Throws RuleError naming the spec's
/// file, line and rule.
Rewrite compile_rewrite(const RuleSpec& spec);
std::vector<Rewrite> compile_rewrites(const std::vector<RuleSpec>& specs);

enum class ApplyOutcome : uint8_t {
  Applied,          ///< something was merged
  Unchanged,        ///< the right-hand side was already in the matched class
  FailedCondition,  ///< a condition did not hold
  IllTyped,         ///< a new node did not type-check or the type differs from the match
  NoSplitBoundary,  ///< (split AXIS x) on the right and x has no boundary on AXIS
  WouldCycle,       ///< the cycle guard refused it
};
std::string_view outcome_name(ApplyOutcome o);

/// Asked before a right-hand side is merged into `matched`. `pointed` are the existing
/// classes the new e-nodes would point at; `existing_root` is set when the whole right-hand
/// side already exists as a class (a plain union of two classes).
class CycleGuard {
 public:
  virtual ~CycleGuard() = default;
  virtual bool would_cycle(const EGraph& eg, EClassId matched, const std::vector<EClassId>& pointed,
                           std::optional<EClassId> existing_root) = 0;
};

/// Instantiates right-hand sides; keeps scratch buffers between calls.
class Applier {
 public:
  /// Applies `rw` for one match. `roots[i]` is the class lhs[i] matched; `subst` is indexed by
  /// the rule's variables. The e-graph need not be clean (applications are batched).
  /// `typed_before`: the same rule over the same canonical classes got past the type checks
  /// before (the cycle guard refused it); it may then be refused again without computing the
  /// new nodes' analysis data. Same outcome either way.
  ApplyOutcome apply(EGraph& eg, const Rewrite& rw, const EClassId* roots, const EClassId* subst,
                     CycleGuard* guard = nullptr, bool typed_before = false);

 private:
  struct Slot {
    EClassId cls;                ///< valid: an existing class
    Op op = Op::Num;
    int64_t num = 0;
    std::string_view sym;        ///< new Sym leaf
    int16_t kids[8] = {};        ///< slot indices of children (new nodes; arity <= 7 in rules)
    int16_t nkids = 0;
    const ClassData* data = nullptr;  ///< the class's data, or a new node's in Plan::own
    int own = -1;                     ///< index into Plan::own for a new node
  };
  struct Plan {
    std::vector<Slot> slots;
    std::vector<ClassData> own;  ///< data of new nodes (reserved: Slot::data points here)
    size_t nown = 0;             ///< entries of `own` in use (kept allocated between plans)
    int root = -1;
  };
  /// Plans one right-hand side. Without data, only which nodes exist (new nodes get no
  /// analysis data, nothing is type-checked; not for `(split AXIS x)`).
  ApplyOutcome plan(const EGraph& eg, const Pattern& p, const EClassId* subst, Plan& out, bool with_data);
  /// The cycle guard's verdict on the planned sides.
  bool cycles(const EGraph& eg, size_t n, const EClassId* roots, CycleGuard& guard);
  /// The data of a new node equal to `s` (children's data `kid_data`) that a side planned
  /// before `cur` holds, or null.
  const ClassData* planned_earlier(const Plan& cur, const Slot& s,
                                   const std::vector<const ClassData*>& kid_data) const;
  /// Adds the plan's new nodes. `fresh`: nothing was merged since the plan was made, so its
  /// analysis data is current and is handed to the e-graph instead of being recomputed.
  EClassId commit(EGraph& eg, Plan& plan, bool fresh);
  /// The class of a Num/Sym literal of a pattern (cached per pattern node and e-graph).
  std::optional<EClassId> literal_class(const EGraph& eg, const PatNode& pn);

  std::vector<Plan> plans_;
  std::vector<int> map_;
  std::vector<EClassId> pointed_;
  std::vector<const ClassData*> kid_data_;
  ENode probe_;
  const EGraph* literal_eg_ = nullptr;
  /// literal_class's cache, direct-mapped by pattern node address (a rule set has a few
  /// dozen literal nodes; a hash map look-up cost more than the rest of a small plan).
  struct LiteralSlot {
    const PatNode* pn = nullptr;
    EClassId cls;
  };
  static constexpr size_t kLiteralSlots = 256;
  std::vector<LiteralSlot> literals_;
};

}  // namespace tensat
