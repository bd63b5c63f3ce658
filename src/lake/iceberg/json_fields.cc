#include "lake/iceberg/json_fields.h"

#include <algorithm>

namespace weir::lake::iceberg {
namespace {

Status Missing(const char* key, std::string_view where) {
  return Status::Invalid(where, ": missing \"", key, "\"");
}

Status WrongType(const char* key, std::string_view where, std::string_view expected,
                 const nlohmann::json& value) {
  return Status::Invalid(where, ": \"", key, "\" must be ", expected, ", got ", value.dump());
}

}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what) {
  nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                                /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::Invalid(what, " is not valid JSON");
  return parsed;
}

Result<int64_t> GetLong(const nlohmann::json& object, const char* key, std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Missing(key, where);
  if (!it->is_number_integer()) return WrongType(key, where, "an integer", *it);
  return it->get<int64_t>();
}

Result<int> GetInt(const nlohmann::json& object, const char* key, std::string_view where) {
  WEIR_ASSIGN_OR_RAISE(const int64_t value, GetLong(object, key, where));
  if (value < INT32_MIN || value > INT32_MAX) {
    return WrongType(key, where, "a 32-bit integer", object.at(key));
  }
  return static_cast<int>(value);
}

Result<std::string> GetString(const nlohmann::json& object, const char* key,
                              std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Missing(key, where);
  if (!it->is_string()) return WrongType(key, where, "a string", *it);
  return it->get<std::string>();
}

Result<bool> GetBool(const nlohmann::json& object, const char* key, std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Missing(key, where);
  if (!it->is_boolean()) return WrongType(key, where, "true or false", *it);
  return it->get<bool>();
}

Result<std::optional<int64_t>> GetOptionalLong(const nlohmann::json& object, const char* key,
                                               std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer()) return WrongType(key, where, "an integer", *it);
  return std::optional<int64_t>(it->get<int64_t>());
}

Result<std::optional<std::string>> GetOptionalString(const nlohmann::json& object, const char* key,
                                                     std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return WrongType(key, where, "a string", *it);
  return std::optional<std::string>(it->get<std::string>());
}

nlohmann::json WithoutKeys(const nlohmann::json& object,
                           std::initializer_list<std::string_view> keys) {
  nlohmann::json rest = nlohmann::json::object();
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) rest[it.key()] = it.value();
  }
  return rest;
}

}  // namespace weir::lake::iceberg
