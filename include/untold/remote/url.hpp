// untold/remote/url.hpp - the URL rules of the remote layer.
//
//   untold::remote::require_https("http://cdn/x.untold");        // insecure_scheme, no I/O
//   untold::remote::resolve_relative("https://cdn/x/scene.json", "tiles/t.untold");
//     // -> "https://cdn/x/tiles/t.untold"
//   untold::remote::resolve_relative("https://cdn/x/scene.json", "../y.untold");  // path_escapes
//
// A relative path from a manifest or a texture table may only go down from
// its base's directory: it is rejected (path_escapes) when it is empty, is
// absolute ('/', '\', a drive letter), names a scheme or a host ("x:",
// "//host"), has a ".." segment (also percent-encoded as %2e%2e), or holds
// a backslash or a control character. Spaces and other characters that a
// URL cannot carry are percent-encoded on the way into a URL; '%' is kept, so
// an already-encoded path stays as it is.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"

namespace untold::remote {

/// The parts of an absolute URL: scheme "://" authority path ["?" query] ["#" fragment].
struct url_parts {
  std::string scheme;     // lower case
  std::string authority;  // host[:port], may be empty for file://
  std::string path;       // starts with '/' or is empty
  std::string query;      // without '?'
  std::string fragment;   // without '#'
  bool has_query = false;
  bool has_fragment = false;
};

namespace detail {

[[nodiscard]] constexpr char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

[[nodiscard]] constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

[[nodiscard]] constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
[[nodiscard]] constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
[[nodiscard]] constexpr bool is_control(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

/// Length of a leading "scheme:" (without the ':'), 0 when there is none.
[[nodiscard]] constexpr std::size_t scheme_length(std::string_view s) noexcept {
  if (s.empty() || !is_alpha(s[0])) return 0;
  for (std::size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ':') return i;
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return 0;
  }
  return 0;
}

/// A path segment that is ".." once %2e / %2E are decoded.
[[nodiscard]] constexpr bool is_dot_dot(std::string_view seg) noexcept {
  std::size_t dots = 0;
  std::size_t i = 0;
  while (i < seg.size()) {
    if (seg[i] == '.') {
      ++i;
    } else if (seg[i] == '%' && i + 2 < seg.size() && seg[i + 1] == '2' && ascii_lower(seg[i + 2]) == 'e') {
      i += 3;
    } else {
      return false;
    }
    ++dots;
  }
  return dots == 2;
}

/// Percent-encodes the bytes a URL path/query cannot carry literally.
[[nodiscard]] inline std::string encode_for_url(std::string_view s) {
  constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    const bool keep = u > 0x20 && u < 0x7F && c != '"' && c != '<' && c != '>' && c != '\\' && c != '^' &&
                      c != '`' && c != '{' && c != '|' && c != '}';
    if (keep) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(hex[u >> 4]);
      out.push_back(hex[u & 0xF]);
    }
  }
  return out;
}

/// The clean segments of a relative path, or path_escapes.
[[nodiscard]] inline result<std::vector<std::string_view>> relative_segments(std::string_view path,
                                                                              std::string_view original) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    const std::string_view seg = path.substr(start, end - start);
    if (is_dot_dot(seg)) return make_error(remote_errc::path_escapes, std::string(original));
    if (!seg.empty() && seg != ".") segments.push_back(seg);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (segments.empty()) return make_error(remote_errc::path_escapes, std::string(original));
  return segments;
}

}  // namespace detail

/// Splits an absolute URL. bad_url when it has no scheme, holds control
/// characters or spaces, or (for https) has no host.
[[nodiscard]] inline result<url_parts> parse_url(std::string_view url) {
  for (const char c : url)
    if (detail::is_control(c) || c == ' ') return make_error(remote_errc::bad_url, std::string(url));
  const std::size_t scheme_len = detail::scheme_length(url);
  if (scheme_len == 0) return make_error(remote_errc::bad_url, std::string(url));
  url_parts p;
  for (std::size_t i = 0; i < scheme_len; ++i) p.scheme.push_back(detail::ascii_lower(url[i]));
  std::string_view rest = url.substr(scheme_len + 1);
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    const std::size_t end = rest.find_first_of("/?#");
    p.authority = std::string(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  }
  const std::size_t hash = rest.find('#');
  if (hash != std::string_view::npos) {
    p.fragment = std::string(rest.substr(hash + 1));
    p.has_fragment = true;
    rest = rest.substr(0, hash);
  }
  const std::size_t q = rest.find('?');
  if (q != std::string_view::npos) {
    p.query = std::string(rest.substr(q + 1));
    p.has_query = true;
    rest = rest.substr(0, q);
  }
  p.path = std::string(rest);
  if ((p.scheme == "https" || p.scheme == "http") &&
      (p.authority.empty() || p.authority.front() == ':' || p.authority.find('@') != std::string::npos))
    return make_error(remote_errc::bad_url, std::string(url));
  return p;
}

/// Whether `s` starts with "scheme:" (case-insensitive).
[[nodiscard]] constexpr bool has_scheme(std::string_view s, std::string_view scheme) noexcept {
  return s.size() > scheme.size() && s[scheme.size()] == ':' && detail::iequals(s.substr(0, scheme.size()), scheme);
}

/// ok for a well-formed https:// URL; insecure_scheme for http:// (the
/// caller must not touch the network); unsupported_scheme for any other
/// scheme; bad_url when malformed. Pure string work.
[[nodiscard]] inline status require_https(std::string_view url) {
  if (has_scheme(url, "http")) return make_error(remote_errc::insecure_scheme, std::string(url));
  if (!has_scheme(url, "https")) {
    return make_error(detail::scheme_length(url) != 0 ? remote_errc::unsupported_scheme : remote_errc::bad_url,
                      std::string(url));
  }
  auto parts = parse_url(url);
  if (!parts) return parts.error();
  return {};
}

/// The lower-case extension of the URL path's last segment ("untold",
/// "png"); empty when there is none or it is not short and alphanumeric.
[[nodiscard]] inline std::string url_extension(std::string_view url) {
  std::string_view path = url.substr(0, url.find_first_of("?#"));
  path = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  const std::size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == path.size() || path.size() - dot - 1 > 16) return {};
  std::string ext;
  for (const char c : path.substr(dot + 1)) {
    if (!detail::is_alpha(c) && !detail::is_digit(c)) return {};
    ext.push_back(detail::ascii_lower(c));
  }
  return ext;
}

/// Checks a relative path from a manifest or a texture table (rules at the
/// top of this file) and returns it cleaned: "./" and empty segments dropped.
[[nodiscard]] inline result<std::string> check_relative_path(std::string_view ref) {
  if (ref.empty() || ref.front() == '/') return make_error(remote_errc::path_escapes, std::string(ref));
  for (const char c : ref)
    if (detail::is_control(c) || c == '\\') return make_error(remote_errc::path_escapes, std::string(ref));
  // "x:..." before any '/', '?' or '#' names a scheme (or a drive letter).
  const std::size_t colon = ref.find(':');
  if (colon != std::string_view::npos && colon < ref.find_first_of("/?#"))
    return make_error(remote_errc::path_escapes, std::string(ref));
  const std::size_t tail = ref.find_first_of("?#");
  auto segments = detail::relative_segments(ref.substr(0, tail), ref);
  if (!segments) return segments.error();
  std::string out;
  for (const std::string_view seg : *segments) out.append(out.empty() ? "" : "/").append(seg);
  if (tail != std::string_view::npos) out.append(ref.substr(tail));
  return out;
}

/// Resolves `ref` against the directory of `base`, which is an absolute URL
/// (https://, file://, ...) or a local file path. The result never leaves
/// that directory (see check_relative_path); URLs get their path
/// percent-encoded where needed. Local results are lexically normal paths.
[[nodiscard]] inline result<std::string> resolve_relative(std::string_view base, std::string_view ref) {
  auto clean = check_relative_path(ref);
  if (!clean) return clean.error();
  if (detail::scheme_length(base) < 2) {  // no scheme (or a drive letter): a local path
    const std::filesystem::path dir = std::filesystem::path(std::string(base)).parent_path();
    return (dir / std::filesystem::path(*clean)).lexically_normal().generic_string();
  }
  auto parts = parse_url(base);
  if (!parts) return parts.error();
  const std::size_t last_slash = parts->path.rfind('/');
  const std::string dir = last_slash == std::string::npos ? "/" : parts->path.substr(0, last_slash + 1);
  std::string out = parts->scheme + "://" + parts->authority;
  if (dir.empty() || dir.front() != '/') out.push_back('/');
  out.append(dir).append(detail::encode_for_url(*clean));
  return out;
}

}  // namespace untold::remote
