// untold/remote/error.hpp - errors of the remote layer, as values.
//
// Same shape as untold/error.hpp: one X-macro table gives every
// `remote_errc` its name, stable id (`E-REMOTE-...`) and message. A
// `remote::error` adds what the network said (HTTP status, libcurl code,
// attempts made), the core `untold::error` when a downloaded file failed
// validation, and a free-form detail (the URL, the JSON field, the OS call).
// `remote::result<T>` carries a value or such an error; nothing throws.
//
// Where the remote layer must speak the core's language (range_source::read
// returns untold::status), it reports errc::io_read_failed with
// context.field = the remote_errc name and context.value = the HTTP status
// (or the libcurl code); https_range_source::last_error() keeps the full error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "../error.hpp"

namespace untold::remote {

// X(name, id, message). One table; every accessor derives from it.
#define UNTOLD_REMOTE_ERROR_TABLE(X)                                                                             \
  X(ok, "E-REMOTE-OK", "no error")                                                                               \
  X(insecure_scheme, "E-REMOTE-INSECURE", "plain http:// is refused (before any network I/O); use https://")    \
  X(unsupported_scheme, "E-REMOTE-SCHEME", "only https:// URLs can be downloaded")                              \
  X(bad_url, "E-REMOTE-URL", "the URL is malformed")                                                             \
  X(path_escapes, "E-REMOTE-ESCAPE",                                                                             \
    "a relative path escapes its base (.., an absolute path, another scheme or host)")                          \
  X(http_status, "E-REMOTE-HTTP", "the server answered with an error status")                                   \
  X(timeout, "E-REMOTE-TIMEOUT", "the request or resource timeout expired")                                     \
  X(tls_failed, "E-REMOTE-TLS", "the server certificate is not trusted (or the CA bundle is unusable)")         \
  X(transfer_failed, "E-REMOTE-TRANSFER", "the connection failed, was reset or closed early")                  \
  X(truncated_body, "E-REMOTE-TRUNCATED", "the response body ended before its declared length")                 \
  X(changed_on_server, "E-REMOTE-CHANGED",                                                                       \
    "the resource changed on the server while it was being streamed (If-Range did not match)")                  \
  X(range_unsupported, "E-REMOTE-RANGE",                                                                         \
    "the server did not answer a byte-range request with a strong ETag and a matching 206")                     \
  X(bad_response, "E-REMOTE-RESPONSE", "the server's response is malformed or inconsistent")                    \
  X(invalid_asset, "E-REMOTE-INVALID", "the downloaded .untold file failed validation")                         \
  X(cache_io, "E-REMOTE-CACHE", "the disk cache could not be read or written")                                  \
  X(bad_manifest, "E-REMOTE-MANIFEST", "the tile manifest is not valid JSON or a field is missing or mistyped") \
  X(too_large, "E-REMOTE-TOO-LARGE", "the response is larger than the configured limit")                        \
  X(shutting_down, "E-REMOTE-SHUTDOWN", "the downloader is shutting down")                                       \
  X(transport_failed, "E-REMOTE-CURL", "libcurl could not be set up for the request")

enum class remote_errc : std::uint16_t {
#define UNTOLD_REMOTE_X(name, id, msg) name,
  UNTOLD_REMOTE_ERROR_TABLE(UNTOLD_REMOTE_X)
#undef UNTOLD_REMOTE_X
};

/// The enumerator's name, e.g. "insecure_scheme" (NUL-terminated literal).
[[nodiscard]] constexpr std::string_view name(remote_errc e) noexcept {
  switch (e) {
#define UNTOLD_REMOTE_X(n, id, msg) \
  case remote_errc::n:              \
    return #n;
    UNTOLD_REMOTE_ERROR_TABLE(UNTOLD_REMOTE_X)
#undef UNTOLD_REMOTE_X
  }
  return "unknown";
}

/// The stable id, e.g. "E-REMOTE-INSECURE".
[[nodiscard]] constexpr std::string_view error_id(remote_errc e) noexcept {
  switch (e) {
#define UNTOLD_REMOTE_X(n, id, msg) \
  case remote_errc::n:              \
    return id;
    UNTOLD_REMOTE_ERROR_TABLE(UNTOLD_REMOTE_X)
#undef UNTOLD_REMOTE_X
  }
  return "E-REMOTE-UNKNOWN";
}

/// A one-line human-readable message.
[[nodiscard]] constexpr std::string_view message(remote_errc e) noexcept {
  switch (e) {
#define UNTOLD_REMOTE_X(n, id, msg) \
  case remote_errc::n:              \
    return msg;
    UNTOLD_REMOTE_ERROR_TABLE(UNTOLD_REMOTE_X)
#undef UNTOLD_REMOTE_X
  }
  return "unknown error";
}

struct error {
  remote_errc code = remote_errc::ok;
  long http_status = 0;       // last HTTP status seen, 0 = none
  int curl_code = 0;          // last CURLcode, 0 = none
  std::uint32_t attempts = 0; // network attempts made, 0 = none (refused early)
  untold::error core{};       // set for invalid_asset (and cache I/O mapped from the core)
  std::string detail{};       // URL, JSON field, OS call, libcurl's text

  [[nodiscard]] constexpr std::string_view name() const noexcept { return remote::name(code); }
  [[nodiscard]] constexpr std::string_view id() const noexcept { return remote::error_id(code); }
  [[nodiscard]] constexpr std::string_view message() const noexcept { return remote::message(code); }

  /// "E-REMOTE-HTTP http_status: <message> (HTTP 404, attempts 3): https://..."
  [[nodiscard]] std::string describe() const {
    std::string s;
    s.append(id()).append(" ").append(name()).append(": ").append(message());
    std::string where;
    auto add = [&where](std::string_view label, const std::string& v) {
      where.append(where.empty() ? "" : ", ").append(label).append(" ").append(v);
    };
    if (http_status != 0) add("HTTP", std::to_string(http_status));
    if (curl_code != 0) add("curl", std::to_string(curl_code));
    if (attempts != 0) add("attempts", std::to_string(attempts));
    if (!where.empty()) s.append(" (").append(where).append(")");
    if (core.code != errc::ok) s.append(" [").append(core.describe()).append("]");
    if (!detail.empty()) s.append(": ").append(detail);
    return s;
  }

  /// The same failure in the core's terms: io_read_failed with field = this
  /// error's name and value = the HTTP status (or the libcurl code).
  [[nodiscard]] untold::error to_core() const noexcept {
    if (core.code != errc::ok) return core;
    error_context ctx;
    ctx.field = name().data();  // a NUL-terminated literal from the table
    ctx.value = static_cast<std::uint64_t>(http_status != 0 ? http_status : curl_code);
    ctx.has_value = http_status != 0 || curl_code != 0;
    return make_error(errc::io_read_failed, ctx);
  }
};

[[nodiscard]] inline error make_error(remote_errc code, std::string detail = {}) {
  error e;
  e.code = code;
  e.detail = std::move(detail);
  return e;
}

/// Either a T or a remote::error.
template <class T>
using result = untold::basic_result<T, remote::error>;

using status = result<void>;

}  // namespace untold::remote

/// Propagates the error of a remote::status / remote::result expression.
#define UNTOLD_REMOTE_TRY(expr)                                  \
  do {                                                           \
    if (auto untold_remote_try_ = (expr); !untold_remote_try_)   \
      return untold_remote_try_.error();                         \
  } while (false)
