// Helpers for the refexec tests: running a term, checking every node's shape against
// types.cpp, and comparing tensors.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_map>

#include "lang/sexpr.h"
#include "refexec/executor.h"

namespace tensat::refexec::testing {

using Inputs = std::unordered_map<std::string, Tensor>;

/// Runs g with the given root, keeping all values, and checks that every computed node's
/// shape is the one shape inference gave it.
inline RunResult run_checked(ir::Graph& g, ir::NodeId root, const WeightStore& w,
                             const Inputs& in, RunOptions opts = {}) {
  g.set_root(root);
  opts.keep_all = true;
  RunResult r = run(g, w, in, opts);
  for (const auto& [id, t] : r.values) {
    EXPECT_EQ(shape_str(t.shape), shape_str(g.type(id).shape())) << "node %" << id;
    EXPECT_EQ(t.data.size(), static_cast<size_t>(num_elements(t.shape)));
  }
  auto outs = g.outputs();
  EXPECT_EQ(r.outputs.size(), outs.size());
  for (size_t i = 0; i < outs.size() && i < r.outputs.size(); ++i)
    EXPECT_EQ(shape_str(r.outputs[i].shape), shape_str(g.type(outs[i]).shape()));
  return r;
}

/// Parses `term` into a fresh graph and returns its single output.
inline Tensor eval_term(const std::string& term, const Inputs& in, const WeightStore& w = {}) {
  ir::Graph g;
  ir::NodeId root = parse_term(g, term);
  RunResult r = run_checked(g, root, w, in);
  return r.outputs.at(0);
}

inline void expect_tensor(const Tensor& t, const Shape& shape, const std::vector<float>& want,
                          float tol = 1e-5f) {
  ASSERT_EQ(shape_str(t.shape), shape_str(shape));
  ASSERT_EQ(t.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.data[i], want[i], tol) << "element " << i;
}

/// Max |a-b| relative to max(1, |b|), elementwise; shapes must match.
inline void expect_close(const Tensor& got, const Tensor& want, float tol = 1e-4f) {
  ASSERT_EQ(shape_str(got.shape), shape_str(want.shape));
  ASSERT_EQ(got.data.size(), want.data.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    float d = std::fabs(got.data[i] - want.data[i]);
    if (!(d <= tol * std::max(1.0f, std::fabs(want.data[i])))) {
      if (++bad <= 5) ADD_FAILURE() << "element " << i << ": " << got.data[i] << " vs " << want.data[i];
    }
  }
  EXPECT_EQ(bad, 0u);
}

inline Tensor tensor(Shape s, std::vector<float> d) { return Tensor(std::move(s), std::move(d)); }

}  // namespace tensat::refexec::testing
