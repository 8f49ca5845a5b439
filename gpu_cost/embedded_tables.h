// The measured cost tables built into onnx-tensat: gpu_cost/tables/*.json, compiled in by
// gpu_cost/CMakeLists.txt (a generated embedded_tables.cpp), so the tool finds them without
// any file at run time. A table belongs to the device profile its file name starts with
// ("h100-fp32.json" -> h100): `--device-profile h100` selects it, and `--cost-model auto`
// uses it on a machine without a GPU.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tensat::cost {

struct EmbeddedTable {
  std::string_view profile;  ///< device profile, e.g. "h100"
  std::string_view file;     ///< file name in gpu_cost/tables/, e.g. "h100-fp32.json"
  std::string_view text;     ///< the file's contents (a cost cache file, cost_cache.h)
};

/// Every built-in table, sorted by file name.
const std::vector<EmbeddedTable>& embedded_tables();
/// The built-in table of a device profile (case-sensitive, as find_profile's names), or nullptr.
const EmbeddedTable* embedded_table(std::string_view profile);
/// "h100" (the profiles that have one, comma-separated), "none" if there are none.
std::string embedded_profile_list();

}  // namespace tensat::cost
