// untold/budget.hpp - one memory, work and output budget per input.
//
// Each reader checks its own counts against the bytes it has; a budget bounds
// what those counts add up to across every stage a small input can reach:
// the reader's tree and decoded buffers, the converter's scene and the
// printer's text. One budget is made per input from untold::limits and the
// input's size (limits.hpp gives the formula and the defaults) and charged
// by every stage *before* it allocates or loops: so peak memory, work and
// output stay within a fixed multiple of the input's size plus the limits'
// constants, for every format (SECURITY.md, "The budget").
//
//   untold::budget b(options.limits, bytes.size());
//   UNTOLD_TRY(b.charge_memory(count * sizeof(node), "nodes", errc::udm_limit));
//   UNTOLD_TRY(b.charge_work(count, "array items", errc::udm_limit));
//
// Stages that run one after the other on the same input (read, convert,
// print) share one budget: options structs carry an optional `budget*`; a
// stage given none makes its own from its limits (budget::own_or_shared).
// A refusal is the caller's family's LIMITS rule (R-LIMITS, UDM-LIMITS,
// HM-LIMITS) with field = what was charged, value = the total asked for,
// limit = the cap. Safe for any values: every sum saturates.
#pragma once

#include <cstdint>

#include "error.hpp"
#include "limits.hpp"

namespace untold {

class budget {
 public:
  struct meter {
    std::uint64_t used = 0;
    std::uint64_t cap = 0;
  };

  /// The budget of one input of `input_bytes` bytes under `lim`.
  constexpr budget(const limits& lim, std::uint64_t input_bytes) noexcept
      : memory_{0, affine(lim.memory_per_input_byte, input_bytes, lim.memory_floor)},
        work_{0, affine(lim.work_per_input_byte, input_bytes, lim.work_floor)},
        output_{0, affine(lim.output_per_input_byte, input_bytes, lim.output_floor)} {}

  /// Bytes about to be held (allocated, decoded, copied into a tree).
  [[nodiscard]] status charge_memory(std::uint64_t bytes, const char* what, errc over) noexcept {
    return charge(memory_, bytes, what, over);
  }
  /// `count` items of `bytes_each` bytes: work += count, memory += count x bytes_each.
  [[nodiscard]] status charge_items(std::uint64_t count, std::uint64_t bytes_each, const char* what,
                                              errc over) noexcept {
    UNTOLD_TRY(charge(work_, count, what, over));
    return charge(memory_, product(count, bytes_each), what, over);
  }
  /// Items about to be visited, whether or not they take memory.
  [[nodiscard]] status charge_work(std::uint64_t items, const char* what, errc over) noexcept {
    return charge(work_, items, what, over);
  }
  /// Bytes about to be written by a converter or printer.
  [[nodiscard]] status charge_output(std::uint64_t bytes, const char* what, errc over) noexcept {
    return charge(output_, bytes, what, over);
  }
  /// Memory given back (a scratch buffer freed): later charges may use it.
  constexpr void release_memory(std::uint64_t bytes) noexcept {
    memory_.used = bytes < memory_.used ? memory_.used - bytes : 0;
  }

  [[nodiscard]] constexpr const meter& memory() const noexcept { return memory_; }
  [[nodiscard]] constexpr const meter& work() const noexcept { return work_; }
  [[nodiscard]] constexpr const meter& output() const noexcept { return output_; }

  /// `shared` when the caller passed one (stages share their input's
  /// budget), else `own`: the form every options struct with a `budget*` uses.
  [[nodiscard]] static constexpr budget& own_or_shared(budget* shared, budget& own) noexcept {
    return shared != nullptr ? *shared : own;
  }

  /// Saturating a x b and a + b: a budget never wraps.
  [[nodiscard]] static constexpr std::uint64_t product(std::uint64_t a, std::uint64_t b) noexcept {
    return (b != 0 && a > ~std::uint64_t{0} / b) ? ~std::uint64_t{0} : a * b;
  }
  [[nodiscard]] static constexpr std::uint64_t sum(std::uint64_t a, std::uint64_t b) noexcept {
    return a > ~std::uint64_t{0} - b ? ~std::uint64_t{0} : a + b;
  }

 private:
  [[nodiscard]] static constexpr std::uint64_t affine(std::uint64_t rate, std::uint64_t n,
                                                      std::uint64_t floor) noexcept {
    return sum(product(rate, n), floor);
  }
  [[nodiscard]] static status charge(meter& m, std::uint64_t amount, const char* what, errc over) noexcept {
    const std::uint64_t total = sum(m.used, amount);
    if (total > m.cap) return make_error(over).at_field(what).with_value(total).with_limit(m.cap);
    m.used = total;
    return {};
  }

  meter memory_;
  meter work_;
  meter output_;
};

}  // namespace untold
