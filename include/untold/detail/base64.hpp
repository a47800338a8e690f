// untold/detail/base64.hpp - standard base64 (RFC 4648 section 4, the
// '+' '/' alphabet), for UDM ASCII blobs and glTF data URIs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../bytes.hpp"

namespace untold::detail {

inline constexpr char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends the padded base64 of `in` to `out`.
inline void base64_encode(std::string& out, byte_span in) {
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t v = static_cast<std::uint32_t>(in[i]) << 16 | static_cast<std::uint32_t>(in[i + 1]) << 8 |
                            static_cast<std::uint32_t>(in[i + 2]);
    out.push_back(base64_alphabet[v >> 18]);
    out.push_back(base64_alphabet[(v >> 12) & 63]);
    out.push_back(base64_alphabet[(v >> 6) & 63]);
    out.push_back(base64_alphabet[v & 63]);
  }
  if (const std::size_t rest = in.size() - i; rest != 0) {
    std::uint32_t v = static_cast<std::uint32_t>(in[i]) << 16;
    if (rest == 2) v |= static_cast<std::uint32_t>(in[i + 1]) << 8;
    out.push_back(base64_alphabet[v >> 18]);
    out.push_back(base64_alphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? base64_alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
}

/// Appends the bytes of the standard base64 text `in` (padding optional) to
/// `out`; false on any other character or a length no encoding has. Safe on
/// untrusted input: linear, and it reserves at most 3/4 of in.size() bytes.
inline bool base64_decode(std::string_view in, std::vector<std::byte>& out) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return false;
  out.reserve(out.size() + in.size() / 4 * 3 + 2);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else return false;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::byte>((acc >> bits) & 0xFFu));
    }
  }
  return true;
}

}  // namespace untold::detail
