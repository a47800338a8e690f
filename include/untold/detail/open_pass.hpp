// untold/detail/open_pass.hpp - the whole-file open's pass over the geometry
// (reader.hpp, untold::open with integrity::full or deep checks): every block
// digest open left for later and the deep checks on the same block's bytes
// while they are in cache, block by block, through open_options::executor
// (in parallel when it has threads), two blocks per job (sha256_pair hashes
// them together); the contentHash, when it is to be verified, is one more
// job. Errors are those of the serial order (the
// contentHash, then each chunk's blocks in table order, then the deep rules
// in validate_deep's order), whichever job finds them first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../asset.hpp"
#include "../content_hash.hpp"
#include "../error.hpp"
#include "../executor.hpp"
#include "../extensions.hpp"
#include "../integrity.hpp"
#include "../validate.hpp"
#include "lean_std.hpp"

namespace untold::detail {

/// One distinct span of a geometry chunk that the deep checks read: meshes
/// that share geometry (instances of it) share the span, which is scanned once.
struct deep_span {
  std::uint8_t part = 0;  // 0 positions, 1 indices, 2 edge indices
  std::uint8_t element_size = 0;
  std::uint64_t offset = 0;  // payload byte offset of the first element
  std::uint64_t count = 0;   // elements
};

/// The elements of one deep_span whose first byte lies in one block of the
/// chunk's payload.
struct deep_piece {
  std::uint32_t span = 0;    // index in the pass's spans
  std::uint64_t offset = 0;  // payload byte offset of the first element
  std::uint64_t count = 0;
};

/// What one job of the pass found for one piece.
struct deep_piece_result {
  extrema<float, 3> positions = extrema<float, 3>::none();
  std::uint32_t largest = 0;
};

/// Blocks [block, block + blocks) of chunk `row`'s payload, each
/// block_size bytes (the last of the chunk may be shorter): two per job, which
/// sha256_pair hashes together.
struct pass_job {
  std::uint32_t row = 0;
  bool verify = false;  // their digests are still to be checked
  std::uint64_t block = 0, blocks = 0;
  std::size_t first_piece = 0, end_piece = 0;
};
inline constexpr std::uint64_t blocks_per_job = 2;

/// The serial verification the pass replaces, in its order: the contentHash
/// (when `content_hash`), then the blocks of every deferred chunk of rows
/// below `end_row`. Blocks verified already are skipped. The first error, or
/// success. Used to report the error a serial open would have reported first.
template <class = void>
status verify_deferred_in_order(const asset& a, byte_span file, bool content_hash, std::uint32_t end_row) {
  if (content_hash) UNTOLD_TRY(verify_content_hash(a.header(), a.chunks(), file));
  for (std::uint32_t row = 0; row < end_row && row < a.chunks().size(); ++row)
    if (integrity_access::is_deferred(a, row)) UNTOLD_TRY(integrity_access::verify_stored(a, row, 0, a.payload(row)));
  return {};
}

/// `error` unless an earlier check of the serial order fails: then that one.
template <class = void>
error first_error(const asset& a, byte_span file, bool content_hash, std::uint32_t end_row, error later) {
  if (auto earlier = verify_deferred_in_order(a, file, content_hash, end_row); !earlier) return earlier.error();
  return later;
}

/// The pass itself (see the file comment). Preconditions: every chunk loaded
/// (`a` opened from `file` with the deferred chunks' digests attached) and
/// validate_metadata passed. `content_hash`: verify the contentHash too;
/// `deep`: run validate_deep and validate_extensions_deep.
template <class = void>
status verify_and_check(const asset& a, byte_span file, bool content_hash, bool deep, const executor& run) {
  const std::uint32_t rows = static_cast<std::uint32_t>(a.chunks().size());
  const std::uint64_t digest_block = integrity_access::block_size(a);
  const std::uint64_t block_size = digest_block != 0 ? digest_block : default_digest_block_size;

  // Each deferred row's block digests against its row digest first (32
  // bytes per block), so the jobs only read the blocks.
  for (std::uint32_t row = 0; row < rows; ++row)
    if (integrity_access::is_deferred(a, row) && !integrity_access::verify_stored(a, row, 0, {}))
      return first_error(a, file, content_hash, rows, make_error(errc::integrity_hash, {}));

  // The deep pieces, fused when the distinct spans of a chunk add up to no
  // more than the chunk (no overlap to make the per-block scans quadratic);
  // otherwise validate_deep runs after the pass (range extrema). Meshes that
  // share geometry share a span (spans, mesh_span), scanned once.
  const auto meshes = a.meshes();
  struct geometry_part {
    chunk_type type;
    std::uint32_t row = none;
    byte_span payload;
    std::uint64_t span_bytes = 0;
    std::uint32_t first_span = 0, end_span = 0;  // its range of `spans`
  };
  geometry_part parts[3] = {{chunk_type::vertex_data, none, {}, 0, 0, 0},
                            {chunk_type::index_data, none, {}, 0, 0, 0},
                            {chunk_type::edge_index_data, none, {}, 0, 0, 0}};
  for (geometry_part& p : parts) {
    const auto row = a.find_chunk(p.type);
    if (row) p.row = *row, p.payload = a.payload(*row);
  }
  // PBR_QUANT_V1 positions are codes inside localBounds: no position pieces.
  const bool float_positions = has_float_positions(a);
  if (!float_positions) parts[0].row = none;
  std::vector<deep_span> spans;
  std::vector<std::uint32_t> mesh_span;  // [3 x mesh + part]: its index in `spans`, or none
  bool fused = deep;
  if (deep) {
    struct span_key {
      deep_span span;
      std::uint32_t mesh = 0;
    };
    std::vector<span_key> keys;
    keys.reserve(3 * meshes.size());
    for (std::uint32_t mesh = 0; mesh < meshes.size(); ++mesh) {
      const mesh_record m = meshes[mesh];
      for (std::uint8_t part = 0; part < 3; ++part) {
        if (parts[part].row == none) continue;
        const byte_span span = part == 0 ? a.vertices(m) : part == 1 ? a.indices(m) : a.edge_indices(m);
        const std::uint32_t element = part == 0 ? vertex_stride_pbr_static_v1 : index_size(m.index_type);
        if (element == 0 || span.size() < element) continue;
        keys.push_back({{part, static_cast<std::uint8_t>(element),
                         static_cast<std::uint64_t>(span.data() - parts[part].payload.data()), span.size() / element},
                        mesh});
      }
    }
    const auto order = [](const deep_span& x, const deep_span& y) {
      if (x.part != y.part) return x.part < y.part;
      if (x.offset != y.offset) return x.offset < y.offset;
      if (x.count != y.count) return x.count < y.count;
      return x.element_size < y.element_size;
    };
    detail::sort(keys.begin(), keys.end(), [&](const span_key& x, const span_key& y) { return order(x.span, y.span); });
    mesh_span.assign(3 * meshes.size(), none);
    for (const span_key& k : keys) {
      if (spans.empty() || order(spans.back(), k.span)) {
        spans.push_back(k.span);
        geometry_part& p = parts[k.span.part];
        if (p.end_span == 0) p.first_span = static_cast<std::uint32_t>(spans.size() - 1);
        p.end_span = static_cast<std::uint32_t>(spans.size());
        p.span_bytes += k.span.count * k.span.element_size;
      }
      mesh_span[3 * std::size_t{k.mesh} + k.span.part] = static_cast<std::uint32_t>(spans.size() - 1);
    }
    for (const geometry_part& p : parts) fused = fused && (p.row == none || p.span_bytes <= p.payload.size());
  }

  // Jobs: the blocks of every deferred row and, for the fused deep checks,
  // of the geometry rows, two by two; each with its pieces (counting sort by
  // block).
  std::vector<pass_job> jobs;
  std::vector<deep_piece> pieces;
  for (std::uint32_t row = 0; row < rows; ++row) {
    const bool verify = integrity_access::is_deferred(a, row);
    int part = -1;
    for (int p = 0; p < 3; ++p)
      if (fused && parts[p].row == row) part = p;
    if (!verify && part < 0) continue;
    const std::uint64_t blocks = digest_block_count(a.payload(row).size(), block_size);
    const std::size_t first_job = jobs.size();
    for (std::uint64_t k = 0; k < blocks; k += blocks_per_job)
      jobs.push_back({row, verify, k, std::min(blocks_per_job, blocks - k), 0, 0});
    if (part < 0 || blocks == 0) continue;
    std::vector<std::size_t> per_block(blocks + 1, 0);
    const auto for_each_piece = [&](auto&& emit) {
      for (std::uint32_t i = parts[part].first_span; i < parts[part].end_span; ++i) {
        const deep_span& s = spans[i];
        // Elements [i0, i1) start in block k: i0 = ceil((k B - offset) / element).
        for (std::uint64_t k = s.offset / block_size, i0 = 0; i0 < s.count; ++k) {
          const std::uint64_t block_end = (k + 1) * block_size;
          const std::uint64_t i1 = std::min(s.count, (block_end - s.offset + s.element_size - 1) / s.element_size);
          if (i1 > i0) emit(deep_piece{i, s.offset + i0 * s.element_size, i1 - i0}, k);
          i0 = i1;
        }
      }
    };
    for_each_piece([&](const deep_piece&, std::uint64_t k) { ++per_block[k + 1]; });
    for (std::uint64_t k = 0; k < blocks; ++k) per_block[k + 1] += per_block[k];
    const std::size_t base = pieces.size();
    pieces.resize(base + per_block[blocks]);
    for (std::size_t j = first_job; j < jobs.size(); ++j) {
      jobs[j].first_piece = base + per_block[jobs[j].block];
      jobs[j].end_piece = base + per_block[jobs[j].block + jobs[j].blocks];
    }
    for_each_piece([&](const deep_piece& piece, std::uint64_t k) { pieces[base + per_block[k]++] = piece; });
  }

  // Job 0 is the contentHash when it is verified: the longest job, first.
  const std::size_t hash_jobs = content_hash && is_hashed(a.header()) ? 1 : 0;
  std::vector<std::uint8_t> failed(hash_jobs + jobs.size(), 0);
  std::vector<deep_piece_result> results(pieces.size());
  auto body = [&](std::size_t index) noexcept {
    if (index < hash_jobs) {
      failed[index] = verify_content_hash(a.header(), a.chunks(), file) ? 0 : 1;
      return;
    }
    const pass_job& job = jobs[index - hash_jobs];
    const byte_span payload = a.payload(job.row);
    const std::uint64_t start = job.block * block_size;
    const std::uint64_t length = std::min(job.blocks * block_size, payload.size() - start);
    if (job.verify && !integrity_access::verify_stored(a, job.row, start,
                                                       payload.subspan(static_cast<std::size_t>(start),
                                                                       static_cast<std::size_t>(length)))) {
      failed[index] = 1;
      return;
    }
    for (std::size_t i = job.first_piece; i < job.end_piece; ++i) {
      const deep_piece& p = pieces[i];
      const deep_span& span = spans[p.span];
      const std::byte* at = payload.data() + p.offset;
      if (span.part == 0)
        scan<position_key>(results[i].positions, at, vertex_stride_pbr_static_v1, p.count);
      else {
        auto largest = extrema<std::uint32_t, 1>::none();
        if (span.element_size == 2)
          scan<index_key<std::uint16_t>>(largest, at, 2, p.count);
        else
          scan<index_key<std::uint32_t>>(largest, at, 4, p.count);
        results[i].largest = largest.hi[0];
      }
    }
  };
  run_jobs(run, failed.size(), body);
  for (const std::uint8_t f : failed)
    if (f) return first_error(a, file, content_hash, rows, make_error(errc::block_hash, {}));
  if (!deep) return {};

  UNTOLD_TRY(validate_deep_records(a));
  if (fused) {
    std::vector<deep_piece_result> per_span(spans.size());
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      deep_piece_result& r = per_span[pieces[i].span];
      validation_work += pieces[i].count;
      r.positions.add(results[i].positions);
      r.largest = std::max(r.largest, results[i].largest);
    }
    for (std::size_t row = 0; row < meshes.size(); ++row) {
      mesh_deep_extrema e;
      for (std::size_t part = 0; part < 3; ++part) {
        const std::uint32_t i = mesh_span[3 * row + part];
        if (i == none) continue;
        const std::size_t count = static_cast<std::size_t>(spans[i].count);
        if (part == 0) {
          e.vertices = count;
          e.positions = per_span[i].positions;
        } else if (part == 1) {
          e.indices = count;
          e.largest_index = per_span[i].largest;
        } else {
          e.edge_indices = count;
          e.largest_edge_index = per_span[i].largest;
        }
      }
      UNTOLD_TRY(check_mesh_deep(a, row, e));
    }
  } else {
    UNTOLD_TRY(validate_deep(a));
  }
  return validate_extensions_deep(a);
}

}  // namespace untold::detail
