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

TEST_CASE("check: the streaming form hands every problem over as it is found, in the collecting form's order") {
  tree t;
  t.set_manifest({{ua::hash_ref("models/chair/tex_0"), 0, 1, "models/chair/tex_0.ktx2"},
                  {ua::hash_ref("models/chair/tex_1"), 0, 0, "models/chair/tex_1.ktx2"},
                  {1, 0, 0, "gone/a.ktx2"},
                  {2, 0, 0, "gone/b.ktx2"}});
  const ua::check_report collected = t.run();
  std::vector<std::string> streamed;
  std::vector<std::string> paths;
  for (const auto& [p, b] : t.files) paths.push_back(p);
  const ua::check_report counts = ua::check_files(
      paths,
      [&t](std::string_view p) -> std::optional<untold::byte_span> { return span(t.files.at(std::string(p))); }, {},
      [&streamed](std::string_view file, const untold::error& e) {
        streamed.push_back(std::string(e.rule_id()) + " " + std::string(file));
      });
  CHECK(streamed == rules(collected));
  CHECK(streamed.size() == 4);  // per missing entry: HM-CHECK-FILE and HM-CHECK-HASH
  CHECK(counts.problems.empty());
  CHECK(counts.problem_count == 4);
  CHECK(collected.problem_count == 4);
  CHECK(!counts.ok());
  CHECK(counts.manifest_entries == 4);
}

TEST_CASE("check and the readers charge one shared budget (HM-LIMITS)") {
  const tree t;
  std::vector<std::string> paths;
  for (const auto& [p, b] : t.files) paths.push_back(p);
  const auto read = [&t](std::string_view p) -> std::optional<untold::byte_span> { return span(t.files.at(std::string(p))); };
  // A budget of 32 bytes: the .hman's entry vector (2 entries) exceeds it.
  untold::limits tight;
  tight.memory_floor = 32;
  tight.memory_per_input_byte = 0;
  const bytes& hman = t.files.at("assets.hman");
  const auto alone = ua::open_hman(span(hman), {.limits = tight});
  REQUIRE(!alone);
  CHECK(alone.error().rule_id() == "HM-LIMITS");
  CHECK(std::string(alone.error().context.field) == "entries");
  // Shared across the files of one check: what one file spends, the next cannot.
  untold::budget shared(untold::limits{}, 0);
  ua::open_options options;
  options.budget = &shared;
  const ua::check_report r = ua::check_files(paths, read, options);
  CHECK(r.ok());
  CHECK(shared.memory().used > 0);
  CHECK(shared.work().used > 0);
  untold::limits none;
  none.memory_floor = 0;
  none.memory_per_input_byte = 0;
  none.work_floor = 0;
  none.work_per_input_byte = 0;
  untold::budget empty(none, 1 << 20);
  options.budget = &empty;
  const ua::check_report refused = ua::check_files(paths, read, options);
  CHECK(refused.problem_count == 4);  // .hmesh, .hmat, .hman, .hanim: each reader refuses before it allocates or loops
  for (const auto& p : refused.problems) CHECK(p.err.rule_id() == "HM-LIMITS");
}
