#include "lake/duckdb_s3.h"

#include "base/sql_quote.h"

namespace weir::lake {

std::vector<std::string> S3Extensions(const files::S3Settings& s3) {
  if (s3.access_key_id.empty()) return {"httpfs", "aws"};
  return {"httpfs"};
}

std::string CreateS3SecretSql(std::string_view name, const files::S3Settings& s3) {
  const files::S3Endpoint endpoint = files::ResolveS3Endpoint(s3);
  std::string sql = "CREATE SECRET " + QuoteIdentifier(name) + " (TYPE s3";
  if (s3.access_key_id.empty()) {
    sql += ", PROVIDER credential_chain";
  } else {
    sql += ", KEY_ID " + QuoteLiteral(s3.access_key_id) + ", SECRET " +
           QuoteLiteral(s3.secret_access_key);
  }
  if (!s3.region.empty()) sql += ", REGION " + QuoteLiteral(s3.region);
  if (!endpoint.host.empty()) sql += ", ENDPOINT " + QuoteLiteral(endpoint.host);
  sql += std::string(", USE_SSL ") + (endpoint.use_ssl ? "true" : "false");
  sql += std::string(", URL_STYLE ") + (endpoint.path_style ? "'path'" : "'vhost'") + ")";
  return sql;
}

std::string CreateAzureSecretSql(std::string_view name, const files::AzureSettings& azure,
                                 const std::string& account) {
  std::string sql = "CREATE SECRET " + QuoteIdentifier(name) + " (TYPE azure";
  if (azure.account_key.empty()) {
    return sql + ", PROVIDER credential_chain, ACCOUNT_NAME " + QuoteLiteral(account) + ")";
  }
  const files::AzureEndpoint endpoint = files::ResolveAzureEndpoint(azure);
  std::string connection = "DefaultEndpointsProtocol=" + endpoint.scheme +
                           ";AccountName=" + account + ";AccountKey=" + azure.account_key + ";";
  if (!endpoint.host.empty()) {
    // The emulator's account is in the path; abfss:// paths go to the DFS endpoint.
    const std::string url = endpoint.scheme + "://" + endpoint.host + "/" + account;
    connection += "BlobEndpoint=" + url + ";DfsEndpoint=" + url + ";";
  }
  return sql + ", CONNECTION_STRING " + QuoteLiteral(connection) + ")";
}

}  // namespace weir::lake
