// fuzz_vertex: the PBR_STATIC_V1 and GpuVertex views, the bulk decoders and
// the PBR -> GpuVertex converter on arbitrary bytes at any alignment.
// Input: byte 0 = misalignment (0..15) of the copy, the rest are vertex bytes.
// Properties:
//   - nothing reads outside the bytes (sanitizers), at any alignment;
//   - per-vertex accessors, iterators and every supported bulk path (scalar,
//     SSE4.1, AVX2, NEON), interleaved and per-attribute, agree bit for bit;
//   - byte counts that are not a whole number of vertices are rejected.
#include "traverse.hpp"

namespace {

using untold_fuzz::die;
using untold_fuzz::same_bits;

void pbr(untold::byte_span bytes) {
  const bool whole = bytes.size() % untold::pbr_vertex_stride == 0;
  if (static_cast<bool>(untold::pbr_vertex_view::from_bytes(bytes)) != whole) die("pbr from_bytes size check");
  std::vector<untold::pbr_vertex> scalar(bytes.size() / untold::pbr_vertex_stride + (whole ? 0 : 1));
  if (!whole && untold::decode_pbr_vertices(bytes, std::span(scalar))) die("decode accepted a partial vertex");
  bytes = bytes.first(bytes.size() - bytes.size() % untold::pbr_vertex_stride);
  const auto view = *untold::pbr_vertex_view::from_bytes(bytes);
  scalar.resize(view.size());
  if (!untold::decode_pbr_vertices(bytes, std::span(scalar), untold::decode_path::scalar)) die("scalar decode failed");

  std::size_t i = 0;
  for (const untold::pbr_vertex& v : view) {
    if (!same_bits(v, view[i]) || !same_bits(v, scalar[i])) die("pbr iterator/operator[]/bulk differ");
    const auto p = view.packed(i);
    if (!same_bits(view.position(i), v.position) || !same_bits(view.normal(i), v.normal) ||
        !same_bits(view.tangent(i), v.tangent) || !same_bits(view.uv0(i), v.uv0) || !same_bits(view.uv1(i), v.uv1) ||
        !same_bits(view.color0(i), v.color0) || p.normal != view.normal_packed(i) || p.tangent != view.tangent_packed(i))
      die("pbr single-attribute accessors differ");
    ++i;
  }
  if (i != view.size()) die("pbr iteration length");

  const std::size_t n = view.size();
  for (const auto path : {untold::decode_path::automatic, untold::decode_path::scalar, untold::decode_path::sse41,
                          untold::decode_path::avx2, untold::decode_path::avx512, untold::decode_path::neon}) {
    if (!untold::decode_path_supported(path)) continue;
    std::vector<untold::pbr_vertex> aos(n);
    if (!untold::decode_pbr_vertices(bytes, std::span(aos), path)) die("bulk decode failed");
    if (n != 0 && std::memcmp(aos.data(), scalar.data(), n * sizeof(untold::pbr_vertex)) != 0)
      die(std::string("interleaved decode differs from scalar on path ") + std::string(untold::decode_path_name(path)));
    std::vector<float> pos(3 * n), nrm(3 * n), tan(4 * n), uv0(2 * n), uv1(2 * n), col(4 * n);
    if (!untold::decode_pbr_vertices(bytes, untold::pbr_vertex_streams{pos, nrm, tan, uv0, uv1, col}, path))
      die("stream decode failed");
    for (std::size_t k = 0; k < n; ++k) {
      const auto& v = scalar[k];
      if (std::memcmp(&pos[3 * k], v.position.data(), 12) != 0 || std::memcmp(&nrm[3 * k], v.normal.data(), 12) != 0 ||
          std::memcmp(&tan[4 * k], v.tangent.data(), 16) != 0 || std::memcmp(&uv0[2 * k], v.uv0.data(), 8) != 0 ||
          std::memcmp(&uv1[2 * k], v.uv1.data(), 8) != 0 || std::memcmp(&col[4 * k], v.color0.data(), 16) != 0)
        die(std::string("stream decode differs from scalar on path ") + std::string(untold::decode_path_name(path)));
    }
    // Only some streams: the others are skipped, never written.
    std::vector<float> only_uv(2 * n);
    if (!untold::decode_pbr_vertices(bytes, untold::pbr_vertex_streams{.uv0 = only_uv}, path) ||
        (n != 0 && std::memcmp(only_uv.data(), uv0.data(), 8 * n) != 0))
      die("partial stream decode differs");
  }

  std::vector<std::byte> gpu(n * untold::gpu_vertex_stride);
  if (!untold::convert_pbr_to_gpu(bytes, gpu)) die("convert_pbr_to_gpu failed");
  const auto converted = *untold::gpu_vertex_view::from_bytes(gpu);
  for (std::size_t k = 0; k < n; ++k)
    if (!same_bits(converted.position(k), scalar[k].position)) die("converted position differs");
}

void gpu(untold::byte_span bytes) {
  const bool whole = bytes.size() % untold::gpu_vertex_stride == 0;
  if (static_cast<bool>(untold::gpu_vertex_view::from_bytes(bytes)) != whole) die("gpu from_bytes size check");
  bytes = bytes.first(bytes.size() - bytes.size() % untold::gpu_vertex_stride);
  const auto view = *untold::gpu_vertex_view::from_bytes(bytes);
  std::size_t i = 0;
  for (const untold::gpu_vertex& v : view) {
    const untold::gpu_vertex one = view[i];
    if (!same_bits(v, one) || !same_bits(view.position(i), v.position) || !same_bits(view.normal(i), v.normal) ||
        !same_bits(view.tangent(i), v.tangent) || !same_bits(view.uv(i), v.uv))
      die("gpu accessors differ");
    const auto p = view.packed(i);
    if (p.normal != view.normal_oct(i) || p.tangent != view.tangent_oct(i)) die("gpu packed differs");
    ++i;
  }
  if (i != view.size()) die("gpu iteration length");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t shift = data[0] % 16;
  // An exactly sized heap block, so ASan catches any overread past the end.
  std::vector<std::byte> buffer(shift + size - 1);
  if (size > 1) std::memcpy(buffer.data() + shift, data + 1, size - 1);
  const untold::byte_span bytes = untold::byte_span(buffer).subspan(shift);
  pbr(bytes);
  gpu(bytes);
  return 0;
}
