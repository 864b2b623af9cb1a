// DriverFixture: what the in-process Driver tests (driver_test, driver_isolation_test) stand
// on: the fake Loki, a temporary state directory, FIFOs held open for writing as dockerd holds
// them, and a container's Info pointing at the fake Loki.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugin/driver/driver.h"
#include "tests/tools/fake_loki.h"

namespace skald::testkit {

class DriverFixture : public ::testing::Test {
 protected:
  // `dir_prefix`: the temporary directory's name before its random part.
  explicit DriverFixture(std::string dir_prefix) : dir_prefix_(std::move(dir_prefix)) {}

  void SetUp() override {
    ASSERT_TRUE(loki_.Start());
    std::string tmpl = "/tmp/" + dir_prefix_ + "-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    config_.state_dir = dir_ / "state";
    config_.hostname = "test-host";
  }
  void TearDown() override {
    driver_.reset();
    for (int fd : fds_) close(fd);
    std::filesystem::remove_all(dir_);
  }

  void StartDriver() { driver_ = std::make_unique<Driver>(config_, metrics_); }

  ContainerInfo Info(const std::string& id, std::map<std::string, std::string> opts = {}) {
    ContainerInfo info;
    info.container_id = id;
    info.container_name = "/" + id.substr(0, 8);
    info.config = std::move(opts);
    info.config.emplace("loki-url", loki_.PushUrl());
    info.config.emplace("loki-batch-wait", "50ms");
    return info;
  }

  // A FIFO held open for writing, as dockerd holds it.
  std::string MakeFifo(const std::string& name, int* write_fd) {
    const std::string path = (dir_ / name).string();
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    *write_fd = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    EXPECT_GE(*write_fd, 0);
    fds_.push_back(*write_fd);
    return path;
  }
  void CloseFd(int fd) {
    close(fd);
    std::erase(fds_, fd);
  }
  std::filesystem::path JournalDir(const std::string& id) {
    return config_.state_dir / "containers" / id;
  }

  FakeLoki loki_;
  std::filesystem::path dir_;
  DriverConfig config_;
  MetricsRegistry metrics_;
  std::unique_ptr<Driver> driver_;
  std::vector<int> fds_;

 private:
  std::string dir_prefix_;
};

}  // namespace skald::testkit
