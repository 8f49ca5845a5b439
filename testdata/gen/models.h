// The eight benchmark graphs of the TENSAT paper (see /shared/BENCHMARKS.md and
// testdata/README.md for the structures and the choices made where the description is terse).
#pragma once

#include "testdata/gen/model_builder.h"

#include <functional>
#include <string>
#include <vector>

namespace gen {

struct ModelDef {
  std::string name;     // short name for --only, e.g. "resnext50"
  std::string file;     // file name written to OUTDIR, e.g. "resnext50.onnx"
  std::string summary;  // one line, stored as the model's doc_string
  std::function<void(ModelBuilder&)> build;
};

// In the order of BENCHMARKS.md's list.
const std::vector<ModelDef>& all_models();

void build_bert(ModelBuilder& b);
void build_nasrnn(ModelBuilder& b);
void build_resnext50(ModelBuilder& b);
void build_nasneta(ModelBuilder& b);
void build_inceptionv3(ModelBuilder& b);
void build_squeezenet(ModelBuilder& b);
void build_vgg19(ModelBuilder& b);
void build_resnet50(ModelBuilder& b);
void build_densenet(ModelBuilder& b);

}  // namespace gen
