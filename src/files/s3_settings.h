// The storage.s3_* settings of a data path on S3, and how they reach the endpoint — the same
// for Arrow's S3 file system (files::ObjectStore, ingest's data files) and for DuckDB's httpfs
// (lake::CreateS3SecretSql, DuckLake's own file work in ingest and serve).
//
// Threading: plain data and a pure function.
#pragma once

#include <string>

namespace weir::files {

struct S3Settings {
  std::string access_key_id;  // empty: the default credential chain (environment, profile, ...)
  std::string secret_access_key;
  std::string region;
  std::string endpoint;  // "host:port" or "http(s)://host:port"; empty for AWS
  bool use_ssl = true;
  bool path_style = false;  // virtual-hosted by default
  // Socket connection timeout in seconds (-1: the AWS SDK's default) and attempts of a request
  // (0: the SDK's default retry strategy). `weir check` bounds its probe with them.
  double connect_timeout_s = -1;
  int max_attempts = 0;
};

// The endpoint as both clients take it: host[:port] without the scheme, HTTPS or not (a
// scheme in `endpoint` decides over use_ssl), and whether the bucket goes in the path (asked
// for, or an explicit endpoint: S3-compatible servers such as MinIO and moto want it there).
struct S3Endpoint {
  std::string host;  // empty: AWS's own, from the region
  bool use_ssl = true;
  bool path_style = false;
};
S3Endpoint ResolveS3Endpoint(const S3Settings& s3);

}  // namespace weir::files
