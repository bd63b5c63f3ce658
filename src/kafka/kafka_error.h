// librdkafka error codes to weir's classified Status (source "librdkafka", code the error's
// name, e.g. "_TRANSPORT" or "UNKNOWN_TOPIC_OR_PART").
#pragma once

#include <librdkafka/rdkafka.h>

#include <string_view>

#include "base/status.h"

namespace weir::kafka {

// Fatal for errors that no retry can fix (authentication, authorization, unknown topic,
// invalid arguments or configuration, librdkafka's own fatal state); retriable otherwise.
ErrorClass ClassifyKafkaError(rd_kafka_resp_err_t err);

// "<what>: <librdkafka's description>", classified by ClassifyKafkaError.
Status KafkaError(rd_kafka_resp_err_t err, std::string_view what);

// OK for RD_KAFKA_RESP_ERR_NO_ERROR, else KafkaError(err, what).
Status CheckKafka(rd_kafka_resp_err_t err, std::string_view what);

// Takes ownership of `error` (which may be null: then OK) and converts it; librdkafka's own
// fatal and retriable flags win over the code's class.
Status KafkaError(rd_kafka_error_t* error, std::string_view what);

}  // namespace weir::kafka
