# The house kept clean (issue 35 §3, §5): no arrow back up the layers and no circle
# (scripts/deps.py --check over this build's object files; the long functions it counts
# are information only), and one status map that docs/errors.md's table follows.
add_test(NAME house.deps COMMAND ${RPX_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/deps.py
         --build ${CMAKE_BINARY_DIR} --root ${CMAKE_SOURCE_DIR} --check)
set_tests_properties(house.deps PROPERTIES TIMEOUT 300 LABELS fast)
rpx_unit_test(test_status ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_status.c)
target_compile_definitions(test_status PRIVATE RPX_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
# Two reports compared in memory (src/compare/, rpxprof/comparison.h): what audits use.
rpx_unit_test(test_comparison ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_comparison.c)
# The audits through a stand-in pair runner, comparing their arms in memory (src/runner/audit.c).
rpx_unit_test(test_audit ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_audit.c)
target_compile_definitions(test_audit PRIVATE RPX_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
