// The Emitter's symbolic dimensions (the interface as the source declares it, shapes from the
// labels) and the computations of shape values it writes (see emitter.h, dim_labels.h).
#include <algorithm>
#include <cassert>

#include "exporter/emitter.h"
#include "onnx_model/shape_op.h"

namespace tensat::detail {

// Writes the source's computation of shape value v (ModelContext::shape_values) under
// names of its own ("tensat_shape/NAME"; the value keeps its name), with each Shape or Size of
// a tensor computed at run time written from the input dimensions its labels name.
void Emitter::emit_shape_value(const std::string& v) {
  const ShapeValue& sv = ctx_.shape_values.at(v);
  if (!sv.labelled) throw ExportError("internal: shape value '" + v + "' written without its labels");
  // A source name -> its name here: one no other tensor of the output has.
  auto inner = [&](const std::string& x) -> std::string {
    if (x == v) return v;
    auto it = shape_renames_.find(x);
    if (it != shape_renames_.end()) return it->second;
    std::string nm = "tensat_shape/" + x;
    for (int k = 1; used_names_.count(nm); ++k) nm = "tensat_shape/" + x + "_" + std::to_string(k);
    used_names_.insert(nm);
    return shape_renames_[x] = nm;
  };
  for (const auto& t : sv.initializers) {
    const std::string nm = inner(t.name());
    if (!shape_names_.insert(nm).second) continue;
    onnx::TensorProto* c = graph_->add_initializer();
    *c = t;
    c->set_name(nm);
  }
  for (const auto& n : sv.nodes) {
    const std::string out = inner(n.output(0));
    if (!shape_names_.insert(out).second) continue;
    if (auto r = sv.shape_reads.find(n.input_size() ? n.input(0) : ""); r != sv.shape_reads.end() &&
        (n.op_type() == "Shape" || n.op_type() == "Size") && n.input_size() == 1) {
      (void)shape_read(n, r->second, out);
      continue;
    }
    onnx::NodeProto* p = graph_->add_node();
    *p = n;
    p->set_name(fresh("shape_value"));
    for (int i = 0; i < p->input_size(); ++i)
      if (!p->input(i).empty()) p->set_input(i, inner(p->input(i)));
    for (int i = 0; i < p->output_size(); ++i)
      if (!p->output(i).empty()) p->set_output(i, inner(p->output(i)));
  }
  if (stats_) stats_->shape_values.push_back(v);
}

// The 1-element int64 tensor of input dimension `symbol`: Slice(Shape(X), [k], [k+1]).
std::string Emitter::input_dim(const std::string& symbol) {
  if (auto it = input_dims_.find(symbol); it != input_dims_.end()) return it->second;
  const auto symbolic = symbolic_input_dims(ctx_);
  for (const auto& decl : ctx_.declared_inputs) {  // the first input, in declaration order, that has it
    const std::string& in = decl.name();
    auto sym = symbolic.find(in);
    if (sym == symbolic.end()) continue;
    for (const auto& [axis, nm] : sym->second) {
      if (nm != symbol) continue;
      std::string& shape = input_shapes_[in];
      if (shape.empty()) {
        shape = fresh("input_shape");
        add_node("Shape", {in}, {shape});
      }
      const std::string out = fresh("dim_" + symbol);
      const auto k = static_cast<int64_t>(axis);
      if (ctx_.default_opset >= 10) {
        add_node("Slice", {shape, int64_initializer("starts", {k}), int64_initializer("ends", {k + 1}),
                           int64_initializer("axes", {0})},
                 {out});
      } else {
        onnx::NodeProto* p = add_node("Slice", {shape}, {out});
        set_ints(p, "starts", {k});
        set_ints(p, "ends", {k + 1});
        set_ints(p, "axes", {0});
      }
      return input_dims_[symbol] = out;
    }
  }
  throw ExportError("internal: no input has the symbolic dimension '" + symbol + "'");
}

// The 1-element int64 tensor of a product of input dimensions.
std::string Emitter::input_dims(const std::vector<std::string>& factors) {
  assert(!factors.empty());
  std::string acc = input_dim(factors[0]);
  for (size_t i = 1; i < factors.size(); ++i) {
    const std::string next = fresh("dims");
    add_node("Mul", {acc, input_dim(factors[i])}, {next});
    acc = next;
  }
  return acc;
}

// Shape (opset 15: dimensions start..end) or Size of a tensor computed at run time, from the
// input dimensions its labels name and its fixed ones.
std::string Emitter::shape_read(const onnx::NodeProto& n, const ShapeValue::ShapeRead& read, const std::string& out) {
  const auto rank = static_cast<int64_t>(read.fixed.size());
  const auto [start, end] = n.op_type() == "Shape" ? shape_op_range(n, rank) : std::pair<int64_t, int64_t>{0, rank};
  std::vector<std::string> pieces;
  std::vector<int64_t> run;  // fixed dimensions not yet written
  for (int64_t d = start; d < end; ++d) {
    const auto& factors = read.labels.at(static_cast<size_t>(d));
    if (factors.empty()) {
      run.push_back(read.fixed[static_cast<size_t>(d)]);
      continue;
    }
    if (!run.empty()) pieces.push_back(int64_initializer("fixed_dims", run));
    run.clear();
    pieces.push_back(input_dims(factors));
  }
  if (!run.empty() || pieces.empty()) pieces.push_back(int64_initializer("fixed_dims", run));
  if (n.op_type() == "Shape") {
    set_int(add_node("Concat", pieces, {out}), "axis", 0);
  } else {
    const std::string all = fresh("dims");
    set_int(add_node("Concat", pieces, {all}), "axis", 0);
    set_int(add_node("ReduceProd", {all}, {out}), "keepdims", 0);
  }
  return out;
}

// A shape with each labelled dimension symbolic: the declared dimension's name where the
// declaration has one there, else the label's.
void Emitter::set_symbolic_shape(onnx::TensorShapeProto* sh, const Shape& s, const DimLabelList& labels,
                                 const onnx::TensorShapeProto* declared) {
  assert(labels.size() == s.size() && "a label per dimension");
  sh->clear_dim();
  for (size_t d = 0; d < s.size(); ++d) {
    auto* dim = sh->add_dim();
    if (labels[d] == kStaticDim) {
      dim->set_dim_value(s[d]);
    } else if (declared && declared->dim_size() == static_cast<int>(s.size()) &&
               !declared->dim(static_cast<int>(d)).dim_param().empty()) {
      dim->set_dim_param(declared->dim(static_cast<int>(d)).dim_param());
    } else {
      dim->set_dim_param(labels_->name(labels[d]));
    }
  }
}

// The inputs as the source declares them, the outputs with the dimensions the labels give.
void Emitter::declare_symbolic_interface(const std::vector<NodeId>& outs, ExportStats& stats) {
  const auto symbolic = symbolic_input_dims(ctx_);
  for (auto& in : *graph_->mutable_input()) {
    auto it = symbolic.find(in.name());
    if (it == symbolic.end()) continue;
    for (const auto& d : ctx_.declared_inputs)
      if (d.name() == in.name()) in = d;
    for (const auto& [axis, nm] : it->second) stats.symbolic_dims.push_back(in.name() + ": " + nm);
  }
  for (int i = 0; i < graph_->output_size() && i < static_cast<int>(outs.size()); ++i) {
    const ValueType& vt = g_.type(outs[static_cast<size_t>(i)]);
    if (vt.kind != Kind::Tensor) continue;
    auto* tt = graph_->mutable_output(i)->mutable_type()->mutable_tensor_type();
    const onnx::TensorShapeProto* declared = nullptr;
    for (const auto& d : ctx_.declared_outputs)
      if (d.name() == graph_->output(i).name() && d.type().tensor_type().has_shape())
        declared = &d.type().tensor_type().shape();
    set_symbolic_shape(tt->mutable_shape(), vt.tensor.shape, labels_->of(outs[static_cast<size_t>(i)]), declared);
  }
}

}  // namespace tensat::detail
