// storage.s3_* and storage.azure_* as the one S3Settings / AzureSettings ingest, serve and check
// hand to Arrow and DuckDB.
#pragma once

#include "config/settings.h"
#include "files/s3_settings.h"
#include "files/storage_settings.h"

namespace weir::app {

inline files::S3Settings S3SettingsOf(const config::StorageSettings& storage) {
  files::S3Settings s3;
  s3.access_key_id = storage.s3_access_key_id;
  s3.secret_access_key = storage.s3_secret_access_key;
  s3.region = storage.s3_region;
  s3.endpoint = storage.s3_endpoint;
  s3.use_ssl = storage.s3_use_ssl;
  s3.path_style = storage.s3_url_style == "path";
  return s3;
}

inline files::AzureSettings AzureSettingsOf(const config::StorageSettings& storage) {
  files::AzureSettings azure;
  azure.account_name = storage.azure_account_name;
  azure.account_key = storage.azure_account_key;
  azure.endpoint = storage.azure_endpoint;
  return azure;
}

inline files::StorageAccess StorageAccessOf(const config::StorageSettings& storage) {
  return files::StorageAccess(S3SettingsOf(storage), AzureSettingsOf(storage));
}

}  // namespace weir::app
