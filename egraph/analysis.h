// E-class analysis: the facts every e-class carries (see egraph/README.md).
//
//   type         ValueType from infer_type over the children's class types (the same shape
//                inference as ir::Graph); all e-nodes of a class have the same type.
//   weight_only  the value is computable at export time: weights, zeros and parameters, and
//                operators over such values (input and opaque are never weight-only). A class
//                is weight-only if any of its e-nodes is (they all compute the same value).
//   split        per axis, a binary tree of concat boundaries (the sizes of the parts), used
//                by a right-hand side (split AXIS x) to find POS. Sources: (concat AXIS a b);
//                passed through relu/tanh/sigmoid and transpose; conv output axis 1 takes the
//                weight's axis-0 tree and axis 0 the input's axis-0 tree; poolmax/poolavg
//                keep the input's trees on axes 0 and 1; matmul's last axis takes b's
//                last-axis tree and its row axis a's row-axis tree; split_0 /
//                split_1 of (split AXIS POS x) take the left / right subtree of x's tree when
//                POS is its boundary. Merge: an axis without a tree adopts the other side's;
//                on a conflict the existing tree is kept (soundness never depends on it).
//
// make_data computes a node's data from its children's data; merge_data joins two classes'
// data and reports which side changed (egg's DidMerge), so the e-graph can re-run make on
// the parents of a class whose data grew.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/op.h"
#include "lang/types.h"

namespace tensat {

/// A node of a split tree: `size` elements along the axis; an inner node is a concat
/// boundary between `left` (first left->size elements) and `right`.
struct SplitNode {
  int64_t size = 0;
  std::shared_ptr<const SplitNode> left, right;  ///< both null for a leaf
  bool is_leaf() const { return !left; }
};
using SplitTree = std::shared_ptr<const SplitNode>;

/// Structural equality of two trees (null equals null).
bool split_tree_equal(const SplitTree& a, const SplitTree& b);
/// "(64 (32) (32))" style text, for tests and logs.
std::string split_tree_str(const SplitTree& t);

struct ClassData {
  ValueType type;
  bool weight_only = false;
  /// split[axis]: a tree whose root is a boundary (never a leaf), or null. Sized to the rank
  /// (may be shorter when the trailing axes have no tree).
  std::vector<SplitTree> split;
  /// For a split class (tuple of two parts): the axis it was split along, else -1.
  int split_axis = -1;

  SplitTree tree(int64_t axis) const {
    return axis >= 0 && static_cast<size_t>(axis) < split.size() ? split[static_cast<size_t>(axis)]
                                                                  : nullptr;
  }
  /// The boundary of the tree on `axis` (its left part's size), if any.
  std::optional<int64_t> boundary(int64_t axis) const;
};

/// Data of a node with operator `op` (num/sym: the Num value / Sym text of a leaf) over its
/// children's data. Returns nullopt with `error` set when the node does not type-check.
std::optional<ClassData> make_data(Op op, int64_t num, std::string_view sym,
                                   const std::vector<const ClassData*>& children,
                                   std::string* error = nullptr);

/// make_data into an existing ClassData (reusing its storage); false (d unspecified) when the
/// node does not type-check.
bool make_data_into(ClassData& d, Op op, int64_t num, std::string_view sym,
                    const std::vector<const ClassData*>& children, std::string* error = nullptr);

/// Joins `b` into `a`. Returns {a changed, b differs from the result}. Types must be equal
/// (the caller checks); split-tree conflicts keep a's tree.
std::pair<bool, bool> merge_data(ClassData& a, const ClassData& b);

}  // namespace tensat
