// QuietShippingClient: a ShippingClient that sends nothing and says all is well: it takes
// entries and forgets them, holds none, and Loki takes lines. The driver tests' fakes derive
// from it and override what their test needs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "plugin/driver/shipping_client.h"

namespace skald::testkit {

class QuietShippingClient : public ShippingClient {
 public:
  explicit QuietShippingClient(LokiClientConfig config) : config_(std::move(config)) {}

  void PushAll(std::vector<LokiEntry>& entries) override { entries.clear(); }
  void SendBuffered() override {}
  void Stop(std::chrono::milliseconds) override {}
  uint64_t Pending() const override { return 0; }
  std::optional<std::chrono::steady_clock::time_point> OldestPendingSince() const override {
    return std::nullopt;
  }
  PushResult LastPush() const override { return {}; }
  bool Taking() const override { return true; }
  std::size_t BufferedBytes() const override { return 0; }
  const LokiClientConfig& config() const override { return config_; }

 private:
  const LokiClientConfig config_;
};

}  // namespace skald::testkit
