#include "plugin/loki/push_outcome.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "pipeline_stages/go/go_string.h"

namespace skald {
namespace {

constexpr std::size_t kMaxLoggedBodyBytes = 1024;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsUnauthorized(int status, std::string_view body) {
  return status == 401 || status == 403 || status == 407 ||
         IsClientCertificateRefusal(status, body) || IsMissingTenant(status, body);
}

bool IsBadRequest(int status, std::string_view) { return status == 400; }

// The reason a dropped batch is counted under: the first row of its outcome whose test passes
// (no test: always); no reason: Loki's 400 text decides.
struct DropRule {
  PushOutcome outcome;
  bool (*applies)(int status, std::string_view body);
  const char* reason;
};

constexpr DropRule kDropRules[] = {
    {PushOutcome::kTooLarge, nullptr, "too_large"},
    {PushOutcome::kRejected, IsBadRequest, nullptr},
    {PushOutcome::kRejected, nullptr, "bad_request"},
    {PushOutcome::kRetriesExhausted, IsUnauthorized, "unauthorized"},
    {PushOutcome::kRetriesExhausted, IsConfigurationError, "wrong_url"},
    {PushOutcome::kRetriesExhausted, nullptr, "retries_exhausted"},
    {PushOutcome::kShutdown, nullptr, "shutdown"},
};

// Loki's 400 texts (lower-cased): a text that holds `all` and one of `any` means `reason`.
struct BadRequestText {
  std::string_view all;
  std::vector<std::string_view> any;
  const char* reason;
};

const std::vector<BadRequestText>& BadRequestTexts() {
  static const std::vector<BadRequestText> kTexts = {
      {"structured metadata", {"disallowed", "not allowed"}, "structured_metadata_not_allowed"},
      {"", {"max entry size", "line too long", "entry with length"}, "line_too_long"},
      {"", {"too old"}, "too_old"},
      {"", {"too new", "too far in the future", "in the future"}, "too_far_in_future"},
      {"", {"stream limit", "streams limit", "maximum active stream"}, "stream_limit"},
  };
  return kTexts;
}

}  // namespace

BatchFate FateOf(PushOutcome outcome, std::size_t entries, bool durable) {
  switch (outcome) {
    case PushOutcome::kDelivered:
      return BatchFate::kSent;
    case PushOutcome::kTooLarge:
      return entries > 1 ? BatchFate::kSplit : BatchFate::kDropped;
    case PushOutcome::kShutdown:
      return durable ? BatchFate::kKept : BatchFate::kDropped;
    case PushOutcome::kRejected:
    case PushOutcome::kRetriesExhausted:
      break;
  }
  return BatchFate::kDropped;
}

std::string DropReason(PushOutcome outcome, int status, std::string_view body) {
  for (const DropRule& rule : kDropRules) {
    if (rule.outcome != outcome) continue;
    if (rule.applies != nullptr && !rule.applies(status, body)) continue;
    return rule.reason != nullptr ? rule.reason : ClassifyBadRequest(body);
  }
  return "bad_request";  // kDelivered: never dropped
}

const std::vector<std::string_view>& AllDropReasons() {
  static const std::vector<std::string_view> kReasons = {
      "buffer_full",  "retries_exhausted", "bad_request",  "line_too_long",
      "too_old",      "too_far_in_future", "stream_limit", "structured_metadata_not_allowed",
      "unauthorized", "too_large",         "shutdown",     "invalid_tenant",
      "wrong_url"};
  return kReasons;
}

namespace {

// The decimal number that ends just before text[end] (at most 9 digits, none: nullopt).
std::optional<std::size_t> NumberBefore(const std::string& text, std::size_t end) {
  std::size_t start = end;
  while (start > 0 && end - start < 9 && text[start - 1] >= '0' && text[start - 1] <= '9') {
    --start;
  }
  if (start == end) return std::nullopt;
  return static_cast<std::size_t>(std::stoul(text.substr(start, end - start)));
}

// The sum of the numbers written just before each `marker` in `text` (a marker with no number
// before it: nullopt); 0 when `marker` does not occur.
std::optional<std::size_t> SumBefore(const std::string& text, std::string_view marker) {
  std::size_t sum = 0;
  for (std::size_t at = text.find(marker); at != std::string::npos;
       at = text.find(marker, at + marker.size())) {
    const std::optional<std::size_t> n = NumberBefore(text, at);
    if (!n) return std::nullopt;
    sum += *n;
  }
  return sum;
}

// The sum of the numbers written just after each `marker` in `text` (as SumBefore).
std::optional<std::size_t> SumAfter(const std::string& text, std::string_view marker) {
  std::size_t sum = 0;
  for (std::size_t at = text.find(marker); at != std::string::npos;
       at = text.find(marker, at + marker.size())) {
    const std::size_t start = at + marker.size();
    std::size_t end = start;
    while (end < text.size() && end - start < 9 && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == start) return std::nullopt;
    sum += static_cast<std::size_t>(std::stoul(text.substr(start, end - start)));
  }
  return sum;
}

}  // namespace

std::size_t RefusedEntries(std::string_view body, std::size_t batch_entries) {
  const std::string text = Lower(body.substr(0, 64 * 1024));
  // Loki's refusals of one entry each (its validator's per-entry checks, the ingester's order
  // check); a refusal of a stream's labels refuses all its entries, which the text does not
  // count.
  const bool per_entry_only = [&] {
    for (std::string_view per_stream : {"label", "enforced", "ingestion blocked", "stream limit",
                                        "streams limit", "couldn't parse", "snappy", "proto"}) {
      if (text.find(per_stream) != std::string::npos) return false;
    }
    for (std::string_view per_entry : {"too old", "too new", "max entry size",
                                       "structured metadata", "too far behind", "out of order"}) {
      if (text.find(per_entry) != std::string::npos) return true;
    }
    return false;
  }();
  if (!per_entry_only) return batch_entries;
  std::optional<std::size_t> errors = 1;  // one error, written alone
  if (text.find("total ignored: ") != std::string::npos) {
    // An ingester's refusal: "... total ignored: N out of M for stream: ..." per stream.
    errors = SumAfter(text, "total ignored: ");
  } else if (text.find(" errors like: ") != std::string::npos) {
    // The distributor groups equal errors: "N errors like: a; M errors like: b".
    errors = SumBefore(text, " errors like: ");
  } else if (const std::size_t at = text.find(" errors: "); at != std::string::npos) {
    // Errors listed one by one: "N errors: a; b; c".
    errors = at <= 9 ? NumberBefore(text, at) : std::nullopt;
    if (errors && text.find_first_not_of("0123456789") != at) errors = std::nullopt;
  }
  if (!errors || *errors == 0) return batch_entries;
  return std::min(*errors, batch_entries);
}

std::string ClassifyBadRequest(std::string_view body) {
  const std::string text = Lower(body);
  const auto has = [&](std::string_view s) { return text.find(s) != std::string::npos; };
  for (const BadRequestText& t : BadRequestTexts()) {
    if (!t.all.empty() && !has(t.all)) continue;
    for (std::string_view phrase : t.any) {
      if (has(phrase)) return t.reason;
    }
  }
  return "bad_request";
}

bool IsClientCertificateRefusal(int status, std::string_view body) {
  return status == 400 && body.find("SSL certificate") != std::string_view::npos;
}

bool IsLokiVerdict(std::string_view body) {
  std::size_t start = 0;
  while (start < body.size() && std::isspace(static_cast<unsigned char>(body[start]))) ++start;
  if (start == body.size() || body[start] == '<') return false;  // empty, or a page
  const std::string text = Lower(body.substr(0, 4096));
  // Whole words: "upstream" is a proxy's, "stream" Loki's.
  const auto has_word = [&](std::string_view w) {
    for (std::size_t at = text.find(w); at != std::string::npos; at = text.find(w, at + 1)) {
      const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
      const std::size_t end = at + w.size();
      const bool ends = end == text.size() || !std::isalpha(static_cast<unsigned char>(text[end]));
      if (starts && ends) return true;
    }
    return false;
  };
  for (std::string_view word : {"stream", "streams", "entry", "entries", "label", "labels",
                                "timestamp", "structured metadata", "ingestion", "push request",
                                "request body too large", "couldn't parse", "snappy", "proto"}) {
    if (has_word(word)) return true;
  }
  return false;
}

bool IsMissingTenant(int status, std::string_view body) {
  return (status == 400 || status == 401) &&
         Lower(body.substr(0, 256)).find("no org id") != std::string::npos;
}

bool IsRouteError(int status, std::string_view body) {
  switch (status) {
    case 405:
    case 407:
    case 410:
    case 411:
    case 415:
      return true;
    case 400:
    case 422:
      return !IsLokiVerdict(body) && !IsClientCertificateRefusal(status, body);
    default:
      return false;
  }
}

bool IsConfigurationError(int status, std::string_view body) {
  return (status >= 300 && status < 400) || status == 401 || status == 403 || status == 404 ||
         IsClientCertificateRefusal(status, body) || IsMissingTenant(status, body) ||
         IsRouteError(status, body);
}

bool IsRetriedAnswer(int status, std::string_view body) {
  return status == 429 || status == 408 || status >= 500 || IsConfigurationError(status, body);
}

std::string AnswerForLog(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  const bool cut = s.size() > kMaxLoggedBodyBytes;
  if (cut) s.resize(kMaxLoggedBodyBytes);
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      stages::AppendHexEscape("\\x", c, 2, &out);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace skald
