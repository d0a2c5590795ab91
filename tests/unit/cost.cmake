# cost.cmake — tests of src/cost (issue 6, the model-cost layer); included
# from tests/CMakeLists.txt. Small models come from the onnx package
# (tests/fixtures/onnx/make_onnx_fixtures.py), written at the start of the run.
add_test(NAME cost.fixtures_small
         COMMAND ${RPX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/onnx/make_onnx_fixtures.py
                 ${CMAKE_BINARY_DIR}/fixtures/onnx_small)
set_tests_properties(cost.fixtures_small PROPERTIES FIXTURES_SETUP onnx_small LABELS fast)

rpx_unit_test(test_cost ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_cost.c)
set_tests_properties(unit.test_cost PROPERTIES FIXTURES_REQUIRED onnx_small)
