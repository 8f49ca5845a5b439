# onnx-tensat-time: times models on the GPU with the executor, with a per-step profile.
add_executable(onnx-tensat-time ${CMAKE_CURRENT_LIST_DIR}/onnx_tensat_time.cpp)
target_compile_options(onnx-tensat-time PRIVATE ${TENSAT_WARNINGS})
target_link_libraries(onnx-tensat-time PRIVATE tensat_pipeline tensat_gpu_cost tensat_importer tensat_support
                      CLI11::CLI11 spdlog::spdlog nlohmann_json::nlohmann_json)
install(TARGETS onnx-tensat-time RUNTIME DESTINATION bin)
