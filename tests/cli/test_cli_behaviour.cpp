// The `untold` binary behaves like the tools people know (issue 13 item 4):
// help and version commands, errors naming the path and the system's reason,
// documented exit codes, -q/-v/--json on every command, progress that does
// not spam logs, enum names in dump, --mkdir, stdin, one error for an empty
// file, and a dump linear in entity depth.
#include "cli_support.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include <untold/untold.hpp>

using namespace cli_test;
using json = nlohmann::json;

namespace {


fs::path golden() { return test_data("minimal_v1.untold"); }

fs::path write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

/// The golden file with materialIndex of mesh 0 set to 7 (R-MESH-MATERIAL).
fs::path invalid_file(const fs::path& dir) {
  auto bytes = untold::read_file(golden());
  REQUIRE(bytes.has_value());
  untold::store_le_unchecked<std::uint32_t>(bytes->data() + 672 + 8, 7);
  return write_bytes(dir / "invalid.untold", *bytes);
}

}  // namespace

TEST_CASE("help [COMMAND], version and --version") {
  const run_result all = run_untold("help");
  CHECK(all.exit_code == 0);
  for (const char* command : {"info", "validate", "dump", "cook", "recompress", "help", "version"})
    CHECK_MESSAGE(all.out.find(std::string("  ") + command) != std::string::npos, command);
  CHECK(all.out.find("3 I/O error") != std::string::npos);

  const run_result cook = run_untold("help cook");
  CHECK(cook.exit_code == 0);
  CHECK(cook.out.find("Usage: untold cook") != std::string::npos);
  CHECK(cook.out.find("--mkdir") != std::string::npos);

  const run_result bogus = run_untold("help bogus");
  CHECK(bogus.exit_code == 2);
  CHECK(bogus.err == "untold: help: no command 'bogus' (run 'untold help' for the list)\n");

  // Nested: a family's subcommand.
  const run_result nested = run_untold("help pak list");
  CHECK(nested.exit_code == 0);
  CHECK(nested.out.find("Usage: untold pak list") != std::string::npos);
  const run_result nested_bogus = run_untold("help pak bogus");
  CHECK(nested_bogus.exit_code == 2);
  CHECK(nested_bogus.err == "untold: help: no command 'pak bogus' (run 'untold help' for the list)\n");

  const run_result version = run_untold("version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("untold ", 0) == 0);
  CHECK(run_untold("--version").out == version.out);
  const json j = parse_json(run_untold("version --json").out);
  CHECK("untold " + j["version"].get<std::string>() + "\n" == version.out);
}

TEST_CASE("errors name the path and the system's reason") {
  const fs::path dir = scratch("behaviour_errors");
  const fs::path missing = dir / "x.untold";
  const run_result info = run_untold("info " + quoted(missing));
  CHECK(info.exit_code == 3);
  CHECK(info.err == "untold: cannot open " + quoted(missing) + ": No such file or directory\n");

  const run_result directory = run_untold("dump " + quoted(dir));
  CHECK(directory.exit_code == 3);
  CHECK(directory.err == "untold: cannot open " + quoted(dir) + ": Is a directory\n");

  // In JSON: the E-IO rule, the reason as the message, the errno as context.
  const run_result j = run_untold("validate --json " + quoted(missing));
  CHECK(j.exit_code == 3);
  const json error = parse_json(j.out)["results"][0]["error"];
  CHECK(error["rule"] == "E-IO-OPEN");
  CHECK(error["message"] == "No such file or directory");
  CHECK(error["context"]["value"] == 2);  // ENOENT
  CHECK(error["describe"] == "cannot open " + quoted(missing) + ": No such file or directory");
}

TEST_CASE("exit codes: 0 ok, 1 invalid input, 2 usage, 3 I/O") {
  const fs::path dir = scratch("behaviour_exit_codes");
  const fs::path bad = invalid_file(dir);
  const fs::path missing = dir / "missing.untold";
  for (const char* command : {"info", "validate", "dump"}) {
    CAPTURE(command);
    CHECK(run_untold(std::string(command) + " " + quoted(golden())).exit_code == 0);
    CHECK(run_untold(std::string(command) + " " + quoted(bad)).exit_code == 1);
    CHECK(run_untold(std::string(command) + " --no-such-option " + quoted(golden())).exit_code == 2);
    CHECK(run_untold(std::string(command) + " " + quoted(missing)).exit_code == 3);
  }
  CHECK(run_untold("recompress " + quoted(bad) + " -o " + quoted(dir / "o.untold") + " --compress lz4").exit_code == 1);
  CHECK(run_untold("recompress " + quoted(golden()) + " -o " + quoted(dir / "no" / "o.untold") + " --compress lz4")
            .exit_code == 3);
  // An output that cannot be written (a directory): 3, with the system's reason.
  fs::create_directories(dir / "adir");
  const std::string cannot_write = "untold: cannot write " + quoted(dir / "adir") + ": Is a directory\n";
  for (const std::string& args : {"cook " + quoted(sample_model()), "cook " + quoted(test_data("urho3d/Models/Box.mdl")),
                                  "recompress --compress lz4 " + quoted(golden())}) {
    CAPTURE(args);
    const run_result r = run_untold(args + " -o " + quoted(dir / "adir"));
    CHECK(r.exit_code == 3);
    CHECK(r.err == cannot_write);
  }
  // Several files: an I/O failure outranks an invalid file.
  CHECK(run_untold("validate " + quoted(golden()) + " " + quoted(bad)).exit_code == 1);
  CHECK(run_untold("validate " + quoted(bad) + " " + quoted(missing)).exit_code == 3);
}

TEST_CASE("-q, -v and --json on every command") {
  for (const char* command : {"info", "validate", "dump", "cook", "recompress"}) {
    CAPTURE(command);
    const run_result help = run_untold(std::string(command) + " --help");
    CHECK(help.out.find("-q,--quiet") != std::string::npos);
    CHECK(help.out.find("-v,--verbose") != std::string::npos);
    CHECK(help.out.find("--json") != std::string::npos);
  }
  const fs::path dir = scratch("behaviour_flags");
  const fs::path bad = invalid_file(dir);

  // validate -q: failures only, no "ok" lines, no summary.
  const run_result quiet = run_untold("validate -q " + quoted(golden()) + " " + quoted(bad));
  CHECK(quiet.exit_code == 1);
  CHECK(quiet.out == "FAIL  " + bad.string() +
                         ": R-MESH-MATERIAL mesh_material: a mesh's materialIndex is neither NONE nor a material "
                         "(chunk 2, type 3, record 0, field materialIndex, value 7)\n");

  // -v says what is read, and as what.
  const run_result verbose = run_untold("info -v " + quoted(golden()));
  CHECK(verbose.err == "untold: reading " + quoted(golden()) + ": 1014 bytes, format untold\n");

  // cook -v: what it does, and progress as plain lines (stderr is a file here).
  const run_result cook_verbose = run_untold("cook -v " + quoted(sample_model()) + " -o " + quoted(dir / "v.untold"));
  CHECK(cook_verbose.exit_code == 0);
  CHECK(cook_verbose.err.rfind("untold: cooking " + quoted(sample_model()) + " (glTF 2.0, TinyGLTF) into " +
                                   quoted(dir / "v.untold") + "\ncook: import\n",
                               0) == 0);

  // cook: -q prints nothing; --json one document, also on failure.
  const run_result cook_quiet = run_untold("cook -q " + quoted(sample_model()) + " -o " + quoted(dir / "q.untold"));
  CHECK(cook_quiet.exit_code == 0);
  CHECK(cook_quiet.out.empty());
  CHECK(cook_quiet.err.empty());
  const run_result cook_json = run_untold("cook --json " + quoted(sample_model()) + " -o " + quoted(dir / "j.untold"));
  CHECK(cook_json.exit_code == 0);
  const json cooked = parse_json(cook_json.out);
  CHECK(cooked["ok"] == true);
  CHECK(cooked["error"].is_null());
  CHECK(cooked["format"] == "gltf");
  CHECK(cooked["entities"] == 4);
  CHECK(cooked["triangles"] == 26);
  CHECK(cooked["written"][0] == (dir / "j.untold").string());
  CHECK(cooked["report"].is_array());
  const run_result cook_fail = run_untold("cook --json " + quoted(dir / "none.gltf") + " -o " + quoted(dir / "n.untold"));
  CHECK(cook_fail.exit_code == 3);
  const json failed = parse_json(cook_fail.out);
  CHECK(failed["ok"] == false);
  CHECK(failed["error"] == "cannot open " + quoted(dir / "none.gltf") + ": No such file or directory");

  // recompress --json, success and failure.
  const json packed = parse_json(
      run_untold("recompress --json " + quoted(golden()) + " -o " + quoted(dir / "p.untold") + " --compress zstd").out);
  CHECK(packed["ok"] == true);
  CHECK(packed["inputBytes"] == 1014);
  const run_result rfail = run_untold("recompress --json " + quoted(bad) + " -o " + quoted(dir / "p2.untold") + " --compress zstd");
  CHECK(rfail.exit_code == 1);
  CHECK(parse_json(rfail.out)["error"].get<std::string>().find("R-MESH-MATERIAL") != std::string::npos);

  // dump --json of an invalid file is still one JSON document.
  const run_result dump_bad = run_untold("dump --json " + quoted(bad));
  CHECK(dump_bad.exit_code == 1);
  CHECK(parse_json(dump_bad.out)["error"]["rule"] == "R-MESH-MATERIAL");
}

TEST_CASE("fetch --json prints JSON on failure too") {
  if (run_untold("help fetch").exit_code != 0) {  // ("fetch --help" would show the top-level help)
    MESSAGE("this build has no `untold fetch` (untold::remote not built)");
    return;
  }
  const fs::path dir = scratch("behaviour_fetch");
  // Refused before any network I/O: plain http.
  const run_result r = run_untold("fetch --json --cache-dir " + quoted(dir) + " http://example.invalid/t.untold");
  CHECK(r.exit_code == 2);
  const json j = parse_json(r.out);
  CHECK(j["ok"] == false);
  CHECK(j["url"] == "http://example.invalid/t.untold");
  CHECK(j["error"]["id"] == "E-REMOTE-INSECURE");
  CHECK(r.err.find("E-REMOTE-INSECURE") != std::string::npos);

  // A network failure (nothing listens on port 1): I/O, exit 3, still JSON.
  const run_result refused =
      run_untold("fetch --json --attempts 1 --timeout 5 --cache-dir " + quoted(dir) + " https://127.0.0.1:1/t.untold");
  CHECK(refused.exit_code == 3);
  const json e = parse_json(refused.out);
  CHECK(e["ok"] == false);
  CHECK(e["error"]["id"].get<std::string>().rfind("E-REMOTE-", 0) == 0);
  CHECK(e["error"]["attempts"] == 1);
}

TEST_CASE("--progress: one plain line per step off a terminal, nothing without it") {
  const fs::path dir = scratch("behaviour_progress");
  const run_result with = run_untold("cook --progress " + quoted(sample_model()) + " -o " + quoted(dir / "a.untold"));
  REQUIRE_MESSAGE(with.exit_code == 0, with.err);
  CHECK(with.err.find('\r') == std::string::npos);
  const auto import = with.err.find("cook: import\n"), meshes = with.err.find("cook: convert\n"),
             write = with.err.find("cook: write\n");
  CHECK(import != std::string::npos);
  CHECK(meshes != std::string::npos);
  CHECK(write != std::string::npos);
  CHECK((import < meshes && meshes < write));
  // Each step once, however often the percentage moves.
  CHECK(with.err.find("cook: convert\n", meshes + 1) == std::string::npos);

  const run_result without = run_untold("cook " + quoted(sample_model()) + " -o " + quoted(dir / "b.untold"));
  CHECK(without.exit_code == 0);
  CHECK(without.err.empty());
  const run_result quiet = run_untold("cook -q --progress " + quoted(sample_model()) + " -o " + quoted(dir / "c.untold"));
  CHECK(quiet.err.empty());
}

TEST_CASE("cook -o DIR/x into a missing directory needs --mkdir / -p") {
  const fs::path dir = scratch("behaviour_mkdir");
  const fs::path out = dir / "new" / "deeper" / "x.untold";
  const run_result refused = run_untold("cook " + quoted(sample_model()) + " -o " + quoted(out));
  CHECK(refused.exit_code == 3);
  CHECK(refused.err == "untold: cannot write " + quoted(out) + ": No such file or directory (directory " +
                           quoted(out.parent_path()) + " does not exist; --mkdir creates it)\n");
  CHECK(!fs::exists(dir / "new"));

  CHECK(run_untold("cook " + quoted(sample_model()) + " --mkdir -o " + quoted(out)).exit_code == 0);
  CHECK(fs::exists(out));
  const fs::path other = dir / "p" / "y.untold";
  CHECK(run_untold("cook -p " + quoted(sample_model()) + " -o " + quoted(other)).exit_code == 0);
  CHECK(fs::exists(other));

  // A file where the directory should be.
  write_text(dir / "plain", "x");
  const run_result not_dir = run_untold("cook " + quoted(sample_model()) + " -p -o " + quoted(dir / "plain" / "z.untold"));
  CHECK(not_dir.exit_code == 3);
  CHECK(not_dir.err.find("Not a directory") != std::string::npos);
}

TEST_CASE("'-' reads standard input") {
  const run_result info = run_untold("info - < " + quoted(golden()));
  CHECK(info.exit_code == 0);
  CHECK(info.out.find("1 entities, 1 meshes, 1 materials, 1 textures") != std::string::npos);
  const run_result validate = run_untold("validate --deep - < " + quoted(golden()));
  CHECK(validate.exit_code == 0);
  CHECK(validate.out == "ok    -\n1 passed, 0 failed\n");
  const run_result dump = run_untold("dump --json - < " + quoted(golden()));
  CHECK(dump.exit_code == 0);
  const json j = parse_json(dump.out);
  CHECK(j["file"] == "-");
  CHECK(j["meshes"][0]["name"] == "tri");
  // A pipe (not a regular file: nothing to map) by path and as '-'.
  const fs::path piped = scratch("behaviour_pipe") / "out.txt";
  for (const char* arg : {"/dev/stdin", "-"}) {
    CAPTURE(arg);
    const std::string command = "cat " + quoted(golden()) + " | " + UNTOLD_CLI + " validate " + arg + " > " + quoted(piped);
    CHECK(std::system(command.c_str()) == 0);
    CHECK(read_text(piped) == std::string("ok    ") + arg + "\n1 passed, 0 failed\n");
  }

  // cook reads stdin only for formats known by their magic (assimp needs side files).
  const fs::path dir = scratch("behaviour_stdin");
  const run_result cook = run_untold("cook - -o " + quoted(dir / "x.untold") + " < " + quoted(sample_model()));
  CHECK(cook.exit_code == 1);
  CHECK(cook.err.find("untold: standard input: E-FORMAT-UNKNOWN format_unknown: standard input is not a format "
                      "recognised by its magic") == 0);
  const run_result empty = run_untold("cook - -o " + quoted(dir / "x.untold") + " < /dev/null");
  CHECK(empty.exit_code == 1);
  CHECK(empty.err.find("untold: standard input: E-IO-EMPTY io_empty_file: ") == 0);
}

TEST_CASE("an empty file: one error, the one the library reports") {
  const fs::path dir = scratch("behaviour_empty");
  const fs::path empty = write_text(dir / "empty.untold", "");
  const auto api = untold::open(untold::byte_span{});
  REQUIRE(!api.has_value());
  const std::string rule(api.error().rule_id());
  CHECK(rule == "R-TRUNC-HEADER");

  const run_result v = run_untold("validate --json " + quoted(empty));
  CHECK(v.exit_code == 1);
  CHECK(parse_json(v.out)["results"][0]["error"]["rule"] == rule);
  const run_result i = run_untold("info --json " + quoted(empty));
  CHECK(i.exit_code == 1);
  CHECK(parse_json(i.out)[0]["error"]["rule"] == rule);
  const run_result d = run_untold("dump " + quoted(empty));
  CHECK(d.exit_code == 1);
  CHECK(d.err == "untold: " + empty.string() + ": " + api.error().describe() + "\n");
  for (const run_result* r : {&v, &i, &d}) CHECK(r->out.find("E-IO-EMPTY") == std::string::npos);
  // Same from standard input.
  CHECK(parse_json(run_untold("validate --json - < " + quoted(empty)).out)["results"][0]["error"]["rule"] == rule);
}

TEST_CASE("an unrecognised file names its first bytes, exit 1") {
  const fs::path dir = scratch("behaviour_unrecognised");
  const fs::path elf = write_text(dir / "prog.untold", std::string("\x7f" "ELF\x02\x01\x01\x00 and more", 17));
  const run_result r = run_untold("info " + quoted(elf));
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("untold: " + quoted(elf) +
                        ": E-FORMAT-UNKNOWN format_unknown: unrecognised file: the first bytes (7f 45 4c 46 02 01 01 00)",
                    0) == 0);
  const json j = parse_json(run_untold("validate --json " + quoted(elf)).out)["results"][0];
  CHECK(j["valid"] == false);
  CHECK(j["format"].is_null());
  CHECK(j["error"]["rule"] == "E-FORMAT-UNKNOWN");
  CHECK(run_untold("dump " + quoted(elf)).exit_code == 1);
  // A truncated .untold (whole magic, short header) is still .untold's R-TRUNC-HEADER.
  const fs::path short_file = write_text(dir / "short.untold", std::string("UNTOLD\0\0abc", 11));
  CHECK(parse_json(run_untold("validate --json " + quoted(short_file)).out)["results"][0]["error"]["rule"] == "R-TRUNC-HEADER");
}

TEST_CASE("dump prints enum names, and NONE strings and references as null") {
  const fs::path dir = scratch("behaviour_enums");
  untold::builder b;
  const auto root = b.add_entity({});  // no name: nameOffset NONE
  const auto tex = b.add_texture({.name = "t", .format = untold::texture_format::bc7});  // no uri
  const auto mat = b.add_material({.name = "m", .base_color_texture = tex});
  const std::array<float, 9> pos{0, 0, 0, 1, 0, 0, 0, 1, 0};
  const std::array<float, 9> nrm{0, 0, 1, 0, 0, 1, 0, 0, 1};
  auto vertices = untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = pos, .normals = nrm});
  REQUIRE(vertices.has_value());
  const std::array<std::uint32_t, 3> idx{0, 1, 2};
  b.add_mesh({.entity = root, .name = "tri", .material = mat, .vertices = *vertices, .indices = idx});
  untold::light_record light;
  light.light_type = static_cast<std::uint32_t>(untold::light_type::spot);
  b.add_light({.entity = root, .light = light});  // no name
  untold::write_options options;
  options.compression.data = {untold::compression::lz4, 0};
  const auto file = b.finish(options);
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  const fs::path path = write_bytes(dir / "enums.untold", *file);

  const run_result r = run_untold("dump --json " + quoted(path));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json j = parse_json(r.out);
  CHECK(j["vertexLayout"] == "pbrStaticV1");
  CHECK(j["fileType"] == "tile");
  bool saw_vertex_chunk = false;
  for (const json& c : j["chunks"]) {
    CHECK(c["typeName"].is_string());
    CHECK(c["compression"].is_string());
    if (c["typeName"] == "vertexData") {
      saw_vertex_chunk = true;
      CHECK(c["compression"] == "lz4");
    }
  }
  CHECK(saw_vertex_chunk);
  CHECK(j["entities"][0]["name"].is_null());
  CHECK(j["meshes"][0]["indexType"] == "uint16");
  CHECK(j["textures"][0]["textureFormat"] == "bc7");
  CHECK(j["textures"][0]["uri"].is_null());
  const json& l = j["extensions"]["lights"][0];
  CHECK(l["lightTypeName"] == "spot");
  CHECK(l["nameOffset"].is_null());
  CHECK(l["name"].is_null());

  const run_result text = run_untold("dump " + quoted(path));
  CHECK(text.out.find("vertex layout pbrStaticV1") != std::string::npos);
  CHECK(text.out.find("vertexData (6) lz4") != std::string::npos);
  CHECK(text.out.find("lightTypeName=spot") != std::string::npos);
  CHECK(text.out.find("'t' uri=- bc7") != std::string::npos);
}

TEST_CASE("dump is linear in entity depth (a 100000-deep chain)") {
  constexpr std::uint32_t depth = 100000;
  const fs::path dir = scratch("behaviour_deep");
  untold::builder b;
  std::uint32_t parent = untold::none;
  for (std::uint32_t i = 0; i < depth; ++i) parent = b.add_entity({.name = "e", .parent = parent});
  const auto file = b.finish();
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  const fs::path path = write_bytes(dir / "deep.untold", *file);

  const run_result text = run_untold("dump " + quoted(path));
  REQUIRE(text.exit_code == 0);
  // Quadratic indentation would print ~depth^2 = 10^10 bytes.
  CHECK(text.out.size() < std::size_t{120} * depth);
  CHECK(std::count(text.out.begin(), text.out.end(), '\n') > depth);
  CHECK(text.out.find("(depth 100000) [99999] 'e'") != std::string::npos);
  CHECK(text.out.find("\n  [0] 'e'") != std::string::npos);

  const run_result j = run_untold("dump --json " + quoted(path));
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.size() < std::size_t{2000} * depth);
  std::size_t entities = 0;
  for (std::size_t at = j.out.find("\"parentEntityId\""); at != std::string::npos;
       at = j.out.find("\"parentEntityId\"", at + 1))
    ++entities;
  CHECK(entities == depth);
  CHECK(j.out.find("\"entityId\": 99999") != std::string::npos);
}

TEST_CASE("dump --json entity records carry the library's exact values") {
  // The entity table is rendered without a json value per record (the deep
  // chain's hot path): its floats must still read back bit for bit.
  const fs::path dir = scratch("behaviour_entity_values");
  const fs::path out = dir / "sample.untold";
  REQUIRE(run_untold("cook -q " + quoted(sample_model()) + " -o " + quoted(out)).exit_code == 0);
  const run_result r = run_untold("dump --json " + quoted(out));
  REQUIRE(r.exit_code == 0);
  const json j = parse_json(r.out);
  auto opened = untold::open_file(out);
  REQUIRE(opened.has_value());
  const auto entities = opened->asset.entities();
  REQUIRE(j["entities"].size() == entities.size());
  for (std::size_t i = 0; i < entities.size(); ++i) {
    CAPTURE(i);
    const untold::entity_record e = entities[i];
    const json& je = j["entities"][i];
    CHECK(je["entityId"] == e.entity_id);
    CHECK(je["name"] == std::string(opened->asset.string(e.name_offset)));
    CHECK(je["parentEntityId"] == (e.parent_entity_id == untold::none ? json(nullptr) : json(e.parent_entity_id)));
    CHECK(je["meshRecordCount"] == e.mesh_record_count);
    for (std::size_t k = 0; k < 16; ++k) CHECK(je["localTransform"][k].get<float>() == e.local_transform[k]);
    for (std::size_t k = 0; k < 3; ++k) {
      CHECK(je["worldBounds"]["min"][k].get<float>() == e.world_bounds.min[k]);
      CHECK(je["localBounds"]["max"][k].get<float>() == e.local_bounds.max[k]);
    }
  }
}

TEST_CASE("--progress on a terminal: one line redrawn in place") {
  // util-linux `script` gives the command a pseudo-terminal.
  if (std::system("command -v script > /dev/null 2>&1") != 0) {
    MESSAGE("no `script` command: the terminal case is not tested");
    return;
  }
  const fs::path dir = scratch("behaviour_tty");
  const fs::path log = dir / "tty.log";
  const std::string command = std::string(UNTOLD_CLI) + " cook " + quoted(sample_model()) + " -o " +
                              quoted(dir / "x.untold");
  REQUIRE(std::system(("script -qec \"" + command + "\" /dev/null > " + quoted(log)).c_str()) == 0);
  const std::string tty = read_text(log);
  CHECK(tty.find("\rcook: write   100%") != std::string::npos);
  CHECK(tty.find("cook: write\r\n") == std::string::npos);  // not the plain form (the pty turns \n into \r\n)
  // -q silences it on a terminal too.
  REQUIRE(std::system(("script -qec \"" + std::string(UNTOLD_CLI) + " cook -q " + quoted(sample_model()) + " -o " +
                       quoted(dir / "y.untold") + "\" /dev/null > " + quoted(log)).c_str()) == 0);
  CHECK(read_text(log).find("cook:") == std::string::npos);
}
