# measure.cmake — see tests/CMakeLists.txt
# The latency profiler (statistics checked against numpy) and the memory
# profiler (parsing, and RSS truth tests on this process).
rpx_unit_test(test_latency ${CMAKE_CURRENT_LIST_DIR}/test_latency.c)
rpx_unit_test(test_memory ${CMAKE_CURRENT_LIST_DIR}/test_memory.c)
set_tests_properties(unit.test_memory PROPERTIES RUN_SERIAL TRUE)
# The statistics (intervals, t, ranks, U, Holm, Tukey) and compare's verdict rule.
rpx_unit_test(test_stats ${CMAKE_CURRENT_LIST_DIR}/test_stats.c)
# The log-bucketed histogram of the open-loop load (percentiles within 1 %).
rpx_unit_test(test_histogram ${CMAKE_CURRENT_LIST_DIR}/test_histogram.c)
# Where each timed call ran (call_record.c): counts of this thread, and the
# records beside the samples in the loop.
rpx_unit_test(test_call_record ${CMAKE_CURRENT_LIST_DIR}/test_call_record.c)
# Why a run varied: the report's variance section on synthetic reports, and its
# false-blame rate over thousands of simulated runs (docs/statistics.md).
rpx_unit_test(test_variance ${CMAKE_CURRENT_LIST_DIR}/test_variance.c)
# compare --run's paired interval never narrower than the calls' own noise (issue 36).
rpx_unit_test(test_paired_calls ${CMAKE_CURRENT_LIST_DIR}/test_paired_calls.c)
