# The model_file kind's C++ runtime plugins (librpxprof-opencv.so,
# librpxprof-torch.so) driven through their C exports by a small harness
# (tests/runtimes/runtime_harness.c) on torchvision's resnet18 exported at
# test time. The script skips (77), with the reason, a plugin that was not
# built because its package is absent.
add_executable(rpx-runtime-harness ${CMAKE_SOURCE_DIR}/tests/runtimes/runtime_harness.c)
target_include_directories(rpx-runtime-harness PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(rpx-runtime-harness PRIVATE rpxprof_static)
rpx_py_test(cli.runtime_plugins cli/test_runtime_plugins.py SERIAL SLOW TIMEOUT 1200)
