#include "tests/tools/fake_loki.h"

#include <httplib.h>
#include <snappy.h>

#include <nlohmann/json.hpp>

#include "push.pb.h"

namespace skald::testkit {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

std::string DecodeBase64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = value(c);
    if (v < 0) break;  // '=' padding or junk ends the data
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

// Decoded "user:pass" from a basic Authorization header, "Bearer TOKEN" as it came for a bearer
// token, "" otherwise.
std::string BasicCredentials(const std::string& header) {
  constexpr std::string_view kPrefix = "Basic ";
  if (header.rfind("Bearer ", 0) == 0) return header;
  if (header.rfind(kPrefix, 0) != 0) return "";
  return DecodeBase64(std::string_view(header).substr(kPrefix.size()));
}

std::string DedupKey(const std::string& tenant, const std::string& labels,
                     const FakeLoki::Entry& e) {
  std::string key = tenant;
  key += '\0';
  key += labels;
  key += '\0';
  key += std::to_string(e.timestamp_ns);
  key += '\0';
  key += e.line;
  for (const auto& [n, v] : e.structured_metadata) {
    key += '\0';
    key += n;
    key += '=';
    key += v;
  }
  return key;
}

}  // namespace

FakeLoki::FakeLoki() = default;

FakeLoki::~FakeLoki() { Stop(); }

bool FakeLoki::Start(int port, const std::string& host) {
  server_ = std::make_unique<httplib::Server>();
  tls_ = false;
  return Listen(port, host);
}

bool FakeLoki::StartTls(const TlsFiles& files, int port, const std::string& host) {
  auto server = std::make_unique<httplib::SSLServer>(
      files.cert_file.c_str(), files.key_file.c_str(),
      files.client_ca_file.empty() ? nullptr : files.client_ca_file.c_str());
  if (!server->is_valid()) return false;
  server_ = std::move(server);
  tls_ = true;
  return Listen(port, host);
}

bool FakeLoki::Listen(int port, const std::string& host) {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  server_->set_payload_max_length(512 * 1024 * 1024);
  server_->set_keep_alive_max_count(1'000'000);
  server_->set_tcp_nodelay(true);
  // The absolute form (http://host/loki/api/v1/push) is what a client sends to an HTTP proxy:
  // accepting it lets the sink stand in for a proxy in front of Loki.
  server_->Post(R"((https?://[^/]+)?/loki/api/v1/push)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  std::chrono::milliseconds delay;
                  {
                    std::lock_guard lock(mu_);
                    delay = delay_;
                    if (req.path.rfind("/", 0) != 0) ++proxied_requests_;
                  }
                  if (delay.count() > 0) {
                    std::unique_lock lock(mu_);
                    stop_cv_.wait_for(lock, delay, [this] { return stopping_; });
                  }
                  {
                    std::lock_guard lock(mu_);
                    std::map<std::string, std::string> headers;
                    for (const auto& [k, v] : req.headers) headers[k] += v;
                    request_headers_.push_back(std::move(headers));
                  }
                  Handled h = HandlePush(req.body, req.get_header_value("X-Scope-OrgID"),
                                         req.get_header_value("Authorization"));
                  res.status = h.status;
                  if (h.injected) {
                    Inject(h.injected, res);
                  } else if (!h.body.empty()) {
                    res.set_content(h.body, "text/plain; charset=utf-8");
                  }
                });
  server_->Get("/stats", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(StatsJson(), "application/json");
  });
  // Fault injection at run time, for benchmarks and manual tests:
  //   POST /control/fail?status=503&count=10   (count -1 = until cleared)
  //   POST /control/delay?ms=2000   POST /control/clear   POST /control/reset
  server_->Post("/control/fail", [this](const httplib::Request& req, httplib::Response& res) {
    const int status =
        req.has_param("status") ? std::atoi(req.get_param_value("status").c_str()) : 500;
    const int count = req.has_param("count") ? std::atoi(req.get_param_value("count").c_str()) : -1;
    if (count < 0) {
      FailAll(status);
    } else {
      FailNext(status, count);
    }
    res.set_content("ok\n", "text/plain");
  });
  server_->Post("/control/delay", [this](const httplib::Request& req, httplib::Response& res) {
    SetDelay(std::chrono::milliseconds(std::atoi(req.get_param_value("ms").c_str())));
    res.set_content("ok\n", "text/plain");
  });
  server_->Post("/control/clear", [this](const httplib::Request&, httplib::Response& res) {
    ClearFailures();
    res.set_content("ok\n", "text/plain");
  });
  server_->Post("/control/reset", [this](const httplib::Request&, httplib::Response& res) {
    Reset();
    res.set_content("ok\n", "text/plain");
  });
  server_->Get("/ready", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ready\n", "text/plain");
  });
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ <= 0) return false;
  } else {
    if (!server_->bind_to_port(host, port)) return false;
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() is a no-op until the listen loop runs: wait for it, so Stop() right after
  // Start() cannot hang.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

void FakeLoki::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string FakeLoki::PushUrl(const std::string& userinfo) const {
  std::string url = tls_ ? "https://" : "http://";
  if (!userinfo.empty()) url += userinfo + "@";
  return url + "127.0.0.1:" + std::to_string(port_) + "/loki/api/v1/push";
}

FakeLoki::Handled FakeLoki::HandlePush(const std::string& body, const std::string& tenant,
                                       const std::string& authorization) {
  std::unique_lock lock(mu_);
  ++requests_;
  tenants_.push_back(tenant);
  authorizations_.push_back(BasicCredentials(authorization));
  body_sizes_.push_back(body.size());
  auto answer = [&](int status, std::string text) {
    ++status_counts_[status];
    return Handled{status, std::move(text), nullptr};
  };

  if (fail_remaining_ != 0) {
    if (fail_remaining_ > 0) --fail_remaining_;
    Handled h = answer(fail_answer_->status, "");
    h.injected = fail_answer_;
    return h;
  }
  if (max_body_bytes_ > 0 && body.size() > max_body_bytes_) {
    return answer(413, "request body too large: " + std::to_string(body.size()) + " > " +
                           std::to_string(max_body_bytes_) + " bytes\n");
  }
  std::string raw;
  if (!snappy::Uncompress(body.data(), body.size(), &raw)) {
    return answer(400, "snappy: corrupt input\n");
  }
  logproto::PushRequest request;
  if (!request.ParseFromString(raw)) return answer(400, "proto: cannot parse PushRequest\n");
  if (request.streams_size() == 0) return answer(422, "push request contains no streams\n");

  // Loki's validation errors, joined as Loki joins them (dskit's multierror): "N errors: a; b".
  std::vector<std::string> errors;
  for (const auto& s : request.streams()) {
    if (reject_structured_metadata_) {
      for (const auto& e : s.entries()) {
        if (e.structuredmetadata_size() > 0) {
          return answer(400, "stream '" + s.labels() +
                                 "' includes structured metadata, but this feature is "
                                 "disallowed. Please see `limits_config.allow_structured_metadata` "
                                 "or contact your Loki administrator to enable it.\n");
        }
      }
    }
  }
  for (const auto& s : request.streams()) {
    Stream& stream = streams_[{tenant, s.labels()}];
    stream.tenant = tenant;
    stream.labels = s.labels();
    for (const auto& pe : s.entries()) {
      Entry e;
      e.timestamp_ns = pe.timestamp().seconds() * kNanosPerSecond + pe.timestamp().nanos();
      e.line = pe.line();
      for (const auto& m : pe.structuredmetadata())
        e.structured_metadata.emplace_back(m.name(), m.value());
      if (max_line_bytes_ > 0 && e.line.size() > max_line_bytes_) {
        errors.push_back("max entry size '" + std::to_string(max_line_bytes_) +
                         "' bytes exceeded for stream '" + s.labels() +
                         "' while adding an entry with length '" + std::to_string(e.line.size()) +
                         "' bytes");
        continue;
      }
      if (retain_entries_ && !seen_.insert(DedupKey(tenant, s.labels(), e)).second) {
        ++duplicates_;
        continue;
      }
      if (e.timestamp_ns < stream.newest_ns) {
        ++out_of_order_;
      } else {
        stream.newest_ns = e.timestamp_ns;
      }
      ++stream.count;
      if (retain_entries_) stream.entries.push_back(std::move(e));
      ++total_entries_;
    }
  }
  entries_cv_.notify_all();
  if (!errors.empty()) {
    std::string text = errors.size() > 1 ? std::to_string(errors.size()) + " errors: " : "";
    for (std::size_t i = 0; i < errors.size(); ++i) text += (i ? "; " : "") + errors[i];
    return answer(400, text + "\n");
  }
  return answer(204, "");
}

void FakeLoki::Inject(const std::shared_ptr<const Answer>& answer, httplib::Response& res) {
  for (const auto& [name, value] : answer->headers) res.set_header(name, value);
  // Loki's refusals of entries name the stream at fault; the default says so in Loki's words, so
  // that an injected 400 or 422 is taken as Loki's verdict (not a proxy's page).
  const std::string body =
      answer->body.empty() ? "injected failure for stream '{fake=\"loki\"}'\n" : answer->body;
  if (answer->filler_bytes == 0 && answer->drip.count() == 0) {
    res.set_content(body, "text/plain; charset=utf-8");
    answer_bytes_written_ += body.size();
    return;
  }
  // Generated as the client reads it, so a huge body costs no memory here.
  res.set_content_provider(
      body.size() + answer->filler_bytes, "text/plain; charset=utf-8",
      [this, answer, body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        static const std::string kFiller(64 * 1024, 'x');
        const std::size_t n = answer->drip.count() > 0 ? 1 : std::min(length, kFiller.size());
        std::string chunk;
        for (std::size_t i = 0; i < n; ++i) {
          chunk += offset + i < body.size() ? body[offset + i] : 'x';
        }
        if (!sink.write(chunk.data(), chunk.size())) return false;
        answer_bytes_written_ += chunk.size();
        if (answer->drip.count() > 0) {
          std::unique_lock lock(mu_);
          if (stop_cv_.wait_for(lock, answer->drip, [this] { return stopping_; })) return false;
        }
        return true;
      });
}

void FakeLoki::AnswerNext(Answer answer, int count) {
  std::lock_guard lock(mu_);
  fail_answer_ = std::make_shared<const Answer>(std::move(answer));
  fail_remaining_ = count;
}

void FakeLoki::FailNext(int status, int count, std::string body) {
  Answer a;
  a.status = status;
  a.body = std::move(body);
  AnswerNext(std::move(a), count);
}

void FakeLoki::FailAll(int status, std::string body) { FailNext(status, -1, std::move(body)); }

uint64_t FakeLoki::AnswerBytesWritten() const { return answer_bytes_written_.load(); }

void FakeLoki::ClearFailures() {
  std::lock_guard lock(mu_);
  fail_remaining_ = 0;
  delay_ = std::chrono::milliseconds(0);
}

void FakeLoki::SetDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  delay_ = delay;
}

void FakeLoki::SetMaxBodyBytes(std::size_t bytes) {
  std::lock_guard lock(mu_);
  max_body_bytes_ = bytes;
}

void FakeLoki::SetRejectStructuredMetadata(bool reject) {
  std::lock_guard lock(mu_);
  reject_structured_metadata_ = reject;
}

void FakeLoki::SetMaxLineBytes(std::size_t bytes) {
  std::lock_guard lock(mu_);
  max_line_bytes_ = bytes;
}

void FakeLoki::SetRetainEntries(bool retain) {
  std::lock_guard lock(mu_);
  retain_entries_ = retain;
}

void FakeLoki::Reset() {
  std::lock_guard lock(mu_);
  fail_answer_.reset();
  fail_remaining_ = 0;
  answer_bytes_written_ = 0;
  delay_ = std::chrono::milliseconds(0);
  max_body_bytes_ = 0;
  reject_structured_metadata_ = false;
  max_line_bytes_ = 0;
  streams_.clear();
  seen_.clear();
  total_entries_ = duplicates_ = out_of_order_ = requests_ = proxied_requests_ = 0;
  status_counts_.clear();
  tenants_.clear();
  authorizations_.clear();
  request_headers_.clear();
  body_sizes_.clear();
}

std::vector<FakeLoki::Stream> FakeLoki::Streams() const {
  std::lock_guard lock(mu_);
  std::vector<Stream> out;
  for (const auto& [key, s] : streams_) out.push_back(s);
  return out;
}

std::vector<FakeLoki::Entry> FakeLoki::EntriesOf(const std::string& labels,
                                                 const std::string& tenant) const {
  std::lock_guard lock(mu_);
  auto it = streams_.find({tenant, labels});
  if (it == streams_.end()) return {};
  return it->second.entries;
}

uint64_t FakeLoki::TotalEntries() const {
  std::lock_guard lock(mu_);
  return total_entries_;
}

uint64_t FakeLoki::Duplicates() const {
  std::lock_guard lock(mu_);
  return duplicates_;
}

uint64_t FakeLoki::OutOfOrder() const {
  std::lock_guard lock(mu_);
  return out_of_order_;
}

uint64_t FakeLoki::ProxiedRequests() const {
  std::lock_guard lock(mu_);
  return proxied_requests_;
}

uint64_t FakeLoki::Requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

std::map<int, uint64_t> FakeLoki::StatusCounts() const {
  std::lock_guard lock(mu_);
  return status_counts_;
}

std::vector<std::string> FakeLoki::Tenants() const {
  std::lock_guard lock(mu_);
  return tenants_;
}

std::vector<std::map<std::string, std::string>> FakeLoki::RequestHeaders() const {
  std::lock_guard lock(mu_);
  return request_headers_;
}

std::vector<std::string> FakeLoki::Authorizations() const {
  std::lock_guard lock(mu_);
  return authorizations_;
}

std::vector<std::size_t> FakeLoki::BodySizes() const {
  std::lock_guard lock(mu_);
  return body_sizes_;
}

bool FakeLoki::WaitForEntries(uint64_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return entries_cv_.wait_for(lock, timeout, [&] { return total_entries_ >= n; });
}

std::string FakeLoki::StatsJson() const {
  std::lock_guard lock(mu_);
  nlohmann::json j;
  j["requests"] = requests_;
  j["proxied_requests"] = proxied_requests_;
  j["entries"] = total_entries_;
  j["duplicates"] = duplicates_;
  j["out_of_order"] = out_of_order_;
  nlohmann::json statuses = nlohmann::json::object();
  for (const auto& [code, n] : status_counts_) statuses[std::to_string(code)] = n;
  j["status_counts"] = statuses;
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& [key, s] : streams_) {
    streams.push_back({{"tenant", s.tenant}, {"labels", s.labels}, {"entries", s.count}});
  }
  j["streams"] = streams;
  std::map<std::string, uint64_t> per_tenant;
  for (const auto& t : tenants_) ++per_tenant[t];
  j["requests_per_tenant"] = per_tenant;
  uint64_t body_bytes = 0;
  for (auto n : body_sizes_) body_bytes += n;
  j["body_bytes"] = body_bytes;
  return j.dump();
}

}  // namespace skald::testkit
