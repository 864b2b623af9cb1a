// ShippingClient: what the Driver needs of a Loki client. It hands over entries (settled later
// through their DeliveryTicket), hurries what the client buffers, stops it, and reads how it
// fares. MakeShippingClient makes the real one, a LokiClient (plugin/loki/loki_client.h); tests
// give the Driver a fake through DriverConfig::client_factory, and settle its entries when
// they choose.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "plugin/loki/loki_client.h"
#include "plugin/metrics/metrics.h"

namespace skald {

class ShippingClient {
 public:
  virtual ~ShippingClient() = default;

  // LokiClient::PushAll: takes every entry in order; `entries` is left empty. Never blocks on
  // the network.
  virtual void PushAll(std::vector<LokiEntry>& entries) = 0;
  // LokiClient::SendBuffered: sends what is buffered now, returns at once.
  virtual void SendBuffered() = 0;
  // LokiClient::Stop: flushes for at most `deadline`, then stops; no PushAll after it.
  virtual void Stop(std::chrono::milliseconds deadline) = 0;

  // Entries taken and neither delivered nor dropped yet.
  virtual uint64_t Pending() const = 0;
  // When the oldest entry it holds was handed over; nullopt when it holds none.
  virtual std::optional<std::chrono::steady_clock::time_point> OldestPendingSince() const = 0;
  using PushResult = LokiClient::PushResult;
  // How the last push attempt ended (status empty before the first).
  virtual PushResult LastPush() const = 0;
  // LokiClient::Taking: whether Loki takes the pushes now.
  virtual bool Taking() const = 0;
  // LokiClient::BufferedBytes: the memory of the entries buffered, not yet in a push.
  virtual std::size_t BufferedBytes() const = 0;
  virtual const LokiClientConfig& config() const = 0;
};

// A LokiClient behind the interface. Throws what the LokiClient constructor throws.
std::shared_ptr<ShippingClient> MakeShippingClient(const LokiClientConfig& config,
                                                   MetricsRegistry& metrics);

}  // namespace skald
