// Text output under hostile names (issue 27, items 13 and 14): every name a
// file supplies (.untold strings, Urho3D track and package entry names, UDM
// keys and strings, assetc clip names and paths) and every path printed in a
// message reaches text output escaped (untold::detail::append_escaped via
// tools' escaped()), so a name holding "\n" and ESC cannot forge a line such
// as "ok    forged" or drive the terminal; JSON output stays parseable for
// malformed UTF-8. And every "not a format this tool reads" names its rule.
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <untold/assetc/assetc.hpp>
#include <untold/udm/udm.hpp>
#include <untold/untold.hpp>
#include <untold/urho3d/animation.hpp>

using namespace cli_test;
using json = nlohmann::json;

namespace {

/// A name that would forge a validate line and colour the terminal if printed raw.
const std::string hostile = "x\nok    forged\x1b[31m\\";
/// How every text output shows it.
const std::string hostile_escaped = "x\\nok    forged\\x1b[31m\\\\";


/// No control character but '\n' at line ends, no forged line, in stdout and stderr.
void check_no_injection(const run_result& r) {
  INFO("stdout: ", r.out, "\nstderr: ", r.err);
  for (const std::string* text : {&r.out, &r.err}) {
    CHECK(text->find('\x1b') == std::string::npos);
    CHECK(text->find('\r') == std::string::npos);
    CHECK(text->find("\nok    forged") == std::string::npos);
    CHECK(text->rfind("ok    forged", 0) != 0);
  }
}

/// Each of `commands` (text output) on `path` succeeds without injection.
void check_commands(const fs::path& path, std::initializer_list<const char*> commands) {
  for (const char* command : commands) {
    CAPTURE(command);
    const run_result r = run_untold(std::string(command) + " " + quoted(path));
    CHECK(r.exit_code == 0);
    check_no_injection(r);
  }
}

}  // namespace

TEST_CASE(".untold: names from the string table are escaped in dump, info and validate text") {
  const fs::path dir = scratch("output_untold");
  untold::builder b;
  const auto root = b.add_entity({.name = hostile});
  const auto tex = b.add_texture({.name = hostile, .uri = hostile, .format = untold::texture_format::rgba8});
  const auto mat = b.add_material({.name = hostile, .base_color_texture = tex});
  const std::array<float, 9> pos{0, 0, 0, 1, 0, 0, 0, 1, 0};
  const std::array<float, 9> nrm{0, 0, 1, 0, 0, 1, 0, 0, 1};
  auto vertices = untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = pos, .normals = nrm});
  REQUIRE(vertices.has_value());
  const std::array<std::uint32_t, 3> idx{0, 1, 2};
  b.add_mesh({.entity = root, .name = hostile, .material = mat, .vertices = *vertices, .indices = idx});
  const auto file = b.finish();
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  // The file's own name holds the same bytes: paths are escaped too.
  const fs::path path = write_bytes(dir / ("a" + hostile + ".untold"), *file);

  const run_result d = run_untold("dump " + quoted(path));
  CHECK(d.exit_code == 0);
  check_no_injection(d);
  CHECK(d.out.find("[0] '" + hostile_escaped + "'") != std::string::npos);          // the entity tree
  CHECK(d.out.find("mesh 0 '" + hostile_escaped + "'") != std::string::npos);       // meshes
  CHECK(d.out.find("uri=" + hostile_escaped + " rgba8") != std::string::npos);      // textures
  CHECK(d.out.find("a" + hostile_escaped + ".untold: tile") != std::string::npos);  // the path

  const run_result i = run_untold("info " + quoted(path));
  CHECK(i.exit_code == 0);
  check_no_injection(i);
  CHECK(i.out.rfind(dir.string() + "/a" + hostile_escaped + ".untold\n", 0) == 0);

  const run_result v = run_untold("validate --deep " + quoted(path));
  CHECK(v.exit_code == 0);
  check_no_injection(v);
  CHECK(v.out.find("ok    " + dir.string() + "/a" + hostile_escaped + ".untold\n") != std::string::npos);

  // JSON carries the name itself, escaped by JSON's own rules.
  const run_result j = run_untold("dump --json " + quoted(path));
  REQUIRE(j.exit_code == 0);
  CHECK(parse_json(j.out)["entities"][0]["name"] == hostile);
}

TEST_CASE("Urho3D: track names and package entry names are escaped") {
  const fs::path dir = scratch("output_urho3d");
  untold::urho3d::animation a;
  a.name = hostile;
  a.length = 1;
  untold::urho3d::track t;
  t.name = hostile;
  a.tracks.push_back(t);
  const auto ani = untold::urho3d::write_animation(a);
  REQUIRE_MESSAGE(ani.has_value(), ani.error().describe());
  const fs::path path = write_bytes(dir / "walk.ani", *ani);
  check_commands(path, {"info", "dump", "validate"});
  CHECK(run_untold("info " + quoted(path)).out.find(hostile_escaped) != std::string::npos);
  CHECK(run_untold("dump " + quoted(path)).out.find(hostile_escaped) != std::string::npos);

  // A package whose entry name forges a line: U3D-PAK-NAME names it, escaped.
  std::string pak = std::string("UPAK") + std::string("\x01\x00\x00\x00", 4) + std::string(4, '\0');
  pak += "a" + hostile + std::string(1, '\0') + std::string(12, '\0');
  const fs::path bad = dir / "bad.pak";
  std::ofstream(bad, std::ios::binary) << pak;
  const run_result v = run_untold("validate " + quoted(bad));
  CHECK(v.exit_code == 1);
  check_no_injection(v);
  CHECK(v.out.find("U3D-PAK-NAME") != std::string::npos);
  CHECK(v.out.find("name 'a" + hostile_escaped + "'") != std::string::npos);
}

TEST_CASE("UDM: keys and strings are escaped, malformed UTF-8 is escaped in text and replaced in JSON") {
  namespace u = untold::udm;
  const fs::path dir = scratch("output_udm");
  u::property data = u::make_element();
  data.add(hostile, u::make_string(hostile));
  data.add("bad\xff\xfe utf8", u::make_string("\xc2\x9b" "c1 and \xe0\x80 overlong"));
  const auto bin = u::write_binary(u::make_asset("x" + hostile, 1, std::move(data)));
  REQUIRE_MESSAGE(bin.has_value(), bin.error().describe());
  const fs::path path = write_bytes(dir / "forged.udm_b", *bin);
  check_commands(path, {"info", "dump", "validate"});
  const run_result d = run_untold("dump " + quoted(path));
  CHECK(d.out.find("\n        " + hostile_escaped + ": type=String value=" + hostile_escaped + "\n") != std::string::npos);
  CHECK(d.out.find("\n        bad\\xff\\xfe utf8: type=String value=\\xc2\\x9bc1 and \\xe0\\x80 overlong\n") !=
        std::string::npos);
  const run_result j = run_untold("dump --json " + quoted(path));
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("bad\xef\xbf\xbd\xef\xbf\xbd utf8") != std::string::npos);  // JSON: U+FFFD, still valid UTF-8
  parse_json(j.out);
}

TEST_CASE("assetc: clip names, pack paths and tree paths are escaped") {
  namespace ua = untold::assetc;
  const fs::path dir = scratch("output_assetc");
  const std::array<float, 1> times{0};
  const std::array<float, 3> values{0, 0, 0};
  const std::array<ua::anim_channel_input, 1> channels{ua::anim_channel_input{.times = times, .values = values}};
  const std::array<ua::anim_clip_input, 1> clips{ua::anim_clip_input{.name = hostile, .channels = channels}};
  const auto hanim = ua::write_hanim(clips);
  REQUIRE_MESSAGE(hanim.has_value(), hanim.error().describe());
  const fs::path anim = write_bytes(dir / "walk.hanim", *hanim);
  check_commands(anim, {"info", "dump", "validate --deep"});
  CHECK(run_untold("dump " + quoted(anim)).out.find("name: " + hostile_escaped + "\n") != std::string::npos);

  // A file in the checked tree whose own name forges a line: check prints it escaped.
  const fs::path tree = dir / "runtime";
  fs::create_directories(tree);
  std::ofstream(tree / ("m" + hostile + ".hmat"), std::ios::binary) << "HMAT";
  const run_result c = run_untold("check " + quoted(tree));
  CHECK(c.exit_code == 1);
  check_no_injection(c);
  CHECK(c.out.find("m" + hostile_escaped + ".hmat: HM-") != std::string::npos);
}

TEST_CASE("an unrecognised file names its rule, E-FORMAT-UNKNOWN, in text as in JSON") {
  const fs::path dir = scratch("output_unrecognised");
  const fs::path bin = dir / "x.bin";
  std::ofstream(bin, std::ios::binary) << "\x7f" "ELF junk";
  const run_result v = run_untold("validate " + quoted(bin));
  CHECK(v.exit_code == 1);
  CHECK(v.out.find("FAIL  " + bin.string() + ": E-FORMAT-UNKNOWN format_unknown: unrecognised file: the first bytes "
                   "(7f 45 4c 46 20 6a 75 6e)") != std::string::npos);
  const run_result i = run_untold("info " + quoted(bin));
  CHECK(i.err.find("untold: " + quoted(bin) + ": E-FORMAT-UNKNOWN format_unknown: unrecognised file") == 0);
  const run_result d = run_untold("dump " + quoted(bin));
  CHECK(d.err.find("E-FORMAT-UNKNOWN") != std::string::npos);
  CHECK(parse_json(run_untold("validate --json " + quoted(bin)).out)["results"][0]["error"]["rule"] == "E-FORMAT-UNKNOWN");
}

TEST_CASE("cook of an empty or unrecognised input gives the rule id and the path, not assimp's message") {
  const fs::path dir = scratch("output_cook_unknown");
  const fs::path out = dir / "out.untold";
  SUBCASE("empty: E-IO-EMPTY") {
    const fs::path empty = dir / "empty.mdl";  // an extension assimp's Quake MDL reader claims
    std::ofstream(empty, std::ios::binary).flush();
    const run_result r = run_untold("cook " + quoted(empty) + " -o " + quoted(out));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(empty.string() + ": cannot import: E-IO-EMPTY io_empty_file") != std::string::npos);
    CHECK(r.err.find("too small") == std::string::npos);
  }
  SUBCASE("no reader claims it: E-FORMAT-UNKNOWN") {
    const fs::path junk = dir / "junk.bin";
    std::ofstream(junk, std::ios::binary) << std::string("\x01\x02\x03\x04 not a model", 17);
    const run_result r = run_untold("cook " + quoted(junk) + " -o " + quoted(out));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(junk.string() + ": cannot import: E-FORMAT-UNKNOWN format_unknown: unrecognised file: the first "
                     "bytes (01 02 03 04 20 6e 6f 74)") != std::string::npos);
    CHECK(r.err.find("No suitable reader") == std::string::npos);
    const json j = parse_json(run_untold("cook --json " + quoted(junk) + " -o " + quoted(out)).out);
    CHECK(j["ok"] == false);
    CHECK(j["error"].get<std::string>().find("E-FORMAT-UNKNOWN") != std::string::npos);
  }
  SUBCASE("only its extension names a reader, which fails: E-FORMAT-UNKNOWN with that reader's reason") {
    const fs::path junk = dir / "junk.mdl";
    std::ofstream(junk, std::ios::binary) << std::string(64, 'z');
    const run_result r = run_untold("cook " + quoted(junk) + " -o " + quoted(out));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(junk.string() + ": cannot import: E-FORMAT-UNKNOWN") != std::string::npos);
    CHECK(r.err.find("(the reader of its extension says: ") != std::string::npos);
  }
  CHECK(!fs::exists(out));
}
