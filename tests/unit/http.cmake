# http.cmake — see tests/CMakeLists.txt
# The HTTP API target (src/http/http_target.c) against a tiny server on 127.0.0.1.
rpx_unit_test(test_http ${CMAKE_CURRENT_LIST_DIR}/test_http.c)
