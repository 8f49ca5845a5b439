# explore-bench: exploration (equality saturation with the shipped rules) on real ONNX models.
add_executable(explore-bench ${CMAKE_CURRENT_LIST_DIR}/explore_bench.cpp)
target_link_libraries(explore-bench PRIVATE tensat_egraph tensat_rules tensat_importer tensat_support spdlog::spdlog)
target_compile_options(explore-bench PRIVATE ${TENSAT_WARNINGS})
