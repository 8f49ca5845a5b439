// TASO rule collections -> RuleSpecs. See taso_rules.h for the mapping and its conditions.
#include "rules/taso/taso_rules.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "graph_subst.pb.h"
#include "rules/loader.h"

namespace tensat::taso {

namespace {

constexpr std::string_view kOpNames[] = {
    "INPUT", "WEIGHT", "ANY", "CONV2D", "DROPOUT", "LINEAR", "POOL2D_MAX", "POOL2D_AVG", "RELU",
    "SIGMOID", "TANH", "BATCHNORM", "CONCAT", "SPLIT", "RESHAPE", "TRANSPOSE", "EW_ADD", "EW_MUL",
    "MATMUL", "MUL", "ENLARGE", "MERGE_GCONV", "CONSTANT_IMM", "CONSTANT_ICONV", "CONSTANT_ONE",
    "CONSTANT_POOL"};
constexpr std::string_view kParamNames[] = {
    "OP_TYPE", "NUM_INPUTS", "NUM_OUTPUTS", "GROUP", "KERNEL_H", "KERNEL_W", "STRIDE_H", "STRIDE_W",
    "PAD", "ACTI", "NUMDIM", "AXIS", "PERM", "OUTSHUFFLE", "MERGE_GCONV_COUNT", "AXES", "KEEP_DIMS",
    "EPSILON"};

/// Thrown inside the converter for an unexpressible rule; caught per rule.
struct Unexpressible {
  std::string why;
};

[[noreturn]] void fail(std::string why) { throw Unexpressible{std::move(why)}; }

std::string act_symbol(int v) {
  switch (v) {
    case 0: return "none";
    case 1: return "sigmoid";
    case 2: return "relu";
    case 3: return "tanh";
    default: fail("unknown activation value " + std::to_string(v));
  }
}

std::string pad_symbol(int v) {
  switch (v) {
    case 0: return "same";
    case 1: return "valid";
    default: fail("unknown padding value " + std::to_string(v));
  }
}

std::string var(int input) { return "?i" + std::to_string(input); }

/// Builds the terms of one side and collects the conditions of the rule.
class Converter {
 public:
  explicit Converter(const TasoRule& r) : rule_(r) {}

  std::string text(int index) {
    const std::string name = "taso-" + std::to_string(index);
    if (rule_.mapped.empty()) fail("no mapped output");
    for (const auto& m : rule_.mapped) {
      if (m.src_op < 0 || m.src_op >= static_cast<int>(rule_.src.size()))
        fail("mapped output names source operator " + std::to_string(m.src_op) + ", which does not exist");
      if (m.dst_op < 0 || m.dst_op >= static_cast<int>(rule_.dst.size()))
        fail("mapped output names target operator " + std::to_string(m.dst_op) + ", which does not exist");
    }
    // Source operators must be reachable from a mapped output: a pattern cannot require an
    // operator that no left-hand side contains.
    std::set<int> reached;
    std::function<void(int)> reach = [&](int op) {
      if (!reached.insert(op).second) return;
      for (const auto& in : rule_.src[static_cast<size_t>(op)].inputs)
        if (in.op >= 0 && in.op < op) reach(in.op);
    };
    for (const auto& m : rule_.mapped) reach(m.src_op);
    for (int k = 0; k < static_cast<int>(rule_.src.size()); ++k)
      if (!reached.count(k))
        fail("source operator " + std::to_string(k) + " (" + std::string(taso_op_name(rule_.src[static_cast<size_t>(k)].type)) +
             ") is not below any mapped output, so no left-hand side could require it");

    std::vector<std::string> lhs, rhs;
    for (const auto& m : rule_.mapped) {
      lhs.push_back(term(true, TasoTensor{m.src_op, m.src_ts}, true));
      rhs.push_back(term(false, TasoTensor{m.dst_op, m.dst_ts}, true));
    }
    // Target-side leaves must be source-side inputs (TASO asserts the same).
    for (int v : dst_inputs_)
      if (!src_inputs_.count(v)) fail("target side uses input " + std::to_string(v) + ", which the source side does not have");
    // Rank conditions: one rank per input, else the rule can never match.
    std::vector<std::string> conds;
    for (const auto& [v, ranks] : ranks_) {
      if (ranks.size() > 1) {
        std::string rs;
        for (int r : ranks) rs += (rs.empty() ? "" : " and ") + std::to_string(r);
        fail("input " + std::to_string(v) + " would need rank " + rs);
      }
      conds.push_back("(rank " + var(v) + " " + std::to_string(*ranks.begin()) + ")");
    }
    for (const auto& c : extra_conds_)
      if (std::find(conds.begin(), conds.end(), c) == conds.end()) conds.push_back(c);

    std::string out = name + ": ";
    for (size_t i = 0; i < lhs.size(); ++i) out += (i ? " ; " : "") + lhs[i];
    out += " => ";
    for (size_t i = 0; i < rhs.size(); ++i) out += (i ? " ; " : "") + rhs[i];
    if (!conds.empty()) {
      out += " if ";
      for (size_t i = 0; i < conds.size(); ++i) out += (i ? ", " : "") + conds[i];
    }
    return out;
  }

 private:
  const std::vector<TasoOp>& ops(bool src) const { return src ? rule_.src : rule_.dst; }
  static std::string side_name(bool src) { return src ? "source" : "target"; }

  int need_param(const TasoOp& op, int key, bool src, int idx) {
    int v = 0;
    if (!op.param(key, &v))
      fail(side_name(src) + " operator " + std::to_string(idx) + " (" + std::string(taso_op_name(op.type)) +
           ") lacks parameter " + std::string(taso_param_name(key)));
    return v;
  }

  /// Requires that `t` has rank `r` by conditions on the inputs below it.
  void need_rank(bool src, const TasoTensor& t, int r, int depth = 0) {
    if (depth > 64) fail("operator references form a cycle");
    if (t.op < 0) {
      ranks_[-t.op].insert(r);
      return;
    }
    const auto& side = ops(src);
    if (t.op >= static_cast<int>(side.size())) return;  // reported by term()
    const TasoOp& op = side[static_cast<size_t>(t.op)];
    switch (op.type) {
      case OP_RELU:
      case OP_SIGMOID:
      case OP_TANH:
      case OP_SPLIT:
      case OP_TRANSPOSE:
        if (!op.inputs.empty()) need_rank(src, op.inputs[0], r, depth + 1);
        break;
      case OP_EW_ADD:
      case OP_EW_MUL:
      case OP_CONCAT:
      case OP_MATMUL:  // TASO's matmul, element-wise operators and concat: equal ranks
        for (const auto& in : op.inputs) need_rank(src, in, r, depth + 1);
        break;
      case OP_MUL:
        if (op.inputs.size() == 2) need_rank(src, op.inputs[1], r, depth + 1);
        break;
      case OP_CONV2D:
      case OP_ENLARGE:
      case OP_MERGE_GCONV:
        if (r != 4) fail("a 4-D " + std::string(taso_op_name(op.type)) + " result would need rank " + std::to_string(r));
        break;
      default: break;  // term() reports the operator
    }
  }

  std::string term(bool src, const TasoTensor& t, bool root, int depth = 0) {
    if (depth > 64) fail("operator references form a cycle");
    if (t.op < 0) {
      (src ? src_inputs_ : dst_inputs_).insert(-t.op);
      return var(-t.op);
    }
    const auto& side = ops(src);
    if (t.op >= static_cast<int>(side.size()))
      fail(side_name(src) + " operand names operator " + std::to_string(t.op) + ", which does not exist");
    const int idx = t.op;
    const TasoOp& op = side[static_cast<size_t>(idx)];
    auto in = [&](size_t i) -> const TasoTensor& {
      const TasoTensor& x = op.inputs[i];
      if (x.op >= idx) fail(side_name(src) + " operator " + std::to_string(idx) + " uses operator " + std::to_string(x.op) + ", which is not before it");
      return x;
    };
    auto arity = [&](size_t n) {
      if (op.inputs.size() != n)
        fail(side_name(src) + " operator " + std::to_string(idx) + " (" + std::string(taso_op_name(op.type)) + ") has " +
             std::to_string(op.inputs.size()) + " inputs, expected " + std::to_string(n));
    };
    auto sub = [&](size_t i) { return term(src, in(i), false, depth + 1); };
    if (op.type != OP_SPLIT && t.ts != 0)
      fail(side_name(src) + " operand names output " + std::to_string(t.ts) + " of single-output operator " + std::to_string(idx));
    switch (op.type) {
      case OP_CONV2D: {
        arity(2);
        int sh = need_param(op, PM_STRIDE_H, src, idx), sw = need_param(op, PM_STRIDE_W, src, idx);
        std::string pad = pad_symbol(need_param(op, PM_PAD, src, idx));
        std::string act = act_symbol(need_param(op, PM_ACTI, src, idx));
        if (src && op.inputs[0].op < 0 && op.inputs[1].op < 0)
          extra_conds_.push_back("(groups " + var(-op.inputs[0].op) + " " + var(-op.inputs[1].op) + " 1)");
        grouped_pair(src, op);
        return "(conv " + std::to_string(sh) + " " + std::to_string(sw) + " " + pad + " " + act + " " + sub(0) + " " + sub(1) + " none)";
      }
      case OP_MATMUL: {
        arity(2);
        std::string act = act_symbol(need_param(op, PM_ACTI, src, idx));
        return "(matmul " + act + " " + sub(0) + " " + sub(1) + " none)";
      }
      case OP_EW_ADD:
      case OP_EW_MUL:
        arity(2);
        // TASO's element-wise operators take operands of equal shapes (Graph::element asserts
        // it); ours broadcast, which e.g. makes conv linearity false (zero padding differs).
        if (op.inputs[0].op < 0 && op.inputs[1].op < 0 && op.inputs[0].op != op.inputs[1].op)
          extra_conds_.push_back("(same-shape " + var(-op.inputs[0].op) + " " + var(-op.inputs[1].op) + ")");
        return std::string(op.type == OP_EW_ADD ? "(ewadd " : "(ewmul ") + sub(0) + " " + sub(1) + ")";
      case OP_RELU:
      case OP_SIGMOID:
      case OP_TANH: {
        arity(1);
        const char* name = op.type == OP_RELU ? "relu" : op.type == OP_SIGMOID ? "sigmoid" : "tanh";
        return std::string("(") + name + " " + sub(0) + ")";
      }
      case OP_CONCAT: {
        if (op.inputs.size() < 2) fail("concat with fewer than two inputs");
        int axis = need_param(op, PM_AXIS, src, idx), ndim = need_param(op, PM_NUMDIM, src, idx);
        int n = 0;
        if (op.param(PM_NUM_INPUTS, &n) && n != static_cast<int>(op.inputs.size()))
          fail("concat says NUM_INPUTS=" + std::to_string(n) + " but has " + std::to_string(op.inputs.size()) + " inputs");
        if (axis < 0 || axis >= ndim) fail("concat axis " + std::to_string(axis) + " outside NUMDIM " + std::to_string(ndim));
        need_rank(src, TasoTensor{idx, 0}, ndim);
        std::string acc = sub(0);
        for (size_t i = 1; i < op.inputs.size(); ++i)
          acc = "(concat " + std::to_string(axis) + " " + acc + " " + sub(i) + ")";
        return acc;
      }
      case OP_SPLIT: {
        arity(1);
        int axis = need_param(op, PM_AXIS, src, idx);
        int n = need_param(op, PM_NUM_OUTPUTS, src, idx);
        if (n != 2) fail("split into " + std::to_string(n) + " outputs (our split has two)");
        if (t.ts < 0 || t.ts > 1) fail("split output " + std::to_string(t.ts) + " does not exist");
        if (!root && !src)
          fail("target split output is used by another operator; the split sugar (TASO's split at the most "
               "recent concat boundary) is only sound at the root of a right-hand side (rules/FORMAT.md)");
        return "(split_" + std::to_string(t.ts) + " (split " + std::to_string(axis) + " " + sub(0) + "))";
      }
      case OP_TRANSPOSE: {
        arity(1);
        int ndim = need_param(op, PM_NUMDIM, src, idx), perm_idx = need_param(op, PM_PERM, src, idx);
        need_param(op, PM_OUTSHUFFLE, src, idx);  // a layout flag: values are unchanged
        if (ndim <= 0 || ndim > 8) fail("transpose NUMDIM " + std::to_string(ndim));
        std::vector<int> perm(static_cast<size_t>(ndim));
        for (int i = ndim - 1; i >= 0; --i) {
          perm[static_cast<size_t>(i)] = perm_idx % ndim;
          perm_idx /= ndim;
        }
        std::vector<int> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (int i = 0; i < ndim; ++i)
          if (sorted[static_cast<size_t>(i)] != i || perm_idx != 0) fail("transpose PERM is not a permutation");
        std::string p;
        for (int i = 0; i < ndim; ++i) p += (i ? "_" : "") + std::to_string(perm[static_cast<size_t>(i)]);
        need_rank(src, op.inputs[0], ndim);
        return "(transpose " + p + " " + sub(0) + ")";
      }
      case OP_ENLARGE: {
        arity(2);
        if (op.inputs[0].op < 0 && op.inputs[1].op < 0)
          extra_conds_.push_back("(kernel-le " + var(-op.inputs[0].op) + " " + var(-op.inputs[1].op) + ")");
        else if (src)
          fail("enlarge of computed kernels on a source side: TASO's kernel-order check cannot be written as a condition");
        return "(enlarge " + sub(0) + " " + sub(1) + ")";
      }
      case OP_MERGE_GCONV: {
        arity(1);
        int count = need_param(op, PM_MERGE_GCONV_COUNT, src, idx);
        return "(merge " + std::to_string(count) + " " + sub(0) + ")";
      }
      case OP_MUL: {
        arity(2);
        need_rank(src, op.inputs[0], 0);
        return "(ewmul " + sub(0) + " " + sub(1) + ")";
      }
      default:
        fail(side_name(src) + " operator " + std::to_string(idx) + " is " + std::string(taso_op_name(op.type)) +
             ", which has no counterpart in the tensor language (TASO's own loader rejects it too)");
    }
  }

  /// A convolution of (concat 1 A B) with (concat 0 C D) is a grouped convolution of two
  /// halves; it equals the two separate convolutions only when A, B and C, D have equal shapes
  /// (else the groups cut the channels elsewhere). TASO's generator verified such rules (99,
  /// 100, 130, 131) only there: every input of one kind had one shape. Where A..D are rule
  /// inputs the conditions say so; TASO itself does not check it.
  void grouped_pair(bool src, const TasoOp& conv) {
    const auto& side = ops(src);
    auto concat_of = [&](const TasoTensor& t, int axis) -> const TasoOp* {
      if (t.op < 0 || t.op >= static_cast<int>(side.size())) return nullptr;
      const TasoOp& c = side[static_cast<size_t>(t.op)];
      int a = -1;
      if (c.type != OP_CONCAT || c.inputs.size() != 2 || !c.param(PM_AXIS, &a) || a != axis) return nullptr;
      return &c;
    };
    const TasoOp* in = concat_of(conv.inputs[0], 1);
    const TasoOp* w = concat_of(conv.inputs[1], 0);
    if (!in || !w) return;
    for (const TasoOp* c : {in, w})
      if (c->inputs[0].op < 0 && c->inputs[1].op < 0 && c->inputs[0].op != c->inputs[1].op)
        extra_conds_.push_back("(same-shape " + var(-c->inputs[0].op) + " " + var(-c->inputs[1].op) + ")");
  }

  const TasoRule& rule_;
  std::set<int> src_inputs_, dst_inputs_;
  std::map<int, std::set<int>> ranks_;
  std::vector<std::string> extra_conds_;
};

std::string ref_str(const TasoTensor& t) {
  if (t.op < 0) return "in" + std::to_string(-t.op);
  return "op" + std::to_string(t.op) + (t.ts ? "." + std::to_string(t.ts) : "");
}

}  // namespace

std::string_view taso_op_name(int type) {
  if (type >= 0 && type < static_cast<int>(std::size(kOpNames))) return kOpNames[type];
  return "OP#?";
}

std::string_view taso_param_name(int key) {
  if (key >= 0 && key < static_cast<int>(std::size(kParamNames))) return kParamNames[key];
  return "PM#?";
}

bool TasoOp::param(int key, int* value) const {
  for (const auto& [k, v] : params)
    if (k == key) {
      if (value) *value = v;
      return true;
    }
  return false;
}

std::string TasoRule::str() const {
  std::ostringstream os;
  auto side = [&](const char* name, const std::vector<TasoOp>& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      os << name << " " << i << ": " << taso_op_name(ops[i].type) << "(";
      for (size_t j = 0; j < ops[i].inputs.size(); ++j) os << (j ? ", " : "") << ref_str(ops[i].inputs[j]);
      os << ")";
      for (const auto& [k, v] : ops[i].params) os << " " << taso_param_name(k) << "=" << v;
      os << "\n";
    }
  };
  side("src", src);
  side("dst", dst);
  for (const auto& m : mapped)
    os << "map src " << m.src_op << "." << m.src_ts << " -> dst " << m.dst_op << "." << m.dst_ts << "\n";
  return os.str();
}

std::vector<TasoRule> parse_taso_collection(std::string_view bytes, const std::string& what) {
  GraphSubst::RuleCollection coll;
  if (!coll.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw TasoError(what + ": not a TASO rule collection (protobuf GraphSubst.RuleCollection)");
  std::vector<TasoRule> out;
  out.reserve(static_cast<size_t>(coll.rule_size()));
  auto conv_ops = [](const auto& pb_ops, std::vector<TasoOp>& ops) {
    for (const auto& o : pb_ops) {
      TasoOp op;
      op.type = o.type();
      for (const auto& t : o.input()) op.inputs.push_back(TasoTensor{t.opid(), t.tsid()});
      for (const auto& p : o.para()) op.params.emplace_back(p.key(), p.value());
      ops.push_back(std::move(op));
    }
  };
  for (const auto& r : coll.rule()) {
    TasoRule rule;
    conv_ops(r.srcop(), rule.src);
    conv_ops(r.dstop(), rule.dst);
    for (const auto& m : r.mappedoutput())
      rule.mapped.push_back(TasoMapOutput{m.srcopid(), m.dstopid(), m.srctsid(), m.dsttsid()});
    out.push_back(std::move(rule));
  }
  return out;
}

std::vector<TasoRule> read_taso_collection(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TasoError(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw TasoError(path + ": read error");
  return parse_taso_collection(ss.str(), path);
}

std::string taso_rule_text(const TasoRule& rule, int index, std::string* why) {
  try {
    return Converter(rule).text(index);
  } catch (const Unexpressible& u) {
    if (why) *why = u.why;
    return {};
  }
}

bool convert_taso_rule(const TasoRule& rule, int index, const std::string& file, RuleSpec* out,
                       std::string* why) {
  std::string text = taso_rule_text(rule, index, why);
  if (text.empty()) return false;
  try {
    // Our own loader checks the result like any rule file (operators, arity, bound variables,
    // conditions, where the split sugar may appear).
    auto specs = rules::load_rules_text(text, file);
    if (specs.size() != 1) {
      if (why) *why = "internal: the rule text gave " + std::to_string(specs.size()) + " rules";
      return false;
    }
    *out = std::move(specs[0]);
    out->file = file;
    out->line = index;
    return true;
  } catch (const std::exception& e) {
    if (why) *why = std::string("our rule loader rejects it: ") + e.what() + " (text: " + text + ")";
    return false;
  }
}

std::vector<RuleSpec> load_taso_rules(const std::string& path, ImportReport* report) {
  std::vector<TasoRule> coll = read_taso_collection(path);
  ImportReport rep;
  rep.file = path;
  rep.total = coll.size();
  std::vector<RuleSpec> out;
  for (size_t i = 0; i < coll.size(); ++i) {
    RuleSpec spec;
    std::string why;
    if (convert_taso_rule(coll[i], static_cast<int>(i), path, &spec, &why)) {
      out.push_back(std::move(spec));
    } else {
      rep.skipped.push_back(ImportIssue{static_cast<int>(i), why});
    }
  }
  rep.imported = out.size();
  if (report) *report = std::move(rep);
  return out;
}

std::string ImportReport::str() const {
  std::ostringstream os;
  os << file << ": " << total << " rules, " << imported << " imported, " << skipped.size() << " not expressible";
  for (const auto& s : skipped) os << "\n  rule " << s.rule << ": " << s.reason;
  return os.str();
}


}  // namespace tensat::taso
