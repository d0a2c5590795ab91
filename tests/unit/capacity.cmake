# Unit tests for the capacity search (src/sweep/capacity.c): the percentile's upper
# bound from order statistics, the objectives' grammar, and the search against a
# simulated one-worker queue whose capacity is exact.
rpx_unit_test(test_capacity ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_capacity.c)
