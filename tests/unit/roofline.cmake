# Unit tests for the hardware-parametric layer: the GPU spec table, the
# roofline bounds, user spec files, name matching, the CPU target, the SVG.
rpx_unit_test(test_roofline ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_roofline.c)
rpx_unit_test(test_roofline_cpu ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_roofline_cpu.c)
set_tests_properties(unit.test_roofline_cpu PROPERTIES TIMEOUT 120)
