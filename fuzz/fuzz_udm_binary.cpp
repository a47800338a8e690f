// fuzz_udm_binary: untold::udm::open_document on arbitrary bytes, with
// small limits so hostile sizes hit the caps quickly.
// Properties:
//   - never reads outside the input, never overflows the stack (sanitizers);
//   - every failure carries a UDM- rule id (or R-DECOMPRESS for a build
//     without LZ4);
//   - a parsed document is walked completely (every view, getter and typed
//     array), and the tree copied from it writes back to exactly the input
//     bytes, except where the input used the long-string escape for a short
//     string (normalised by the writer): then writing twice is stable;
//   - the converter cook uses runs on every parsed document, on the parse's
//     budget (fuzz_udm_common.hpp): a PMDL either fails with a UDM- rule id
//     or converts to a .untold file that opens with deep checks.
#include <cmath>  // before traverse.hpp, which uses std::isfinite without including it

#include "fuzz_udm_common.hpp"
#include "traverse.hpp"

#include <untold/udm/udm.hpp>

namespace {

namespace u = untold::udm;
using untold_fuzz::die;

void walk(const u::property_view& root) {
  // Explicit stack: the document is at most max_depth deep, but keep the
  // harness itself recursion-free.
  std::vector<u::property_view> stack{root};
  while (!stack.empty()) {
    const u::property_view p = stack.back();
    stack.pop_back();
    (void)p.key();
    (void)p.raw();
    if (p.is_array() && u::is_trivial(p.value_type()) && p.value_type() == u::type::float32) {
      auto a = p.as_array<float>();
      if (!a) die("float array getter failed");
      for (std::size_t i = 0; i < a->size(); ++i) (void)(*a)[i];
    }
    if (p.kind() == u::type::struct_ || (p.is_array() && p.value_type() == u::type::struct_)) {
      auto s = p.as_structs();
      if (!s) die("struct getter failed");
      if (s->bytes().size() != s->size() * s->stride()) die("struct array size");
    }
    if (p.is_element())
      for (u::property_view c : p)
        if (p[c.key()].index() != c.index()) die("key lookup disagrees with iteration");
    for (u::property_view c : p) stack.push_back(c);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const untold::byte_span in = untold_fuzz::as_span(data, size);
  u::open_options o;
  o.require_asset_header = false;
  o.limits.max_chunk_bytes = 1 << 20;
  o.limits.max_total_bytes = 4 << 20;
  o.limits.max_records = 1 << 16;
  o.limits.max_depth = 64;
  untold::budget charged(o.limits, size);
  o.budget = &charged;
  auto doc = u::open_document(in, o);
  if (!doc) {
    const std::string_view id = doc.error().rule_id();
    if (!id.starts_with("UDM-") && id != "R-DECOMPRESS") die("error without a UDM rule id");
    return 0;
  }
  if (doc->parsed_bytes() != size) die("valid document not parsed to the last byte");
  walk(doc->root());
  udm_fuzz::check_cook(*doc, o.limits, charged);
  const u::property tree = u::tree_from_view(doc->root());
  // What the reader accepted, the writer (reading its bytes back) writes.
  const u::write_options wo{.version = doc->version(), .limits = o.limits};
  auto out = u::write_binary(tree, wo);
  if (!out) die("a parsed tree cannot be written: " + out.error().describe());
  if (!untold_fuzz::same_bytes(*out, in)) {
    u::open_options again_options = o;
    again_options.budget = nullptr;
    auto again = u::write_binary(u::tree_from_view(u::open_document(*out, again_options).value().root()), wo);
    if (!again || !untold_fuzz::same_bytes(*again, *out)) die("writer not stable");
  }
  auto text = u::write_ascii(tree);
  if (!text) {
    // Only a NUL byte in a string or key (the text form cannot carry one).
    if (text.error().code != untold::errc::udm_bad_tree) die("a parsed tree cannot be written as ASCII");
    return 0;
  }
  u::ascii_open_options ao;
  ao.limits = o.limits;
  auto back = u::open_ascii(*text, ao);
  // NaN payloads are canonicalised by the text form: compare only without them.
  if (back && !(*back == tree) && tree.find("assetData") != nullptr && text->find("nan") == std::string::npos)
    die("ASCII round trip changed the tree");
  return 0;
}
