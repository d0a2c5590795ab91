# Unit tests for the statistics across sessions (src/compare/history_check.c,
# changepoints.c, session_noise.c): synthetic histories resampled from
# tests/fixtures/demo-sessions.json.
rpx_unit_test(test_history_check ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_history_check.c)
target_compile_definitions(test_history_check PRIVATE RPX_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
