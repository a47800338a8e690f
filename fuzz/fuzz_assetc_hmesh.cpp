// fuzz_assetc_hmesh: untold::assetc::open_hmesh on arbitrary bytes at any
// alignment. Input: byte 0 = misalignment (0..15) of the copy, the rest is
// the file. Properties:
//   - nothing reads outside the bytes (sanitizers), whatever the alignment;
//   - every rejection carries an HM- rule id; deep-valid implies valid;
//   - every view of an opened file can be walked end to end;
//   - a deep-valid file written back by write_hmesh from its views reopens
//     with the same DESC and arrays, and writing that again is byte-identical.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <untold/assetc/hmesh.hpp>

#include "die.hpp"

namespace {

namespace ua = untold::assetc;

using untold_fuzz::die;

template <class V>
auto to_vector(const V& view) {
  return std::vector<typename V::value_type>(view.begin(), view.end());
}

std::uint64_t walk(const ua::hmesh& m) {
  std::uint64_t sum = 0;
  for (const auto& v : m.vertices()) sum += v.position[0] != 0 ? 1 : 0;
  for (std::size_t i = 0; i < m.indices().size(); ++i) sum += m.indices()[i];
  for (const auto& l : m.meshlets()) sum += l.vertex_count;
  for (const auto v : m.meshlet_vertices()) sum += v;
  for (const auto& t : m.meshlet_triangles()) sum += t.v[0];
  for (const auto& b : m.meshlet_bounds()) sum += b.radius > 0 ? 1 : 0;
  for (const auto h : m.materials()) sum += h & 1;
  for (std::size_t s = 0; s < m.submeshes().size(); ++s) {
    for (const ua::meshlet& l : m.submesh_meshlets(s)) {
      for (const auto v : m.meshlet_vertex_range(l)) sum += v;
      for (const auto& t : m.meshlet_triangle_range(l)) sum += t.v[2];
    }
    const auto idx = m.submesh_indices(s);
    for (std::size_t i = 0; i < idx.size(); ++i) sum += idx[i];
    for (const ua::mesh_lod l : m.lods(s))
      for (const auto v : m.lod_index_range(l)) sum += v;
  }
  for (const auto& s : m.skin()) sum += s.joints[0];
  for (const auto& j : m.skeleton()) sum += static_cast<std::uint32_t>(j.parent);
  for (std::size_t i = 0; i < m.chunks().size(); ++i) sum += m.payload(i).size();
  return sum;
}

std::vector<std::byte> rewrite(const ua::hmesh& m) {
  const auto meshlets = to_vector(m.meshlets());
  const auto mlvr = to_vector(m.meshlet_vertices());
  const auto mltr = to_vector(m.meshlet_triangles());
  const auto mlbn = to_vector(m.meshlet_bounds());
  const auto mats = to_vector(m.materials());
  const auto subs = to_vector(m.submeshes());
  const auto skin = to_vector(m.skin());
  const auto skel = to_vector(m.skeleton());
  // LODI without a usable LODT has no meaning the writer can express: dropped.
  const auto lodi = m.lod_count() == 0 ? std::vector<std::uint32_t>{} : to_vector(m.lod_indices());
  std::vector<std::uint32_t> idx;
  for (std::size_t i = 0; i < m.indices().size(); ++i) idx.push_back(m.indices()[i]);
  std::vector<ua::mesh_lod> lods;
  for (std::size_t s = 0; s < subs.size(); ++s)
    for (const ua::mesh_lod l : m.lods(s)) lods.push_back(l);
  const auto extras = ua::unknown_chunks(m);
  ua::hmesh_input in;
  in.vertices = m.vertices().bytes();
  in.indices = idx;
  in.index_width = m.desc().index_width;
  in.flags = m.desc().flags;
  in.bounds = m.bounds().value_or(ua::mesh_bounds{});
  in.meshlets = meshlets, in.meshlet_vertices = mlvr, in.meshlet_triangles = mltr;
  in.meshlet_bounds = mlbn;
  in.meshlet_max_vertices = m.desc().meshlet_max_vertices, in.meshlet_max_triangles = m.desc().meshlet_max_triangles;
  in.materials = mats, in.submeshes = subs, in.skin = skin, in.skeleton = skel;
  in.lod_indices = lodi, in.lod_count = m.lod_count(), in.lods = lods, in.extra_chunks = extras;
  auto out = ua::write_hmesh(in);
  if (!out) die("a deep-valid mesh did not write back: " + out.error().describe());
  return *out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t shift = data[0] % 16;
  std::vector<std::byte> buffer(size - 1 + shift);
  if (size > 1) std::memcpy(buffer.data() + shift, data + 1, size - 1);
  const untold::byte_span bytes = untold::byte_span(buffer).subspan(shift);

  ua::open_options small;
  small.limits.max_records = 1u << 16;
  auto plain = ua::open_hmesh(bytes, small);
  small.deep_checks = true;
  auto deep = ua::open_hmesh(bytes, small);
  for (const auto* r : {&plain, &deep})
    if (!*r && !r->error().rule_id().starts_with("HM-")) die("rejection without an HM- rule: " + r->error().describe());
  if (deep && !plain) die("deep-valid but not valid");
  if (!plain) return 0;
  volatile std::uint64_t sink = walk(*plain);
  (void)sink;
  if (!deep) return 0;
  if (plain->desc().meshlet_count > 0 && !plain->has(ua::chunk_id::mlbn)) return 0;  // the writer always emits MLBN
  const auto once = rewrite(*deep);
  auto reopened = ua::open_hmesh(once, {.deep_checks = true});
  if (!reopened) die("rewritten mesh does not reopen: " + reopened.error().describe());
  if (!(reopened->desc() == deep->desc())) die("DESC changed on rewrite");
  if (!std::equal(reopened->submeshes().begin(), reopened->submeshes().end(), deep->submeshes().begin(), deep->submeshes().end()))
    die("SUBM changed on rewrite");
  if (rewrite(*reopened) != once) die("writing is not idempotent");
  return 0;
}
