// The model calibrated to a measured table (see calibrated_model.h).
#include "gpu_cost/calibrated_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

namespace tensat::cost {

namespace {

constexpr double kLabelPenalty = 4.0;   // distance added per differing symbol
constexpr double kDistanceFloor = 0.05;  // neighbour weight 1 / (d + floor)
constexpr double kPriorWeight = 1.0;    // weight of the plain fit (log ratio 0)
constexpr double kMinMs = 1e-4;

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
  std::array<std::vector<double>, kNumOps> ms;
  std::vector<Work> pooled_work;
  std::vector<double> pooled_ms;
  for (const auto& [sig, cost] : measured) {
    auto parsed = parse_signature(sig);
    if (!parsed || !(cost > 0)) {
      ++unusable_;
      continue;
    }
    Children c = parsed->pointers();
    Sample s;
    s.work = op_work(parsed->op, c);
    if (s.work.kernels == 0) {  // ill-typed, or a structural node that costs nothing anyway
      ++unusable_;
      continue;
    }
    features(c, s.dims, s.labels);
    auto k = static_cast<size_t>(parsed->op);
    kinds_[k].samples.push_back(std::move(s));
    ms[k].push_back(cost);
    if (memory_bound(parsed->op)) {
      pooled_work.push_back(kinds_[k].samples.back().work);
      pooled_ms.push_back(cost);
    }
    ++samples_;
  }
  pooled_ = fit_linear(pooled_work, pooled_ms);
  for (size_t k = 0; k < kNumOps; ++k) {
    KindData& kd = kinds_[k];
    std::vector<Work> w;
    for (const auto& s : kd.samples) w.push_back(s.work);
    kd.fit = fit_linear(w, ms[k]);
    for (size_t i = 0; i < kd.samples.size(); ++i) {
      double a = analytic(static_cast<Op>(k), kd.samples[i].work, nullptr);
      kd.samples[i].log_ratio = a > 0 ? std::log(ms[k][i] / a) : 0.0;
    }
  }
}

const LinearFit* CalibratedModel::kind_fit(Op op) const {
  const LinearFit& f = kinds_[static_cast<size_t>(op)].fit;
  return f.samples >= kMinSamples ? &f : nullptr;
}

double CalibratedModel::analytic(Op op, const Work& w, std::string* by) const {
  if (const LinearFit* f = kind_fit(op)) {
    if (by) *by = "fit:" + std::string(op_name(op));
    return f->predict(w);
  }
  if (memory_bound(op) && pooled_fit()) {
    if (by) *by = "fit:memory-bound";
    return pooled_.predict(w);
  }
  if (by) *by = "roofline:" + roofline_.profile().name;
  return roofline_ms(w, roofline_.profile());
}

CalibratedModel::Estimate CalibratedModel::estimate(Op op, const Children& c, bool neighbours) const {
  Estimate e;
  const Work w = op_work(op, c);
  double ms = analytic(op, w, &e.by);
  const auto& samples = kinds_[static_cast<size_t>(op)].samples;
  if (neighbours && !samples.empty()) {
    std::vector<double> dims;
    std::vector<std::string> labels;
    features(c, dims, labels);
    std::vector<std::pair<double, size_t>> near;  // (distance, sample)
    for (size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      if (s.dims.size() != dims.size() || s.labels.size() != labels.size()) continue;
      double d = 0;
      for (size_t j = 0; j < dims.size(); ++j) d += (dims[j] - s.dims[j]) * (dims[j] - s.dims[j]);
      for (size_t j = 0; j < labels.size(); ++j)
        if (labels[j] != s.labels[j]) d += kLabelPenalty;
      near.emplace_back(d, i);
    }
    const size_t k = std::min(kNeighbours, near.size());
    std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
    double wsum = kPriorWeight, lsum = 0;
    for (size_t i = 0; i < k; ++i) {
      double wt = 1.0 / (near[i].first + kDistanceFloor);
      wsum += wt;
      lsum += wt * samples[near[i].second].log_ratio;
    }
    if (k > 0) {
      ms *= std::exp(lsum / wsum);
      e.by += " + " + std::to_string(k) + (k == 1 ? " neighbour" : " neighbours");
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
