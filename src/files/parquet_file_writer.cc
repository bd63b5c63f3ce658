#include "files/parquet_file_writer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include <arrow/io/interfaces.h>
#include <arrow/type_traits.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/schema.h>
#include <parquet/arrow/writer.h>
#include <parquet/exception.h>
#include <parquet/file_writer.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include "base/number_text.h"
#include "base/text.h"
#include "base/uuid.h"
#include "files/writer_defaults.h"

namespace weir::files {
namespace {

std::atomic<arrow::MemoryPool*> g_pool{nullptr};
std::atomic<bool> g_parallel_columns{false};

// Folds one row group's min/max into the file's, as text, for the physical types whose text
// form is unambiguous (uuids as their canonical text). Columns with a logical type that needs
// its own rendering (timestamps, dates, decimals) get no min/max here rather than a misleading
// one.
template <typename ParquetType>
void FoldMinMax(const parquet::Statistics& stats, std::optional<typename ParquetType::c_type>& lo,
                std::optional<typename ParquetType::c_type>& hi) {
  const auto& typed = static_cast<const parquet::TypedStatistics<ParquetType>&>(stats);
  if (!lo || typed.min() < *lo) lo = typed.min();
  if (!hi || *hi < typed.max()) hi = typed.max();
}

struct MinMaxFolder {
  explicit MinMaxFolder(parquet::Type::type physical_type) : physical(physical_type) {}

  parquet::Type::type physical;
  std::optional<int64_t> i64_lo, i64_hi;
  std::optional<int32_t> i32_lo, i32_hi;
  std::optional<double> f64_lo, f64_hi;
  std::optional<bool> b_lo, b_hi;
  std::optional<std::string> s_lo, s_hi;
  std::optional<Uuid> u_lo, u_hi;  // FIXED_LEN_BYTE_ARRAY(16) + UUID: unsigned byte order

  void Fold(const parquet::Statistics& stats) {
    switch (physical) {
      case parquet::Type::INT64:
        FoldMinMax<parquet::Int64Type>(stats, i64_lo, i64_hi);
        break;
      case parquet::Type::INT32:
        FoldMinMax<parquet::Int32Type>(stats, i32_lo, i32_hi);
        break;
      case parquet::Type::DOUBLE:
        FoldMinMax<parquet::DoubleType>(stats, f64_lo, f64_hi);
        break;
      case parquet::Type::BOOLEAN:
        FoldMinMax<parquet::BooleanType>(stats, b_lo, b_hi);
        break;
      case parquet::Type::BYTE_ARRAY: {
        const auto& typed = static_cast<const parquet::ByteArrayStatistics&>(stats);
        const std::string lo = parquet::ByteArrayToString(typed.min());
        const std::string hi = parquet::ByteArrayToString(typed.max());
        if (!s_lo || lo < *s_lo) s_lo = lo;
        if (!s_hi || *s_hi < hi) s_hi = hi;
        break;
      }
      case parquet::Type::FIXED_LEN_BYTE_ARRAY: {
        const auto& typed = static_cast<const parquet::FLBAStatistics&>(stats);
        if (typed.descr()->type_length() != 16) break;
        Uuid lo, hi;
        std::memcpy(lo.bytes.data(), typed.min().ptr, 16);
        std::memcpy(hi.bytes.data(), typed.max().ptr, 16);
        if (!u_lo || lo < *u_lo) u_lo = lo;
        if (!u_hi || *u_hi < hi) u_hi = hi;
        break;
      }
      default:
        break;
    }
  }

  void Store(ColumnStats& out) const {
    if (i64_lo) out.min = std::to_string(*i64_lo), out.max = std::to_string(*i64_hi);
    if (i32_lo) out.min = std::to_string(*i32_lo), out.max = std::to_string(*i32_hi);
    if (f64_lo) out.min = ShortestText(*f64_lo), out.max = ShortestText(*f64_hi);
    if (b_lo) out.min = *b_lo ? "true" : "false", out.max = *b_hi ? "true" : "false";
    if (s_lo) out.min = *s_lo, out.max = *s_hi;
    if (u_lo) out.min = u_lo->ToString(), out.max = u_hi->ToString();
  }
};

// A shredded Variant (records/variant_shredding.h): Arrow 26's variant extension type accepts
// only the unshredded two-field storage, so the column arrives as a plain
// struct<metadata, value, typed_value> and its Parquet group is annotated VARIANT here.
bool IsShreddedVariant(const arrow::DataType& type) {
  return type.id() == arrow::Type::STRUCT && type.num_fields() == 3 &&
         type.field(0)->name() == "metadata" && type.field(1)->name() == "value" &&
         type.field(2)->name() == "typed_value";
}

// The Parquet schema of `schema` with its shredded Variant groups annotated VARIANT(1).
Result<std::shared_ptr<parquet::schema::GroupNode>> VariantAnnotated(
    const arrow::Schema& schema, const parquet::WriterProperties& properties,
    const parquet::ArrowWriterProperties& arrow_properties) {
  std::shared_ptr<parquet::SchemaDescriptor> descriptor;
  WEIR_RETURN_NOT_OK(
      parquet::arrow::ToParquetSchema(&schema, properties, arrow_properties, &descriptor));
  const parquet::schema::GroupNode& root = *descriptor->group_node();
  parquet::schema::NodeVector fields;
  for (int i = 0; i < root.field_count(); ++i) {
    parquet::schema::NodePtr field = root.field(i);
    if (IsShreddedVariant(*schema.field(i)->type())) {
      const auto& group = static_cast<const parquet::schema::GroupNode&>(*field);
      parquet::schema::NodeVector children;
      for (int c = 0; c < group.field_count(); ++c) children.push_back(group.field(c));
      field = parquet::schema::GroupNode::Make(group.name(), group.repetition(), children,
                                               parquet::LogicalType::Variant(), group.field_id());
    }
    fields.push_back(std::move(field));
  }
  return std::static_pointer_cast<parquet::schema::GroupNode>(parquet::schema::GroupNode::Make(
      root.name(), root.repetition(), fields, nullptr, root.field_id()));
}

bool HasPlainText(const parquet::ColumnDescriptor& column) {
  const auto& logical = column.logical_type();
  return logical == nullptr || logical->is_none() || logical->is_string() ||
         (logical->is_int() && column.physical_type() != parquet::Type::BOOLEAN) ||
         (logical->is_UUID() && column.physical_type() == parquet::Type::FIXED_LEN_BYTE_ARRAY);
}

}  // namespace

void SetWriterDefaults(WriterDefaults defaults) {
  g_pool.store(defaults.pool);
  g_parallel_columns.store(defaults.parallel_columns);
}

WriterDefaults GetWriterDefaults() { return {g_pool.load(), g_parallel_columns.load()}; }

std::shared_ptr<parquet::WriterProperties> MakeWriterProperties(const FileConfig& config,
                                                                const arrow::Schema& schema) {
  parquet::WriterProperties::Builder builder;
  for (const auto& field : schema.fields()) {
    // Column names are matched as destinations resolve them: in any case.
    const bool listed = std::any_of(
        config.bloom_filter_columns.begin(), config.bloom_filter_columns.end(),
        [&](const std::string& column) { return ToLower(column) == ToLower(field->name()); });
    const arrow::Type::type id = field->type()->id();
    if (listed && id != arrow::Type::BOOL && !arrow::is_nested(id)) {
      builder.enable_bloom_filter(field->name(), parquet::BloomFilterOptions{});
    }
  }
  if (auto* pool = g_pool.load()) builder.memory_pool(pool);  // the encoders' buffers
  switch (config.codec) {
    case Codec::kZstd:
      builder.compression(parquet::Compression::ZSTD)->compression_level(config.compression_level);
      break;
    case Codec::kSnappy:
      builder.compression(parquet::Compression::SNAPPY);
      break;
    case Codec::kLz4:
      builder.compression(parquet::Compression::LZ4);
      break;
    case Codec::kGzip:
      builder.compression(parquet::Compression::GZIP)->compression_level(config.compression_level);
      break;
    case Codec::kNone:
      builder.compression(parquet::Compression::UNCOMPRESSED);
      break;
  }
  return builder.enable_statistics()
      ->max_row_group_length(config.row_group_rows)
      ->version(parquet::ParquetVersion::PARQUET_2_6)
      ->build();
}

struct ParquetFileWriter::State {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string path;
  FileConfig config;
  std::shared_ptr<arrow::io::OutputStream> sink;
  std::unique_ptr<parquet::arrow::FileWriter> writer;
  bool done = false;  // finished or aborted
  int64_t rows = 0;
  double ratio_hint = 0;
  // The open row group: rows and Arrow bytes appended to it; full once it reached a bound (it
  // is closed when the next rows come, so the file never ends with an empty row group).
  int64_t open_rows = 0;
  double open_arrow = 0;
  bool open_full = false;
  // The closed row groups: their Arrow bytes, and the sink's position after them.
  double closed_arrow = 0;
  int64_t closed_bytes = 0;

  double Ratio() const {
    if (closed_arrow > 0 && closed_bytes > 0)
      return static_cast<double>(closed_bytes) / closed_arrow;
    return ratio_hint;
  }
  Status CloseRowGroup() {
    WEIR_RETURN_NOT_OK(writer->NewBufferedRowGroup());  // writes the group out to the sink
    WEIR_ASSIGN_OR_RAISE(closed_bytes, sink->Tell());
    closed_arrow += open_arrow;
    open_arrow = 0;
    open_rows = 0;
    open_full = false;
    return Status::OK();
  }
};

ParquetFileWriter::ParquetFileWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
ParquetFileWriter::~ParquetFileWriter() {
  if (state_ && !state_->done) (void)Abort();
}

const std::string& ParquetFileWriter::path() const { return state_->path; }
int64_t ParquetFileWriter::rows() const { return state_->rows; }
double ParquetFileWriter::ratio() const { return state_->Ratio(); }
int64_t ParquetFileWriter::open_arrow_bytes() const {
  return static_cast<int64_t>(state_->open_arrow);
}
int64_t ParquetFileWriter::EstimatedSize() const {
  // Before any group closed and without a hint, assume the codec halves the data.
  const double ratio = state_->Ratio() > 0 ? state_->Ratio() : 0.5;
  return state_->closed_bytes + static_cast<int64_t>(state_->open_arrow * ratio);
}

Status ParquetFileWriter::Abort() {
  if (state_->done) return Status::OK();
  state_->done = true;
  Status aborted = state_->sink->Abort();
  if (state_->fs->type_name() == "local") {
    // A local file is there from the first byte: delete it (an object store upload that was
    // aborted leaves no object; Azure's uncommitted blocks expire on their own).
    auto deleted = state_->fs->DeleteFile(state_->path);
    if (aborted.ok() && !deleted.ok()) aborted = deleted;
  }
  return aborted;
}

Result<std::unique_ptr<ParquetFileWriter>> ParquetFileWriter::Create(
    std::shared_ptr<arrow::fs::FileSystem> fs, std::string path,
    std::shared_ptr<arrow::Schema> schema, const FileConfig& config, double ratio_hint) {
  if (config.row_group_rows <= 0) {
    return Status::Invalid("row_group_rows must be positive, got ", config.row_group_rows);
  }
  if (config.row_group_bytes < 0) {
    return Status::Invalid("row_group_bytes must not be negative, got ", config.row_group_bytes);
  }
  auto state = std::make_unique<State>();
  state->fs = fs;
  state->config = config;
  state->ratio_hint = ratio_hint;
  state->path = std::move(path);
  if (fs->type_name() == "local") {
    // Object stores have no directories; a local one needs the partition directories made.
    const auto slash = state->path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      WEIR_RETURN_NOT_OK(fs->CreateDir(state->path.substr(0, slash), /*recursive=*/true));
    }
  }
  WEIR_ASSIGN_OR_RAISE(state->sink, fs->OpenOutputStream(state->path));
  const WriterDefaults defaults = GetWriterDefaults();
  arrow::MemoryPool* pool = defaults.pool != nullptr ? defaults.pool : arrow::default_memory_pool();
  auto arrow_properties = parquet::ArrowWriterProperties::Builder()
                              .store_schema()
                              ->set_use_threads(defaults.parallel_columns)
                              ->build();
  const bool shredded = std::any_of(schema->fields().begin(), schema->fields().end(),
                                    [](const auto& f) { return IsShreddedVariant(*f->type()); });
  if (shredded) {
    // The annotated schema is given to the Parquet writer directly (without the stored Arrow
    // schema, which would name a plain struct).
    const auto properties = MakeWriterProperties(config, *schema);
    arrow_properties = parquet::ArrowWriterProperties::Builder()
                           .set_use_threads(defaults.parallel_columns)
                           ->build();
    WEIR_ASSIGN_OR_RAISE(auto root, VariantAnnotated(*schema, *properties, *arrow_properties));
    std::unique_ptr<parquet::ParquetFileWriter> file;
    try {
      file = parquet::ParquetFileWriter::Open(state->sink, root, properties);
    } catch (const parquet::ParquetException& e) {
      return Status::IOError("parquet writer: ", e.what());
    }
    WEIR_RETURN_NOT_OK(parquet::arrow::FileWriter::Make(pool, std::move(file), schema,
                                                        arrow_properties, &state->writer));
  } else {
    WEIR_ASSIGN_OR_RAISE(
        state->writer,
        parquet::arrow::FileWriter::Open(*schema, pool, state->sink,
                                         MakeWriterProperties(config, *schema), arrow_properties));
  }
  return std::unique_ptr<ParquetFileWriter>(new ParquetFileWriter(std::move(state)));
}

Status ParquetFileWriter::Append(const arrow::RecordBatch& batch) {
  State& st = *state_;
  if (st.done) return Status::Invalid("Append to a finished Parquet writer");
  const int64_t n = batch.num_rows();
  if (n == 0) return Status::OK();
  WEIR_ASSIGN_OR_RAISE(const int64_t arrow_bytes, arrow::util::ReferencedBufferSize(batch));
  const double row_bytes = std::max(1.0, static_cast<double>(arrow_bytes) / static_cast<double>(n));
  const int64_t max_rows = st.config.row_group_rows;
  const int64_t max_bytes = st.config.row_group_bytes;
  int64_t offset = 0;
  while (offset < n) {
    if (st.open_full) WEIR_RETURN_NOT_OK(st.CloseRowGroup());
    int64_t take = std::min(n - offset, max_rows - st.open_rows);
    if (max_bytes > 0) {
      // Without a measured ratio the first group is bounded by Arrow bytes (ratio 1): small.
      const double ratio = st.Ratio() > 0 ? st.Ratio() : 1.0;
      const double room = static_cast<double>(max_bytes) / ratio - st.open_arrow;
      take =
          std::min(take, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(room / row_bytes))));
    }
    const auto slice =
        take == n ? std::shared_ptr<arrow::RecordBatch>() : batch.Slice(offset, take);
    WEIR_RETURN_NOT_OK(st.writer->WriteRecordBatch(slice ? *slice : batch));
    st.rows += take;
    st.open_rows += take;
    st.open_arrow += row_bytes * static_cast<double>(take);
    const double ratio = st.Ratio() > 0 ? st.Ratio() : 1.0;
    st.open_full = st.open_rows >= max_rows ||
                   (max_bytes > 0 && st.open_arrow * ratio >= static_cast<double>(max_bytes));
    offset += take;
  }
  return Status::OK();
}

Result<FileInfo> ParquetFileWriter::Finish() {
  if (state_->done) return Status::Invalid("Finish of a finished Parquet writer");
  FileInfo info;
  info.path = state_->path;
  info.rows = state_->rows;
  Status closed = state_->writer->Close();
  if (closed.ok()) {
    auto size = state_->sink->Tell();
    closed = size.ok() ? state_->sink->Close() : size.status();
    if (size.ok()) info.size_bytes = *size;
  }
  if (!closed.ok()) {
    (void)Abort();  // nothing half-written stays behind
    return closed;
  }
  state_->done = true;

  const std::shared_ptr<parquet::FileMetaData> metadata = state_->writer->metadata();
  info.footer_bytes = static_cast<int64_t>(metadata->SerializeToString().size());
  const parquet::SchemaDescriptor& schema = *metadata->schema();
  for (int c = 0; c < schema.num_columns(); ++c) {
    const parquet::ColumnDescriptor& column = *schema.Column(c);
    if (const parquet::schema::Node* root = schema.GetColumnRoot(c); root->is_group()) {
      // A nested column (a VARIANT group): one entry for the table's column, its nulls those
      // of its first leaf (required inside the group), its size that of every leaf, no bounds.
      const bool first = info.columns.empty() || info.columns.back().name != root->name() ||
                         info.columns.back().field_id != root->field_id();
      if (first) {
        ColumnStats stats;
        stats.field_id = root->field_id();
        stats.name = root->name();
        stats.value_count = info.rows;
        for (int g = 0; g < metadata->num_row_groups(); ++g) {
          const auto chunk_stats = metadata->RowGroup(g)->ColumnChunk(c)->statistics();
          if (chunk_stats != nullptr) stats.null_count += chunk_stats->null_count();
        }
        info.columns.push_back(std::move(stats));
      }
      for (int g = 0; g < metadata->num_row_groups(); ++g) {
        info.columns.back().compressed_bytes +=
            metadata->RowGroup(g)->ColumnChunk(c)->total_compressed_size();
      }
      continue;
    }
    ColumnStats stats;
    stats.field_id = column.schema_node()->field_id();
    stats.name = column.name();
    stats.value_count = info.rows;
    MinMaxFolder folder(column.physical_type());
    for (int g = 0; g < metadata->num_row_groups(); ++g) {
      const auto chunk = metadata->RowGroup(g)->ColumnChunk(c);
      stats.compressed_bytes += chunk->total_compressed_size();
      const auto chunk_stats = chunk->statistics();
      if (chunk_stats == nullptr) continue;
      stats.null_count += chunk_stats->null_count();
      if (chunk_stats->HasMinMax() && HasPlainText(column)) folder.Fold(*chunk_stats);
    }
    folder.Store(stats);
    info.columns.push_back(std::move(stats));
  }
  return info;
}

Result<std::shared_ptr<arrow::Schema>> WithFieldIds(const arrow::Schema& schema,
                                                    const std::vector<int>& ids) {
  if (static_cast<int>(ids.size()) != schema.num_fields()) {
    return Status::Invalid("got ", ids.size(), " field ids for ", schema.num_fields(), " fields");
  }
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (int i = 0; i < schema.num_fields(); ++i) {
    fields.push_back(schema.field(i)->WithMergedMetadata(
        arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(ids[i])})));
  }
  return arrow::schema(std::move(fields), schema.metadata());
}

std::optional<int> FieldIdOf(const arrow::Field& field) {
  const auto& metadata = field.metadata();
  if (metadata == nullptr) return std::nullopt;
  const int found = metadata->FindKey("PARQUET:field_id");
  if (found < 0) return std::nullopt;
  const auto id = ParseInt64Text(metadata->value(found));
  if (!id || *id < 0 || *id > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(*id);
}

}  // namespace weir::files
