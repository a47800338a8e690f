// untold/udm/udm.hpp - Pragma's Unified Data Model in one include.
//
//   auto doc = untold::udm::open_document(bytes);           // binary "UDMB" v1/v2, validated
//   if (!doc) puts(doc.error().describe().c_str());          // "UDM-LZ4 udm_lz4: ... (field ..., offset ...)"
//   auto sub = doc->asset_data().find("meshGroups/body/meshes/0/subMeshes/0/assetData");
//   auto verts = (*sub)["vertices"].as_structs();            // zero-copy struct array
//   auto idx = (*sub)["indices"].as_array<std::uint16_t>();  // typed view, error value on mismatch
//
//   untold::udm::property tree = untold::udm::tree_from_view(doc->root());  // owning, editable
//   auto bin = untold::udm::write_binary(tree);              // deterministic, byte-exact round trip
//   auto text = untold::udm::write_ascii(tree);              // Pragma's ASCII form
//   auto back = untold::udm::open_ascii(*text);
//
//   auto scene = untold::udm::import_pmdl(bytes);            // PMDL model -> convert::scene
//
// Headers: types.hpp (the 36 types), reader.hpp (binary -> views), writer.hpp
// (owning tree, binary writer), ascii.hpp (text form), pmdl.hpp (models),
// rules/udm.hpp (UDM-* rule ids). docs/udm.md has the format and the rules.
// Every parser here is safe on untrusted input and reports errors as values.
#pragma once

#include "types.hpp"
#include "reader.hpp"
#include "writer.hpp"
#include "ascii.hpp"
#include "pmdl.hpp"
