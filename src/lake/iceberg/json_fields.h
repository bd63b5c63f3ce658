// Reading the fields of Iceberg JSON objects without exceptions: each getter names the key and
// the object it expected it in, so metadata from another engine fails with a clear error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace weir::lake::iceberg {

// Parses JSON text; an error names `what` ("table metadata", ...).
Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what);

Result<int64_t> GetLong(const nlohmann::json& object, const char* key, std::string_view where);
Result<int> GetInt(const nlohmann::json& object, const char* key, std::string_view where);
Result<std::string> GetString(const nlohmann::json& object, const char* key,
                              std::string_view where);
Result<bool> GetBool(const nlohmann::json& object, const char* key, std::string_view where);

// Absent or null: nullopt; present with another type: an error.
Result<std::optional<int64_t>> GetOptionalLong(const nlohmann::json& object, const char* key,
                                               std::string_view where);
Result<std::optional<std::string>> GetOptionalString(const nlohmann::json& object, const char* key,
                                                     std::string_view where);

// `object` without the keys weir models, kept so rewriting preserves them.
nlohmann::json WithoutKeys(const nlohmann::json& object,
                           std::initializer_list<std::string_view> keys);

}  // namespace weir::lake::iceberg
