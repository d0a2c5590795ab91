# Harness floor and profiler footprint (issue 3): `cmake --build build --target bench-floor`.
add_executable(rss_of ${CMAKE_CURRENT_SOURCE_DIR}/rss_of.c)
add_custom_target(bench-floor
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_floor.py
          $<TARGET_FILE:rpxprof_cli> $<TARGET_FILE:rss_of>
  DEPENDS rpxprof_cli rss_of rpxprof-demo USES_TERMINAL)
# The Python target's floor against a perf_counter loop (issue 9).
if(TARGET rpxprof-python)
  add_custom_target(bench-python-floor
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_python_floor.py $<TARGET_FILE:rpxprof_cli>
    DEPENDS rpxprof_cli rpxprof-python USES_TERMINAL)
endif()
# The Python package's floor: rpxprof.profile against a perf_counter loop and the CLI (issue 17).
if(TARGET rpxprof_core)
  get_filename_component(rpx_bench_pypath ${RPX_PYTHON_PACKAGE_DIR} DIRECTORY)
  add_custom_target(bench-python-api
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_python_api.py
            $<TARGET_FILE:rpxprof_cli> ${rpx_bench_pypath}
    DEPENDS rpxprof_cli rpxprof-python rpxprof_core USES_TERMINAL)
endif()
# rpxprof.profile(resnet18, x) against torch.utils.benchmark's adaptive_autorange (issue 29).
if(TARGET rpxprof_core)
  add_custom_target(bench-torch-timer
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${rpx_bench_pypath}
            /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_torch_timer.py 5
    DEPENDS rpxprof_core USES_TERMINAL)
endif()
# Real networks through the runtime examples against the host-CPU bound (issue 11).
if(TARGET rpx-opencv-dnn AND TARGET rpx-libtorch)
  add_custom_target(bench-examples
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_examples.py ${CMAKE_BINARY_DIR}
    DEPENDS rpxprof_cli rpx-opencv-dnn rpx-libtorch USES_TERMINAL)
endif()
# The host CPU's measured peak against its estimate (issue 15: no test judges it).
add_custom_target(bench-cpu-peak
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_cpu_peak.py $<TARGET_FILE:rpxprof_cli> 5
  DEPENDS rpxprof_cli USES_TERMINAL)
# Issue 27 §1: what recording where each call ran costs (bench_call_records.c per
# call and per system call; bench_call_records.py a demo_noop run with --call-records
# cpu, full and off, alternating).
add_executable(bench_call_records ${CMAKE_CURRENT_SOURCE_DIR}/bench_call_records.c)
target_include_directories(bench_call_records PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(bench_call_records PRIVATE rpxprof_static)
add_custom_target(bench-call-records
  COMMAND $<TARGET_FILE:bench_call_records> 15
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_call_records.py
          $<TARGET_FILE:rpxprof_cli> 5 100000
  DEPENDS bench_call_records rpxprof_cli rpxprof-demo USES_TERMINAL)
# What --check-outputs costs (issue 30 §3): `cmake --build build --target bench-output-checks`.
if(RPX_TESTS)
  add_custom_target(bench-output-checks
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/bench_output_checks.py
            $<TARGET_FILE:rpxprof_cli> ${CMAKE_BINARY_DIR}/test-models/librpxtest_outputs.so
            ${CMAKE_SOURCE_DIR}/tests/models/python_outputs 3
    DEPENDS rpxprof_cli rpxtest_outputs
    USES_TERMINAL)
endif()
