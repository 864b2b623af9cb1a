#include "plugin/journal/replay_guard.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "plugin/common/container_id.h"
#include "plugin/common/posix_file.h"

namespace skald {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxMarkerBytes = 32;

// A free name under quarantine/ for container `id`: the id, else id.2, id.3, ...
fs::path FreeQuarantineName(const fs::path& quarantine, const std::string& id) {
  std::error_code ec;
  fs::path p = quarantine / id;
  for (int n = 2; fs::exists(p, ec); ++n) p = quarantine / (id + "." + std::to_string(n));
  return p;
}

}  // namespace

ReplayGuard::ReplayGuard(fs::path state_root) : root_(std::move(state_root)) {
  const fs::path path = root_ / "replay-inflight";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;  // no attribution: every journal being replayed counts a death
  const std::size_t bytes = kInflightBytes;
  if (::ftruncate(fd, static_cast<off_t>(bytes)) == 0) {
    void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) inflight_ = static_cast<char*>(map);
  }
  ::close(fd);
  if (inflight_ == nullptr) return;
  last_run_died_ = inflight_[kRunStateOffset] == 'R';
  inflight_[kRunStateOffset] = 'R';
  for (int slot = 0; slot < kSlots; ++slot) {
    const char* s = inflight_ + slot * kSlotBytes;
    const std::string id(s, strnlen(s, kSlotBytes - 1));
    if (ValidContainerId(id)) died_on_.push_back(id);
    Leave(static_cast<Slot>(slot));
  }
}

ReplayGuard::~ReplayGuard() {
  if (inflight_ != nullptr) ::munmap(inflight_, kInflightBytes);
}

void ReplayGuard::Enter(Slot slot, std::string_view container_id) {
  if (inflight_ == nullptr) return;
  char* s = inflight_ + slot * kSlotBytes;
  const std::size_t n = std::min(container_id.size(), kSlotBytes - 1);
  std::memcpy(s, container_id.data(), n);
  s[n] = '\0';
}

void ReplayGuard::Leave(Slot slot) {
  if (inflight_ != nullptr) inflight_[slot * kSlotBytes] = '\0';
}

bool ReplayGuard::DiedOn(const std::string& id) const {
  return died_on_.empty() || std::find(died_on_.begin(), died_on_.end(), id) != died_on_.end();
}

int ReplayGuard::DeathsOf(const fs::path& dir) {
  std::string text;
  std::error_code ec;
  // Read without waiting on whatever is there (a FIFO is not waited on).
  if (!ReadWholeFile(dir / kMarkerName, kMaxMarkerBytes, text, ec)) {
    if (ec.value() != EFBIG && ec.value() != EINVAL) return 0;  // no marker
    text.clear();  // a marker, but not one this code wrote
  }
  // A marker is written before each replay: one that is there means that run died. Its count
  // is the deaths before that run: digits and a newline. Anything else (a marker a host crash
  // left empty or with stale bytes) counts no earlier death.
  int deaths = 0;
  const bool well_formed =
      text.size() >= 2 && text.back() == '\n' &&
      std::all_of(text.begin(), text.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
  for (std::size_t i = 0; well_formed && i + 1 < text.size(); ++i) {
    deaths = std::min(deaths * 10 + (text[i] - '0'), 1000);
  }
  return deaths + 1;
}

int ReplayGuard::DeathsSoFar(const std::string& id, const fs::path& dir) const {
  std::error_code ec;
  if (!fs::exists(dir / kMarkerName, ec)) return 0;
  // A death counts against this journal only when a thread was working on its lines then (or
  // no thread named any): the marker's count stays as it was otherwise.
  return DiedOn(id) ? DeathsOf(dir) : DeathsOf(dir) - 1;
}

std::string ReplayGuard::Begin(const std::string& id, const fs::path& dir) {
  std::error_code ec;
  const int deaths = DeathsSoFar(id, dir);
  if (deaths >= kDeathsToQuarantine) {
    const fs::path quarantine = root_ / "quarantine";
    fs::create_directories(quarantine, ec);
    const fs::path to = FreeQuarantineName(quarantine, id);
    if (!ec) fs::rename(dir, to, ec);
    if (ec) {
      // Not moved: still not replayed, so that this run does not die the same way.
      return "the plugin died " + std::to_string(deaths) +
             " times in a row while replaying it; it could not be moved to " + to.string() + " (" +
             ec.message() + "), so it is left in place and not replayed";
    }
    return "the plugin died " + std::to_string(deaths) +
           " times in a row while replaying it; set aside in " + to.string() +
           " (`skald quarantine list`, `skald quarantine release " + to.filename().string() +
           "` replays it at the next start)";
  }
  // Not fsynced here: what a process wrote survives its death (the page cache is the kernel's),
  // and most journals have nothing to replay (two fsyncs each made a restart on 1000 stopped
  // containers' journals take half a minute on a slow disk). A journal whose replay starts is
  // made durable then (MakeDurable): a replay that takes the host down is counted too.
  if (std::error_code w = WriteFileAtomically(dir / kMarkerName, std::to_string(deaths) + "\n",
                                              0600, FileSync::kNoFsync)) {
    spdlog::warn(
        "journal {}: cannot write its replay marker ({}): a crash while replaying it "
        "is not counted",
        dir.string(), w.message());
  }
  absl::MutexLock lock(&mu_);
  marked_.push_back(dir);
  return "";
}

void ReplayGuard::Settle(const std::string& id, const fs::path& dir) {
  const int deaths = DeathsSoFar(id, dir);  // as Begin counts them
  if (deaths <= 0) {
    std::error_code ec;
    fs::remove(dir / kMarkerName, ec);
    return;
  }
  // A marker's count is the deaths before a run that died: these are all of them.
  if (std::error_code w = WriteFileAtomically(dir / kMarkerName, std::to_string(deaths - 1) + "\n",
                                              0600, FileSync::kNoFsync)) {
    spdlog::warn("journal {}: cannot rewrite its replay marker ({})", dir.string(), w.message());
  }
}

void ReplayGuard::MakeDurable(const fs::path& dir) {
  for (const fs::path& p : {dir / kMarkerName, dir}) {
    UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd || ::fsync(fd.get()) != 0) {
      spdlog::warn(
          "journal {}: cannot sync its replay marker ({}): a host crash while replaying it "
          "may not be counted",
          dir.string(), std::strerror(errno));
      return;
    }
  }
}

void ReplayGuard::Clear(const fs::path& dir) {
  std::error_code ec;
  fs::remove(dir / kMarkerName, ec);
  absl::MutexLock lock(&mu_);
  marked_.erase(std::remove(marked_.begin(), marked_.end(), dir), marked_.end());
}

void ReplayGuard::ClearAll() {
  if (inflight_ != nullptr) inflight_[kRunStateOffset] = 'S';  // a clean stop
  std::vector<fs::path> marked;
  {
    absl::MutexLock lock(&mu_);
    marked.swap(marked_);
  }
  for (const fs::path& dir : marked) {
    std::error_code ec;
    fs::remove(dir / kMarkerName, ec);
  }
}

std::vector<ReplayGuard::Quarantined> ReplayGuard::List(const fs::path& state_root) {
  std::vector<Quarantined> out;
  std::error_code ec;
  for (fs::directory_iterator it(state_root / "quarantine", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_directory(ec)) out.push_back({it->path().filename().string(), it->path()});
  }
  std::sort(out.begin(), out.end(),
            [](const Quarantined& a, const Quarantined& b) { return a.name < b.name; });
  return out;
}

std::string ReplayGuard::Release(const fs::path& state_root, const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return "'" + name + "' is not the name of a quarantined journal";
  }
  const fs::path from = state_root / "quarantine" / name;
  std::error_code ec;
  if (!fs::is_directory(from, ec)) {
    return "no quarantined journal '" + name + "' in " + (state_root / "quarantine").string();
  }
  const std::string id = name.substr(0, name.find('.'));
  const fs::path to = state_root / "containers" / id;
  if (fs::exists(to, ec)) {
    return "container " + id + " has a journal already (" + to.string() +
           "): remove or move it first";
  }
  fs::remove(from / kMarkerName, ec);
  fs::rename(from, to, ec);
  if (ec) {
    return "cannot move " + from.string() + " to " + to.string() + ": " + ec.message();
  }
  return "";
}

}  // namespace skald
