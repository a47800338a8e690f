// UDM ASCII: binary -> ASCII -> binary on the fixtures and on a tree with
// every type, Pragma's syntax variants, and the reader's rejections.
#include "udm_support.hpp"

#include <cmath>
#include <limits>

#include <untold/udm/ascii.hpp>

using namespace untold;
using namespace udm_test;

namespace {
u::property parse_ok(std::string_view text) {
  auto r = u::open_ascii(text);
  REQUIRE_MESSAGE(r, (r ? "" : r.error().describe()));
  return *r;
}
errc ascii_error(std::string_view text, const u::ascii_open_options& o = {}) {
  auto r = u::open_ascii(text, o);
  return r ? errc::ok : r.error().code;
}
std::string wrap(std::string_view data) {
  return "\"assetData\"\n{\n" + std::string(data) + "\n}\n$string assetType \"T\"\n$uint32 assetVersion 1\n";
}
}  // namespace

TEST_CASE("fixtures: binary -> ASCII -> binary is byte-identical") {
  for (const char* name : fixture_names) {
    CAPTURE(name);
    const bytes f = fixture(name);
    auto doc = u::open_document(f);
    REQUIRE(doc);
    const u::property tree = u::tree_from_view(doc->root());
    auto text = u::write_ascii(tree);
    REQUIRE(text);
    CHECK(u::looks_like_ascii_udm(*text));
    const u::property back = parse_ok(*text);
    CHECK(back == tree);
    auto out = u::write_binary(back, {doc->version()});
    REQUIRE(out);
    CHECK(same(*out, f));
    // Writing the re-read tree gives the same text: the text form is stable.
    CHECK(u::write_ascii(back).value() == *text);
  }
}

TEST_CASE("golden text: the cube's ASCII form is stable and converts back to the original bytes") {
  const bytes golden = load(std::filesystem::path(UNTOLD_TEST_DATA_DIR) / "udm" / "ascii" / "cube.udm");
  const std::string_view text(reinterpret_cast<const char*>(golden.data()), golden.size());
  const bytes f = fixture("cube");
  auto doc = u::open_document(f);
  REQUIRE(doc);
  CHECK(u::write_ascii(u::tree_from_view(doc->root())).value() == text);
  CHECK(same(u::write_binary(parse_ok(text)).value(), f));
}

TEST_CASE("every type survives binary -> ASCII -> binary") {
  const u::property tree = every_type_tree();
  const bytes bin = u::write_binary(tree).value();
  auto text = u::write_ascii(tree);
  REQUIRE(text);
  const u::property back = parse_ok(*text);
  CHECK(back == tree);
  CHECK(same(u::write_binary(back).value(), bin));
}

TEST_CASE("floats print round-trippably, including extremes") {
  u::property data = u::make_element();
  const float floats[] = {0.1f, 1e-38f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                          -0.0f, std::numeric_limits<float>::infinity(), 16777217.0f, 3.14159274f};
  for (std::size_t i = 0; i < std::size(floats); ++i) data.add("f" + std::to_string(i), u::make_value(floats[i]));
  data.add("d", u::make_value(0.1 + 0.2));
  data.add("dmax", u::make_value(std::numeric_limits<double>::max()));
  data.add("h", u::make_value(u::half{0x3BFF}));
  data.add("hsub", u::make_value(u::half{0x0001}));
  data.add("i64", u::make_value(std::numeric_limits<std::int64_t>::min()));
  data.add("u64", u::make_value(std::numeric_limits<std::uint64_t>::max()));
  data.add("b2", u::property{u::type::boolean, {std::byte{2}}, {}, {}, u::type::nil, 0, 0, {}});
  const u::property root = u::make_asset("T", 1, data);
  const u::property back = parse_ok(u::write_ascii(root).value());
  CHECK(back == root);
}

TEST_CASE("Pragma's syntax: comments, unquoted keys, header-less files, uncompressed ArrayLz4") {
  const u::property a = parse_ok(wrap(R"(
    // a comment
    $float   mass   2.5   /* block
    comment */
    $quat q [1,0,0,0]
    $transform t [[1,2,3][1,0,0,0]]
    $bool on true
    $string "key with space" "a \"quoted\" \\ string"
    bones { child { $int32 i -3 } }
    $arrayLz4 z [float;3][1,2,3]
    $array e [element;2][{ $int8 x 1 }, { }]
    $struct<vec3:pos,float:w> s [[1,2,3],4]
    $array sa [struct<uint8:a,uint8:b>;2][[1,2],[3,4]]
    $array n [nil;2][nil,nil]
    $utf8 u [base64][aMOpbGxv]
    $blob b [AAEC]
    $lz4 l [3][MAABAg==]
  )"));
  const u::property& d = *a.find("assetData");
  CHECK(u::load_value<float>(d.find("mass")->bytes.data()) == 2.5f);
  const u::quat q = u::load_value<u::quat>(d.find("q")->bytes.data());
  CHECK(q.w == 1.0f);  // text is w first
  CHECK(q.x == 0.0f);
  const u::transform t = u::load_value<u::transform>(d.find("t")->bytes.data());
  CHECK(t.translation.z == 3.0f);
  CHECK(t.rotation.w == 1.0f);
  CHECK(d.find("on")->bytes[0] == std::byte{1});
  const auto& s = d.find("key with space")->bytes;
  CHECK(std::string(reinterpret_cast<const char*>(s.data()), s.size()) == "a \"quoted\" \\ string");
  CHECK(d.find("bones")->find("child")->find("i") != nullptr);
  const u::property* z = d.find("z");
  REQUIRE(z);
  CHECK(z->kind == u::type::array_lz4);  // given uncompressed, stored compressed
  CHECK(z->count == 3);
  CHECK(d.find("e")->items.size() == 2);
  CHECK(d.find("s")->bytes.size() == 16);
  CHECK(d.find("sa")->count == 2);
  CHECK(d.find("n")->count == 2);
  CHECK(d.find("u")->bytes.size() == 6);
  CHECK(d.find("b")->bytes.size() == 3);
  // The result is writable and reads back in binary.
  auto bin = u::write_binary(a);
  REQUIRE(bin);
  auto doc = u::open_document(*bin);
  REQUIRE(doc);
  CHECK(doc->asset_data()["z"].as_array<float>().value()[2] == 3.0f);
  // A file without the header is assetData alone, as Pragma reads it.
  const u::property bare = parse_ok("$float x 1\n");
  CHECK(bare.find("assetType") != nullptr);
  CHECK(bare.find("assetData")->find("x") != nullptr);
}

TEST_CASE("sort_keys writes Pragma's sorted order, include_header=false writes assetData alone") {
  u::property data = u::make_element();
  data.add("b", u::make_value<float>(1));
  data.add("a", u::make_value<float>(2));
  const u::property root = u::make_asset("T", 1, data);
  const std::string sorted = u::write_ascii(root, {.sort_keys = true}).value();
  CHECK(sorted.find("$float a") < sorted.find("$float b"));
  CHECK(sorted.find("\"assetData\"") < sorted.find("assetType"));
  const std::string plain = u::write_ascii(root).value();
  CHECK(plain.find("$float b") < plain.find("$float a"));
  const std::string body = u::write_ascii(root, {.include_header = false}).value();
  CHECK(body.find("assetType") == std::string::npos);
  CHECK(parse_ok(body).find("assetData")->find("a") != nullptr);
}

TEST_CASE("ASCII rejections: syntax, values, depth, limits") {
  CHECK(ascii_error(wrap("$float x 1")) == errc::ok);
  CHECK(ascii_error(wrap("$float x")) == errc::udm_ascii_syntax);        // value missing before '}'
  CHECK(ascii_error(wrap("$floaty x 1")) == errc::udm_ascii_syntax);     // unknown type name
  CHECK(ascii_error(wrap("$float x abc")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$uint8 x 256")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$int8 x -129")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$vec3 x [1,2]")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$vec3 x [1,2,3,4]")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$vec3 x [1,2,3")) == errc::udm_ascii_syntax);
  CHECK(ascii_error(wrap("$string x \"unterminated")) == errc::udm_ascii_syntax);
  CHECK(ascii_error(wrap("$blob x [@@@@]")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$struct<string:s> x [\"a\"]")) == errc::udm_struct_member);
  CHECK(ascii_error(wrap("$struct<> x []")) == errc::udm_struct_member);
  CHECK(ascii_error(wrap("$arrayLz4 x [blob;1;4][AAAA]")) == errc::udm_array_type);
  CHECK(ascii_error(wrap("$float x 1\n$float x 2")) == errc::udm_duplicate_key);
  CHECK(ascii_error(wrap("child {")) == errc::udm_ascii_syntax);
  CHECK(ascii_error("}") == errc::udm_ascii_syntax);
  CHECK(ascii_error(wrap("$string " + std::string(256, 'k') + " \"v\"")) == errc::udm_bad_tree);
  // Header of the wrong type.
  CHECK(ascii_error("\"assetData\" {}\n$float assetType 1\n$uint32 assetVersion 1") == errc::udm_bad_root);
  // Depth: 100k nested blocks is an error value, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "a{";
  CHECK(ascii_error(deep) == errc::udm_depth);
  std::string deep_arrays = "$array x ";
  for (int i = 0; i < 100000; ++i) deep_arrays += "[array;1][";
  CHECK(ascii_error(deep_arrays) == errc::udm_depth);
  // Limits: array count over max_records.
  u::ascii_open_options o;
  o.limits.max_records = 2;
  CHECK(ascii_error(wrap("$array x [float;3][1,2,3]"), o) == errc::udm_limit);
  CHECK(ascii_error(wrap("$array x [float][1,2,3]"), o) == errc::udm_limit);
}

TEST_CASE("looks_like_ascii_udm sniffs the start") {
  CHECK(u::looks_like_ascii_udm("\"assetData\"\n{"));
  CHECK(u::looks_like_ascii_udm("  // c\n$float x 1"));
  CHECK(u::looks_like_ascii_udm("$struct<float:a> s [1]"));
  CHECK(!u::looks_like_ascii_udm("UDMB"));
  CHECK(!u::looks_like_ascii_udm("{\"json\": 1}"));
  CHECK(!u::looks_like_ascii_udm("$foo x"));
}

TEST_CASE("ASCII: empty text and NUL bytes are errors, not an empty asset") {
  // Each used to read as assetType "nil" (or ignore what followed the NUL)
  // and convert to a binary file.
  auto failure = [](std::string_view text) {
    auto r = u::open_ascii(text);
    REQUIRE_MESSAGE(!r, "accepted");
    return r.error();
  };
  error e = failure("");
  CHECK(e.code == errc::udm_ascii_syntax);
  CHECK(std::string(e.context.field) == "empty text");
  CHECK(std::string(failure("  \n// only a comment\n").context.field) == "empty text");
  e = failure(std::string_view("\0", 1));
  CHECK(e.code == errc::udm_ascii_syntax);
  CHECK(std::string(e.context.field) == "NUL byte");
  CHECK(e.context.offset == 0);
  const std::string valid = wrap("$float x 1");
  CHECK(u::open_ascii(valid));
  const std::string tail = valid + std::string(1, '\0') + "garbage";
  e = failure(tail);
  CHECK(std::string(e.context.field) == "NUL byte");
  CHECK(e.context.offset == valid.size());
  // Inside a string too: the text form cannot carry a NUL, so the writer
  // refuses a tree that holds one rather than write text nobody reads.
  e = failure(wrap("$string s \"a") + std::string(1, '\0') + "b\"");
  CHECK(std::string(e.context.field) == "NUL byte");
  u::property data = u::make_element();
  data.add("s", u::make_string(std::string("a\0b", 3)));
  auto text = u::write_ascii(u::make_asset("T", 1, data));
  REQUIRE(!text);
  CHECK(text.error().code == errc::udm_bad_tree);
  CHECK(std::string(text.error().context.field) == "string");
  u::property keyed = u::make_element();
  keyed.add(std::string("k\0", 2), u::make_nil());
  CHECK(u::write_ascii(u::make_asset("T", 1, keyed)).error().code == errc::udm_bad_tree);
}

TEST_CASE("ASCII: a Half literal past the Half range and an array shorter than its count are value errors") {
  CHECK(ascii_error(wrap("$half h 65504")) == errc::ok);  // the largest Half
  CHECK(ascii_error(wrap("$half h inf")) == errc::ok);    // written as such
  CHECK(ascii_error(wrap("$half h -inf")) == errc::ok);
  auto big = u::open_ascii(wrap("$half h 1e10"));  // used to become inf silently
  REQUIRE(!big);
  CHECK(big.error().code == errc::udm_ascii_value);
  CHECK(std::string(big.error().context.field) == "half");
  CHECK(big.error().context.value_is_float);
  CHECK(ascii_error(wrap("$half h -70000")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$array h [half;2][1,1e10]")) == errc::udm_ascii_value);
  // The declared count is the count.
  CHECK(ascii_error(wrap("$array a [int32;2][1,2]")) == errc::ok);
  auto fewer = u::open_ascii(wrap("$array a [int32;5][1,2]"));
  REQUIRE(!fewer);
  CHECK(fewer.error().code == errc::udm_ascii_value);
  CHECK(std::string(fewer.error().context.field) == "count");
  CHECK(fewer.error().context.value == 2);
  CHECK(fewer.error().context.limit == 5);
  CHECK(ascii_error(wrap("$array a [int32;1][1,2]")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$array a [string;3][\"x\"]")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$arrayLz4 a [float;3][1,2]")) == errc::udm_ascii_value);
  CHECK(ascii_error(wrap("$array a [int32][1,2]")) == errc::ok);  // no count given: the values say it
}
