#include "ingest/decode_workers.h"

namespace weir::ingest {
namespace {

constexpr size_t kBatchRecords = 512;
constexpr size_t kBatchBytes = 1 << 20;
constexpr size_t kQueuedBatches = 4;

uint32_t Append(std::string& bytes, std::string_view text) {
  const auto at = static_cast<uint32_t>(bytes.size());
  bytes.append(text);
  return at;
}

}  // namespace

DecodeWorkers::DecodeWorkers(size_t workers, std::vector<std::string> header_names, DecodeFn decode)
    : header_names_(std::move(header_names)), decode_(std::move(decode)) {
  for (size_t i = 0; i < workers; ++i) workers_.push_back(std::make_unique<Worker>());
  for (size_t i = 0; i < workers; ++i) {
    Worker* worker = workers_[i].get();
    worker->thread = std::thread([this, worker, i] { Run(*worker, i); });
  }
}

DecodeWorkers::~DecodeWorkers() {
  for (auto& worker : workers_) {
    {
      std::lock_guard lock(worker->mutex);
      worker->stop = true;
    }
    worker->changed.notify_all();
  }
  for (auto& worker : workers_) worker->thread.join();
}

std::chrono::steady_clock::duration DecodeWorkers::Submit(size_t index,
                                                          const kafka::Message& message) {
  Worker& worker = *workers_[index];
  Batch& batch = worker.filling;
  Entry entry;
  entry.partition = message.partition;
  entry.offset = message.offset;
  entry.timestamp_ms = message.timestamp_ms;
  entry.key_is_null = message.key_is_null;
  entry.topic_size = static_cast<uint32_t>(message.topic.size());
  entry.topic = Append(batch.bytes, message.topic);
  entry.key_size = static_cast<uint32_t>(message.key.size());
  entry.key = Append(batch.bytes, message.key);
  entry.payload_size = static_cast<uint32_t>(message.payload.size());
  entry.payload = Append(batch.bytes, message.payload);
  entry.headers = static_cast<uint32_t>(batch.headers.size());
  for (const auto& name : header_names_) {
    HeaderSlot slot;
    if (auto value = kafka::HeaderValue(message, name)) {
      slot.present = true;
      slot.size = static_cast<uint32_t>(value->size());
      slot.at = Append(batch.bytes, *value);
    }
    batch.headers.push_back(slot);
  }
  batch.entries.push_back(entry);
  queued_bytes_ += static_cast<int64_t>(message.payload.size() + message.key.size() + 64);
  if (batch.entries.size() >= kBatchRecords || batch.bytes.size() >= kBatchBytes) {
    return Hand(worker, /*wait=*/true);
  }
  return {};
}

std::chrono::steady_clock::duration DecodeWorkers::Hand(Worker& worker, bool wait) {
  if (worker.filling.entries.empty()) return {};
  const auto start = std::chrono::steady_clock::now();
  Batch next;
  {
    std::unique_lock lock(worker.mutex);
    if (wait) {
      worker.changed.wait(lock, [&] { return worker.queue.size() < kQueuedBatches; });
    }
    worker.queue.push_back(std::move(worker.filling));
    if (!worker.spare.empty()) {
      next = std::move(worker.spare.back());
      worker.spare.pop_back();
    }
  }
  worker.changed.notify_all();
  worker.filling = std::move(next);
  return std::chrono::steady_clock::now() - start;
}

void DecodeWorkers::Push() {
  for (auto& worker : workers_) Hand(*worker, /*wait=*/false);
}

void DecodeWorkers::Drain() {
  Push();
  for (auto& worker : workers_) {
    std::unique_lock lock(worker->mutex);
    worker->changed.wait(lock, [&] { return worker->queue.empty() && !worker->busy; });
  }
}

void DecodeWorkers::Run(Worker& worker, size_t index) {
  std::vector<std::optional<std::string_view>> headers(header_names_.size());
  while (true) {
    Batch batch;
    {
      std::unique_lock lock(worker.mutex);
      worker.changed.wait(lock, [&] { return !worker.queue.empty() || worker.stop; });
      if (worker.queue.empty()) return;
      batch = std::move(worker.queue.front());
      worker.queue.pop_front();
      worker.busy = true;
    }
    worker.changed.notify_all();  // room in the queue
    int64_t bytes = 0;
    for (const Entry& entry : batch.entries) {
      const std::string_view all = batch.bytes;
      kafka::Message message;
      message.topic = all.substr(entry.topic, entry.topic_size);
      message.partition = entry.partition;
      message.offset = entry.offset;
      message.timestamp_ms = entry.timestamp_ms;
      message.key_is_null = entry.key_is_null;
      message.key = all.substr(entry.key, entry.key_size);
      message.payload = all.substr(entry.payload, entry.payload_size);
      for (size_t h = 0; h < headers.size(); ++h) {
        const HeaderSlot& slot = batch.headers[entry.headers + h];
        headers[h] = slot.present ? std::optional(all.substr(slot.at, slot.size)) : std::nullopt;
      }
      decode_(index, message, headers);
      bytes += static_cast<int64_t>(entry.payload_size + entry.key_size + 64);
    }
    queued_bytes_ -= bytes;
    batch.bytes.clear();
    batch.entries.clear();
    batch.headers.clear();
    {
      std::lock_guard lock(worker.mutex);
      worker.busy = false;
      if (worker.spare.size() < kQueuedBatches) worker.spare.push_back(std::move(batch));
    }
    worker.changed.notify_all();
  }
}

}  // namespace weir::ingest
