// The core's checks of a safetensors tensor table (check_safetensors_entries):
// valid tables read back exactly; every entry that breaks the format is
// refused with a message naming the tensor and the problem. The JSON itself
// is read in JavaScript (JSON.parse; its checks are tested in
// tests/wasm/model-safetensors-header.test.mjs); here headers reach the core
// through the test-side reader (safetensors_json.hpp), as the fuzzer's do.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model/safetensors.hpp"
#include "safetensors_json.hpp"

namespace {

namespace m = attnlens::model;
using Catch::Contains;

m::SafetensorsEntry entry(std::string name, std::string dtype, std::vector<double> shape, double begin, double end) {
    return {std::move(name), std::move(dtype), std::move(shape), begin, end};
}

std::string error_of(const std::vector<m::SafetensorsEntry>& entries, std::uint64_t data_bytes = 1000) {
    std::vector<m::SafetensorsTensor> tensors;
    return m::check_safetensors_entries(entries, data_bytes, tensors);
}

std::string error_of(const m::SafetensorsEntry& one) { return error_of(std::vector<m::SafetensorsEntry>{one}); }

}  // namespace

TEST_CASE("safetensors: a valid header reads back tensors and metadata in order", "[model][safetensors]") {
    // Written as Python's safetensors does (padded with spaces to 8 bytes).
    const std::string json =
        "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\/\"},"
        "\"wte.weight\":{\"dtype\":\"F32\",\"shape\":[3,48],\"data_offsets\":[0,576]},"
        "\"h.0.ln_1.bias\" : { \"shape\" : [ 48 ] , \"data_offsets\" : [ 576 , 672 ] , \"dtype\" : \"BF16\" },\n"
        "\"empty\":{\"dtype\":\"I64\",\"shape\":[0, 7],\"data_offsets\":[672,672]},"
        "\"scalar\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[672,673],\"extra\":[1,{\"x\":null},true,-2.5e3]}}    ";
    const auto header = safetensors_json::read(reinterpret_cast<const std::uint8_t*>(json.data()), json.size());
    REQUIRE(header.error == "");
    std::vector<m::SafetensorsTensor> tensors;
    REQUIRE(m::check_safetensors_entries(header.entries, 673, tensors) == "");
    REQUIRE(tensors.size() == 4);
    // nlohmann/json's objects are sorted by key; JSON.parse keeps the file's order.
    const auto named = [&](const std::string& name) {
        for (const auto& tensor : tensors)
            if (tensor.name == name) return tensor;
        FAIL("no tensor " << name);
        return m::SafetensorsTensor{};
    };
    REQUIRE(named("wte.weight").dtype == "F32");
    REQUIRE(named("wte.weight").shape == std::vector<std::uint64_t>{3, 48});
    REQUIRE(named("wte.weight").begin == 0);
    REQUIRE(named("wte.weight").end == 576);
    REQUIRE(named("h.0.ln_1.bias").dtype == "BF16");
    REQUIRE(named("empty").shape == std::vector<std::uint64_t>{0, 7});
    REQUIRE(named("scalar").shape.empty());  // a scalar: one element
    REQUIRE(header.metadata.size() == 2);
    REQUIRE(header.metadata[0] == std::pair<std::string, std::string>{"format", "pt"});
    REQUIRE(header.metadata[1].second == "caf\xC3\xA9 \xF0\x9F\x98\x80 \"q\" \\ /");
}

TEST_CASE("safetensors: every dtype has its size", "[model][safetensors]") {
    const std::pair<const char*, std::size_t> sizes[] = {{"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
                                                         {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
                                                         {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    for (const auto& [dtype, size] : sizes) {
        INFO(dtype);
        REQUIRE(m::safetensors_dtype_size(dtype) == size);
        REQUIRE(error_of(entry("a", dtype, {5}, 0, 5.0 * size)) == "");
    }
    REQUIRE(m::safetensors_dtype_size("f32") == 0);
}

TEST_CASE("safetensors: entries that break the format name the tensor", "[model][safetensors]") {
    const auto f32 = [](std::vector<double> shape, double begin, double end) {
        return entry("a", "F32", std::move(shape), begin, end);
    };
    REQUIRE_THAT(error_of(f32({2, 3}, 0, 2400)),
                 Contains("tensor \"a\"") && Contains("[0, 2400] reach past the end of the data (1000 bytes)"));
    REQUIRE_THAT(error_of(f32({2, 3}, 24, 0)), Contains("tensor \"a\"") && Contains("end before they begin"));
    REQUIRE_THAT(error_of(f32({2, 3}, 0, 20)),
                 Contains("tensor \"a\"") && Contains("shape [2, 3] of F32 needs 24 bytes, but data_offsets [0, 20] hold 20"));
    REQUIRE_THAT(error_of(entry("a", "F128", {2, 3}, 0, 24)),
                 Contains("tensor \"a\"") && Contains("unknown dtype \"F128\""));
    REQUIRE_THAT(error_of(f32({2, -3}, 0, 24)), Contains("tensor \"a\"") && Contains("shape dimension -3 is negative"));
    REQUIRE_THAT(error_of(f32({2, 1e23}, 0, 24)), Contains("shape dimension 9.9999999999999992e+22 is too large"));
    // 2^53 - 1 is the largest size a JSON number holds exactly; 2^53 is refused.
    REQUIRE_THAT(error_of(f32({9007199254740992.0}, 0, 24)), Contains("is too large (at most 2^53 - 1)"));
    REQUIRE_THAT(error_of(f32({4294967296.0, 4294967296.0}, 0, 24)), Contains("overflows 64 bits"));
    REQUIRE_THAT(error_of(f32({2.5, 3}, 0, 24)), Contains("tensor \"a\": expected an integer, found 2.5"));
    REQUIRE_THAT(error_of(f32({2, 3}, -1, 24)), Contains("data offset -1 is negative"));
    REQUIRE_THAT(error_of(f32({2, 3}, 0, 24.5)), Contains("expected an integer, found 24.5"));
    REQUIRE_THAT(error_of(f32(std::vector<double>(65, 1.0), 0, 4)), Contains("shape has more than 64 dimensions"));
    REQUIRE(error_of(f32(std::vector<double>(64, 1.0), 0, 4)) == "");
    // -0 is a zero.
    REQUIRE(error_of(f32({-0.0, 3}, 0, 0)) == "");
    // A shape with a zero has no bytes, however large its other sizes.
    REQUIRE(error_of(f32({0, 4294967296.0, 4294967296.0}, 8, 8)) == "");
}

TEST_CASE("safetensors: duplicate names are refused; the table reads back in order", "[model][safetensors]") {
    const auto u8 = [](std::string name, double begin) { return entry(std::move(name), "U8", {1}, begin, begin + 1); };
    REQUIRE_THAT(error_of({u8("a", 0), u8("b", 1), u8("a", 2)}), Contains("duplicate tensor name \"a\""));
    std::vector<m::SafetensorsTensor> tensors;
    REQUIRE(m::check_safetensors_entries({u8("z", 0), u8("b", 1)}, 2, tensors) == "");
    REQUIRE(tensors.size() == 2);
    REQUIRE(tensors[0].name == "z");
    REQUIRE(tensors[1].begin == 1);
    REQUIRE(error_of(std::vector<m::SafetensorsEntry>{}) == "");
}

TEST_CASE("safetensors: a header over 100 MB, or empty, is refused", "[model][safetensors]") {
    REQUIRE(m::safetensors_header_size_error(m::kMaxSafetensorsHeaderBytes) == "");
    REQUIRE_THAT(m::safetensors_header_size_error(m::kMaxSafetensorsHeaderBytes + 1),
                 Contains("100000001 bytes") && Contains("at most 100000000"));
    REQUIRE_THAT(m::safetensors_header_size_error(0), Contains("empty"));
}
