// check_files: the cross-file rules over an in-memory runtime tree.
#include "assetc_support.hpp"

#include <map>

using namespace hm_test;

namespace {

struct tree {
  std::map<std::string, bytes> files;
  std::vector<std::string> unreadable;

  tree() {
    files["models/chair.hmesh"] = fixture_mesh();  // 2 materials, 2 joints
    ua::material a, b;
    a.base_color_tex = ua::hash_ref("models/chair/tex_0");
    b.normal_tex = ua::hash_ref("models/chair/tex_1");
    b.occlusion_tex = a.base_color_tex;
    set_materials({a, b});
    files["models/chair/tex_0.ktx2"] = bytes(8, std::byte{1});
    files["models/chair/tex_1.ktx2"] = bytes(8, std::byte{2});
    set_manifest({{ua::hash_ref("models/chair/tex_0"), 0, 1, "models/chair/tex_0.ktx2"},
                  {ua::hash_ref("models/chair/tex_1"), 0, 0, "models/chair/tex_1.ktx2"}});
    set_anim(1);
  }
  void set_materials(std::vector<ua::material> rows) { files["models/chair.hmat"] = *ua::write_hmat(rows); }
  void set_manifest(std::vector<ua::manifest_entry> e) { files["assets.hman"] = *ua::write_hman(e); }
  void set_anim(std::uint32_t joint) {
    const float times[] = {0, 1};
    const float values[] = {0, 0, 0, 1, 1, 1};
    const ua::anim_channel_input ch[] = {{0, ua::anim_path::translation, ua::anim_interp::linear, times, values},
                                         {joint, ua::anim_path::scale, ua::anim_interp::linear, times, values}};
    const ua::anim_clip_input clip{"wave", 1, ch};
    files["models/chair.hanim"] = *ua::write_hanim(std::span(&clip, 1));
  }

  ua::check_report run() const {
    std::vector<std::string> paths;
    for (const auto& [p, b] : files) paths.push_back(p);
    for (const auto& p : unreadable) paths.push_back(p);
    return ua::check_files(paths, [this](std::string_view p) -> std::optional<untold::byte_span> {
      const auto it = files.find(std::string(p));
      if (it == files.end()) return std::nullopt;
      return span(it->second);
    });
  }
};

std::vector<std::string> rules(const ua::check_report& r) {
  std::vector<std::string> out;
  for (const auto& p : r.problems) out.push_back(std::string(p.err.rule_id()) + " " + p.file);
  return out;
}

}  // namespace

TEST_CASE("check: a consistent tree passes") {
  const tree t;
  const auto r = t.run();
  CHECK(rules(r).empty());
  CHECK(r.ok());
  CHECK(r.meshes == 1);
  CHECK(r.materials == 1);
  CHECK(r.manifests == 1);
  CHECK(r.animations == 1);
  CHECK(r.texture_refs == 3);
  CHECK(r.manifest_entries == 2);
}

TEST_CASE("check: each cross-file rule") {
  tree t;
  SUBCASE("HM-CHECK-MATERIALS") {
    t.set_materials({ua::material{}, ua::material{}, ua::material{}});
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-CHECK-MATERIALS models/chair.hmat"});
  }
  SUBCASE("HM-CHECK-FILE: a manifest entry without its file") {
    t.files.erase("models/chair/tex_1.ktx2");
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-CHECK-FILE assets.hman"});
  }
  SUBCASE("HM-CHECK-FILE: a listed file that cannot be read") {
    t.unreadable.push_back("models/other.hmesh");
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-CHECK-FILE models/other.hmesh"});
  }
  SUBCASE("HM-CHECK-HASH") {
    t.set_manifest({{ua::hash_ref("models/chair/tex_0"), 0, 1, "models/chair/tex_0.ktx2"},
                    {ua::hash_ref("models/chair/tex_1"), 0, 0, "models/chair/tex_0.ktx2"}});
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-CHECK-HASH assets.hman"});
  }
  SUBCASE("HM-CHECK-TEXTURE") {
    t.set_manifest({{ua::hash_ref("models/chair/tex_0"), 0, 1, "models/chair/tex_0.ktx2"}});
    const auto r = t.run();
    REQUIRE(rules(r) == std::vector<std::string>{"HM-CHECK-TEXTURE models/chair.hmat"});
    CHECK(r.problems[0].err.context.record_index == 1);
    CHECK(std::string(r.problems[0].err.context.field) == "normalTex");
    CHECK(r.problems[0].err.context.value == ua::hash_ref("models/chair/tex_1"));
  }
  SUBCASE("HM-CHECK-MANIFEST") {
    t.files.erase("assets.hman");
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-CHECK-MANIFEST models/chair.hmat"});
  }
  SUBCASE("HM-CHECK-JOINT") {
    t.set_anim(2);
    const auto r = t.run();
    REQUIRE(rules(r) == std::vector<std::string>{"HM-CHECK-JOINT models/chair.hanim"});
    CHECK(r.problems[0].err.context.value == 2);
    CHECK(r.problems[0].err.context.limit == 2);
  }
  SUBCASE("HM-CHECK-JOINT: no sibling mesh") {
    t.files["models/chair2.hanim"] = t.files["models/chair.hanim"];
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-CHECK-JOINT models/chair2.hanim"});
  }
  SUBCASE("a file's own rule is reported with its path, the rest still checked") {
    t.files["models/chair.hmesh"][0] = std::byte{0};
    t.set_anim(2);
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-MAGIC models/chair.hmesh", "HM-CHECK-JOINT models/chair.hanim"});
  }
  SUBCASE("a sibling stem sorting differently from its path still matches") {
    t.files["models/chair-b.hmesh"] = t.files["models/chair.hmesh"];
    t.files["models/chair-b.hmat"] = t.files["models/chair.hmat"];
    CHECK(rules(t.run()).empty());
    t.set_materials({ua::material{}});
    CHECK(rules(t.run()) == std::vector<std::string>{"HM-CHECK-MATERIALS models/chair.hmat"});
  }
}

TEST_CASE("check: path helpers") {
  CHECK(ua::strip_extension("a/b.c.ktx2") == "a/b.c");
  CHECK(ua::strip_extension("a.b/c") == "a.b/c");
  CHECK(ua::strip_extension(".hman") == ".hman");
  CHECK(ua::extension_of("x/assets.hman") == "hman");
  CHECK(ua::extension_of("noext").empty());
}
