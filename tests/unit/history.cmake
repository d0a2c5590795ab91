# The history's store (src/history/) on SQLite; tests/cli/test_history.py runs both backends.
rpx_unit_test(test_history_store ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_history_store.c)
