# onnx-tensat-prove: proves two terms (or both sides of a rule) equal with a rule set, and checks
# which of TASO's substitutions our rules derive (rules/taso/).
if(TARGET tensat_taso_instances)
  add_executable(onnx-tensat-prove ${CMAKE_CURRENT_LIST_DIR}/onnx_tensat_prove.cpp)
  target_compile_options(onnx-tensat-prove PRIVATE ${TENSAT_WARNINGS})
  target_link_libraries(onnx-tensat-prove PRIVATE tensat_taso_instances tensat_support CLI11::CLI11 spdlog::spdlog)
endif()
