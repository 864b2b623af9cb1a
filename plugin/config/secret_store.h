// SecretStore: the credentials a replay needs, kept once, in one 0600 file of the state
// directory (`<state>/secrets`), so that journals' info.json files hold none.
//
// Docker never sends StartLogging again after the plugin restarts, so what a container's
// options hold (a loki-url with user:password@, a bearer token, headers with keys) must be on
// disk for the replay. info.json holds a reference ("skald-secret:<digest>") in place of each
// such value; the store maps references to values. Values are never logged. Thread-safe.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace skald {

class SecretStore {
 public:
  // The file is read whole at the start: bounded like every file the plugin reads, and never
  // written larger than it would read back.
  static constexpr std::size_t kDefaultMaxFileBytes = std::size_t{64} << 20;

  // Reads `path` when it exists (an unreadable, damaged or oversized file reads as empty,
  // logged).
  explicit SecretStore(std::filesystem::path path,
                       std::size_t max_file_bytes = kDefaultMaxFileBytes);

  // Keeps `value` and returns its reference (the same value, the same reference). Throws
  // std::system_error when the file cannot be written, or would grow past its bound (EFBIG).
  std::string Put(const std::string& value) ABSL_LOCKS_EXCLUDED(mu_);
  // The value of a reference Put returned, or nullopt.
  std::optional<std::string> Get(const std::string& reference) const ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets every value but those of `references` (rewrites the file when it changes).
  void Retain(const std::set<std::string>& references) ABSL_LOCKS_EXCLUDED(mu_);

  // True when `value` is a reference (what info.json holds in place of a secret).
  static bool IsReference(const std::string& value);

 private:
  void WriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // throws std::system_error

  const std::filesystem::path path_;
  const std::size_t max_file_bytes_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);  // reference -> value
};

}  // namespace skald
