# CLI tests for `rpxprof batch`, `rpxprof aggregate` and `rpxprof plot` (tests/cli/test_batch.py).
rpx_py_test(cli.batch cli/test_batch.py)
set_tests_properties(cli.batch PROPERTIES TIMEOUT 600)
