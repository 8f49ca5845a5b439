// Window attributes (see window_attrs.h).
#include "onnx_model/window_attrs.h"

namespace tensat {

std::optional<WindowAttrs> window_attrs(const onnx::NodeProto& n, size_t spatial, std::string* why) {
  WindowAttrs w;
  w.strides.assign(spatial, 1);
  w.dilations.assign(spatial, 1);
  w.pads.assign(2 * spatial, 0);
  auto fail = [&](const std::string& reason) -> std::optional<WindowAttrs> {
    if (why) *why = reason;
    return std::nullopt;
  };
  for (const auto& a : n.attribute()) {
    std::vector<int64_t>* v = a.name() == "strides" ? &w.strides
                              : a.name() == "dilations" ? &w.dilations
                              : a.name() == "pads"      ? &w.pads
                                                        : nullptr;
    if (v) {
      if (static_cast<size_t>(a.ints_size()) != v->size()) return fail("its " + a.name() + " of another length");
      v->assign(a.ints().begin(), a.ints().end());
    } else if (a.name() == "auto_pad") {
      const std::string& s = a.s();
      if (s.empty() || s == "NOTSET") w.auto_pad = WindowAttrs::AutoPad::NotSet;
      else if (s == "VALID") w.auto_pad = WindowAttrs::AutoPad::Valid;
      else if (s == "SAME_UPPER") w.auto_pad = WindowAttrs::AutoPad::SameUpper;
      else if (s == "SAME_LOWER") w.auto_pad = WindowAttrs::AutoPad::SameLower;
      else return fail("auto_pad " + s);
    }
  }
  return w;
}

}  // namespace tensat
