#include "plugin/driver/shipping_client.h"

namespace skald {

namespace {

class LokiShippingClient final : public ShippingClient {
 public:
  LokiShippingClient(const LokiClientConfig& config, MetricsRegistry& metrics)
      : client_(config, metrics) {}

  void PushAll(std::vector<LokiEntry>& entries) override { client_.PushAll(entries); }
  void SendBuffered() override { client_.SendBuffered(); }
  void Stop(std::chrono::milliseconds deadline) override { client_.Stop(deadline); }
  uint64_t Pending() const override { return client_.Pending(); }
  std::optional<std::chrono::steady_clock::time_point> OldestPendingSince() const override {
    return client_.OldestPendingSince();
  }
  PushResult LastPush() const override { return client_.LastPush(); }
  bool Taking() const override { return client_.Taking(); }
  std::size_t BufferedBytes() const override { return client_.BufferedBytes(); }
  const LokiClientConfig& config() const override { return client_.config(); }

 private:
  LokiClient client_;
};

}  // namespace

std::shared_ptr<ShippingClient> MakeShippingClient(const LokiClientConfig& config,
                                                   MetricsRegistry& metrics) {
  return std::make_shared<LokiShippingClient>(config, metrics);
}

}  // namespace skald
