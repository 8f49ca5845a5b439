// Rule-file loader: logical lines -> NAME, sides, conditions -> checked RuleSpecs.
#include "rules/loader.h"

#include "rules/embedded_rules.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "lang/op.h"
#include "lang/sexpr.h"

namespace tensat::rules {

namespace {

struct LogicalLine {
  std::string text;
  int line = 0;  ///< first physical line
};

[[noreturn]] void fail(const std::string& file, int line, const std::string& what) {
  throw RuleError(file + ":" + std::to_string(line) + ": " + what);
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Removes a '#' comment (outside double quotes).
std::string strip_comment(const std::string& s) {
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') quoted = !quoted;
    if (s[i] == '#' && !quoted) return s.substr(0, i);
  }
  return s;
}

// Physical lines -> logical lines (comments removed, '\' continuations joined, blanks dropped).
std::vector<LogicalLine> logical_lines(std::string_view text) {
  std::vector<LogicalLine> out;
  std::string cur;
  int cur_line = 0, lineno = 0;
  bool continuing = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string phys(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    ++lineno;
    if (!phys.empty() && phys.back() == '\r') phys.pop_back();
    std::string body = strip_comment(phys);
    while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.pop_back();
    bool cont = !body.empty() && body.back() == '\\';
    if (cont) body.pop_back();
    if (!continuing) cur_line = lineno;
    if (continuing) cur += " ";
    cur += body;
    continuing = cont;
    if (!continuing) {
      if (!trim(cur).empty()) out.push_back({cur, cur_line});
      cur.clear();
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  if (continuing && !trim(cur).empty()) out.push_back({cur, cur_line});
  return out;
}

// Splits at `sep` outside parentheses and quotes.
std::vector<std::string> split_top(std::string_view s, char sep) {
  std::vector<std::string> parts;
  int depth = 0;
  bool quoted = false;
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == sep && depth == 0) {
      parts.emplace_back(s.substr(from, i - from));
      from = i + 1;
    }
  }
  parts.emplace_back(s.substr(from));
  return parts;
}

// Position of a top-level token (surrounded by space/parens or string ends); npos if none.
size_t find_top(std::string_view s, std::string_view tok, bool word) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i + tok.size() <= s.size(); ++i) {
    char c = s[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth != 0 || s.compare(i, tok.size(), tok) != 0) continue;
    if (word) {
      bool left_ok = i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == ')';
      size_t j = i + tok.size();
      bool right_ok = j == s.size() || std::isspace(static_cast<unsigned char>(s[j])) || s[j] == '(';
      if (!left_ok || !right_ok) continue;
    }
    return i;
  }
  return std::string_view::npos;
}

bool valid_name(std::string_view n) {
  if (n.empty()) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool is_var(const SExpr& e) { return e.is_atom && !e.quoted && e.atom.size() >= 2 && e.atom[0] == '?'; }

// One S-expression from a fragment; errors name the rule's line.
SExpr parse_one(const std::string& text, const std::string& what, const std::string& file, int line) {
  if (trim(text).empty()) fail(file, line, "empty " + what);
  std::vector<SExpr> es;
  try {
    es = parse_sexprs(text);
  } catch (const ParseError& e) {
    fail(file, line, what + ": " + e.what());
  }
  if (es.size() != 1)
    fail(file, line, what + " must be one S-expression, found " + std::to_string(es.size()) + ": '" + trim(text) + "'");
  return es[0];
}

std::vector<SExpr> parse_sides(const std::string& text, const std::string& what, const std::string& file, int line) {
  std::vector<SExpr> out;
  auto parts = split_top(text, ';');
  for (size_t i = 0; i < parts.size(); ++i)
    out.push_back(parse_one(parts[i], parts.size() > 1 ? what + " " + std::to_string(i + 1) : what, file, line));
  return out;
}

// ---- checking -----------------------------------------------------------------------------

enum class Pos { Root, Tensor, Bias, Param };

struct VarUse {
  bool param = false, tensor = false;
};

struct Checker {
  const std::string& file;
  int line;
  std::string prefix;  // "" or "reverse direction: "
  std::map<std::string, VarUse> uses;

  [[noreturn]] void error(const std::string& what) const { fail(file, line, prefix + what); }

  // `rhs_root_split` is true for the direct child of a split_0/split_1 at the root of a
  // right-hand side: the only place where the split sugar may appear on a right-hand side.
  void pattern(const SExpr& e, Pos pos, bool rhs, bool rhs_root_split) {
    if (e.is_atom) {
      if (is_var(e)) {
        std::string name = e.atom.substr(1);
        if (!valid_name(name)) error("malformed variable '" + e.atom + "'");
        if (pos == Pos::Root && !rhs) error("a left-hand side must be an operator pattern, not the variable " + e.atom);
        VarUse& u = uses[name];
        if (pos == Pos::Param) u.param = true;
        else u.tensor = true;
        if (u.param && u.tensor)
          error("variable " + e.atom + " is used both as a parameter and as a tensor");
        return;
      }
      if (pos == Pos::Param) return;
      if (pos == Pos::Bias && e.atom == "none" && !e.quoted) return;
      if (!e.is_atom || e.atom.empty() || e.atom[0] == '?') error("malformed variable '" + e.atom + "'");
      error("literal '" + e.atom + "' where a tensor is expected" +
            (pos == Pos::Bias ? " (a bias is 'none', a variable or a pattern)" : ""));
    }
    if (pos == Pos::Param) error("pattern " + e.str() + " where a parameter (literal or variable) is expected");
    if (e.list.empty()) error("empty list '()'");
    const SExpr& head = e.list[0];
    if (!head.is_atom || head.quoted) error("expected an operator name at the head of " + e.str());
    auto op = op_from_name(head.atom);
    if (!op || is_param_leaf(*op)) error("unknown operator '" + head.atom + "'");
    if (*op == Op::Opaque || *op == Op::Select)
      error("operator '" + head.atom + "' cannot appear in a rule (rules never match opaque nodes)");
    const OpInfo& info = op_info(*op);
    int n = static_cast<int>(e.list.size()) - 1;
    bool sugar = *op == Op::Split && n == 2;
    if (!sugar && (n < info.min_arity || (info.max_arity >= 0 && n > info.max_arity))) {
      std::string want = info.min_arity == info.max_arity ? std::to_string(info.min_arity)
                         : info.max_arity < 0 ? "at least " + std::to_string(info.min_arity)
                                              : std::to_string(info.min_arity) + ".." + std::to_string(info.max_arity);
      if (*op == Op::Split) want = "2 (split AXIS x) or 3 (split AXIS POS x)";
      error("operator '" + head.atom + "' takes " + want + " arguments, got " + std::to_string(n) + " in " + e.str());
    }
    if (sugar && rhs && !rhs_root_split)
      error("on a right-hand side, (split AXIS x) may only appear as (split_0 (split AXIS x)) or "
            "(split_1 (split AXIS x)) at the root of a side, so that the shape check fixes POS: " + e.str());
    int nparams = sugar ? 1 : info.num_params;
    for (int i = 0; i < n; ++i) {
      const SExpr& c = e.list[static_cast<size_t>(i) + 1];
      Pos cp = Pos::Tensor;
      if (i < nparams) cp = Pos::Param;
      else if ((*op == Op::Matmul && i == 3) || (*op == Op::Conv && i == 6)) cp = Pos::Bias;
      bool child_root_split = rhs && pos == Pos::Root && (*op == Op::Split0 || *op == Op::Split1);
      pattern(c, cp, rhs, child_root_split);
    }
  }

  void condition(const SExpr& e, const std::set<std::string>& bound) {
    if (e.is_atom || e.list.empty() || !e.list[0].is_atom) error("malformed condition '" + e.str() + "'");
    const std::string& name = e.list[0].atom;
    size_t n = e.list.size() - 1;
    auto need_var = [&](size_t i) {
      const SExpr& a = e.list[i];
      if (!is_var(a)) error("condition " + e.str() + ": argument " + std::to_string(i) + " must be a variable");
      if (!bound.count(a.atom.substr(1)))
        error("condition " + e.str() + ": variable " + a.atom + " is not bound by a left-hand side");
    };
    auto need_int = [&](size_t i, int64_t min) {
      const SExpr& a = e.list[i];
      if (!atom_is_int(a) || std::stoll(a.atom) < min)
        error("condition " + e.str() + ": argument " + std::to_string(i) + " must be an integer >= " + std::to_string(min));
    };
    auto arity = [&](size_t want) {
      if (n != want)
        error("condition '" + name + "' takes " + std::to_string(want) + " arguments, got " + std::to_string(n));
    };
    if (name == "weight-only" || name == "not-weight-only") {
      arity(1);
      need_var(1);
    } else if (name == "same-shape" || name == "kernel-le" || name == "distinct" || name == "ordered") {
      arity(2);
      need_var(1);
      need_var(2);
    } else if (name == "rank") {
      arity(2);
      need_var(1);
      need_int(2, 0);
    } else if (name == "kernel") {
      arity(3);
      need_var(1);
      need_int(2, 1);
      need_int(3, 1);
    } else if (name == "groups") {
      arity(3);
      need_var(1);
      need_var(2);
      if (is_var(e.list[3])) need_var(3);
      else need_int(3, 1);
    } else {
      error("unknown condition '" + name + "' (known: weight-only, not-weight-only, same-shape, rank, kernel, "
            "kernel-le, groups, distinct, ordered)");
    }
  }
};

void collect_vars(const SExpr& e, std::set<std::string>& out) {
  if (e.is_atom) {
    if (is_var(e)) out.insert(e.atom.substr(1));
    return;
  }
  for (const auto& c : e.list) collect_vars(c, out);
}

void check_spec(const RuleSpec& s, const std::string& prefix) {
  Checker ck{s.file, s.line, prefix, {}};
  if (s.lhs.size() != s.rhs.size())
    ck.error("a multi-pattern rule needs as many right-hand sides as left-hand sides (" +
             std::to_string(s.lhs.size()) + " vs " + std::to_string(s.rhs.size()) + ")");
  std::set<std::string> bound;
  for (const auto& l : s.lhs) {
    ck.pattern(l, Pos::Root, false, false);
    collect_vars(l, bound);
  }
  for (const auto& r : s.rhs) {
    ck.pattern(r, Pos::Root, true, false);
    std::set<std::string> vs;
    collect_vars(r, vs);
    for (const auto& v : vs)
      if (!bound.count(v)) ck.error("variable ?" + v + " on the right-hand side is not bound by a left-hand side");
  }
  for (const auto& c : s.conditions) ck.condition(c, bound);
}

}  // namespace

const std::vector<std::string>& known_conditions() {
  static const std::vector<std::string> k = {"weight-only", "not-weight-only", "same-shape", "rank",
                                             "kernel",      "kernel-le",       "groups",     "distinct",
                                             "ordered"};
  return k;
}

std::vector<RuleSpec> load_rules_text(std::string_view text, const std::string& filename) {
  std::vector<RuleSpec> out;
  std::map<std::string, int> seen;
  for (const LogicalLine& ll : logical_lines(text)) {
    const std::string& t = ll.text;
    size_t colon = t.find(':');
    size_t first_paren = t.find('(');
    if (colon == std::string::npos || (first_paren != std::string::npos && first_paren < colon))
      fail(filename, ll.line, "expected 'NAME: lhs => rhs' or 'NAME: lhs <=> rhs'");
    std::string name = trim(std::string_view(t).substr(0, colon));
    if (!valid_name(name)) fail(filename, ll.line, "invalid rule name '" + name + "' (letters, digits, '-', '_', '.')");
    std::string body = t.substr(colon + 1);
    {
      int depth = 0;
      bool quoted = false;
      for (char c : body) {
        if (c == '"') quoted = !quoted;
        if (quoted) continue;
        if (c == '(') ++depth;
        if (c == ')' && --depth < 0) fail(filename, ll.line, "rule '" + name + "': unexpected ')'");
      }
      if (depth > 0) fail(filename, ll.line, "rule '" + name + "': missing ')' (unbalanced parentheses)");
    }
    size_t bi = find_top(body, "<=>", false);
    bool both = bi != std::string::npos;
    size_t arrow = both ? bi : find_top(body, "=>", false);
    if (arrow == std::string::npos) fail(filename, ll.line, "rule '" + name + "': missing '=>' or '<=>'");
    size_t arrow_len = both ? 3 : 2;
    std::string lhs_text = body.substr(0, arrow);
    std::string rest = body.substr(arrow + arrow_len);
    if (find_top(rest, "=>", false) != std::string::npos)
      fail(filename, ll.line, "rule '" + name + "': more than one arrow");
    std::string rhs_text = rest, cond_text;
    size_t ifpos = find_top(rest, "if", true);
    if (ifpos != std::string::npos) {
      rhs_text = rest.substr(0, ifpos);
      cond_text = rest.substr(ifpos + 2);
      if (trim(cond_text).empty()) fail(filename, ll.line, "rule '" + name + "': 'if' without conditions");
    }

    RuleSpec s;
    s.name = name;
    s.file = filename;
    s.line = ll.line;
    s.lhs = parse_sides(lhs_text, "left-hand side", filename, ll.line);
    s.rhs = parse_sides(rhs_text, "right-hand side", filename, ll.line);
    if (!cond_text.empty())
      for (const auto& c : split_top(cond_text, ','))
        s.conditions.push_back(parse_one(c, "condition", filename, ll.line));
    check_spec(s, "");

    std::vector<RuleSpec> made{s};
    if (both) {
      RuleSpec r = s;
      r.name = name + "-rev";
      std::swap(r.lhs, r.rhs);
      check_spec(r, "rule '" + name + "', reverse direction: ");
      made.push_back(std::move(r));
    }
    for (auto& m : made) {
      auto [it, fresh] = seen.emplace(m.name, ll.line);
      if (!fresh)
        fail(filename, ll.line, "duplicate rule name '" + m.name + "' (first defined at line " +
                                    std::to_string(it->second) + ")");
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<RuleSpec> load_rules_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuleError(path + ":0: cannot open rules file");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_rules_text(ss.str(), path);
}

std::vector<RuleSpec> load_rules_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw RuleError(dir + ":0: not a directory of rules files");
  std::vector<std::string> files;
  for (const auto& ent : fs::directory_iterator(dir, ec))
    if (ent.is_regular_file() && ent.path().extension() == ".rules") files.push_back(ent.path().string());
  std::sort(files.begin(), files.end());
  std::vector<RuleSpec> all;
  std::map<std::string, std::string> where;
  for (const auto& f : files) {
    for (auto& r : load_rules_file(f)) {
      std::string here = r.file + ":" + std::to_string(r.line);
      auto [it, fresh] = where.emplace(r.name, here);
      if (!fresh) fail(r.file, r.line, "duplicate rule name '" + r.name + "' (first defined at " + it->second + ")");
      all.push_back(std::move(r));
    }
  }
  return all;
}

std::vector<RuleSpec> default_rules() {
  // The built-in set is compiled in (embedded_rules.h), so it does not depend on the source
  // tree at run time; load_rules_dir on the rules/ folder reads the same files from disk.
  std::vector<RuleSpec> all;
  std::map<std::string, std::string> where;
  for (const auto& f : embedded_rule_files()) {
    for (auto& r : load_rules_text(f.text, "rules/" + std::string(f.name))) {
      std::string here = r.file + ":" + std::to_string(r.line);
      auto [it, fresh] = where.emplace(r.name, here);
      if (!fresh) fail(r.file, r.line, "duplicate rule name '" + r.name + "' (first defined at " + it->second + ")");
      all.push_back(std::move(r));
    }
  }
  return all;
}

}  // namespace tensat::rules
