// ir::Graph: a term of the tensor language as a flat, hash-consed DAG.
//
// Nodes are stored in topological order (children before parents); a node id is its index.
// Adding a node infers its type (types.h) and rejects ill-typed nodes with a message, so a
// Graph is always well-typed. Identical nodes are shared (hash-consing), which is sound
// because every operator is a pure function of its children.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "lang/op.h"
#include "lang/types.h"

namespace tensat::ir {

using NodeId = uint32_t;

struct Node {
  Op op = Op::Num;
  std::vector<NodeId> children;
  int64_t num = 0;   ///< Op::Num only
  std::string sym;   ///< Op::Sym only
  bool operator==(const Node&) const = default;
};

struct NodeHash {
  size_t operator()(const Node& n) const;
};

/// Thrown when a node does not type-check; the message names the operator and the reason.
class TypeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Graph {
 public:
  /// Adds (or finds) a node; throws TypeError if it does not type-check.
  NodeId add(Node n);
  /// Like add, but returns false (and leaves the graph unchanged) on a type error.
  bool try_add(Node n, NodeId* out, std::string* error = nullptr);

  // Builders for the common cases.
  NodeId num(int64_t v);
  NodeId sym(std::string s);
  NodeId op(Op o, std::vector<NodeId> children);
  NodeId input(std::string_view name, const TensorType& t);
  NodeId weight(std::string_view name, const TensorType& t);

  const Node& node(NodeId id) const { return nodes_.at(id); }
  const ValueType& type(NodeId id) const { return types_.at(id); }
  size_t size() const { return nodes_.size(); }
  const std::vector<Node>& nodes() const { return nodes_; }

  /// The root (a noop joining the outputs, or the single output node).
  NodeId root() const { return root_; }
  void set_root(NodeId r);
  bool has_root() const { return has_root_; }

  /// The graph outputs in order: the children of a noop root, else the root itself.
  std::vector<NodeId> outputs() const;

  /// Copies the nodes reachable from `root` into a new graph, in topological order. With
  /// `old_to_new`: each node's id there, -1 for one not copied.
  Graph compact(std::vector<int64_t>* old_to_new = nullptr) const;

  /// Parameter access helpers (the child must be a Num / Sym node).
  int64_t param_int(NodeId n, size_t child) const;
  const std::string& param_sym(NodeId n, size_t child) const;

 private:
  std::vector<Node> nodes_;
  std::vector<ValueType> types_;
  std::unordered_map<Node, NodeId, NodeHash> index_;
  NodeId root_ = 0;
  bool has_root_ = false;
};

/// weight_only[n] for every node (is_weight_only, op.h): every leaf below n is a weight, zeros
/// or parameter (no input, no opaque).
std::vector<bool> weight_only_nodes(const Graph& g);

/// Per node: whether it is a (transpose 1_0 W) of a 2-D float32 weight leaf W, no graph output,
/// that every node reading it reads as the B operand of a matmul (whose A is a matrix, with
/// `matrix_a`). That is how the importer reads Gemm(A, W, C, transB = 1), PyTorch's nn.Linear
/// on a matrix. The exporter writes such a matmul as that Gemm over W itself and fold_weights
/// leaves the transpose (with `matrix_a`: no transposed copy of W, 411 MB on VGG-11-BN, and the
/// input's weights as they were); the CPU reference reads W in place as a transposed B.
std::vector<bool> transposed_weights_read_as_b(const Graph& g, bool matrix_a);

/// Count of nodes by operator, ignoring parameter leaves.
std::unordered_map<std::string, int> op_counts(const Graph& g);

}  // namespace tensat::ir
