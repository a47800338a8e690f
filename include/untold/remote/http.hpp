// untold/remote/http.hpp - HTTPS transfers through one libcurl multi handle.
//
//   untold::remote::http_client client({.ca_file = "ca.pem"});
//   untold::remote::http_request req{.url = "https://cdn/x/t.untold"};
//   req.headers.push_back("Range: bytes=0-65535");
//   untold::remote::http_response r = client.perform(std::move(req));   // blocks
//
// One worker thread drives a curl multi handle: every transfer of the client
// runs concurrently on it, connections are reused, and HTTP/2 is negotiated
// by ALPN and multiplexed when the server offers it (PIPEWAIT). perform()
// and start()/wait() are safe from any number of threads. Only the https
// protocol is enabled in libcurl (redirects included), as a second fence
// behind require_https(); with a custom CA bundle only that bundle is trusted.
//
// This layer reports what happened and decides nothing: status, headers,
// libcurl's result. Retries, caching and error mapping are the downloader's.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include "error.hpp"
#include "url.hpp"

namespace untold::remote {

struct client_options {
  /// PEM bundle of the CAs to trust; empty = the system's store. When set,
  /// it is the only trust anchor (the system CA path is disabled too).
  std::string ca_file{};
  /// Offer HTTP/2 (ALPN) and multiplex transfers on one connection.
  bool http2 = true;
  /// Honour https_proxy / no_proxy from the environment (libcurl's default).
  bool use_env_proxy = true;
  /// Connections per host (HTTP/1.1 parallelism; HTTP/2 multiplexes on one).
  long max_host_connections = 6;
  std::string user_agent = "untold-remote/0.1";
  /// libcurl's verbose trace on stderr (debugging).
  bool verbose = false;
};

struct http_request {
  std::string url;
  /// Extra header lines, e.g. "Range: bytes=0-99", "If-None-Match: \"x\"".
  std::vector<std::string> headers{};
  /// Write the body to this descriptor; -1 = keep it in http_response::body.
  int body_fd = -1;
  /// Abort when the body grows past this many bytes, or as soon as the
  /// headers declare a Content-Length above it (too_large, no body byte read).
  std::uint64_t max_body = std::numeric_limits<std::uint64_t>::max();
  /// When not empty, a final status outside this list aborts the transfer as
  /// soon as its headers arrive (an error page or an unexpected full body is
  /// never downloaded).
  std::vector<long> accept_status{};
  /// Statuses that fail without a retry (the downloader's policy), e.g. 200
  /// or 416 to an If-Range request.
  std::vector<long> no_retry_status{};
  /// Connect (incl. TLS handshake) limit and the idle limit: the transfer
  /// fails (CURLE_OPERATION_TIMEDOUT, http_response::idle_timeout) when no
  /// byte moves for this long. Checked about every 200 ms.
  std::chrono::milliseconds request_timeout{30'000};
  /// Limit for the whole transfer.
  std::chrono::milliseconds total_timeout{300'000};
  /// Open a new connection instead of reusing one (a retry after a
  /// connection-level failure: the old connection may be the problem).
  bool fresh_connection = false;
  /// Send HEAD instead of GET: status and headers only (Content-Length is
  /// the size the server would send), no body.
  bool head_only = false;
  /// Called on the transfer thread as body bytes arrive: (received, expected;
  /// 0 = not known yet). Returning false aborts the transfer (cancelled, not
  /// retried): a caller's per-request cancellation. Must be thread-safe and quick.
  std::function<bool(std::uint64_t, std::uint64_t)> progress{};
};

struct http_response {
  long status = 0;  // final HTTP status, 0 when none arrived
  int curl_code = 0;
  std::string curl_error{};
  std::string etag{};
  std::string content_range{};
  std::string last_modified{};
  std::optional<std::uint64_t> content_length{};
  std::vector<std::byte> body{};  // when http_request::body_fd == -1
  std::uint64_t body_bytes = 0;   // bytes received (memory or file)
  long http_version = 0;          // 1 (1.x), 2 or 3
  bool aborted_status = false;    // stopped by accept_status
  bool too_large = false;         // stopped by max_body
  bool write_failed = false;      // writing body_fd failed
  bool cancelled = false;         // the client shut down first, or request.progress said stop
  bool idle_timeout = false;      // no byte moved for request_timeout
  std::uint32_t attempts = 0;     // tries made for this response (set by downloader::transfer)

  [[nodiscard]] bool completed() const noexcept { return curl_code == 0 && !cancelled; }
};

/// While it lives, every transfer started on this thread without its own
/// http_request::progress gets `progress`: how a caller above an API that
/// builds its own requests (https_range_source, downloader::fetch) watches
/// their bytes or cancels them (stream_runner's per-request cancellation).
/// Scopes nest; the innermost wins.
class progress_scope {
 public:
  using hook = std::function<bool(std::uint64_t, std::uint64_t)>;
  explicit progress_scope(hook progress) : hook_(std::move(progress)), previous_(current()) { current() = &hook_; }
  progress_scope(const progress_scope&) = delete;
  progress_scope& operator=(const progress_scope&) = delete;
  ~progress_scope() { current() = previous_; }

  /// The innermost scope's hook on this thread, nullptr when none.
  [[nodiscard]] static const hook*& current() noexcept {
    thread_local const hook* active = nullptr;
    return active;
  }

 private:
  hook hook_;
  const hook* previous_;
};

namespace detail {

[[nodiscard]] inline bool curl_ready() noexcept {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  return rc == CURLE_OK;
}

[[nodiscard]] inline std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

[[nodiscard]] inline std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

}  // namespace detail

/// A started transfer; wait() blocks until it finished (or the client stopped).
class http_transfer {
 public:
  http_response& wait() {
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [this] { return done_; });
    return response_;
  }

 private:
  friend class http_client;
  http_request request_;
  http_response response_;
  CURL* easy_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::array<char, CURL_ERROR_SIZE> error_buffer_{};
  std::chrono::steady_clock::time_point last_activity_{};
  curl_off_t last_down_ = -1, last_up_ = -1;  // -1: no progress call yet
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
};

class http_client {
 public:
  explicit http_client(client_options options = {}) : options_(std::move(options)) {
    if (!detail::curl_ready()) return;
    multi_ = curl_multi_init();
    if (multi_ == nullptr) return;
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING, options_.http2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
    curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_host_connections);
    worker_ = std::thread([this] { run(); });
  }

  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  ~http_client() {
    shutdown();
    if (multi_ != nullptr) curl_multi_cleanup(multi_);
  }

  /// Stops the worker: transfers still queued or running finish as
  /// cancelled, later ones are cancelled at once. Idempotent.
  void shutdown() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    if (multi_ != nullptr) curl_multi_wakeup(multi_);
    if (worker_.joinable()) worker_.join();
  }

  [[nodiscard]] const client_options& options() const noexcept { return options_; }

  /// Queues a transfer on the worker. Never touches the network for a URL
  /// that is not https:// (the transfer completes at once with CURLE_UNSUPPORTED_PROTOCOL).
  [[nodiscard]] std::shared_ptr<http_transfer> start(http_request request) {
    auto t = std::make_shared<http_transfer>();
    t->request_ = std::move(request);
    if (!t->request_.progress && progress_scope::current() != nullptr) t->request_.progress = *progress_scope::current();
    if (multi_ == nullptr || !require_https(t->request_.url) || !prepare(*t)) {
      finish(*t, multi_ == nullptr ? CURLE_FAILED_INIT : CURLE_UNSUPPORTED_PROTOCOL);
      return t;
    }
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        t->response_.cancelled = true;
        finish(*t, CURLE_ABORTED_BY_CALLBACK);
        return t;
      }
      queued_.push_back(t);
    }
    requests_started_.fetch_add(1, std::memory_order_relaxed);
    curl_multi_wakeup(multi_);
    return t;
  }

  /// start() + wait().
  [[nodiscard]] http_response perform(http_request request) { return std::move(start(std::move(request))->wait()); }

  /// Transfers handed to libcurl so far (tests count requests with it).
  [[nodiscard]] std::uint64_t requests_started() const noexcept {
    return requests_started_.load(std::memory_order_relaxed);
  }

 private:
  // Sets up the easy handle; false when libcurl refuses an option.
  bool prepare(http_transfer& t) {
    CURL* e = curl_easy_init();
    if (e == nullptr) return false;
    t.easy_ = e;
    const http_request& r = t.request_;
    bool ok = curl_easy_setopt(e, CURLOPT_URL, r.url.c_str()) == CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500
    ok = ok && curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https") == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "https") == CURLE_OK;
#else
    ok = ok && curl_easy_setopt(e, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTPS)) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTPS)) == CURLE_OK;
#endif
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PRIVATE, static_cast<void*>(&t));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &http_client::on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, static_cast<void*>(&t));
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &http_client::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, static_cast<void*>(&t));
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.error_buffer_.data());
    curl_easy_setopt(e, CURLOPT_USERAGENT, options_.user_agent.c_str());
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     options_.http2 ? static_cast<long>(CURL_HTTP_VERSION_2TLS) : static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, options_.http2 ? 1L : 0L);
    if (r.fresh_connection) curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
    if (r.head_only) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, std::max<long>(1, static_cast<long>(r.request_timeout.count())));
    // The idle limit: libcurl's low-speed check averages over several
    // seconds, so the progress callback measures the stall itself (from the
    // transfer's first progress call: time queued for a connection is not idle).
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &http_client::on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, static_cast<void*>(&t));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, std::max<long>(1, static_cast<long>(r.total_timeout.count())));
    if (!options_.ca_file.empty()) {
      ok = ok && curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_file.c_str()) == CURLE_OK;
      curl_easy_setopt(e, CURLOPT_CAPATH, static_cast<const char*>(nullptr));
    }
    if (!options_.use_env_proxy) curl_easy_setopt(e, CURLOPT_PROXY, "");
    if (options_.verbose) curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
    for (const std::string& h : r.headers) t.headers_ = curl_slist_append(t.headers_, h.c_str());
    if (t.headers_ != nullptr) curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers_);
    return ok;
  }

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto& t = *static_cast<http_transfer*>(user);
    const std::size_t n = size * count;
    const std::string_view line(data, n);
    http_response& r = t.response_;
    if (line.starts_with("HTTP/")) {  // a new response (redirect, 100-continue): forget the last one's headers
      r.etag.clear();
      r.content_range.clear();
      r.last_modified.clear();
      r.content_length.reset();
      return n;
    }
    if (detail::trim(line).empty()) {  // end of this response's headers
      long code = 0;
      curl_easy_getinfo(t.easy_, CURLINFO_RESPONSE_CODE, &code);
      const bool interim = code < 200 || (code >= 300 && code < 400 && code != 304);
      if (!interim && !t.request_.accept_status.empty() &&
          std::find(t.request_.accept_status.begin(), t.request_.accept_status.end(), code) ==
              t.request_.accept_status.end()) {
        r.aborted_status = true;
        return 0;  // CURLE_WRITE_ERROR: do not download this body
      }
      // A declared length over the limit is refused here, before one byte of
      // the body is received or written (on_body still guards bodies of
      // unknown or untruthful length).
      if (!interim && r.content_length && *r.content_length > t.request_.max_body) {
        r.too_large = true;
        return 0;
      }
      return n;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return n;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = detail::trim(line.substr(colon + 1));
    if (detail::iequals(name, "etag")) r.etag = std::string(value);
    else if (detail::iequals(name, "content-range")) r.content_range = std::string(value);
    else if (detail::iequals(name, "last-modified")) r.last_modified = std::string(value);
    else if (detail::iequals(name, "content-length")) r.content_length = detail::parse_u64(value);
    return n;
  }

  static int on_progress(void* user, curl_off_t down_total, curl_off_t down, curl_off_t, curl_off_t up) {
    auto& t = *static_cast<http_transfer*>(user);
    if (t.request_.progress &&
        !t.request_.progress(static_cast<std::uint64_t>(std::max<curl_off_t>(0, down)),
                             static_cast<std::uint64_t>(std::max<curl_off_t>(0, down_total)))) {
      t.response_.cancelled = true;
      return 1;  // CURLE_ABORTED_BY_CALLBACK
    }
    const auto now = std::chrono::steady_clock::now();
    if (down != t.last_down_ || up != t.last_up_) {
      t.last_down_ = down;
      t.last_up_ = up;
      t.last_activity_ = now;
      return 0;
    }
    if (now - t.last_activity_ < t.request_.request_timeout) return 0;
    t.response_.idle_timeout = true;
    return 1;  // CURLE_ABORTED_BY_CALLBACK, reported as CURLE_OPERATION_TIMEDOUT
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& t = *static_cast<http_transfer*>(user);
    const std::size_t n = size * count;
    http_response& r = t.response_;
    if (r.body_bytes + n > t.request_.max_body || r.body_bytes + n < r.body_bytes) {
      r.too_large = true;
      return 0;
    }
    if (t.request_.body_fd >= 0) {
      const char* p = data;
      std::size_t left = n;
      while (left != 0) {
        const ssize_t w = ::write(t.request_.body_fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          r.write_failed = true;
          return 0;
        }
        p += w;
        left -= static_cast<std::size_t>(w);
      }
    } else {
      const auto* b = reinterpret_cast<const std::byte*>(data);
      r.body.insert(r.body.end(), b, b + n);
    }
    r.body_bytes += n;
    return n;
  }

  static void finish(http_transfer& t, CURLcode code) {
    http_response& r = t.response_;
    if (code == CURLE_ABORTED_BY_CALLBACK && r.idle_timeout) code = CURLE_OPERATION_TIMEDOUT;
    r.curl_code = static_cast<int>(code);
    if (t.easy_ != nullptr) {
      long status = 0;
      curl_easy_getinfo(t.easy_, CURLINFO_RESPONSE_CODE, &status);
      r.status = status;
      long version = 0;
      curl_easy_getinfo(t.easy_, CURLINFO_HTTP_VERSION, &version);
      r.http_version = version == CURL_HTTP_VERSION_2_0 ? 2 : version == CURL_HTTP_VERSION_3 ? 3 : version != 0 ? 1 : 0;
      if (code != CURLE_OK) r.curl_error = t.error_buffer_[0] != '\0' ? t.error_buffer_.data() : curl_easy_strerror(code);
      curl_easy_cleanup(t.easy_);
      t.easy_ = nullptr;
    } else if (code != CURLE_OK) {
      r.curl_error = curl_easy_strerror(code);
    }
    curl_slist_free_all(t.headers_);
    t.headers_ = nullptr;
    {
      std::lock_guard lock(t.mutex_);
      t.done_ = true;
    }
    t.done_cv_.notify_all();
  }

  void run() {
    std::vector<std::shared_ptr<http_transfer>> active;
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (stopping_) break;
        for (auto& t : queued_) {
          if (curl_multi_add_handle(multi_, t->easy_) == CURLM_OK) {
            active.push_back(std::move(t));
          } else {
            finish(*t, CURLE_FAILED_INIT);
          }
        }
        queued_.clear();
      }
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* easy = msg->easy_handle;
        const CURLcode code = msg->data.result;
        curl_multi_remove_handle(multi_, easy);
        const auto it = std::find_if(active.begin(), active.end(), [easy](const auto& t) { return t->easy_ == easy; });
        if (it == active.end()) continue;
        std::shared_ptr<http_transfer> t = std::move(*it);
        active.erase(it);
        finish(*t, code);
      }
      // Short while transfers run (the idle check), long when there are none;
      // curl_multi_wakeup() interrupts either.
      curl_multi_poll(multi_, nullptr, 0, active.empty() ? 10'000 : 200, nullptr);
    }
    // Shutting down: everything still queued or running ends as cancelled.
    std::deque<std::shared_ptr<http_transfer>> queued;
    {
      std::lock_guard lock(mutex_);
      queued.swap(queued_);
    }
    for (auto& t : active) {
      curl_multi_remove_handle(multi_, t->easy_);
      t->response_.cancelled = true;
      finish(*t, CURLE_ABORTED_BY_CALLBACK);
    }
    for (auto& t : queued) {
      t->response_.cancelled = true;
      finish(*t, CURLE_ABORTED_BY_CALLBACK);
    }
  }

  client_options options_;
  CURLM* multi_ = nullptr;
  std::thread worker_;
  std::mutex mutex_;
  std::deque<std::shared_ptr<http_transfer>> queued_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> requests_started_{0};
};

}  // namespace untold::remote
