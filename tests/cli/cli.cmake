# CLI tests: Python scripts that run the real binary (tests/cli/common.py).
rpx_py_test(cli.run cli/test_run.py)
rpx_py_test(cli.inputs cli/test_inputs.py)
rpx_py_test(cli.readme cli/test_readme.py)
rpx_py_test(cli.cuda cli/test_cuda.py)
rpx_py_test(cli.layers cli/test_layers.py)
