# The Python package's tests: pytest on Debian's python3 with PYTHONPATH=<build>/python
# (the package as `cmake --build` leaves it). Under the sanitizers the extension is
# sanitized and python3 is not: the ASan and UBSan runtimes are preloaded (leak checks
# off: the interpreter is never finalised), or the tests skip saying why.
set(RPX_PY_PACKAGE_TESTS package reference results pytest_plugin torch autorange views new_user signals
    compare_checkouts pytest_history sweep)
if(TARGET rpxprof_core)
  get_filename_component(rpx_pypath ${RPX_PYTHON_PACKAGE_DIR} DIRECTORY)
  set(rpx_pyenv "${RPX_TEST_ENV};PYTHONPATH=${rpx_pypath};RPX_BIN=$<TARGET_FILE:rpxprof_cli>;RPX_BUILD=${CMAKE_BINARY_DIR};RPX_SOURCE=${CMAKE_SOURCE_DIR};RPX_FIXTURES=${CMAKE_BINARY_DIR}/fixtures")
  set(rpx_pyskip "")
  if(RPX_SANITIZE)
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE rpx_asan OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libubsan.so
                    OUTPUT_VARIABLE rpx_ubsan OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(IS_ABSOLUTE "${rpx_asan}" AND EXISTS "${rpx_asan}" AND IS_ABSOLUTE "${rpx_ubsan}" AND EXISTS "${rpx_ubsan}")
      list(APPEND rpx_pyenv "LD_PRELOAD=${rpx_asan}:${rpx_ubsan}"
           "ASAN_OPTIONS=detect_leaks=0")
    else()
      set(rpx_pyskip "the sanitized extension needs the ASan/UBSan runtimes preloaded into python3, and ${CMAKE_C_COMPILER} does not name them")
    endif()
  endif()
  # one entry per file section (tests/list_cases.py); busy-wait benchmarks compared at 5 %
  # (results, pytest_plugin) run alone, as the CLI's timing tests; SLOW as in cli/cli.cmake
  set(rpx_pyopts_results SERIAL)
  set(rpx_pyopts_pytest_plugin SERIAL SLOW)
  set(rpx_pyopts_compare_checkouts SERIAL)
  set(rpx_pyopts_sweep SERIAL)
  set(rpx_pyopts_pytest_history SERIAL SLOW)
  set(rpx_pyopts_package SLOW pip_install)
  set(rpx_pyopts_reference SLOW torch)
  set(rpx_pyopts_torch SLOW)
  foreach(t ${RPX_PY_PACKAGE_TESTS})
    set(script ${CMAKE_CURRENT_SOURCE_DIR}/python/test_${t}.py)
    if(NOT EXISTS ${script})
    elseif(rpx_pyskip)
      add_test(NAME python.${t} COMMAND sh -c "echo 'skipped: ${rpx_pyskip}'; exit 77")
      set_tests_properties(python.${t} PROPERTIES SKIP_RETURN_CODE 77 LABELS "python;fast")
    else()
      rpx_py_cases(python.${t} ${script} KIND pytest TIMEOUT 1200 ${rpx_pyopts_${t}}
                   COMMAND ${RPX_PYTHON} -m pytest -q -p no:cacheprovider ENV ${rpx_pyenv})
    endif()
  endforeach()
else()
  foreach(t ${RPX_PY_PACKAGE_TESTS})
    add_test(NAME python.${t} COMMAND sh -c
             "echo 'skipped: no python3-embed (Debian: python3-dev), so rpxprof._core is not built'; exit 77")
    set_tests_properties(python.${t} PROPERTIES SKIP_RETURN_CODE 77 LABELS "python;fast")
  endforeach()
endif()
