// Test harness for untold::remote: a private nginx over TLS on 127.0.0.1.
//
// Each test process makes a temp prefix, a throw-away CA and a server
// certificate with the openssl CLI (EC P-256, valid one day), and runs nginx
// in the foreground (daemon off, master_process off: one process, killed with
// the test through PR_SET_PDEATHSIG) on a free loopback port. The access log
// records "$request_method $uri $status $body_bytes_sent "$http_range"
// "$http_if_none_match" "$http_if_range" $server_protocol" per request, which
// is what the tests assert on. Under /strip-etag/ nginx plays a CDN that
// answers Range requests carrying If-Range with a 206 without ETag (proxied
// to a second, plain-HTTP loopback server, logged to origin.log). tcp_proxy sits between client and nginx to
// reset, truncate, stall or hold connections. Only loopback addresses are used;
// every wait is bounded.
#pragma once

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <untold/io.hpp>
#include <untold/remote/remote.hpp>

#ifndef UNTOLD_NGINX
#define UNTOLD_NGINX ""
#endif
#ifndef UNTOLD_OPENSSL_CLI
#define UNTOLD_OPENSSL_CLI ""
#endif

namespace rt {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// A directory removed (recursively) at scope exit.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "untold-remote-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    if (std::getenv("UNTOLD_KEEP_TEMP") != nullptr) return;  // for debugging a failed test
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const noexcept { return path_; }
  fs::path operator/(const std::string& s) const { return path_ / s; }

 private:
  fs::path path_;
};

inline void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}
inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void write_bytes(const fs::path& p, untold::byte_span bytes) {
  fs::create_directories(p.parent_path());
  REQUIRE(untold::write_file(p, bytes).has_value());
}

/// Overwrites one byte of a file in place: same inode, same size (what a
/// bit flip on disk looks like to the cache's consistency checks).
inline void flip_byte(const fs::path& p, std::uint64_t offset) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f.good());
  f.seekg(static_cast<std::streamoff>(offset));
  const int c = f.get();
  REQUIRE(c != EOF);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x20));
  REQUIRE(f.good());
}

/// Spawns argv (stdout/stderr to `log` when given); returns the pid.
inline pid_t spawn(const std::vector<std::string>& argv, const fs::path& log = {}, bool die_with_parent = true) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Loopback only: the child gets no proxy from the environment. Built here,
  // before fork: between fork and exec only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    const std::string_view name = v.substr(0, v.find('='));
    if (name != "https_proxy" && name != "HTTPS_PROXY" && name != "all_proxy" && name != "ALL_PROXY")
      env_strings.emplace_back(v);
  }
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
    }
    if (!log.empty()) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
    }
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  REQUIRE(pid > 0);
  return pid;
}

/// waitpid with a bound; SIGKILL after it. Returns the exit code (-signal when killed).
inline int wait_exit(pid_t pid, std::chrono::milliseconds limit = 60s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  int st = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0) return -1000;
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

inline int run(const std::vector<std::string>& argv, const fs::path& log = {}) { return wait_exit(spawn(argv, log)); }

/// Polls `done` every 5 ms until true or `limit` passes.
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

/// Binds socket `s` to 127.0.0.1 on a free port and returns the port.
inline int bind_loopback(int s) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  return ntohs(a.sin_port);
}

/// Connects socket `s` to 127.0.0.1:port.
inline bool connect_loopback(int s, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

inline int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(s >= 0);
  const int port = bind_loopback(s);
  ::close(s);
  return port;
}

inline bool can_connect(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  const bool ok = connect_loopback(s, port);
  ::close(s);
  return ok;
}

/// A CA and a server certificate for 127.0.0.1 / localhost, made with the openssl CLI.
struct tls_material {
  fs::path ca_cert, server_cert, server_key;

  static tls_material make(const fs::path& dir) {
    const std::string openssl = UNTOLD_OPENSSL_CLI;
    REQUIRE_MESSAGE(!openssl.empty(), "openssl CLI not found at configure time: run scripts/install-deps.sh");
    tls_material t{dir / "ca.crt", dir / "server.crt", dir / "server.key"};
    const fs::path log = dir / "openssl.log";
    write_text(dir / "ext.cnf",
               "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
               "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    const std::string curve = "ec_paramgen_curve:prime256v1";
    REQUIRE(run({openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", curve, "-nodes", "-keyout",
                 (dir / "ca.key").string(), "-out", t.ca_cert.string(), "-days", "1", "-subj", "/CN=untold test CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"},
                log) == 0);
    REQUIRE(run({openssl, "req", "-newkey", "ec", "-pkeyopt", curve, "-nodes", "-keyout", t.server_key.string(), "-out",
                 (dir / "server.csr").string(), "-subj", "/CN=127.0.0.1"},
                log) == 0);
    REQUIRE(run({openssl, "x509", "-req", "-in", (dir / "server.csr").string(), "-CA", t.ca_cert.string(), "-CAkey",
                 (dir / "ca.key").string(), "-CAcreateserial", "-out", t.server_cert.string(), "-days", "1",
                 "-extfile", (dir / "ext.cnf").string()},
                log) == 0);
    return t;
  }
};

/// nginx escapes '"', '\\' and non-printable bytes in logged headers as \xHH.
inline std::string unescape_log(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

/// One access-log line.
struct log_entry {
  std::string method, uri;
  int status = 0;
  std::uint64_t bytes = 0;
  std::string range, if_none_match, if_range, protocol;
};

/// nginx in the foreground on 127.0.0.1:<port>, serving <prefix>/www.
class nginx_server {
 public:
  explicit nginx_server(const fs::path& prefix) : prefix_(prefix), tls_(tls_material::make(prefix)) {
    const std::string nginx = UNTOLD_NGINX;
    REQUIRE_MESSAGE(!nginx.empty(), "nginx not found at configure time: run scripts/install-deps.sh");
    fs::create_directories(prefix_ / "www");
    fs::create_directories(prefix_ / "tmp");
    fs::create_directories(prefix_ / "logs");
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) start(nginx);
    REQUIRE_MESSAGE(pid_ > 0, read_text(prefix_ / "logs" / "error.log"));
  }
  nginx_server(const nginx_server&) = delete;
  nginx_server& operator=(const nginx_server&) = delete;
  ~nginx_server() { stop(); }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGQUIT);
    wait_exit(pid_, 5s);
    pid_ = -1;
  }

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] const fs::path& www() const noexcept { return www_; }
  [[nodiscard]] const tls_material& tls() const noexcept { return tls_; }
  [[nodiscard]] std::string url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }

  /// Every access-log line so far.
  [[nodiscard]] std::vector<log_entry> log() const {
    std::vector<log_entry> out;
    std::istringstream in(read_text(prefix_ / "logs" / "access.log"));
    std::string line;
    while (std::getline(in, line)) {
      // METHOD URI STATUS BYTES "RANGE" "INM" "IFRANGE" PROTO
      log_entry e;
      std::istringstream ls(line);
      ls >> e.method >> e.uri >> e.status >> e.bytes;
      std::string rest;
      std::getline(ls, rest);
      std::vector<std::string> quoted;
      std::size_t pos = 0;
      while (quoted.size() < 3) {
        const std::size_t a = rest.find('"', pos);
        const std::size_t b = a == std::string::npos ? a : rest.find('"', a + 1);
        if (b == std::string::npos) break;
        quoted.push_back(rest.substr(a + 1, b - a - 1));
        pos = b + 1;
      }
      if (quoted.size() == 3) {
        e.range = quoted[0] == "-" ? "" : unescape_log(quoted[0]);
        e.if_none_match = quoted[1] == "-" ? "" : unescape_log(quoted[1]);
        e.if_range = quoted[2] == "-" ? "" : unescape_log(quoted[2]);
        std::istringstream(rest.substr(pos)) >> e.protocol;
      }
      out.push_back(e);
    }
    return out;
  }

  /// Log lines for one path (uri = "/" + path).
  [[nodiscard]] std::vector<log_entry> log_for(const std::string& path) const {
    std::vector<log_entry> out;
    for (log_entry& e : log())
      if (e.uri == "/" + path) out.push_back(std::move(e));
    return out;
  }

  /// Waits (bounded) until the log holds at least n lines for `path`
  /// (nginx writes a line once it has finished the response).
  std::vector<log_entry> wait_log_for(const std::string& path, std::size_t n) const {
    eventually([&] { return log_for(path).size() >= n; }, 10s);
    return log_for(path);
  }

 private:
  void start(const std::string& nginx) {
    port_ = free_port();
    origin_port_ = free_port();
    www_ = prefix_ / "www";
    const fs::path logs = prefix_ / "logs";
    const fs::path tmp = prefix_ / "tmp";
    std::ostringstream conf;
    conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         << "pid " << (logs / "nginx.pid").string() << ";\n"
         << "error_log " << (logs / "error.log").string() << " warn;\n"
         << "events { worker_connections 256; }\n"
         << "http {\n"
         << "  log_format t '$request_method $uri $status $body_bytes_sent \"$http_range\" "
            "\"$http_if_none_match\" \"$http_if_range\" $server_protocol';\n"
         << "  access_log " << (logs / "access.log").string() << " t;\n"
         << "  client_body_temp_path " << (tmp / "body").string() << ";\n"
         << "  proxy_temp_path " << (tmp / "proxy").string() << ";\n"
         << "  fastcgi_temp_path " << (tmp / "fastcgi").string() << ";\n"
         << "  uwsgi_temp_path " << (tmp / "uwsgi").string() << ";\n"
         << "  scgi_temp_path " << (tmp / "scgi").string() << ";\n"
         << "  types { application/octet-stream untold; application/json json; image/png png; }\n"
         << "  default_type application/octet-stream;\n"
         << "  keepalive_timeout 30s;\n"
         << "  server {\n"
         << "    listen 127.0.0.1:" << port_ << " ssl http2;\n"
         << "    ssl_certificate " << tls_.server_cert.string() << ";\n"
         << "    ssl_certificate_key " << tls_.server_key.string() << ";\n"
         << "    root " << www_.string() << ";\n"
         << "    location /fault/500 { return 500; }\n"
         << "    location /slow/ { limit_rate 64k; }\n"
         // A redirect from https:// to the same file on the plain-HTTP origin
         // below: the client must refuse it, not follow it.
         << "    location ~ ^/to-http(/.*)$ { return 301 http://127.0.0.1:" << origin_port_ << "$1; }\n"
         // A CDN that honours Range but drops If-Range and ETag: requests
         // carrying If-Range go through a proxy to the plain-HTTP origin
         // below without that header, and the answer loses its ETag (the
         // first request, without If-Range, is served directly, with it).
         << "    location /strip-etag/ {\n"
         << "      if ($http_if_range) { rewrite ^/strip-etag/(.*)$ /strip-etag-proxied/$1 last; }\n"
         << "    }\n"
         << "    location /strip-etag-proxied/ {\n"
         << "      internal;\n"
         << "      proxy_pass http://127.0.0.1:" << origin_port_ << "/strip-etag/;\n"
         << "      proxy_set_header If-Range \"\";\n"
         << "      proxy_hide_header ETag;\n"
         << "    }\n"
         << "  }\n"
         << "  server {\n"  // the origin behind /strip-etag-proxied/: loopback, plain HTTP
         << "    listen 127.0.0.1:" << origin_port_ << ";\n"
         << "    access_log " << (logs / "origin.log").string() << " t;\n"
         << "    root " << www_.string() << ";\n"
         << "  }\n"
         << "}\n";
    write_text(prefix_ / "nginx.conf", conf.str());
    const pid_t pid = spawn({nginx, "-p", prefix_.string(), "-c", (prefix_ / "nginx.conf").string(), "-e",
                             (logs / "error.log").string()},
                            logs / "stdout.log");
    const bool up = eventually(
        [&] {
          int st = 0;
          if (::waitpid(pid, &st, WNOHANG) == pid) return true;  // exited (port taken?)
          return can_connect(port_) && can_connect(origin_port_);
        },
        10s);
    if (up && ::kill(pid, 0) == 0 && can_connect(port_) && can_connect(origin_port_)) {
      pid_ = pid;
    } else {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, WNOHANG);
    }
  }

  fs::path prefix_;
  tls_material tls_;
  fs::path www_;
  int port_ = 0;
  int origin_port_ = 0;  // plain HTTP on loopback, reached only through nginx's own proxy
  pid_t pid_ = -1;
};

/// What the proxy does with the server's bytes on one connection.
struct proxy_mode {
  enum kind_t { pass, reset_after, close_after, stall_after, hold } kind = pass;
  std::uint64_t bytes = 0;  // server->client bytes forwarded before acting
};

/// A loopback TCP proxy to nginx that can reset (RST), close (FIN), stall
/// or hold a connection after a number of server->client bytes. Modes are
/// chosen per accepted connection (0, 1, ...). Everything stops in the destructor.
class tcp_proxy {
 public:
  tcp_proxy(int upstream_port, std::function<proxy_mode(int)> mode)
      : upstream_(upstream_port), mode_(std::move(mode)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener_ >= 0);
    port_ = bind_loopback(listener_);
    REQUIRE(::listen(listener_, 16) == 0);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  tcp_proxy(const tcp_proxy&) = delete;
  tcp_proxy& operator=(const tcp_proxy&) = delete;
  ~tcp_proxy() {
    stop_ = true;
    released_ = true;
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (std::thread& t : connections_) t.join();
    ::close(listener_);
  }

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] int connections() const noexcept { return accepted_.load(); }
  /// Lets held connections flow.
  void release() { released_ = true; }
  [[nodiscard]] std::string url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const int index = accepted_++;
      std::lock_guard lock(mutex_);
      connections_.emplace_back([this, client, index] { serve(client, mode_(index)); });
    }
  }

  void serve(int client, proxy_mode mode) {
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (server < 0 || !connect_loopback(server, upstream_)) {
      ::close(client);
      if (server >= 0) ::close(server);
      return;
    }
    std::uint64_t down = 0;  // server -> client bytes forwarded
    bool stalled = false;
    char buf[16384];
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!stop_ && std::chrono::steady_clock::now() < deadline) {
      const bool hold = mode.kind == proxy_mode::hold && !released_;
      pollfd p[2] = {{client, POLLIN, 0}, {server, static_cast<short>(hold || stalled ? 0 : POLLIN), 0}};
      if (::poll(p, 2, 50) < 0) break;
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = ::recv(client, buf, sizeof buf, 0);
        if (n <= 0) break;
        if (::send(server, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
      }
      if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        std::size_t want = sizeof buf;
        if (mode.kind != proxy_mode::pass && mode.kind != proxy_mode::hold)
          want = static_cast<std::size_t>(std::min<std::uint64_t>(want, mode.bytes - down));
        if (want == 0) {
          if (mode.kind == proxy_mode::stall_after) {
            stalled = true;  // keep the connection open, forward nothing more
            continue;
          }
          if (mode.kind == proxy_mode::reset_after) {
            linger l{1, 0};  // close() sends RST
            ::setsockopt(client, SOL_SOCKET, SO_LINGER, &l, sizeof l);
          }
          break;  // close_after: FIN
        }
        const ssize_t n = ::recv(server, buf, want, 0);
        if (n <= 0) break;
        if (::send(client, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
        down += static_cast<std::uint64_t>(n);
      }
    }
    ::close(client);
    ::close(server);
  }

  int upstream_;
  std::function<proxy_mode(int)> mode_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> released_{false};
  std::atomic<int> accepted_{0};
  std::mutex mutex_;
  std::vector<std::thread> connections_;
  std::thread acceptor_;
};

/// Downloader options for tests: trust only the test CA, no proxy from the
/// environment, fast retries, short timeouts.
inline untold::remote::downloader_options options_for(const fs::path& cache_dir, const tls_material& tls) {
  untold::remote::downloader_options o;
  o.cache_dir = cache_dir;
  o.client.ca_file = tls.ca_cert.string();
  o.client.use_env_proxy = false;
  o.retry.initial_delay = std::chrono::milliseconds(10);
  o.prefetch_textures = false;  // on in the prefetch test
  o.request_timeout = std::chrono::milliseconds(10'000);
  o.resource_timeout = std::chrono::milliseconds(30'000);
  return o;
}

inline std::unique_ptr<untold::remote::downloader> make_downloader(const untold::remote::downloader_options& o) {
  auto d = untold::remote::downloader::create(o);
  REQUIRE_MESSAGE(d.has_value(), d.error().describe());
  return std::move(*d);
}

}  // namespace rt
