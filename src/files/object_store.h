// Where data files live: a local directory, an S3-compatible bucket or an Azure Blob container,
// through arrow::fs.
//
// A data path is written the way the catalog records it (`/abs/dir/`, `s3://bucket/prefix/`,
// `abfss://container/prefix/`, `az://container/prefix/`); ObjectStore maps it to an Arrow file
// system and the path inside it (`bucket/prefix/`, `container/prefix/`).
#pragma once

#include <memory>
#include <string>

#include <arrow/filesystem/filesystem.h>

#include "base/status.h"
#include "files/s3_settings.h"
#include "files/storage_settings.h"

namespace weir::files {

class ObjectStore {
 public:
  // `data_path` is a local directory (made absolute, created when missing), s3://bucket/prefix
  // or an Azure location (storage_settings.h).
  static Result<ObjectStore> Open(const std::string& data_path, const StorageAccess& access);
  // The same store without creating anything: a local directory may not exist yet.
  static Result<ObjectStore> Locate(const std::string& data_path, const StorageAccess& access);
  // A store on a given file system, rooted at `root` (its path there, which is also the URI);
  // tests pass a file system that fails on purpose.
  static ObjectStore OnFileSystem(std::shared_ptr<arrow::fs::FileSystem> fs,
                                  const std::string& root);

  const std::shared_ptr<arrow::fs::FileSystem>& filesystem() const { return fs_; }
  // The data path as the catalog records it, ending in '/'.
  const std::string& uri() const { return uri_; }
  // The file-system path of any URI under the same store (a path the catalog gave).
  Result<std::string> PathOfUri(const std::string& uri) const;

  // True for a local directory, false for a bucket or container.
  bool local() const { return kind_ == StorageKind::kLocal; }
  StorageKind kind() const { return kind_; }

  // Proves the credentials: writes, reads back and deletes a small marker object. The marker is
  // deleted whichever step fails once the write has begun (a failed delete is added to the
  // error, naming the marker).
  Status Probe(const std::string& marker_name) const;

 private:
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  StorageKind kind_ = StorageKind::kLocal;
  std::string uri_;   // "s3://bucket/prefix/", "abfss://container/prefix/" or "/abs/dir/"
  std::string root_;  // the same in the file system's terms: "bucket/prefix/" or "/abs/dir/"
};

}  // namespace weir::files
