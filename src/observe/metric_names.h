// The standard weir ingest metric families, declared once so the stages that publish them and
// the tests that read them agree on name, help, type and label names. Register through
// MetricsRegistry::Counter(def, labels) and friends, which check the label names.
#pragma once

#include <array>
#include <string_view>

#include "observe/metrics_registry.h"

namespace weir::observe {

// Label names.
inline constexpr std::string_view kLabelDataset = "dataset";
inline constexpr std::string_view kLabelReason = "reason";
inline constexpr std::string_view kLabelType = "type";
inline constexpr std::string_view kLabelTopic = "topic";
inline constexpr std::string_view kLabelPartition = "partition";
inline constexpr std::string_view kLabelColumn = "column";
inline constexpr std::string_view kLabelTargetType = "target_type";
inline constexpr std::string_view kLabelTable = "table";
inline constexpr std::string_view kLabelStage = "stage";
inline constexpr std::string_view kLabelState = "state";

inline constexpr MetricDef kRecordsConsumed{"weir_records_consumed_total",
                                            "Records read from Kafka.",
                                            MetricType::kCounter,
                                            {kLabelDataset}};
inline constexpr MetricDef kRecordsWritten{"weir_records_written_total",
                                           "Records committed to the lake.",
                                           MetricType::kCounter,
                                           {kLabelDataset}};
inline constexpr MetricDef kRecordsRejected{"weir_records_rejected_total",
                                            "Records rejected as bad data, by reason.",
                                            MetricType::kCounter,
                                            {kLabelDataset, kLabelReason}};
inline constexpr MetricDef kRecordsFiltered{
    "weir_records_filtered_total",
    "Records skipped by the dataset's filters, by reason (filter_field_missing, "
    "filter_excluded, filter_value_invalid, filter_dropped); accounted in the offset ledger.",
    MetricType::kCounter,
    {kLabelDataset, kLabelReason}};
inline constexpr MetricDef kFieldsDropped{
    "weir_fields_dropped_total",
    "Fields dropped from otherwise accepted records, by reason.",
    MetricType::kCounter,
    {kLabelDataset, kLabelReason}};
inline constexpr MetricDef kFieldsRenamed{
    "weir_fields_renamed_total",
    "Fields written under another column name than their key (a reserved name renamed, a case "
    "variant written into the column of that name), by reason.",
    MetricType::kCounter,
    {kLabelDataset, kLabelReason}};
inline constexpr MetricDef kValuesNulled{
    "weir_values_nulled_total",
    "Values written as null instead of rejecting the record, by reason.",
    MetricType::kCounter,
    {kLabelDataset, kLabelReason}};
// Typed columns (issue 14): per column and flush exactly one of the two.
inline constexpr MetricDef kColumnsCoerced{
    "weir_columns_coerced_total",
    "Flushes in which a typed column was cast with no value nulled, by column and type.",
    MetricType::kCounter,
    {kLabelDataset, kLabelColumn, kLabelTargetType}};
inline constexpr MetricDef kColumnCoercionErrors{
    "weir_column_coercion_errors_total",
    "Flushes in which a typed column had values that could not be cast (nulled), by column "
    "and type.",
    MetricType::kCounter,
    {kLabelDataset, kLabelColumn, kLabelTargetType}};
inline constexpr MetricDef kErrors{"weir_errors_total",
                                   "Errors seen by the pipeline, by type.",
                                   MetricType::kCounter,
                                   {kLabelType}};
inline constexpr MetricDef kFlushDuration{"weir_flush_duration_seconds",
                                          "Time to write a buffered batch to data files.",
                                          MetricType::kHistogram,
                                          {kLabelDataset}};
inline constexpr MetricDef kCommitDuration{"weir_commit_duration_seconds",
                                           "Time to commit data files and offsets to the catalog.",
                                           MetricType::kHistogram,
                                           {kLabelDataset}};
inline constexpr MetricDef kBytesWritten{"weir_bytes_written_total",
                                         "Bytes of data files written.",
                                         MetricType::kCounter,
                                         {kLabelDataset}};
inline constexpr MetricDef kFilesWritten{
    "weir_files_written_total", "Data files written.", MetricType::kCounter, {kLabelDataset}};
inline constexpr MetricDef kCommitRetries{"weir_commit_retries_total",
                                          "Catalog commits retried after a retriable error.",
                                          MetricType::kCounter,
                                          {kLabelDataset}};
inline constexpr MetricDef kCommitConflicts{
    "weir_commit_conflicts_total",
    "Catalog commits that lost a concurrent-update conflict.",
    MetricType::kCounter,
    {kLabelDataset}};
inline constexpr MetricDef kOrphanedObjects{
    "weir_orphaned_objects_total",
    "Data files left in storage by commits that did not land.",
    MetricType::kCounter,
    {kLabelDataset}};
inline constexpr MetricDef kBufferBytes{"weir_buffer_bytes",
                                        "Bytes of records buffered and not yet flushed.",
                                        MetricType::kGauge,
                                        {kLabelDataset}};
inline constexpr MetricDef kConsumerLag{
    "weir_consumer_lag",
    "Messages between the next offset committed to the lake (where a restart resumes) and the "
    "partition's high watermark; absent while either is unknown.",
    MetricType::kGauge,
    {kLabelTopic, kLabelPartition}};
inline constexpr MetricDef kConsumerFetchLag{
    "weir_consumer_fetch_lag",
    "Messages between the consumer's fetch position and the partition's high watermark.",
    MetricType::kGauge,
    {kLabelTopic, kLabelPartition}};
inline constexpr MetricDef kCommitInFlight{
    "weir_commit_in_flight_seconds",
    "Seconds the dataset's current flush (write and commit) has been running; 0 when none.",
    MetricType::kGauge,
    {kLabelDataset}};
inline constexpr MetricDef kBrokersUnreachable{
    "weir_kafka_brokers_unreachable_seconds",
    "Seconds since the brokers were last reachable, while they are not; 0 when they answer.",
    MetricType::kGauge,
    {}};
inline constexpr MetricDef kPausedPartitions{
    "weir_paused_partitions", "Partitions paused for backpressure.", MetricType::kGauge, {}};
inline constexpr MetricDef kCommits{
    "weir_commits_total", "Catalog commits that landed.", MetricType::kCounter, {kLabelDataset}};
inline constexpr MetricDef kFencedCommits{
    "weir_fenced_commits_total",
    "Commits refused because another consumer owns the partitions now (fenced).",
    MetricType::kCounter,
    {kLabelDataset}};

inline constexpr MetricDef kSortSkipped{
    "weir_sort_skipped_total",
    "Records written unsorted because a sort key was missing from their flush or of a type that "
    "cannot be sorted, by reason (field_missing, unsortable_type).",
    MetricType::kCounter,
    {kLabelDataset, kLabelReason}};

// Routing (issue 14).
inline constexpr MetricDef kRecordsRouted{
    "weir_records_routed_total",
    "Records committed to a routed table (route.template), by table.",
    MetricType::kCounter,
    {kLabelDataset, kLabelTable}};
inline constexpr MetricDef kRouteFallback{
    "weir_route_fallback_total",
    "Records of a routed dataset written to its own table instead, by reason (field_missing, "
    "not_a_name, not_allowed, reserved_name, over_cap).",
    MetricType::kCounter,
    {kLabelDataset, kLabelReason}};
// Where the pipeline's threads spend their time (issue 12), in seconds, by stage. Busy:
// kafka (the poll thread inside librdkafka's poll while it hands records over), decode (records
// into the dataset's builder), seal (a buffer finished into a batch), encode (Parquet: coercion,
// sort, partition split, encoding, compression, the upload), lanes (encode lanes writing parts,
// summed over lanes), commit (the catalog commit, its retries included). Idle: kafka (the poll
// thread waiting in librdkafka's poll for records that did not come), paused (the poll thread with
// every partition paused for the memory budget), flush (a flush thread waiting for work).
inline constexpr MetricDef kStageBusy{"weir_stage_busy_seconds_total",
                                      "Seconds a pipeline stage spent working, by stage (kafka, "
                                      "decode, seal, encode, lanes, commit).",
                                      MetricType::kCounter,
                                      {kLabelStage}};
inline constexpr MetricDef kStageIdle{"weir_stage_idle_seconds_total",
                                      "Seconds a pipeline thread waited with nothing to do, by "
                                      "stage (kafka, paused, flush).",
                                      MetricType::kCounter,
                                      {kLabelStage}};
inline constexpr MetricDef kRecordsRedelivered{
    "weir_records_redelivered_total",
    "Records the source delivered again at an offset this process had already taken (below the "
    "partition's next offset); dropped, so they cannot land twice.",
    MetricType::kCounter,
    {kLabelDataset}};
// Bytes held in weir's Arrow memory pools (issue 12), by stage: decode (the record builders and
// the sealed parts waiting for the flush thread), encode (the Parquet writers: open row groups,
// their pages, casts and partition splits of the part being written).
inline constexpr MetricDef kArrowPoolBytes{
    "weir_arrow_pool_bytes",
    "Bytes held by weir's Arrow memory pools, by stage (decode, encode): allocated, and freed "
    "blocks kept for reuse.",
    MetricType::kGauge,
    {kLabelStage}};
inline constexpr MetricDef kArrowPoolFreshBytes{
    "weir_arrow_pool_fresh_bytes_total",
    "Bytes of large blocks weir's Arrow memory pools took from the allocator instead of reusing "
    "a freed one, by stage (decode, encode): memory the kernel may fault in and zero again.",
    MetricType::kCounter,
    {kLabelStage}};

// WAL mode (issue 13).
inline constexpr MetricDef kWalRotations{
    "weir_wal_rotations_total",
    "WAL rotation groups made ready (closed, fsynced, renamed) and their Kafka offsets committed.",
    MetricType::kCounter,
    {kLabelDataset}};
inline constexpr MetricDef kWalFiles{"weir_wal_files",
                                     "WAL segment files on the volume, by state (active, ready).",
                                     MetricType::kGauge,
                                     {kLabelDataset, kLabelState}};
inline constexpr MetricDef kWalBytes{"weir_wal_bytes",
                                     "Bytes of WAL segment files on the volume, by state.",
                                     MetricType::kGauge,
                                     {kLabelDataset, kLabelState}};
inline constexpr MetricDef kWalVolumeUsed{
    "weir_wal_volume_used_ratio",
    "Fraction of the WAL volume in use (consumers pause at wal.disk_high_watermark_pct).",
    MetricType::kGauge,
    {}};

// Every standard family, for documentation and tests.
inline constexpr std::array<const MetricDef*, 37> kStandardMetrics = {
    &kRecordsConsumed,   &kRecordsWritten,
    &kRecordsRejected,   &kRecordsFiltered,
    &kFieldsDropped,     &kFieldsRenamed,
    &kValuesNulled,      &kErrors,
    &kFlushDuration,     &kCommitDuration,
    &kBytesWritten,      &kFilesWritten,
    &kCommitRetries,     &kCommitConflicts,
    &kOrphanedObjects,   &kBufferBytes,
    &kConsumerLag,       &kPausedPartitions,
    &kCommits,           &kFencedCommits,
    &kColumnsCoerced,    &kColumnCoercionErrors,
    &kSortSkipped,       &kRecordsRouted,
    &kRouteFallback,     &kStageBusy,
    &kStageIdle,         &kRecordsRedelivered,
    &kArrowPoolBytes,    &kWalRotations,
    &kWalFiles,          &kWalBytes,
    &kWalVolumeUsed,     &kArrowPoolFreshBytes,
    &kConsumerFetchLag,  &kCommitInFlight,
    &kBrokersUnreachable};

}  // namespace weir::observe
