// The format families' own subcommands behave like every other command:
// -q/-v/--json, one JSON document also on failure, messages that name the
// path and the system's reason, and the documented exit codes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace cli_test;
using json = nlohmann::json;

TEST_CASE("pak create / list / extract: --json, -q, and a round trip of the files") {
  const fs::path dir = scratch("family_pak");
  fs::create_directories(dir / "src/Models");
  fs::copy_file(test_data("urho3d/Models/Box.mdl"), dir / "src/Models/Box.mdl");
  {
    std::ofstream(dir / "src/readme.txt") << "packed by the test\n";
  }
  const fs::path pak = dir / "Data.pak";

  auto created = run_untold("pak create " + quoted(dir / "src") + " -o " + quoted(pak) + " --compress --json");
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  const json c = json::parse(created.out);
  CHECK(c["valid"] == true);
  CHECK(c["entries"] == 2);
  CHECK(c["compressed"] == true);
  CHECK(c["bytes"] == fs::file_size(pak));

  auto listed = run_untold("pak list " + quoted(pak) + " --json");
  REQUIRE(listed.exit_code == 0);
  const json l = json::parse(listed.out);
  CHECK(l.dump().find("Models/Box.mdl") != std::string::npos);

  auto quiet = run_untold("pak extract " + quoted(pak) + " -o " + quoted(dir / "out") + " -q");
  REQUIRE(quiet.exit_code == 0);
  CHECK(quiet.out.empty());
  CHECK(read_text(dir / "out/Models/Box.mdl") == read_text(test_data("urho3d/Models/Box.mdl")));
  CHECK(read_text(dir / "out/readme.txt") == "packed by the test\n");

  auto extracted = run_untold("pak extract " + quoted(pak) + " Models/Box.mdl -o " + quoted(dir / "one") + " --json");
  REQUIRE(extracted.exit_code == 0);
  const json e = json::parse(extracted.out);
  REQUIRE(e["extracted"].size() == 1);
  CHECK(e["extracted"][0]["name"] == "Models/Box.mdl");
  CHECK(e["extracted"][0]["size"] == fs::file_size(test_data("urho3d/Models/Box.mdl")));

  // A name the package does not hold: invalid input, JSON error naming it.
  auto missing = run_untold("pak extract " + quoted(pak) + " nope.txt -o " + quoted(dir / "x") + " --json");
  CHECK(missing.exit_code == 1);
  const json m = json::parse(missing.out);
  CHECK(m["valid"] == false);
  CHECK(m["error"]["describe"].get<std::string>().find("nope.txt") != std::string::npos);
}

TEST_CASE("pak commands name the path and the system's reason, exit 3") {
  const fs::path dir = scratch("family_pak_io");
  auto r = run_untold("pak list " + quoted(dir / "absent.pak"));
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("cannot open " + quoted(dir / "absent.pak") + ": No such file or directory") != std::string::npos);
  auto c = run_untold("pak create " + quoted(dir / "no_dir") + " -o " + quoted(dir / "x.pak"));
  CHECK(c.exit_code == 3);
  CHECK(c.err.find("No such file or directory") != std::string::npos);
}

TEST_CASE("udm convert: --json on success and on failure, -v says what it did") {
  const fs::path dir = scratch("family_udm");
  auto ok = run_untold("udm convert " + quoted(test_data("udm/models/cube.pmdl_b")) + " " + quoted(dir / "cube.udm") +
                       " --json");
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  const json j = json::parse(ok.out);
  CHECK(j["valid"] == true);
  CHECK(j["to"] == "ascii");
  CHECK(j["bytes"] == fs::file_size(dir / "cube.udm"));

  auto back = run_untold("udm convert " + quoted(dir / "cube.udm") + " " + quoted(dir / "cube.pmdl_b") + " -v");
  REQUIRE(back.exit_code == 0);
  CHECK(back.err.find("converted") != std::string::npos);
  CHECK(read_text(dir / "cube.pmdl_b") == read_text(test_data("udm/models/cube.pmdl_b")));

  auto bad = run_untold("udm convert " + quoted(test_data("urho3d/Models/Box.mdl")) + " " + quoted(dir / "x.udm") +
                        " --json");
  CHECK(bad.exit_code == 1);
  const json b = json::parse(bad.out);
  CHECK(b["valid"] == false);
  CHECK(b["error"].contains("rule"));

  auto absent = run_untold("udm convert " + quoted(dir / "absent.pmdl_b") + " " + quoted(dir / "y.udm"));
  CHECK(absent.exit_code == 3);
  CHECK(absent.err.find("No such file or directory") != std::string::npos);
}
