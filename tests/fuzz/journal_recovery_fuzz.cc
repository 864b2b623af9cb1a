// Fuzz target: a container's journal directory as a crash, a full disk or a hand may leave it,
// opened and recovered the way the driver does at start, then read and written again.
//
// Input: one byte choosing the journal's limits, then files. Each file begins with a line
// `@<name>` and holds the bytes up to the next line that begins with '@' (the newline before
// it is not part of the file). Names are segments (`0000000001.seg`), live markers
// (`0000000001.live`, holding a FIFO path), `cursor`, `info.json`, leftovers of an atomic
// replace (`*.tmp`) or anything else; `secrets` is the state directory's secrets file. Names
// with '/' and `.`/`..` are skipped.
//
// Recovery as Driver::RecoverContainer does it: info.json parsed into the container's options
// (its secret references resolved), the first live session resumed and the others sealed, the
// journal read from its cursor (frames decoded, lines assembled). Then it must still work: a
// writer appends frames that a reader from the old end gets back exactly, the cursor written
// reads back, a restart finds the same segments and end, eviction empties it.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugin/config/container_info.h"
#include "plugin/config/log_options.h"
#include "plugin/config/secret_store.h"
#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/line_assembler.h"
#include "plugin/journal/journal.h"
#include "plugin/journal/journal_frame_reader.h"
#include "plugin/journal/journal_writer.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using skald::fuzz::AsView;

struct File {
  std::string name;
  std::string_view bytes;
};

std::vector<File> ParseFiles(std::string_view text) {
  std::vector<File> files;
  // Text before the first header belongs to no file.
  size_t at = text.starts_with('@') ? 0 : text.find("\n@");
  if (at == std::string_view::npos) return files;
  if (text[at] == '\n') ++at;
  while (at < text.size()) {
    const size_t name_end = text.find('\n', at);
    std::string name(text.substr(
        at + 1, name_end == std::string_view::npos ? std::string_view::npos : name_end - at - 1));
    if (name_end == std::string_view::npos) {
      files.push_back({name, {}});
      break;
    }
    const size_t next = text.find("\n@", name_end);
    const size_t end = next == std::string_view::npos ? text.size() : next;
    files.push_back({name, text.substr(name_end + 1, end > name_end ? end - name_end - 1 : 0)});
    if (next == std::string_view::npos) break;
    at = next + 1;
  }
  return files;
}

bool UsableName(const std::string& name) {
  return !name.empty() && name.size() <= 64 && name != "." && name != ".." &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

void Write(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// What Driver::RecoverContainer does with info.json: the options, with secrets resolved.
void RecoverOptions(skald::Journal& journal, const skald::SecretStore& secrets) {
  auto text = journal.ReadInfo();
  if (!text) return;
  try {
    skald::ContainerInfo info = skald::ContainerInfo::FromJson(nlohmann::json::parse(*text));
    for (auto& [option, value] : info.config) {
      if (!skald::SecretStore::IsReference(value)) continue;
      auto secret = secrets.Get(value);
      if (!secret) return;  // the driver holds the lines: nothing more to do with the options
      value = *secret;
    }
    skald::LogOptions options = skald::ParseLogOptions(info.config, {});
    journal.SetLimits({options.max_size, options.max_file, options.block_when_full});
  } catch (const std::exception&) {
    // Unusable info.json or options: the driver logs it and keeps the lines on disk.
  }
}

// Reads every frame from `from` until the reader waits or ends; returns the frame bodies.
std::vector<std::string> ReadAll(const std::shared_ptr<skald::Journal>& journal,
                                 skald::JournalPosition from) {
  std::vector<std::string> bodies;
  skald::JournalFrameReader reader(journal, from);
  skald::LineAssembler assembler(1000);
  std::vector<skald::LogLine> lines;
  skald::JournalPosition last_start{0, 0};
  for (int i = 0; i < 100000; ++i) {
    std::string_view body;
    skald::JournalPosition start;
    const auto status = reader.Next(&body, &start);
    if (status == skald::JournalFrameReader::Status::kFrame) {
      FUZZ_CHECK(last_start < start || bodies.empty());
      FUZZ_CHECK(start < reader.position());
      last_start = start;
      bodies.emplace_back(body);
      if (auto entry = skald::DecodeLogEntry(body)) {
        assembler.Add(*entry, lines, {start, reader.position()});
      }
      lines.clear();
    } else if (status == skald::JournalFrameReader::Status::kCorrupt) {
      continue;
    } else {
      break;  // kWait (a live segment), kEnd, kRetry
    }
  }
  assembler.Finish(lines);
  return bodies;
}

std::string Frame(std::string_view line, int64_t time) {
  skald::LogEntryView e;
  e.source = "stdout";
  e.time_nano = time;
  e.line = line;
  std::string out;
  skald::EncodeFrame(e, out);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const skald::fuzz::ScratchDir scratch;
  if (size < 1) return 0;
  static constexpr skald::JournalLimits kLimits[] = {
      {20 * 1024 * 1024, 5, false}, {64, 2, false}, {64, 2, true}, {-1, 1, false}, {1, 3, true}};
  const skald::JournalLimits limits = kLimits[data[0] % std::size(kLimits)];

  scratch.Reset();
  const std::filesystem::path dir = scratch.path() / "containers" / "c";
  std::filesystem::create_directories(dir);
  for (const File& f : ParseFiles(AsView(data + 1, size - 1))) {
    if (!UsableName(f.name)) continue;
    Write(f.name == "secrets" ? scratch.path() / "secrets" : dir / f.name, f.bytes);
  }

  std::shared_ptr<skald::Journal> journal;
  try {
    journal = skald::Journal::Open(dir, limits);
  } catch (const std::system_error&) {
    return 0;
  }
  const skald::SecretStore secrets(scratch.path() / "secrets");
  RecoverOptions(*journal, secrets);

  std::unique_ptr<skald::Journal::Writer> resumed;
  for (const skald::Journal::LiveSession& session : journal->LiveSessions()) {
    try {
      if (!resumed) {
        resumed = journal->ResumeWriter(session);
      } else {
        journal->SealSession(session);
      }
    } catch (const std::system_error&) {
    }
  }
  for (uint64_t segment : journal->Segments()) {
    FUZZ_CHECK(journal->ReadableBytes(segment) <= journal->TotalBytes());
  }
  const skald::JournalPosition cursor = journal->ReadCursor().value_or(journal->Begin());
  ReadAll(journal, cursor);

  // The recovered journal takes new frames: what is appended after its end is read back.
  try {
    if (resumed) {
      resumed->Append(Frame("resumed", 1));
      resumed->Seal();
      resumed.reset();
    }
    const skald::JournalPosition end = journal->End();
    std::unique_ptr<skald::Journal::Writer> writer = journal->StartWriter("/nonexistent/fifo");
    std::vector<std::string> written;
    for (int i = 0; i < 3; ++i) {
      written.push_back(Frame("line " + std::to_string(i), 100 + i));
      writer->Append(written.back());
    }
    writer->Seal();
    const std::vector<std::string> bodies = ReadAll(journal, end);
    // Eviction (tiny limits) may have removed some of them, never changed or reordered them.
    FUZZ_CHECK(bodies.size() <= written.size());
    for (size_t i = 0; i < bodies.size(); ++i) {
      FUZZ_CHECK(bodies[bodies.size() - 1 - i] ==
                 written[written.size() - 1 - i].substr(4));  // without the length prefix
    }
    journal->WriteCursor(journal->End());
    FUZZ_CHECK(journal->ReadCursor() == journal->End());
  } catch (const std::system_error&) {
    // A segment name taken by a directory, a cursor that cannot be written: reported, not fatal.
  }

  // A restart finds what this one left: the same segments, the same end.
  const std::vector<uint64_t> segments = journal->Segments();
  const skald::JournalPosition end = journal->End();
  journal.reset();
  try {
    journal = skald::Journal::Open(dir, limits);
  } catch (const std::system_error&) {
    return 0;
  }
  FUZZ_CHECK(journal->Segments() == segments);
  FUZZ_CHECK(journal->End() == end);
  for (int i = 0; i < 64 && journal->EvictOldest() > 0; ++i) {
  }
  journal->Remove();
  return 0;
}
