// The safetensors header parser: valid headers read back exactly; every
// malformed one is refused with a message naming the problem (and, for bad
// JSON, its byte position).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model/safetensors.hpp"

namespace {

namespace m = attnlens::model;
using Catch::Contains;

m::SafetensorsHeader parse(const std::string& json, std::uint64_t data_bytes = 1000) {
    return m::parse_safetensors_header(reinterpret_cast<const std::uint8_t*>(json.data()), json.size(), data_bytes);
}

std::string error_of(const std::string& json, std::uint64_t data_bytes = 1000) { return parse(json, data_bytes).error; }

// An entry of one F32 tensor "a" of shape [2, 3] at [0, 24], with `extra` spliced in.
std::string one_tensor(const std::string& entry) { return "{\"a\": " + entry + "}"; }

}  // namespace

TEST_CASE("safetensors: a valid header reads back tensors and metadata in order", "[model][safetensors]") {
    // Written as Python's safetensors does (padded with spaces to 8 bytes).
    const std::string json =
        "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\/\"},"
        "\"wte.weight\":{\"dtype\":\"F32\",\"shape\":[3,48],\"data_offsets\":[0,576]},"
        "\"h.0.ln_1.bias\" : { \"shape\" : [ 48 ] , \"data_offsets\" : [ 576 , 672 ] , \"dtype\" : \"BF16\" },\n"
        "\"empty\":{\"dtype\":\"I64\",\"shape\":[0, 7],\"data_offsets\":[672,672]},"
        "\"scalar\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[672,673],\"extra\":[1,{\"x\":null},true,-2.5e3]}}    ";
    const auto header = parse(json, 673);
    REQUIRE(header.error == "");
    REQUIRE(header.tensors.size() == 4);
    REQUIRE(header.tensors[0].name == "wte.weight");
    REQUIRE(header.tensors[0].dtype == "F32");
    REQUIRE(header.tensors[0].shape == std::vector<std::uint64_t>{3, 48});
    REQUIRE(header.tensors[0].begin == 0);
    REQUIRE(header.tensors[0].end == 576);
    REQUIRE(header.tensors[1].name == "h.0.ln_1.bias");
    REQUIRE(header.tensors[1].dtype == "BF16");
    REQUIRE(header.tensors[2].shape == std::vector<std::uint64_t>{0, 7});
    REQUIRE(header.tensors[3].shape.empty());  // a scalar: one element
    REQUIRE(header.metadata.size() == 2);
    REQUIRE(header.metadata[0] == std::pair<std::string, std::string>{"format", "pt"});
    REQUIRE(header.metadata[1].second == "caf\xC3\xA9 \xF0\x9F\x98\x80 \"q\" \\ /");
}

TEST_CASE("safetensors: names keep their Unicode, raw or escaped", "[model][safetensors]") {
    const auto header = parse("{\"\xE6\x97\xA5\\u672c\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}");
    REQUIRE(header.error == "");
    REQUIRE(header.tensors[0].name == "\xE6\x97\xA5\xE6\x9C\xAC");
}

TEST_CASE("safetensors: every dtype has its size", "[model][safetensors]") {
    const std::pair<const char*, std::size_t> sizes[] = {{"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
                                                         {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
                                                         {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    for (const auto& [dtype, size] : sizes) {
        INFO(dtype);
        REQUIRE(m::safetensors_dtype_size(dtype) == size);
        const std::string entry = std::string("{\"dtype\":\"") + dtype + "\",\"shape\":[5],\"data_offsets\":[0," +
                                  std::to_string(5 * size) + "]}";
        REQUIRE(error_of(one_tensor(entry)) == "");
    }
    REQUIRE(m::safetensors_dtype_size("f32") == 0);
}

TEST_CASE("safetensors: empty, not JSON, truncated and trailing text are refused", "[model][safetensors]") {
    REQUIRE_THAT(error_of(""), Contains("empty"));
    REQUIRE_THAT(error_of("hello"), Contains("not a JSON object") && Contains("at byte 0"));
    REQUIRE_THAT(error_of("[1, 2]"), Contains("not a JSON object"));
    REQUIRE_THAT(error_of("   "), Contains("not a JSON object") && Contains("at byte 3"));
    const std::string valid = one_tensor("{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}");
    REQUIRE(error_of(valid) == "");
    // Every strict prefix is refused, with the position where it ends.
    for (std::size_t length = 1; length < valid.size(); ++length) {
        INFO(valid.substr(0, length));
        const auto error = error_of(valid.substr(0, length));
        REQUIRE_THAT(error, Contains("not valid JSON") && Contains("at byte " + std::to_string(length)));
    }
    REQUIRE_THAT(error_of(valid + "x"), Contains("expected end of input") && Contains("at byte " + std::to_string(valid.size())));
    REQUIRE_THAT(error_of(valid + "{}"), Contains("expected end of input"));
}

// Malformed JSON is refused by nlohmann/json with its reason, at the byte
// where the problem shows (counted from 0).
TEST_CASE("safetensors: malformed JSON is refused with its position", "[model][safetensors]") {
    const auto entry = [](const std::string& shape) {
        return one_tensor("{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":[0,24]}");
    };
    const auto malformed = [](const std::string& json, const std::string& reason, std::size_t byte) {
        INFO(json);
        REQUIRE_THAT(error_of(json), Contains("not valid JSON") && Contains(reason) &&
                                         Contains("at byte " + std::to_string(byte)));
    };
    malformed(entry("[2,3,]"), "unexpected ']'", 34);  // a trailing comma
    malformed(entry("[2,,3]"), "unexpected ','", 32);
    malformed(entry("[02,3]"), "unexpected number literal", 31);  // a leading zero ends the number 0
    malformed(entry("[2 3]"), "expected ']'", 32);
    malformed("{\"a\":{\"dtype\":\"F32\",}}", "expected string literal", 20);
    malformed("{\"a\" {}}", "expected ':'", 5);
    malformed("{'a': {}}", "invalid literal", 1);
    malformed("{\"a\":{\"dtype\":\"F\x01\"}}", "control character U+0001 (SOH) must be escaped", 16);
    malformed("{\"a\":{\"dtype\":\"F\\x\"}}", "forbidden character after backslash", 17);
    malformed("{\"a\":{\"dtype\":\"\\u12G4\"}}", "must be followed by 4 hex digits", 19);
    malformed("{\"\\ud83d\":{}}", "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF", 8);
    malformed("{\"\\ud83d\\u0041\":{}}", "surrogate U+D800..U+DBFF must be followed", 13);
    malformed("{\"\\ude00\":{}}", "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF", 7);
    malformed("{\"\xC3\":{}}", "ill-formed UTF-8", 3);
    malformed("{\"\xC0\xAF\":{}}", "ill-formed UTF-8", 2);          // overlong '/'
    malformed("{\"\xED\xA0\x80\":{}}", "ill-formed UTF-8", 3);      // encoded surrogate
    malformed("{\"\xF4\x90\x80\x80\":{}}", "ill-formed UTF-8", 3);  // past U+10FFFF
    malformed("{\"a\":{\"x\":tru}}", "invalid literal", 13);
    malformed("{\"a\":{\"x\":-}}", "expected digit after '-'", 11);
    malformed("{\"a\":{\"x\":1e400}}", "number overflow", 14);
    // Messages stay UTF-8: the bytes of malformed text are shown by value.
    REQUIRE_THAT(error_of("{\"\xC3\":{}}"), Contains("<C3>"));
    // A long token is shown by its end only.
    const auto unterminated = error_of("{\"a\":{\"x\":\"" + std::string(100000, 'z'));
    REQUIRE_THAT(unterminated, Contains("missing closing quote"));
    REQUIRE(unterminated.size() < 300);
    // Integers must be written as integers, as safetensors' own reader requires.
    REQUIRE_THAT(error_of(entry("[2.0,3]")), Contains("tensor \"a\": expected an integer, found 2.0"));
    REQUIRE_THAT(error_of(entry("[2e0,3]")), Contains("expected an integer, found 2e0"));
    REQUIRE_THAT(error_of(entry("[2,\"3\"]")), Contains("shape dimension must be an integer"));
    REQUIRE_THAT(error_of(entry("[2,[3]]")), Contains("shape dimension must be an integer"));
}

TEST_CASE("safetensors: nesting deeper than the limit is refused", "[model][safetensors]") {
    std::string deep = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24],\"x\":";
    for (int i = 0; i < 100000; ++i) deep += '[';
    REQUIRE_THAT(error_of(deep), Contains("nesting deeper than 8 levels"));
    std::string closed = deep;
    for (int i = 0; i < 100000; ++i) closed += ']';
    REQUIRE_THAT(error_of(closed + "}}"), Contains("nesting deeper than 8 levels"));
    std::string ok = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24],\"x\":[[[[[[1]]]]]]}}";
    REQUIRE(error_of(ok) == "");
    REQUIRE_THAT(error_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24],\"x\":[[[[[[[1]]]]]]]}}"),
                 Contains("nesting deeper than 8 levels"));
}

TEST_CASE("safetensors: entries that break the format name the tensor", "[model][safetensors]") {
    const auto with = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
        return one_tensor("{\"dtype\":" + dtype + ",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}");
    };
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,3]", "[0,2400]")),
                 Contains("tensor \"a\"") && Contains("[0, 2400] reach past the end of the data (1000 bytes)"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,3]", "[24,0]")), Contains("tensor \"a\"") && Contains("end before they begin"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,3]", "[0,20]")),
                 Contains("tensor \"a\"") && Contains("shape [2, 3] of F32 needs 24 bytes, but data_offsets [0, 20] hold 20"));
    REQUIRE_THAT(error_of(with("\"F128\"", "[2,3]", "[0,24]")), Contains("tensor \"a\"") && Contains("unknown dtype \"F128\""));
    REQUIRE_THAT(error_of(with("32", "[2,3]", "[0,24]")), Contains("dtype must be a string"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,-3]", "[0,24]")), Contains("tensor \"a\"") && Contains("shape dimension -3 is negative"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,99999999999999999999999]", "[0,24]")),
                 Contains("shape dimension 99999999999999999999999 is too large"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[9007199254740993]", "[0,24]")), Contains("too large"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[4294967296,4294967296]", "[0,24]")), Contains("overflows 64 bits"));
    REQUIRE_THAT(error_of(with("\"F32\"", "3", "[0,24]")), Contains("shape must be an array"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,3]", "[0]")), Contains("exactly two integers"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,3]", "[0,24,48]")), Contains("exactly two integers"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,3]", "[-1,24]")), Contains("data offset -1 is negative"));
    REQUIRE_THAT(error_of(with("\"F32\"", "[2,3]", "{}")), Contains("data_offsets must be an array"));
    REQUIRE_THAT(error_of(one_tensor("{\"shape\":[2,3],\"data_offsets\":[0,24]}")), Contains("tensor \"a\": the entry has no dtype"));
    REQUIRE_THAT(error_of(one_tensor("{\"dtype\":\"F32\",\"data_offsets\":[0,24]}")), Contains("has no shape"));
    REQUIRE_THAT(error_of(one_tensor("{\"dtype\":\"F32\",\"shape\":[2,3]}")), Contains("has no data_offsets"));
    REQUIRE_THAT(error_of(one_tensor("{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,24]}")),
                 Contains("duplicate key \"dtype\""));
    REQUIRE_THAT(error_of(one_tensor("[1]")), Contains("tensor \"a\"") && Contains("expected an object"));
    // A shape with a zero has no bytes, however large its other sizes.
    REQUIRE(error_of(with("\"F32\"", "[0,4294967296,4294967296]", "[8,8]")) == "");
}

TEST_CASE("safetensors: duplicate names and bad metadata are refused", "[model][safetensors]") {
    const std::string entry = "{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}";
    REQUIRE_THAT(error_of("{\"a\":" + entry + ",\"b\":" + entry + ",\"a\":" + entry + "}"),
                 Contains("duplicate tensor name \"a\""));
    REQUIRE_THAT(error_of("{\"__metadata__\":{\"k\":1}}"), Contains("__metadata__ value of \"k\" must be a string"));
    REQUIRE_THAT(error_of("{\"__metadata__\":[]}"), Contains("__metadata__ must be an object"));
    REQUIRE_THAT(error_of("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"), Contains("the key \"k\" twice"));
    REQUIRE_THAT(error_of("{\"__metadata__\":{},\"__metadata__\":{}}"), Contains("__metadata__ twice"));
    REQUIRE(error_of("{\"__metadata__\":{}}") == "");
    REQUIRE(error_of("{}") == "");
}

TEST_CASE("safetensors: a header over 100 MB is refused before it is read", "[model][safetensors]") {
    const std::string huge(m::kMaxSafetensorsHeaderBytes + 1, ' ');
    REQUIRE_THAT(error_of(huge), Contains("100000001 bytes") && Contains("at most 100000000"));
}
