#include "files/object_store.h"

#include <filesystem>

#include <arrow/buffer.h>
#include <arrow/filesystem/azurefs.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/filesystem/s3fs.h>
#include <arrow/io/interfaces.h>
#include <fmt/format.h>

namespace weir::files {
namespace {

std::string WithSlash(std::string path) {
  if (path.empty() || path.back() != '/') path += '/';
  return path;
}

}  // namespace

S3Endpoint ResolveS3Endpoint(const S3Settings& s3) {
  S3Endpoint endpoint{s3.endpoint, s3.use_ssl, s3.path_style};
  if (endpoint.host.starts_with("http://")) {
    endpoint.host = endpoint.host.substr(7);
    endpoint.use_ssl = false;
  } else if (endpoint.host.starts_with("https://")) {
    endpoint.host = endpoint.host.substr(8);
    endpoint.use_ssl = true;
  }
  endpoint.path_style = s3.path_style || !endpoint.host.empty();
  return endpoint;
}

namespace {

Result<std::shared_ptr<arrow::fs::FileSystem>> MakeS3(const S3Settings& s3) {
  WEIR_RETURN_NOT_OK(arrow::fs::EnsureS3Initialized());
  auto options = s3.access_key_id.empty()
                     ? arrow::fs::S3Options::Defaults()
                     : arrow::fs::S3Options::FromAccessKey(s3.access_key_id, s3.secret_access_key);
  const S3Endpoint endpoint = ResolveS3Endpoint(s3);
  options.scheme = endpoint.use_ssl ? "https" : "http";
  options.endpoint_override = endpoint.host;
  if (!s3.region.empty()) options.region = s3.region;
  options.force_virtual_addressing = !endpoint.path_style;
  options.allow_bucket_creation = false;
  options.connect_timeout = s3.connect_timeout_s;
  if (s3.max_attempts > 0) {
    options.retry_strategy =
        arrow::fs::S3RetryStrategy::GetAwsStandardRetryStrategy(s3.max_attempts);
  }
  WEIR_ASSIGN_OR_RAISE(auto fs, arrow::fs::S3FileSystem::Make(options));
  return std::shared_ptr<arrow::fs::FileSystem>(std::move(fs));
}

Result<std::shared_ptr<arrow::fs::FileSystem>> MakeAzure(const AzureSettings& azure,
                                                         const std::string& location_account,
                                                         const std::string& data_path) {
  arrow::fs::AzureOptions options;
  options.account_name = azure.account_name.empty() ? location_account : azure.account_name;
  if (options.account_name.empty()) {
    return Status::Invalid("data path ", data_path,
                           " names no Azure storage account: set storage.azure_account_name "
                           "(or write the location as abfss://container@account.dfs.core."
                           "windows.net/prefix)");
  }
  const AzureEndpoint endpoint = ResolveAzureEndpoint(azure);
  if (!endpoint.host.empty()) {
    // An emulator (Azurite) serves blob and DFS calls on one host, the account in the path.
    options.blob_storage_authority = endpoint.host;
    options.dfs_storage_authority = endpoint.host;
    options.blob_storage_scheme = endpoint.scheme;
    options.dfs_storage_scheme = endpoint.scheme;
  }
  if (azure.account_key.empty()) {
    WEIR_RETURN_NOT_OK(options.ConfigureDefaultCredential());
  } else {
    WEIR_RETURN_NOT_OK(options.ConfigureAccountKeyCredential(azure.account_key));
  }
  WEIR_ASSIGN_OR_RAISE(auto fs, arrow::fs::AzureFileSystem::Make(options));
  return std::shared_ptr<arrow::fs::FileSystem>(std::move(fs));
}

}  // namespace

Result<ObjectStore> ObjectStore::Open(const std::string& data_path, const StorageAccess& access) {
  WEIR_ASSIGN_OR_RAISE(ObjectStore store, Locate(data_path, access));
  if (!store.local()) return store;
  std::error_code ec;
  std::filesystem::create_directories(store.root_, ec);
  if (ec) {
    return ClassifiedError(
        ErrorClass::kFatal, "os", std::to_string(ec.value()),
        fmt::format("cannot create data directory {}: {}", data_path, ec.message()));
  }
  return store;
}

Result<ObjectStore> ObjectStore::Locate(const std::string& data_path, const StorageAccess& access) {
  ObjectStore store;
  WEIR_ASSIGN_OR_RAISE(store.kind_, StorageKindOf(data_path));
  if (store.kind_ == StorageKind::kAzure) {
    WEIR_ASSIGN_OR_RAISE(const AzureLocation location, ParseAzureLocation(data_path));
    WEIR_ASSIGN_OR_RAISE(store.fs_, MakeAzure(access.azure, location.account, data_path));
    store.uri_ = WithSlash(data_path);
    store.root_ = WithSlash(location.container + "/" + location.path);
    while (store.root_.find("//") != std::string::npos) {
      store.root_.erase(store.root_.find("//"), 1);
    }
    return store;
  }
  if (store.kind_ == StorageKind::kS3) {
    if (!data_path.starts_with("s3://")) {
      return Status::Invalid("data path ", data_path, ": write S3 locations as s3://");
    }
    const std::string rest = WithSlash(data_path.substr(5));
    if (rest.size() < 2 || rest.front() == '/') {
      return Status::Invalid("data path ", data_path, " names no bucket");
    }
    WEIR_ASSIGN_OR_RAISE(store.fs_, MakeS3(access.s3));
    store.uri_ = "s3://" + rest;
    store.root_ = rest;
    return store;
  }
  const std::string local = data_path.starts_with("file://") ? data_path.substr(7) : data_path;
  const auto absolute = std::filesystem::absolute(local).lexically_normal().string();
  store.fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
  store.uri_ = WithSlash(absolute);
  store.root_ = store.uri_;
  return store;
}

ObjectStore ObjectStore::OnFileSystem(std::shared_ptr<arrow::fs::FileSystem> fs,
                                      const std::string& root) {
  ObjectStore store;
  store.fs_ = std::move(fs);
  store.uri_ = WithSlash(root);
  store.root_ = store.uri_;
  return store;
}

Result<std::string> ObjectStore::PathOfUri(const std::string& uri) const {
  if (uri.starts_with(uri_)) return root_ + uri.substr(uri_.size());
  auto kind = StorageKindOf(uri);
  if (kind.ok() && *kind == kind_) {
    switch (kind_) {
      case StorageKind::kLocal:
        return uri.starts_with("file://") ? uri.substr(7) : uri;
      case StorageKind::kS3:
        if (uri.starts_with("s3://")) return uri.substr(5);
        break;
      case StorageKind::kAzure: {
        WEIR_ASSIGN_OR_RAISE(const AzureLocation location, ParseAzureLocation(uri));
        return location.container + "/" + location.path;
      }
    }
  }
  return Status::Invalid("path ", uri, " is outside the data path ", uri_);
}

Status ObjectStore::Probe(const std::string& marker_name) const {
  const std::string path = root_ + marker_name;
  const std::string body = "weir storage probe\n";
  Status wrote_and_read = [&]() -> Status {
    {
      WEIR_ASSIGN_OR_RAISE(auto out, fs_->OpenOutputStream(path));
      WEIR_RETURN_NOT_OK(out->Write(body.data(), static_cast<int64_t>(body.size())));
      WEIR_RETURN_NOT_OK(out->Close());
    }
    WEIR_ASSIGN_OR_RAISE(auto in, fs_->OpenInputFile(path));
    WEIR_ASSIGN_OR_RAISE(auto read, in->ReadAt(0, static_cast<int64_t>(body.size()) + 1));
    if (read->ToString() != body) {
      return Status::IOError("storage probe: marker ", uri_, marker_name, " read back differently");
    }
    return Status::OK();
  }();
  // Whatever step failed, the marker may exist (a write that failed at Close may still have
  // landed): delete it, and say so when that fails too.
  const Status deleted = fs_->DeleteFile(path);
  if (deleted.ok()) return wrote_and_read;
  const auto info = fs_->GetFileInfo(path);
  if (info.ok() && info->type() == arrow::fs::FileType::NotFound) return wrote_and_read;
  const std::string leftover =
      fmt::format("the marker {}{} could not be deleted: {}", uri_, marker_name, deleted.message());
  if (wrote_and_read.ok()) return deleted.WithMessage(leftover);
  return wrote_and_read.WithMessage(wrote_and_read.message() + "; and " + leftover);
}

}  // namespace weir::files
