# CLI tests for `rpxprof gpus` and `rpxprof roofline` (tests/cli/test_roofline.py).
# two CPU measurements: slow under ASan on a busy machine
rpx_py_test(cli.roofline cli/test_roofline.py TIMEOUT 600)
