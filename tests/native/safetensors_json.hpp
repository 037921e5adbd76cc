// Test-side reading of a safetensors JSON header into the core's table,
// with nlohmann/json, as the module's JavaScript reads it with JSON.parse
// (web/lib/model/safetensors.js): the JSON's structure here, everything the
// data depends on in the core (check_safetensors_entries). The module does
// not contain this; the native tests and the fuzzer use it to reach the
// core's checks from real and fuzzed headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/safetensors.hpp"

namespace safetensors_json {

namespace m = attnlens::model;

// A header's entries and metadata, or the first structural problem.
struct Header {
    std::string error;
    std::vector<m::SafetensorsEntry> entries;
    std::vector<std::pair<std::string, std::string>> metadata;
};

inline bool numbers(const nlohmann::json& array, std::vector<double>& out) {
    if (!array.is_array()) return false;
    for (const auto& value : array) {
        if (!value.is_number()) return false;
        out.push_back(value.get<double>());
    }
    return true;
}

inline Header read(const std::uint8_t* bytes, std::size_t size) {
    Header header;
    const auto json = nlohmann::json::parse(bytes, bytes + size, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return {"the safetensors header is not valid JSON", {}, {}};
    if (!json.is_object()) return {"the safetensors header is not a JSON object", {}, {}};
    for (const auto& [name, value] : json.items()) {
        if (name == "__metadata__") {
            if (!value.is_object()) return {"__metadata__ must be an object of strings", {}, {}};
            for (const auto& [key, text] : value.items()) {
                if (!text.is_string()) return {"__metadata__ value of \"" + key + "\" must be a string", {}, {}};
                header.metadata.emplace_back(key, text.get<std::string>());
            }
            continue;
        }
        m::SafetensorsEntry entry;
        entry.name = name;
        std::vector<double> offsets;
        const bool usable = value.is_object() && value.contains("dtype") && value["dtype"].is_string() &&
                            value.contains("shape") && numbers(value["shape"], entry.shape) &&
                            value.contains("data_offsets") && numbers(value["data_offsets"], offsets) &&
                            offsets.size() == 2;
        if (!usable) return {"tensor \"" + name + "\": expected { dtype, shape, data_offsets: [begin, end] }", {}, {}};
        entry.dtype = value["dtype"].get<std::string>();
        entry.begin = offsets[0];
        entry.end = offsets[1];
        header.entries.push_back(std::move(entry));
    }
    return header;
}

}  // namespace safetensors_json
