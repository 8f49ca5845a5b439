# onnx-tensat: the command users run (front end of pipeline/).
add_executable(onnx-tensat ${CMAKE_CURRENT_SOURCE_DIR}/onnx_tensat_main.cpp)
target_compile_options(onnx-tensat PRIVATE ${TENSAT_WARNINGS})
target_link_libraries(onnx-tensat PRIVATE tensat_pipeline tensat_support CLI11::CLI11 spdlog::spdlog)
target_compile_definitions(onnx-tensat PRIVATE TENSAT_VERSION="${PROJECT_VERSION}")
install(TARGETS onnx-tensat RUNTIME DESTINATION bin)  # the cost tables are built in (gpu_cost/)
