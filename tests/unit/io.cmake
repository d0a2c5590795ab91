# io.cmake — see tests/CMakeLists.txt
