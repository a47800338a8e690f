// untold/detail/x86_cpu.hpp - which x86-64 CPUs get the library's 512-bit
// kernels (the vertex decode's avx512 path, the Urho3D SDBM's VNNI blocks):
// one rule for both.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace untold::detail {

/// Whether the CPU has AVX-512 F (and the OS saves the ZMM state: the
/// builtin checks) on a core that keeps its clock while 512-bit
/// instructions run. VBMI, which no kernel here uses, marks Ice Lake, Zen 4
/// and later; the Skylake-SP generation (Cascade Lake has VNNI) lowers the
/// clock, which would slow the code around a short kernel more than the
/// kernel gains. Checked once.
[[nodiscard]] inline bool x86_full_speed_avx512() noexcept {
  static const bool full_speed = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512vbmi") != 0;
  }();
  return full_speed;
}

}  // namespace untold::detail
#endif
