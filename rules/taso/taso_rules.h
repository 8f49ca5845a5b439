// Reader for TASO's rule collections (graph_subst.pb, rules/taso/graph_subst.proto): each TASO
// substitution becomes one RuleSpec of our language, or is reported by number with the reason.
//
//   tensat::taso::ImportReport rep;
//   std::vector<tensat::RuleSpec> rs = tensat::taso::load_taso_rules("graph_subst.pb", &rep);
//   // rs[i].name == "taso-17" (TASO's rule number), rep.skipped lists what could not be expressed
//
// Mapping (TASO's enums are in rules/taso/data/SOURCE; the semantics are those of
// TASO's own loader, GraphXfer::create_operator_from_pb / create_new_operator):
//   OP_CONV2D (x, w) [SH SW PAD ACTI]   -> (conv SH SW PAD ACT x w none)     PAD 0 same, 1 valid
//   OP_MATMUL (a, b) [ACTI]             -> (matmul ACT a b none)             ACTI 0 none, 1 sigmoid,
//   OP_EW_ADD / OP_EW_MUL (a, b)        -> (ewadd a b) / (ewmul a b)                  2 relu, 3 tanh
//   OP_RELU / OP_SIGMOID / OP_TANH (x)  -> (relu x) / (sigmoid x) / (tanh x)
//   OP_CONCAT (x1..xn) [AXIS NUMDIM]    -> (concat AXIS x1 x2), n > 2 a left-deep tree
//   OP_SPLIT (x) [AXIS NUM_OUTPUTS=2]   -> output k: (split_k (split AXIS x)), the split sugar:
//                                          TASO splits at the most recent concat boundary
//   OP_TRANSPOSE (x) [NUMDIM PERM]      -> (transpose P x), P decoded from TASO's perm index
//   OP_ENLARGE (w, ref)                 -> (enlarge w ref)
//   OP_MERGE_GCONV (w) [COUNT]          -> (merge COUNT w)
//   OP_MUL (s, x) (s a scalar)          -> (ewmul s x) if (rank s 0)
// TASO's conv and matmul have no bias: ours get `none`. TASO's rule input k is the variable ?ik.
// Each mapped output (src op/ts -> dst op/ts) gives one left/right pair; several make a
// multi-pattern rule.
//
// Conditions, from what TASO checks when it matches or creates an operator:
//   - concat's NUMDIM (TASO: "input 0 has NUMDIM dimensions", on source and target operators):
//     (rank ?v NUMDIM) on every rule input that reaches the concat's operands through
//     rank-preserving operators (TASO types element-wise operators, concat and matmul with equal
//     ranks, so this is exactly TASO's check on TASO-typed graphs);
//   - OP_MUL's scalar: (rank ?s 0); OP_ENLARGE's kernel order: (kernel-le ?w ?ref).
//   - groups: TASO's loader drops its kernel-size and channel checks for convolutions (its
//     source: "no longer true because of group conv"), yet its generator verified every rule on
//     OIHW weights with I = the input's channels, i.e. one group, and several generated rules
//     (concatenating weights along output channels, 98, 105, 125-131) are false for grouped
//     convolutions. Every source-side conv whose input and weight are rule inputs therefore gets
//     (groups ?x ?w 1): the domain TASO verified. (Kernel sizes KH/KW are ignored, as TASO does.)
// A rule that cannot be written in our language (an unsupported operator, a split that is not
// the root of a target side, a contradictory rank, a malformed reference, or anything our own
// rule loader rejects) is reported in ImportReport::skipped, never dropped silently.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lang/rule_spec.h"

namespace tensat::taso {

/// An unreadable or malformed rule collection (not a single unexpressible rule).
class TasoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- TASO's numbering (SOURCE) ---------------------------------------------------------------
enum TasoOpType : int {
  OP_INPUT = 0, OP_WEIGHT, OP_ANY, OP_CONV2D, OP_DROPOUT, OP_LINEAR, OP_POOL2D_MAX, OP_POOL2D_AVG,
  OP_RELU, OP_SIGMOID, OP_TANH, OP_BATCHNORM, OP_CONCAT, OP_SPLIT, OP_RESHAPE, OP_TRANSPOSE,
  OP_EW_ADD, OP_EW_MUL, OP_MATMUL, OP_MUL, OP_ENLARGE, OP_MERGE_GCONV, OP_CONSTANT_IMM,
  OP_CONSTANT_ICONV, OP_CONSTANT_ONE, OP_CONSTANT_POOL,
};
enum TasoParam : int {
  PM_OP_TYPE = 0, PM_NUM_INPUTS, PM_NUM_OUTPUTS, PM_GROUP, PM_KERNEL_H, PM_KERNEL_W, PM_STRIDE_H,
  PM_STRIDE_W, PM_PAD, PM_ACTI, PM_NUMDIM, PM_AXIS, PM_PERM, PM_OUTSHUFFLE, PM_MERGE_GCONV_COUNT,
  PM_AXES, PM_KEEP_DIMS, PM_EPSILON,
};
std::string_view taso_op_name(int type);      ///< "CONV2D", or "OP#n" when unknown
std::string_view taso_param_name(int key);    ///< "AXIS", or "PM#n"

// ---- the decoded collection (plain data, independent of the generated protobuf classes) ----
struct TasoTensor {
  int op = 0;  ///< < 0: rule input -op; >= 0: operator of the same side
  int ts = 0;
};
struct TasoOp {
  int type = 0;
  std::vector<TasoTensor> inputs;
  std::vector<std::pair<int, int>> params;  ///< (key, value) in file order
  /// The value of parameter `key`, if present.
  bool param(int key, int* value) const;
};
struct TasoMapOutput {
  int src_op = 0, dst_op = 0, src_ts = 0, dst_ts = 0;
};
struct TasoRule {
  std::vector<TasoOp> src, dst;
  std::vector<TasoMapOutput> mapped;
  /// One line per operator, e.g. "src 0: MATMUL(in1, in4) ACTI=0"; for messages and tests.
  std::string str() const;
};

/// Decodes a rule collection; throws TasoError if the file cannot be read or parsed.
std::vector<TasoRule> read_taso_collection(const std::string& path);
std::vector<TasoRule> parse_taso_collection(std::string_view bytes, const std::string& what);

// ---- conversion -------------------------------------------------------------------------------
struct ImportIssue {
  int rule = 0;        ///< TASO's rule number (index in the collection)
  std::string reason;
};
struct ImportReport {
  std::string file;
  size_t total = 0;      ///< rules in the collection
  size_t imported = 0;   ///< RuleSpecs returned (imported + skipped.size() == total)
  std::vector<ImportIssue> skipped;
  std::string str() const;  ///< "graph_subst.pb: 133 rules, 133 imported, 0 not expressible"
};

/// Converts one TASO rule; on failure returns false with `why` set. `index` names the rule
/// ("taso-<index>") and is its RuleSpec::line; `file` is RuleSpec::file.
bool convert_taso_rule(const TasoRule& rule, int index, const std::string& file, RuleSpec* out,
                       std::string* why);

/// The rule's text in our rules format ("taso-3: (..) => (..) if (rank ?i1 2)").
std::string taso_rule_text(const TasoRule& rule, int index, std::string* why);

/// Reads a collection and converts every rule; unexpressible ones go into `report`.
/// Throws TasoError on an unreadable file.
std::vector<RuleSpec> load_taso_rules(const std::string& path, ImportReport* report = nullptr);

}  // namespace tensat::taso
