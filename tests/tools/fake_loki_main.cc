// fake-loki: the FakeLoki sink as a process, for benchmarks and manual fault injection.
//
//   fake-loki [--host H] [--port P] [--fail-status S --fail-count K] [--delay-ms D]
//             [--max-body-bytes N] [--reject-structured-metadata] [--max-line-bytes N]
//             [--no-retain] [--tls-cert F --tls-key F [--tls-client-ca F]]
// Prints "port <P>" on its first line of stdout, then serves until SIGINT or SIGTERM and
// prints the /stats JSON on exit. --fail-count -1 fails every request until
// POST /control/clear.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "tests/tools/fake_loki.h"

namespace {

void Usage() {
  std::cerr << "usage: fake-loki [--host H] [--port P] [--fail-status S --fail-count K]\n"
               "                 [--delay-ms D] [--max-body-bytes N] [--max-line-bytes N]\n"
               "                 [--reject-structured-metadata] [--no-retain]\n"
               "                 [--tls-cert F --tls-key F [--tls-client-ca F]]\n";
}

bool ParseInt(const char* s, long long& out) {
  char* end = nullptr;
  out = std::strtoll(s, &end, 10);
  return end != s && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  long long port = 0, fail_status = 0, fail_count = 0, delay_ms = 0, max_body = 0, max_line = 0;
  bool reject_metadata = false, retain = true;
  skald::testkit::FakeLoki::TlsFiles tls;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto int_flag = [&](std::string_view name, long long& out) {
      if (arg != name) return false;
      if (i + 1 >= argc || !ParseInt(argv[i + 1], out)) {
        std::cerr << "fake-loki: " << name << " needs an integer value\n";
        std::exit(2);
      }
      ++i;
      return true;
    };
    if (arg == "--host" && i + 1 < argc) {
      host = argv[++i];
    } else if (arg == "--tls-cert" && i + 1 < argc) {
      tls.cert_file = argv[++i];
    } else if (arg == "--tls-key" && i + 1 < argc) {
      tls.key_file = argv[++i];
    } else if (arg == "--tls-client-ca" && i + 1 < argc) {
      tls.client_ca_file = argv[++i];
    } else if (int_flag("--port", port) || int_flag("--fail-status", fail_status) ||
               int_flag("--fail-count", fail_count) || int_flag("--delay-ms", delay_ms) ||
               int_flag("--max-body-bytes", max_body) || int_flag("--max-line-bytes", max_line)) {
    } else if (arg == "--reject-structured-metadata") {
      reject_metadata = true;
    } else if (arg == "--no-retain") {
      retain = false;
    } else if (arg == "--help" || arg == "-h") {
      Usage();
      return 0;
    } else {
      std::cerr << "fake-loki: unknown argument '" << arg << "'\n";
      Usage();
      return 2;
    }
  }

  // Block the stop signals before threads start so only sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  skald::testkit::FakeLoki loki;
  loki.SetRetainEntries(retain);
  if (fail_status != 0 && fail_count != 0) {
    if (fail_count < 0) {
      loki.FailAll(static_cast<int>(fail_status));
    } else {
      loki.FailNext(static_cast<int>(fail_status), static_cast<int>(fail_count));
    }
  }
  loki.SetDelay(std::chrono::milliseconds(delay_ms));
  loki.SetMaxBodyBytes(static_cast<std::size_t>(max_body));
  loki.SetMaxLineBytes(static_cast<std::size_t>(max_line));
  loki.SetRejectStructuredMetadata(reject_metadata);
  const bool started = tls.cert_file.empty() ? loki.Start(static_cast<int>(port), host)
                                             : loki.StartTls(tls, static_cast<int>(port), host);
  if (!started) {
    std::cerr << "fake-loki: cannot listen on " << host << ":" << port << "\n";
    return 1;
  }
  std::cout << "port " << loki.port() << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  loki.Stop();
  std::cout << loki.StatsJson() << std::endl;
  return 0;
}
