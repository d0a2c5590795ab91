# cost.cmake — ONNX cost analysis benchmark (issue 6; numbers in BENCHMARKS.md,
# "ONNX cost analysis (issue 6)"): `cmake --build build --target bench-cost`.
# Exports ViT-B/16 once (tests/fixtures/onnx/export_torchvision.py, into
# build/fixtures/onnx_models), then times the analysis and measures peak RSS
# against the file size, with embedded weights and with external data.
add_executable(bench_cost ${CMAKE_CURRENT_SOURCE_DIR}/bench_cost.c)
target_link_libraries(bench_cost PRIVATE rpxprof_static)
add_custom_target(bench-cost
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_cost.py
          --bench $<TARGET_FILE:bench_cost> --cli $<TARGET_FILE:rpxprof_cli>
          --rss-of $<TARGET_FILE:rss_of> --models ${CMAKE_BINARY_DIR}/fixtures/onnx_models
          --work ${CMAKE_BINARY_DIR}/bench-cost
  DEPENDS bench_cost rpxprof_cli rss_of USES_TERMINAL)
