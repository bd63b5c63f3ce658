#include "serve/auth/tls.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include "base/scoped_fd.h"
#include "serve/auth/openssl_error.h"

namespace weir::serve::auth {
namespace {

template <typename T, void (*Free)(T*)>
struct FreeWith {
  void operator()(T* pointer) const { Free(pointer); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, FreeWith<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, FreeWith<BIO, BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, FreeWith<BIGNUM, BN_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, FreeWith<X509_EXTENSION, X509_EXTENSION_free>>;

constexpr long kValidDays = 3650;
constexpr long kBackdateSeconds = 3600;

Status ErrnoError(int error, const std::string& what) {
  return ClassifiedError(ErrorClass::kFatal, "errno", std::to_string(error),
                         what + ": " + std::strerror(error));
}

Result<bool> FileExists(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) return true;
  if (errno == ENOENT) return false;
  return ErrnoError(errno, "checking " + path);
}

// Writes `bytes` to a temporary file next to `path` with `mode`, then renames it over `path`,
// so a reader sees either no file or the whole file.
Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
  std::string temp_path = path + ".XXXXXX";
  ScopedFd fd(::mkstemp(temp_path.data()));  // created with mode 0600
  if (!fd.valid()) return ErrnoError(errno, "creating a temporary file for " + path);
  auto fail = [&](const std::string& what) {
    const int error = errno;
    fd.Reset();
    ::unlink(temp_path.c_str());
    return ErrnoError(error, what + " " + temp_path);
  };
  if (::fchmod(fd.get(), mode) != 0) return fail("setting the mode of");
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd.get(), bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return fail("writing");
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  if (::fsync(fd.get()) != 0) return fail("syncing");
  if (fd.Close() != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    return ErrnoError(error, "closing " + temp_path);
  }
  if (::rename(temp_path.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    return ErrnoError(error, "renaming " + temp_path + " to " + path);
  }
  return Status::OK();
}

// The PEM text a writer puts into a memory BIO.
template <typename Write>
Result<std::string> ToPem(Write write, const char* what) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || write(bio.get()) != 1) return OpenSslError(what);
  char* data = nullptr;
  const long length = BIO_ctrl(bio.get(), BIO_CTRL_INFO, 0, &data);  // BIO_get_mem_data
  if (length <= 0 || data == nullptr) return OpenSslError(what);
  return std::string(data, static_cast<size_t>(length));
}

Status AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, cert, cert, nullptr, nullptr, 0);
  ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &context, nid, value));
  if (extension == nullptr || X509_add_ext(cert, extension.get(), -1) != 1) {
    return OpenSslError(std::string("adding certificate extension ") + OBJ_nid2sn(nid));
  }
  return Status::OK();
}

Result<X509Ptr> MakeCertificate(EVP_PKEY* key, const std::string& common_name) {
  X509Ptr cert(X509_new());
  if (cert == nullptr || X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return OpenSslError("creating a certificate");
  }
  // A positive 127-bit serial: random, and within RFC 5280's 20 octets.
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) {
    return OpenSslError("drawing a certificate serial number");
  }
  serial_bytes[0] = static_cast<unsigned char>((serial_bytes[0] & 0x7F) | 0x40);
  BignumPtr serial(BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr));
  if (serial == nullptr ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return OpenSslError("setting the certificate serial number");
  }
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), -kBackdateSeconds) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), static_cast<int>(kValidDays), 0, nullptr) ==
          nullptr) {
    return OpenSslError("setting the certificate validity");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.data()),
                                 static_cast<int>(common_name.size()), -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1) {
    return OpenSslError("setting the certificate name CN=" + common_name);
  }
  if (X509_set_pubkey(cert.get(), key) != 1) return OpenSslError("setting the certificate key");
  WEIR_RETURN_NOT_OK(AddExtension(cert.get(), NID_basic_constraints, "critical,CA:FALSE"));
  WEIR_RETURN_NOT_OK(AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature"));
  WEIR_RETURN_NOT_OK(AddExtension(cert.get(), NID_ext_key_usage, "serverAuth"));
  WEIR_RETURN_NOT_OK(AddExtension(cert.get(), NID_subject_key_identifier, "hash"));
  WEIR_RETURN_NOT_OK(AddExtension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"));
  if (X509_sign(cert.get(), key, EVP_sha256()) <= 0) {
    return OpenSslError("signing the certificate");
  }
  return cert;
}

}  // namespace

void SslContextDeleter::operator()(SSL_CTX* context) const { SSL_CTX_free(context); }

Status EnsureSelfSignedCertificate(const std::string& cert_path, const std::string& key_path,
                                   const std::string& common_name) {
  WEIR_ASSIGN_OR_RAISE(const bool cert_exists, FileExists(cert_path));
  WEIR_ASSIGN_OR_RAISE(const bool key_exists, FileExists(key_path));
  if (cert_exists && key_exists) return Status::OK();
  if (cert_exists || key_exists) {
    const std::string& present = cert_exists ? cert_path : key_path;
    const std::string& missing = cert_exists ? key_path : cert_path;
    return ClassifiedError(ErrorClass::kFatal, "tls", "partial_pair",
                           "TLS " + std::string(cert_exists ? "certificate " : "key ") + present +
                               " exists but its " + (cert_exists ? "key " : "certificate ") +
                               missing +
                               " does not; not generating a new pair over it (provide both "
                               "files or remove both)");
  }
  if (common_name.empty()) {
    return ClassifiedError(ErrorClass::kFatal, "tls", "invalid_name",
                           "the certificate common name is empty");
  }

  ERR_clear_error();
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (key == nullptr) return OpenSslError("generating an EC P-256 key");
  WEIR_ASSIGN_OR_RAISE(X509Ptr cert, MakeCertificate(key.get(), common_name));

  WEIR_ASSIGN_OR_RAISE(const std::string key_pem, ToPem(
                                                      [&](BIO* bio) {
                                                        return PEM_write_bio_PrivateKey(
                                                            bio, key.get(), nullptr, nullptr, 0,
                                                            nullptr, nullptr);
                                                      },
                                                      "encoding the private key as PEM"));
  WEIR_ASSIGN_OR_RAISE(const std::string cert_pem,
                       ToPem([&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); },
                             "encoding the certificate as PEM"));
  // The key first: a crash in between leaves a key without a certificate, which the next
  // start reports instead of silently pairing a new certificate with an old key.
  WEIR_RETURN_NOT_OK(WriteFileAtomically(key_path, key_pem, 0600));
  return WriteFileAtomically(cert_path, cert_pem, 0644);
}

Result<SslContextPtr> MakeServerContext(const std::string& cert_path, const std::string& key_path) {
  ERR_clear_error();
  SslContextPtr context(SSL_CTX_new(TLS_server_method()));
  if (context == nullptr) return OpenSslError("creating a TLS server context");
  if (SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION) != 1) {
    return OpenSslError("requiring TLS 1.2 or newer");
  }
  // As PostgreSQL: a client-requested TLS 1.2 renegotiation costs the server a handshake at
  // the client's will, and would need reads inside SSL_write.
  SSL_CTX_set_options(context.get(), SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(context.get(), cert_path.c_str()) != 1) {
    return OpenSslError("loading TLS certificate " + cert_path);
  }
  if (SSL_CTX_use_PrivateKey_file(context.get(), key_path.c_str(), SSL_FILETYPE_PEM) != 1) {
    return OpenSslError("loading TLS private key " + key_path + " for certificate " + cert_path);
  }
  if (SSL_CTX_check_private_key(context.get()) != 1) {
    return OpenSslError("TLS private key " + key_path + " does not match certificate " + cert_path);
  }
  return context;
}

}  // namespace weir::serve::auth
