#include "maintain/sorted_merge.h"

#include <algorithm>
#include <mutex>

#include <arrow/array.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/array/concatenate.h>
#include <arrow/buffer.h>
#include <arrow/compute/api_vector.h>
#include <arrow/compute/cast.h>
#include <arrow/compute/initialize.h>
#include <arrow/extension_type.h>
#include <arrow/io/memory.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/reader.h>
#include <parquet/properties.h>

#include "decode/field_names.h"
#include "files/parquet_file_writer.h"

namespace weir::maintain {
namespace {

// Files up to this size are read whole and their handle closed (a merge of many small files
// must not hold a descriptor per input); larger ones stream from the store.
constexpr int64_t kReadWholeBelow = int64_t{4} << 20;

// The wider of two types of one column (a promotion happened between the files), else `a`.
std::shared_ptr<arrow::DataType> Wider(const std::shared_ptr<arrow::DataType>& a,
                                       const std::shared_ptr<arrow::DataType>& b) {
  if (a->id() == arrow::Type::INT32 && b->id() == arrow::Type::INT64) return b;
  if (a->id() == arrow::Type::FLOAT && b->id() == arrow::Type::DOUBLE) return b;
  return a;
}

const arrow::Array& Storage(const arrow::Array& array) {
  if (array.type_id() == arrow::Type::EXTENSION) {
    return *static_cast<const arrow::ExtensionArray&>(array).storage();
  }
  return array;
}

bool Comparable(const arrow::DataType& type) {
  const arrow::DataType& t = type.id() == arrow::Type::EXTENSION
                                 ? *static_cast<const arrow::ExtensionType&>(type).storage_type()
                                 : type;
  switch (t.id()) {
    case arrow::Type::BOOL:
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::BINARY:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::DATE32:
    case arrow::Type::TIMESTAMP:
      return true;
    default:
      return false;
  }
}

template <typename T>
int Three(const T& x, const T& y) {
  return x < y ? -1 : (y < x ? 1 : 0);
}

// Compares non-null values of two arrays of one (comparable) type.
int CompareValues(const arrow::Array& a, int64_t i, const arrow::Array& b, int64_t j) {
  switch (a.type_id()) {
    case arrow::Type::BOOL:
      return Three(static_cast<const arrow::BooleanArray&>(a).Value(i),
                   static_cast<const arrow::BooleanArray&>(b).Value(j));
    case arrow::Type::INT8:
      return Three(static_cast<const arrow::Int8Array&>(a).Value(i),
                   static_cast<const arrow::Int8Array&>(b).Value(j));
    case arrow::Type::INT16:
      return Three(static_cast<const arrow::Int16Array&>(a).Value(i),
                   static_cast<const arrow::Int16Array&>(b).Value(j));
    case arrow::Type::INT32:
    case arrow::Type::DATE32:
      return Three(static_cast<const arrow::Int32Array&>(a).Value(i),
                   static_cast<const arrow::Int32Array&>(b).Value(j));
    case arrow::Type::INT64:
    case arrow::Type::TIMESTAMP:
      return Three(static_cast<const arrow::Int64Array&>(a).Value(i),
                   static_cast<const arrow::Int64Array&>(b).Value(j));
    case arrow::Type::FLOAT:
      return Three(static_cast<const arrow::FloatArray&>(a).Value(i),
                   static_cast<const arrow::FloatArray&>(b).Value(j));
    case arrow::Type::DOUBLE:
      return Three(static_cast<const arrow::DoubleArray&>(a).Value(i),
                   static_cast<const arrow::DoubleArray&>(b).Value(j));
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return Three(static_cast<const arrow::BinaryArray&>(a).GetView(i),
                   static_cast<const arrow::BinaryArray&>(b).GetView(j));
    case arrow::Type::LARGE_STRING:
      return Three(static_cast<const arrow::LargeStringArray&>(a).GetView(i),
                   static_cast<const arrow::LargeStringArray&>(b).GetView(j));
    case arrow::Type::FIXED_SIZE_BINARY:
      return Three(static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i),
                   static_cast<const arrow::FixedSizeBinaryArray&>(b).GetView(j));
    default:
      return 0;
  }
}

struct Cursor {
  std::unique_ptr<parquet::arrow::FileReader> reader;
  std::unique_ptr<arrow::RecordBatchReader> batches;
  std::vector<int> source;                    // per output column: the input's column, or -1
  std::shared_ptr<arrow::RecordBatch> batch;  // conformed to the output schema
  int64_t row = 0;
  int64_t pin_base = 0;
  std::vector<int64_t> deleted;  // the input's deleted positions, ascending
  size_t next_deleted = 0;       // the first of them not before `file_row`
  int64_t file_row = 0;  // the file position of the next batch read  // where `batch` starts in the
                         // output batch being gathered
};

}  // namespace

struct SortedMerge::State {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  MergeOptions options;
  std::shared_ptr<arrow::Schema> schema;
  std::vector<Cursor> cursors;
  struct Key {
    int column = 0;
    bool descending = false;
    bool nulls_first = false;
  };
  std::vector<Key> keys;
  bool sorted = false;
  size_t next_unsorted = 0;  // unsorted: the input being drained
  int64_t rows_read = 0;
  int64_t rows_deleted = 0;
  std::vector<size_t> heap;  // cursor indices, a min-heap under Less
  std::vector<std::shared_ptr<arrow::RecordBatch>> pinned;
  int64_t pinned_rows = 0;

  // Whether cursor a's row comes before cursor b's (ties: the earlier input first, so the
  // merge is stable).
  bool Before(size_t a, size_t b) const {
    const Cursor& x = cursors[a];
    const Cursor& y = cursors[b];
    for (const Key& key : keys) {
      const arrow::Array& u = Storage(*x.batch->column(key.column));
      const arrow::Array& v = Storage(*y.batch->column(key.column));
      const bool un = u.IsNull(x.row), vn = v.IsNull(y.row);
      if (un || vn) {
        if (un && vn) continue;
        return un == key.nulls_first;
      }
      int c = CompareValues(u, x.row, v, y.row);
      if (key.descending) c = -c;
      if (c != 0) return c < 0;
    }
    return a < b;
  }

  Result<std::shared_ptr<arrow::RecordBatch>> Conform(const arrow::RecordBatch& in,
                                                      const Cursor& cursor) const {
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (int c = 0; c < schema->num_fields(); ++c) {
      const auto& type = schema->field(c)->type();
      const int from = cursor.source[c];
      if (from < 0) {
        WEIR_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(type, in.num_rows()));
        columns.push_back(std::move(nulls));
        continue;
      }
      auto column = in.column(from);
      if (!column->type()->Equals(*type)) {
        WEIR_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*column, type));
        column = std::move(cast);
      }
      columns.push_back(std::move(column));
    }
    return arrow::RecordBatch::Make(schema, in.num_rows(), std::move(columns));
  }

  // Loads the cursor's next non-empty batch; false at its end.
  Result<bool> Advance(Cursor& cursor) {
    while (true) {
      std::shared_ptr<arrow::RecordBatch> next;
      WEIR_RETURN_NOT_OK(cursor.batches->ReadNext(&next));
      if (next == nullptr) {
        cursor.batch.reset();
        cursor.batches.reset();
        cursor.reader.reset();
        return false;
      }
      if (next->num_rows() == 0) continue;
      rows_read += next->num_rows();
      const int64_t start = cursor.file_row;
      cursor.file_row += next->num_rows();
      if (cursor.next_deleted < cursor.deleted.size() &&
          cursor.deleted[cursor.next_deleted] < cursor.file_row) {
        arrow::BooleanBuilder keep;
        WEIR_RETURN_NOT_OK(keep.Reserve(next->num_rows()));
        int64_t dropped = 0;
        for (int64_t r = start; r < cursor.file_row; ++r) {
          const bool gone = cursor.next_deleted < cursor.deleted.size() &&
                            cursor.deleted[cursor.next_deleted] == r;
          if (gone) {
            ++cursor.next_deleted;
            ++dropped;
          }
          keep.UnsafeAppend(!gone);
        }
        rows_deleted += dropped;
        WEIR_ASSIGN_OR_RAISE(auto mask, keep.Finish());
        WEIR_ASSIGN_OR_RAISE(auto kept,
                             arrow::compute::Filter(arrow::Datum(next), arrow::Datum(mask)));
        next = kept.record_batch();
        if (next->num_rows() == 0) continue;
      }
      WEIR_ASSIGN_OR_RAISE(cursor.batch, Conform(*next, cursor));
      cursor.row = 0;
      return true;
    }
  }

  void Pin(Cursor& cursor) {
    cursor.pin_base = pinned_rows;
    pinned.push_back(cursor.batch);
    pinned_rows += cursor.batch->num_rows();
  }
};

SortedMerge::SortedMerge(std::unique_ptr<State> state) : state_(std::move(state)) {}
SortedMerge::~SortedMerge() = default;
const std::shared_ptr<arrow::Schema>& SortedMerge::schema() const { return state_->schema; }
bool SortedMerge::sorted() const { return state_->sorted; }
int64_t SortedMerge::rows_read() const { return state_->rows_read; }
int64_t SortedMerge::rows_deleted() const { return state_->rows_deleted; }

Result<std::unique_ptr<SortedMerge>> SortedMerge::Open(std::shared_ptr<arrow::fs::FileSystem> fs,
                                                       const std::vector<MergeInput>& inputs,
                                                       const std::vector<lake::Column>& columns,
                                                       const MergeOptions& options) {
  static std::once_flag compute_ready;
  Status compute = Status::OK();
  std::call_once(compute_ready, [&] { compute = arrow::compute::Initialize(); });
  WEIR_RETURN_NOT_OK(compute);
  auto state = std::make_unique<State>();
  state->fs = fs;
  state->options = options;
  parquet::ArrowReaderProperties properties;
  properties.set_batch_size(std::max<int64_t>(1, options.batch_rows));
  properties.set_use_threads(false);
  properties.set_arrow_extensions_enabled(true);  // uuid columns stay arrow.uuid
  std::vector<std::shared_ptr<arrow::Schema>> schemas;
  for (const MergeInput& input : inputs) {
    Cursor cursor;
    cursor.deleted = input.deleted;
    WEIR_ASSIGN_OR_RAISE(auto file, fs->OpenInputFile(input.path));
    WEIR_ASSIGN_OR_RAISE(const int64_t size, file->GetSize());
    std::shared_ptr<arrow::io::RandomAccessFile> source = file;
    if (size <= kReadWholeBelow) {
      WEIR_ASSIGN_OR_RAISE(auto bytes, file->ReadAt(0, size));
      WEIR_RETURN_NOT_OK(file->Close());
      source = std::make_shared<arrow::io::BufferReader>(std::move(bytes));
    }
    parquet::arrow::FileReaderBuilder builder;
    Status opened = builder.Open(source);
    if (!opened.ok()) return WithContext(opened, input.path);
    builder.properties(properties);
    WEIR_RETURN_NOT_OK(builder.Build(&cursor.reader));
    std::shared_ptr<arrow::Schema> schema;
    WEIR_RETURN_NOT_OK(cursor.reader->GetSchema(&schema));
    schemas.push_back(schema);
    state->cursors.push_back(std::move(cursor));
  }
  // The output columns: the table's, in its order, that some input holds.
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<int> ids;
  for (const lake::Column& column : columns) {
    std::shared_ptr<arrow::DataType> type;
    for (const auto& schema : schemas) {
      for (const auto& field : schema->fields()) {
        if (files::FieldIdOf(*field) != column.id) continue;
        type = type ? Wider(type, field->type()) : field->type();
      }
    }
    if (!type) continue;
    fields.push_back(arrow::field(column.name, type));
    ids.push_back(static_cast<int>(column.id));
  }
  WEIR_ASSIGN_OR_RAISE(state->schema, files::WithFieldIds(*arrow::schema(fields), ids));
  for (size_t i = 0; i < state->cursors.size(); ++i) {
    Cursor& cursor = state->cursors[i];
    cursor.source.assign(ids.size(), -1);
    for (size_t c = 0; c < ids.size(); ++c) {
      for (int f = 0; f < schemas[i]->num_fields(); ++f) {
        if (files::FieldIdOf(*schemas[i]->field(f)) == ids[c]) cursor.source[c] = f;
      }
    }
  }
  // The keys, resolved as the ingest sort resolves them (ASCII case-insensitively).
  state->sorted = !options.sort_keys.empty();
  for (const auto& key : options.sort_keys) {
    int found = -1;
    for (int c = 0; c < state->schema->num_fields(); ++c) {
      if (decode::FoldName(state->schema->field(c)->name()) == decode::FoldName(key.column)) {
        found = c;
      }
    }
    if (found < 0 || !Comparable(*state->schema->field(found)->type())) {
      state->sorted = false;
      break;
    }
    state->keys.push_back({found, key.descending, key.nulls_first});
  }
  if (!state->sorted) state->keys.clear();
  for (size_t i = 0; i < state->cursors.size(); ++i) {
    Cursor& cursor = state->cursors[i];
    WEIR_ASSIGN_OR_RAISE(cursor.batches, cursor.reader->GetRecordBatchReader());
    if (!state->sorted) continue;
    WEIR_ASSIGN_OR_RAISE(const bool any, state->Advance(cursor));
    if (any) state->heap.push_back(i);
  }
  State* s = state.get();
  std::make_heap(s->heap.begin(), s->heap.end(),
                 [s](size_t a, size_t b) { return s->Before(b, a); });
  return std::unique_ptr<SortedMerge>(new SortedMerge(std::move(state)));
}

Result<std::shared_ptr<arrow::RecordBatch>> SortedMerge::Next() {
  State& s = *state_;
  if (!s.sorted) {
    while (s.next_unsorted < s.cursors.size()) {
      Cursor& cursor = s.cursors[s.next_unsorted];
      WEIR_ASSIGN_OR_RAISE(const bool any, s.Advance(cursor));
      if (any) return cursor.batch;
      ++s.next_unsorted;
    }
    return std::shared_ptr<arrow::RecordBatch>();
  }
  if (s.heap.empty()) return std::shared_ptr<arrow::RecordBatch>();
  const auto after = [&s](size_t a, size_t b) { return s.Before(b, a); };
  // One input left: the rest of its batch as it is.
  if (s.heap.size() == 1) {
    Cursor& cursor = s.cursors[s.heap.front()];
    auto rest = cursor.batch->Slice(cursor.row);
    WEIR_ASSIGN_OR_RAISE(const bool more, s.Advance(cursor));
    if (!more) s.heap.clear();
    return rest;
  }
  s.pinned.clear();
  s.pinned_rows = 0;
  for (const size_t i : s.heap) s.Pin(s.cursors[i]);
  arrow::Int64Builder picks;
  WEIR_RETURN_NOT_OK(picks.Reserve(s.options.batch_rows));
  while (picks.length() < s.options.batch_rows && !s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), after);
    const size_t i = s.heap.back();
    Cursor& cursor = s.cursors[i];
    WEIR_RETURN_NOT_OK(picks.Append(cursor.pin_base + cursor.row));
    if (++cursor.row == cursor.batch->num_rows()) {
      WEIR_ASSIGN_OR_RAISE(const bool more, s.Advance(cursor));
      if (!more) {
        s.heap.pop_back();
        continue;
      }
      s.Pin(cursor);
    }
    std::push_heap(s.heap.begin(), s.heap.end(), after);
  }
  WEIR_ASSIGN_OR_RAISE(auto indices, picks.Finish());
  WEIR_ASSIGN_OR_RAISE(auto gathered, arrow::ConcatenateRecordBatches(s.pinned));
  WEIR_ASSIGN_OR_RAISE(auto taken,
                       arrow::compute::Take(arrow::Datum(gathered), arrow::Datum(indices)));
  s.pinned.clear();
  s.pinned_rows = 0;
  return taken.record_batch();
}

}  // namespace weir::maintain
