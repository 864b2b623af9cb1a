// ReplayGuard: a journal that crashes the plugin when it is replayed cannot keep it in a crash
// loop. Docker restarts a managed plugin that dies, and a restart that does not come up in time
// disables the plugin for the whole host; a journal whose replay ends the process every time
// (a hostile line, a corrupt file, a bug) would do exactly that.
//
// Before a journal is replayed, a marker file (`replaying` in its directory) records how many
// runs in a row died while replaying it; the marker goes when the replay makes progress (the
// cursor moves on) and when the plugin stops cleanly. Which journal each thread that handles
// one (the reader, the shipping thread) is working on is kept in a small file mapped in memory
// (<state>/replay-inflight), which outlives the process: a death is counted only against the
// journals a thread was working on when it came (or, when none was named, against every journal
// being replayed), so that a journal replayed beside the one that kills the plugin is not set aside
// with it. A journal whose replay was running when the process died kDeathsToQuarantine times in a
// row is set aside: moved, whole, to <state>/quarantine/<container id>, reported in the log,
// /healthz and skald_journals_quarantined, never deleted. `skald quarantine` lists and releases
// them.
//
// Thread-safe.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/journal/journal_format.h"

namespace skald {

class ReplayGuard {
 public:
  static constexpr int kDeathsToQuarantine = 2;

  // `state_root`: the state directory (journals in <state_root>/containers). Reads what the
  // last run's threads were working on, then clears it.
  explicit ReplayGuard(std::filesystem::path state_root);
  ~ReplayGuard();
  ReplayGuard(const ReplayGuard&) = delete;
  ReplayGuard& operator=(const ReplayGuard&) = delete;

  // The threads that handle lines: each names the container whose lines it works on now. (Not
  // the recovery thread: it opens one journal after another while earlier ones replay, so its
  // slot would charge a healthy journal with nearly every death during a recovery.)
  enum Slot { kReaderSlot = 0, kShipperSlot = 1, kSlots = 2 };
  void Enter(Slot slot, std::string_view container_id);
  void Leave(Slot slot);

  // Before the journal in `dir` (of container `id`) is opened for a replay. Empty: go on (its
  // marker now counts the deaths so far). Otherwise it was quarantined now, and this says why
  // and where it went. The marker is not synced to disk: a process's death does not lose it.
  std::string Begin(const std::string& id, const std::filesystem::path& dir)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The journal in `dir` has lines to replay and its replay starts now: its marker is synced
  // to disk, so that a replay that takes the whole host down is counted too.
  static void MakeDurable(const std::filesystem::path& dir);
  // The journal in `dir` (of container `id`) is not looked at in this run (the plugin stops
  // before recovery reaches it): its marker keeps the deaths counted so far against it, and
  // the last run's death goes on it only when it was to blame (as Begin would count it).
  void Settle(const std::string& id, const std::filesystem::path& dir) ABSL_LOCKS_EXCLUDED(mu_);
  // The replay of `dir` made progress, or ended without anything to do: its marker goes.
  void Clear(const std::filesystem::path& dir) ABSL_LOCKS_EXCLUDED(mu_);
  // A clean stop: every marker Begin wrote goes.
  void ClearAll() ABSL_LOCKS_EXCLUDED(mu_);
  // Runs in a row that died replaying `dir` (0: none, or no marker).
  static int DeathsOf(const std::filesystem::path& dir);
  // The last run of the plugin on this state directory ended without a clean stop (a crash, a
  // kill -9): Docker, which dials a restarted plugin's socket about half a second after it
  // starts and disables one it cannot reach, must find it up before any replay begins.
  bool LastRunDied() const { return last_run_died_; }

  struct Quarantined {
    std::string name;  // the directory's name under quarantine/: the container id (.N when
                       // the same container was set aside before)
    std::filesystem::path dir;
  };
  // What <state_root>/quarantine holds.
  static std::vector<Quarantined> List(const std::filesystem::path& state_root);
  // Moves quarantine/<name> back to containers/<container id>, where the next start of the
  // plugin replays it (its marker removed). Returns why it cannot (none such, a journal of
  // that container already there), empty when it moved.
  static std::string Release(const std::filesystem::path& state_root, const std::string& name);

  static constexpr std::string_view kMarkerName = kJournalReplayMarkerFile;

 private:
  // Whether the last run died while a thread worked on `id`'s lines; true when it named none.
  bool DiedOn(const std::string& id) const;
  // The deaths in a row counted against the journal in `dir` so far, the last run's among them
  // when it was to blame (0: no marker).
  int DeathsSoFar(const std::string& id, const std::filesystem::path& dir) const;

  const std::filesystem::path root_;
  static constexpr std::size_t kSlotBytes = 128;
  // After the slots: whether a run is going on ('R') or stopped cleanly ('S').
  static constexpr std::size_t kRunStateOffset = kSlots * kSlotBytes;
  static constexpr std::size_t kInflightBytes = kRunStateOffset + 1;
  char* inflight_ = nullptr;          // kInflightBytes, mapped shared from the file
  std::vector<std::string> died_on_;  // what the last run's slots named
  bool last_run_died_ = false;
  absl::Mutex mu_;
  std::vector<std::filesystem::path> marked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace skald
