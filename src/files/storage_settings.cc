#include "files/storage_settings.h"

#include <array>

namespace weir::files {
namespace {

constexpr std::array<std::string_view, 6> kAzureSchemes = {"abfss", "abfs", "wasbs",
                                                           "wasb",  "az",   "azure"};

std::string_view SchemeOf(std::string_view location) {
  const auto end = location.find("://");
  return end == std::string_view::npos ? std::string_view() : location.substr(0, end);
}

}  // namespace

Result<StorageKind> StorageKindOf(std::string_view location) {
  const std::string_view scheme = SchemeOf(location);
  if (scheme.empty() || scheme == "file") return StorageKind::kLocal;
  if (scheme == "s3" || scheme == "s3a" || scheme == "s3n") return StorageKind::kS3;
  for (std::string_view azure : kAzureSchemes) {
    if (scheme == azure) return StorageKind::kAzure;
  }
  return Status::Invalid("location ", location, ": scheme ", scheme,
                         " is not supported (a local directory, s3://, or Azure's abfss://, "
                         "abfs://, wasbs://, wasb://, az://)");
}

AzureEndpoint ResolveAzureEndpoint(const AzureSettings& azure) {
  AzureEndpoint endpoint;
  std::string host = azure.endpoint;
  if (host.starts_with("http://")) {
    endpoint.scheme = "http";
    host = host.substr(7);
  } else if (host.starts_with("https://")) {
    host = host.substr(8);
  }
  while (!host.empty() && host.back() == '/') host.pop_back();
  endpoint.host = host;
  return endpoint;
}

Result<AzureLocation> ParseAzureLocation(std::string_view location) {
  const std::string_view scheme = SchemeOf(location);
  std::string_view rest = location.substr(scheme.size() + 3);
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  AzureLocation parsed;
  parsed.path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1));
  const auto at = authority.find('@');
  if (at != std::string_view::npos) {
    const std::string_view host = authority.substr(at + 1);
    parsed.account = std::string(host.substr(0, host.find('.')));
    authority = authority.substr(0, at);
  }
  parsed.container = std::string(authority);
  if (parsed.container.empty()) {
    return Status::Invalid("location ", location,
                           " names no container (abfss://container/prefix or "
                           "abfss://container@account.dfs.core.windows.net/prefix)");
  }
  return parsed;
}

std::string AzureAccountOf(const AzureSettings& azure, std::string_view location) {
  if (!azure.account_name.empty()) return azure.account_name;
  auto parsed = ParseAzureLocation(location);
  return parsed.ok() ? parsed->account : "";
}

}  // namespace weir::files
