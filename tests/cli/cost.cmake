# cost.cmake — CLI tests of `rpxprof cost` (issue 6); included from
# tests/CMakeLists.txt.
#   cli.cost         every operator on graphs built with onnx.helper, shapes
#                    against onnx's own shape inference, costs against the
#                    formulas of docs/cost.md; malformed files; options.
#   cli.cost_models  torchvision models exported once by torch (random
#                    weights, opset 13) into the build folder: parameters and
#                    MACs against the onnx package and torchvision's tables.
rpx_py_test(cli.cost cli/test_cost.py)
rpx_py_test(cli.cost_ops cli/test_cost_ops.py)
rpx_py_test(cli.cost_shape_rules cli/test_cost_shape_rules.py)
rpx_py_test(cli.cost_networks cli/test_cost_networks.py SLOW TIMEOUT 900)

add_test(NAME cost.fixtures_models
         COMMAND ${RPX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/onnx/export_torchvision.py
                 ${CMAKE_BINARY_DIR}/fixtures/onnx_models)
set_tests_properties(cost.fixtures_models PROPERTIES FIXTURES_SETUP onnx_models TIMEOUT 1800 LABELS slow)
rpx_py_test(cli.cost_models cli/test_cost_models.py FIXTURES_REQUIRED onnx_models)
