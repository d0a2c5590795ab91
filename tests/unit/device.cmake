# device.cmake — tests of src/device; see tests/CMakeLists.txt.
# The NVML backend runs against the stub libraries of tests/stubs/nvml.
rpx_unit_test(test_nvml ${CMAKE_CURRENT_LIST_DIR}/test_nvml.c)
add_dependencies(test_nvml rpxstub_nvml rpxstub_nvml_minimal)
set_tests_properties(unit.test_nvml PROPERTIES ENVIRONMENT
  "${RPX_TEST_ENV};RPX_NVML_LIBRARY=${CMAKE_BINARY_DIR}/stubs/nvml/libnvidia-ml.so.1;RPX_NVML_MINIMAL_LIBRARY=${CMAKE_BINARY_DIR}/stubs/nvml-minimal/libnvidia-ml.so.1")
