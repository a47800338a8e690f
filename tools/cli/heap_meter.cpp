// The tool's heap meter: counts the bytes held through operator new and
// records the peak, so the budget tests (tests/cli/test_budget.cpp) can
// assert that a command's peak heap stays within a multiple of its input's
// size plus the limits' constants, without timing anything.
//
// Always compiled into the `untold` executable (two relaxed atomic adds per
// allocation); it reports only when UNTOLD_HEAP_REPORT names a file: at exit
// that file gets one line, "peak_heap_bytes N". Sizes come from
// malloc_usable_size, so frees need no size bookkeeping. Memory that C
// libraries take with malloc directly (liblz4, libzstd) is not counted; the
// library decodes into buffers it allocates with new.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <malloc.h>

namespace {

std::atomic<std::size_t> held{0};
std::atomic<std::size_t> peak{0};

void note_allocation(void* p) noexcept {
  const std::size_t now = held.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) + malloc_usable_size(p);
  std::size_t seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

void* allocate(std::size_t size) noexcept {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p != nullptr) note_allocation(p);
  return p;
}

void* allocate_aligned(std::size_t size, std::align_val_t align) noexcept {
  const auto a = static_cast<std::size_t>(align);
  const std::size_t rounded = size == 0 ? a : (size + a - 1) / a * a;  // aligned_alloc wants a multiple
  void* p = std::aligned_alloc(a, rounded);
  if (p != nullptr) note_allocation(p);
  return p;
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  held.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

struct report_at_exit {
  ~report_at_exit() {
    const char* path = std::getenv("UNTOLD_HEAP_REPORT");
    if (path == nullptr || *path == '\0') return;
    if (std::FILE* f = std::fopen(path, "w")) {
      std::fprintf(f, "peak_heap_bytes %zu\n", peak.load());
      std::fclose(f);
    }
  }
} reporter;

}  // namespace

void* operator new(std::size_t size) {
  if (void* p = allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = allocate_aligned(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  if (void* p = allocate_aligned(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
