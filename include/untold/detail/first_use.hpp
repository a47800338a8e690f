// untold/detail/first_use.hpp - numbering items in the order they are first
// used: how a converter compacts the vertices an index list (and its LODs)
// uses into a mesh of its own (assetc/import.hpp, convert/to_assetc.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace untold::detail {

class first_use_numbering {
 public:
  /// Items 0..items-1, none numbered yet. Allocates 4 bytes per item.
  explicit first_use_numbering(std::size_t items) : number_(items, unnumbered) {}

  /// `item`'s number: the next one when it is first seen. Precondition:
  /// item < items (the caller has checked its indices).
  std::uint32_t operator()(std::uint32_t item) {
    if (number_[item] == unnumbered) {
      number_[item] = static_cast<std::uint32_t>(order_.size());
      order_.push_back(item);
    }
    return number_[item];
  }

  /// The items numbered so far, by number.
  [[nodiscard]] const std::vector<std::uint32_t>& order() const noexcept { return order_; }

  /// Forgets the numbers given so far, in time linear in their count (not
  /// in the items), so one numbering serves many index lists.
  void clear() noexcept {
    for (const std::uint32_t item : order_) number_[item] = unnumbered;
    order_.clear();
  }

 private:
  static constexpr std::uint32_t unnumbered = 0xFFFFFFFFu;
  std::vector<std::uint32_t> number_;
  std::vector<std::uint32_t> order_;
};

}  // namespace untold::detail
