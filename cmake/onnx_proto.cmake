# onnx_proto.cmake — C code for ONNX's protobuf messages, generated at build
# time by protoc-c from the system's onnx.proto (Debian: libonnx-dev ships
# /usr/include/onnx/onnx.proto; protoc-c is in protobuf-c-compiler, the runtime
# in libprotobuf-c-dev). Sets:
#   RPX_ONNX_PROTO_SOURCES   the generated .c file (compiled without warnings)
#   RPX_ONNX_PROTO_INCLUDE   the folder holding onnx.pb-c.h (include "onnx.pb-c.h")
# and the imported target PkgConfig::PROTOBUFC.
pkg_check_modules(PROTOBUFC REQUIRED IMPORTED_TARGET libprotobuf-c)
find_program(RPX_PROTOC_C NAMES protoc-c protoc-gen-c
             DOC "protoc-c (Debian: protobuf-c-compiler)")
if(NOT RPX_PROTOC_C)
  message(FATAL_ERROR "protoc-c not found: install protobuf-c-compiler (scripts/setup.sh)")
endif()
find_file(RPX_ONNX_PROTO onnx.proto PATHS /usr/include/onnx /usr/local/include/onnx
          NO_DEFAULT_PATH DOC "onnx.proto of the ONNX release to build against")
if(NOT RPX_ONNX_PROTO)
  message(FATAL_ERROR "onnx.proto not found: install libonnx-dev (scripts/setup.sh) "
                      "or pass -DRPX_ONNX_PROTO=/path/to/onnx.proto")
endif()

set(RPX_ONNX_PROTO_INCLUDE ${CMAKE_BINARY_DIR}/onnx_proto)
set(RPX_ONNX_PROTO_SOURCES ${RPX_ONNX_PROTO_INCLUDE}/onnx.pb-c.c)
get_filename_component(_rpx_proto_dir ${RPX_ONNX_PROTO} DIRECTORY)
# Copied next to the output first: protoc-c names the files after the .proto
# path relative to --proto_path.
add_custom_command(
  OUTPUT ${RPX_ONNX_PROTO_INCLUDE}/onnx.pb-c.c ${RPX_ONNX_PROTO_INCLUDE}/onnx.pb-c.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${RPX_ONNX_PROTO_INCLUDE}
  COMMAND ${CMAKE_COMMAND} -E copy ${RPX_ONNX_PROTO} ${RPX_ONNX_PROTO_INCLUDE}/onnx.proto
  COMMAND ${RPX_PROTOC_C} --proto_path=${RPX_ONNX_PROTO_INCLUDE}
          --c_out=${RPX_ONNX_PROTO_INCLUDE} ${RPX_ONNX_PROTO_INCLUDE}/onnx.proto
  DEPENDS ${RPX_ONNX_PROTO}
  COMMENT "protoc-c: C code for ${RPX_ONNX_PROTO}"
  VERBATIM)
# Generated code: not ours to lint.
set_source_files_properties(${RPX_ONNX_PROTO_SOURCES} PROPERTIES
  GENERATED TRUE COMPILE_OPTIONS "-w")
# For targets in other folders (tests/fuzz) that compile the generated file.
add_custom_target(rpx_onnx_proto DEPENDS ${RPX_ONNX_PROTO_SOURCES})
