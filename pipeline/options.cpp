// Names of the pipeline's own option enums (see options.h).
#include "pipeline/options.h"

#include "support/enum_names.h"

namespace tensat {

namespace {
constexpr EnumNames<VerifyMode, 4> kVerifyNames{
    {{{VerifyMode::Auto, "auto"}, {VerifyMode::Gpu, "gpu"}, {VerifyMode::Cpu, "cpu"}, {VerifyMode::Off, "off"}}}};
}  // namespace

std::optional<VerifyMode> verify_mode_from_name(std::string_view s) { return kVerifyNames.parse(s); }
std::string_view verify_mode_name(VerifyMode m) { return kVerifyNames.name(m); }

std::optional<MeasureMode> measure_mode_from_name(std::string_view s) {
  if (s == "auto") return MeasureMode::Auto;
  if (s == "on") return MeasureMode::On;
  if (s == "off") return MeasureMode::Off;
  return std::nullopt;
}

std::string_view measure_mode_name(MeasureMode m) {
  switch (m) {
    case MeasureMode::Auto: return "auto";
    case MeasureMode::On: return "on";
    case MeasureMode::Off: return "off";
  }
  return "?";
}

}  // namespace tensat
