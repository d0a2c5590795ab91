# CLI tests: Python scripts that run the real binary (tests/cli/common.py).
rpx_py_test(cli.run cli/test_run.py)
rpx_py_test(cli.inputs cli/test_inputs.py)
rpx_py_test(cli.readme cli/test_readme.py)
rpx_py_test(cli.cuda cli/test_cuda.py)
rpx_py_test(cli.layers cli/test_layers.py)
# Timing and resident-set truth tests run alone: a concurrent test (a torch
# export, a compile) on a 2-core machine would stretch the busy-waits.
set_tests_properties(cli.run PROPERTIES RUN_SERIAL TRUE)
rpx_py_test(cli.isolation cli/test_isolation.py)
