# layer_times.cmake — --layers without a real runtime (tests/unit/test_layer_times.c):
# a stand-in target with a per-node profiler of known busy-waits, joined with the per-op
# cost of the onnx_small fixture's conv_small.onnx. Its reports (under
# ${CMAKE_BINARY_DIR}/fixtures/layers) are the CLI tests' fixture (cli.layer_times.*).
rpx_unit_test(test_layer_times ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_layer_times.c)
set_tests_properties(unit.test_layer_times PROPERTIES FIXTURES_REQUIRED onnx_small
                     FIXTURES_SETUP layer_reports)
rpx_py_test(cli.layer_times cli/test_layer_times.py FIXTURES_REQUIRED layer_reports)
# resnet18 through ONNX Runtime (issue 39's acceptance): skipped with the reason where the
# library or the plugin is not here; its busy machine's timings run alone.
rpx_py_test(cli.layer_times_ort cli/test_layer_times_ort.py SLOW SERIAL FIXTURES_REQUIRED onnx_models
            TIMEOUT 1800)
