// storage.s3_* as the one S3Settings ingest, serve and check hand to Arrow and DuckDB.
#pragma once

#include "config/settings.h"
#include "files/s3_settings.h"

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

}  // namespace weir::app
