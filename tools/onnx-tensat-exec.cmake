# onnx-tensat-exec: run a model on the CPU reference executor (ONNX test-data .pb files in and
# out), or convert it through importer + exporter only (--convert). Used by tests/python.
add_executable(onnx-tensat-exec ${CMAKE_CURRENT_SOURCE_DIR}/onnx_tensat_exec.cpp)
target_compile_options(onnx-tensat-exec PRIVATE ${TENSAT_WARNINGS})
target_link_libraries(onnx-tensat-exec PRIVATE tensat_importer tensat_exporter tensat_pipeline tensat_refexec tensat_support CLI11::CLI11
                      spdlog::spdlog)
