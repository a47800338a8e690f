// The importers of import_model (tools/pipeline/import_model.hpp) on Debian's
// assimp-testmodels: for assimp's formats, counts of meshes, skins, joints,
// clips, channels, lights, cameras and morph targets against what assimp
// itself reports; for glTF (the TinyGLTF importer), material/image indices,
// KHR_texture_transform, samplers and channel paths against the files; and
// the loss report.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "cli_support.hpp"
#include "import_model.hpp"

namespace fs = std::filesystem;
namespace uc = untold::convert;
using untold::tools::import_model;

namespace {


std::uint64_t count_of(const uc::scene& s, const std::string& what_prefix) {
  std::uint64_t n = 0;
  for (const auto& e : s.report.entries)
    if (e.what.rfind(what_prefix, 0) == 0) n += e.count;
  return n;
}

/// assimp's own view, with the importer's default post-processing
/// (triangulate, generate normals/tangents, then weld).
struct reference {
  Assimp::Importer importer;
  const aiScene* scene = nullptr;
  explicit reference(const fs::path& p) {
    importer.SetPropertyFloat(AI_CONFIG_PP_GSN_MAX_SMOOTHING_ANGLE, 80.0f);
    importer.SetPropertyFloat(AI_CONFIG_PP_CT_MAX_SMOOTHING_ANGLE, 45.0f);
    scene = importer.ReadFile(p.string(), aiProcess_Triangulate | aiProcess_SortByPType | aiProcess_FlipUVs);
    if (scene != nullptr)
      scene = importer.ApplyPostProcessing(aiProcess_GenSmoothNormals | aiProcess_CalcTangentSpace |
                                           aiProcess_JoinIdenticalVertices);
  }
};

}  // namespace

TEST_CASE("import_assimp: counts match assimp's scene on OBJ, Collada and FBX models") {
  for (const char* rel : {"OBJ/spider.obj", "Collada/lights.dae",
                          "Collada/box_nested_animation.dae", "FBX/animation_with_skeleton.fbx"}) {
    CAPTURE(rel);
    const fs::path p = cli_test::assimp_model(rel);
    const auto r = import_model(p);
    REQUIRE_MESSAGE(r, r.error);
    reference ref(p);
    REQUIRE(ref.scene != nullptr);
    const uc::scene& s = r.scene;
    CHECK(uc::validate_model(s));
    CHECK(s.meshes.size() == ref.scene->mNumMeshes);
    CHECK(s.animations.size() == ref.scene->mNumAnimations);
    CHECK(s.cameras.size() == ref.scene->mNumCameras);
    std::size_t lights = 0;
    for (unsigned i = 0; i < ref.scene->mNumLights; ++i)
      lights += ref.scene->mLights[i]->mType != aiLightSource_AMBIENT && ref.scene->mLights[i]->mType != aiLightSource_UNDEFINED;
    CHECK(s.lights.size() == lights);
    std::set<std::string> bone_names;
    for (unsigned i = 0; i < ref.scene->mNumMeshes; ++i) {
      const aiMesh& a = *ref.scene->mMeshes[i];
      const uc::mesh& m = s.meshes[i];
      CAPTURE(i);
      CHECK(m.vertex_count() == a.mNumVertices);
      CHECK(m.morphs.size() == a.mNumAnimMeshes);
      for (unsigned b = 0; b < a.mNumBones; ++b) bone_names.insert(a.mBones[b]->mName.C_Str());
      if (a.mNumBones > 0) {
        REQUIRE(m.skin != uc::no_ref);
        CHECK(s.skins[m.skin].joints.size() == a.mNumBones);
        REQUIRE(m.weights.size() == m.vertex_count());
        for (const auto& w : m.weights) CHECK(std::fabs(w[0] + w[1] + w[2] + w[3] - 1.0f) < 1e-4f);
      } else {
        CHECK(m.skin == uc::no_ref);
      }
      // Every face is either carried or counted: none vanishes silently.
      if (m.primitive == uc::topology::triangle_list) CHECK(m.indices.size() % 3 == 0);
    }
    std::size_t joints = 0;
    for (const auto& k : s.skeletons) joints += k.joints.size();
    CHECK(joints == bone_names.size());
    // Node channels: assimp's T/R/S key arrays (glTF: only the paths the file animates).
    for (std::size_t a = 0; a < s.animations.size(); ++a) {
      std::size_t morph = 0;
      for (const auto& c : s.animations[a].channels) {
        morph += c.path == uc::anim_path::weights;
        CHECK(std::is_sorted(c.times.begin(), c.times.end()));
      }
      CHECK(morph == ref.scene->mAnimations[a]->mNumMorphMeshChannels);
    }
  }
}

TEST_CASE("import_gltf: a skinned, animated glTF (simple_skin)") {
  const auto r = import_model(cli_test::assimp_model("glTF2/simple_skin/simple_skin.gltf"));
  REQUIRE_MESSAGE(r, r.error);
  const uc::scene& s = r.scene;
  CHECK(r.gltf);
  REQUIRE(s.meshes.size() == 1);
  CHECK(s.meshes[0].vertex_count() == 10);
  CHECK(s.meshes[0].indices.size() == 24);
  CHECK(s.meshes[0].material == uc::no_ref);  // no glTF material
  CHECK(s.materials.empty());
  REQUIRE(s.skeletons.size() == 1);
  REQUIRE(s.skeletons[0].joints.size() == 2);
  CHECK(s.skeletons[0].joints[0].parent == uc::no_ref);
  CHECK(s.skeletons[0].joints[1].parent == 0);
  CHECK(s.skeletons[0].joints[0].rest.translation[1] == doctest::Approx(1.0));
  REQUIRE(s.skins.size() == 1);
  CHECK(s.skins[0].joints == std::vector<std::uint32_t>{0, 1});
  // Inverse bind of joint 0 (translation 0, 1, 0): column-major, -1 in y of the last column.
  CHECK(s.skeletons[0].joints[0].inverse_bind[13] == doctest::Approx(-1.0));
  REQUIRE(s.animations.size() == 1);
  // The file animates only the rotation of node 2.
  REQUIRE(s.animations[0].channels.size() == 1);
  const auto& c = s.animations[0].channels[0];
  CHECK(c.path == uc::anim_path::rotation);
  CHECK(c.skeleton == 0);
  CHECK(c.joint == 1);
  CHECK(c.times.size() == 12);
  CHECK(c.values.size() == 48);
  CHECK(s.animations[0].duration == doctest::Approx(5.5));
  CHECK(count_of(s, "normals") == 1);  // generated, and said so
}

TEST_CASE("import_gltf: morph targets and weight channels (AnimatedMorphCube)") {
  const auto r = import_model(cli_test::assimp_model("glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf"));
  REQUIRE_MESSAGE(r, r.error);
  const uc::scene& s = r.scene;
  REQUIRE(s.meshes.size() == 1);
  REQUIRE(s.meshes[0].morphs.size() == 2);
  bool moves = false;
  for (float d : s.meshes[0].morphs[0].position_deltas) moves |= d != 0.0f;
  CHECK(moves);
  REQUIRE(s.animations.size() == 1);
  REQUIRE(s.animations[0].channels.size() == 1);
  const auto& c = s.animations[0].channels[0];
  CHECK(c.path == uc::anim_path::weights);
  CHECK(c.times.size() == 127);
  CHECK(c.values.size() == 127 * 2);
}

TEST_CASE("import_gltf: glTF materials and images keep their glTF indices, KHR_texture_transform as in the file") {
  const auto r = import_model(cli_test::assimp_model("glTF2/textureTransform/TextureTransformTest.gltf"));
  REQUIRE_MESSAGE(r, r.error);
  const uc::scene& s = r.scene;
  // The scene keeps the file's order (assimp ordered materials by first use).
  REQUIRE(s.materials.size() == 9);
  const char* names[] = {"Offset U", "Offset V", "Offset UV", "Rotation", "Scale", "All", "Correct", "NotSupported", "Error"};
  for (std::size_t i = 0; i < 9; ++i) CHECK(s.materials[i].name == names[i]);
  REQUIRE(s.textures.size() == 5);
  CHECK(s.textures[0].uri == "UV.png");
  CHECK(s.textures[1].uri == "Arrow.png");
  CHECK(s.textures[0].srgb);
  CHECK(s.textures[0].width == 256);
  const uc::texture_slot& all = s.materials[5].base_color_texture;
  CHECK(all.texture == 1);
  REQUIRE(all.has_transform);
  CHECK(all.offset[0] == doctest::Approx(-0.2).epsilon(1e-4));
  CHECK(all.offset[1] == doctest::Approx(-0.1).epsilon(1e-4));
  CHECK(all.rotation == doctest::Approx(0.3));
  CHECK(all.scale[0] == doctest::Approx(1.5));
  const uc::texture_slot& offset_v = s.materials[1].base_color_texture;
  CHECK(offset_v.offset[0] == doctest::Approx(0.0));
  CHECK(offset_v.offset[1] == doctest::Approx(0.5));
  CHECK_FALSE(s.materials[6].base_color_texture.has_transform);
  // Dependencies: the source, its .bin and every image.
  CHECK(r.dependencies.size() == 7);
  // The one sampler's LINEAR/LINEAR filters reach the slots that use it.
  CHECK(all.mag_filter == uc::texture_filter::linear);
  CHECK(all.min_filter == uc::texture_filter::linear);
  // Its CLAMP_TO_EDGE wrap reaches the slots that use it (textures 0 and 1); the others repeat.
  CHECK(all.wrap[0] == uc::wrap_mode::clamp);
  CHECK(all.wrap[1] == uc::wrap_mode::clamp);
  for (const uc::material& m : s.materials)
    if (m.base_color_texture.used() && m.base_color_texture.texture >= 2)
      CHECK(m.base_color_texture.wrap == std::array{uc::wrap_mode::repeat, uc::wrap_mode::repeat});
}

TEST_CASE("import_gltf: embedded images, duplicate material names, cameras") {
  SUBCASE("GLB image bytes are carried as stored") {
    const auto r = import_model(cli_test::assimp_model("glTF2/BoxTextured-glTF-Binary/BoxTextured.glb"));
    REQUIRE_MESSAGE(r, r.error);
    REQUIRE(r.scene.textures.size() == 1);
    const auto& t = r.scene.textures[0];
    REQUIRE(t.embedded.size() > 8);
    CHECK(t.embedded[1] == std::byte{'P'});  // \x89PNG
    CHECK(t.width == 211);
    REQUIRE(r.scene.materials.size() == 1);
    CHECK(r.scene.materials[0].name == "Texture");
    CHECK(r.scene.materials[0].base_color_texture.texture == 0);
  }
  SUBCASE("2CylinderEngine keeps all 34 materials, names repeated as in the file") {
    const auto r = import_model(cli_test::assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"));
    REQUIRE_MESSAGE(r, r.error);
    REQUIRE(r.scene.materials.size() == 34);
    CHECK(r.scene.materials[2].name == "Material_17");
    CHECK(r.scene.materials[3].name == "Material_17");
    CHECK(r.scene.cameras.size() == 1);
  }
  SUBCASE("cameras: perspective yfov and orthographic from the file") {
    const auto r = import_model(cli_test::assimp_model("glTF2/cameras/Cameras.gltf"));
    REQUIRE_MESSAGE(r, r.error);
    REQUIRE(r.scene.cameras.size() == 2);
    CHECK_FALSE(r.scene.cameras[0].orthographic);
    CHECK(r.scene.cameras[0].yfov == doctest::Approx(0.7));
    CHECK(r.scene.cameras[1].orthographic);
    for (const auto& c : r.scene.cameras) CHECK(c.node != uc::no_ref);
  }
}

TEST_CASE("import_gltf: repeated-index triangles are dropped and counted, zero-area ones kept") {
  // A glTF with 3 triangles over 4 vertices: (0,1,2) normal, (0,1,3) zero-area
  // (3 on the line 0-1), (0,0,2) with a repeated index.
  const fs::path dir = cli_test::scratch("import_degenerate");
  const float pos[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0.5f, 0, 0};
  const std::uint16_t idx[] = {0, 1, 2, 0, 1, 3, 0, 0, 2};
  std::vector<unsigned char> buf(sizeof pos + sizeof idx);
  std::memcpy(buf.data(), pos, sizeof pos);
  std::memcpy(buf.data() + sizeof pos, idx, sizeof idx);
  std::string b64;
  const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t i = 0; i < buf.size(); i += 3) {
    const std::uint32_t n = buf[i] << 16 | (i + 1 < buf.size() ? buf[i + 1] << 8 : 0) | (i + 2 < buf.size() ? buf[i + 2] : 0);
    b64 += digits[n >> 18 & 63];
    b64 += digits[n >> 12 & 63];
    b64 += i + 1 < buf.size() ? digits[n >> 6 & 63] : '=';
    b64 += i + 2 < buf.size() ? digits[n & 63] : '=';
  }
  std::ofstream(dir / "tri.gltf") << R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
"meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1}]}],
"buffers":[{"byteLength":66,"uri":"data:application/octet-stream;base64,)" << b64 << R"("}],
"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":48},{"buffer":0,"byteOffset":48,"byteLength":18}],
"accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},
{"bufferView":1,"componentType":5123,"count":9,"type":"SCALAR"}]})";
  const auto r = import_model(dir / "tri.gltf");
  REQUIRE_MESSAGE(r, r.error);
  REQUIRE(r.scene.meshes.size() == 1);
  CHECK(r.scene.meshes[0].indices.size() == 6);  // two triangles kept
  CHECK(count_of(r.scene, "triangles with a repeated index") == 1);
  CHECK(r.scene.report.lost_anything());
}

TEST_CASE("import_model: options and failures") {
  SUBCASE("no generated normals when asked not to") {
    untold::tools::model_import_options o;
    o.generate_normals = false;
    const auto r = import_model(cli_test::assimp_model("glTF2/simple_skin/simple_skin.gltf"), o);
    REQUIRE_MESSAGE(r, r.error);
    CHECK(r.scene.meshes[0].normals.empty());
    CHECK(count_of(r.scene, "normals") == 0);
  }
  SUBCASE("a missing file") {
    const auto r = import_model(cli_test::scratch("import_missing") / "nope.gltf");
    CHECK_FALSE(r);
    CHECK(r.error.find("no such file") != std::string::npos);
  }
  SUBCASE("a broken glTF") {
    const auto r = import_model(cli_test::assimp_model("glTF2/wrongTypes/badArray.gltf"));
    CHECK_FALSE(r);
    CHECK_FALSE(r.error.empty());
  }
  SUBCASE("images: found next to the source, or reported missing with the texture kept") {
    const auto found = import_model(cli_test::assimp_model("OBJ/spider.obj"));
    REQUIRE_MESSAGE(found, found.error);
    REQUIRE(found.scene.textures.size() == 5);
    CHECK(count_of(found.scene, "image file") == 0);
    for (const auto& t : found.scene.textures) CHECK(t.width > 0);
    const fs::path dir = cli_test::scratch("import_spider");
    fs::copy_file(cli_test::assimp_model("OBJ/spider.obj"), dir / "spider.obj");
    fs::copy_file(cli_test::assimp_model("OBJ/spider.mtl"), dir / "spider.mtl");
    const auto missing = import_model(dir / "spider.obj");
    REQUIRE_MESSAGE(missing, missing.error);
    CHECK(missing.scene.textures.size() == 5);
    CHECK(count_of(missing.scene, "image file") == 5);
    CHECK(missing.scene.report.lost_anything());
  }
}

TEST_CASE("import_gltf: point and line primitives are carried with their topology and reported") {
  const auto points = import_model(cli_test::assimp_model("glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_00.gltf"));
  REQUIRE_MESSAGE(points, points.error);
  REQUIRE(points.scene.meshes.size() == 1);
  CHECK(points.scene.meshes[0].primitive == uc::topology::point_list);
  CHECK(points.scene.meshes[0].indices.size() == 1024);
  CHECK(count_of(points.scene, "point primitives") == 1024);
  const auto lines = import_model(cli_test::assimp_model("glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_01.gltf"));
  REQUIRE_MESSAGE(lines, lines.error);
  REQUIRE(lines.scene.meshes.size() == 1);
  CHECK(lines.scene.meshes[0].primitive == uc::topology::line_list);
  CHECK(lines.scene.meshes[0].indices.size() == 8);
  CHECK(count_of(lines.scene, "line primitives") == 4);
}

TEST_CASE("import_assimp: more than 4 influences per vertex: the 4 largest kept, the rest counted") {
  const fs::path p = cli_test::assimp_model("FBX/animation_with_skeleton.fbx");
  const auto r = import_model(p);
  REQUIRE_MESSAGE(r, r.error);
  reference ref(p);
  REQUIRE(ref.scene != nullptr);
  std::uint64_t beyond = 0;
  for (unsigned i = 0; i < ref.scene->mNumMeshes; ++i) {
    const aiMesh& a = *ref.scene->mMeshes[i];
    std::vector<std::vector<float>> per_vertex(a.mNumVertices);
    for (unsigned b = 0; b < a.mNumBones; ++b)
      for (unsigned w = 0; w < a.mBones[b]->mNumWeights; ++w)
        if (a.mBones[b]->mWeights[w].mWeight > 0) per_vertex[a.mBones[b]->mWeights[w].mVertexId].push_back(a.mBones[b]->mWeights[w].mWeight);
    for (std::size_t v = 0; v < per_vertex.size(); ++v) {
      auto& ws = per_vertex[v];
      if (ws.size() > 4) beyond += ws.size() - 4;
      // The carried weights are the 4 largest, renormalised.
      std::sort(ws.begin(), ws.end(), std::greater<>());
      if (ws.empty()) continue;
      float sum = 0;
      for (std::size_t k = 0; k < std::min<std::size_t>(4, ws.size()); ++k) sum += ws[k];
      CHECK(r.scene.meshes[i].weights[v][0] == doctest::Approx(ws[0] / sum));
    }
  }
  CHECK(beyond > 0);
  CHECK(count_of(r.scene, "joint influences beyond the 4 largest") == beyond);
  CHECK(r.scene.report.lost_anything());
}

TEST_CASE("import_gltf: KHR_lights_punctual lights keep glTF's intensity, range and cones") {
  const fs::path dir = cli_test::scratch("import_lights");
  std::ofstream(dir / "lights.gltf") << R"({"asset":{"version":"2.0"},"extensionsUsed":["KHR_lights_punctual","EXT_unknown_thing"],
"extensions":{"KHR_lights_punctual":{"lights":[
  {"name":"lamp","type":"point","color":[1,0.5,0],"intensity":3,"range":5},
  {"name":"torch","type":"spot","intensity":7,"spot":{"innerConeAngle":0.2,"outerConeAngle":0.5}},
  {"name":"sun","type":"directional","intensity":2}]}},
"scene":0,"scenes":[{"nodes":[0,1,2]}],
"nodes":[{"name":"LampNode","translation":[0,2,0],"extensions":{"KHR_lights_punctual":{"light":0}}},
         {"name":"TorchNode","extensions":{"KHR_lights_punctual":{"light":1}}},
         {"name":"SunNode","rotation":[0,0,0.7071068,0.7071068],"extensions":{"KHR_lights_punctual":{"light":2}}}]})";
  const auto r = import_model(dir / "lights.gltf");
  REQUIRE_MESSAGE(r, r.error);
  const uc::scene& s = r.scene;
  REQUIRE(s.lights.size() == 3);
  std::map<std::string, const uc::light*> by_node;
  for (const auto& l : s.lights) {
    REQUIRE(l.node != uc::no_ref);
    by_node[s.nodes[l.node].name] = &l;
  }
  REQUIRE(by_node.count("LampNode") == 1);
  const uc::light& lamp = *by_node["LampNode"];
  CHECK(lamp.kind == uc::light_kind::point);
  CHECK(lamp.intensity == doctest::Approx(3));
  CHECK(lamp.range == doctest::Approx(5));
  CHECK(lamp.color[1] == doctest::Approx(0.5));
  REQUIRE(by_node.count("TorchNode") == 1);
  CHECK(by_node["TorchNode"]->kind == uc::light_kind::spot);
  CHECK(by_node["TorchNode"]->inner_cone == doctest::Approx(0.2));
  CHECK(by_node["TorchNode"]->outer_cone == doctest::Approx(0.5));
  REQUIRE(by_node.count("SunNode") == 1);
  CHECK(by_node["SunNode"]->kind == uc::light_kind::directional);
  CHECK(s.nodes[lamp.node].local.translation[1] == doctest::Approx(2));
  // An extension the model does not carry is named in the report.
  CHECK(count_of(s, "glTF extension EXT_unknown_thing") == 1);
  CHECK(count_of(s, "glTF extension KHR_lights_punctual") == 0);
}
