// A downstream program: writes a one-triangle tile with untold and reads it back.
#include <untold/untold.hpp>

#include <cstdio>
#include <vector>

int main() {
  const float positions[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  std::vector<std::byte> vertices(3 * 32);
  for (int v = 0; v < 3; ++v)
    for (int k = 0; k < 3; ++k) untold::store_le_unchecked<float>(vertices.data() + 32 * v + 4 * k, positions[v][k]);
  const std::vector<std::uint32_t> indices = {0, 1, 2};
  untold::builder b;
  const auto e = b.add_entity({.name = "consumer"});
  b.add_mesh({.entity = e, .name = "tri", .vertices = vertices, .indices = indices});
  auto file = b.finish();
  if (!file) return 2;
  auto a = untold::open(*file, {.deep_checks = true});
  if (!a) {
    std::printf("%s\n", a.error().describe().c_str());
    return 3;
  }
  std::printf("consumer ok: %zu bytes, mesh '%.*s'\n", file->size(),
              static_cast<int>(a->string(a->meshes()[0].mesh_name_offset).size()),
              a->string(a->meshes()[0].mesh_name_offset).data());
  return 0;
}
