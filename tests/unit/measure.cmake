# measure.cmake — see tests/CMakeLists.txt
