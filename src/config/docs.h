// docs/CONFIGURATION.md, generated from the settings table and the millpond contract.
#pragma once

#include <string>

namespace weir::config {

// The full Markdown text of docs/CONFIGURATION.md. A unit test fails when the committed file
// differs; the weir_config_docs program prints this to regenerate it.
std::string RenderConfigurationMarkdown();

}  // namespace weir::config
