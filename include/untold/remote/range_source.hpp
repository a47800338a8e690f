// untold/remote/range_source.hpp - a range_source over HTTPS Range requests.
//
//   auto src = untold::remote::https_range_source::open(*dl, "https://cdn/x/tiles/t.untold");
//   if (!src) return fail(src.error().describe());
//   auto tile = untold::streamed_asset::open(*src);   // no further request: served by open's
//   auto mesh = tile->load_mesh(3);                   // one Range request per coalesced range
//
// open() sends ONE request: "Range: bytes=0-<initial_read-1>". Its 206
// answer gives the file size (Content-Range), the strong ETag and the
// prefix that streamed_asset::open reads first (header, chunk table and, for
// the library's writer layout, all metadata): keep range_options::initial_read
// equal to stream_options::initial_read (both 64 KiB by default).
//
// Every later read() that the prefix does not cover is a Range request with
// "If-Range: <etag>". A server whose file changed answers 200 with the new
// full body instead of 206; the transfer is aborted at the headers and read()
// fails (changed_on_server) - bytes of two versions are never mixed. 416 is
// treated the same way. A 206 whose Content-Range does not match the request
// is bad_response; one without the pinned ETag (missing or different) or
// with another total size is changed_on_server.
//
// Caching (when range_options::use_cache): the prefix is stored under the
// key "<url>\n#prefix:<initial_read>" with the ETag and the file size; the
// next open() sends "If-None-Match: <etag>" with its Range and a 304 serves
// the prefix from disk. Every other range is stored under
// "<url>\n<etag>\n<offset>+<size>" (data file <hash>.range), so a range is only
// ever reused for the same ETag. A whole file downloaded by fetch() with the
// same ETag serves every range locally. Ranges count toward the cache
// budget and are evicted like any entry.
//
// read() returns untold::status: a remote failure is io_read_failed with
// context.field = the remote_errc name and context.value = the HTTP status
// (see remote::error::to_core); last_error() has the full remote::error.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../source.hpp"
#include "downloader.hpp"
#include "error.hpp"

namespace untold::remote {

struct range_options {
  /// Bytes fetched by open(); match stream_options::initial_read.
  std::uint64_t initial_read = 64 * 1024;
  /// Keep fetched ranges in the downloader's disk cache.
  bool use_cache = true;
  /// Largest single range read() fetches (io_read_failed beyond).
  std::uint64_t max_range_bytes = std::uint64_t{1} << 30;
};

namespace detail {

struct content_range {
  std::uint64_t first = 0, last = 0, total = 0;
};

/// "bytes <first>-<last>/<total>"; nullopt for anything else (incl. "*").
[[nodiscard]] inline std::optional<content_range> parse_content_range(std::string_view v) {
  if (!v.starts_with("bytes ")) return std::nullopt;
  v.remove_prefix(6);
  const std::size_t dash = v.find('-');
  const std::size_t slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) return std::nullopt;
  const auto first = parse_u64(trim(v.substr(0, dash)));
  const auto last = parse_u64(trim(v.substr(dash + 1, slash - dash - 1)));
  const auto total = parse_u64(trim(v.substr(slash + 1)));
  if (!first || !last || !total || *first > *last || *last >= *total) return std::nullopt;
  return content_range{*first, *last, *total};
}

[[nodiscard]] inline bool is_strong_etag(std::string_view etag) noexcept {
  return etag.size() >= 2 && etag.front() == '"' && etag.back() == '"';
}

}  // namespace detail

class https_range_source final : public range_source {
 public:
  /// One Range request for the first initial_read bytes (see above).
  [[nodiscard]] static result<https_range_source> open(downloader& dl, std::string url,
                                                       const range_options& options = {}) {
    UNTOLD_REMOTE_TRY(require_https(url));  // before any network I/O
    auto s = std::make_unique<state>(dl, std::move(url), options);
    const std::uint64_t want = std::max<std::uint64_t>(1, options.initial_read);
    const std::string prefix_key = s->url + "\n#prefix:" + std::to_string(want);
    std::optional<cache_entry> cached;
    std::optional<std::vector<std::byte>> cached_bytes;
    if (options.use_cache) {
      cached = dl.cache().lookup(prefix_key);
      if (cached) cached_bytes = dl.cache().read(prefix_key);
      if (!cached_bytes || cached_bytes->size() != cached->size || !detail::is_strong_etag(cached->etag)) cached.reset();
    }
    http_request req;
    req.url = s->url;
    req.headers.push_back("Range: bytes=0-" + std::to_string(want - 1));
    req.accept_status = {206, 200};
    req.no_retry_status = {416};
    req.max_body = want;  // a 200 larger than the prefix means no range support
    if (cached) {
      req.headers.push_back("If-None-Match: " + cached->etag);
      req.accept_status.push_back(304);
    }
    auto r = s->send(std::move(req));
    if (!r) {
      if (r.error().code == remote_errc::too_large)
        return make_error(remote_errc::range_unsupported, "200 without Range support: " + s->url);
      return r.error();
    }
    if (r->status == 304) {
      s->etag = cached->etag;
      s->size = cached->resource_size;
      s->prefix = std::move(*cached_bytes);
      ++s->cache_hits;
    } else if (r->status == 200) {  // the whole (small) file
      s->etag = r->etag;
      s->size = r->body.size();
      s->prefix = std::move(r->body);
    } else {
      const auto range = detail::parse_content_range(r->content_range);
      if (!range || range->first != 0 || range->last + 1 != std::min(want, range->total) ||
          r->body.size() != range->last + 1)
        return make_error(remote_errc::bad_response, "Content-Range \"" + r->content_range + "\": " + s->url);
      if (!detail::is_strong_etag(r->etag))
        return make_error(remote_errc::range_unsupported, "no strong ETag to pin the file with: " + s->url);
      s->etag = r->etag;
      s->size = range->total;
      s->prefix = std::move(r->body);
      if (options.use_cache)
        (void)dl.cache().store(prefix_key, s->prefix, {.etag = s->etag, .extension = "range", .resource_size = s->size});
    }
    if (s->size == 0) return make_error(remote_errc::bad_response, "empty file: " + s->url);
    if (options.use_cache) {  // a whole copy from fetch() with the same ETag serves every range
      const auto whole = dl.cache().lookup(s->url);
      if (whole && whole->etag == s->etag && whole->size == s->size) {
        // Only read(), never viewed: no mapping needed. A cache entry evicted
        // or rewritten meanwhile fails a read, then the network serves it.
        auto file = file_range_source::open(whole->path, file_access::pread);
        if (file && file->size() == s->size) s->whole.emplace(std::move(*file));
      }
    }
    return https_range_source(std::move(s));
  }

  https_range_source(https_range_source&&) noexcept = default;
  https_range_source& operator=(https_range_source&&) noexcept = default;
  https_range_source(const https_range_source&) = delete;
  https_range_source& operator=(const https_range_source&) = delete;
  ~https_range_source() override = default;

  [[nodiscard]] std::uint64_t size() const override { return s_->size; }

  /// See range_source::read and the top of this file.
  [[nodiscard]] untold::status read(std::uint64_t offset, mutable_byte_span out) override {
    std::lock_guard lock(s_->mutex);
    if (auto e = untold::detail::check_read_range(offset, out.size(), s_->size)) return *e;
    if (out.empty()) return {};
    if (offset + out.size() <= s_->prefix.size()) {
      std::memcpy(out.data(), s_->prefix.data() + offset, out.size());
      return {};
    }
    if (s_->whole) {
      if (s_->whole->read(offset, out)) {
        ++s_->cache_hits;
        return {};
      }
      s_->whole.reset();  // evicted or replaced meanwhile: go to the network
    }
    if (out.size() > s_->options.max_range_bytes) return fail(make_error(remote_errc::too_large, s_->url));
    const std::string key = s_->url + "\n" + s_->etag + "\n" + std::to_string(offset) + "+" + std::to_string(out.size());
    if (s_->options.use_cache) {
      if (auto bytes = s_->dl->cache().read(key); bytes && bytes->size() == out.size()) {
        std::memcpy(out.data(), bytes->data(), out.size());
        ++s_->cache_hits;
        return {};
      }
    }
    const std::uint64_t last = offset + out.size() - 1;
    http_request req;
    req.url = s_->url;
    req.headers.push_back("Range: bytes=" + std::to_string(offset) + "-" + std::to_string(last));
    if (!s_->etag.empty()) req.headers.push_back("If-Range: " + s_->etag);
    req.accept_status = {206};
    req.no_retry_status = {200, 416};
    req.max_body = out.size();
    auto r = s_->send(std::move(req), [this, offset, last](const http_response& resp) { return judge(resp, offset, last); });
    if (!r) return fail(r.error());
    std::memcpy(out.data(), r->body.data(), out.size());
    if (s_->options.use_cache)
      (void)s_->dl->cache().store(key, r->body, {.etag = s_->etag, .extension = "range", .resource_size = s_->size});
    return {};
  }

  [[nodiscard]] const std::string& url() const noexcept { return s_->url; }
  /// The ETag every range is pinned to (If-Range).
  [[nodiscard]] const std::string& etag() const noexcept { return s_->etag; }
  /// HTTP requests this source sent (open's included), and body bytes received.
  [[nodiscard]] std::uint64_t requests() const noexcept { return s_->requests; }
  [[nodiscard]] std::uint64_t bytes_fetched() const noexcept { return s_->bytes_fetched; }
  /// Reads (and open's prefix) served by the disk cache.
  [[nodiscard]] std::uint64_t cache_hits() const noexcept { return s_->cache_hits; }
  /// The full error behind the last failed read().
  [[nodiscard]] const error& last_error() const noexcept { return s_->last_error; }

 private:
  struct state {
    state(downloader& d, std::string u, const range_options& o) : dl(&d), url(std::move(u)), options(o) {}

    result<http_response> send(http_request req, const std::function<attempt_verdict(const http_response&)>& judge = {}) {
      auto r = dl->transfer(std::move(req), std::chrono::steady_clock::now() + dl->options().resource_timeout, judge);
      if (r) {
        requests += r->attempts;
        bytes_fetched += r->body_bytes;
      } else {
        requests += r.error().attempts;
      }
      return r;
    }

    downloader* dl;
    std::string url;
    range_options options;
    std::mutex mutex;
    std::string etag;
    std::uint64_t size = 0;
    std::vector<std::byte> prefix;
    std::optional<file_range_source> whole;
    std::uint64_t requests = 0, bytes_fetched = 0, cache_hits = 0;
    error last_error;
  };

  explicit https_range_source(std::unique_ptr<state> s) noexcept : s_(std::move(s)) {}

  // A 206 must be exactly the asked range of the pinned version: it carries
  // the pinned strong ETag (a 206 without one cannot prove its version: a
  // server or cache that honours Range but not If-Range may be serving a
  // newer file) and the pinned total size.
  attempt_verdict judge(const http_response& r, std::uint64_t first, std::uint64_t last) const {
    if (r.etag != s_->etag)
      return {make_error(remote_errc::changed_on_server,
                         "206 ETag " + (r.etag.empty() ? std::string("(none)") : r.etag) + " != pinned " + s_->etag),
              false};
    const auto range = detail::parse_content_range(r.content_range);
    if (!range || range->first != first || range->last != last || r.body.size() != last - first + 1)
      return {make_error(remote_errc::bad_response, "Content-Range \"" + r.content_range + "\""), false};
    if (range->total != s_->size)
      return {make_error(remote_errc::changed_on_server, "size " + std::to_string(range->total)), false};
    return {};
  }

  untold::error fail(error e) {
    // 200 or 416 to an If-Range request: the file is not the pinned version any more.
    if (e.code == remote_errc::http_status && (e.http_status == 200 || e.http_status == 416))
      e.code = remote_errc::changed_on_server;
    s_->last_error = std::move(e);
    return s_->last_error.to_core();
  }

  std::unique_ptr<state> s_;
};

}  // namespace untold::remote
