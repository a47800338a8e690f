// untold/remote/downloader.hpp - HTTPS downloads into the disk cache.
//
//   auto dl = untold::remote::downloader::create({.cache_dir = "/var/cache/game"});
//   if (!dl) return fail(dl.error().describe());
//   auto tile = (*dl)->fetch("https://cdn.example.com/scene/tiles/t_0_0.untold");
//   if (!tile) return fail(tile.error().describe());     // E-REMOTE-... with HTTP status, attempts
//   auto asset = untold::open_file(tile->path);          // already validated once
//
// What fetch() does (the reference engine's RemoteAssetDownloader, docs/remote.md):
// - https:// only: http:// fails with insecure_scheme before any network I/O.
// - single-flight: concurrent fetches of one URL share one transfer; the
//   others wait for its result.
// - cache_first (default): a cached entry is returned with no network I/O;
//   revalidate: a conditional GET (If-None-Match: <etag>), 304 -> the cached
//   file without a write; reload: ignores the cache.
// - retries: up to retry.max_attempts tries; before try k+1 it waits
//   initial_delay * 2^(k-1) (1 s, 2 s, 4 s ...). Network errors, timeouts,
//   4xx and 5xx are retried; TLS trust failures, local I/O errors, invalid
//   files and oversize bodies are not.
// - timeouts: request_timeout bounds connecting and any stall with no byte
//   received; resource_timeout bounds the whole fetch, retries included.
// - a downloaded .untold is validated (untold::open_file, then verify_all:
//   every block digest, or the contentHash of a file without them) before it
//   enters the cache, then its textures (URIs relative to the file's URL) are
//   fetched in the background into the cache, each keyed by its absolute URL
//   like any entry (two tiles' "Textures/wall.png" from different
//   directories or hosts are two entries); failures are logged and skipped.
//   Find a texture with fetch()/resolve() of resolve_relative(tile_url, uri).
// - cached entries are checked against the SHA-256 in their sidecar
//   (disk_cache.hpp): a corrupt one is a miss and is downloaded again, and
//   revalidate re-hashes the entry before it asks for a 304 to reuse it.
//
// Thread safety: every member function may be called from any thread. The
// downloader must outlive the calls; destroying it cancels transfers still
// running and joins the prefetch threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../integrity.hpp"
#include "../io.hpp"
#include "disk_cache.hpp"
#include "error.hpp"
#include "http.hpp"
#include "url.hpp"

namespace untold::remote {

struct retry_policy {
  /// Tries in all (1 = no retry).
  std::uint32_t max_attempts = 3;
  /// Wait before the second try; doubles for each further one.
  std::chrono::milliseconds initial_delay{1000};
  std::chrono::milliseconds max_delay{60'000};

  /// The wait before try `attempt` (2, 3, ...): initial_delay * 2^(attempt-2).
  [[nodiscard]] std::chrono::milliseconds delay_before(std::uint32_t attempt) const noexcept {
    std::chrono::milliseconds d = initial_delay;
    for (std::uint32_t i = 2; i < attempt && d < max_delay; ++i) d *= 2;
    return std::min(d, max_delay);
  }
};

enum class fetch_policy : std::uint8_t {
  cache_first,  // a cached entry is used as is (no network I/O)
  revalidate,   // conditional GET with the cached ETag; 304 keeps the entry
  reload,       // unconditional GET, replaces the entry
};

enum class fetch_outcome : std::uint8_t {
  hit,           // served from the cache, no request
  not_modified,  // 304 after a conditional GET
  downloaded,    // 200, stored in the cache
};

[[nodiscard]] constexpr std::string_view name(fetch_outcome o) noexcept {
  switch (o) {
    case fetch_outcome::hit: return "hit";
    case fetch_outcome::not_modified: return "not_modified";
    case fetch_outcome::downloaded: return "downloaded";
  }
  return "unknown";
}

struct downloader_options {
  std::filesystem::path cache_dir;
  std::uint64_t cache_budget = std::uint64_t{500} * 1024 * 1024;
  double cache_evict_to = 0.75;
  /// When a cache_first hit re-hashes the entry (revalidate always does).
  cache_verify cache_verify_mode = cache_verify::once_per_entry;
  client_options client{};
  std::chrono::milliseconds request_timeout{30'000};
  std::chrono::milliseconds resource_timeout{300'000};
  retry_policy retry{};
  /// Fetch a downloaded .untold's textures in the background.
  bool prefetch_textures = true;
  std::uint32_t prefetch_threads = 4;
  /// untold::open every downloaded .untold (records, and with `validation`'s
  /// integrity mode every byte: a lazy open is followed by verify_all, so
  /// the block digests of data no open reads are checked too) before caching it.
  bool validate_untold = true;
  open_options validation{};
  /// Largest body accepted (too_large beyond).
  std::uint64_t max_download_bytes = std::uint64_t{4} << 30;
  /// Receives prefetch failures and other non-fatal events. May be called
  /// from any thread; must be thread-safe.
  std::function<void(std::string_view)> log{};
};

struct fetch_info {
  std::string url;
  std::filesystem::path path;  // the cached file (see cache_entry::path)
  std::string etag;
  std::uint64_t size = 0;
  fetch_outcome outcome = fetch_outcome::hit;
  std::uint32_t attempts = 0;  // requests this fetch made (0 for a hit)
  bool joined = false;         // this caller waited for another caller's transfer
};

struct downloader_stats {
  std::uint64_t requests = 0;          // HTTP requests sent (fetch, prefetch and ranges)
  std::uint64_t downloads = 0;         // 200 responses stored
  std::uint64_t not_modified = 0;      // 304 responses
  std::uint64_t hits = 0;              // fetches served by the cache without a request
  std::uint64_t retries = 0;           // tries after the first
  std::uint64_t failures = 0;          // fetches that returned an error
  std::uint64_t joined = 0;            // callers that shared another caller's transfer
  std::uint64_t prefetch_ok = 0;
  std::uint64_t prefetch_failed = 0;
  std::uint64_t bytes_received = 0;    // body bytes over the network
  std::uint64_t cache_corrupt = 0;     // cache entries whose data failed their SHA-256 (then re-downloaded)
};

/// Classification of one finished try.
struct attempt_verdict {
  std::optional<error> failure;  // nullopt = accepted
  bool retry = false;
};

class downloader {
 public:
  [[nodiscard]] static result<std::unique_ptr<downloader>> create(downloader_options options) {
    auto cache = disk_cache::open({.directory = options.cache_dir,
                                   .verify = options.cache_verify_mode,
                                   .budget_bytes = options.cache_budget,
                                   .evict_to = options.cache_evict_to});
    if (!cache) return cache.error();
    std::unique_ptr<downloader> d(new downloader(std::move(options), std::move(*cache)));
    return d;
  }

  downloader(const downloader&) = delete;
  downloader& operator=(const downloader&) = delete;

  ~downloader() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    client_.shutdown();
    for (std::thread& t : workers_) t.join();
  }

  /// The local copy of an https:// URL (see the top of this file).
  [[nodiscard]] result<fetch_info> fetch(std::string_view url, fetch_policy policy = fetch_policy::cache_first) {
    return fetch_as(url, policy);
  }

  /// What the engine does before it opens an asset: http:// -> insecure_scheme
  /// (no I/O); https:// -> fetch() and the cached path; file:// and plain
  /// paths pass through unchanged (file:// as its path); other schemes ->
  /// unsupported_scheme.
  [[nodiscard]] result<std::filesystem::path> resolve(std::string_view location,
                                                      fetch_policy policy = fetch_policy::cache_first) {
    if (has_scheme(location, "https") || has_scheme(location, "http")) {
      auto f = fetch(location, policy);
      if (!f) return f.error();
      return f->path;
    }
    if (has_scheme(location, "file")) {
      auto parts = parse_url(location);
      if (!parts) return parts.error();
      return std::filesystem::path(parts->path);
    }
    if (detail::scheme_length(location) > 1) return make_error(remote_errc::unsupported_scheme, std::string(location));
    return std::filesystem::path(std::string(location));
  }

  /// Queues a background fetch (cache_first) of `url`.
  void prefetch(std::string url) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      queue_.push_back(std::move(url));
      if (workers_.size() < std::max<std::uint32_t>(1, options_.prefetch_threads) && idle_workers_ == 0)
        workers_.emplace_back([this] { prefetch_loop(); });
    }
    wake_.notify_one();
  }

  /// Blocks until no background fetch is queued or running.
  void wait_idle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return stopping_ || (queue_.empty() && busy_workers_ == 0); });
  }

  /// Sends `request` with the retry policy. A try is accepted when it
  /// completes with a status in request.accept_status (any 2xx/304 when
  /// empty); `judge`, when given, may turn an accepted try into a failure.
  /// `before_try` runs before every try (e.g. to empty a body file).
  /// request.total_timeout is overridden by what is left of `deadline`.
  [[nodiscard]] result<http_response> transfer(
      http_request request, std::chrono::steady_clock::time_point deadline,
      const std::function<attempt_verdict(const http_response&)>& judge = {},
      const std::function<bool()>& before_try = {}) {
    request.request_timeout = options_.request_timeout;
    error last;
    for (std::uint32_t attempt = 1;; ++attempt) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        error e = attempt == 1 ? make_error(remote_errc::timeout, request.url) : last;
        if (attempt > 1 && e.code != remote_errc::timeout) e.detail += " (resource timeout reached)";
        e.attempts = attempt - 1;
        return e;
      }
      if (before_try && !before_try()) return make_error(remote_errc::cache_io, "cannot reset the body file");
      request.total_timeout = left;
      http_response r = client_.perform(request);
      count(&downloader_stats::requests);
      bytes_received_.fetch_add(r.body_bytes, std::memory_order_relaxed);
      attempt_verdict v = classify(request, r);
      if (!v.failure && judge) v = judge(r);
      if (!v.failure) {
        r.attempts = attempt;
        return r;
      }
      last = std::move(*v.failure);
      last.attempts = attempt;
      if (!last.detail.empty()) last.detail += ": ";
      last.detail += request.url;
      if (!v.retry || attempt >= options_.retry.max_attempts || stop_requested()) return last;
      count(&downloader_stats::retries);
      // A transport failure may be the connection's fault (stalled, half
      // closed): the next try opens a new one. HTTP errors reuse it.
      request.fresh_connection = last.code != remote_errc::http_status;
      if (!sleep_until_or_stop(std::min(std::chrono::steady_clock::now() + options_.retry.delay_before(attempt + 1),
                                         deadline)))
        return make_error(remote_errc::shutting_down, request.url);
    }
  }

  [[nodiscard]] downloader_stats stats() const {
    std::lock_guard lock(stats_mutex_);
    downloader_stats s = stats_;
    s.bytes_received = bytes_received_.load(std::memory_order_relaxed);
    s.cache_corrupt = cache_.corrupt_entries();
    return s;
  }

  /// Callers currently waiting on another caller's transfer (single-flight).
  [[nodiscard]] std::size_t waiting_callers() const {
    std::lock_guard lock(flights_mutex_);
    return waiting_;
  }

  [[nodiscard]] disk_cache& cache() noexcept { return cache_; }
  [[nodiscard]] http_client& client() noexcept { return client_; }
  [[nodiscard]] const downloader_options& options() const noexcept { return options_; }

  /// Emits a line to options().log (when set).
  void log(std::string_view line) const {
    if (options_.log) options_.log(line);
  }

 private:
  struct flight {
    std::condition_variable done_cv;
    bool done = false;
    std::optional<result<fetch_info>> outcome;
  };

  downloader(downloader_options options, disk_cache cache)
      : options_(std::move(options)), cache_(std::move(cache)), client_(options_.client) {}

  void count(std::uint64_t downloader_stats::*field, std::uint64_t n = 1) {
    std::lock_guard lock(stats_mutex_);
    stats_.*field += n;
  }

  [[nodiscard]] bool stop_requested() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // Sleeps until `when`; false when the downloader is being destroyed.
  [[nodiscard]] bool sleep_until_or_stop(std::chrono::steady_clock::time_point when) {
    std::unique_lock lock(mutex_);
    return !wake_.wait_until(lock, when, [this] { return stopping_; });
  }

  // Maps one try's transport result to accepted / failure (+ retry or not).
  static attempt_verdict classify(const http_request& request, const http_response& r) {
    auto fail = [&r](remote_errc code, bool retry) {
      error e = make_error(code, r.curl_error);
      e.http_status = r.status;
      e.curl_code = r.curl_code;
      return attempt_verdict{std::move(e), retry};
    };
    if (r.cancelled) return fail(remote_errc::shutting_down, false);
    if (r.too_large) return fail(remote_errc::too_large, false);
    if (r.write_failed) return fail(remote_errc::cache_io, false);
    const auto& fatal = request.no_retry_status;
    const bool retry_status = std::find(fatal.begin(), fatal.end(), r.status) == fatal.end();
    if (r.aborted_status) return fail(remote_errc::http_status, retry_status);
    switch (r.curl_code) {
      case CURLE_OK: break;
      case CURLE_OPERATION_TIMEDOUT: return fail(remote_errc::timeout, true);
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM: return fail(remote_errc::tls_failed, false);
      case CURLE_UNSUPPORTED_PROTOCOL: return fail(remote_errc::unsupported_scheme, false);
      case CURLE_URL_MALFORMAT: return fail(remote_errc::bad_url, false);
      case CURLE_PARTIAL_FILE: return fail(remote_errc::truncated_body, true);
      default: return fail(remote_errc::transfer_failed, true);
    }
    const auto& ok = request.accept_status;
    const bool accepted = ok.empty() ? ((r.status >= 200 && r.status < 300) || r.status == 304)
                                     : std::find(ok.begin(), ok.end(), r.status) != ok.end();
    if (!accepted) return fail(remote_errc::http_status, retry_status);
    if (r.content_length && r.status != 304 && r.status != 204 && *r.content_length != r.body_bytes)
      return fail(remote_errc::truncated_body, true);
    return {};
  }

  result<fetch_info> fetch_as(std::string_view url, fetch_policy policy) {
    if (auto s = require_https(url); !s) {  // before any network I/O
      count(&downloader_stats::failures);
      return s.error();
    }
    const std::string key(url);
    std::shared_ptr<flight> f;
    {
      std::unique_lock lock(flights_mutex_);
      const auto it = flights_.find(key);
      if (it != flights_.end()) {  // single-flight: wait for the transfer already running
        std::shared_ptr<flight> leader = it->second;
        ++waiting_;
        leader->done_cv.wait(lock, [&leader] { return leader->done; });
        --waiting_;
        lock.unlock();
        count(&downloader_stats::joined);
        result<fetch_info> shared = *leader->outcome;
        if (shared) shared->joined = true;
        return shared;
      }
      f = std::make_shared<flight>();
      flights_.emplace(key, f);
    }
    result<fetch_info> out = fetch_uncached(key, policy);
    if (!out) count(&downloader_stats::failures);
    {
      std::lock_guard lock(flights_mutex_);
      f->outcome = out;
      f->done = true;
      flights_.erase(key);
    }
    f->done_cv.notify_all();
    return out;
  }

  result<fetch_info> fetch_uncached(const std::string& url, fetch_policy policy) {
    // A 304 reuses the entry's bytes: revalidation always re-hashes them first,
    // so a corrupt entry is downloaded unconditionally instead.
    const std::optional<cache_entry> cached = policy == fetch_policy::reload       ? std::nullopt
                                              : policy == fetch_policy::revalidate ? cache_.lookup_verified(url)
                                                                                   : cache_.lookup(url);
    if (cached && policy == fetch_policy::cache_first) {
      count(&downloader_stats::hits);
      return fetch_info{url, cached->path, cached->etag, cached->size, fetch_outcome::hit, 0, false};
    }
    auto temp = cache_.create_temp(url);
    if (!temp) return temp.error();
    http_request req;
    req.url = url;
    req.body_fd = temp->fd();
    req.max_body = options_.max_download_bytes;
    req.accept_status = {200};
    const bool conditional = cached && !cached->etag.empty();
    if (conditional) {
      req.headers.push_back("If-None-Match: " + cached->etag);
      req.accept_status.push_back(304);
    }
    const auto deadline = std::chrono::steady_clock::now() + options_.resource_timeout;
    auto r = transfer(std::move(req), deadline, {}, [&temp] { return temp->truncate(); });
    if (!r) return r.error();
    if (r->status == 304 && conditional) {
      cache_.touch(*cached);
      count(&downloader_stats::not_modified);
      return fetch_info{url, cached->path, cached->etag, cached->size, fetch_outcome::not_modified, r->attempts, false};
    }
    // 200: validate, commit, then prefetch the textures.
    std::vector<std::string> textures;
    const bool is_untold = url_extension(url) == "untold";
    if (is_untold && (options_.validate_untold || options_.prefetch_textures)) {
      auto asset = open_file(temp->path(), options_.validation);
      // "Verified on download" must cover every byte: a lazy open (the
      // default) leaves uncompressed chunks with block digests for their
      // first access, so finish the job here (one SHA-256 pass over those
      // blocks; a file without block digests had its contentHash checked by
      // the open, and integrity::none leaves nothing for verify_all to do).
      untold::status verified = asset ? verify_all(asset->asset) : untold::status(asset.error());
      if (!verified && options_.validate_untold) {
        error e = make_error(remote_errc::invalid_asset, url);
        e.core = verified.error();
        e.http_status = r->status;
        return e;
      }
      if (asset && options_.prefetch_textures) textures = texture_urls(url, asset->asset);
    }
    auto entry = cache_.commit(std::move(*temp), url, {.etag = r->etag});
    if (!entry) return entry.error();
    count(&downloader_stats::downloads);
    for (std::string& texture_url : textures) prefetch(std::move(texture_url));
    return fetch_info{url, entry->path, entry->etag, entry->size, fetch_outcome::downloaded, r->attempts, false};
  }

  // The absolute URL of every texture an asset names (the cache key: a
  // relative URI alone would make two tiles' Textures/wall.png one entry).
  std::vector<std::string> texture_urls(const std::string& base, const asset& a) const {
    std::vector<std::string> out;
    for (const texture_record& t : a.textures()) {
      const std::string_view uri = a.string(t.uri_offset);
      if (uri.empty()) continue;
      auto resolved = resolve_relative(base, uri);
      if (!resolved) {
        log("texture prefetch skipped: " + resolved.error().describe());
        continue;
      }
      out.push_back(std::move(*resolved));
    }
    return out;
  }

  void prefetch_loop() {
    for (;;) {
      std::string job;
      {
        std::unique_lock lock(mutex_);
        ++idle_workers_;
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        --idle_workers_;
        if (stopping_) {
          idle_.notify_all();
          return;
        }
        job = std::move(queue_.front());
        queue_.pop_front();
        ++busy_workers_;
      }
      auto r = fetch_as(job, fetch_policy::cache_first);
      if (r) {
        count(&downloader_stats::prefetch_ok);
      } else {
        count(&downloader_stats::prefetch_failed);
        log("prefetch failed: " + r.error().describe());
      }
      {
        std::lock_guard lock(mutex_);
        --busy_workers_;
      }
      idle_.notify_all();
    }
  }

  downloader_options options_;
  disk_cache cache_;
  http_client client_;

  mutable std::mutex stats_mutex_;
  downloader_stats stats_{};
  std::atomic<std::uint64_t> bytes_received_{0};

  mutable std::mutex flights_mutex_;
  std::map<std::string, std::shared_ptr<flight>> flights_;
  std::size_t waiting_ = 0;

  std::mutex mutex_;  // prefetch queue, workers, stopping_
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::string> queue_;  // texture URLs to prefetch
  std::vector<std::thread> workers_;
  std::uint32_t idle_workers_ = 0;
  std::uint32_t busy_workers_ = 0;
  bool stopping_ = false;
};

}  // namespace untold::remote
