#include "plugin/ingest/journal_stream_decoder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/hand_over_bounds.h"

namespace skald {

JournalStreamDecoder::JournalStreamDecoder(uint64_t id, std::shared_ptr<Journal> journal,
                                           JournalPosition from, std::size_t max_line_bytes,
                                           LineSink& sink, DecodeCounters& counters)
    : id_(id),
      journal_(std::move(journal)),
      max_line_bytes_(max_line_bytes),
      sink_(sink),
      counters_(counters),
      reader_(std::make_unique<JournalFrameReader>(journal_, from)),
      assembler_(max_line_bytes) {
  evict_hook_ = journal_->SetEvictHook([this](uint64_t segment) { OnEvict(segment); });
}

JournalStreamDecoder::~JournalStreamDecoder() { journal_->ClearEvictHook(evict_hook_); }

JournalPosition JournalStreamDecoder::Resume() const {
  return assembler_.HasPending() ? assembler_.PendingSince() : reader_->position();
}

void JournalStreamDecoder::ReportReaderBytes() {
  if (uint64_t skipped = reader_->skipped_bytes(); skipped > skipped_reported_) {
    counters_.torn_bytes.Add(skipped - skipped_reported_);
    skipped_reported_ = skipped;
  }
  if (uint64_t lost = reader_->lost_bytes(); lost > lost_reported_) {
    counters_.lost_bytes.Add(lost - lost_reported_);
    lost_reported_ = lost;
  }
}

void JournalStreamDecoder::HandOver() {
  if (lines_.empty()) return;
  counters_.lines_read.Add(lines_.size());
  // Pieces of split lines can make one hand-over far longer than kMaxLines: not reserved.
  last_hand_over_lines_ = std::min(lines_.size(), hand_over::kMaxLines);
  sink_.OnLines(id_, lines_, Resume());
  lines_.clear();
}

void JournalStreamDecoder::OnEvict(uint64_t segment) {
  if (reader_->position().segment > segment) return;  // read already
  // Count the complete lines the stream had not read from the evicted segment, then go on
  // after it. (The segment can still be read: the hook runs before it is deleted.)
  JournalFrameReader counter(journal_, reader_->position());
  uint64_t lines = 0;
  std::string_view body;
  JournalPosition start;
  while (counter.Next(&body, &start) == JournalFrameReader::Status::kFrame &&
         start.segment <= segment) {
    auto entry = DecodeLogEntry(body);
    if (entry && (!entry->partial || entry->partial_last || !entry->has_partial_metadata)) ++lines;
  }
  if (assembler_.HasPending()) ++lines;  // a line whose first partial chunks were read already
  ReportReaderBytes();
  reader_ = std::make_unique<JournalFrameReader>(journal_, JournalPosition{segment + 1, 0});
  counters_.ReportAssembler(assembler_, reported_);
  assembler_ = LineAssembler(max_line_bytes_);
  reported_ = {};
  skipped_reported_ = 0;
  lost_reported_ = 0;
  more = true;
  if (lines > 0) sink_.OnEvicted(id_, lines);
}

std::size_t JournalStreamDecoder::AddFrame(std::string_view body, const JournalPosition& start) {
  auto entry = DecodeLogEntry(body);
  if (!entry) {
    spdlog::error("journal {}: an undecodable frame at segment {} offset {}; skipped",
                  journal_->dir().string(), start.segment, start.offset);
    return 0;
  }
  const std::size_t before = lines_.size();
  if (before == 0 && lines_.capacity() < last_hand_over_lines_) {
    lines_.reserve(last_hand_over_lines_);
  }
  assembler_.Add(*entry, lines_, FrameSpan{start, reader_->position()});
  return hand_over::LineBytesFrom(lines_, before);
}

bool JournalStreamDecoder::Decode(const std::function<bool()>& may_end) {
  more = false;
  paused = false;
  retry = false;
  bool end = false;
  std::string_view body;
  JournalPosition start;
  std::size_t frames = 0;
  std::size_t handover_bytes = 0;  // of lines_
  while (!end) {
    if (frames == kRoundFrames) {
      more = true;
      break;
    }
    // Lines go to the sink in hand-overs (hand_over_bounds.h; counted in frames here), and its
    // window is checked before each hand-over (not per line: it takes a lock), so a window
    // overshoots by at most one hand-over per stream.
    if (frames % hand_over::kMaxLines == 0 || handover_bytes >= hand_over::kMaxBytes) {
      HandOver();
      handover_bytes = 0;
      if (!sink_.WantsLines(id_)) {
        paused = true;
        break;
      }
    }
    ++frames;
    const auto st = reader_->Next(&body, &start);
    if (st == JournalFrameReader::Status::kWait) break;
    if (st == JournalFrameReader::Status::kRetry) {
      retry = true;
      break;
    }
    if (st == JournalFrameReader::Status::kEnd) {
      end = may_end();
      break;
    }
    if (st == JournalFrameReader::Status::kCorrupt) {
      counters_.corrupt_streams.Add();
      spdlog::error("journal {}: a frame over 1 MiB; skipped to the next segment",
                    journal_->dir().string());
      continue;
    }
    handover_bytes += AddFrame(body, start);
  }
  if (end) assembler_.Finish(lines_);
  ReportReaderBytes();
  counters_.ReportAssembler(assembler_, reported_);
  HandOver();
  if (end) {
    journal_->ClearEvictHook(evict_hook_);
    sink_.OnEnd(id_, false);
    return false;
  }
  return true;
}

}  // namespace skald
