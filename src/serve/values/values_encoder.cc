// ColumnEncoder and AppendDataRows: the per-row loop that reads a result chunk's vectors and
// writes DataRow messages.
#include "serve/values/values.h"
#include "serve/values/values_internal.h"

namespace weir::serve {

using values_internal::AppendBE32;
using values_internal::Node;
using values_internal::Sink;
using values_internal::StoreBE16;
using values_internal::StoreBE32;

struct ColumnEncoder::State {
  std::unique_ptr<Node> root;
  std::string scratch;
};

ColumnEncoder::ColumnEncoder(duckdb_logical_type type, const OutputSettings& output)
    : state_(std::make_unique<State>()) {
  state_->root = values_internal::BuildNode(type);
  for (Node* node = state_->root.get(); node != nullptr; node = node->child.get()) {
    node->output = output;
  }
}
ColumnEncoder::~ColumnEncoder() = default;
ColumnEncoder::ColumnEncoder(ColumnEncoder&&) noexcept = default;
ColumnEncoder& ColumnEncoder::operator=(ColumnEncoder&&) noexcept = default;

const PgType& ColumnEncoder::pg_type() const { return state_->root->pg; }
bool ColumnEncoder::has_binary() const { return state_->root->HasBinary(); }
void ColumnEncoder::Bind(duckdb_vector vector) { state_->root->Bind(vector); }
bool ColumnEncoder::IsNull(idx_t row) const { return state_->root->IsNull(row); }

void ColumnEncoder::AppendText(idx_t row, std::string& out) const {
  Sink sink(out);
  values_internal::AppendText(*state_->root, row, sink, state_->scratch);
}

void ColumnEncoder::AppendBinary(idx_t row, std::string& out) const {
  Sink sink(out);
  values_internal::AppendBinary(*state_->root, row, sink, state_->scratch);
}

void AppendDataRows(std::vector<ColumnEncoder>& columns, const std::vector<bool>& binary,
                    duckdb_data_chunk chunk, idx_t begin, idx_t end, std::string& out) {
  struct Column {
    const Node* node;
    std::string* scratch;
    bool binary;
  };
  std::vector<Column> bound;
  bound.reserve(columns.size());
  size_t row_estimate = 7;
  for (size_t c = 0; c < columns.size(); ++c) {
    ColumnEncoder::State& state = *columns[c].state_;
    state.root->Bind(duckdb_data_chunk_get_vector(chunk, c));
    const bool as_binary = c < binary.size() && binary[c] && state.root->HasBinary();
    bound.push_back({state.root.get(), &state.scratch, as_binary});
    const int16_t size = state.root->pg.size;
    row_estimate += 4 + (as_binary && size > 0 ? static_cast<size_t>(size) : 12);
  }
  const auto count = static_cast<uint16_t>(columns.size());
  Sink sink(out);
  if (end > begin) sink.Reserve((end - begin) * row_estimate);
  for (idx_t row = begin; row < end; ++row) {
    const size_t message = sink.size();
    char* header = sink.Reserve(7);
    header[0] = 'D';
    StoreBE16(header + 5, count);
    sink.Advance(7);
    for (const Column& column : bound) {
      if (column.node->IsNull(row)) {
        AppendBE32(sink, 0xFFFFFFFFu);
        continue;
      }
      const size_t at = sink.size();
      sink.Skip(4);
      if (column.binary) {
        values_internal::AppendBinary(*column.node, row, sink, *column.scratch);
      } else {
        values_internal::AppendText(*column.node, row, sink, *column.scratch);
      }
      StoreBE32(sink.data() + at, static_cast<uint32_t>(sink.size() - at - 4));
    }
    StoreBE32(sink.data() + message + 1, static_cast<uint32_t>(sink.size() - message - 1));
  }
}

}  // namespace weir::serve
