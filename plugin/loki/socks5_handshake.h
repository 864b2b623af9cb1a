// Socks5Handshake: the client side of a SOCKS5 proxy's CONNECT (RFC 1928), with a user name and
// password (RFC 1929) when loki-proxy-url holds them: what Go's HTTP client does for a
// socks5:// proxy. The proxy resolves the endpoint's name (a name is sent as a name, an address
// as an address), as Go's client lets it.
//
// Nothing the proxy sends can make it read more than a reply's own length (at most 262 bytes):
// every reply is read field by field, each field's size known before it is read.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace skald {

struct Socks5Request {
  std::string host;  // the endpoint: a name, or an IPv4 or IPv6 address (without brackets)
  int port = 0;
  bool authenticate = false;  // RFC 1929: the user name and password below
  std::string user = {}, password = {};
};

// How the handshake reaches the proxy; each returns false when the socket failed (the caller
// keeps why: a timeout, a cut, a reset).
struct Socks5Transport {
  std::function<bool(std::string_view bytes)> write_all;
  std::function<bool(char* into, std::size_t n)> read_exact;
};

struct Socks5Outcome {
  enum class End { kOpen, kSocketFailed, kRefused };
  End end = End::kOpen;
  std::string why;  // kRefused: what the proxy said or did, for the log
};

// Runs the handshake; on kOpen the socket carries the endpoint's bytes from then on.
Socks5Outcome Socks5Handshake(const Socks5Request& request, const Socks5Transport& transport);

// Why a request cannot be sent to a SOCKS5 proxy at all ("" when it can): a name over 255
// bytes, a user name empty or over 255 bytes, a password over 255 bytes.
std::string Socks5RequestError(const Socks5Request& request);

}  // namespace skald
