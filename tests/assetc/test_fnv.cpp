// FNV-1a 64 references and the seed's naming rules.
#include "assetc_support.hpp"

#include <sstream>

using namespace hm_test;

TEST_CASE("fnv: golden vectors from tests/data/assetc/fnv_vectors.txt") {
  const bytes raw = read_data("assetc/fnv_vectors.txt");
  std::istringstream in(std::string(reinterpret_cast<const char*>(raw.data()), raw.size()));
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.find(' ');
    REQUIRE(space == 16);
    const std::uint64_t expected = std::stoull(line.substr(0, 16), nullptr, 16);
    const std::string text = line.substr(17);
    CHECK_MESSAGE(ua::hash_ref(text) == expected, "\"", text, "\"");
    ++checked;
  }
  CHECK(checked == 9);
  // The three published vectors, spelled out.
  CHECK(ua::hash_ref("") == 0xcbf29ce484222325ull);
  CHECK(ua::hash_ref("a") == 0xaf63dc4c8601ec8cull);
  CHECK(ua::hash_ref("court/tex_0") == 0xad44c4a2970495b9ull);
  // Lowercasing is ASCII only: a UTF-8 byte is hashed as is.
  CHECK(ua::hash_ref("\xC3\x89") != ua::hash_ref("\xC3\xA9"));
}

TEST_CASE("fnv: source, texture and material refs") {
  CHECK(ua::source_ref("assets/models/chair.glb") == "models/chair");
  CHECK(ua::source_ref("assets\\Models\\Chair.GLB") == "models/chair");
  CHECK(ua::source_ref("models/court.gltf") == "models/court");
  CHECK(ua::source_ref("models.v2/court") == "models.v2/court");
  CHECK(ua::source_ref("assets/.hidden") == ".hidden");
  CHECK(ua::texture_ref("models/chair", 3) == "models/chair/tex_3");
  CHECK(ua::hash_ref(ua::texture_ref("court", 0)) == 0xad44c4a2970495b9ull);
}

TEST_CASE("fnv: the seed's material-ref example") {
  // Source materials ["Wood", "", "Leather", "Wood"]; submeshes use 2 then 0.
  const std::string_view names[] = {"Wood", "", "Leather", "Wood"};
  CHECK(ua::material_leaf(names, 0) == "material_0");  // "wood" is not unique
  CHECK(ua::material_leaf(names, 1) == "material_1");  // empty
  CHECK(ua::material_leaf(names, 2) == "leather");
  CHECK(ua::material_leaf(names, 3) == "material_3");
  const std::uint32_t per_submesh[] = {2, 0, 2, 0xFFFFFFFFu};
  const ua::material_slots slots = ua::dense_material_slots(per_submesh);
  CHECK(slots.used == std::vector<std::uint32_t>{2, 0});
  CHECK(slots.slot_of_submesh == std::vector<std::uint32_t>{0, 1, 0, 0xFFFFFFFFu});
  const auto mtrl = ua::material_hashes(ua::source_ref("assets/models/chair.glb"), names, slots.used);
  // Hashes independently computed (tests/data/assetc/fnv_vectors.txt).
  CHECK(mtrl == std::vector<std::uint64_t>{0x5593b4deb18216f7ull, 0xbe1ae018fb5f8af0ull});
  CHECK(mtrl == std::vector<std::uint64_t>{ua::hash_ref("models/chair/leather"), ua::hash_ref("models/chair/material_0")});
}

TEST_CASE("fnv: names differing only in case are not unique") {
  const std::string_view names[] = {"Metal", "metal", "Glass"};
  CHECK(ua::material_leaf(names, 0) == "material_0");
  CHECK(ua::material_leaf(names, 2) == "glass");
}
