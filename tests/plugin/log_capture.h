// LogCapture: what the plugin logs through spdlog's default logger while it lives, for tests
// that check a message (and that a secret is not in it).
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>

namespace skald::testkit {

class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string Text() {
    spdlog::default_logger()->flush();
    return out_.str();
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace skald::testkit
