// Names of the pipeline's own option enums (see options.h).
#include "pipeline/options.h"

namespace tensat {

std::optional<VerifyMode> verify_mode_from_name(std::string_view s) {
  if (s == "auto") return VerifyMode::Auto;
  if (s == "gpu") return VerifyMode::Gpu;
  if (s == "cpu") return VerifyMode::Cpu;
  if (s == "off") return VerifyMode::Off;
  return std::nullopt;
}

std::string_view verify_mode_name(VerifyMode m) {
  switch (m) {
    case VerifyMode::Auto: return "auto";
    case VerifyMode::Gpu: return "gpu";
    case VerifyMode::Cpu: return "cpu";
    case VerifyMode::Off: return "off";
  }
  return "?";
}

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
