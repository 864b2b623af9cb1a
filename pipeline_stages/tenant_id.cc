#include "pipeline_stages/tenant_id.h"

#include <array>
#include <optional>

#include "pipeline_stages/entry.h"
#include "pipeline_stages/go/go_string.h"

namespace skald::stages {
namespace {

constexpr std::size_t kMaxTenantIdBytes = 150;
constexpr std::size_t kMaxShownBytes = 64;
constexpr std::string_view kAccepted =
    "; a tenant ID is at most 150 bytes of a-z A-Z 0-9 ! - _ . * ' ( ), not . or ..";

constexpr std::array<bool, 256> MakeAllowed() {
  std::array<bool, 256> allowed{};
  for (char c = 'a'; c <= 'z'; ++c) allowed[static_cast<unsigned char>(c)] = true;
  for (char c = 'A'; c <= 'Z'; ++c) allowed[static_cast<unsigned char>(c)] = true;
  for (char c = '0'; c <= '9'; ++c) allowed[static_cast<unsigned char>(c)] = true;
  for (char c : std::string_view("!-_.*'()")) allowed[static_cast<unsigned char>(c)] = true;
  return allowed;
}
constexpr std::array<bool, 256> kAllowed = MakeAllowed();

std::string Shown(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20 || u >= 0x7F || c == '\\') {
      AppendHexEscape("\\x", u, 2, &out);
    } else {
      out += c;
    }
  }
  return out;
}

std::string Quoted(std::string_view tenant) {
  if (tenant.size() <= kMaxShownBytes) return "'" + Shown(tenant) + "'";
  return "'" + Shown(tenant.substr(0, kMaxShownBytes)) + "...'";
}

}  // namespace

std::string TenantIdError(std::string_view tenant) {
  for (char c : tenant) {
    if (!kAllowed[static_cast<unsigned char>(c)]) {
      return "tenant " + Quoted(tenant) + " holds '" + Shown(std::string_view(&c, 1)) + "'" +
             std::string(kAccepted);
    }
  }
  if (tenant.size() > kMaxTenantIdBytes) {
    return "tenant " + Quoted(tenant) + " has " + std::to_string(tenant.size()) + " bytes" +
           std::string(kAccepted);
  }
  if (tenant == "." || tenant == "..") {
    return "tenant " + Quoted(tenant) + " is . or .." + std::string(kAccepted);
  }
  return "";
}

}  // namespace skald::stages

namespace skald::stages {

void TakeTenantLabel(Entry& entry) {
  if (std::optional<std::string_view> tenant = entry.labels.Get(kTenantLabel)) {
    entry.tenant.assign(tenant->data(), tenant->size());
    entry.labels.Erase(kTenantLabel);
  }
}

}  // namespace skald::stages
