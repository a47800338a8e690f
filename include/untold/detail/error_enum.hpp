// untold/detail/error_enum.hpp - the one mechanism that turns a rule table
// into an error enum and its accessors.
//
// A table is an X-macro whose rows are X(family, name, id, message).
// UNTOLD_DEFINE_ERROR_ENUM(Enum, TABLE) declares `enum class Enum` with one
// value per row and the constexpr accessors name(Enum), rule_id(Enum) and
// message(Enum). untold::errc (error.hpp, tables in rules/) and
// untold::remote::remote_errc (remote/error.hpp) are both made by it.
// Only macros here.
#pragma once

#include <cstdint>
#include <string_view>

#define UNTOLD_DETAIL_ERROR_ENUM_VALUE(family, n, id, msg) n,
#define UNTOLD_DETAIL_ERROR_NAME_CASE(family, n, id, msg) \
  case enum_type::n:                                        \
    return #n;
#define UNTOLD_DETAIL_ERROR_ID_CASE(family, n, id, msg) \
  case enum_type::n:                                      \
    return id;
#define UNTOLD_DETAIL_ERROR_MESSAGE_CASE(family, n, id, msg) \
  case enum_type::n:                                           \
    return msg;

// name(): the enumerator's name (a NUL-terminated literal); rule_id(): the
// stable id (R-..., U3D-..., E-REMOTE-...); message(): one line for people.
#define UNTOLD_DEFINE_ERROR_ENUM(Enum, TABLE)                                   \
  enum class Enum : std::uint16_t { TABLE(UNTOLD_DETAIL_ERROR_ENUM_VALUE) };     \
  [[nodiscard]] constexpr std::string_view name(Enum e) noexcept {              \
    using enum_type = Enum;                                                     \
    switch (e) { TABLE(UNTOLD_DETAIL_ERROR_NAME_CASE) }                         \
    return "unknown";                                                           \
  }                                                                             \
  [[nodiscard]] constexpr std::string_view rule_id(Enum e) noexcept {           \
    using enum_type = Enum;                                                     \
    switch (e) { TABLE(UNTOLD_DETAIL_ERROR_ID_CASE) }                           \
    return "E-UNKNOWN";                                                         \
  }                                                                             \
  [[nodiscard]] constexpr std::string_view message(Enum e) noexcept {           \
    using enum_type = Enum;                                                     \
    switch (e) { TABLE(UNTOLD_DETAIL_ERROR_MESSAGE_CASE) }                      \
    return "unknown error";                                                     \
  }
