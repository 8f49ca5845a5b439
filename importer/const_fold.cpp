// Constant folding before lowering (see const_fold.h).
#include "importer/const_fold.h"

#include <spdlog/spdlog.h>

#include <deque>
#include <unordered_set>

#include "importer/const_eval.h"
#include "importer/onnx_graph.h"
#include "importer/tensor_proto.h"
#include "onnx_model/dtype.h"

namespace tensat::detail {

namespace {

class Folder {
 public:
  Folder(onnx::GraphProto& g, int64_t opset, const std::unordered_map<std::string, TensorType>& types,
         const std::string& where, std::unordered_set<std::string>& shape_derived,
         std::unordered_set<std::string>* shapes_of_run_time, int64_t max_elements)
      : g_(g),
        opset_(opset),
        types_(types),
        where_(where),
        shape_derived_(shape_derived),
        shapes_of_run_time_(shapes_of_run_time),
        max_elements_(max_elements) {
    std::unordered_set<std::string> inputs;
    for (const auto& i : g.input()) inputs.insert(i.name());
    for (auto& t : *g.mutable_initializer())
      if (!inputs.count(t.name())) inits_[t.name()] = &t;
  }

  int run() {
    std::vector<bool> removed(static_cast<size_t>(g_.node_size()), false);
    int folded = 0;
    for (bool changed = true; changed;) {
      changed = false;
      for (int i = 0; i < g_.node_size(); ++i) {
        if (removed[static_cast<size_t>(i)]) continue;
        const onnx::NodeProto& n = g_.node(i);
        if (!default_domain(n) || !const_eval::covers(n.op_type()) || has_subgraph(n) || n.output_size() != 1 ||
            n.output(0).empty() || done_.count(n.output(0)))
          continue;
        if (n.op_type() == "Identity") {
          if (const WeightData* v = n.input_size() == 1 && small_known(n.input(0)) ? value(n.input(0)) : nullptr) {
            if (shape_derived_.count(n.input(0))) shape_derived_.insert(n.output(0));
            done_.insert(n.output(0));
            changed = true;
            if (static_cast<int64_t>(v->count()) > max_elements_ || v->count() == 0) {
              known_[n.output(0)] = v;  // a weight: an alias, no copy (the node stays, lowering removes it)
              continue;
            }
            // A small value (a shape, sizes) becomes a constant of its own, which shape inference
            // reads (a Resize whose sizes are an Identity of an initializer).
            store_.push_back(*v);
            known_[n.output(0)] = &store_.back();
            *g_.add_initializer() = tensor_from_data(n.output(0), store_.back());
            removed[static_cast<size_t>(i)] = true;
            ++folded;
          }
          continue;
        }
        // Shape and Size need their input's type only, CastLike its second input's; every other
        // input is needed with its value.
        const bool shape_op = n.op_type() == "Shape" || n.op_type() == "Size";
        auto type_only_input = [&](int k) { return shape_op || (k == 1 && n.op_type() == "CastLike"); };
        bool ready = true;
        for (int k = 0; k < n.input_size(); ++k) {
          const std::string& in = n.input(k);
          ready = ready && (in.empty() || (type_only_input(k) ? type(in).has_value() : small_known(in)));
        }
        if (!ready) continue;
        std::vector<std::optional<const_eval::Operand>> ops;
        for (int k = 0; k < n.input_size(); ++k) {
          const std::string& in = n.input(k);
          const bool type_only = type_only_input(k);
          if (in.empty()) {
            ops.emplace_back(std::nullopt);
            continue;
          }
          const WeightData* v = type_only ? nullptr : value(in);
          if (!type_only && !v) {
            ready = false;
            break;
          }
          ops.emplace_back(const_eval::Operand{v ? v->type : *type(in), v});
        }
        if (!ready) continue;
        std::string why;
        auto res = const_eval::evaluate(n, opset_, ops, &why, max_elements_);
        if (!res) {
          spdlog::trace("{}: node '{}' ({}) not folded: {}", where_, n.name(), n.op_type(), why);
          continue;
        }
        const std::string out = n.output(0);
        // From the shape of a tensor computed at run time or of such a value, or from such a value.
        const bool of_run_time = shape_op && !n.input(0).empty() && !known_.count(n.input(0)) && !inits_.count(n.input(0));
        bool derived = of_run_time || (shape_op && !n.input(0).empty() && shape_derived_.count(n.input(0)));
        if (of_run_time && shapes_of_run_time_) shapes_of_run_time_->insert(out);
        for (int k = 0; k < n.input_size() && !derived; ++k)
          derived = !type_only_input(k) && shape_derived_.count(n.input(k));
        if (derived) shape_derived_.insert(out);
        store_.push_back(std::move((*res)[0]));
        known_[out] = &store_.back();
        done_.insert(out);
        changed = true;
        if (store_.back().count() == 0) continue;  // stays a node (see the header)
        *g_.add_initializer() = tensor_from_data(out, store_.back());
        removed[static_cast<size_t>(i)] = true;
        ++folded;
      }
    }
    if (folded) {
      google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
      for (int i = 0; i < g_.node_size(); ++i)
        if (!removed[static_cast<size_t>(i)]) kept.Add()->Swap(g_.mutable_node(i));
      g_.mutable_node()->Swap(&kept);
    }
    return folded;
  }

 private:
  // The value of a name, if known (an initializer is converted on first use).
  const WeightData* value(const std::string& name) {
    if (auto it = known_.find(name); it != known_.end()) return it->second;
    auto it = inits_.find(name);
    if (it == inits_.end()) return nullptr;
    std::optional<WeightData> w = tensor_data(*it->second, where_);
    if (!w) return nullptr;
    store_.push_back(std::move(*w));
    known_[name] = &store_.back();
    return &store_.back();
  }
  // A known value small enough to be worth reading (a large weight is never copied to be
  // folded: no result may be large anyway, const_eval::kMaxNewElements).
  bool small_known(const std::string& name) const {
    if (auto it = known_.find(name); it != known_.end()) return true;
    auto it = inits_.find(name);
    if (it == inits_.end()) return false;
    int64_t n = 1;
    for (auto d : it->second->dims()) n *= d;
    return n <= kMaxReadElements;
  }
  // The static type of a name: a known value's, an initializer's, or from shape inference.
  std::optional<TensorType> type(const std::string& name) const {
    if (auto it = known_.find(name); it != known_.end()) return it->second->type;
    if (auto it = inits_.find(name); it != inits_.end()) {
      TensorType t{dtype_or_other(it->second->data_type()), {}};
      for (auto d : it->second->dims()) t.shape.push_back(d);
      return t;
    }
    if (auto it = types_.find(name); it != types_.end()) return it->second;
    return std::nullopt;
  }

  static constexpr int64_t kMaxReadElements = int64_t{1} << 20;

  onnx::GraphProto& g_;
  int64_t opset_;
  const std::unordered_map<std::string, TensorType>& types_;
  const std::string& where_;
  std::unordered_map<std::string, onnx::TensorProto*> inits_;
  std::unordered_map<std::string, const WeightData*> known_;
  std::unordered_set<std::string> done_;
  std::deque<WeightData> store_;  // stable addresses
  std::unordered_set<std::string>& shape_derived_;
  std::unordered_set<std::string>* shapes_of_run_time_;
  int64_t max_elements_;
};

}  // namespace

int fold_constants(onnx::GraphProto& g, int64_t opset, const std::unordered_map<std::string, TensorType>& types,
                   const std::string& where, std::unordered_set<std::string>& shape_derived,
                   std::unordered_set<std::string>* shapes_of_run_time, int64_t max_elements) {
  return Folder(g, opset, types, where, shape_derived, shapes_of_run_time, max_elements).run();
}

}  // namespace tensat::detail
