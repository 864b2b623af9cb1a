#include "plugin/journal/journal_format.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "plugin/journal/frame_format.h"
#include "plugin/journal/journal_files.h"

namespace skald {

namespace {

constexpr std::size_t kScanBlock = 1024 * 1024;  // frame-boundary scans (rotation, seal, open)

}  // namespace

std::string JournalFileName(uint64_t seq, std::string_view ext) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%010llu", static_cast<unsigned long long>(seq));
  return digits + std::string(ext);
}

// "0000000003.seg" -> 3, "12345678901.seg" -> 12345678901: the name JournalFileName gives a
// number below kJournalSegmentLimit; nullopt for any other name.
std::optional<uint64_t> ParseJournalFileName(std::string_view name, std::string_view ext) {
  if (!name.ends_with(ext)) return std::nullopt;
  const std::string_view digits = name.substr(0, name.size() - ext.size());
  if (digits.size() < 10 || digits.size() > 19) return std::nullopt;
  uint64_t seq = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    seq = seq * 10 + static_cast<uint64_t>(c - '0');
  }
  if (seq == 0 || seq >= kJournalSegmentLimit) return std::nullopt;
  if (digits.size() > 10 && digits[0] == '0') return std::nullopt;  // not a name it gives
  return seq;
}

FrameScan ScanFrames(int fd, uint64_t from, uint64_t size, const std::filesystem::path& path) {
  constexpr uint64_t kPrefix = kFrameLengthBytes;
  uint64_t pos = from;
  if (size <= pos) return {pos, pos + kPrefix, false};
  std::size_t cap = static_cast<std::size_t>(std::min<uint64_t>(kScanBlock, size - pos));
  std::unique_ptr<char[]> block(new char[cap]);
  uint64_t block_off = 0;
  std::size_t block_len = 0;
  while (size - pos >= kPrefix) {
    if (pos < block_off || pos + kPrefix > block_off + block_len) {
      std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(cap, size - pos));
      block_len = PreadOrThrow(fd, block.get(), want, pos, path);
      block_off = pos;
      if (block_len < kPrefix) break;  // the file is shorter than we were told
    }
    uint32_t len = ReadFrameLength(block.get() + (pos - block_off));
    if (len > kMaxFrameBytes) return {pos, 0, true};
    uint64_t end = pos + kPrefix + len;
    if (end > size) return {pos, end, false};
    pos = end;
  }
  return {pos, pos + kPrefix, false};
}

}  // namespace skald
