# io.cmake — tests of src/io (NPY/NPZ reading, writing, hashing); see tests/CMakeLists.txt.
# Fixtures come from tests/fixtures/make_npz_fixtures.py (the fixtures.npz test).
rpx_unit_test(test_npy ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_npy.c)
rpx_unit_test(test_npz ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_npz.c)
set_tests_properties(unit.test_npy unit.test_npz PROPERTIES FIXTURES_REQUIRED npz)

# C writes with the writer, numpy reads it back (tests/fixtures/check_npz_written.py).
rpx_unit_test(test_npz_write_roundtrip ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_npz_write_roundtrip.c)
target_compile_definitions(test_npz_write_roundtrip PRIVATE
  RPX_NPZ_CHECKER="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/check_npz_written.py")
