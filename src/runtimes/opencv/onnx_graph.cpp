// onnx_graph.cpp — reads an ONNX file's inputs and nodes from the protobuf
// wire format (onnx_graph.hpp says which fields).
#include "onnx_graph.hpp"

#include <fstream>
#include <iterator>
#include <set>

namespace rpx_rt {

namespace {

// One protobuf message: its fields one after another.
struct reader {
    const unsigned char *p, *end;
    bool bad = false;

    bool varint(uint64_t &v)
    {
        v = 0;
        for (int shift = 0; shift < 64 && p < end; shift += 7) {
            unsigned char b = *p++;
            v |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        bad = true;
        return false;
    }
    // the next field: its number, wire type, and (wire type 2) its bytes or
    // (0) its value; false at the end or on a malformed field
    bool next(uint32_t &field, int &wire, reader &sub, uint64_t &value)
    {
        uint64_t key, len;
        if (p >= end || !varint(key)) return false;
        field = (uint32_t)(key >> 3);
        wire = (int)(key & 7);
        switch (wire) {
        case 0: return varint(value);
        case 1: if (end - p < 8) break; p += 8; return true;
        case 5: if (end - p < 4) break; p += 4; return true;
        case 2:
            if (!varint(len) || len > (uint64_t)(end - p)) break;
            sub = reader{p, p + len};
            p += len;
            return true;
        }
        bad = true;
        return false;
    }
    std::string text() const { return std::string((const char *)p, (size_t)(end - p)); }
};

void read_shape(reader r, std::vector<int64_t> &dims)
{
    uint32_t f; int w; reader sub{nullptr, nullptr}; uint64_t v;
    while (r.next(f, w, sub, v)) {
        if (f != 1 || w != 2) continue;   // TensorShapeProto.dim
        int64_t d = -1;
        uint32_t f2; int w2; reader s2{nullptr, nullptr}; uint64_t v2;
        while (sub.next(f2, w2, s2, v2))
            if (f2 == 1 && w2 == 0) d = (int64_t)v2;
        dims.push_back(d);
    }
}

void read_value(reader r, onnx_value &out)
{
    uint32_t f; int w; reader sub{nullptr, nullptr}; uint64_t v;
    while (r.next(f, w, sub, v)) {
        if (f == 1 && w == 2) out.name = sub.text();
        if (f != 2 || w != 2) continue;   // TypeProto
        uint32_t f2; int w2; reader tensor{nullptr, nullptr}; uint64_t v2;
        while (sub.next(f2, w2, tensor, v2)) {
            if (f2 != 1 || w2 != 2) continue;   // tensor_type
            uint32_t f3; int w3; reader s3{nullptr, nullptr}; uint64_t v3;
            while (tensor.next(f3, w3, s3, v3)) {
                if (f3 == 1 && w3 == 0) out.elem_type = (int)v3;
                if (f3 == 2 && w3 == 2) read_shape(s3, out.dims);
            }
        }
    }
}

void read_node(reader r, onnx_node &out)
{
    uint32_t f; int w; reader sub{nullptr, nullptr}; uint64_t v;
    while (r.next(f, w, sub, v)) {
        if (w != 2) continue;
        if (f == 2) out.outputs.push_back(sub.text());
        else if (f == 3) out.name = sub.text();
        else if (f == 4) out.op_type = sub.text();
    }
}

// an initializer's name, and whether its data lies in another file
void read_initializer(reader r, std::string &name, bool &external)
{
    uint32_t f; int w; reader sub{nullptr, nullptr}; uint64_t v;
    external = false;
    while (r.next(f, w, sub, v)) {
        if (f == 8 && w == 2) name = sub.text();
        if (f == 14 && w == 0 && v == 1) external = true;
    }
}

} // namespace

int read_onnx_graph(const std::string &path, onnx_graph &g, std::string &why)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) { why = "cannot be read"; return -1; }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    reader model{(const unsigned char *)bytes.data(),
                 (const unsigned char *)bytes.data() + bytes.size()};
    uint32_t f; int w; reader graph{nullptr, nullptr}; uint64_t v;
    bool found = false;
    while (model.next(f, w, graph, v)) {
        if (f != 7 || w != 2) continue;
        found = true;
        std::vector<onnx_value> inputs;
        std::set<std::string> inits;
        uint32_t f2; int w2; reader sub{nullptr, nullptr}; uint64_t v2;
        while (graph.next(f2, w2, sub, v2)) {
            if (w2 != 2) continue;
            if (f2 == 1) {
                onnx_node n;
                read_node(sub, n);
                g.by_name[n.name] = g.nodes.size();
                for (const std::string &o : n.outputs) g.by_output[o] = g.nodes.size();
                g.nodes.push_back(n);
            } else if (f2 == 5) {
                std::string name;
                bool external;
                read_initializer(sub, name, external);
                inits.insert(name);
                if (external) g.external.push_back(name);
            } else if (f2 == 11) {
                inputs.emplace_back();
                read_value(sub, inputs.back());
            }
        }
        if (graph.bad) break;
        for (const onnx_value &i : inputs)
            if (!inits.count(i.name)) g.inputs.push_back(i);
    }
    if (model.bad || graph.bad || !found) {
        why = "is not an ONNX model (no graph in its protobuf)";
        return -1;
    }
    return 0;
}

const char *onnx_dtype_name(int t)
{
    switch (t) {
    case 1: return "float32";
    case 2: return "uint8";
    case 3: return "int8";
    case 4: return "uint16";
    case 5: return "int16";
    case 6: return "int32";
    case 7: return "int64";
    case 9: return "bool";
    case 10: return "float16";
    case 11: return "float64";
    case 12: return "uint32";
    case 13: return "uint64";
    }
    return nullptr;
}

} // namespace rpx_rt
