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

// X(layer, name, id, message). One table; the enum and its accessors
// (name(), rule_id(), message()) come from the mechanism every error enum
// uses (detail/error_enum.hpp).
#define UNTOLD_REMOTE_ERROR_TABLE(X)                                                                             \
  X(remote, ok, "E-REMOTE-OK", "no error")                                                                               \
  X(remote, insecure_scheme, "E-REMOTE-INSECURE", "plain http:// is refused (before any network I/O); use https://")    \
  X(remote, unsupported_scheme, "E-REMOTE-SCHEME", "only https:// URLs can be downloaded")                              \
  X(remote, bad_url, "E-REMOTE-URL", "the URL is malformed")                                                             \
  X(remote, path_escapes, "E-REMOTE-ESCAPE",                                                                             \
    "a relative path escapes its base (.., an absolute path, another scheme or host)")                          \
  X(remote, http_status, "E-REMOTE-HTTP", "the server answered with an error status")                                   \
  X(remote, timeout, "E-REMOTE-TIMEOUT", "the request or resource timeout expired")                                     \
  X(remote, tls_failed, "E-REMOTE-TLS", "the server certificate is not trusted (or the CA bundle is unusable)")         \
  X(remote, transfer_failed, "E-REMOTE-TRANSFER", "the connection failed, was reset or closed early")                  \
  X(remote, truncated_body, "E-REMOTE-TRUNCATED", "the response body ended before its declared length")                 \
  X(remote, changed_on_server, "E-REMOTE-CHANGED",                                                                       \
    "the resource changed on the server while it was being streamed (If-Range did not match)")                  \
  X(remote, range_unsupported, "E-REMOTE-RANGE",                                                                         \
    "the server did not answer a byte-range request with a strong ETag and a matching 206")                     \
  X(remote, bad_response, "E-REMOTE-RESPONSE", "the server's response is malformed or inconsistent")                    \
  X(remote, invalid_asset, "E-REMOTE-INVALID", "the downloaded .untold file failed validation")                         \
  X(remote, cache_io, "E-REMOTE-CACHE", "the disk cache could not be read or written")                                  \
  X(remote, bad_manifest, "E-REMOTE-MANIFEST", "the tile manifest is not valid JSON or a field is missing or mistyped") \
  X(remote, too_large, "E-REMOTE-TOO-LARGE", "the response is larger than the configured limit")                        \
  X(remote, shutting_down, "E-REMOTE-SHUTDOWN", "the downloader is shutting down")                                       \
  X(remote, transport_failed, "E-REMOTE-CURL", "libcurl could not be set up for the request")

UNTOLD_DEFINE_ERROR_ENUM(remote_errc, UNTOLD_REMOTE_ERROR_TABLE)

struct error {
  remote_errc code = remote_errc::ok;
  long http_status = 0;       // last HTTP status seen, 0 = none
  int curl_code = 0;          // last CURLcode, 0 = none
  std::uint32_t attempts = 0; // network attempts made, 0 = none (refused early)
  untold::error core{};       // set for invalid_asset (and cache I/O mapped from the core)
  std::string detail{};       // URL, JSON field, OS call, libcurl's text

  [[nodiscard]] constexpr std::string_view name() const noexcept { return remote::name(code); }
  [[nodiscard]] constexpr std::string_view id() const noexcept { return remote::rule_id(code); }
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
