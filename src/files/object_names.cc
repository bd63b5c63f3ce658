#include "files/object_names.h"

namespace weir::files {

std::string DataFileName(std::string_view prefix, const Uuid& id) {
  std::string name(prefix);
  if (!name.empty() && name.back() != '/') name += '/';
  return name + "ducklake-" + id.ToString() + ".parquet";
}

}  // namespace weir::files
