// HttpConnection: the plugin's own HTTP/1.1 client connection to one endpoint (Loki's push URL),
// plain or TLS (OpenSSL), direct or through an http, https or socks5 proxy, kept open between
// requests. Through an https proxy to an https endpoint, the endpoint's TLS runs inside the
// proxy's (its records are the proxy connection's data).
//
// Made so that nothing the far end sends can crash or bloat the plugin: every answer is read
// by an HttpResponseReader (bounded status line, header lines and count, body), every wait on
// the socket ends at the request's deadline, and Cut() from another thread ends the request in
// flight at once. A connection that carried a complete answer is used again; one that did not
// (an error, a capped body, "Connection: close") is closed. A request whose reused connection
// turns out to be closed by the peer is sent once more on a new one.
//
// Exchange() is called by one thread at a time; Cut() and Rearm() from any.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <netdb.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace skald {

struct HttpEndpoint {
  std::string scheme;  // "http" or "https"
  std::string host;    // a name or an address (IPv6 without brackets)
  int port = 0;
  // A proxy; empty host: none. An http proxy: proxy_authorization is the Proxy-Authorization
  // value; proxy_tls: an https one, reached over TLS with the settings below (as Go's client
  // does: the same CA, client certificate and server_name, else the proxy's host as the name).
  // A socks5 one (proxy_socks5): proxy_user and proxy_password when proxy_authenticate.
  std::string proxy_host;
  int proxy_port = 0;
  std::string proxy_authorization;
  bool proxy_tls = false;
  bool proxy_socks5 = false;
  bool proxy_authenticate = false;
  std::string proxy_user, proxy_password;
  // TLS (https): PEM text, read by the caller (the files' names are for messages); empty
  // ca_pem: the system's trust store. server_name: the name sent (SNI) and checked in the
  // certificate instead of `host`. tls_error: why the files could not be read (every https
  // connection then fails with it).
  std::string ca_pem, ca_file;
  std::string cert_pem, cert_file;
  std::string key_pem, key_file;
  std::string server_name;
  bool insecure_skip_verify = false;
  std::string tls_error;
};

// "Basic " and base64 of "user:password": an Authorization or Proxy-Authorization value.
std::string BasicAuthorization(std::string_view user, std::string_view password);

class HttpConnection {
 public:
  using Clock = std::chrono::steady_clock;
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Why a request got no answer; kNone when it got one.
  enum class Failure {
    kNone,
    kResolve,       // the host name did not resolve
    kConnect,       // the TCP connection was refused or failed
    kTlsSetup,      // a CA, certificate or key file could not be loaded
    kTlsVerify,     // the server's certificate did not verify
    kTlsHandshake,  // the TLS handshake failed otherwise
    kWrite,         // sending the request failed
    kRead,          // the connection failed or closed while the answer was read
    kBadAnswer,     // what came back is not an HTTP answer within the bounds
    kTimeout,       // the deadline passed
    kCut,           // Cut() ended it
  };

  struct Answer {
    Failure failure = Failure::kNone;
    int status = 0;
    std::string body;  // at most HttpResponseReader::kMaxBodyBytes
    bool body_capped = false;
    std::string location;
    std::string error;      // when failure != kNone: what happened, for the log
    bool at_proxy = false;  // the failure is the proxy's (reaching it, its TLS, its tunnel)
  };

  explicit HttpConnection(HttpEndpoint endpoint);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends `method` `path` with `headers` and `body` (Host and Content-Length are added; with a
  // proxy and plain http, the absolute URL is sent), reads the answer, all before `deadline`.
  Answer Exchange(std::string_view method, std::string_view path, const Headers& headers,
                  std::string_view body, Clock::time_point deadline) ABSL_LOCKS_EXCLUDED(fd_mu_);

  // Ends the exchange in flight (or the next one, until Rearm()) with kCut.
  void Cut() ABSL_LOCKS_EXCLUDED(fd_mu_);
  // Clears a Cut() that came after the last exchange.
  void Rearm() { cut_.store(false); }

  // The endpoint's TLS inside an https proxy's: the inner session's BIO reads and writes through
  // `outer`, and records which way the outer session must wait when it cannot go on.
  struct TlsTunnel {
    SSL* outer = nullptr;
    short want = 0;    // POLLIN or POLLOUT: what the outer session waited for last
    bool eof = false;  // the outer session ended
  };

 private:
  struct Io;  // one exchange's socket waits, bounded by its deadline

  // Opens the TCP connection (to the proxy, or the endpoint), then the proxy's tunnel (an http
  // proxy's CONNECT for https, a socks5 proxy's always) and TLS when asked. On failure returns the
  // answer to give (failure set, or a proxy's refusal).
  bool Open(Io& io, Answer* answer) ABSL_LOCKS_EXCLUDED(fd_mu_);
  // Open's attempt at one address `a`: a socket connected within io.deadline (io.fd, kept for
  // Cut()) and kNone, or the socket closed and why: kConnect with `error` (`more`: other
  // addresses wait, so a timeout is this address's, kConnect too), kTimeout or kCut.
  Failure ConnectOne(Io& io, const addrinfo& a, bool more, std::string& error)
      ABSL_LOCKS_EXCLUDED(fd_mu_);
  bool Tunnel(Io& io, Answer* answer);
  // The socks5 proxy's CONNECT to the endpoint (plugin/loki/socks5_handshake.h).
  bool Socks5Tunnel(Io& io, Answer* answer);
  // TLS to the proxy (`to_proxy`) or to the endpoint (inside the proxy's TLS when there is one).
  bool StartTls(Io& io, Answer* answer, bool to_proxy);
  // Makes tls_ctx_ from the endpoint's PEM texts; returns why it cannot ("" when it did).
  std::string LoadTlsContext();
  void Close() ABSL_LOCKS_EXCLUDED(fd_mu_);
  // The idle connection kept from an earlier exchange is still usable (nothing to read on it).
  bool IdleConnectionAlive();
  std::string RequestHead(std::string_view method, std::string_view path, const Headers& headers,
                          std::size_t body_size) const;

  const HttpEndpoint endpoint_;
  SSL_CTX* tls_ctx_ = nullptr;  // loaded at the first https connection
  SSL* tls_ = nullptr;          // of the open connection (https)
  SSL* proxy_tls_ = nullptr;    // to the https proxy of the open connection
  TlsTunnel tunnel_;            // tls_ inside proxy_tls_
  bool open_ = false;           // a connection is open and idle between exchanges

  // The socket: Exchange's thread opens and closes it under fd_mu_; Cut() shuts it down under
  // fd_mu_, so it never touches a closed (and perhaps reused) descriptor.
  absl::Mutex fd_mu_;
  int fd_ ABSL_GUARDED_BY(fd_mu_) = -1;
  std::atomic<bool> cut_{false};
};

}  // namespace skald
