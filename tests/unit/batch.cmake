# Unit tests for the batch manifest and the latency figures (tests/unit/test_batch.c).
rpx_unit_test(test_batch ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_batch.c)
