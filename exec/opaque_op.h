// OpaqueOp: what an executor needs to know about an ONNX node that the tensor language keeps
// opaque, as plain data (no ONNX protobufs: the GPU executor must not see them).
//
// The pipeline builds one OpaqueOp per opaque node from its ModelContext (pipeline/opaque_ops.h),
// indexed like ModelContext::opaque, i.e. by the k of the node's identifier "(opaque k|...)",
// and passes the list in RunOptions::opaque. Input and output types are not repeated here: the
// executors read them from the graph (the opaque node's children and identifier).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lang/weights.h"

namespace tensat::exec {

/// One ONNX attribute value. Graph attributes (If/Loop bodies) are not carried: `other` is set
/// and no executor runs such a node.
struct OpaqueAttr {
  enum class Kind : uint8_t { Int, Float, String, Ints, Floats, Strings, Tensor, Other };
  Kind kind = Kind::Other;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::optional<WeightData> t;  ///< Kind::Tensor (data of a modelled element type)
};

struct OpaqueOp {
  std::string name;     ///< the ONNX node's name (or its first output's), for messages
  std::string op_type;  ///< "Softmax", ...
  std::string domain;   ///< "" for the default domain (ai.onnx)
  int64_t opset = 0;    ///< the model's opset version of `domain`
  std::map<std::string, OpaqueAttr> attrs;
  /// For each child of the opaque node (after its identifier), the position of that input in
  /// the ONNX node's input list: missing optional inputs are not children, so child k is
  /// ONNX input slots[k]. Implicit inputs of subgraphs have slot -1.
  std::vector<int> slots;

  bool has(const std::string& a) const { return attrs.count(a) != 0; }
  int64_t attr_i(const std::string& a, int64_t def) const;
  float attr_f(const std::string& a, float def) const;
  std::string attr_s(const std::string& a, const std::string& def) const;
  /// The ints of an INTS attribute; nullopt if absent.
  std::optional<std::vector<int64_t>> attr_ints(const std::string& a) const;
  /// The child index holding ONNX input `slot`, or -1 if that input was not given.
  int child_of_slot(int slot) const;
  /// "Softmax 'node_name'" for messages.
  std::string describe() const;
};

/// By opaque index (ModelContext::opaque order).
using OpaqueOps = std::vector<OpaqueOp>;

}  // namespace tensat::exec
