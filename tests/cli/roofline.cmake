# CLI tests for `rpxprof gpus` and `rpxprof roofline` (tests/cli/test_roofline.py).
rpx_py_test(cli.roofline cli/test_roofline.py)
set_tests_properties(cli.roofline PROPERTIES TIMEOUT 600)  # two CPU measurements: slow under ASan on a busy machine
