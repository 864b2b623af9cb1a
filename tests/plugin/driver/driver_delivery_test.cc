// The Driver with a fake Loki client (DriverConfig::client_factory): the test decides when
// entries are settled, so what the journal's cursor does in between is checked without HTTP
// and without waiting for a real client's retries.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "plugin/driver/driver.h"
#include "plugin/driver/shipping_client.h"
#include "plugin/ingest/frame_codec.h"
#include "tests/plugin/driver/quiet_shipping_client.h"
#include "tests/plugin/plugin_test_support.h"

namespace skald {
namespace {

using testkit::WaitFor;

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Holds what it is given until the test settles it.
class FakeClient : public testkit::QuietShippingClient {
 public:
  using QuietShippingClient::QuietShippingClient;

  void PushAll(std::vector<LokiEntry>& entries) override {
    std::lock_guard lock(mu_);
    for (LokiEntry& e : entries) held_.push_back(std::move(e));
    entries.clear();
  }
  uint64_t Pending() const override {
    std::lock_guard lock(mu_);
    return held_.size();
  }

  // Settles the `n` oldest entries held (as a client does: delivered or dropped for good when
  // `final`, left unsent at shutdown otherwise); returns their lines.
  std::vector<std::string> Settle(std::size_t n, bool final) {
    std::vector<DeliveryTicket> tickets;
    std::vector<std::string> lines;
    {
      std::lock_guard lock(mu_);
      for (; n > 0 && !held_.empty(); --n) {
        tickets.push_back(held_.front().ticket);
        lines.push_back(held_.front().line);
        held_.pop_front();
      }
    }
    if (!tickets.empty() && tickets.front().listener != nullptr) {
      tickets.front().listener->OnSettled(tickets, final);
    }
    return lines;
  }

 private:
  mutable std::mutex mu_;
  std::deque<LokiEntry> held_;
};

std::string Frame(const std::string& line) { return testkit::StdoutFrame(line, 1'000'000'000); }

const std::string kId = std::string(64, 'd');

class DriverDeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/skald-driver-delivery-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    config_.state_dir = dir_ / "state";
    config_.hostname = "test-host";
    config_.maintenance_interval = 10ms;
    config_.client_factory = [this](const LokiClientConfig& c) {
      auto client = std::make_shared<FakeClient>(c);
      std::lock_guard lock(clients_mu_);
      clients_.push_back(client);
      return client;
    };
  }
  void TearDown() override {
    driver_.reset();
    if (w_ >= 0) close(w_);
    fs::remove_all(dir_);
  }

  void StartDriver() {
    {
      std::lock_guard lock(clients_mu_);
      clients_.clear();
    }
    driver_ = std::make_unique<Driver>(config_, metrics_);
  }
  FakeClient& Client() {
    std::lock_guard lock(clients_mu_);
    return *clients_.back();
  }
  std::size_t Held() { return Client().Pending(); }

  // Starts logging the container on a FIFO held open for writing, as dockerd holds it.
  void StartContainer() {
    fifo_ = (dir_ / "fifo").string();
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    w_ = open(fifo_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(w_, 0);
    ContainerInfo info;
    info.container_id = kId;
    info.container_name = "/delivery";
    info.config = {{"loki-url", "http://127.0.0.1:9/loki/api/v1/push"}};
    driver_->StartLogging(fifo_, info);
  }
  void Write(const std::string& line) {
    const std::string frame = Frame(line);
    ASSERT_EQ(write(w_, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  }
  // The daemon closes the FIFO: the stream ends once the reader reaches its end.
  void StopContainer() {
    driver_->StopLogging(fifo_);
    close(w_);
    w_ = -1;
  }

  // Journal bytes after the stream's acknowledged position (UpdateGauges reads the ledger).
  double Unacknowledged() {
    driver_->UpdateGauges();
    return metrics_.GetGauge("skald_journal_undelivered_bytes", "").Value();
  }
  // The cursor written in the container's journal, {0, 0} when there is none.
  JournalPosition Cursor() {
    std::ifstream in(config_.state_dir / "containers" / kId / "cursor");
    JournalPosition p;
    in >> p.segment >> p.offset;
    return in ? p : JournalPosition{};
  }

  fs::path dir_;
  std::string fifo_;
  int w_ = -1;
  DriverConfig config_;
  MetricsRegistry metrics_;
  std::mutex clients_mu_;
  std::vector<std::shared_ptr<FakeClient>> clients_;
  std::unique_ptr<Driver> driver_;
};

TEST_F(DriverDeliveryTest, TheCursorPassesALineOnlyOnceItAndEveryLineBeforeItAreSettled) {
  StartDriver();
  StartContainer();
  for (const char* line : {"one", "two", "three"}) Write(line);
  ASSERT_TRUE(WaitFor([&] { return Held() == 3; }, 10s)) << Held();
  EXPECT_EQ(Cursor(), JournalPosition{});
  const auto all =
      static_cast<double>(Frame("one").size() + Frame("two").size() + Frame("three").size());
  EXPECT_EQ(Unacknowledged(), all);

  // Whatever shipments the lines went in, the frame of the one not settled is not acknowledged.
  EXPECT_EQ(Client().Settle(2, /*final=*/true), (std::vector<std::string>{"one", "two"}));
  EXPECT_GE(Unacknowledged(), static_cast<double>(Frame("three").size()));

  EXPECT_EQ(Client().Settle(1, true), std::vector<std::string>{"three"});
  // (Its shipment may still be being handed over: then it leaves the ledger a moment later.)
  ASSERT_TRUE(WaitFor([&] { return Unacknowledged() == 0; }, 10s)) << Unacknowledged();
  const JournalPosition end{1, static_cast<uint64_t>(all)};
  EXPECT_TRUE(WaitFor([&] { return Cursor() == end; }, 10s))
      << Cursor().segment << " " << Cursor().offset;
}

TEST_F(DriverDeliveryTest, ALineLeftUnsentHoldsTheCursorAndIsSentAgainAfterARestart) {
  StartDriver();
  StartContainer();
  Write("first");
  ASSERT_TRUE(WaitFor([&] { return Held() == 1; }, 10s));
  Write("second");
  ASSERT_TRUE(WaitFor([&] { return Held() == 2; }, 10s));
  const auto both = static_cast<double>(Frame("first").size() + Frame("second").size());

  // "first" is left unsent (a client stopping), "second" is delivered: nothing is
  // acknowledged, as a restart must send "first" again.
  EXPECT_EQ(Client().Settle(1, /*final=*/false), std::vector<std::string>{"first"});
  EXPECT_EQ(Client().Settle(1, true), std::vector<std::string>{"second"});
  EXPECT_EQ(Unacknowledged(), both);
  StopContainer();
  ASSERT_TRUE(WaitFor([&] { return driver_->LiveStreams() == 0; }, 10s));
  driver_.reset();
  EXPECT_EQ(Cursor(), JournalPosition{});

  StartDriver();
  driver_->Recover();
  ASSERT_TRUE(WaitFor([&] { return Held() == 2; }, 10s)) << Held();
  EXPECT_EQ(Client().Settle(2, true), (std::vector<std::string>{"first", "second"}));
  // Past both lines: the end of their segment, or the start of the next once it is sealed.
  const JournalPosition past{1, static_cast<uint64_t>(both)};
  EXPECT_TRUE(WaitFor([&] { return Cursor() >= past; }, 10s))
      << Cursor().segment << " " << Cursor().offset;
  driver_.reset();

  // Everything settled and persisted: a restart has nothing to send.
  StartDriver();
  driver_->Recover();
  EXPECT_EQ(driver_->LiveStreams(), 0u);
  EXPECT_EQ(Unacknowledged(), 0);
}

}  // namespace
}  // namespace skald
