// The document stream (tools/pipeline/inspect.hpp) that `dump` writes foreign formats
// through: streamed piece by piece, it must print exactly what the whole
// document prints (to_text for --json, json_as_text for text), so that
// streaming bounds the memory without changing the output. Checked on a
// synthetic document with every layout case and on every foreign sample
// file of tests/data, through the format handlers `dump` uses.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "formats.hpp"
#include "inspect.hpp"

namespace fs = std::filesystem;
using untold::tools::document_stream;
using untold::tools::json;

namespace {

std::string streamed(document_stream::syntax form, const std::function<void(document_stream&)>& write) {
  std::string text;
  const untold::tools::text_sink sink = [&text](std::string_view s) { text.append(s); };
  document_stream out(sink, form);
  write(out);
  return text;
}

}  // namespace

TEST_CASE("document stream: streamed lists print as the whole document, JSON and text") {
  std::vector<int> many(40);
  for (int i = 0; i < 40; ++i) many[static_cast<std::size_t>(i)] = i * 3;
  const std::vector<int> few{1, 2, 3};
  const std::vector<int> none;
  const auto write = [&](document_stream& out) {
    out.open(nullptr, '{');
    out.value("name", "a\nb\x1b");  // escaped in text
    out.list("few", few, [](int v) { return json(v); });
    out.list("many", many, [](int v) { return json(v); });
    out.list("none", none, [](int v) { return json(v); });
    out.open("nested", '[');
    for (int i = 0; i < 3; ++i) {
      out.open(nullptr, '{');
      out.value("index", i);
      out.list("objects", many, [](int v) { return json{{"v", v}, {"w", v + 1}}; });
      out.open("empty", '{');
      out.close('}');
      out.close('}');
    }
    out.close(']');
    out.open("emptyList", '[');
    out.close(']');
    out.close('}');
  };
  const std::string as_json = streamed(document_stream::syntax::json, write);
  const json whole = json::parse(as_json);
  CHECK(whole["many"].size() == 40);
  CHECK(whole["nested"][2]["objects"][39]["w"] == 118);
  CHECK(as_json == untold::tools::to_text(whole));
  const std::string as_text = streamed(document_stream::syntax::text, write);
  CHECK(as_text == untold::tools::json_as_text(whole));
  CHECK(as_text.find("few: [1,2,3]\n") != std::string::npos);
  CHECK(as_text.find("  [39]: 117\n") != std::string::npos);
  CHECK(as_text.find("none: []\n") != std::string::npos);
  CHECK(as_text.find("    empty: {}\n") != std::string::npos);
  CHECK(as_text.find("name: a\\nb\\x1b\n") != std::string::npos);
}

TEST_CASE("document stream: every foreign sample's dump streams to the whole document's text") {
  std::size_t dumped = 0;
  for (const auto& entry : fs::recursive_directory_iterator(UNTOLD_TEST_DATA_DIR)) {
    if (!entry.is_regular_file()) continue;
    const std::vector<std::byte> bytes = cli_test::read_bytes(entry.path());
    const untold::tools::format_handler* handler = untold::tools::recognise(bytes);
    if (handler == nullptr || handler->dump == nullptr) continue;
    const std::string path = entry.path().string();
    CAPTURE(path);
    std::optional<json> refused;
    const std::string as_json = streamed(document_stream::syntax::json, [&](document_stream& out) {
      refused = handler->dump(path, bytes, out);
    });
    if (refused) {  // hostile samples: nothing written, the refusal returned
      CHECK(as_json.empty());
      CHECK(refused->at("valid") == false);
      continue;
    }
    const json whole = json::parse(as_json);
    CHECK(whole.at("valid") == true);
    CHECK(as_json == untold::tools::to_text(whole));
    const std::string as_text = streamed(document_stream::syntax::text, [&](document_stream& out) {
      (void)handler->dump(path, bytes, out);
    });
    CHECK(as_text == untold::tools::json_as_text(whole));
    ++dumped;
  }
  CHECK(dumped >= 10);  // Urho3D models, animations, packages; UDM; assetc
}
