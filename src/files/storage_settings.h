// Credentials and endpoints of the object stores a data path or an Iceberg location may name:
// S3 (storage.s3_*, s3_settings.h) and Azure Blob Storage (storage.azure_*), and how a
// location's scheme picks one.
//
// Azure locations: `abfss://container/prefix` or `abfss://container@account.dfs.core.windows.net/
// prefix` (also abfs, wasb, wasbs, az, azure). The container is the first path segment in
// Arrow's AzureFileSystem; the account comes from storage.azure_account_name, else from the
// host after '@'.
//
// Threading: plain data and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "files/s3_settings.h"

namespace weir::files {

struct AzureSettings {
  std::string account_name;  // empty: taken from the location (container@account.host)
  std::string account_key;   // empty: the default credential chain (environment, managed id, ...)
  // "http://127.0.0.1:10000" for an emulator (Azurite: the account goes in the path); empty for
  // Azure's own https://<account>.blob.core.windows.net.
  std::string endpoint;
};

// Everything a store needs to reach any location weir writes. S3 settings alone convert to it
// (no Azure credentials).
struct StorageAccess {
  StorageAccess() = default;
  StorageAccess(S3Settings s3_settings, AzureSettings azure_settings = {})  // NOLINT: implicit
      : s3(std::move(s3_settings)), azure(std::move(azure_settings)) {}
  S3Settings s3;
  AzureSettings azure;
};

enum class StorageKind { kLocal, kS3, kAzure };

// The store a location names by its scheme; an unknown scheme is an error naming it.
Result<StorageKind> StorageKindOf(std::string_view location);

// An Azure endpoint split for Arrow's options: "127.0.0.1:10000" and "http"; empty host for
// Azure's own.
struct AzureEndpoint {
  std::string host;
  std::string scheme = "https";
};
AzureEndpoint ResolveAzureEndpoint(const AzureSettings& azure);

// The parts of an Azure location: container, the account named in it (or ""), the path after
// the container (no leading '/').
struct AzureLocation {
  std::string container;
  std::string account;
  std::string path;
};
Result<AzureLocation> ParseAzureLocation(std::string_view location);

// The account of an Azure location: storage.azure_account_name, else the one named in it.
std::string AzureAccountOf(const AzureSettings& azure, std::string_view location);

}  // namespace weir::files
