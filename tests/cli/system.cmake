# system.cmake — CLI tests of `rpxprof system`; see tests/CMakeLists.txt.
rpx_py_test(cli.system cli/test_system.py)
rpx_py_test(cli.probe cli/test_probe.py)
