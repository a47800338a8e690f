// fuzz_ranges: byte-range loading (streamed_asset over a memory_range_source)
// on arbitrary bytes, with several first-read sizes. Properties:
//   - every planned range lies inside the file, every load stays inside it;
//   - open + load_all accepts exactly when untold::open with the same options
//     accepts and untold::verify_all then passes (load_all verifies every
//     block digest, which a lazy untold::open leaves for first access; the
//     contentHash only where open checks it: with integrity::full, checked
//     here too, or in a file without block digests), and then every payload,
//     record and mesh equals untold::open's;
//   - a mesh loaded on its own (load_mesh, and load_mesh_into caller memory)
//     equals untold::open's bytes for it, and loads whenever that reference
//     accepts the file (a lazy open may accept a file whose unread vertex
//     blocks were altered; the range load verifies them);
//   - a partly loaded asset is safe to query (empty spans, no crash).
#include "traverse.hpp"

#include <untold/ranges.hpp>

namespace {

using untold_fuzz::die;
using untold_fuzz::same_bytes;

void check_ranges(const std::vector<untold::byte_range>& ranges, std::uint64_t file_size) {
  for (const auto& r : ranges)
    if (!untold::checked_range(r.offset, r.size, 1, file_size)) die("a planned range is outside the file");
}

// `whole`: untold::open with `options`; `verified`: whether it accepted and
// every block digest it left for first access verifies too.
void run(untold::byte_span file, const untold::open_options& options, std::uint64_t initial_read,
         const untold::result<untold::asset>& whole, bool verified) {
  untold::memory_range_source source(file);
  auto s = untold::streamed_asset::open(source, {.open = options, .initial_read = initial_read});
  if (s && source.bytes_served() != s->bytes_read()) die("bytes_read differs from what the source served");
  if (!s) {
    const std::string_view id = s.error().rule_id();
    if (!(id.starts_with("R-") || id.starts_with("E-"))) die("streamed rejection without a rule id");
    if (whole) die("streamed open rejected a file untold::open accepts: " + s.error().describe());
    return;
  }
  const untold::asset& m = s->metadata();
  if (whole) {
    if (!untold_fuzz::same_record(m.header(), whole->header())) die("streamed header differs");
    if (!std::equal(m.chunks().begin(), m.chunks().end(), whole->chunks().begin(), whole->chunks().end()))
      die("streamed chunk table differs");
    for (std::uint32_t row = 0; row < m.chunks().size(); ++row)
      if (m.is_loaded(row) && !same_bytes(m.payload(row), whole->payload(row))) die("streamed metadata payload differs");
  }
  check_ranges(s->metadata_ranges(), file.size());
  (void)untold_fuzz::traverse(m, false);  // partly loaded: only safety matters here

  const std::uint32_t mesh_count = static_cast<std::uint32_t>(m.meshes().size());
  if (!s->ranges_for_mesh(mesh_count).empty()) die("ranges for a mesh past the end");
  if (s->load_mesh(mesh_count)) die("load_mesh past the end succeeded");
  for (std::uint32_t i = 0; i < mesh_count && i < 64; ++i) {
    check_ranges(s->ranges_for_mesh(i), file.size());
    auto mesh = s->load_mesh(i);
    if (!mesh) {
      if (verified) die("load_mesh failed on a file untold::open accepts: " + mesh.error().describe());
      continue;
    }
    {  // into caller memory: the same bytes
      const auto sizes = s->mesh_sizes(i);
      if (!sizes) die("mesh_sizes failed for a mesh load_mesh loaded");
      std::vector<std::byte> v(static_cast<std::size_t>((*sizes)[0])), x(static_cast<std::size_t>((*sizes)[1])),
          e(static_cast<std::size_t>((*sizes)[2]));
      if (!s->load_mesh_into(i, {v, x, e})) die("load_mesh_into failed where load_mesh succeeded");
      if (v != mesh->vertices || x != mesh->indices || e != mesh->edge_indices) die("load_mesh_into bytes differ");
    }
    if (whole) {
      const auto record = whole->meshes()[i];
      if (!same_bytes(mesh->vertices, whole->vertices(record)) || !same_bytes(mesh->indices, whole->indices(record)) ||
          !same_bytes(mesh->edge_indices, whole->edge_indices(record)))
        die("load_mesh bytes differ from untold::open");
    }
  }
  const auto all = s->load_all();
  if (static_cast<bool>(all) != verified)
    die(std::string("load_all and untold::open + verify_all disagree: ") +
        (all ? "accepted" : all.error().describe()) + " vs " + (verified ? "accepted" : "rejected"));
  if (!all) return;
  for (std::uint32_t row = 0; row < m.chunks().size(); ++row)
    if (!same_bytes(m.payload(row), whole->payload(row))) die("streamed payload differs after load_all");
  const std::string problem = untold_fuzz::traverse(m, options.deep_checks);
  if (!problem.empty()) die("streamed: " + problem);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const untold::byte_span file = untold_fuzz::as_span(data, size);
  const auto sets = untold_fuzz::option_sets();
  for (std::size_t set = 0; set < 3; ++set) {  // defaults, deep checks, small limits
    const auto whole = untold::open(file, sets[set]);
    const bool verified = whole && untold::verify_all(*whole).has_value();
    for (const std::uint64_t initial_read : {0, 244, 1000, 65536}) {
      run(file, sets[set], initial_read, whole, verified);
      if (set == 2) break;
    }
  }
  untold::open_options full = sets[0];  // the contentHash as well, even with block digests
  full.integrity = untold::integrity::full;
  const auto whole = untold::open(file, full);
  run(file, full, 0, whole, whole.has_value());
  return 0;
}
