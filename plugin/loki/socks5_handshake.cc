#include "plugin/loki/socks5_handshake.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>

namespace skald {

namespace {

constexpr char kVersion = 5;
constexpr unsigned char kNoAuthentication = 0, kUserPassword = 2, kNoAcceptableMethod = 0xFF;
constexpr char kConnect = 1;
constexpr unsigned char kIpv4 = 1, kName = 3, kIpv6 = 4;

// RFC 1928's reply codes.
std::string ReplyMeaning(unsigned char code) {
  static constexpr std::array<const char*, 9> kMeanings = {"succeeded",
                                                           "general SOCKS server failure",
                                                           "connection not allowed by ruleset",
                                                           "network unreachable",
                                                           "host unreachable",
                                                           "connection refused",
                                                           "TTL expired",
                                                           "command not supported",
                                                           "address type not supported"};
  const std::string meaning = code < kMeanings.size() ? kMeanings[code] : "unknown reply code";
  return meaning + " (" + std::to_string(code) + ")";
}

Socks5Outcome Refused(std::string why) {
  return {Socks5Outcome::End::kRefused, "socks5 proxy: " + std::move(why)};
}

Socks5Outcome SocketFailed() { return {Socks5Outcome::End::kSocketFailed, ""}; }

// The CONNECT request's address: an address as an address, anything else as a name.
std::string Address(const std::string& host) {
  std::string out;
  unsigned char raw[16];
  if (inet_pton(AF_INET, host.c_str(), raw) == 1) {
    out += static_cast<char>(kIpv4);
    out.append(reinterpret_cast<const char*>(raw), 4);
  } else if (inet_pton(AF_INET6, host.c_str(), raw) == 1) {
    out += static_cast<char>(kIpv6);
    out.append(reinterpret_cast<const char*>(raw), 16);
  } else {
    out += static_cast<char>(kName);
    out += static_cast<char>(host.size());
    out += host;
  }
  return out;
}

Socks5Outcome Authenticate(const Socks5Request& r, const Socks5Transport& t) {
  std::string message(1, '\x01');  // the sub-negotiation's version
  message += static_cast<char>(r.user.size());
  message += r.user;
  message += static_cast<char>(r.password.size());
  message += r.password;
  if (!t.write_all(message)) return SocketFailed();
  char status[2];
  if (!t.read_exact(status, 2)) return SocketFailed();
  if (status[1] != 0) return Refused("the user name and password were refused");
  return {};
}

// Reads the rest of a reply after its first 4 bytes: the bound address and port, of the size
// the address type says.
bool SkipBoundAddress(unsigned char type, const Socks5Transport& t, std::string* why) {
  std::size_t size = 0;
  if (type == kIpv4) {
    size = 4;
  } else if (type == kIpv6) {
    size = 16;
  } else if (type == kName) {
    char length;
    if (!t.read_exact(&length, 1)) return false;
    size = static_cast<unsigned char>(length);
  } else {
    *why = "a reply with an unknown address type " + std::to_string(type);
    return true;
  }
  char skipped[255 + 2];
  return t.read_exact(skipped, size + 2);
}

}  // namespace

std::string Socks5RequestError(const Socks5Request& r) {
  if (r.host.empty() || r.host.size() > 255) return "the endpoint's host name is 1 to 255 bytes";
  // As Go's client: a user name of 1 to 255 bytes, a password of at most 255 (empty too).
  if (r.authenticate && (r.user.empty() || r.user.size() > 255 || r.password.size() > 255)) {
    return "a socks5 user name is 1 to 255 bytes and its password at most 255";
  }
  return "";
}

Socks5Outcome Socks5Handshake(const Socks5Request& r, const Socks5Transport& t) {
  if (std::string why = Socks5RequestError(r); !why.empty()) return Refused(why);
  // As Go's client: with credentials, both methods are offered.
  std::string greeting{kVersion, 1, static_cast<char>(kNoAuthentication)};
  if (r.authenticate) {
    greeting = {kVersion, 2, static_cast<char>(kNoAuthentication),
                static_cast<char>(kUserPassword)};
  }
  if (!t.write_all(greeting)) return SocketFailed();
  char chosen[2];
  if (!t.read_exact(chosen, 2)) return SocketFailed();
  if (chosen[0] != kVersion) {
    return Refused("not a SOCKS5 proxy (its answer starts with byte " +
                   std::to_string(static_cast<unsigned char>(chosen[0])) + ")");
  }
  const auto method = static_cast<unsigned char>(chosen[1]);
  if (method == kNoAcceptableMethod || (method != kNoAuthentication && method != kUserPassword) ||
      (method == kUserPassword && !r.authenticate)) {
    return Refused(r.authenticate ? "it accepts none of the authentication methods offered"
                                  : "it wants credentials: give them in loki-proxy-url "
                                    "(socks5://user:password@host)");
  }
  if (method == kUserPassword) {
    if (Socks5Outcome auth = Authenticate(r, t); auth.end != Socks5Outcome::End::kOpen) {
      return auth;
    }
  }
  std::string connect{kVersion, kConnect, 0};
  connect += Address(r.host);
  connect += static_cast<char>((r.port >> 8) & 0xFF);
  connect += static_cast<char>(r.port & 0xFF);
  if (!t.write_all(connect)) return SocketFailed();
  char reply[4];
  if (!t.read_exact(reply, 4)) return SocketFailed();
  if (reply[0] != kVersion) return Refused("a reply that is not SOCKS5's");
  const auto code = static_cast<unsigned char>(reply[1]);
  if (code != 0) return Refused("CONNECT refused: " + ReplyMeaning(code));
  std::string why;
  if (!SkipBoundAddress(static_cast<unsigned char>(reply[3]), t, &why)) return SocketFailed();
  if (!why.empty()) return Refused(why);
  return {};
}

}  // namespace skald
