# egraph-bench: e-graph engine throughput on synthetic workloads.
add_executable(egraph-bench ${CMAKE_CURRENT_LIST_DIR}/egraph_bench.cpp)
target_link_libraries(egraph-bench PRIVATE tensat_egraph tensat_support)
target_compile_options(egraph-bench PRIVATE ${TENSAT_WARNINGS})
