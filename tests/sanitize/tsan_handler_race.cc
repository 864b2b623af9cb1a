// ThreadSanitizer builds only: a race on purpose in a handler that cpp-httplib's server runs
// (the distribution's library, as the plugin API and the fake Loki use it), for
// tsan_must_report.sh: the suppressions (tsan.supp) must leave such a race reported. Two
// clients post at once; RacyHandler counts them in a plain int, unguarded.
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

int hits = 0;  // unguarded on purpose

__attribute__((noinline)) void RacyHandler(const httplib::Request&, httplib::Response& res) {
  for (int i = 0; i < 1000; ++i) hits = hits + 1;
  res.set_content("ok", "text/plain");
}

}  // namespace

int main() {
  httplib::Server server;
  server.Post("/race", RacyHandler);
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::fprintf(stderr, "tsan_handler_race: cannot bind\n");
    return 2;
  }
  std::thread serving([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::thread> clients;
  for (int c = 0; c < 2; ++c) {
    clients.emplace_back([port] {
      httplib::Client client("127.0.0.1", port);
      for (int i = 0; i < 20; ++i) client.Post("/race", "x", "text/plain");
    });
  }
  for (auto& t : clients) t.join();
  server.stop();
  serving.join();
  std::printf("hits: %d\n", hits);
  return 0;
}
