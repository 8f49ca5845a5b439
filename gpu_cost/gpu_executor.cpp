// GPU executor (see gpu_executor.h): a program of prepared kernels over an arena planned from
// value lifetimes, built once, launched eagerly or replayed as a CUDA graph.
#include "gpu_cost/gpu_executor.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "exec/opaque_plan.h"
#include "gpu_cost/arena.h"
#include "gpu_cost/gpu_opaque.h"
#include "gpu_cost/gpu_ops.h"
#include "gpu_cost/op_params.h"
#include "gpu_cost/roofline.h"
#include "lang/runtime_fusion.h"

namespace tensat::gpu {

namespace {

std::string describe(const ir::Graph& g, ir::NodeId id) {
  return std::string(op_name(g.node(id).op)) + " node " + std::to_string(id);
}

// Where a value lives: a resident buffer, an arena buffer (an index of the planner), plus a
// byte offset (aliases: split parts, views).
struct Loc {
  enum class Kind : uint8_t { None, Resident, Arena };
  Kind kind = Kind::None;
  int buf = -1;
  size_t offset = 0;
};

struct Step {
  ir::NodeId id;
  Op op;                             // what the kernel computes (Conv for a relu with its conv fused)
  std::vector<const ValueType*> ct;  // and its operand types (ACT relu for that conv)
  std::unique_ptr<Kernel> kernel;
  std::vector<std::optional<ir::NodeId>> operands;  // one per kernel argument (nullopt: nullptr)
  std::vector<const void*> args;                    // resolved after planning
  void* out = nullptr;
  int launches = 1;
};

}  // namespace

struct Program::Impl {
  Context& ctx;
  const ir::Graph& g;
  const WeightStore& weights;
  const Inputs& inputs;
  const RunOptions& opts;
  bool random_boundaries;
  exec::OpaquePlan opaque;

  std::vector<bool> needed, constant;
  std::vector<int64_t> absorbs;  // per relu: the conv it runs fused with (lang/runtime_fusion.h), or -1
  std::vector<bool> absorbed;    // convs computed by their relu's step
  std::vector<Loc> loc;
  std::vector<DeviceBuffer> resident;
  ArenaPlanner planner;
  DeviceBuffer arena;
  std::vector<Step> const_steps, steps;
  int kernel_count = 0;
  std::map<std::string, int> left_out;
  std::unique_ptr<CudaGraph> graph;
  uint64_t graph_generation = 0;

  Impl(Context& c, const ir::Graph& graph_, const WeightStore& w, const Inputs& in, const RunOptions& o, bool rb)
      : ctx(c), g(graph_), weights(w), inputs(in), opts(o), random_boundaries(rb), opaque(graph_, w, o.opaque, o.provided),
        needed(graph_.size(), false), constant(graph_.size(), false), loc(graph_.size()) {}

  bool provided(ir::NodeId id) const { return opts.provided.count(id) != 0; }
  bool boundary(ir::NodeId id) const { return opaque.how(id) == exec::OpaqueHow::Boundary; }

  // The children a node reads at run time: the data operands of an opaque kernel, none for
  // host constants and boundaries, every tensor child of a language operator.
  std::vector<ir::NodeId> reads(ir::NodeId id) const {
    const ir::Node& n = g.node(id);
    if (n.op == Op::Opaque || (n.op == Op::Select && opaque.how(id) != exec::OpaqueHow::NotOpaque)) {
      if (opaque.how(id) == exec::OpaqueHow::Kernel) return opaque.data_children(id);
      return {};
    }
    std::vector<ir::NodeId> v;
    for (ir::NodeId c : n.children) {
      const ValueType& t = g.type(c);
      if (t.kind == Kind::Tensor || t.kind == Kind::Tuple) v.push_back(c);
    }
    return v;
  }

  void mark_needed() {
    for (ir::NodeId o : g.outputs()) needed[o] = true;
    for (size_t i = g.size(); i-- > 0;) {
      const auto id = static_cast<ir::NodeId>(i);
      if (!needed[id] || provided(id)) continue;
      if (boundary(id) && !random_boundaries)
        throw ExecError(describe(g, id) + " (" + opaque.op_type(id) + ") cannot run on the GPU (" + opaque.why(id) +
                        "): supply its value in RunOptions::provided");
      for (ir::NodeId c : reads(id)) needed[c] = true;
    }
  }

  // Constant: computable before any input is known (weights, zeros, host constants, and
  // what is computed from them alone), so computed once at build time.
  void mark_constant() {
    for (ir::NodeId id = 0; id < g.size(); ++id) {
      const Op op = g.node(id).op;
      if (provided(id) || op == Op::Input || boundary(id)) continue;
      if (op == Op::Weight || op == Op::Zeros || opaque.how(id) == exec::OpaqueHow::Host) {
        constant[id] = true;
        continue;
      }
      if (op == Op::Noop || op == Op::Num || op == Op::Sym) continue;
      bool all = true;
      for (ir::NodeId c : reads(id)) all = all && constant[c];
      constant[id] = all;
    }
  }

  void* ptr(ir::NodeId id) const {
    const Loc& l = loc[id];
    switch (l.kind) {
      case Loc::Kind::Resident: return static_cast<char*>(resident[static_cast<size_t>(l.buf)].data()) + l.offset;
      case Loc::Kind::Arena: return static_cast<char*>(arena.data()) + planned_offset(l.buf) + l.offset;
      case Loc::Kind::None: break;
    }
    return nullptr;
  }
  std::vector<size_t> offsets;
  size_t planned_offset(int buf) const { return offsets.at(static_cast<size_t>(buf)); }

  Loc new_resident(size_t bytes) {
    resident.emplace_back(bytes);
    return Loc{Loc::Kind::Resident, static_cast<int>(resident.size()) - 1, 0};
  }

  Loc upload_resident(const std::string& what, const TensorType& type, const void* data, size_t bytes) {
    if (type.dtype == DType::Other) throw ExecError(what + ": element type not supported on the GPU executor");
    const size_t want = static_cast<size_t>(num_elements(type.shape)) * dtype_size(type.dtype);
    if (bytes != want)
      throw ExecError(what + ": expected " + shape_str(type.shape) + " (" + std::to_string(want) + " bytes), got " +
                      std::to_string(bytes) + " bytes");
    Loc l = new_resident(bytes);
    upload(ctx, resident.back().data(), data, bytes);
    return l;
  }

  void build_leaf(ir::NodeId id) {
    const ir::Node& n = g.node(id);
    const ValueType& type = g.type(id);
    if (auto p = opts.provided.find(id); p != opts.provided.end()) {
      if (type.kind != Kind::Tensor) throw ExecError("provided value for " + describe(g, id) + " is not a tensor node");
      if (p->second.shape != type.shape())
        throw ExecError("provided value for " + describe(g, id) + " has shape " + shape_str(p->second.shape) +
                        ", expected " + shape_str(type.shape()));
      loc[id] = upload_resident("provided value for " + describe(g, id), TensorType{DType::F32, type.shape()},
                                p->second.data.data(), p->second.size() * sizeof(float));
      return;
    }
    if (boundary(id)) {  // random_boundaries: a random value, not part of the timing
      left_out[opaque.op_type(id)]++;
      loc[id] = new_resident(static_cast<size_t>(cost::value_bytes(type)));
      if (type.kind == Kind::Tensor && type.tensor.dtype == DType::F32)
        fill_random(ctx, resident.back().f32(), static_cast<size_t>(num_elements(type.shape())), 0xb0da + id);
      else
        fill_zero(ctx, resident.back().data(), resident.back().bytes());
      return;
    }
    switch (n.op) {
      case Op::Input: {
        auto leaf = parse_leaf_id(g.node(n.children[0]).sym);
        if (leaf->type.dtype != DType::F32)
          throw ExecError("input '" + leaf->name + "' is " + std::string(dtype_name(leaf->type.dtype)) +
                          "; only float32 inputs can be given to the GPU executor");
        auto it = inputs.find(leaf->name);
        if (it == inputs.end()) throw ExecError("input '" + leaf->name + "' was not supplied");
        if (it->second.shape != leaf->type.shape)
          throw ExecError("input '" + leaf->name + "' has shape " + shape_str(it->second.shape) + ", expected " +
                          shape_str(leaf->type.shape));
        loc[id] = upload_resident("input '" + leaf->name + "'", leaf->type, it->second.data.data(),
                                  it->second.size() * sizeof(float));
        return;
      }
      case Op::Weight: {
        auto leaf = parse_leaf_id(g.node(n.children[0]).sym);
        if (!weights.contains(leaf->name)) throw ExecError("weight '" + leaf->name + "' is not in the weight store");
        const WeightData& w = weights.get(leaf->name);
        if (w.type != leaf->type)
          throw ExecError("weight '" + leaf->name + "' is stored as " + std::string(dtype_name(w.type.dtype)) +
                          shape_str(w.type.shape) + ", the graph expects " + std::string(dtype_name(leaf->type.dtype)) +
                          shape_str(leaf->type.shape));
        loc[id] = upload_resident("weight '" + leaf->name + "'", w.type, w.bytes.data(), w.bytes.size());
        return;
      }
      case Op::Zeros:
        loc[id] = new_resident(static_cast<size_t>(cost::value_bytes(type)));
        fill_zero(ctx, resident.back().data(), resident.back().bytes());
        return;
      default: break;
    }
    const WeightData* c = opaque.constant(id);  // a host constant (opaque shape computation)
    loc[id] = upload_resident(describe(g, id), c->type, c->bytes.data(), c->bytes.size());
  }

  // An alias of an operand's bytes, or nullopt if the node computes.
  std::optional<Loc> alias_of(ir::NodeId id, const std::vector<const ValueType*>& ct) const {
    const ir::Node& n = g.node(id);
    switch (n.op) {
      case Op::Reshape: return loc[n.children[1]];
      case Op::Split0: return loc[n.children[0]];
      case Op::Split1: {
        Loc l = loc[n.children[0]];
        l.offset += static_cast<size_t>(cost::tensor_bytes(g.type(n.children[0]).tuple[0]));
        return l;
      }
      case Op::Transpose:
        if (!has_kernel(n.op, ct)) return loc[n.children[1]];
        return std::nullopt;
      case Op::Opaque:
        if (opaque.how(id) == exec::OpaqueHow::Kernel &&
            std::holds_alternative<exec::opaque::View>(opaque.decoded(id).desc))
          return loc[opaque.data_children(id).at(0)];
        return std::nullopt;
      default: return std::nullopt;
    }
  }

  void build_node(ir::NodeId id) {
    const ir::Node& n = g.node(id);
    if (n.op == Op::Num || n.op == Op::Sym || n.op == Op::Noop) return;
    const bool leaf = provided(id) || boundary(id) || n.op == Op::Input || n.op == Op::Weight || n.op == Op::Zeros ||
                      opaque.how(id) == exec::OpaqueHow::Host;
    if (leaf) return build_leaf(id);
    if (absorbed[id]) return;  // computed by its relu's step
    // A relu that absorbed its conv runs the conv with the relu fused, on the conv's operands.
    const ir::NodeId src = absorbs[id] >= 0 ? static_cast<ir::NodeId>(absorbs[id]) : id;
    const Op op = src == id ? n.op : Op::Conv;
    std::vector<const ValueType*> ct;
    if (src == id)
      for (ir::NodeId c : n.children) ct.push_back(&g.type(c));
    else
      ct = ir::fused_conv_children(g, src);
    for (ir::NodeId c : reads(src))
      if (loc[c].kind == Loc::Kind::None) throw ExecError(describe(g, id) + ": operand " + describe(g, c) + " has no value");
    if (auto a = alias_of(id, ct)) {
      loc[id] = *a;
      return;
    }
    Step s{id, op, ct, nullptr, {}, {}, nullptr};
    int launches = 1;
    if (n.op == Op::Opaque) {
      const auto& d = opaque.decoded(id);
      s.kernel = prepare_opaque(ctx, d, g.type(id).tensor);
      for (ir::NodeId c : opaque.data_children(id)) s.operands.emplace_back(c);
      launches = opaque_launches(d);
    } else {
      s.kernel = prepare(ctx, op, ct);
      for (ir::NodeId c : g.node(src).children) {
        const ValueType& t = g.type(c);
        s.operands.push_back(t.kind == Kind::Tensor || t.kind == Kind::Tuple ? std::optional<ir::NodeId>(c) : std::nullopt);
      }
      launches = std::max(1, cost::op_work(op, ct).kernels);
    }
    const auto bytes = static_cast<size_t>(cost::value_bytes(g.type(id)));
    if (constant[id]) {
      loc[id] = new_resident(bytes);
      const_steps.push_back(std::move(s));
      return;
    }
    const int step = static_cast<int>(steps.size());
    loc[id] = Loc{Loc::Kind::Arena, planner.add(bytes, step), 0};
    for (const auto& o : s.operands)
      if (o && loc[*o].kind == Loc::Kind::Arena) planner.use(loc[*o].buf, step);
    kernel_count += launches;
    s.launches = launches;
    steps.push_back(std::move(s));
  }

  void resolve(Step& s) {
    s.args.clear();
    for (const auto& o : s.operands) s.args.push_back(o ? ptr(*o) : nullptr);
    s.out = ptr(s.id);
  }

  // Conv+Relu as runtimes run them (lang/runtime_fusion.h), unless a value is provided for
  // either or every value must be kept (keep_all).
  void mark_fusions() {
    absorbed.assign(g.size(), false);
    if (opts.keep_all) {
      absorbs.assign(g.size(), -1);
      return;
    }
    absorbs = ir::relu_conv_fusions(g, &needed);
    for (ir::NodeId id = 0; id < g.size(); ++id) {
      const int64_t c = absorbs[id];
      if (c < 0) continue;
      if (provided(id) || provided(static_cast<ir::NodeId>(c))) {
        absorbs[id] = -1;
        continue;
      }
      absorbed[static_cast<size_t>(c)] = true;
    }
  }

  void build() {
    mark_needed();
    mark_constant();
    mark_fusions();
    for (ir::NodeId id = 0; id < g.size(); ++id)
      if (needed[id]) build_node(id);
    for (ir::NodeId o : g.outputs())
      if (loc[o].kind == Loc::Kind::Arena) planner.keep_to_end(loc[o].buf);
    if (opts.keep_all)
      for (ir::NodeId id = 0; id < g.size(); ++id)
        if (loc[id].kind == Loc::Kind::Arena) planner.keep_to_end(loc[id].buf);
    ArenaPlanner::Plan plan = planner.plan();
    offsets = plan.offsets;
    arena_unshared = plan.sum_bytes;
    arena = DeviceBuffer(plan.total_bytes);
    for (Step& s : const_steps) resolve(s);
    for (Step& s : steps) resolve(s);
    for (Step& s : const_steps) s.kernel->run(s.args, s.out);
    ctx.synchronize();
  }
  size_t arena_unshared = 0;

  void launch() {
    for (Step& s : steps) s.kernel->run(s.args, s.out);
  }
};

Program::Program(Context& ctx, const ir::Graph& g, const WeightStore& weights, const Inputs& inputs,
                 const RunOptions& opts, bool random_boundaries)
    : impl_(std::make_unique<Impl>(ctx, g, weights, inputs, opts, random_boundaries)) {
  if (!g.has_root()) throw ExecError("the graph has no root");
  impl_->build();
}

Program::~Program() = default;

void Program::launch() { impl_->launch(); }

void Program::capture() {
  Impl& m = *impl_;
  if (m.graph && m.graph_generation == m.ctx.workspace_generation()) return;
  m.graph.reset();
  m.launch();  // once eagerly first: lazy module loading and first-call choices happen outside the capture
  m.ctx.synchronize();
  m.graph_generation = m.ctx.workspace_generation();
  m.graph = std::make_unique<CudaGraph>(m.ctx, [&] { m.launch(); });
}

void Program::replay() {
  capture();
  impl_->graph->launch();
}

Tensor Program::fetch(ir::NodeId id) const {
  const ValueType& t = impl_->g.type(id);
  if (t.kind != Kind::Tensor || t.tensor.dtype != DType::F32)
    throw ExecError(describe(impl_->g, id) + " is not a float32 tensor");
  if (!has_value(id)) throw ExecError(describe(impl_->g, id) + " has no value");
  Tensor out(t.shape());
  download(impl_->ctx, out.data.data(), impl_->ptr(id), out.size() * sizeof(float));
  return out;
}

bool Program::has_value(ir::NodeId id) const { return impl_->loc[id].kind != Loc::Kind::None; }
int Program::steps() const { return static_cast<int>(impl_->steps.size()); }
void Program::launch_step(int i) {
  Step& s = impl_->steps.at(static_cast<size_t>(i));
  s.kernel->run(s.args, s.out);
}
ir::NodeId Program::step_node(int i) const { return impl_->steps.at(static_cast<size_t>(i)).id; }
int Program::step_kernels(int i) const { return impl_->steps.at(static_cast<size_t>(i)).launches; }
std::string Program::step_detail(int i) const { return impl_->steps.at(static_cast<size_t>(i)).kernel->detail(); }
Op Program::step_op(int i) const { return impl_->steps.at(static_cast<size_t>(i)).op; }
const std::vector<const ValueType*>& Program::step_children(int i) const {
  return impl_->steps.at(static_cast<size_t>(i)).ct;
}
int Program::kernels() const { return impl_->kernel_count; }
size_t Program::arena_bytes() const { return impl_->arena.bytes(); }
size_t Program::arena_unshared_bytes() const { return impl_->arena_unshared; }
size_t Program::resident_bytes() const {
  size_t b = 0;
  for (const auto& r : impl_->resident) b += r.bytes();
  return b;
}
const std::map<std::string, int>& Program::left_out() const { return impl_->left_out; }
bool Program::relaxed_capture() const { return impl_->graph && impl_->graph->relaxed(); }

RunResult run(Context& ctx, const ir::Graph& g, const WeightStore& weights, const Inputs& inputs,
              const RunOptions& opts) {
  Program p(ctx, g, weights, inputs, opts);
  p.launch();
  ctx.synchronize();
  RunResult r;
  for (ir::NodeId o : g.outputs()) r.outputs.push_back(p.fetch(o));
  if (opts.keep_all) {
    for (ir::NodeId id = 0; id < g.size(); ++id) {
      const ValueType& t = g.type(id);
      if (t.kind == Kind::Tensor && t.tensor.dtype == DType::F32 && p.has_value(id)) r.values.emplace(id, p.fetch(id));
    }
  }
  r.peak_bytes = p.arena_bytes();
  return r;
}

RunResult run(const ir::Graph& g, const WeightStore& weights, const Inputs& inputs, const RunOptions& opts) {
  Context ctx;
  return run(ctx, g, weights, inputs, opts);
}

namespace {

Timing describe_program(const Program& p) {
  Timing t;
  t.steps = p.steps();
  t.kernels = p.kernels();
  t.arena_bytes = p.arena_bytes();
  t.arena_unshared_bytes = p.arena_unshared_bytes();
  t.resident_bytes = p.resident_bytes();
  t.left_out = p.left_out();
  return t;
}

// Samples of one mode of one program, appended to `out`; a failure is recorded in `mode`.
void sample(Context& ctx, Program& p, bool graph, int warmup, int repeats, std::vector<double>& out, ModeTiming& mode) {
  if (!mode.error.empty()) return;
  try {
    std::vector<double> s = graph ? ctx.back_to_back_samples_ms([&] { p.replay(); }, warmup, repeats)
                                  : ctx.latency_samples_ms([&] { p.launch(); }, warmup, repeats);
    out.insert(out.end(), s.begin(), s.end());
  } catch (const GpuError& e) {
    if (!graph) throw;  // eager launches failing is an error of the program itself
    mode.error = e.what();
  }
}

void finish(ModeTiming& m, std::vector<double> samples) {
  m.ok = m.error.empty() && !samples.empty();
  if (m.ok) m.stats = summarize(std::move(samples));
}

}  // namespace

Timing time_program(Context& ctx, Program& p, const TimingOptions& o) {
  Timing t = describe_program(p);
  std::vector<double> g, e;
  if (o.eager) sample(ctx, p, false, o.warmup, o.repeats, e, t.eager);
  if (o.graph) sample(ctx, p, true, o.warmup, o.repeats, g, t.graph);
  finish(t.eager, std::move(e));
  finish(t.graph, std::move(g));
  if (!o.graph) t.graph.error = "not timed";
  t.relaxed_capture = p.relaxed_capture();
  return t;
}

std::pair<Timing, Timing> time_pair(Context& ctx, Program& a, Program& b, const TimingOptions& o) {
  std::pair<Timing, Timing> r{describe_program(a), describe_program(b)};
  const int rounds = std::max(1, o.rounds);
  const int per_round = std::max(1, (o.repeats + rounds - 1) / rounds);
  std::vector<double> ga, gb, ea, eb;
  for (int k = 0; k < rounds; ++k) {
    const int warm = k == 0 ? o.warmup : 2;
    // ABBA: the program timed first alternates between rounds.
    Program& first = k % 2 ? b : a;
    Program& second = k % 2 ? a : b;
    auto& ff = k % 2 ? r.second : r.first;
    auto& ss = k % 2 ? r.first : r.second;
    if (o.graph) {
      sample(ctx, first, true, warm, per_round, k % 2 ? gb : ga, ff.graph);
      sample(ctx, second, true, warm, per_round, k % 2 ? ga : gb, ss.graph);
    }
    if (o.eager) {
      sample(ctx, first, false, warm, per_round, k % 2 ? eb : ea, ff.eager);
      sample(ctx, second, false, warm, per_round, k % 2 ? ea : eb, ss.eager);
    }
  }
  finish(r.first.graph, std::move(ga));
  finish(r.second.graph, std::move(gb));
  finish(r.first.eager, std::move(ea));
  finish(r.second.eager, std::move(eb));
  if (!o.graph) r.first.graph.error = r.second.graph.error = "not timed";
  r.first.relaxed_capture = a.relaxed_capture();
  r.second.relaxed_capture = b.relaxed_capture();
  return r;
}

std::vector<StepTime> profile_steps(Context& ctx, Program& p, int warmup, int repeats, bool graph, std::string* why,
                                    bool isolated) {
  auto samples = ctx.step_samples_ms(p.steps(), [&](int i) { p.launch_step(i); }, warmup, repeats, graph, why);
  std::vector<StepTime> out;
  out.reserve(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    StepTime t;
    t.id = p.step_node(static_cast<int>(i));
    t.kernels = p.step_kernels(static_cast<int>(i));
    t.stats = summarize(std::move(samples[i]));
    t.detail = p.step_detail(static_cast<int>(i));
    if (isolated) {
      // As time_op measures an operator: copies back to back in one captured graph (eagerly
      // where the capture fails). Steps are re-run in order, so each one's operands hold their
      // values and the program ends as after launch().
      const int step = static_cast<int>(i);
      constexpr int kCopies = 10;
      auto many = [&] {
        for (int k = 0; k < kCopies; ++k) p.launch_step(step);
      };
      std::vector<double> alone;
      try {
        CudaGraph graph(ctx, many);
        alone = ctx.back_to_back_samples_ms([&] { graph.launch(); }, 3, 20);
      } catch (const GpuError&) {
        alone = ctx.back_to_back_samples_ms(many, 3, 20);
        t.isolated_eager = true;
      }
      t.isolated_ms = summarize(std::move(alone)).median_ms / kCopies;
    }
    out.push_back(std::move(t));
  }
  return out;
}

double time_ms(Context& ctx, const ir::Graph& g, const WeightStore& weights, const Inputs& inputs, int warmup,
               int repeats, const RunOptions& opts) {
  Program p(ctx, g, weights, inputs, opts, true);
  TimingOptions o;
  o.warmup = warmup;
  o.repeats = repeats;
  return time_program(ctx, p, o).primary().stats.median_ms;
}

double time_ms(const ir::Graph& g, const WeightStore& weights, const Inputs& inputs, int warmup, int repeats,
               const RunOptions& opts) {
  Context ctx;
  return time_ms(ctx, g, weights, inputs, warmup, repeats, opts);
}

}  // namespace tensat::gpu
