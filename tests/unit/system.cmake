# system.cmake — tests of src/system (the system card); see tests/CMakeLists.txt.
# The card runs on captured and crafted snapshots (tests/fixtures/sysroots,
# RPX_SNAPSHOTS), on this machine, and with the fake NVML of tests/stubs/nvml.
rpx_unit_test(test_card ${CMAKE_CURRENT_LIST_DIR}/test_card.c)
rpx_unit_test(test_sysfs ${CMAKE_CURRENT_LIST_DIR}/test_sysfs.c)
set(RPX_SNAPSHOT_ENV "RPX_SNAPSHOTS=${CMAKE_CURRENT_SOURCE_DIR}/fixtures/sysroots")
set_tests_properties(unit.test_sysfs PROPERTIES ENVIRONMENT "${RPX_TEST_ENV};${RPX_SNAPSHOT_ENV}")
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/stubs/nvml/CMakeLists.txt)
  add_dependencies(test_card rpxstub_nvml)
  set_tests_properties(unit.test_card PROPERTIES ENVIRONMENT
    "${RPX_TEST_ENV};${RPX_SNAPSHOT_ENV};RPX_TEST_NVML_STUB=${CMAKE_BINARY_DIR}/stubs/nvml/libnvidia-ml.so.1")
else()
  set_tests_properties(unit.test_card PROPERTIES ENVIRONMENT "${RPX_TEST_ENV};${RPX_SNAPSHOT_ENV}")
endif()
rpx_unit_test(test_probe ${CMAKE_CURRENT_LIST_DIR}/test_probe.c)
set_tests_properties(unit.test_probe PROPERTIES ENVIRONMENT "${RPX_TEST_ENV};${RPX_SNAPSHOT_ENV}")
