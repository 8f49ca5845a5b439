// Rule sets from files by extension; see rule_files.h.
#include "rules/taso/rule_files.h"

#include <filesystem>
#include <set>

#include "rules/loader.h"

namespace tensat::taso {

namespace {
bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::vector<RuleSpec> load_rule_files(const std::vector<std::string>& paths,
                                      std::vector<ImportReport>* taso_reports) {
  if (paths.empty()) return rules::default_rules();
  std::vector<RuleSpec> out;
  std::set<std::string> names;
  for (const std::string& p : paths) {
    std::vector<RuleSpec> part;
    if (ends_with(p, ".pb")) {
      ImportReport rep;
      part = load_taso_rules(p, &rep);
      if (taso_reports) taso_reports->push_back(std::move(rep));
    } else if (ends_with(p, ".rules")) {
      part = rules::load_rules_file(p);
    } else if (std::filesystem::is_directory(p)) {
      part = rules::load_rules_dir(p);
    } else {
      throw RuleFilesError(p + ": unknown kind of rule file (expected .rules, .pb or a folder of .rules files)");
    }
    for (auto& r : part) {
      if (!names.insert(r.name).second)
        throw RuleFilesError(p + ": rule name '" + r.name + "' is also defined by an earlier file");
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace tensat::taso
