#include "plugin/config/secret_store.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <system_error>

#include "plugin/common/posix_file.h"
#include "plugin/common/sha256_hex.h"

namespace skald {
namespace {

constexpr std::string_view kPrefix = "skald-secret:";

}  // namespace

SecretStore::SecretStore(std::filesystem::path path, std::size_t max_file_bytes)
    : path_(std::move(path)), max_file_bytes_(max_file_bytes) {
  std::string text;
  std::error_code ec;
  if (!ReadWholeFile(path_, max_file_bytes_, text, ec)) {
    if (ec.value() == ENOENT) return;  // no secret kept yet
    spdlog::error("{}: cannot read it ({}); replays that need its values cannot authenticate",
                  path_.string(),
                  ec.value() == EFBIG ? "larger than " + std::to_string(max_file_bytes_) + " bytes"
                                      : ec.message());
    return;
  }
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    spdlog::error(
        "{}: not the secrets file skald writes; replays that need its values cannot "
        "authenticate",
        path_.string());
    return;
  }
  for (const auto& [reference, value] : json.items()) {
    if (value.is_string()) values_[reference] = value.get<std::string>();
  }
}

bool SecretStore::IsReference(const std::string& value) {
  return value.rfind(kPrefix, 0) == 0 && value.size() == kPrefix.size() + 32;
}

std::string SecretStore::Put(const std::string& value) {
  const std::string reference = std::string(kPrefix) + Sha256Hex(value, 32);
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = values_.try_emplace(reference, value);
  if (inserted) {
    try {
      WriteLocked();
    } catch (...) {
      values_.erase(it);
      throw;
    }
  }
  return reference;
}

std::optional<std::string> SecretStore::Get(const std::string& reference) const {
  absl::MutexLock lock(&mu_);
  auto it = values_.find(reference);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void SecretStore::Retain(const std::set<std::string>& references) {
  absl::MutexLock lock(&mu_);
  bool changed = false;
  for (auto it = values_.begin(); it != values_.end();) {
    if (references.count(it->first)) {
      ++it;
    } else {
      it = values_.erase(it);
      changed = true;
    }
  }
  if (!changed) return;
  try {
    WriteLocked();
  } catch (const std::system_error& e) {
    spdlog::error("{}", e.what());
  }
}

void SecretStore::WriteLocked() {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [reference, value] : values_) json[reference] = value;
  const std::string text = json.dump();
  if (text.size() > max_file_bytes_) {
    throw std::system_error(EFBIG, std::generic_category(),
                            "cannot replace " + path_.string() + ": it would exceed " +
                                std::to_string(max_file_bytes_) + " bytes");
  }
  // Synced: journals written before a power loss may still need these values to replay.
  if (std::error_code ec = WriteFileAtomically(path_, text, 0600, FileSync::kFsync))
    throw std::system_error(ec, "cannot replace " + path_.string());
}

}  // namespace skald
