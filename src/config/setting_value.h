// Setting values as text: parsing with bounds and allowed values, formatting, and display
// with secrets masked.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "config/setting_table.h"

namespace weir::config {

// Parses text (kString/kInt/kBool/kBytes/kDuration/kEnum scalars, comma-separated kStringList)
// and checks bounds and allowed values. The error text names the value, not the setting:
// `value "12x" is not a byte size`.
std::variant<Value, std::string> ParseValue(const Setting& setting, std::string_view text);

// The value as text in the setting's own grammar: "100MiB", "60s", "a,b", "k=v,k=v".
std::string FormatValue(const Setting& setting, const Value& value);

// The value for display, masked according to the setting's secrecy.
std::string DisplayValue(const Setting& setting, const Value& value);

// A libpq conninfo ("key=value ..." or a postgres:// URI) with its password replaced by ****.
std::string MaskConninfo(std::string_view conninfo);

// True for librdkafka property names whose values are secret (passwords, secrets, JAAS).
bool IsSecretProperty(std::string_view key);

}  // namespace weir::config
