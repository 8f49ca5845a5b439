# onnx-tensat-costs: measures a cost table on a GPU (the cuda cost model over every signature
# the models' e-graphs reach) and reports how well the calibrated model fits a table.
add_executable(onnx-tensat-costs ${CMAKE_CURRENT_LIST_DIR}/onnx_tensat_costs.cpp)
target_compile_options(onnx-tensat-costs PRIVATE ${TENSAT_WARNINGS})
target_link_libraries(onnx-tensat-costs PRIVATE tensat_pipeline tensat_gpu_cost tensat_egraph tensat_importer
                      tensat_support CLI11::CLI11 spdlog::spdlog)
install(TARGETS onnx-tensat-costs RUNTIME DESTINATION bin)
