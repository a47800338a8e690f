// The meshopt chunk compressions (3 meshopt, 4 meshopt+zstd; mesh_codec.hpp,
// docs/format.md "meshopt chunks"): written and read back exactly, cut one
// stream per mesh so a mesh loaded by byte range decodes only its own, and
// every directory rule refused with its rule id (R-DECOMPRESS,
// R-CODEC-CHUNK).
#include "../support.hpp"

#include <untold/mesh_codec.hpp>
#include <untold/ranges.hpp>

#include <algorithm>
#include <set>
#include <string>

using test::bytes;
using untold::compression;
using untold::errc;

namespace {

constexpr std::uint32_t kVertex = 6, kIndex = 7;

const compression kMethods[] = {compression::meshopt, compression::meshopt_zstd};

bytes write_with(compression method, bool content_hash = true) {
  untold::write_options options;
  options.compression.data = {method, 3};
  return test::write_scene(content_hash, options);
}

untold::byte_span payload(const untold::asset& a, std::uint32_t type) {
  const auto row = a.find_chunk(static_cast<untold::chunk_type>(type));
  REQUIRE(row);
  return a.payload(*row);
}

std::vector<untold::codec_stream> directory_of(const bytes& f, std::uint32_t type) {
  const auto a = untold::open(f, {.limits = test::roomy_limits()});
  REQUIRE(a);
  const auto row = a->find_chunk(static_cast<untold::chunk_type>(type));
  REQUIRE(row);
  const untold::chunk_entry& c = a->chunks()[*row];
  const auto streams = untold::parse_codec_directory(static_cast<compression>(c.compression_type),
                                                     untold::byte_span(f).subspan(c.file_offset, c.compressed_size),
                                                     c.compressed_size);
  REQUIRE_MESSAGE(streams, streams.error().describe());
  return *streams;
}

/// A meshopt chunk's stored bytes built by hand: directory entries, then streams.
struct crafted_stream {
  std::uint64_t raw_offset;
  std::uint32_t count;
  std::uint16_t size;
  std::uint8_t kind;
  bytes stored;
  std::uint8_t reserved = 0;
};
bytes craft(const std::vector<crafted_stream>& streams, std::uint32_t reserved = 0) {
  bytes out(8 + 24 * streams.size());
  untold::store_le_unchecked<std::uint32_t>(out.data(), static_cast<std::uint32_t>(streams.size()));
  untold::store_le_unchecked<std::uint32_t>(out.data() + 4, reserved);
  for (std::size_t i = 0; i < streams.size(); ++i) {
    std::byte* e = out.data() + 8 + 24 * i;
    untold::store_le_unchecked<std::uint64_t>(e, streams[i].raw_offset);
    untold::store_le_unchecked<std::uint32_t>(e + 8, streams[i].count);
    untold::store_le_unchecked<std::uint16_t>(e + 12, streams[i].size);
    e[14] = std::byte{streams[i].kind};
    e[15] = std::byte{streams[i].reserved};
    untold::store_le_unchecked<std::uint64_t>(e + 16, streams[i].stored.size());
  }
  for (const auto& s : streams) out.insert(out.end(), s.stored.begin(), s.stored.end());
  return out;
}

/// meshoptimizer's encoding of `count` vertices of `size` bytes (values i*7).
bytes encoded_vertices(std::uint32_t count, std::uint16_t size, bytes* raw = nullptr) {
  bytes data(std::size_t{count} * size);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 7);
  const untold::codec_input in{data, size, true};
  std::vector<std::byte> out;
  REQUIRE(untold::encode_codec_stream(in, out));
  if (raw != nullptr) *raw = data;
  return out;
}

/// The decode error of `stored` as a meshopt chunk of `size` bytes: "ok" or "rule field".
std::string decode_error(const bytes& stored, std::size_t size, compression method = compression::meshopt) {
  bytes out(size);
  const auto s = untold::decompress(method, stored, out);
  if (s) return "ok";
  return std::string(s.error().rule_id()) + " " + (s.error().context.field ? s.error().context.field : "-");
}

}  // namespace

TEST_CASE("mesh codec: meshopt and meshopt+zstd files hold exactly the uncompressed file's geometry") {
  if (!untold::compression_available(compression::meshopt_zstd)) return;
  const bytes plain = test::write_scene(true);
  const auto expected = untold::open(plain, {.limits = test::roomy_limits(), .deep_checks = true, .integrity = untold::integrity::full});
  REQUIRE(expected);
  for (const compression method : kMethods) {
    CAPTURE(untold::compression_name(static_cast<std::uint32_t>(method)));
    const bytes f = write_with(method);
    const auto a = untold::open(f, {.limits = test::roomy_limits(), .deep_checks = true, .integrity = untold::integrity::full});
    REQUIRE_MESSAGE(a, a.error().describe());
    for (const std::uint32_t type : {kVertex, kIndex}) {
      const auto row = a->find_chunk(static_cast<untold::chunk_type>(type));
      CHECK(a->chunks()[*row].compression_type == static_cast<std::uint32_t>(method));
      const auto got = payload(*a, type), want = payload(*expected, type);
      CHECK(std::equal(got.begin(), got.end(), want.begin(), want.end()));
    }
    // Other data chunks never use the mesh codecs: meshopt stores them
    // uncompressed, meshopt+zstd as zstd.
    for (const untold::chunk_entry& c : a->chunks())
      if (c.chunk_type != kVertex && c.chunk_type != kIndex)
        CHECK(c.compression_type <= static_cast<std::uint32_t>(compression::zstd));
    // Same bytes every time.
    CHECK(write_with(method) == f);
  }
}

TEST_CASE("mesh codec: one stream per stored mesh, in payload order, with the layout's stride and index size") {
  if (!untold::compression_available(compression::meshopt)) return;
  const bytes f = write_with(compression::meshopt);
  const auto a = untold::open(f, {.limits = test::roomy_limits()});
  REQUIRE(a);
  const auto vertex_streams = directory_of(f, kVertex), index_streams = directory_of(f, kIndex);
  std::set<std::uint64_t> stored_ranges;
  for (const untold::mesh_record& m : a->meshes()) stored_ranges.insert(m.vertex_data_offset);
  REQUIRE(vertex_streams.size() == stored_ranges.size());
  REQUIRE(index_streams.size() == stored_ranges.size());
  for (const untold::mesh_record& m : a->meshes()) {
    const auto v = std::find_if(vertex_streams.begin(), vertex_streams.end(),
                                [&](const untold::codec_stream& s) { return s.raw_offset == m.vertex_data_offset; });
    REQUIRE(v != vertex_streams.end());
    CHECK(v->raw_size() == m.vertex_data_size_bytes);
    CHECK(v->element_size == 32);
    CHECK((v->kind == untold::codec_stream_kind::vertex || untold::is_plain_kind(v->kind)));
    const auto i = std::find_if(index_streams.begin(), index_streams.end(),
                                [&](const untold::codec_stream& s) { return s.raw_offset == m.index_data_offset; });
    REQUIRE(i != index_streams.end());
    CHECK(i->raw_size() == m.index_data_size_bytes);
    CHECK(i->element_size == untold::index_size(m.index_type));
    CHECK((i->kind == untold::codec_stream_kind::index_triangles || i->kind == untold::codec_stream_kind::index_sequence ||
           untold::is_plain_kind(i->kind)));
  }
}

TEST_CASE("mesh codec: a triangle the index codec would rotate is kept exact by the sequence codec") {
  if (!untold::compression_available(compression::meshopt)) return;
  // The second triangle shares edge (1,2) with the first but starts elsewhere:
  // the triangle codec would hand it back rotated.
  const std::vector<std::uint32_t> rotated = {0, 1, 2, 3, 2, 1, 4, 3, 1, 5, 4, 1};
  bytes raw(rotated.size() * 4);
  for (std::size_t i = 0; i < rotated.size(); ++i) untold::store_le_unchecked<std::uint32_t>(raw.data() + 4 * i, rotated[i]);
  std::vector<std::byte> encoded;
  const auto kind = untold::encode_codec_stream({raw, 4, false}, encoded);
  REQUIRE(kind);
  const auto stored = craft({{0, static_cast<std::uint32_t>(rotated.size()), 4, static_cast<std::uint8_t>(*kind), encoded}});
  bytes out(raw.size());
  REQUIRE(untold::decompress(compression::meshopt, stored, out));
  CHECK(out == raw);
  // An index list the triangle codec keeps as is uses it.
  const std::vector<std::uint32_t> plain = {0, 1, 2, 2, 1, 3};
  bytes raw2(plain.size() * 4);
  for (std::size_t i = 0; i < plain.size(); ++i) untold::store_le_unchecked<std::uint32_t>(raw2.data() + 4 * i, plain[i]);
  encoded.clear();
  const auto kept = untold::encode_codec_stream({raw2, 4, false}, encoded);
  REQUIRE(kept);
  CHECK(*kept == untold::codec_stream_kind::index_triangles);
}

TEST_CASE("mesh codec: indices 2^30 apart, which the sequence codec cannot keep, are stored raw and come back exact") {
  if (!untold::compression_available(compression::meshopt_zstd)) return;
  // Not triangles the triangle codec keeps, and deltas beyond the sequence
  // codec's 30 bits (fuzz/corpus/fuzz_mesh_codec/regress-sequence-codec-high-indices).
  const std::vector<std::uint32_t> far = {0, 0xA1000100u, 5, 0xE1000100u, 7, 1};
  bytes raw(far.size() * 4);
  for (std::size_t i = 0; i < far.size(); ++i) untold::store_le_unchecked<std::uint32_t>(raw.data() + 4 * i, far[i]);
  std::vector<std::byte> encoded;
  const auto kind = untold::encode_codec_stream({raw, 4, false}, encoded);
  REQUIRE(kind);
  CHECK(*kind == untold::codec_stream_kind::raw);
  for (const compression method : kMethods) {
    const untold::codec_input stream[] = {{raw, 4, false}};
    const auto packed = untold::compress_streams(method, 3, stream);
    REQUIRE(packed);
    bytes out(raw.size());
    REQUIRE(untold::decompress(method, *packed, out));
    CHECK(out == raw);
  }
}

TEST_CASE("mesh codec: every directory rule is refused with R-DECOMPRESS before decoding") {
  if (!untold::compression_available(compression::meshopt)) return;
  bytes raw;
  const bytes v = encoded_vertices(40, 8, &raw);
  const std::size_t n = raw.size();
  CHECK(decode_error(craft({{0, 40, 8, 1, v}}), n) == "ok");
  {
    bytes out(n);
    REQUIRE(untold::decompress(compression::meshopt, craft({{0, 40, 8, 1, v}}), out));
    CHECK(out == raw);
  }
  CHECK(decode_error(craft({{0, 40, 8, 1, v}}), n + 1) == "R-DECOMPRESS uncompressedSize");
  CHECK(decode_error(craft({{0, 40, 8, 1, v}}, 1), n) == "R-DECOMPRESS reserved");
  CHECK(decode_error(craft({{0, 40, 8, 1, v, 1}}), n) == "R-DECOMPRESS reserved");
  CHECK(decode_error(craft({{0, 40, 8, 0, v}}), n) == "R-DECOMPRESS codec");
  CHECK(decode_error(craft({{0, 40, 8, 7, v}}), n) == "R-DECOMPRESS codec");
  // Words: the elements' 4-byte words grouped by their place; decoded back exactly.
  {
    const bytes grouped = untold::group_words(raw, 8);
    CHECK(grouped != raw);
    bytes out(n);
    REQUIRE(untold::decompress(compression::meshopt, craft({{0, 40, 8, 5, grouped}}), out));
    CHECK(out == raw);
    CHECK(decode_error(craft({{0, 20, 16, 5, grouped}}), n) == "ok");  // other words, same bytes: decodes, differently
    CHECK(decode_error(craft({{0, 80, 4, 5, grouped}}), n) == "ok");
    CHECK(decode_error(craft({{0, 160, 2, 5, grouped}}), n) == "R-DECOMPRESS elementSize");
  }
  // A raw stream: its bytes as they are, exactly elementCount x elementSize of them.
  CHECK(decode_error(craft({{0, 40, 8, 4, raw}}), n) == "ok");
  CHECK(decode_error(craft({{0, 10, 8, 4, raw}}), 80) == "R-DECOMPRESS storedSize");
  CHECK(decode_error(craft({{0, 1, 257, 4, bytes(257)}}), 257) == "R-DECOMPRESS elementSize");
  CHECK(decode_error(craft({{0, 80, 4, 1, v}}), n) == "R-DECOMPRESS storedSize");      // other count: the codec fails
  CHECK(decode_error(craft({{0, 32, 10, 1, v}}), 320) == "R-DECOMPRESS elementSize");  // not a multiple of 4
  CHECK(decode_error(craft({{0, 1, 260, 1, v}}), 260) == "R-DECOMPRESS elementSize");  // above 256
  CHECK(decode_error(craft({{0, 3, 3, 2, v}}), 9) == "R-DECOMPRESS elementSize");      // index size 3
  CHECK(decode_error(craft({{0, 0, 8, 1, v}}), 0) == "R-DECOMPRESS elementCount");
  CHECK(decode_error(craft({{0, 4, 4, 2, v}}), 16) == "R-DECOMPRESS elementCount");  // not whole triangles
  CHECK(decode_error(craft({{16, 40, 8, 1, v}}), n + 16) == "R-DECOMPRESS rawOffset");  // a gap of 16
  CHECK(decode_error(craft({{4, 40, 8, 1, v}}), n + 4) == "ok");                       // 4 zero bytes first
  CHECK(decode_error(craft({{0, 40, 8, 1, v}, {8, 40, 8, 1, v}}), 2 * n) == "R-DECOMPRESS rawOffset");  // overlap
  CHECK(decode_error(craft({{0, 40, 8, 1, v}, {n, 40, 8, 1, v}}), 2 * n) == "ok");
  {
    bytes extra = craft({{0, 40, 8, 1, v}});
    extra.push_back(std::byte{0});  // a byte no stream claims
    CHECK(decode_error(extra, n) == "R-DECOMPRESS storedSize");
    bytes short_of = craft({{0, 40, 8, 1, v}});
    short_of.pop_back();
    CHECK(decode_error(short_of, n) == "R-DECOMPRESS storedSize");
    bytes lying = craft({{0, 40, 8, 1, v}});
    untold::store_le_unchecked<std::uint32_t>(lying.data(), 1000);  // 1000 entries do not fit
    CHECK(decode_error(lying, n) == "R-DECOMPRESS streamCount");
  }
  // More than 64 decoded bytes per stored byte is refused before any allocation.
  CHECK(decode_error(craft({{0, 1000, 4, 1, bytes(62)}}), 4000) == "R-DECOMPRESS elementCount");
  CHECK(untold::max_decoded_size(compression::meshopt, craft({{0, 1000, 4, 1, bytes(62)}})) == 0);
  CHECK(untold::max_decoded_size(compression::meshopt, craft({{0, 40, 8, 1, v}})) == n);
  // Another codec version of meshoptimizer (0xA1) is not this format's.
  bytes newer = v;
  newer[0] = std::byte{0xA1};
  CHECK(decode_error(craft({{0, 40, 8, 1, newer}}), n) == "R-DECOMPRESS codec");
  // Truncated or corrupt stream data: the codec refuses it.
  bytes corrupt = v;
  corrupt.resize(corrupt.size() - 1);
  CHECK(decode_error(craft({{0, 40, 8, 1, corrupt}}), n) == "R-DECOMPRESS storedSize");
}

namespace {

/// A fields stream of `raw` (elements of `stride` bytes) cut as `fields`.
bytes fields_stream(const bytes& raw, std::size_t stride, const std::vector<untold::codec_field>& fields) {
  std::vector<std::vector<std::byte>> forms;
  std::size_t offset = 0;
  for (const untold::codec_field& f : fields) {
    auto form = untold::encode_field(untold::gather_field(raw, stride, offset, f.size), f.size, f.kind);
    REQUIRE(form);
    forms.push_back(std::move(*form));
    offset += f.size;
  }
  return untold::assemble_fields(fields, forms);
}

}  // namespace

TEST_CASE("mesh codec: a fields stream stores each field its own way and is refused when its header lies") {
  if (!untold::compression_available(compression::meshopt_zstd)) return;
  using k = untold::codec_stream_kind;
  bytes raw;
  (void)encoded_vertices(40, 12, &raw);
  const std::size_t n = raw.size();
  const auto decoded = [&](const bytes& stored, compression method = compression::meshopt) {
    bytes out(n);
    const auto s = untold::decompress(method, stored, out);
    REQUIRE_MESSAGE(s, s.error().describe());
    return out;
  };
  // Every kind a field may take, in several cuts: decoded back exactly.
  const std::vector<std::vector<untold::codec_field>> cuts = {
      {{8, k::vertex}, {3, k::raw}, {1, k::raw}},
      {{4, k::raw}, {8, k::words}},
      {{12, k::vertex}},
      {{1, k::raw}, {3, k::raw}, {4, k::vertex}, {4, k::words}},
  };
  for (const auto& cut : cuts) {
    const bytes stream = fields_stream(raw, 12, cut);
    CHECK(decoded(craft({{0, 40, 12, 6, stream}})) == raw);
    const auto frame = untold::compress(compression::zstd, 3, stream);
    REQUIRE(frame);
    CHECK(decoded(craft({{0, 40, 12, 6, *frame}}), compression::meshopt_zstd) == raw);
  }
  // The header, rule by rule (R-DECOMPRESS and the field it names).
  const bytes good = fields_stream(raw, 12, cuts[0]);  // 1 + 3 x 6 header bytes, then the fields
  const auto with = [&](std::size_t at, std::uint8_t value) {
    bytes b = good;
    b[at] = std::byte{value};
    return craft({{0, 40, 12, 6, b}});
  };
  CHECK(decode_error(craft({{0, 40, 12, 6, good}}), n) == "ok");
  CHECK(decode_error(with(0, 0), n) == "R-DECOMPRESS fieldCount");
  CHECK(decode_error(with(0, 17), n) == "R-DECOMPRESS fieldCount");
  CHECK(decode_error(with(1, 6), n) == "R-DECOMPRESS fieldSize");     // the vertex codec takes multiples of 4
  CHECK(decode_error(with(1, 36), n) == "R-DECOMPRESS fieldSize");    // ... up to 32 bytes
  CHECK(decode_error(with(2, 2), n) == "R-DECOMPRESS fieldSize");     // an index codec is no field codec
  CHECK(decode_error(with(13, 0), n) == "R-DECOMPRESS fieldSize");    // a field of no bytes
  CHECK(decode_error(with(13, 2), n) == "R-DECOMPRESS fieldSize");    // the sizes add up to 13, not 12
  CHECK(decode_error(with(7, 2), n) == "R-DECOMPRESS fieldStoredSize");  // a raw field is exactly count x size
  CHECK(decode_error(with(9, 80), n) == "R-DECOMPRESS fieldStoredSize");
  CHECK(decode_error(craft({{0, 40, 12, 6, fields_stream(raw, 12, {{8, k::vertex}, {3, k::raw}})}}), n) ==
        "R-DECOMPRESS fieldSize");  // the sizes add up to 11, not 12
  {
    bytes b = good;
    untold::store_le_unchecked<std::uint32_t>(b.data() + 3, 1u << 30);  // the vertex field claims more than is there
    CHECK(decode_error(craft({{0, 40, 12, 6, b}}), n) == "R-DECOMPRESS fieldStoredSize");
    b = good;
    untold::store_le_unchecked<std::uint32_t>(b.data() + 3, 0);
    CHECK(decode_error(craft({{0, 40, 12, 6, b}}), n) == "R-DECOMPRESS fieldStoredSize");
    b = good;
    b.push_back(std::byte{0});  // a byte no field claims
    CHECK(decode_error(craft({{0, 40, 12, 6, b}}), n) == "R-DECOMPRESS storedSize");
    b = good;
    b[19] = std::byte{0xA1};  // the vertex field's codec header: another version
    CHECK(decode_error(craft({{0, 40, 12, 6, b}}), n) == "R-DECOMPRESS fieldStoredSize");
    CHECK(decode_error(craft({{0, 40, 12, 6, bytes(good.begin(), good.begin() + 10)}}), n) == "R-DECOMPRESS storedSize");
  }
  // A fields stream's element size follows the vertex codec's rules, and it
  // belongs to VERTEX_DATA only (R-CODEC-CHUNK).
  CHECK(decode_error(craft({{0, 60, 8, 6, good}}), 480) != "ok");
  const auto streams = untold::parse_codec_directory(compression::meshopt, craft({{0, 40, 12, 6, good}}), good.size() + 32);
  REQUIRE(streams);
  CHECK(untold::check_codec_streams(*streams, kVertex));
  const auto refused = untold::check_codec_streams(*streams, kIndex);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().rule_id() == "R-CODEC-CHUNK");
}

TEST_CASE("mesh codec: the writer cuts a vertex stream into fields when that is smallest, and reads it back") {
  if (!untold::compression_available(compression::meshopt_zstd)) return;
  // 3000 PBR_STATIC_V1-sized vertices: noisy positions (no codec helps),
  // one normal, tangent and colour for all, a smooth UV ramp. Cut into the
  // layout's fields, each kind does what it does best.
  constexpr std::uint32_t count = 3000;
  bytes raw(std::size_t{count} * 32);
  std::uint32_t noise = 12345;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::byte* v = raw.data() + std::size_t{i} * 32;
    for (int c = 0; c < 12; ++c) {
      noise = noise * 1664525u + 1013904223u;
      v[c] = static_cast<std::byte>(noise >> 24);
    }
    untold::store_le_unchecked<std::uint32_t>(v + 12, 0x1FF7FDFFu);
    untold::store_le_unchecked<std::uint32_t>(v + 16, 0x7FF003FFu);
    untold::store_le_unchecked<std::uint16_t>(v + 20, static_cast<std::uint16_t>(0x3C00 + i / 8));
    untold::store_le_unchecked<std::uint16_t>(v + 22, static_cast<std::uint16_t>(0x3C00 + i % 64));
    untold::store_le_unchecked<std::uint32_t>(v + 28, 0xFF8040C0u);
  }
  for (const compression method : kMethods) {
    CAPTURE(untold::compression_name(static_cast<std::uint32_t>(method)));
    const untold::codec_input in{raw, 32, true};
    const auto packed = untold::compress_streams(method, 19, std::span(&in, 1));
    REQUIRE(packed);
    const auto streams = untold::parse_codec_directory(method, *packed, packed->size());
    REQUIRE(streams);
    REQUIRE(streams->size() == 1);
    CHECK((*streams)[0].kind == untold::codec_stream_kind::fields);
    bytes out(raw.size());
    REQUIRE(untold::decompress(method, *packed, out));
    CHECK(out == raw);
    // Deterministic.
    CHECK(*untold::compress_streams(method, 19, std::span(&in, 1)) == *packed);
  }
}

TEST_CASE("mesh codec: meshopt+zstd streams are zstd frames that declare a bounded size") {
  if (!untold::compression_available(compression::meshopt_zstd)) return;
  bytes raw;
  const bytes v = encoded_vertices(300, 16, &raw);
  const auto frame = untold::compress(compression::zstd, 3, v);
  REQUIRE(frame);
  const bytes ok = craft({{0, 300, 16, 1, *frame}});
  bytes out(raw.size());
  REQUIRE(untold::decompress(compression::meshopt_zstd, ok, out));
  CHECK(out == raw);
  CHECK(untold::max_decoded_size(compression::meshopt_zstd, ok) == raw.size());
  // A raw stream in a frame: the frame must declare exactly the stream's size.
  const auto raw_frame = untold::compress(compression::zstd, 3, raw);
  REQUIRE(raw_frame);
  CHECK(decode_error(craft({{0, 300, 16, 4, *raw_frame}}), raw.size(), compression::meshopt_zstd) == "ok");
  CHECK(decode_error(craft({{0, 150, 16, 4, *raw_frame}}), raw.size() / 2, compression::meshopt_zstd) ==
        "R-DECOMPRESS storedSize");
  // The meshopt bytes unframed are no zstd frame.
  CHECK(decode_error(craft({{0, 300, 16, 1, v}}), raw.size(), compression::meshopt_zstd) == "R-DECOMPRESS storedSize");
}

TEST_CASE("mesh codec: R-CODEC-CHUNK refuses the mesh codecs on other chunks and streams of the other kind") {
  if (!untold::compression_available(compression::meshopt)) return;
  SUBCASE("a record table marked meshopt") {
    bytes f = test::write_scene();
    test::put_u32(f, test::chunk_row_offset(test::chunk_row(f, 3)) + 4, 3);
    CHECK(test::rejection(f) == "R-CODEC-CHUNK");
  }
  SUBCASE("an index chunk holding vertex streams") {
    bytes f = write_with(compression::meshopt, false);
    const std::size_t row = test::chunk_row(f, kIndex);
    const std::size_t at = static_cast<std::size_t>(test::get_u64(f, test::chunk_row_offset(row) + 8));
    // A uint32 stream (element size 4 fits the vertex codec's rules too) marked vertex.
    std::size_t entry = 0;
    while (test::get_u32(f, at) > entry && untold::load_le_unchecked<std::uint16_t>(f.data() + at + 8 + 24 * entry + 12) != 4)
      ++entry;
    REQUIRE(entry < test::get_u32(f, at));
    f[at + 8 + 24 * entry + 14] = std::byte{1};
    const auto a = untold::open(f, {.limits = test::roomy_limits()});
    REQUIRE_FALSE(a);
    CHECK(a.error().rule_id() == "R-CODEC-CHUNK");
    CHECK(a.error().context.chunk_type == kIndex);
    untold::memory_range_source source(f);
    const auto streamed = untold::streamed_asset::open(source, {.open = {.limits = test::roomy_limits()}});
    REQUIRE_FALSE(streamed);
    CHECK(streamed.error().rule_id() == "R-CODEC-CHUNK");
  }
}

TEST_CASE("mesh codec: a mesh loaded by byte range reads and decodes only its own streams") {
  if (!untold::compression_available(compression::meshopt_zstd)) return;
  for (const compression method : kMethods) {
    const bytes f = write_with(method);
    const auto whole = untold::open(f, {.limits = test::roomy_limits(), .deep_checks = true});
    REQUIRE(whole);
    untold::memory_range_source source(f);
    auto tile = untold::streamed_asset::open(source, {.open = {.limits = test::roomy_limits(), .deep_checks = true}});
    REQUIRE_MESSAGE(tile, tile.error().describe());
    const auto vertex_row = *whole->find_chunk(untold::chunk_type::vertex_data);
    const untold::chunk_entry& vc = whole->chunks()[vertex_row];
    for (std::uint32_t i = 0; i < whole->meshes().size(); ++i) {
      const auto ranges = tile->ranges_for_mesh(i);
      const auto mesh = tile->load_mesh(i);
      REQUIRE_MESSAGE(mesh, mesh.error().describe());
      const auto m = whole->meshes()[i];
      const auto want_v = whole->vertices(m), want_i = whole->indices(m);
      CHECK(std::equal(mesh->vertices.begin(), mesh->vertices.end(), want_v.begin(), want_v.end()));
      CHECK(std::equal(mesh->indices.begin(), mesh->indices.end(), want_i.begin(), want_i.end()));
      CHECK_FALSE(tile->metadata().is_loaded(vertex_row));  // never decoded whole
      // The small meshes' ranges stay inside a block or two of the vertex
      // chunk: far less than the terrain's stream.
      if (m.vertex_count < 100)
        for (const auto& r : ranges)
          if (r.offset >= vc.file_offset && r.offset < vc.file_offset + vc.compressed_size)
            CHECK(r.size <= 2 * std::uint64_t{untold::default_digest_block_size});
    }
    CHECK(tile->load_all());
  }
}
