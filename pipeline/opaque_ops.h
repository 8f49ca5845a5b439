// The executors' description of a model's opaque nodes (exec/opaque_op.h), built from the
// ONNX nodes the importer kept verbatim (ModelContext::opaque): op type, domain, the model's
// opset of that domain, attributes as plain data, and which ONNX input each child is.
#pragma once

#include "exec/opaque_op.h"
#include "onnx_model/model_context.h"

namespace tensat {

/// One OpaqueOp per ModelContext::opaque entry, in the same order (the opaque index).
exec::OpaqueOps describe_opaque_ops(const ModelContext& ctx);

}  // namespace tensat
