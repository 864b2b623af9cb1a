// TenantId: Loki's rule for a tenant ID (the X-Scope-OrgID header), as dskit's
// tenant.ValidTenantID states it: at most 150 bytes of a-z A-Z 0-9 ! - _ . * ' ( ), and not "."
// or "..". `|` joins several tenants in a query only; a push names exactly one.
#pragma once

#include <string>
#include <string_view>

namespace skald::stages {

struct Entry;

// The label that chooses an entry's tenant, as in Promtail: the tenant stage sets it, and so may
// labels, static_labels or relabel rules; it is never sent as a label.
inline constexpr std::string_view kTenantLabel = "__tenant_id__";

// Moves kTenantLabel, when the entry has it, out of its labels into entry.tenant (an empty
// value: the client's own tenant).
void TakeTenantLabel(Entry& entry);

// "" when `tenant` is a valid tenant ID, or empty (no tenant: the caller sends no header).
// Otherwise why not, with the value shown shortened and with non-printable bytes as \r, \n or
// \xNN, so that the message is safe to log.
std::string TenantIdError(std::string_view tenant);

}  // namespace skald::stages
