#include "pipeline_stages/multiline_stage.h"

#include <algorithm>
#include <iterator>

#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/regex_stage.h"

namespace skald::stages {
namespace {

// Sets copied from one set and edited the same way: equal without building either.
bool SameRepresentation(const LabelSet& a, const LabelSet& b) {
  return a.SharesBaseWith(b) && a.OverlayBytes() == b.OverlayBytes();
}

// Streams compared without hashing before the index is asked: a container's stdout and
// stderr, and a few label sets stages made.
constexpr int kRecentStreams = 4;

}  // namespace

MultilineStage::MultilineStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"firstline", "max_wait_time", "max_lines"});
  firstline_ = CompileUserRegex(c, "firstline", c.RequiredString("firstline"));
  max_wait_ns_ = c.OptDurationNs("max_wait_time").value_or(3'000'000'000);
  if (max_wait_ns_ <= 0) c.Fail("max_wait_time", "must be greater than 0");
  max_lines_ = c.OptInt("max_lines").value_or(128);
  if (max_lines_ < 1) c.Fail("max_lines", "must be at least 1");
  max_bytes_ = ctx.build->max_line_size;
}

MultilineStage::StreamList::iterator MultilineStage::Find(const LabelSet& labels, uint64_t& hash,
                                                          bool& hashed) {
  if (streams_.empty()) return streams_.end();
  auto it = streams_.end();
  for (int i = 0; i < kRecentStreams && it != streams_.begin(); ++i) {
    --it;
    if (SameRepresentation(it->labels, labels)) return it;
  }
  hash = labels.Hash();
  hashed = true;
  auto [b, e] = by_hash_.equal_range(hash);
  for (; b != e; ++b) {
    const LabelSet& known = b->second->labels;
    if (SameRepresentation(known, labels) || known == labels) return b->second;
  }
  return streams_.end();
}

MultilineStage::StreamList::iterator MultilineStage::Add(const LabelSet& labels, uint64_t hash,
                                                         Downstream& next) {
  if (streams_.size() >= kMaxStreams) Forget(streams_.begin(), next);
  streams_.push_back(Stream{labels, hash, std::nullopt, 0, 0, {}});
  auto it = std::prev(streams_.end());
  by_hash_.emplace(hash, it);
  return it;
}

void MultilineStage::Forget(StreamList::iterator s, Downstream& next) {
  if (s->block) EmitBlock(*s, next);
  auto [b, e] = by_hash_.equal_range(s->hash);
  for (; b != e; ++b) {
    if (b->second == s) {
      by_hash_.erase(b);
      break;
    }
  }
  streams_.erase(s);
}

void MultilineStage::EmitBlock(Stream& s, Downstream& next) {
  held_bytes_ -= s.block->line.size();
  open_.erase(s.open_pos);
  Entry e = std::move(*s.block);
  s.block.reset();
  s.block_lines = 0;
  next.Emit(std::move(e));
}

void MultilineStage::EmitExpired(int64_t now_ns, Downstream& next) {
  while (!open_.empty() && now_ns - open_.front()->last_line_ns >= max_wait_ns_) {
    EmitBlock(*open_.front(), next);
  }
}

Verdict MultilineStage::Process(Entry& entry, Downstream& next) {
  const int64_t now = ctx_.NowNs();
  EmitExpired(now, next);
  const bool first = GoRegexpMatches(*firstline_, entry.line);
  uint64_t hash = 0;
  bool hashed = false;
  auto it = Find(entry.labels, hash, hashed);
  if (it == streams_.end()) {
    if (!first) return Verdict::kPass;  // no firstline yet in this stream
    it = Add(entry.labels, hashed ? hash : entry.labels.Hash(), next);
  } else {
    streams_.splice(streams_.end(), streams_, it);  // now the most recently active
  }
  Stream& s = *it;
  s.last_line_ns = now;
  if (first && s.block) EmitBlock(s, next);
  // A block never grows past the line size the host sends on (it would be cut into pieces
  // there), and `max_lines` of long lines cannot hold megabytes.
  if (s.block && max_bytes_ > 0 && s.block->line.size() + 1 + entry.line.size() > max_bytes_) {
    EmitBlock(s, next);
  }
  if (!s.block) {
    s.block.emplace(std::move(entry));
    s.block_lines = 1;
    s.open_pos = open_.insert(open_.end(), &s);
    held_bytes_ += s.block->line.size();
  } else {
    s.block->line.push_back('\n');
    s.block->line.append(entry.line);
    ++s.block_lines;
    held_bytes_ += 1 + entry.line.size();
    open_.splice(open_.end(), open_, s.open_pos);
  }
  if (s.block_lines >= max_lines_ || (max_bytes_ > 0 && s.block->line.size() >= max_bytes_)) {
    EmitBlock(s, next);
  }
  // Many label sets' blocks together: the least recently active go early.
  while (held_bytes_ > kMaxHeldBytes && open_.size() > 1) EmitBlock(*open_.front(), next);
  return Verdict::kTaken;
}

void MultilineStage::Flush(int64_t now_ns, bool final, Downstream& next) {
  if (!final) {
    EmitExpired(now_ns, next);
    return;
  }
  while (!open_.empty()) EmitBlock(*open_.front(), next);
}

std::optional<uint64_t> MultilineStage::OldestHeldOrigin() const {
  std::optional<uint64_t> oldest;
  for (const Stream* s : open_) {
    if (!oldest || s->block->origin < *oldest) oldest = s->block->origin;
  }
  return oldest;
}

}  // namespace skald::stages
