# cost.cmake — the ONNX reader's fuzz target (issue 6), included from
# tests/fuzz/CMakeLists.txt: fuzz_cost runs the whole cost analysis (src/cost,
# with the protobuf-c code generated from onnx.proto) on arbitrary bytes.
# Seeds: small models the onnx package writes (run_fuzz.sh).
# src/common is taken whole (errors, output files, JSON helpers), as it grows.
file(GLOB RPX_FUZZ_COST_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/cost/*.c
     ${CMAKE_SOURCE_DIR}/src/common/*.c)
add_executable(fuzz_cost ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_cost.c ${RPX_FUZZ_COST_SOURCES}
               ${RPX_ONNX_PROTO_SOURCES})
add_dependencies(fuzz_cost rpx_onnx_proto)
target_include_directories(fuzz_cost PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src
                           ${RPX_ONNX_PROTO_INCLUDE})
target_compile_options(fuzz_cost PRIVATE ${RPX_FUZZ_SANITIZERS} -fno-omit-frame-pointer
                       -fno-sanitize-recover=undefined -g)
target_link_options(fuzz_cost PRIVATE ${RPX_FUZZ_SANITIZERS})
target_link_libraries(fuzz_cost PRIVATE PkgConfig::PROTOBUFC PkgConfig::JANSSON m)
