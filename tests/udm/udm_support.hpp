// Helpers for the UDM tests: fixture loading and hand-built binary UDM bytes
// (built field by field here, not by the library's writer, so the crafted
// files test the reader independently).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <untold/sink.hpp>
#include <untold/udm/reader.hpp>
#include <untold/udm/writer.hpp>

namespace udm_test {

using bytes = std::vector<std::byte>;

inline const char* const fixture_names[] = {"cube", "empty", "error", "rect_unlit"};

inline bytes load(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> d((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bytes out(d.size());
  std::memcpy(out.data(), d.data(), d.size());
  return out;
}

inline bytes fixture(std::string_view name) {
  return load(std::filesystem::path(UNTOLD_TEST_DATA_DIR) / "udm" / "models" / (std::string(name) + ".pmdl_b"));
}

/// A property: type byte + payload.
struct prop {
  std::uint8_t type = 0;
  bytes payload;
};

inline bytes u8s(std::initializer_list<int> v) {
  bytes out;
  for (int x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}

inline void put_string(untold::byte_sink& s, std::string_view str) {
  if (str.size() < 255) {
    s.put<std::uint8_t>(static_cast<std::uint8_t>(str.size()));
  } else {
    s.put<std::uint8_t>(255);
    s.put<std::uint32_t>(static_cast<std::uint32_t>(str.size()));
  }
  s.string(str);
}

/// An Element payload: u64 size (bytes after it, or `size_override`), u32
/// count, keys, values.
inline bytes element(const std::vector<std::pair<std::string, prop>>& children, std::uint64_t size_override = ~0ull) {
  bytes body;
  untold::byte_sink s(body);
  s.put<std::uint32_t>(static_cast<std::uint32_t>(children.size()));
  for (const auto& [k, v] : children) {
    s.put<std::uint8_t>(static_cast<std::uint8_t>(k.size()));
    s.string(k);
  }
  for (const auto& [k, v] : children) {
    s.put<std::uint8_t>(v.type);
    s.bytes(v.payload);
  }
  bytes out;
  untold::byte_sink o(out);
  o.put<std::uint64_t>(size_override == ~0ull ? body.size() : size_override);
  o.bytes(body);
  return out;
}

inline prop element_prop(const std::vector<std::pair<std::string, prop>>& children) { return {27, element(children)}; }

inline prop string_prop(std::string_view s) {
  prop p{1, {}};
  untold::byte_sink o(p.payload);
  put_string(o, s);
  return p;
}

inline prop u32_prop(std::uint32_t v) {
  prop p{8, {}};
  untold::byte_sink o(p.payload);
  o.put<std::uint32_t>(v);
  return p;
}

/// "UDMB", version, the root type byte (Element) and `root_payload`.
inline bytes file(const bytes& root_payload, std::uint32_t version = 2, std::uint8_t root_type = 27) {
  bytes out;
  untold::byte_sink o(out);
  o.string("UDMB");
  o.put<std::uint32_t>(version);
  o.put<std::uint8_t>(root_type);
  o.bytes(root_payload);
  return out;
}

/// A file whose root has the asset header and `data` as assetData.
inline bytes asset_file(const std::vector<std::pair<std::string, prop>>& data) {
  return file(element({{"assetData", element_prop(data)}, {"assetType", string_prop("TEST")}, {"assetVersion", u32_prop(1)}}));
}

inline untold::udm::open_options relaxed() {
  untold::udm::open_options o;
  o.require_asset_header = false;
  return o;
}

inline untold::errc parse_error(const bytes& f, const untold::udm::open_options& o = relaxed()) {
  auto d = untold::udm::open_document(f, o);
  if (d) return untold::errc::ok;
  return d.error().code;
}

inline bool same(const bytes& a, const bytes& b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }

namespace u = untold::udm;

/// A tree with every type, as values, in arrays, LZ4 arrays and structs.
inline u::property every_type_tree() {
  u::property data = u::make_element();
  data.add("nil", u::make_nil());
  data.add("string", u::make_string("hello"));
  data.add("utf8", u::make_string("h\xc3\xa9llo", u::type::utf8_string));
  data.add("int8", u::make_value<std::int8_t>(-7));
  data.add("uint8", u::make_value<std::uint8_t>(250));
  data.add("int16", u::make_value<std::int16_t>(-30000));
  data.add("uint16", u::make_value<std::uint16_t>(65000));
  data.add("int32", u::make_value<std::int32_t>(-2000000000));
  data.add("uint32", u::make_value<std::uint32_t>(4000000000u));
  data.add("int64", u::make_value<std::int64_t>(-9000000000000000000ll));
  data.add("uint64", u::make_value<std::uint64_t>(18000000000000000000ull));
  data.add("float", u::make_value<float>(0.1f));
  data.add("double", u::make_value<double>(1.0 / 3.0));
  data.add("bool", u::make_value<bool>(true));
  data.add("vec2", u::make_value(u::vec2{1.5f, -2.5f}));
  data.add("vec3", u::make_value(u::vec3{1, 2, 3}));
  data.add("vec4", u::make_value(u::vec4{1, 2, 3, 4}));
  data.add("quat", u::make_value(u::quat{0.1f, 0.2f, 0.3f, 0.9f}));
  data.add("ang", u::make_value(u::euler_angles{10, 20, 30}));
  data.add("srgba", u::make_value(u::srgba{255, 128, 54, 44}));
  data.add("hdr", u::make_value(u::hdr_color{800, 500, 12}));
  data.add("transform", u::make_value(u::transform{{6, 4, 7}, {0, 0, 0.7071f, 0.7071f}}));
  data.add("stransform", u::make_value(u::scaled_transform{{9, 6, 7}, {0, 0, 0, 1}, {4, 6, 3}}));
  u::mat4 m;
  std::iota(m.m.begin(), m.m.end(), 1.0f);
  data.add("mat4", u::make_value(m));
  u::mat3x4 m34;
  std::iota(m34.m.begin(), m34.m.end(), -5.0f);
  data.add("mat3x4", u::make_value(m34));
  const std::vector<std::byte> blob_bytes(1000, std::byte{0x5A});
  data.add("blob", u::make_blob(blob_bytes));
  data.add("lz4", u::make_blob_lz4(blob_bytes).value());
  u::property nested = u::make_element();
  nested.add("inner", u::make_element()).add("deepest", u::make_value<float>(5.0f));
  data.add("element", std::move(nested));
  data.add("ref", u::make_string("path/test/value", u::type::reference));
  u::struct_layout layout{{u::type::float32, u::type::vector3, u::type::int8, u::type::half},
                          {"f", "v", "i", "h"}};
  std::vector<std::byte> one(layout.size());
  u::store_value(one.data(), 5.0f);
  u::store_value(one.data() + 4, u::vec3{3, 3, 3});
  u::store_value(one.data() + 16, std::int8_t{2});
  u::store_value(one.data() + 17, u::half{0x3C00});
  data.add("struct", u::make_struct(layout, one));
  data.add("half", u::make_value(u::half{0x3555}));
  data.add("vec2i", u::make_value(u::vec2i{-1, 2}));
  data.add("vec3i", u::make_value(u::vec3i{-1, 2, -3}));
  data.add("vec4i", u::make_value(u::vec4i{-1, 2, -3, 4}));
  // Long strings: 254 (no escape), 255 and 300 (escape + u32).
  data.add("s254", u::make_string(std::string(254, 'a')));
  data.add("s255", u::make_string(std::string(255, 'b')));
  data.add("s300", u::make_string(std::string(300, 'c')));
  // Arrays: of every trivial type (3 values) and as ArrayLz4; empty ones.
  u::property arrays = u::make_element();
  u::property lz4_arrays = u::make_element();
  for (std::uint8_t t = 0; t < u::type_count; ++t) {
    const auto ty = static_cast<u::type>(t);
    if (!u::is_trivial(ty)) continue;
    u::property a;
    a.kind = u::type::array;
    a.value_type = ty;
    a.count = 3;
    a.bytes.resize(3 * u::size_of(ty));
    for (std::size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<std::byte>(i * 7 + t);
    if (ty == u::type::boolean) a.bytes = {std::byte{1}, std::byte{0}, std::byte{1}};
    lz4_arrays.add(std::string(u::ascii_name(ty)), u::compress_array(a).value());
    arrays.add(std::string(u::ascii_name(ty)), std::move(a));
  }
  data.add("arrays", std::move(arrays));
  data.add("lz4Arrays", std::move(lz4_arrays));
  data.add("emptyArray", u::make_array<float>({}));
  data.add("emptyLz4", u::compress_array(u::make_array<float>({})).value());
  data.add("emptyElements", u::make_array_of(u::type::element, {}));
  data.add("emptyLz4Elements", u::compress_array(u::make_array_of(u::type::element, {})).value());
  std::vector<u::property> strings{u::make_string("a"), u::make_string(""), u::make_string(std::string(400, 'z'))};
  data.add("strings", u::make_array_of(u::type::string, strings));
  data.add("lz4Strings", u::compress_array(u::make_array_of(u::type::string, strings)).value());
  std::vector<u::property> elements;
  for (int i = 0; i < 3; ++i) {
    u::property e = u::make_element();
    e.add("i", u::make_value<std::int32_t>(i));
    e.add("sub", u::make_element()).add("name", u::make_string("n" + std::to_string(i)));
    elements.push_back(std::move(e));
  }
  data.add("elements", u::make_array_of(u::type::element, elements));
  data.add("lz4Elements", u::compress_array(u::make_array_of(u::type::element, elements)).value());
  std::vector<std::byte> structs(4 * layout.size(), std::byte{0x11});
  data.add("structs", u::make_struct_array(layout, 4, structs));
  data.add("lz4Structs", u::compress_array(u::make_struct_array(layout, 4, structs)).value());
  data.add("blobs", u::make_array_of(u::type::blob, {u::make_blob(blob_bytes), u::make_blob({})}));
  data.add("utf8s", u::make_array_of(u::type::utf8_string, {u::make_string("x", u::type::utf8_string)}));
  data.add("refs", u::make_array_of(u::type::reference, {u::make_string("a/b", u::type::reference)}));
  data.add("blobLz4s", u::make_array_of(u::type::blob_lz4, {u::make_blob_lz4(blob_bytes).value()}));
  data.add("arrayOfArrays", u::make_array_of(u::type::array, {u::make_array<std::int32_t>(std::vector<std::int32_t>{1, 2}),
                                                                 u::make_array<float>({})}));
  data.add("arrayOfLz4Arrays",
           u::make_array_of(u::type::array_lz4, {u::compress_array(u::make_array<std::int32_t>(std::vector<std::int32_t>{1, 2})).value()}));
  return u::make_asset("TEST", 3, std::move(data));
}

/// A skinned PMDL built with the writer: 2 groups, a 3-bone chain stored
/// out of index order, uint32 indices, two extra uv sets.
inline u::property skinned_model() {
  u::struct_layout vl{{u::type::vector3, u::type::vector2, u::type::vector3, u::type::vector4}, {"pos", "uv", "n", "t"}};
  std::vector<std::byte> verts(4 * vl.size());
  const u::vec3 pos[4] = {{0, 0, 0}, {40, 0, 0}, {0, 40, 0}, {40, 40, 0}};
  for (int i = 0; i < 4; ++i) {
    std::byte* v = verts.data() + i * vl.size();
    u::store_value(v, pos[i]);
    u::store_value(v + 12, u::vec2{pos[i].x / 40, pos[i].y / 40});
    u::store_value(v + 20, u::vec3{0, 0, 1});
    u::store_value(v + 32, u::vec4{1, 0, 0, -1});
  }
  u::struct_layout wl{{u::type::vector4i, u::type::vector4}, {"id", "w"}};
  std::vector<std::byte> weights(4 * wl.size());
  for (int i = 0; i < 4; ++i) {
    u::store_value(weights.data() + i * wl.size(), u::vec4i{i % 3, 2, -1, -1});
    u::store_value(weights.data() + i * wl.size() + 16, u::vec4{0.75f, 0.25f, 0, 0});
  }
  const std::vector<std::uint32_t> idx{0, 1, 2, 2, 1, 3};
  const std::vector<u::vec2> uvs(4, u::vec2{0.5f, 0.25f});
  auto sub_mesh = [&](std::uint32_t skin_material) {
    u::property d = u::make_element();
    d.add("vertices", u::compress_array(u::make_struct_array(vl, 4, verts)).value());
    d.add("indices", u::compress_array(u::make_array<std::uint32_t>(idx)).value());
    d.add("vertexWeights", u::make_struct_array(wl, 4, weights));
    u::property sets = u::make_element();
    sets.add("lightmap", u::make_array<u::vec2>(uvs));
    sets.add("detail", u::make_array<u::vec2>(uvs));
    d.add("uvSets", std::move(sets));
    d.add("geometryType", u::make_string("Triangles"));
    d.add("skinMaterialIndex", u::make_value<std::uint32_t>(skin_material));
    d.add("pose", u::make_value(u::scaled_transform{}));
    return u::make_asset("PMESH", 1, std::move(d));
  };
  auto group = [&](std::uint32_t skin_material) {
    u::property g = u::make_element();
    g.add("index", u::make_value<std::uint32_t>(0));
    u::property mesh = u::make_element();
    mesh.add("subMeshes", u::make_array_of(u::type::element, {sub_mesh(skin_material)}));
    g.add("meshes", u::make_array_of(u::type::element, {std::move(mesh)}));
    return g;
  };
  // Bones: root (index 2) -> arm (index 0) -> hand (index 1), each 40 units along x.
  auto bone = [](std::uint32_t index, float x) {
    u::property b = u::make_element();
    b.add("index", u::make_value(index));
    b.add("pose", u::make_value(u::scaled_transform{{x, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}}));
    return b;
  };
  u::property hand = bone(1, 40);
  u::property arm = bone(0, 40);
  arm.add("children", u::make_element()).add("hand", std::move(hand));
  u::property root = bone(2, 0);
  root.add("children", u::make_element()).add("arm", std::move(arm));
  u::property bones = u::make_element();
  bones.add("root", std::move(root));
  u::property skel_data = u::make_element();
  skel_data.add("bones", std::move(bones));

  u::property data = u::make_element();
  data.add("materials", u::make_array_of(u::type::string, {u::make_string("skin"), u::make_string("metal")}));
  u::property skin = u::make_element();
  skin.add("materials", u::make_array<std::uint32_t>(std::vector<std::uint32_t>{1, 0}));
  data.add("skins", u::make_array_of(u::type::element, {std::move(skin)}));
  data.add("skeleton", u::make_asset("PSKEL", 1, std::move(skel_data)));
  // One clip: arm position (linear), hand rotation (step), one channel with no bone target.
  auto channel = [](std::string path, std::uint8_t interpolation, u::property values) {
    u::property c = u::make_element();
    c.add("interpolation", u::make_value(interpolation));
    c.add("targetPath", u::make_string(path));
    c.add("times", u::compress_array(u::make_array<float>(std::vector<float>{0.0f, 0.5f})).value());
    c.add("values", u::compress_array(values).value());
    return c;
  };
  std::vector<u::property> channels;
  channels.push_back(channel("bone/arm/position", 0, u::make_array<u::vec3>(std::vector<u::vec3>{{0, 0, 0}, {40, 0, 0}})));
  channels.push_back(channel("bone/hand/rotation", 1, u::make_array<u::quat>(std::vector<u::quat>{{0, 0, 0, 1}, {0, 1, 0, 0}})));
  channels.push_back(channel("flexes/smile", 0, u::make_array<float>(std::vector<float>{0, 1})));
  u::property anim_data = u::make_element();
  anim_data.add("duration", u::make_value(0.5f));
  anim_data.add("channels", u::compress_array(u::make_array_of(u::type::element, std::move(channels))).value());
  u::property anims = u::make_element();
  anims.add("wave", u::make_asset("PANI", 1, std::move(anim_data)));
  data.add("animations", std::move(anims));
  u::property groups = u::make_element();
  groups.add("body", group(0));
  groups.add("head", group(1));
  data.add("meshGroups", std::move(groups));
  return u::make_asset("PMDL", 1, std::move(data));
}

/// A PMDL whose one mesh group "body" holds one mesh with one sub-mesh of
/// `sub_mesh_data` (the PMESH asset's data).
inline u::property one_sub_mesh_model(u::property sub_mesh_data) {
  u::property mesh = u::make_element();
  mesh.add("subMeshes", u::make_array_of(u::type::element, {u::make_asset("PMESH", 1, std::move(sub_mesh_data))}));
  u::property group = u::make_element();
  group.add("meshes", u::make_array_of(u::type::element, {std::move(mesh)}));
  u::property groups = u::make_element();
  groups.add("body", std::move(group));
  u::property data = u::make_element();
  data.add("meshGroups", std::move(groups));
  return u::make_asset("PMDL", 1, std::move(data));
}

}  // namespace udm_test
