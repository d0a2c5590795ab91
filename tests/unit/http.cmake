# http.cmake — see tests/CMakeLists.txt
# The HTTP API target (src/http/http_target.c) against a tiny server on 127.0.0.1.
rpx_unit_test(test_http ${CMAKE_CURRENT_LIST_DIR}/test_http.c)
# The bodies that vary (src/loader/http_bodies.c) and the Prometheus parser of --server-metrics.
rpx_unit_test(test_bodies ${CMAKE_CURRENT_LIST_DIR}/test_bodies.c)
