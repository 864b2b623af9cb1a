// Fuzz target: a SOCKS5 proxy's answers as the Loki client reads them (Socks5Handshake).
//
// Input: one byte choosing the request (credentials or not; the endpoint a name, an IPv4 or an
// IPv6 address), then the bytes the proxy sends. Checks: the handshake never reads more than a
// SOCKS5 exchange can hold (266 bytes: method, auth status, reply head, the longest bound name
// and the port), never asks past what the proxy sent without failing, says why when refused,
// and never shows the password.
#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/loki/socks5_handshake.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t choice = data[0];
  const std::string answers(reinterpret_cast<const char*>(data + 1), size - 1);
  skald::Socks5Request request;
  static const char* const kHosts[] = {"loki.example", "10.0.0.7", "fd00::7"};
  request.host = kHosts[(choice >> 1) % 3];
  request.port = 3100;
  request.authenticate = (choice & 1) != 0;
  request.user = "ceo";
  request.password = "pw-S3cr3t";

  std::size_t read = 0;
  std::size_t written = 0;
  bool ran_out = false;
  const skald::Socks5Transport transport{[&](std::string_view bytes) {
                                           written += bytes.size();
                                           return true;
                                         },
                                         [&](char* into, std::size_t n) {
                                           if (answers.size() - read < n) {
                                             ran_out = true;
                                             return false;
                                           }
                                           answers.copy(into, n, read);
                                           read += n;
                                           return true;
                                         }};
  const skald::Socks5Outcome out = skald::Socks5Handshake(request, transport);
  FUZZ_CHECK(read <= 266);
  FUZZ_CHECK(written <= 4 + 2 + 3 + 255 + 3 + 4 + 1 + 255 + 2);
  FUZZ_CHECK((out.end == skald::Socks5Outcome::End::kSocketFailed) == ran_out);
  if (out.end == skald::Socks5Outcome::End::kRefused) {
    FUZZ_CHECK(out.why.rfind("socks5 proxy: ", 0) == 0);
    FUZZ_CHECK(out.why.find("S3cr3t") == std::string::npos);
  } else {
    FUZZ_CHECK(out.why.empty());
  }
  return 0;
}
