# io.cmake — NPZ loading benchmark (numbers in BENCHMARKS.md, "NPZ loading (issue 2)").
#   bench/bench_npz_load.sh BUILD_DIR [WORK_DIR] [REPS]
add_executable(bench_npz_load ${CMAKE_CURRENT_SOURCE_DIR}/bench_npz_load.c)
target_include_directories(bench_npz_load PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(bench_npz_load PRIVATE rpxprof_static)
