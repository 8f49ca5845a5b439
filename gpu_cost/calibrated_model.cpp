// The model calibrated to a measured table (see calibrated_model.h).
#include "gpu_cost/calibrated_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

namespace tensat::cost {

namespace {

constexpr double kLabelPenalty = 4.0;   // distance added per differing symbol
constexpr double kDistanceFloor = 0.05;  // neighbour weight 1 / (d + floor)
constexpr double kPriorWeight = 1.0;    // weight of the plain fit (log ratio 0)
constexpr double kMinMs = 1e-4;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

bool memory_bound(Op op) { return op != Op::Conv && op != Op::Matmul; }

// The neighbour features of a signature's children: dimensions and integers on a log scale,
// symbols and tensor ranks as labels that must match (or pay kLabelPenalty).
void features(const Children& c, std::vector<double>& dims, std::vector<std::string>& labels) {
  auto tensor = [&](const TensorType& t) {
    labels.push_back("r" + std::to_string(t.shape.size()));
    for (int64_t d : t.shape) dims.push_back(std::log(static_cast<double>(std::max<int64_t>(d, 1))));
  };
  for (const ValueType* v : c) {
    switch (v->kind) {
      case Kind::Int: dims.push_back(std::log1p(std::fabs(static_cast<double>(v->num)))); break;
      case Kind::Sym: labels.push_back(v->sym); break;
      case Kind::Tensor: tensor(v->tensor); break;
      case Kind::Tuple:
        labels.push_back("t" + std::to_string(v->tuple.size()));
        for (const auto& t : v->tuple) tensor(t);
        break;
    }
  }
}

// Solves the k x k system a x = b (k <= 4) by Gaussian elimination with partial pivoting;
// false if singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const size_t k = b.size();
  for (size_t col = 0; col < k; ++col) {
    size_t piv = col;
    for (size_t r = col + 1; r < k; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[piv][col])) piv = r;
    if (std::fabs(a[piv][col]) < 1e-12) return false;
    std::swap(a[piv], a[col]);
    std::swap(b[piv], b[col]);
    for (size_t r = col + 1; r < k; ++r) {
      double f = a[r][col] / a[col][col];
      for (size_t j = col; j < k; ++j) a[r][j] -= f * a[col][j];
      b[r] -= f * b[col];
    }
  }
  x.assign(k, 0.0);
  for (size_t i = k; i-- > 0;) {
    double s = b[i];
    for (size_t j = i + 1; j < k; ++j) s -= a[i][j] * x[j];
    x[i] = s / a[i][i];
  }
  return true;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

LinearFit fit_linear(const std::vector<Work>& work, const std::vector<double>& ms) {
  // Rows scaled by 1/ms (relative error); columns scaled to unit RMS for conditioning. Exact
  // non-negative least squares over four columns: the best of the 15 column subsets whose
  // unconstrained solution is non-negative (the optimum is one of them).
  constexpr size_t kCols = 4;
  std::vector<std::array<double, kCols>> rows;
  std::vector<double> y;
  for (size_t i = 0; i < work.size(); ++i) {
    if (!(ms[i] > 0)) continue;
    const Work& w = work[i];
    rows.push_back({1.0 / ms[i], (w.kernels - 1) / ms[i], w.flops / ms[i], w.bytes / ms[i]});
    y.push_back(1.0);
  }
  LinearFit best;
  best.samples = rows.size();
  if (rows.empty()) return best;
  std::array<double, kCols> scale{};
  for (size_t j = 0; j < kCols; ++j) {
    double s = 0;
    for (const auto& r : rows) s += r[j] * r[j];
    scale[j] = std::sqrt(s / static_cast<double>(rows.size()));
  }
  double best_err = INFINITY;
  std::array<double, kCols> best_coef{};
  for (unsigned mask = 1; mask < (1u << kCols); ++mask) {
    std::vector<size_t> cols;
    for (size_t j = 0; j < kCols; ++j)
      if ((mask >> j & 1u) && scale[j] > 0) cols.push_back(j);
    if (cols.size() != static_cast<size_t>(__builtin_popcount(mask))) continue;
    const size_t k = cols.size();
    std::vector<std::vector<double>> ata(k, std::vector<double>(k, 0.0));
    std::vector<double> atb(k, 0.0), x;
    for (size_t r = 0; r < rows.size(); ++r)
      for (size_t i = 0; i < k; ++i) {
        double xi = rows[r][cols[i]] / scale[cols[i]];
        atb[i] += xi * y[r];
        for (size_t j = 0; j < k; ++j) ata[i][j] += xi * rows[r][cols[j]] / scale[cols[j]];
      }
    if (!solve(ata, atb, x)) continue;
    if (std::any_of(x.begin(), x.end(), [](double v) { return v < 0; })) continue;
    double err = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      double p = 0;
      for (size_t i = 0; i < k; ++i) p += x[i] * rows[r][cols[i]] / scale[cols[i]];
      err += (p - y[r]) * (p - y[r]);
    }
    if (err < best_err) {
      best_err = err;
      best_coef = {};
      for (size_t i = 0; i < k; ++i) best_coef[cols[i]] = x[i] / scale[cols[i]];
    }
  }
  best.per_call = best_coef[0];
  best.per_extra_kernel = best_coef[1];
  best.per_flop = best_coef[2];
  best.per_byte = best_coef[3];
  return best;
}

CalibratedModel::CalibratedModel(const CostCache::Entries& measured, const DeviceProfile& fallback)
    : roofline_(fallback) {
  for (const auto& [sig, cost] : measured) {
    const auto op = op_from_name(std::string_view(sig).substr(0, sig.find('(')));
    if (!op) {
      ++unknown_ops_;
      continue;
    }
    kinds_[static_cast<size_t>(*op)].measured.emplace_back(sig, cost);
  }
}

CalibratedModel::KindData& CalibratedModel::parsed(size_t k) const {
  KindData& kd = kinds_[k];
  if (kd.parsed) return kd;
  kd.parsed = true;
  std::vector<Work> w;
  std::vector<double> ms;
  for (const auto& [sig, cost] : kd.measured) {
    auto p = parse_signature(sig);
    if (!p || !(cost > 0)) {
      ++unusable_;
      continue;
    }
    Children c = p->pointers();
    Sample s;
    s.work = op_work(p->op, c);
    if (s.work.kernels == 0) {  // ill-typed, or a structural node that costs nothing anyway
      ++unusable_;
      continue;
    }
    features(c, s.dims, s.labels);
    s.ms = cost;
    w.push_back(s.work);
    ms.push_back(cost);
    kd.samples.push_back(std::move(s));
    ++samples_;
  }
  kd.fit = fit_linear(w, ms);
  return kd;
}

CalibratedModel::KindData& CalibratedModel::grouped(size_t k) const {
  KindData& kd = parsed(k);
  if (kd.grouped) return kd;
  kd.grouped = true;
  // Grouped by structure, each group in the table's order (neighbour ties go to the first).
  for (const Sample& s : kd.samples) {
    auto g = std::find_if(kd.groups.begin(), kd.groups.end(),
                          [&](const Group& x) { return x.nd == s.dims.size() && x.nl == s.labels.size(); });
    if (g == kd.groups.end()) {
      kd.groups.push_back({s.dims.size(), s.labels.size(), {}, {}, {}});
      g = kd.groups.end() - 1;
    }
    g->dims.insert(g->dims.end(), s.dims.begin(), s.dims.end());
    for (const std::string& l : s.labels)
      g->labels.push_back(label_ids_.emplace(l, static_cast<uint32_t>(label_ids_.size())).first->second);
    const double a = analytic(static_cast<Op>(k), s.work, nullptr);
    g->log_ratio.push_back(a > 0 ? std::log(s.ms / a) : 0.0);
  }
  return kd;
}

const LinearFit* CalibratedModel::pooled_fit() const {
  if (!pooled_) {
    // The kinds in the table's order (by signature, so by "name("): the same sums as a fit
    // over the table read front to back.
    std::vector<std::pair<std::string, size_t>> order;
    for (size_t k = 0; k < kNumOps; ++k)
      if (memory_bound(static_cast<Op>(k))) order.emplace_back(std::string(op_name(static_cast<Op>(k))) + "(", k);
    std::sort(order.begin(), order.end());
    std::vector<Work> w;
    std::vector<double> ms;
    for (const auto& [name, k] : order) {
      for (const Sample& s : parsed(k).samples) {
        w.push_back(s.work);
        ms.push_back(s.ms);
      }
    }
    pooled_ = fit_linear(w, ms);
  }
  return pooled_->samples >= kMinSamples ? &*pooled_ : nullptr;
}

size_t CalibratedModel::samples() const {
  for (size_t k = 0; k < kNumOps; ++k) parsed(k);
  return samples_;
}

size_t CalibratedModel::unusable() const {
  for (size_t k = 0; k < kNumOps; ++k) parsed(k);
  return unusable_ + unknown_ops_;
}

uint32_t CalibratedModel::label_id(const std::string& label) const {
  auto it = label_ids_.find(label);
  return it == label_ids_.end() ? kNoLabel : it->second;
}

const LinearFit* CalibratedModel::kind_fit(Op op) const {
  const LinearFit& f = parsed(static_cast<size_t>(op)).fit;
  return f.samples >= kMinSamples ? &f : nullptr;
}

double CalibratedModel::analytic(Op op, const Work& w, std::string* by) const {
  if (const LinearFit* f = kind_fit(op)) {
    if (by) *by = "fit:" + std::string(op_name(op));
    return f->predict(w);
  }
  if (memory_bound(op) && pooled_fit()) {
    if (by) *by = "fit:memory-bound";
    return pooled_->predict(w);
  }
  if (by) *by = "roofline:" + roofline_.profile().name;
  return roofline_ms(w, roofline_.profile());
}

CalibratedModel::Estimate CalibratedModel::estimate(Op op, const Children& c, bool neighbours) const {
  Estimate e;
  const Work w = op_work(op, c);
  double ms = analytic(op, w, &e.by);
  if (neighbours) {
    std::vector<double> dims;
    std::vector<std::string> label_names;
    features(c, dims, label_names);
    const auto& groups = grouped(static_cast<size_t>(op)).groups;
    // The measurements of the same structure (one group at most).
    const auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
      return x.nd == dims.size() && x.nl == label_names.size();
    });
    if (g != groups.end()) {
      std::vector<uint32_t> labels;
      for (const std::string& l : label_names) labels.push_back(label_id(l));
      // The kNeighbours nearest (distance, then table order), kept sorted.
      std::array<std::pair<double, size_t>, kNeighbours> near{};
      size_t k = 0;
      for (size_t i = 0; i < g->log_ratio.size(); ++i) {
        const double* sd = g->dims.data() + i * g->nd;
        const uint32_t* sl = g->labels.data() + i * g->nl;
        // The partial sums only grow: a sample stops counting once it is no nearer than the
        // k-th nearest so far (same sums, same order, so the same neighbours).
        const double worst = k == kNeighbours ? near[k - 1].first : kInfinity;
        double d = 0;
        size_t j = 0;
        for (; j < g->nd && d < worst; ++j) d += (dims[j] - sd[j]) * (dims[j] - sd[j]);
        if (j < g->nd) continue;
        for (j = 0; j < g->nl; ++j)
          if (labels[j] != sl[j]) d += kLabelPenalty;
        if (!(d < worst)) continue;
        size_t at = k < kNeighbours ? k++ : k - 1;
        for (; at > 0 && d < near[at - 1].first; --at) near[at] = near[at - 1];
        near[at] = {d, i};
      }
      double wsum = kPriorWeight, lsum = 0;
      for (size_t i = 0; i < k; ++i) {
        double wt = 1.0 / (near[i].first + kDistanceFloor);
        wsum += wt;
        lsum += wt * g->log_ratio[near[i].second];
      }
      if (k > 0) {
        ms *= std::exp(lsum / wsum);
        e.by += " + " + std::to_string(k) + (k == 1 ? " neighbour" : " neighbours");
      }
    }
  }
  e.ms = std::max(ms, kMinMs);
  return e;
}

bool held_out(const std::string& signature) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char ch : signature) h = (h ^ ch) * 0x100000001b3ULL;
  return h % 5 == 0;
}

FitReport held_out_fit_report(const CostCache::Entries& measured, const DeviceProfile& fallback) {
  CostCache::Entries train, test;
  for (const auto& [sig, ms] : measured) (held_out(sig) ? test : train).emplace(sig, ms);
  CalibratedModel model(train, fallback);
  FitReport rep;
  rep.signatures = measured.size();
  rep.unusable = model.unusable();
  struct Errors {
    std::vector<double> analytic, calibrated;
    std::string by;
    size_t train = 0;
  };
  std::map<std::string, Errors> by_kind;
  std::map<std::string, Op> ops;
  for (const auto& [sig, ms] : train)
    if (auto p = parse_signature(sig)) ++by_kind[std::string(op_name(p->op))].train;
  for (const auto& [sig, ms] : test) {
    auto p = parse_signature(sig);
    if (!p || !(ms > 0) || op_work(p->op, p->pointers()).kernels == 0) {
      ++rep.unusable;
      continue;
    }
    Children c = p->pointers();
    auto a = model.estimate(p->op, c, /*neighbours=*/false);
    auto e = model.estimate(p->op, c);
    Errors& err = by_kind[std::string(op_name(p->op))];
    ops[std::string(op_name(p->op))] = p->op;
    err.analytic.push_back(std::fabs(a.ms - ms) / ms);
    err.calibrated.push_back(std::fabs(e.ms - ms) / ms);
    err.by = a.by;
  }
  for (const auto& [kind, err] : by_kind) {
    if (err.calibrated.empty()) continue;
    KindFitQuality q;
    q.kind = kind;
    q.train = err.train;
    q.held_out = err.calibrated.size();
    q.analytic_median = quantile(err.analytic, 0.5);
    q.analytic_p90 = quantile(err.analytic, 0.9);
    q.median = quantile(err.calibrated, 0.5);
    q.p90 = quantile(err.calibrated, 0.9);
    q.by = err.by;
    if (const LinearFit* f = model.kind_fit(ops.at(kind))) q.fit = *f;
    rep.kinds.push_back(std::move(q));
  }
  return rep;
}

}  // namespace tensat::cost
