// The engine's compact data structures, each against a plain reference: SmallVec (inline
// child and e-node lists), IdTable (the hash-cons), the packed class runs, the compiled
// matcher, the snapshot-based cycle check and the multi-pattern join.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <unordered_map>

#include "egraph/cycle_filter.h"
#include "egraph/ematch.h"
#include "egraph/id_table.h"
#include "egraph/multi_pattern.h"
#include "egraph/small_vec.h"
#include "helpers.h"

namespace tensat {
namespace {

using testing::Built;
using testing::build;

// ---- SmallVec ------------------------------------------------------------------------------

using Vec3 = SmallVec<uint32_t, 3>;

std::vector<uint32_t> as_vector(const Vec3& v) { return std::vector<uint32_t>(v.begin(), v.end()); }

TEST(SmallVec, PushBackOfOwnElementAcrossGrowth) {
  // push_back(v[i]) when the vector is full: growing frees the old storage the argument
  // refers to (std::vector handles this; so must SmallVec). Both the inline -> heap and the
  // heap -> larger heap step. Without the fix this reads freed memory, which valgrind reports
  // (`valgrind build/tests/egraph/test_egraph --gtest_filter=SmallVec.*`).
  Vec3 v{10, 11, 12};
  v.push_back(v[1]);  // inline, full
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[3], 11u);
  v.push_back(v[0]);
  v.push_back(v[2]);  // size 6 == capacity 6: heap, full
  ASSERT_EQ(v.size(), 6u);
  v.push_back(v[5]);
  EXPECT_EQ(as_vector(v), (std::vector<uint32_t>{10, 11, 12, 11, 10, 12, 12}));
}

TEST(SmallVec, InlineUpToNThenHeap) {
  Vec3 v;
  EXPECT_TRUE(v.empty());
  for (uint32_t i = 0; i < 3; ++i) v.push_back(i);
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(v.capacity(), 3u);
  v.push_back(3);
  EXPECT_FALSE(v.is_inline());
  for (uint32_t i = 4; i < 20; ++i) v.push_back(i);
  ASSERT_EQ(v.size(), 20u);
  for (uint32_t i = 0; i < 20; ++i) EXPECT_EQ(v[i], i);
  EXPECT_EQ(v.front(), 0u);
  EXPECT_EQ(v.back(), 19u);
  v.pop_back();
  EXPECT_EQ(v.back(), 18u);
  v.clear();  // keeps the heap block
  EXPECT_TRUE(v.empty());
  EXPECT_FALSE(v.is_inline());
}

TEST(SmallVec, CopyAndMoveInlineAndHeap) {
  for (uint32_t n : {0u, 2u, 3u, 4u, 9u}) {
    Vec3 a;
    for (uint32_t i = 0; i < n; ++i) a.push_back(i * 7);
    Vec3 b(a);  // copy
    EXPECT_EQ(b, a);
    EXPECT_EQ(as_vector(b), as_vector(a));
    if (n > 0) {
      b[0] = 99;
      EXPECT_NE(a[0], 99u) << "a copy shares no storage";
    }
    Vec3 c(std::move(b));  // move
    EXPECT_TRUE(b.empty());
    EXPECT_EQ(c.size(), n);
    Vec3 d;
    d.push_back(1);
    d = c;  // copy-assign over an inline vector
    EXPECT_EQ(d, c);
    Vec3 e;
    for (uint32_t i = 0; i < 10; ++i) e.push_back(i);
    e = std::move(d);  // move-assign over a heap vector
    EXPECT_EQ(e, c);
    e = e;  // self-assignment keeps the elements
    EXPECT_EQ(e, c);
  }
}

TEST(SmallVec, EqualityAppendEraseResize) {
  Vec3 a{1, 2, 3}, b{1, 2, 3}, c{1, 2}, d{1, 2, 4};
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  const uint32_t more[] = {4, 5, 6, 7, 8};
  a.append(more, more + 5);
  EXPECT_EQ(as_vector(a), (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  a.erase_if([](uint32_t x) { return x % 2 == 0; });
  EXPECT_EQ(as_vector(a), (std::vector<uint32_t>{1, 3, 5, 7}));
  a.resize(2);
  EXPECT_EQ(as_vector(a), (std::vector<uint32_t>{1, 3}));
  a.resize(5, 9);
  EXPECT_EQ(as_vector(a), (std::vector<uint32_t>{1, 3, 9, 9, 9}));
  SmallVec<uint32_t, 3> from_vector(std::vector<uint32_t>{4, 5, 6, 7});
  EXPECT_EQ(as_vector(from_vector), (std::vector<uint32_t>{4, 5, 6, 7}));
}

TEST(SmallVec, RandomOperationsAgreeWithVector) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    Vec3 v;
    std::vector<uint32_t> ref;
    for (int step = 0; step < 60; ++step) {
      switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0:
        case 1: {
          uint32_t x = static_cast<uint32_t>(rng() % 100);
          v.push_back(x);
          ref.push_back(x);
          break;
        }
        case 2:
          if (!ref.empty()) {
            v.pop_back();
            ref.pop_back();
          }
          break;
        case 3: {
          uint32_t m = static_cast<uint32_t>(rng() % 3);
          v.erase_if([&](uint32_t x) { return x % 3 == m; });
          std::erase_if(ref, [&](uint32_t x) { return x % 3 == m; });
          break;
        }
        case 4: {
          Vec3 copy = v;  // round trip through a copy and a move
          v = std::move(copy);
          break;
        }
        case 5: {
          const uint32_t extra[] = {static_cast<uint32_t>(step), 1000};
          v.append(extra, extra + 2);
          ref.insert(ref.end(), extra, extra + 2);
          break;
        }
      }
      ASSERT_EQ(as_vector(v), ref) << "round " << round << " step " << step;
    }
  }
}

// ---- IdTable -------------------------------------------------------------------------------

// Keys with deliberately few distinct hashes: long probe runs, deletions inside them and
// runs that wrap around the end of the table.
uint64_t weak_hash(uint32_t key) { return (key % 5) * 0x9e3779b97f4a7c15ULL + 0xfffffff0u; }

TEST(IdTable, InsertFindEraseAgainstAMap) {
  std::mt19937 rng(99);
  IdTable t;
  std::set<uint32_t> ref;
  auto find = [&](uint32_t key) { return t.find(weak_hash(key), [&](uint32_t id) { return id == key; }); };
  for (int step = 0; step < 20000; ++step) {
    uint32_t key = static_cast<uint32_t>(rng() % 700);
    if (rng() % 3 != 0) {
      if (!ref.count(key)) {
        t.insert(key, weak_hash(key));
        ref.insert(key);
      }
    } else {
      EXPECT_EQ(t.erase(key, weak_hash(key)), ref.erase(key) == 1) << "step " << step;
    }
    if (step % 97 == 0) {
      ASSERT_EQ(t.size(), ref.size());
      for (uint32_t k = 0; k < 700; ++k)
        ASSERT_EQ(find(k), ref.count(k) ? k : IdTable::kNone) << "key " << k << " step " << step;
      std::set<uint32_t> listed;
      t.for_each([&](uint32_t id) { listed.insert(id); });
      ASSERT_EQ(listed, ref);
    }
  }
}

TEST(IdTable, EqualityDecidesAmongEqualHashes) {
  IdTable t;
  for (uint32_t id = 0; id < 10; ++id) t.insert(id, 42);  // all collide
  for (uint32_t id = 0; id < 10; ++id)
    EXPECT_EQ(t.find(42, [&](uint32_t x) { return x == id; }), id);
  EXPECT_EQ(t.find(42, [](uint32_t) { return false; }), IdTable::kNone);
  EXPECT_EQ(t.find(43, [](uint32_t) { return true; }), IdTable::kNone);
  EXPECT_TRUE(t.erase(3, 42));
  EXPECT_FALSE(t.erase(3, 42));
  EXPECT_EQ(t.find(42, [](uint32_t x) { return x == 9; }), 9u);  // behind the hole
}

// ---- packed class runs and hash-cons after unions --------------------------------------------

TEST(PackedRuns, FollowMergesAndRecanonicalization) {
  Built b;
  build(b, {"(ewadd (relu (input a@4)) (relu (input b@4)))", "(tanh (input a@4))"});
  EGraph& eg = b.eg;
  EClassId a = *eg.lookup(ENode::make(Op::Input, {*eg.lookup_sym("a@4")}));
  EClassId bb = *eg.lookup(ENode::make(Op::Input, {*eg.lookup_sym("b@4")}));
  eg.merge(a, bb);  // the two relus become congruent, then the ewadd's children are equal
  eg.rebuild();
  ASSERT_EQ(eg.check_invariants(), "");
  EClassId relu = *eg.lookup(ENode::make(Op::Relu, {a}));
  EClassId add = eg.find(b.terms[0]);
  std::vector<EGraph::PackedNode> run;
  for (const EGraph::PackedNode pn : eg.class_nodes(add)) run.push_back(pn);
  ASSERT_EQ(run.size(), 1u);
  EXPECT_EQ(run[0].op, Op::Ewadd);
  ASSERT_EQ(run[0].nkids, 2u);
  EXPECT_EQ(run[0].kids[0], relu);  // re-canonicalized in the packed copy too
  EXPECT_EQ(run[0].kids[1], relu);
  // The merged input class lists both inputs, sorted by operator then id.
  std::vector<ENodeId> inputs;
  for (const EGraph::PackedNode pn : eg.class_nodes(eg.find(a))) inputs.push_back(pn.id);
  EXPECT_EQ(inputs.size(), 2u);
  EXPECT_TRUE(std::is_sorted(inputs.begin(), inputs.end()));
  EXPECT_EQ(eg.num_nodes(), eg.node_capacity() - 1);  // one relu died
}

// ---- compiled matcher against a plain recursive one ------------------------------------------

using Subst = std::map<int, uint32_t>;

// All matches of pattern node `pi` in class `cls` extending `s`, in the order the engine
// promises: the class's e-nodes in order, children left to right (first child outermost).
void reference_match(const EGraph& eg, const Pattern& p, int pi, EClassId cls, const Subst& s,
                     std::vector<Subst>& out) {
  const PatNode& pn = p.nodes[static_cast<size_t>(pi)];
  if (pn.kind == PatNode::Kind::Var) {
    auto it = s.find(pn.var);
    if (it != s.end()) {
      if (it->second == cls.v) out.push_back(s);
      return;
    }
    Subst t = s;
    t[pn.var] = cls.v;
    out.push_back(t);
    return;
  }
  if (pn.kind != PatNode::Kind::Op) {
    auto lit = pn.kind == PatNode::Kind::Num ? eg.lookup_num(pn.num) : eg.lookup_sym(pn.sym);
    if (lit && *lit == cls) out.push_back(s);
    return;
  }
  for (ENodeId n : eg.eclass(cls).nodes) {
    const ENode& en = eg.node(n);
    if (en.op != pn.op || eg.is_filtered(n)) continue;
    std::vector<int> kids(pn.children.begin(), pn.children.end());
    std::vector<size_t> pos;
    for (size_t j = 0; j < kids.size(); ++j) pos.push_back(pn.split_auto && j == 1 ? 2 : j);
    if (en.children.size() != (pn.split_auto ? 3u : kids.size())) continue;
    std::vector<Subst> partial{s};
    for (size_t j = 0; j < kids.size(); ++j) {
      std::vector<Subst> next;
      for (const Subst& t : partial) reference_match(eg, p, kids[j], eg.find(en.children[pos[j]]), t, next);
      partial = std::move(next);
    }
    out.insert(out.end(), partial.begin(), partial.end());
  }
}

TEST(CompiledPattern, SameMatchesInTheSameOrderAsAReference) {
  Built b;
  build(b, {"(ewadd (input x@4_4) (input x@4_4))", "(ewadd (input x@4_4) (relu (input x@4_4)))",
            "(ewadd (relu (input y@4_4)) (relu (input y@4_4)))",
            "(matmul none (ewadd (input x@4_4) (input y@4_4)) (weight w@4_4) none)",
            "(matmul relu (input y@4_4) (matmul none (input x@4_4) (weight w@4_4) none) none)",
            "(concat 1 (matmul none (input x@4_4) (weight w@4_4) none) (matmul none (input x@4_4) (weight v@4_4) none))",
            "(split_0 (split 1 3 (concat 1 (input x@4_4) (weight v@4_4))))"});
  EGraph& eg = b.eg;
  // More e-nodes per class: a few unions of equal types.
  EClassId x = *eg.lookup(ENode::make(Op::Input, {*eg.lookup_sym("x@4_4")}));
  EClassId y = *eg.lookup(ENode::make(Op::Input, {*eg.lookup_sym("y@4_4")}));
  EClassId rx = *eg.lookup(ENode::make(Op::Relu, {x}));
  eg.merge(rx, *eg.lookup(ENode::make(Op::Relu, {y})));
  eg.merge(b.terms[0], b.terms[1]);
  eg.rebuild();
  ASSERT_EQ(eg.check_invariants(), "");
  const char* patterns[] = {
      "(ewadd ?a ?b)",
      "(ewadd ?a ?a)",                               // a variable twice in one node
      "(ewadd ?a (relu ?a))",                        // ... at two nodes
      "(ewadd (relu ?a) (relu ?b))",
      "(ewadd (relu ?a) (relu ?a))",
      "(matmul ?act ?x ?w none)",
      "(matmul none (ewadd ?a ?b) ?w ?bias)",
      "(matmul ?act ?a (matmul none ?b ?c none) ?bias)",
      "(concat 1 (matmul ?act ?x ?w1 none) (matmul ?act ?x ?w2 none))",
      "(concat ?ax (matmul ?act ?x ?w1 ?b) (matmul ?act ?y ?w2 ?b))",
      "(split_0 (split 1 ?x))",
      "(split_0 (split ?ax ?pos (concat ?ax ?a ?b)))",
      "(relu ?x)",
      "(tanh ?x)",
  };
  for (const char* text : patterns) {
    VarTable vars;
    Pattern p = compile_pattern(parse_sexpr(text), vars, false);
    Matches m(vars.size());
    search_pattern(eg, p, vars.size(), m);
    std::vector<std::pair<uint32_t, Subst>> got, want;
    for (size_t i = 0; i < m.size(); ++i) {
      Subst s;
      for (size_t v = 0; v < vars.size(); ++v) s[static_cast<int>(v)] = m.subst(i)[v].v;
      got.push_back({m.root(i).v, s});
    }
    for (EClassId c : eg.classes_with_op(p.root().op)) {
      std::vector<Subst> out;
      reference_match(eg, p, p.root_index(), c, {}, out);
      for (auto& s : out) want.push_back({c.v, s});
    }
    EXPECT_EQ(got, want) << text;
    // Compiled once, searched in chosen roots: the same as searching everything there.
    CompiledPattern cp(p, vars.size());
    Matches some(vars.size());
    std::vector<EClassId> roots(eg.classes_with_op(p.root().op).rbegin(), eg.classes_with_op(p.root().op).rend());
    search_compiled_in(eg, cp, roots, some, {});
    EXPECT_EQ(some.size(), m.size()) << text;
  }
}

// ---- snapshot-based cycle check --------------------------------------------------------------

// After random new nodes and unions in one "iteration", the post-pass decided from the
// snapshot filters exactly what the plain walk filters.
TEST(CycleCheck, SnapshotVerdictMatchesTheWalk) {
  std::mt19937 rng(2024);
  size_t cyclic_rounds = 0, acyclic_rounds = 0, walked = 0;
  for (int round = 0; round < 300; ++round) {
    EGraph eg;
    std::vector<EClassId> ts;
    for (int i = 0; i < 3; ++i) ts.push_back(eg.add(ENode::make(Op::Input, {eg.add_sym("in" + std::to_string(i) + "@4")})));
    auto pick = [&] { return ts[std::uniform_int_distribution<size_t>(0, ts.size() - 1)(rng)]; };
    for (int i = 0; i < 12; ++i) {
      if (rng() % 2) ts.push_back(eg.add(ENode::make(Op::Relu, {pick()})));
      else ts.push_back(eg.add(ENode::make(Op::Ewadd, {pick(), pick()})));
    }
    eg.rebuild();
    CycleFilter f(CycleFilterMode::Efficient);
    f.remove_cycles(eg);  // acyclic to start with
    std::vector<EClassId> n0, d0;
    eg.take_touched(n0, d0);
    for (int iter = 0; iter < 3; ++iter) {
      f.begin_iteration(eg);
      const int adds = static_cast<int>(rng() % 4), unions = static_cast<int>(rng() % 3);
      for (int i = 0; i < adds; ++i) ts.push_back(eg.add(ENode::make(rng() % 2 ? Op::Tanh : Op::Sigmoid, {pick()})));
      for (int i = 0; i < unions; ++i) eg.merge(pick(), pick());
      eg.rebuild();
      EGraph copy = eg;  // the reference walks a copy with its own filter
      CycleFilter ref(CycleFilterMode::Efficient);
      const size_t want = ref.remove_new_cycles(copy, copy.touched_nodes());
      const size_t got = f.remove_new_cycles_after_iteration(eg, eg.touched_nodes());
      ASSERT_EQ(got, want) << "round " << round << " iteration " << iter;
      ASSERT_EQ(eg.filtered(), copy.filtered()) << "round " << round << " iteration " << iter;
      ASSERT_TRUE(is_acyclic(eg));
      (want ? cyclic_rounds : acyclic_rounds)++;
      eg.take_touched(n0, d0);
    }
    walked += f.post_passes_walked();
  }
  EXPECT_GT(cyclic_rounds, 20u);  // both verdicts were exercised
  EXPECT_GT(acyclic_rounds, 20u);
  EXPECT_EQ(walked, 0u);  // the snapshot was acyclic every time: always decided from it
}

// ---- multi-pattern join ----------------------------------------------------------------------

// The join over all shared variables enumerates exactly the filtered Cartesian product, in
// the product's order.
TEST(MultiPatternJoin, SameCombinationsAsTheFilteredProduct) {
  Built b;
  build(b, {"(matmul none (input x@4_4) (weight w1@4_4) none)", "(matmul none (input x@4_4) (weight w2@4_4) none)",
            "(matmul relu (input x@4_4) (weight w3@4_4) none)", "(matmul none (input y@4_4) (weight w1@4_4) none)",
            "(matmul none (input y@4_4) (weight w4@4_4) none)", "(relu (input x@4_4))", "(relu (input y@4_4))"});
  EGraph& eg = b.eg;
  eg.rebuild();
  // Sides share ?act and ?x (two variables), and a third side shares ?x only.
  Rewrite rw = compile_rewrite(testing::spec(
      "three", {"(matmul ?act ?x ?w1 none)", "(matmul ?act ?x ?w2 none)", "(relu ?x)"},
      {"(matmul ?act ?x ?w1 none)", "(matmul ?act ?x ?w2 none)", "(relu ?x)"}));
  MultiPatternSearcher mps({&rw});
  mps.search(eg);
  std::vector<std::vector<uint32_t>> got;
  mps.for_each_combination(0, [&](const EClassId* roots, const EClassId* subst) {
    std::vector<uint32_t> c;
    for (size_t i = 0; i < 3; ++i) c.push_back(roots[i].v);
    for (size_t v = 0; v < rw.nvars(); ++v) c.push_back(subst[v].v);
    got.push_back(c);
  });
  // Reference: every triple of side matches, kept when the variables agree and the roots differ.
  std::vector<Matches> side(3);
  std::vector<std::vector<int>> var_maps(3);
  for (size_t i = 0; i < 3; ++i) {
    Pattern canon = canonicalize_pattern(rw.lhs[i], &var_maps[i]);
    side[i] = Matches(var_maps[i].size());
    search_pattern(eg, canon, var_maps[i].size(), side[i]);
  }
  std::vector<std::vector<uint32_t>> want;
  for (size_t m0 = 0; m0 < side[0].size(); ++m0)
    for (size_t m1 = 0; m1 < side[1].size(); ++m1)
      for (size_t m2 = 0; m2 < side[2].size(); ++m2) {
        const size_t ms[3] = {m0, m1, m2};
        std::vector<EClassId> subst(rw.nvars());
        bool ok = side[0].root(m0) != side[1].root(m1) && side[0].root(m0) != side[2].root(m2) &&
                  side[1].root(m1) != side[2].root(m2);
        for (size_t i = 0; i < 3 && ok; ++i)
          for (size_t j = 0; j < var_maps[i].size() && ok; ++j) {
            EClassId& slot = subst[static_cast<size_t>(var_maps[i][j])];
            EClassId c = side[i].subst(ms[i])[j];
            if (!slot.valid()) slot = c;
            else ok = slot == c;
          }
        if (!ok) continue;
        std::vector<uint32_t> c{side[0].root(m0).v, side[1].root(m1).v, side[2].root(m2).v};
        for (EClassId s : subst) c.push_back(s.v);
        want.push_back(c);
      }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.size(), 4u);  // (w1, w2) and (w2, w1) on x, (w1, w4) and (w4, w1) on y
}

}  // namespace
}  // namespace tensat
