# Unit tests for the report, the timing loop and the target loader (the system
# card's are in system.cmake).
rpx_unit_test(test_json ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_json.c)
rpx_unit_test(test_output ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_output.c)
rpx_unit_test(test_json_keys ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_json_keys.c)
rpx_unit_test(test_run ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_run.c)
rpx_unit_test(test_run_replan ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_run_replan.c)
rpx_unit_test(test_target ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_target.c)
rpx_unit_test(test_kinds ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_kinds.c)
set_tests_properties(unit.test_target PROPERTIES ENVIRONMENT
  "RPX_TEST_MODELS=${CMAKE_BINARY_DIR}/test-models;RPX_DEMO_LIBRARY=${CMAKE_BINARY_DIR}/librpxprof-demo.so")
# A run's options described once (src/runner/options.c); docs/cli.md names each.
rpx_unit_test(test_options ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_options.c)
target_compile_definitions(test_options PRIVATE RPX_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
rpx_unit_test(test_library_api ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_library_api.c)
# The run summary's number rule and its cost, bound and budget lines (src/report/summary.c).
rpx_unit_test(test_summary ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_summary.c)
# The session API (src/session/, rpxprof/session.h): derived blocks, comparability.
rpx_unit_test(test_session ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_session.c)
rpx_unit_test(test_sweep ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_sweep.c)
