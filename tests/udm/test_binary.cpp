// Binary UDM: the real fixtures, every one of the 36 types written and read
// back, and one crafted file per rejection rule.
#include "udm_support.hpp"

#include <untold/udm/ascii.hpp>

#include <cmath>
#include <numeric>

using namespace untold;
using namespace udm_test;
namespace u = untold::udm;

TEST_CASE("fixtures parse to their last byte and round-trip byte-exactly") {
  for (const char* name : fixture_names) {
    CAPTURE(name);
    const bytes f = fixture(name);
    auto doc = u::open_document(f);
    REQUIRE_MESSAGE(doc, (doc ? "" : doc.error().describe()));
    CHECK(doc->parsed_bytes() == f.size());
    CHECK(doc->version() == 2);
    CHECK(doc->asset_type() == "PMDL");
    CHECK(doc->asset_version() == 1);
    CHECK(doc->asset_data().is_element());
    auto out = u::write_binary(u::tree_from_view(doc->root()), {doc->version()});
    REQUIRE(out);
    CHECK(same(*out, f));
  }
}

TEST_CASE("fixture content: cube navigation, typed getters, struct arrays, LZ4 arrays") {
  const bytes f = fixture("cube");
  auto doc = u::open_document(f);
  REQUIRE(doc);
  const u::property_view data = doc->asset_data();
  auto sub = data.find("meshGroups/reference/meshes/0/subMeshes/0/assetData");
  REQUIRE(sub);
  CHECK((*sub)["geometryType"].as_string().value() == "Triangles");
  auto verts = (*sub)["vertices"].as_structs();
  REQUIRE(verts);
  CHECK(verts->size() == 36);
  CHECK(verts->stride() == 48);
  REQUIRE(verts->layout().member_count() == 4);
  CHECK(verts->layout().member(0).name == "pos");
  CHECK(verts->layout().member(3).kind == u::type::vector4);
  const auto pos = verts->layout().find("pos");
  REQUIRE(pos);
  for (std::size_t i = 0; i < verts->size(); ++i) {
    const u::vec3 p = verts->get<u::vec3>(i, *pos);
    CHECK(std::fabs(p.x) == doctest::Approx(1.0f));  // a unit cube
  }
  auto idx = (*sub)["indices"].as_array<std::uint16_t>();
  REQUIRE(idx);
  CHECK(idx->size() == 36);
  REQUIRE(idx->span());  // decompressed data is aligned
  for (std::size_t i = 0; i < idx->size(); ++i) CHECK((*idx)[i] < 36);
  // Type mismatch is an error value naming the key.
  auto wrong = (*sub)["indices"].as_array<std::uint32_t>();
  REQUIRE(!wrong);
  CHECK(wrong.error().code == errc::udm_type_mismatch);
  CHECK(wrong.error().subject() == "indices");
  auto bad_scalar = (*sub)["geometryType"].as<float>();
  REQUIRE(!bad_scalar);
  CHECK(bad_scalar.error().code == errc::udm_type_mismatch);
  auto missing = data.find("meshGroups/nothing/meshes");
  REQUIRE(!missing);
  CHECK(missing.error().code == errc::udm_not_found);
  CHECK(missing.error().subject() == "nothing");
  CHECK(!data["nope"]);
  CHECK(!data["nope"]["deeper"]);  // lookups on a missing view stay invalid
  CHECK(data["mass"].as<float>().value() == 1.0f);
  CHECK(doc->stats().lz4_arrays > 0);
  CHECK(doc->stats().max_depth >= 7);
  // Iteration in file order.
  std::size_t n = 0;
  for (u::property_view c : data) {
    CHECK(!c.key().empty());
    ++n;
  }
  CHECK(n == data.size());
}


TEST_CASE("every one of the 36 types is written and read back") {
  const u::property tree = every_type_tree();
  auto written = u::write_binary(tree);
  REQUIRE_MESSAGE(written, (written ? "" : written.error().describe()));
  auto doc = u::open_document(*written);
  REQUIRE_MESSAGE(doc, (doc ? "" : doc.error().describe()));
  CHECK(doc->parsed_bytes() == written->size());
  CHECK(doc->asset_type() == "TEST");
  CHECK(doc->asset_version() == 3);
  const u::property_view d = doc->asset_data();
  std::vector<bool> seen(u::type_count, false);
  for (u::property_view c : d) seen[static_cast<std::size_t>(c.kind())] = true;
  for (std::size_t t = 0; t < u::type_count; ++t) {
    CAPTURE(t);
    CHECK(seen[t]);
  }
  CHECK(d["nil"].kind() == u::type::nil);
  CHECK(d["string"].as_string().value() == "hello");
  CHECK(d["utf8"].as_string().value() == "h\xc3\xa9llo");
  CHECK(d["int8"].as<std::int8_t>().value() == -7);
  CHECK(d["uint8"].as<std::uint8_t>().value() == 250);
  CHECK(d["int16"].as<std::int16_t>().value() == -30000);
  CHECK(d["uint16"].as<std::uint16_t>().value() == 65000);
  CHECK(d["int32"].as<std::int32_t>().value() == -2000000000);
  CHECK(d["uint32"].as<std::uint32_t>().value() == 4000000000u);
  CHECK(d["int64"].as<std::int64_t>().value() == -9000000000000000000ll);
  CHECK(d["uint64"].as<std::uint64_t>().value() == 18000000000000000000ull);
  CHECK(d["float"].as<float>().value() == 0.1f);
  CHECK(d["double"].as<double>().value() == 1.0 / 3.0);
  CHECK(d["bool"].as<bool>().value());
  CHECK(d["vec2"].as<u::vec2>().value().y == -2.5f);
  CHECK(d["vec3"].as<u::vec3>().value().z == 3);
  CHECK(d["vec4"].as<u::vec4>().value().w == 4);
  CHECK(d["quat"].as<u::quat>().value().w == 0.9f);
  CHECK(d["ang"].as<u::euler_angles>().value().r == 30);
  CHECK(d["srgba"].as<u::srgba>().value().g == 128);
  CHECK(d["hdr"].as<u::hdr_color>().value().r == 800);
  CHECK(d["transform"].as<u::transform>().value().translation.z == 7);
  CHECK(d["stransform"].as<u::scaled_transform>().value().scale.y == 6);
  CHECK(d["mat4"].as<u::mat4>().value().m[15] == 16);
  CHECK(d["mat3x4"].as<u::mat3x4>().value().m[11] == 6);
  CHECK(d["blob"].as_blob().value().size() == 1000);
  CHECK(d["lz4"].as_blob().value().size() == 1000);
  CHECK(d["lz4"].as_blob().value()[999] == std::byte{0x5A});
  CHECK(d.find("element/inner/deepest").value().as<float>().value() == 5.0f);
  CHECK(d["ref"].as_string().value() == "path/test/value");
  auto st = d["struct"].as_structs();
  REQUIRE(st);
  CHECK(st->size() == 1);
  CHECK(st->get<u::vec3>(0, *st->layout().find("v")).y == 3);
  CHECK(st->get<u::half>(0, *st->layout().find("h")).bits == 0x3C00);
  CHECK(d["half"].as<u::half>().value().bits == 0x3555);
  CHECK(d["vec2i"].as<u::vec2i>().value().x == -1);
  CHECK(d["vec3i"].as<u::vec3i>().value().z == -3);
  CHECK(d["vec4i"].as<u::vec4i>().value().w == 4);
  CHECK(d["s254"].as_string().value().size() == 254);
  CHECK(d["s255"].as_string().value() == std::string(255, 'b'));
  CHECK(d["s300"].as_string().value() == std::string(300, 'c'));
  // Arrays of every trivial type, plain and LZ4, hold the same bytes.
  for (u::property_view a : d["arrays"]) {
    CAPTURE(a.key());
    const u::property_view z = d["lz4Arrays"][a.key()];
    REQUIRE(z.kind() == u::type::array_lz4);
    CHECK(a.size() == 3);
    CHECK(z.size() == 3);
    CHECK(std::equal(a.raw().begin(), a.raw().end(), z.raw().begin(), z.raw().end()));
  }
  CHECK(d["arrays"]["float"].as_array<float>().value().size() == 3);
  CHECK(d["emptyArray"].size() == 0);
  CHECK(d["emptyLz4"].size() == 0);
  CHECK(d["emptyLz4"].stored().empty());
  CHECK(d["emptyLz4Elements"].size() == 0);
  CHECK(d["strings"][2].as_string().value().size() == 400);
  CHECK(d["lz4Strings"][2].as_string().value().size() == 400);
  CHECK(d["lz4Strings"][1].as_string().value().empty());
  CHECK(d.find("elements/2/sub/name").value().as_string().value() == "n2");
  CHECK(d.find("lz4Elements/1/sub/name").value().as_string().value() == "n1");
  CHECK(d["lz4Elements"][0]["i"].as<std::int32_t>().value() == 0);
  CHECK(d["structs"].as_structs().value().size() == 4);
  CHECK(d["lz4Structs"].as_structs().value().bytes().size() == 4 * 19);
  CHECK(d["blobLz4s"][0].as_blob().value().size() == 1000);
  CHECK(d["arrayOfArrays"][0].as_array<std::int32_t>().value()[1] == 2);
  CHECK(d["arrayOfLz4Arrays"][0].as_array<std::int32_t>().value()[0] == 1);
  // The copy is the same tree, and writing it again gives the same bytes.
  const u::property copy = u::tree_from_view(doc->root());
  CHECK(copy == tree);
  auto again = u::write_binary(copy);
  REQUIRE(again);
  CHECK(same(*again, *written));
  // decompress_array gives back the uncompressed values.
  auto back = u::decompress_array(*tree.find("assetData")->find("lz4Elements"));
  REQUIRE(back);
  CHECK(*back == *tree.find("assetData")->find("elements"));
}

TEST_CASE("writer rejects trees it cannot write") {
  u::property root = u::make_element();
  root.add(std::string(256, 'k'), u::make_value<float>(1));
  auto r = u::write_binary(root);
  REQUIRE(!r);
  CHECK(r.error().code == errc::udm_bad_tree);

  u::property dup = u::make_element();
  dup.add("a", u::make_nil());
  dup.add("a", u::make_nil());
  CHECK(u::write_binary(dup).error().code == errc::udm_duplicate_key);

  u::property bad_struct = u::make_element();
  bad_struct.add("s", u::make_struct({{u::type::string}, {"x"}}, {}));
  CHECK(u::write_binary(bad_struct).error().code == errc::udm_struct_member);

  u::property bad_size = u::make_element();
  u::property v = u::make_value<float>(1);
  v.bytes.pop_back();
  bad_size.add("v", v);
  CHECK(u::write_binary(bad_size).error().code == errc::udm_bad_tree);

  CHECK(u::write_binary(u::make_value<float>(1)).error().code == errc::udm_bad_root);
  CHECK(u::compress_array(u::make_array_of(u::type::blob, {})).error().code == errc::udm_array_type);
}

TEST_CASE("the writer reads what it wrote back: LZ4 data no reader accepts is its error") {
  // Audit: `udm convert` from ASCII wrote files with bad LZ4 data or declared
  // sizes of 2^64-1 and 2^40 that the reader then rejected, and exited 0.
  const std::vector<std::byte> raw(64, std::byte{7});
  const u::property z = u::make_blob_lz4(raw).value();
  auto with = [](u::property p) {
    u::property data = u::make_element();
    data.add("z", std::move(p));
    return u::make_asset("T", 1, std::move(data));
  };
  CHECK(u::write_binary(with(z)));
  struct bad_case {
    std::uint64_t declared;
    bool corrupt;
    errc expected;
  };
  for (const bad_case c : {bad_case{~0ull, false, errc::udm_limit}, bad_case{1ull << 40, false, errc::udm_limit},
                           bad_case{65, false, errc::udm_lz4}, bad_case{64, true, errc::udm_lz4}}) {
    CAPTURE(c.declared);
    u::property bad = z;
    bad.uncompressed_size = c.declared;
    if (c.corrupt)
      for (auto& b : bad.bytes) b = std::byte{0xFF};
    auto r = u::write_binary(with(bad));
    REQUIRE(!r);
    CHECK(r.error().code == c.expected);
    CHECK(u::write_binary(with(bad), {.verify = false}));  // what the check is for
  }
  // A tree read from text: the text reader keeps LZ4 data as given.
  auto text = u::open_ascii("\"assetData\"\n{\n$lz4 z [18446744073709551615][AAAA]\n}\n$string assetType \"T\"\n"
                            "$uint32 assetVersion 1\n");
  REQUIRE(text);
  CHECK(u::write_binary(*text).error().code == errc::udm_limit);
  // The read-back uses the writer's limits.
  u::write_options tight;
  tight.limits.max_chunk_bytes = 63;
  CHECK(u::write_binary(with(z), tight).error().code == errc::udm_limit);
}

// ---- rejection rules: one crafted file each ---------------------------------------------------

TEST_CASE("UDM-MAGIC, UDM-VERSION, UDM-TRUNC on the header") {
  bytes f = file(element({}));
  CHECK(parse_error(f) == errc::ok);
  bytes bad = f;
  bad[3] = std::byte{'X'};
  CHECK(parse_error(bad) == errc::udm_bad_magic);
  for (std::uint32_t v : {0u, 3u, 0xFFFFFFFFu}) {
    CAPTURE(v);
    CHECK(parse_error(file(element({}), v)) == errc::udm_bad_version);
  }
  CHECK(parse_error(file(element({}), 1)) == errc::ok);
  CHECK(parse_error(bytes(f.begin(), f.begin() + 6)) == errc::udm_truncated);
  CHECK(parse_error(bytes{}) == errc::udm_truncated);
  CHECK(parse_error(bytes(f.begin(), f.begin() + 8)) == errc::udm_truncated);
}

TEST_CASE("UDM-ROOT: root type and the asset header") {
  CHECK(parse_error(file(string_prop("x").payload, 2, 1)) == errc::udm_bad_root);
  const u::open_options strict{};
  CHECK(parse_error(file(element({})), strict) == errc::udm_bad_root);
  CHECK(parse_error(asset_file({}), strict) == errc::ok);
  // assetVersion of the wrong type
  CHECK(parse_error(file(element({{"assetData", element_prop({})}, {"assetType", string_prop("X")},
                                  {"assetVersion", string_prop("1")}})),
                    strict) == errc::udm_bad_root);
}

TEST_CASE("UDM-TYPE: unknown type bytes") {
  for (int t : {36, 100, 255}) {
    CAPTURE(t);
    const bytes f = file(element({{"x", prop{static_cast<std::uint8_t>(t), {}}}}));
    auto e = u::open_document(f, relaxed());
    REQUIRE(!e);
    CHECK(e.error().code == errc::udm_unknown_type);
    CHECK(e.error().subject() == "x");
  }
  // unknown array value type
  CHECK(parse_error(file(element({{"a", prop{28, u8s({40, 0, 0, 0, 0})}}}))) == errc::udm_unknown_type);
}

TEST_CASE("UDM-BLOCK-SIZE and UDM-BLOCK-RANGE: element sizes") {
  const prop inner = element_prop({{"v", u32_prop(7)}});
  CHECK(parse_error(file(element({{"e", inner}, {"w", u32_prop(1)}}))) == errc::ok);
  // Inner element claims one byte more than its content: it swallows the
  // next type byte, so its content ends early -> the block size disagrees.
  prop longer = inner;
  untold::store_le_unchecked<std::uint64_t>(longer.payload.data(), untold::load_le_unchecked<std::uint64_t>(longer.payload.data()) + 1);
  CHECK(parse_error(file(element({{"e", longer}, {"w", u32_prop(1)}}))) == errc::udm_block_size);
  // One byte less: its value runs past its block.
  prop shorter = inner;
  untold::store_le_unchecked<std::uint64_t>(shorter.payload.data(), untold::load_le_unchecked<std::uint64_t>(shorter.payload.data()) - 1);
  CHECK(parse_error(file(element({{"e", shorter}, {"w", u32_prop(1)}}))) == errc::udm_block_size);
  // Far more than the parent holds.
  prop huge = inner;
  untold::store_le_unchecked<std::uint64_t>(huge.payload.data(), 1ull << 40);
  CHECK(parse_error(file(element({{"e", huge}, {"w", u32_prop(1)}}))) == errc::udm_block_range);
  // The root's own size past the end of the file.
  CHECK(parse_error(file(element({}, 100))) == errc::udm_block_range);
  // Array block size that disagrees with its strings.
  bytes arr;
  untold::byte_sink s(arr);
  s.put<std::uint8_t>(1);   // String values
  s.put<std::uint32_t>(1);  // one
  s.put<std::uint64_t>(3);  // block: claims 3 bytes
  s.put<std::uint8_t>(1);
  s.string("a");            // but the string uses 2
  s.put<std::uint8_t>(0);
  CHECK(parse_error(file(element({{"a", prop{28, arr}}}))) == errc::udm_block_size);
}

TEST_CASE("UDM-COUNT: counts that cannot fit are refused before allocating") {
  bytes el;
  untold::byte_sink s(el);
  s.put<std::uint64_t>(4);
  s.put<std::uint32_t>(0xFFFFFFFFu);  // 4 billion children in 0 bytes
  CHECK(parse_error(file(el)) == errc::udm_count_too_large);
  // Trivial array: 1M floats in 8 bytes.
  bytes arr;
  untold::byte_sink a(arr);
  a.put<std::uint8_t>(11);
  a.put<std::uint32_t>(1000000);
  a.put<std::uint64_t>(0);
  CHECK(parse_error(file(element({{"a", prop{28, arr}}}))) == errc::udm_count_too_large);
  // Element array: 1M elements in a 12-byte block.
  bytes earr;
  untold::byte_sink e(earr);
  e.put<std::uint8_t>(27);
  e.put<std::uint32_t>(1000000);
  e.put<std::uint64_t>(12);
  e.put<std::uint64_t>(4);
  e.put<std::uint32_t>(0);
  CHECK(parse_error(file(element({{"a", prop{28, earr}}}))) == errc::udm_count_too_large);
}

TEST_CASE("UDM-LIMITS: array counts and decompressed sizes over the caller's limits") {
  u::property data = u::make_element();
  data.add("a", u::make_array<float>(std::vector<float>(100, 1.0f)));
  data.add("z", u::make_blob_lz4(std::vector<std::byte>(5000, std::byte{1})).value());
  const bytes f = u::write_binary(data).value();
  auto o = relaxed();
  CHECK(parse_error(f, o) == errc::ok);
  o.limits.max_records = 99;
  CHECK(parse_error(f, o) == errc::udm_limit);
  o = relaxed();
  o.limits.max_chunk_bytes = 4999;
  CHECK(parse_error(f, o) == errc::udm_limit);
  o = relaxed();
  o.limits.max_total_bytes = 4000;
  CHECK(parse_error(f, o) == errc::udm_limit);
  // The document's total property count is capped by max_records too: 3
  // elements of 2 children each are 1 + 3 + 6 = 10 properties with the root.
  u::property many = u::make_element();
  for (int i = 0; i < 3; ++i) {
    u::property e = u::make_element();
    e.add("a", u::make_nil());
    e.add("b", u::make_nil());
    many.add("e" + std::to_string(i), std::move(e));
  }
  const bytes g = u::write_binary(many).value();
  o = relaxed();
  o.limits.max_records = 10;
  CHECK(parse_error(g, o) == errc::ok);
  o.limits.max_records = 9;
  CHECK(parse_error(g, o) == errc::udm_limit);
}

TEST_CASE("UDM-DEPTH: nesting over the limit, including a 100k-deep file") {
  auto nested = [](std::uint32_t levels) {
    // Written front to back: level k's size is known from the levels below.
    bytes out;
    untold::byte_sink s(out);
    s.string("UDMB");
    s.put<std::uint32_t>(2);
    s.put<std::uint8_t>(27);
    for (std::uint32_t k = levels; k > 0; --k) {
      s.put<std::uint64_t>(4 + 2 + 1 + 15ull * (k - 1) + 12);  // count, key, type, children
      s.put<std::uint32_t>(1);
      s.put<std::uint8_t>(1);
      s.string("a");
      s.put<std::uint8_t>(27);
    }
    s.put<std::uint64_t>(4);
    s.put<std::uint32_t>(0);
    return out;
  };
  CHECK(parse_error(nested(10)) == errc::ok);
  CHECK(parse_error(nested(254)) == errc::ok);  // 255 levels incl. the root
  CHECK(parse_error(nested(300)) == errc::udm_depth);
  const bytes deep_file = nested(100000);
  auto deep = u::open_document(deep_file, relaxed());
  REQUIRE(!deep);
  CHECK(deep.error().code == errc::udm_depth);
  CHECK(deep.error().context.limit == 256);
  auto o = relaxed();
  o.limits.max_depth = 200000;  // even a raised limit cannot overflow the stack: parsing is iterative
  CHECK(parse_error(nested(100000), o) == errc::ok);
}

TEST_CASE("UDM-LZ4: compressed data that does not decode to the declared size") {
  // The bad files are made by the writer with its read-back turned off.
  const u::write_options unverified{.verify = false};
  const std::vector<std::byte> raw(64, std::byte{7});
  u::property z = u::make_blob_lz4(raw).value();
  u::property data = u::make_element();
  data.add("z", z);
  CHECK(parse_error(u::write_binary(data).value()) == errc::ok);
  for (std::uint64_t declared : {63ull, 65ull, 1ull << 20}) {
    CAPTURE(declared);
    u::property bad = u::make_element();
    bad.add("z", z).uncompressed_size = declared;
    CHECK(parse_error(u::write_binary(bad, unverified).value()) == errc::udm_lz4);
  }
  // ArrayLz4 whose count disagrees with its data.
  u::property arr = u::compress_array(u::make_array<float>(std::vector<float>(16, 2.0f))).value();
  arr.count = 17;
  u::property bad = u::make_element();
  bad.add("a", arr);
  CHECK(parse_error(u::write_binary(bad, unverified).value()) == errc::udm_lz4);
  // Corrupt LZ4 bytes.
  u::property corrupt = u::make_element();
  u::property c = z;
  for (auto& b : c.bytes) b = std::byte{0xFF};
  corrupt.add("z", c);
  CHECK(parse_error(u::write_binary(corrupt, unverified).value()) == errc::udm_lz4);
  // An element ArrayLz4 whose inner count disagrees with the declared count.
  std::vector<u::property> els(2, u::make_element());
  u::property earr = u::compress_array(u::make_array_of(u::type::element, els)).value();
  earr.count = 3;
  u::property e = u::make_element();
  e.add("a", earr);
  CHECK(parse_error(u::write_binary(e, unverified).value()) == errc::udm_block_size);
}

TEST_CASE("UDM-STRUCT and UDM-ARRAY-TYPE") {
  auto struct_prop = [](std::initializer_list<int> types, std::size_t data_size) {
    bytes body;
    untold::byte_sink s(body);
    s.put<std::uint8_t>(static_cast<std::uint8_t>(types.size()));
    for (int t : types) s.put<std::uint8_t>(static_cast<std::uint8_t>(t));
    for (std::size_t i = 0; i < types.size(); ++i) put_string(s, "m");
    s.zeros(data_size);
    bytes out;
    untold::byte_sink o(out);
    o.put<std::uint16_t>(static_cast<std::uint16_t>(body.size()));
    o.bytes(body);
    return prop{31, out};
  };
  CHECK(parse_error(file(element({{"s", struct_prop({11, 15}, 16)}}))) == errc::ok);
  CHECK(parse_error(file(element({{"s", struct_prop({11, 1}, 4)}}))) == errc::udm_struct_member);   // String member
  CHECK(parse_error(file(element({{"s", struct_prop({27}, 0)}}))) == errc::udm_struct_member);      // Element member
  CHECK(parse_error(file(element({{"s", struct_prop({}, 0)}}))) == errc::udm_struct_member);        // no members
  CHECK(parse_error(file(element({{"s", struct_prop({11, 15}, 15)}}))) == errc::udm_struct_member); // data too short
  // ArrayLz4 of Blob values: Pragma cannot store those compressed.
  bytes z;
  untold::byte_sink s(z);
  s.put<std::uint64_t>(0);
  s.put<std::uint8_t>(25);
  s.put<std::uint32_t>(0);
  CHECK(parse_error(file(element({{"z", prop{29, z}}}))) == errc::udm_array_type);
}

TEST_CASE("UDM-TRUNC: a string whose length runs past the end") {
  bytes f = file(element({{"s", string_prop("abc")}}));
  CHECK(parse_error(f) == errc::ok);
  // The string's length byte is the last-but-3 byte: claim 200.
  f[f.size() - 4] = std::byte{200};
  CHECK(parse_error(f) == errc::udm_truncated);
  // A long-string escape whose u32 length runs past the end.
  bytes g = file(element({{"s", prop{1, u8s({255, 0xFF, 0xFF, 0xFF, 0x7F})}}}));
  CHECK(parse_error(g) == errc::udm_truncated);
}

TEST_CASE("UDM-TRAILING and UDM-DUP-KEY") {
  bytes f = file(element({{"a", u32_prop(1)}}));
  CHECK(parse_error(f) == errc::ok);
  f.push_back(std::byte{0});
  CHECK(parse_error(f) == errc::udm_trailing_bytes);
  const bytes dup_file = file(element({{"a", u32_prop(1)}, {"b", u32_prop(2)}, {"a", u32_prop(3)}}));
  auto dup = u::open_document(dup_file, relaxed());
  REQUIRE(!dup);
  CHECK(dup.error().code == errc::udm_duplicate_key);
  CHECK(dup.error().subject() == "a");
}

TEST_CASE("every truncation of every fixture is an error value, never a crash") {
  for (const char* name : fixture_names) {
    const bytes f = fixture(name);
    for (std::size_t n = 0; n < f.size(); n += 7) {
      auto d = u::open_document(byte_span(f.data(), n));
      CHECK(!d);
    }
  }
}

TEST_CASE("key lookup on an element with 1M children is not quadratic") {
  // 1M children (keys k0..k999999, Nil values): parse sorts once, lookups
  // are binary searches; finishing at all inside the test timeout shows it.
  constexpr std::uint32_t n = 1000000;
  bytes body;
  untold::byte_sink s(body);
  s.put<std::uint32_t>(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::string k = "k" + std::to_string(i);
    s.put<std::uint8_t>(static_cast<std::uint8_t>(k.size()));
    s.string(k);
  }
  for (std::uint32_t i = 0; i < n; ++i) s.put<std::uint8_t>(0);
  bytes payload;
  untold::byte_sink p(payload);
  p.put<std::uint64_t>(body.size());
  p.bytes(body);
  const bytes big = file(payload);  // the document views it: keep it alive
  auto doc = u::open_document(big, relaxed());
  REQUIRE(doc);
  CHECK(doc->root().size() == n);
  for (std::uint32_t i = 0; i < n; i += 997) CHECK(doc->root()["k" + std::to_string(i)].kind() == u::type::nil);
  CHECK(!doc->root()["k1000000"]);
}

TEST_CASE("values are read in place at any alignment") {
  u::property data = u::make_element();
  data.add("f", u::make_value(1.5f));
  data.add("v", u::make_array<double>(std::vector<double>{0.25, -2.0, 8.0}));
  data.add("m", u::make_value(u::mat4{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}));
  const bytes f = u::write_binary(data).value();
  for (std::size_t shift = 0; shift < 8; ++shift) {
    CAPTURE(shift);
    bytes buffer(f.size() + shift);
    std::memcpy(buffer.data() + shift, f.data(), f.size());
    const byte_span view(buffer.data() + shift, f.size());
    auto doc = u::open_document(view, relaxed());
    REQUIRE(doc);
    CHECK(doc->root()["f"].as<float>().value() == 1.5f);
    auto v = doc->root()["v"].as_array<double>();
    REQUIRE(v);
    CHECK(v->size() == 3);
    CHECK((*v)[1] == -2.0);
    CHECK(doc->root()["m"].as<u::mat4>().value().m[15] == 16.0f);
    // A std::span is offered only when the bytes happen to be aligned.
    const bool aligned = reinterpret_cast<std::uintptr_t>(v->bytes().data()) % alignof(double) == 0;
    CHECK(v->span().has_value() == aligned);
  }
}
