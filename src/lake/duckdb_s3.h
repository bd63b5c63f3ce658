// DuckDB's access to a lake on S3 from the storage.s3_* settings: the one builder of the
// httpfs secret, used by ingest (lake/ducklake) and serve (its two databases), so both reach
// the bucket alike and as Arrow's S3 file system does (files::ResolveS3Endpoint).
//
// Empty keys mean the default credential chain (environment, shared config and profile, instance
// or task role, ...), through DuckDB's aws extension: `PROVIDER credential_chain`. DuckDB
// validates the chain when the secret is created, so a chain that finds no credentials fails
// startup there, not at the first file.
//
// Threading: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "files/s3_settings.h"
#include "files/storage_settings.h"

namespace weir::lake {

// The extensions the secret needs, loaded before it: httpfs, and aws for the credential chain.
std::vector<std::string> S3Extensions(const files::S3Settings& s3);

// `CREATE SECRET <name> (TYPE s3, ...)` for `s3` (kept in the database's memory only).
std::string CreateS3SecretSql(std::string_view name, const files::S3Settings& s3);

// `CREATE SECRET <name> (TYPE azure, ...)` for a lake in `account` (storage.azure_*): a
// connection string with the account key (and, for an emulator, its blob and DFS endpoints),
// or the credential chain without a key. Needs the azure extension.
std::string CreateAzureSecretSql(std::string_view name, const files::AzureSettings& azure,
                                 const std::string& account);

}  // namespace weir::lake
