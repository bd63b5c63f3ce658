#include "filesource/file_source.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "filesource/line_reader.h"

namespace weir::filesource {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::string Bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

class FileSource final : public ingest::RecordSource {
 public:
  FileSource(std::vector<SourceFile> files, FileSourceOptions options,
             kafka::AssignmentListener* listener)
      : files_(std::move(files)), options_(options), listener_(listener) {
    for (const auto& file : files_) total_bytes_ += file.size;
  }
  ~FileSource() override { (void)Close(); }

  Result<int> Poll(std::chrono::milliseconds timeout, int max_records,
                   const std::function<void(const kafka::Message&)>& sink) override {
    if (!assigned_) WEIR_RETURN_NOT_OK(Assign());
    if (paused_) {
      // The memory budget is spent: wait as a consumer's poll would, deliver nothing.
      std::this_thread::sleep_for(std::min(timeout, std::chrono::milliseconds(100)));
      return 0;
    }
    int delivered = 0;
    while (delivered < max_records && current_ < files_.size()) {
      if (!reader_) {
        WEIR_RETURN_NOT_OK(OpenCurrent());
        continue;
      }
      Line line;
      WEIR_ASSIGN_OR_RAISE(const bool more, reader_->Next(&line));
      if (!more) {
        spdlog::info("--from {}: read to its end ({} record(s) this run)", files_[current_].name,
                     file_records_);
        done_bytes_ += files_[current_].size;
        reader_.reset();
        ++current_;
        continue;
      }
      kafka::Message message;
      message.topic = topics_[current_];
      message.partition = 0;
      message.offset = line.offset;
      message.key = files_[current_].name;
      message.key_is_null = false;
      message.payload = line.text;
      sink(message);
      ++delivered;
      ++file_records_;
      ++records_;
    }
    DrawProgress(false);
    return delivered;
  }

  Status Pause(const std::vector<kafka::TopicPartition>&) override {
    paused_ = true;
    return Status::OK();
  }
  Status Resume(const std::vector<kafka::TopicPartition>&) override {
    paused_ = false;
    return Status::OK();
  }
  std::vector<kafka::TopicPartition> Assignment() const override { return assignment_; }

  Status CommitOffsets(const std::map<kafka::TopicPartition, int64_t>& /*next_offsets*/) override {
    if (options_.terminal_progress) return Status::OK();
    const auto& [rate, eta] = RateAndEta();
    spdlog::info("--from: commit landed; read {} of {} ({} of {} file(s) done), {:.0f} events/s{}",
                 Bytes(static_cast<double>(ReadBytes())), Bytes(static_cast<double>(total_bytes_)),
                 current_, files_.size(), rate, eta);
    return Status::OK();
  }

  std::vector<kafka::PartitionLag> Lag() const override { return {}; }

  Status Close() override {
    if (!assigned_ || closed_) return Status::OK();
    closed_ = true;
    DrawProgress(true);
    listener_->OnRevoked(assignment_);
    return Status::OK();
  }

  bool Exhausted() const override { return assigned_ && current_ >= files_.size(); }

 private:
  Status Assign() {
    assigned_ = true;
    started_ = SteadyClock::now();
    for (const auto& file : files_) {
      topics_.push_back(file.LedgerTopic());
      assignment_.push_back(kafka::TopicPartition{file.LedgerTopic(), 0});
    }
    WEIR_ASSIGN_OR_RAISE(auto starts, listener_->OnAssigned(assignment_));
    for (size_t i = 0; i < files_.size(); ++i) {
      const auto found = starts.find(assignment_[i]);
      resume_.push_back(found != starts.end() ? found->second : 0);
    }
    return Status::OK();
  }

  Status OpenCurrent() {
    const SourceFile& file = files_[current_];
    const int64_t resume = resume_[current_];
    auto reader = LineReader::Open(file, resume, options_.max_line_bytes);
    if (!reader.ok()) return reader.status();
    reader_ = std::move(*reader);
    file_records_ = 0;
    if (resume > 0) {
      spdlog::info("--from {} ({}, {}, {} bytes): resuming after uncompressed byte {}{}", file.name,
                   file.LedgerTopic(), ToString(file.compression), file.size, resume - 1,
                   file.compression != Compression::kNone ? " (decompressing from the start)" : "");
    } else {
      spdlog::info("--from {} ({}, {}, {} bytes): reading from the start", file.name,
                   file.LedgerTopic(), ToString(file.compression), file.size);
    }
    return Status::OK();
  }

  int64_t ReadBytes() const { return done_bytes_ + (reader_ ? reader_->disk_position() : 0); }

  std::pair<double, std::string> RateAndEta() const {
    const double seconds = std::chrono::duration<double>(SteadyClock::now() - started_).count();
    const double rate = seconds > 0 ? static_cast<double>(records_) / seconds : 0;
    const double read = static_cast<double>(ReadBytes());
    std::string eta;
    if (read > 0 && seconds > 1 && read < static_cast<double>(total_bytes_)) {
      eta = fmt::format(", ETA {:.0f} s",
                        seconds * (static_cast<double>(total_bytes_) - read) / read);
    }
    return {rate, eta};
  }

  void DrawProgress(bool last) {
    if (!options_.terminal_progress) return;
    const auto now = SteadyClock::now();
    if (!last && now - drawn_ < std::chrono::milliseconds(500)) return;
    drawn_ = now;
    const auto& [rate, eta] = RateAndEta();
    std::fprintf(stderr, "\r\033[K%s / %s read, %lld events, %.0f events/s%s%s",
                 Bytes(static_cast<double>(ReadBytes())).c_str(),
                 Bytes(static_cast<double>(total_bytes_)).c_str(), static_cast<long long>(records_),
                 rate, eta.c_str(), last ? "\n" : "");
    std::fflush(stderr);
  }

  std::vector<SourceFile> files_;
  FileSourceOptions options_;
  kafka::AssignmentListener* listener_;
  std::vector<std::string> topics_;
  std::vector<kafka::TopicPartition> assignment_;
  std::vector<int64_t> resume_;
  std::unique_ptr<LineReader> reader_;
  size_t current_ = 0;
  int64_t total_bytes_ = 0, done_bytes_ = 0;
  int64_t records_ = 0, file_records_ = 0;
  bool assigned_ = false, paused_ = false, closed_ = false;
  SteadyClock::time_point started_{}, drawn_{};
};

}  // namespace

Result<std::unique_ptr<ingest::RecordSource>> MakeFileSource(std::vector<SourceFile> files,
                                                             FileSourceOptions options,
                                                             kafka::AssignmentListener* listener) {
  return std::unique_ptr<ingest::RecordSource>(
      std::make_unique<FileSource>(std::move(files), options, listener));
}

}  // namespace weir::filesource
