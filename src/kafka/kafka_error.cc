#include "kafka/kafka_error.h"

#include <string>

#include "kafka/rdkafka_handles.h"

namespace weir::kafka {

ErrorClass ClassifyKafkaError(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
    case RD_KAFKA_RESP_ERR__NOT_IMPLEMENTED:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
    case RD_KAFKA_RESP_ERR_INVALID_GROUP_ID:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
    case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS:
    case RD_KAFKA_RESP_ERR_INVALID_PARTITIONS:
    case RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR:
    case RD_KAFKA_RESP_ERR_POLICY_VIOLATION:
      return ErrorClass::kFatal;
    default:
      return ErrorClass::kRetriable;
  }
}

Status KafkaError(rd_kafka_resp_err_t err, std::string_view what) {
  return ClassifiedError(ClassifyKafkaError(err), "librdkafka", rd_kafka_err2name(err),
                         std::string(what) + ": " + rd_kafka_err2str(err));
}

Status CheckKafka(rd_kafka_resp_err_t err, std::string_view what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
  return KafkaError(err, what);
}

Status KafkaError(rd_kafka_error_t* raw_error, std::string_view what) {
  RdKafkaErrorPtr error(raw_error);
  if (error == nullptr) return Status::OK();
  const rd_kafka_resp_err_t err = rd_kafka_error_code(error.get());
  ErrorClass error_class = ClassifyKafkaError(err);
  if (rd_kafka_error_is_fatal(error.get())) error_class = ErrorClass::kFatal;
  return ClassifiedError(error_class, "librdkafka", rd_kafka_error_name(error.get()),
                         std::string(what) + ": " + rd_kafka_error_string(error.get()));
}

}  // namespace weir::kafka
