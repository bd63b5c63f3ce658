// Effective settings as text, with secrets masked: the startup logs and `weir check` print it.
#pragma once

#include <string>

#include "config/settings.h"

namespace weir::config {

// One `name = value` line per setting, datasets as `datasets[<i>].<name>` (without datasets,
// weir maintain's settings of every table as `tables[*].<name>`). Passwords and secret
// keys print as ****, a conninfo's password too, and secret librdkafka properties.
std::string Describe(const IngestSettings& settings);
// The same for weir serve: the settings it reads.
std::string Describe(const ServeSettings& settings);

// Only the settings that were given a value or differ from their default, each line followed
// by where its value came from (`(from WEIR_TOPIC)`, `(derived)`): what a start logs at info
// level and `weir check` prints, with the whole table at debug level.
std::string DescribeChanged(const IngestSettings& settings);
std::string DescribeChanged(const ServeSettings& settings);

}  // namespace weir::config
