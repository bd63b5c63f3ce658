// weir_config_docs: prints docs/CONFIGURATION.md (weir_config_docs > docs/CONFIGURATION.md).
#include <iostream>

#include "config/docs.h"

int main() {
  std::cout << weir::config::RenderConfigurationMarkdown();
  return 0;
}
