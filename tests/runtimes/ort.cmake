# ort.cmake — the ONNX Runtime plugin's tests: ort_probe drives
# librpxprof-ort.so through its plugin ABI; test_ort_plugin.py makes ONNX
# files with torch and onnx and checks outputs, the runtime section, layers
# and errors (skipped with the reason when libonnxruntime.so.1 is absent).
add_executable(ort_probe ${CMAKE_CURRENT_LIST_DIR}/ort_probe.c)
target_include_directories(ort_probe PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(ort_probe PRIVATE rpxprof_static)
add_dependencies(ort_probe rpxprof-ort)
rpx_py_test(cli.ort_plugin cli/test_ort_plugin.py SLOW)
