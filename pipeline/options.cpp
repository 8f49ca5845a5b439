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

}  // namespace tensat
