// onnx_graph.hpp — the little of an ONNX file the OpenCV plugin needs beside
// OpenCV's own importer: the graph's inputs that are not initializers (name,
// element type, dims), its nodes (name, op type, outputs) and whether an
// initializer's data lies outside the file. Read from the protobuf wire
// format directly (ModelProto.graph = 7; GraphProto node 1, initializer 5,
// input 11; NodeProto output 2, name 3, op_type 4; ValueInfoProto name 1,
// type 2; TypeProto.tensor_type 1 → elem_type 1, shape 2 → dim 1 →
// dim_value 1 | dim_param 2; TensorProto name 8, data_location 14 — the
// field numbers of onnx/onnx.proto), so the plugin links no protobuf.
#ifndef RPX_RUNTIMES_ONNX_GRAPH_HPP
#define RPX_RUNTIMES_ONNX_GRAPH_HPP

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rpx_rt {

struct onnx_value {
    std::string name;
    int elem_type = 0;            // TensorProto.DataType: 1 float, 7 int64, ...
    std::vector<int64_t> dims;    // -1 for a symbolic or unknown dimension
};

struct onnx_node {
    std::string name, op_type;
    std::vector<std::string> outputs;
};

struct onnx_graph {
    std::vector<onnx_value> inputs;          // graph inputs that are not initializers
    std::vector<onnx_node> nodes;
    std::vector<std::string> external;       // initializers whose data is in another file
    std::map<std::string, size_t> by_name;   // node name → index
    std::map<std::string, size_t> by_output; // output tensor → index of its node
};

// 0 and the graph, or -1 with `why` ("not an ONNX file: ...").
int read_onnx_graph(const std::string &path, onnx_graph &g, std::string &why);
// "float32" for ONNX's element type, nullptr when rpxprof has no such dtype
const char *onnx_dtype_name(int elem_type);

} // namespace rpx_rt

#endif
