// onnx-tensat-prove: does a rule set prove two terms equal? (egg's test_fn, as a command.)
//
//   onnx-tensat-prove --lhs '(matmul none ?a (matmul none ?b ?c none) none)'
//                     --rhs '(matmul none (matmul none ?a ?b none) ?c none)'
//                     --shape ?a=8x4 --shape ?b=4x6 --shape ?c=6x2       (one command line)
//   onnx-tensat-prove --rules-file rules/matmul.rules --rule matmul-assoc
//   onnx-tensat-prove --rules-file graph_subst.pb --rule taso-17 --rules rules/ --json
//   onnx-tensat-prove --taso graph_subst.pb          # which TASO substitutions our rules derive
//   onnx-tensat-prove --import graph_subst.pb        # TASO's rules in our format + what is not
//
// The rule set proving is our text rules unless --rules (repeatable: .rules, .pb, or a folder)
// says otherwise. Variables become fresh input leaves of the shapes given by --shape
// (--weight-shape for weight leaves); without shapes, they are chosen by search (the rule
// harness's shape generator). Exit status: 0 proved (all, for --taso), 1 not proved, 2 bad input.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "egraph/rewrite.h"
#include "lang/sexpr.h"
#include "rules/taso/instances.h"
#include "rules/taso/prover.h"
#include "rules/taso/rule_files.h"
#include "rules/taso/taso_rules.h"
#include "support/blas_threads.h"

using namespace tensat;
using namespace tensat::taso;

namespace {

bool parse_shape_arg(const std::string& arg, bool weight, std::map<std::string, VarShape>& out, std::string* why) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    *why = "expected ?VAR=D1xD2x..., got '" + arg + "'";
    return false;
  }
  std::string name = arg.substr(0, eq), dims = arg.substr(eq + 1);
  if (name[0] != '?') name = "?" + name;
  VarShape vs;
  vs.weight = weight;
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t x = dims.find('x', pos);
    std::string d = dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    try {
      size_t used = 0;
      long long v = std::stoll(d, &used);
      if (used != d.size() || v <= 0) throw std::invalid_argument(d);
      vs.shape.push_back(v);
    } catch (...) {
      *why = "bad dimension '" + d + "' in " + arg;
      return false;
    }
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  out[name] = vs;
  return true;
}

void print_result(const ProveResult& r, const Goal& goal, bool json) {
  if (json) {
    auto j = nlohmann::json::parse(prove_result_json(r));
    j["binding"] = goal.binding;
    std::cout << j.dump() << "\n";
    return;
  }
  std::cout << goal.str();
  for (const auto& [v, what] : goal.binding) std::cout << "  " << v << " = " << what << "\n";
  if (r.proved)
    std::cout << "proved";
  else
    std::cout << "not proved (" << r.stop << (r.detail.empty() ? "" : ": " + r.detail) << ")";
  std::cout << " after " << r.iterations << " iterations, " << r.nodes << " e-nodes, " << r.classes
            << " e-classes, " << r.seconds << " s\n";
}

}  // namespace

int main(int argc, char** argv) {
  tensat::park_blas_threads();
  CLI::App app{"onnx-tensat-prove: prove two tensor-language terms equal by equality saturation"};
  std::vector<std::string> lhs_text, rhs_text, shape_args, weight_shape_args, rule_sets, taso_only;
  std::string rules_file, rule_name, taso_pb, import_pb;
  ProveLimits limits;
  size_t k_multi = 0;
  std::string cycle = "none";
  bool json = false, verbose = false;
  int instances = 3;
  uint64_t seed = 1;
  app.add_option("--lhs", lhs_text, "left term (repeatable: one per output of a multi-output equation)");
  app.add_option("--rhs", rhs_text, "right term (repeatable, as many as --lhs)");
  app.add_option("--shape", shape_args, "shape of an input variable, e.g. ?x=64x64 (repeatable)");
  app.add_option("--weight-shape", weight_shape_args, "shape of a weight variable, e.g. ?w=8x4x3x3 (repeatable)");
  app.add_option("--rules-file", rules_file, "prove both sides of a rule of this file (.rules or .pb) ...");
  app.add_option("--rule", rule_name, "... named NAME (TASO's: taso-N)");
  app.add_option("--rules", rule_sets, "rule set that proves: .rules, .pb or a folder (repeatable; default: our rules)");
  app.add_option("--taso", taso_pb, "completeness: which substitutions of this TASO collection the rule set proves");
  app.add_option("--taso-rule", taso_only, "with --taso: only these rule numbers (repeatable)");
  app.add_option("--instances", instances, "with --taso: concrete instances per rule (default 3)")->check(CLI::Range(1, 50));
  app.add_option("--import", import_pb, "print a TASO collection in our rules format and what cannot be expressed");
  app.add_option("--iter-limit", limits.iter_limit, "iteration limit (default 15)");
  app.add_option("--node-limit", limits.node_limit, "e-node limit (default 50000)");
  app.add_option("--time-limit", limits.time_limit_s, "time limit in seconds per proof (default 10)");
  app.add_option("--k-multi", k_multi, "iterations applying multi-pattern rules (default: all)");
  app.add_option("--cycle-filter", cycle, "none | efficient | vanilla (default none)");
  app.add_option("--seed", seed, "seed of the shape search (default 1)");
  app.add_flag("--json", json, "one JSON line");
  app.add_flag("-v,--verbose", verbose, "debug logging");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  spdlog::set_default_logger(spdlog::stderr_color_mt("prove"));
  if (k_multi > 0) limits.k_multi = k_multi;
  auto cf = cycle_filter_from_name(cycle);
  if (!cf) {
    std::cerr << "error: --cycle-filter must be none, efficient or vanilla\n";
    return 2;
  }
  limits.cycle_filter = *cf;

  try {
    if (!import_pb.empty()) {
      std::vector<TasoRule> coll = read_taso_collection(import_pb);
      ImportReport rep;
      load_taso_rules(import_pb, &rep);
      for (size_t i = 0; i < coll.size(); ++i) {
        std::string why;
        std::string text = taso_rule_text(coll[i], static_cast<int>(i), &why);
        if (!text.empty()) std::cout << text << "\n";
      }
      std::cerr << rep.str() << "\n";
      return rep.skipped.empty() ? 0 : 1;
    }

    std::vector<ImportReport> reports;
    std::vector<RuleSpec> specs = load_rule_files(rule_sets, &reports);
    for (const auto& r : reports)
      if (!r.skipped.empty()) spdlog::warn("{}", r.str());
    std::vector<Rewrite> rules = compile_rewrites(specs);

    if (!taso_pb.empty()) {
      std::vector<int> only;
      for (const auto& s : taso_only) only.push_back(std::stoi(s));
      CompletenessReport rep = check_taso_completeness(taso_pb, rules, limits, instances, seed, only);
      if (json)
        std::cout << rep.json() << "\n";
      else
        std::cout << rep.str();
      return rep.proved() == rep.total() ? 0 : 1;
    }

    std::vector<SExpr> lhs, rhs, conds;
    if (!rules_file.empty() || !rule_name.empty()) {
      if (rules_file.empty() || rule_name.empty()) {
        std::cerr << "error: --rules-file and --rule go together\n";
        return 2;
      }
      if (!lhs_text.empty() || !rhs_text.empty()) {
        std::cerr << "error: give either --lhs/--rhs or --rules-file/--rule\n";
        return 2;
      }
      std::vector<RuleSpec> file_rules = load_rule_files({rules_file});
      const RuleSpec* found = nullptr;
      for (const auto& r : file_rules)
        if (r.name == rule_name) found = &r;
      if (!found) {
        std::cerr << "error: " << rules_file << " has no rule named " << rule_name << "\n";
        return 2;
      }
      lhs = found->lhs;
      rhs = found->rhs;
      conds = found->conditions;
    } else {
      if (lhs_text.empty() || lhs_text.size() != rhs_text.size()) {
        std::cerr << "error: give --lhs and --rhs (as many of each), --rules-file/--rule, --taso or --import\n";
        return 2;
      }
      for (const auto& t : lhs_text) lhs.push_back(parse_sexpr(t));
      for (const auto& t : rhs_text) rhs.push_back(parse_sexpr(t));
    }
    std::map<std::string, VarShape> shapes;
    std::string why;
    for (const auto& a : shape_args)
      if (!parse_shape_arg(a, false, shapes, &why)) {
        std::cerr << "error: --shape: " << why << "\n";
        return 2;
      }
    for (const auto& a : weight_shape_args)
      if (!parse_shape_arg(a, true, shapes, &why)) {
        std::cerr << "error: --weight-shape: " << why << "\n";
        return 2;
      }
    auto goal = instantiate(lhs, rhs, conds, shapes, seed, &why);
    if (!goal) {
      std::cerr << "error: cannot instantiate the terms: " << why << "\n";
      return 2;
    }
    ProveResult r = prove(goal->g, goal->pairs, rules, limits);
    print_result(r, *goal, json);
    return r.proved ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
